/*
 * manifest.c - building, encoding and checking checkpoint manifests (see manifest.h for the
 * layout).
 *
 * Invariants: decode trusts no length before the whole file's CRC32C matched, and after that
 * still bounds-checks every field (a manifest written by a buggy build must not crash
 * recovery); every count is capped by the bytes that remain, so a bad count cannot make decode
 * allocate gigabytes. Encode writes fields in one fixed order that decode reads back.
 */
#include "manifest.h"

#include "crc32c.h"
#include "snap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char magic[8] = "SLCKMAN"; /* with its NUL: 8 bytes */
#define HEADER_LEN 24u			/* magic, version, reserved, body length */

int sl_ckpt_manifest_init(struct sl_ckpt_manifest *m, const char *job_id, uint64_t ckpt_id,
			  uint32_t nshards, uint32_t max_parallelism)
{
	memset(m, 0, sizeof(*m));
	m->job_id = strdup(job_id ? job_id : "");
	if (!m->job_id)
		return -ENOMEM;
	m->version = SL_CKPT_FORMAT_VERSION;
	m->ckpt_id = ckpt_id;
	m->nshards = nshards;
	m->max_parallelism = max_parallelism;
	return 0;
}

void sl_ckpt_manifest_fini(struct sl_ckpt_manifest *m)
{
	for (uint32_t i = 0; i < m->nsources; i++)
		free(m->sources[i].bytes);
	for (uint32_t i = 0; i < m->nfiles; i++)
		free(m->files[i].path);
	for (uint32_t i = 0; i < m->nsinks; i++)
		free(m->sinks[i].bytes);
	free(m->sources);
	free(m->files);
	free(m->sinks);
	free(m->job_id);
	memset(m, 0, sizeof(*m));
}

/* Makes room for one more element of `size` bytes in *arr. */
static int grow(void **arr, uint32_t n, uint32_t *cap, size_t size)
{
	uint32_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	p = realloc(*arr, (size_t)ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static uint8_t *dup_bytes(const void *p, uint32_t len)
{
	uint8_t *d = malloc(len ? len : 1);

	if (d && len)
		memcpy(d, p, len);
	return d;
}

bool sl_ckpt_path_ok(const char *path)
{
	const char *s = path;

	if (!path || !*path || *path == '/')
		return false;
	while (*s) {
		size_t n = strcspn(s, "/");

		if (n == 0 || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false; /* "a//b" or a ".." component */
		s += n;
		if (*s == '/')
			s++;
	}
	return true;
}

int sl_ckpt_manifest_add_source(struct sl_ckpt_manifest *m, uint32_t op_id, uint32_t split,
				const void *pos, uint32_t len)
{
	struct sl_ckpt_source_pos *e;

	if (grow((void **)&m->sources, m->nsources, &m->cap_sources, sizeof(*e)))
		return -ENOMEM;
	e = &m->sources[m->nsources];
	e->bytes = dup_bytes(pos, len);
	if (!e->bytes)
		return -ENOMEM;
	e->op_id = op_id;
	e->split = split;
	e->len = len;
	m->nsources++;
	return 0;
}

int sl_ckpt_manifest_add_file(struct sl_ckpt_manifest *m, uint32_t op_id, uint32_t shard,
			      const char *path, uint64_t size, uint32_t crc32c)
{
	struct sl_ckpt_state_file *e;

	if (!sl_ckpt_path_ok(path))
		return -EINVAL;
	if (grow((void **)&m->files, m->nfiles, &m->cap_files, sizeof(*e)))
		return -ENOMEM;
	e = &m->files[m->nfiles];
	e->path = strdup(path);
	if (!e->path)
		return -ENOMEM;
	e->op_id = op_id;
	e->shard = shard;
	e->size = size;
	e->crc32c = crc32c;
	m->nfiles++;
	return 0;
}

int sl_ckpt_manifest_add_sink(struct sl_ckpt_manifest *m, uint32_t op_id, uint32_t instance,
			      const void *meta, uint32_t len)
{
	struct sl_ckpt_sink_meta *e;

	if (grow((void **)&m->sinks, m->nsinks, &m->cap_sinks, sizeof(*e)))
		return -ENOMEM;
	e = &m->sinks[m->nsinks];
	e->bytes = dup_bytes(meta, len);
	if (!e->bytes)
		return -ENOMEM;
	e->op_id = op_id;
	e->instance = instance;
	e->len = len;
	m->nsinks++;
	return 0;
}

int sl_ckpt_manifest_encode(const struct sl_ckpt_manifest *m, struct sl_snap_buf *out)
{
	size_t start = out->len, body;
	uint32_t crc;

	sl_snap_put(out, magic, sizeof(magic));
	sl_snap_put_u32(out, SL_CKPT_FORMAT_VERSION);
	sl_snap_put_u32(out, 0);
	sl_snap_put_u64(out, 0); /* body length, patched below */
	body = out->len;
	sl_snap_put_u64(out, m->ckpt_id);
	sl_snap_put_u32(out, m->nshards);
	sl_snap_put_u32(out, m->max_parallelism);
	sl_snap_put_bytes(out, m->job_id, (uint32_t)strlen(m->job_id));
	sl_snap_put_u32(out, m->nsources);
	for (uint32_t i = 0; i < m->nsources; i++) {
		sl_snap_put_u32(out, m->sources[i].op_id);
		sl_snap_put_u32(out, m->sources[i].split);
		sl_snap_put_bytes(out, m->sources[i].bytes, m->sources[i].len);
	}
	sl_snap_put_u32(out, m->nfiles);
	for (uint32_t i = 0; i < m->nfiles; i++) {
		sl_snap_put_u32(out, m->files[i].op_id);
		sl_snap_put_u32(out, m->files[i].shard);
		sl_snap_put_u64(out, m->files[i].size);
		sl_snap_put_u32(out, m->files[i].crc32c);
		sl_snap_put_bytes(out, m->files[i].path, (uint32_t)strlen(m->files[i].path));
	}
	sl_snap_put_u32(out, m->nsinks);
	for (uint32_t i = 0; i < m->nsinks; i++) {
		sl_snap_put_u32(out, m->sinks[i].op_id);
		sl_snap_put_u32(out, m->sinks[i].instance);
		sl_snap_put_bytes(out, m->sinks[i].bytes, m->sinks[i].len);
	}
	if (out->error)
		return out->error;
	{
		uint64_t blen = out->len - body;

		memcpy(out->data + body - 8, &blen, 8);
	}
	crc = sl_crc32c(0, out->data + start, out->len - start);
	return sl_snap_put_u32(out, crc);
}

static int bad(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (cap) {
		va_start(ap, fmt);
		vsnprintf(why, cap, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A byte string of the reader as a fresh NUL-terminated copy. */
static char *get_str(struct sl_snap_reader *r)
{
	const void *p = NULL;
	uint32_t n = 0;
	char *s;

	if (sl_snap_get_bytes(r, &p, &n))
		return NULL;
	s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

static int decode_body(struct sl_ckpt_manifest *m, struct sl_snap_reader *r, char *why, size_t cap)
{
	uint32_t n = 0;
	const void *p;
	char *s;
	int rc;

	sl_snap_get_u64(r, &m->ckpt_id);
	sl_snap_get_u32(r, &m->nshards);
	sl_snap_get_u32(r, &m->max_parallelism);
	free(m->job_id);
	m->job_id = get_str(r);
	if (!m->job_id)
		return r->error ? bad(why, cap, "job id runs past the end") : -ENOMEM;

	/* Each entry takes at least 12 bytes: a count beyond that is corrupt, not a big alloc. */
	if (sl_snap_get_u32(r, &n) || n > (r->len - r->pos) / 12)
		return bad(why, cap, "bad source count");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t op = 0, split = 0, len = 0;

		sl_snap_get_u32(r, &op);
		sl_snap_get_u32(r, &split);
		if (sl_snap_get_bytes(r, &p, &len))
			return bad(why, cap, "source position %u runs past the end", i);
		rc = sl_ckpt_manifest_add_source(m, op, split, p, len);
		if (rc)
			return rc;
	}
	if (sl_snap_get_u32(r, &n) || n > (r->len - r->pos) / 24)
		return bad(why, cap, "bad state file count");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t op = 0, shard = 0, crc = 0;
		uint64_t size = 0;

		sl_snap_get_u32(r, &op);
		sl_snap_get_u32(r, &shard);
		sl_snap_get_u64(r, &size);
		sl_snap_get_u32(r, &crc);
		s = get_str(r);
		if (!s)
			return r->error ? bad(why, cap, "state file %u runs past the end", i)
					: -ENOMEM;
		rc = sl_ckpt_manifest_add_file(m, op, shard, s, size, crc);
		if (rc == -EINVAL)
			bad(why, cap, "state file path \"%s\" leaves the checkpoint directory", s);
		free(s);
		if (rc)
			return rc;
	}
	if (sl_snap_get_u32(r, &n) || n > (r->len - r->pos) / 12)
		return bad(why, cap, "bad sink count");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t op = 0, inst = 0, len = 0;

		sl_snap_get_u32(r, &op);
		sl_snap_get_u32(r, &inst);
		if (sl_snap_get_bytes(r, &p, &len))
			return bad(why, cap, "sink meta %u runs past the end", i);
		rc = sl_ckpt_manifest_add_sink(m, op, inst, p, len);
		if (rc)
			return rc;
	}
	if (r->error)
		return bad(why, cap, "a field runs past the end");
	if (r->pos != r->len)
		return bad(why, cap, "%zu stray bytes after the last field", r->len - r->pos);
	return 0;
}

int sl_ckpt_manifest_decode(struct sl_ckpt_manifest *m, const void *p, size_t len, char *why,
			    size_t cap)
{
	const uint8_t *b = p;
	struct sl_snap_reader r;
	uint32_t version, crc, want;
	uint64_t blen;
	int rc;

	memset(m, 0, sizeof(*m));
	if (cap)
		why[0] = 0;
	if (len < HEADER_LEN + 4)
		return bad(why, cap, "truncated: %zu bytes, shorter than the header", len);
	if (memcmp(b, magic, sizeof(magic)))
		return bad(why, cap, "not a sluice manifest (bad magic)");
	memcpy(&version, b + 8, 4);
	memcpy(&blen, b + 16, 8);
	if (blen != len - HEADER_LEN - 4)
		return bad(why, cap, "truncated or extended: %zu bytes, the header says %llu", len,
			   (unsigned long long)(blen + HEADER_LEN + 4));
	memcpy(&want, b + len - 4, 4);
	crc = sl_crc32c(0, b, len - 4);
	if (crc != want)
		return bad(why, cap, "checksum mismatch (CRC32C %08x, stored %08x)", crc, want);
	if (version > SL_CKPT_FORMAT_VERSION)
		return bad(why, cap, "format version %u is newer than this build's %u", version,
			   SL_CKPT_FORMAT_VERSION);
	rc = sl_ckpt_manifest_init(m, "", 0, 0, 0);
	if (rc)
		return rc;
	m->version = version;
	sl_snap_reader_init(&r, b + HEADER_LEN, (size_t)blen);
	rc = decode_body(m, &r, why, cap);
	if (rc)
		sl_ckpt_manifest_fini(m);
	return rc;
}

/* The op of `id` at `at` (just after '|' or ';'): its text up to ';', in out. */
static bool next_op(const char **at, char *out, size_t cap)
{
	const char *e = strchr(*at, ';');
	size_t len;

	if (!e)
		return false;
	len = (size_t)(e - *at);
	snprintf(out, cap, "%.*s", (int)(len < cap ? len : cap - 1), *at);
	*at = e + 1;
	return true;
}

/* "3:tumble window:w" -> "operator 3 (tumble window 'w')" */
static void op_words(const char *op, char *out, size_t cap)
{
	const char *k = strchr(op, ':'), *n = k ? strchr(k + 1, ':') : NULL;

	if (!k || !n)
		snprintf(out, cap, "'%s'", op);
	else
		snprintf(out, cap, "operator %.*s (%.*s '%s')", (int)(k - op), op, (int)(n - k - 1),
			 k + 1, n + 1);
}

void sl_ckpt_job_id_diff(const char *had, const char *want, char *why, size_t cap)
{
	const char *hb = strchr(had, '|'), *wb = strchr(want, '|');
	char ho[512], wo[512], hw[600], ww[600];
	bool hn, wn;

	if (!hb || !wb) {
		snprintf(why, cap, "checkpoint of job \"%s\", this job is \"%s\"", had, want);
		return;
	}
	if (hb - had != wb - want || strncmp(had, want, (size_t)(hb - had))) {
		snprintf(why, cap,
			 "checkpoint of job '%.*s', this job is '%.*s' (SQL: SET 'pipeline.name', "
			 "by default the job file's name)",
			 (int)(hb - had), had, (int)(wb - want), want);
		return;
	}
	hb++;
	wb++;
	for (;;) {
		hn = next_op(&hb, ho, sizeof ho);
		wn = next_op(&wb, wo, sizeof wo);
		if (!hn && !wn)
			break;
		if (hn && wn && !strcmp(ho, wo))
			continue;
		if (hn)
			op_words(ho, hw, sizeof hw);
		if (wn)
			op_words(wo, ww, sizeof ww);
		if (hn && wn)
			snprintf(why, cap, "the plan changed at %s: the checkpoint has %s there",
				 ww, hw);
		else if (hn)
			snprintf(why, cap, "the checkpoint's %s is not in this job", hw);
		else
			snprintf(why, cap, "this job has %s, which the checkpoint does not", ww);
		return;
	}
	snprintf(why, cap, "the job ids differ only past what fits in a manifest");
}
