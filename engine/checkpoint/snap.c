/*
 * snap.c - the sections of a snapshot (snap.h): a header naming what the bytes are, their
 * format version and length, so every module's state can be checked and skipped whole.
 */
#include <errno.h>
#include <string.h>

#include "snap.h"

size_t sl_snap_sec_begin(struct sl_snap_buf *out, uint32_t magic, uint32_t version)
{
	size_t at = out->len;

	sl_snap_put_u32(out, magic);
	sl_snap_put_u32(out, version);
	sl_snap_put_u64(out, 0);
	return at;
}

void sl_snap_sec_end(struct sl_snap_buf *out, size_t at)
{
	uint64_t n;

	if (out->error)
		return;
	n = out->len - at - SL_SNAP_SEC_HDR;
	memcpy(out->data + at + 8, &n, 8);
}

int sl_snap_sec_open(struct sl_snap_reader *r, uint32_t magic, uint32_t version,
		     struct sl_snap_reader *body, uint32_t *got_version)
{
	uint32_t m, v;
	uint64_t n;

	*got_version = 0;
	if (sl_snap_get_u32(r, &m) || sl_snap_get_u32(r, &v) || sl_snap_get_u64(r, &n))
		return r->error;
	if (m != magic || v == 0 || n > r->len - r->pos)
		return r->error = -EINVAL;
	*got_version = v;
	sl_snap_reader_init(body, r->p + r->pos, (size_t)n);
	r->pos += (size_t)n;
	return v > version ? -EPROTO : 0;
}
