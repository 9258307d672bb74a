/*
 * conn_harness.h - drives a source without a job: a hand-filled struct sl_src_ctx whose
 * callbacks copy every emitted row and every dead letter, plus small helpers to build
 * schemas and temp files. Test code: allocation is fine here.
 */
#ifndef SL_TESTS_CONN_HARNESS_H
#define SL_TESTS_CONN_HARNESS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/connectors.h>

#include "source.h"
#include "tests/test.h"

struct dead {
	char where[512];
	char why[SL_FMT_WHY_MAX + 64];
	char *raw;
	size_t rawlen;
};

struct harness {
	struct sl_src_ctx c;
	struct sl_row **rows;
	size_t nrows, rcap;
	struct dead *dl;
	size_t ndl, dcap;
	int emit_rc;            /* what emit returns (0 normally) */
};

static inline int h_emit(struct sl_src_ctx *c, const struct sl_row *row)
{
	struct harness *h = c->owner;

	T_ASSERT(row != NULL && row->size >= SL_ROW_HDR && row->size % 8 == 0);
	if (h->emit_rc)
		return h->emit_rc;
	if (h->nrows == h->rcap) {
		h->rcap = h->rcap ? h->rcap * 2 : 64;
		h->rows = realloc(h->rows, h->rcap * sizeof(*h->rows));
		T_ASSERT(h->rows);
	}
	h->rows[h->nrows] = aligned_alloc(8, row->size);
	T_ASSERT(h->rows[h->nrows]);
	memcpy(h->rows[h->nrows++], row, row->size);
	return 0;
}

static inline void h_dead(struct sl_src_ctx *c, const char *where, const char *why,
			  const char *raw, size_t rawlen)
{
	struct harness *h = c->owner;
	struct dead *d;

	if (h->ndl == h->dcap) {
		h->dcap = h->dcap ? h->dcap * 2 : 16;
		h->dl = realloc(h->dl, h->dcap * sizeof(*h->dl));
		T_ASSERT(h->dl);
	}
	d = &h->dl[h->ndl++];
	snprintf(d->where, sizeof d->where, "%s", where);
	snprintf(d->why, sizeof d->why, "%s", why);
	d->raw = malloc(rawlen + 1);
	T_ASSERT(d->raw);
	memcpy(d->raw, raw, rawlen);
	d->raw[rawlen] = '\0';
	d->rawlen = rawlen;
}

static inline void h_init(struct harness *h)
{
	memset(h, 0, sizeof(*h));
	h->c.emit = h_emit;
	h->c.dead_letter = h_dead;
	h->c.scratch = aligned_alloc(8, SL_ROW_SCRATCH);
	h->c.owner = h;
	T_ASSERT(h->c.scratch);
}

static inline void h_reset(struct harness *h)
{
	for (size_t i = 0; i < h->nrows; i++)
		free(h->rows[i]);
	for (size_t i = 0; i < h->ndl; i++)
		free(h->dl[i].raw);
	h->nrows = 0;
	h->ndl = 0;
}

static inline void h_fini(struct harness *h)
{
	h_reset(h);
	free(h->rows);
	free(h->dl);
	free(h->c.scratch);
}

/* Polls an open split until EOF (at most `max` per poll). Returns the number of polls. */
static inline int h_drain_open(struct harness *h, const struct sl_source_ops *ops, void *st,
			       int max)
{
	int polls = 0, rc;

	for (;;) {
		rc = ops->poll(st, &h->c, max);
		polls++;
		if (rc == SL_SRC_EOF)
			return polls;
		T_ASSERT(rc >= 0 && rc <= max);
		T_ASSERT(polls < 10000000);
	}
}

/* Opens split `split`, drains it, closes it. */
static inline void h_drain(struct harness *h, const struct sl_source_ops *ops, const void *cfg,
			   int split, int max)
{
	struct sl_error err = { 0 };
	void *st = ops->open(cfg, split, &err);

	if (!st)
		fprintf(stderr, "open failed: %s\n", err.msg);
	T_ASSERT(st != NULL);
	h->c.split = split;
	h_drain_open(h, ops, st, max);
	ops->close(st);
}

/* Builds a schema from "name:TYPE" pairs, NULL-terminated. */
static inline struct sl_schema *h_schema(const char *const *spec)
{
	struct sl_schema *s = sl_schema_create();

	T_ASSERT(s);
	for (int i = 0; spec[i]; i += 2) {
		const char *t = spec[i + 1];
		enum sl_type ty = !strcmp(t, "BOOL")     ? SL_TYPE_BOOL
				  : !strcmp(t, "INT")    ? SL_TYPE_INT
				  : !strcmp(t, "BIGINT") ? SL_TYPE_BIGINT
				  : !strcmp(t, "DOUBLE") ? SL_TYPE_DOUBLE
				  : !strcmp(t, "STRING") ? SL_TYPE_STRING
							 : SL_TYPE_TIMESTAMP;

		T_ASSERT(sl_schema_add(s, spec[i], ty) >= 0);
	}
	return s;
}

/* Writes `text` into a new temp file; returns its malloc'd path. */
static inline char *h_tempfile(const char *text, size_t len)
{
	char *path = strdup("/tmp/sluice-conn-XXXXXX");
	int fd;

	T_ASSERT(path);
	fd = mkstemp(path);
	T_ASSERT(fd >= 0);
	T_ASSERT(write(fd, text, len) == (ssize_t)len);
	close(fd);
	return path;
}

/* Asserts that string field i of r equals `want`. */
#define T_ASSERT_STR(r, i, want)                                                         \
	do {                                                                             \
		uint32_t l_;                                                             \
		const char *s_ = sl_row_str((r), (i), &l_);                              \
		T_ASSERT(!sl_row_is_null((r), (i)));                                     \
		if (l_ != strlen(want) || memcmp(s_, (want), l_) != 0) {                 \
			fprintf(stderr, "%s:%d: field %d is '%.*s', expected '%s'\n",    \
				__FILE__, __LINE__, (int)(i), (int)l_, s_, (want));      \
			exit(T_EXIT_FAIL);                                               \
		}                                                                        \
	} while (0)

#endif
