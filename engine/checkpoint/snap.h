/*
 * snap.h - the bytes of a snapshot: a growable buffer an operator instance appends its state
 * to at a barrier, and a bounds-checked reader that restores it.
 *
 * At checkpoint n every stateful operator instance serializes into its own buffer on its
 * shard's thread (a copy of its state: the record path resumes right after), and the shard's
 * io_uring writes the buffer out asynchronously (DESIGN §7). Integers are little-endian as
 * laid out in memory (snapshots are read back on the same architecture; the manifest records
 * the format version). Neither side allocates except the buffer's growth.
 *
 * Ownership: a buffer owns its data (free with sl_snap_free); a reader borrows its bytes.
 */
#ifndef SL_CHECKPOINT_SNAP_H
#define SL_CHECKPOINT_SNAP_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct sl_snap_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int error; /* first failure (-ENOMEM): later puts do nothing */
};

static inline void sl_snap_init(struct sl_snap_buf *b)
{
	memset(b, 0, sizeof(*b));
}

static inline void sl_snap_free(struct sl_snap_buf *b)
{
	free(b->data);
	sl_snap_init(b);
}

/* Empties the buffer, keeping its memory for the next checkpoint. */
static inline void sl_snap_reset(struct sl_snap_buf *b)
{
	b->len = 0;
	b->error = 0;
}

/* Makes room for n more bytes and returns where they go (b->len does not move: the caller
 * writes, then adds what it wrote), or NULL on ENOMEM (recorded in b->error). */
static inline void *sl_snap_reserve(struct sl_snap_buf *b, size_t n)
{
	if (b->error)
		return NULL;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *nd;

		while (cap < b->len + n)
			cap *= 2;
		nd = realloc(b->data, cap);
		if (!nd) {
			b->error = -ENOMEM;
			return NULL;
		}
		b->data = nd;
		b->cap = cap;
	}
	return b->data + b->len;
}

/* Appends n bytes. Returns 0 or -ENOMEM (then recorded in b->error). */
static inline int sl_snap_put(struct sl_snap_buf *b, const void *p, size_t n)
{
	if (b->error)
		return b->error;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *nd;

		while (cap < b->len + n)
			cap *= 2;
		nd = realloc(b->data, cap);
		if (!nd)
			return b->error = -ENOMEM;
		b->data = nd;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

static inline int sl_snap_put_u32(struct sl_snap_buf *b, uint32_t v)
{
	return sl_snap_put(b, &v, sizeof v);
}

static inline int sl_snap_put_u64(struct sl_snap_buf *b, uint64_t v)
{
	return sl_snap_put(b, &v, sizeof v);
}

/* A length-prefixed byte string (u32 length, then the bytes). */
static inline int sl_snap_put_bytes(struct sl_snap_buf *b, const void *p, uint32_t n)
{
	int rc = sl_snap_put_u32(b, n);

	return rc ? rc : sl_snap_put(b, p, n);
}

struct sl_snap_reader {
	const uint8_t *p;
	size_t len;
	size_t pos;
	int error; /* -EINVAL once a read ran past the end: the snapshot is corrupt */
};

static inline void sl_snap_reader_init(struct sl_snap_reader *r, const void *p, size_t len)
{
	r->p = (const uint8_t *)p;
	r->len = len;
	r->pos = 0;
	r->error = 0;
}

/* Copies n bytes out. Returns 0, or -EINVAL (recorded) if fewer remain. */
static inline int sl_snap_get(struct sl_snap_reader *r, void *out, size_t n)
{
	if (r->error)
		return r->error;
	if (n > r->len - r->pos)
		return r->error = -EINVAL;
	memcpy(out, r->p + r->pos, n);
	r->pos += n;
	return 0;
}

static inline int sl_snap_get_u32(struct sl_snap_reader *r, uint32_t *v)
{
	return sl_snap_get(r, v, sizeof *v);
}

static inline int sl_snap_get_u64(struct sl_snap_reader *r, uint64_t *v)
{
	return sl_snap_get(r, v, sizeof *v);
}

/* Borrows a length-prefixed byte string in place: *p points into the reader's bytes. */
static inline int sl_snap_get_bytes(struct sl_snap_reader *r, const void **p, uint32_t *n)
{
	if (sl_snap_get_u32(r, n))
		return r->error;
	if (*n > r->len - r->pos)
		return r->error = -EINVAL;
	*p = r->p + r->pos;
	r->pos += *n;
	return 0;
}

#define SL_SNAP_SEC_HDR 16u /* bytes of a section header */

/*
 * A section of a snapshot: [u32 magic][u32 version][u64 body length][body]. Each module's
 * state is one section, so a reader can check what it is given, refuse a format it does not
 * know, and never read past the section whatever its body says.
 * begin appends the header and returns where it starts (pass it to end, which fills in the
 * length once the body is written). open reads a header: returns 0 and a reader over the
 * body (r moves past it), -EINVAL for a wrong magic or a length beyond the bytes (corrupt),
 * or -EPROTO for a version newer than `version`.
 */
size_t sl_snap_sec_begin(struct sl_snap_buf *out, uint32_t magic, uint32_t version);
void sl_snap_sec_end(struct sl_snap_buf *out, size_t at);
int sl_snap_sec_open(struct sl_snap_reader *r, uint32_t magic, uint32_t version,
		     struct sl_snap_reader *body, uint32_t *got_version);

#endif
