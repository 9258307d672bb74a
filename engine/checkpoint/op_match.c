/*
 * op_match.c - which operator of a job takes which state of a checkpoint (DESIGN §7, "A
 * job's identity").
 *
 * A manifest names its job "<name>|<op>;<op>;..." with each op "<index>:<kind>:<uid>", and
 * "=<fingerprint>" after the uid for an operator with keyed state (a hash of its input and
 * output columns, whose layout its state follows). The state files, split positions and
 * sink commits of the manifest name their operator by index. A restore maps each index of
 * the checkpoint to the operator of the new job with the same kind and uid, so operators
 * added or removed elsewhere (a filter before a window, another INSERT in the statement
 * set) move nothing. Ids written before fingerprints existed have none; they match by kind
 * and uid alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"
#include "op_match.h"

struct op_tok {
	long index;
	const char *kind, *uid, *fp;
	size_t kind_len, uid_len, fp_len;
};

/* Parses "<index>:<kind>:<uid>[=<fp>]" of t[0..len). */
static bool parse_tok(const char *t, size_t len, struct op_tok *o)
{
	const char *end = t + len, *k, *u, *eq;
	char *after;

	o->index = strtol(t, &after, 10);
	if (after == t || after >= end || *after != ':')
		return false;
	k = after + 1;
	u = memchr(k, ':', (size_t)(end - k));
	if (!u)
		return false;
	o->kind = k;
	o->kind_len = (size_t)(u - k);
	u++;
	eq = memchr(u, '=', (size_t)(end - u));
	o->uid = u;
	o->uid_len = (size_t)((eq ? eq : end) - u);
	o->fp = eq ? eq + 1 : NULL;
	o->fp_len = eq ? (size_t)(end - eq - 1) : 0;
	return true;
}

/* Calls each op of `id` in turn: o filled; stops when fn returns true. Returns that op's
 * position, or -1. */
static int each_op(const char *id, bool (*fn)(const struct op_tok *o, const void *arg),
		   const void *arg, struct op_tok *o)
{
	const char *p = strchr(id, '|');
	int pos = 0;

	while (p && p[1]) {
		const char *s = p + 1, *e = strchr(s, ';');

		if (!e)
			break;
		if (parse_tok(s, (size_t)(e - s), o) && fn(o, arg))
			return pos;
		pos++;
		p = e;
	}
	return -1;
}

static bool index_is(const struct op_tok *o, const void *arg)
{
	return o->index == *(const long *)arg;
}

static bool same_op(const struct op_tok *o, const void *arg)
{
	const struct op_tok *h = arg;

	return o->kind_len == h->kind_len && !memcmp(o->kind, h->kind, h->kind_len) &&
	       o->uid_len == h->uid_len && !memcmp(o->uid, h->uid, h->uid_len);
}

bool sl_ckpt_job_names_equal(const char *had, const char *want)
{
	const char *hb = strchr(had, '|'), *wb = strchr(want, '|');

	return hb && wb && hb - had == wb - want && !strncmp(had, want, (size_t)(hb - had));
}

enum sl_ckpt_op_fate sl_ckpt_op_find(const char *had, uint32_t index, const char *want, int *to,
				     char *desc, size_t cap)
{
	struct op_tok h, w;
	long i = (long)index;

	*to = -1;
	if (each_op(had, index_is, &i, &h) < 0) {
		snprintf(desc, cap, "operator %u", index);
		return SL_CKPT_OP_UNNAMED;
	}
	snprintf(desc, cap, "%.*s '%.*s'", (int)h.kind_len, h.kind, (int)h.uid_len, h.uid);
	if (each_op(want, same_op, &h, &w) < 0)
		return SL_CKPT_OP_GONE;
	*to = (int)w.index;
	if (h.fp && w.fp && (h.fp_len != w.fp_len || memcmp(h.fp, w.fp, h.fp_len)))
		return SL_CKPT_OP_CHANGED;
	return SL_CKPT_OP_SAME;
}

/* The distinct operator indices of m's state, split positions and sink commits, in *ops
 * (caller frees). Returns how many, or -ENOMEM. */
static int state_ops(const struct sl_ckpt_manifest *m, uint32_t **ops)
{
	uint32_t n = 0, cap = m->nfiles + m->nsources + m->nsinks + 1;
	uint32_t *v = malloc(cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (uint32_t k = 0; k < m->nfiles + m->nsources + m->nsinks; k++) {
		uint32_t op = k < m->nfiles ? m->files[k].op_id
			      : k < m->nfiles + m->nsources
				      ? m->sources[k - m->nfiles].op_id
				      : m->sinks[k - m->nfiles - m->nsources].op_id;
		uint32_t j = 0;

		while (j < n && v[j] != op)
			j++;
		if (j == n)
			v[n++] = op;
	}
	*ops = v;
	return (int)n;
}

/* Index of op in ops[0..n) mapped through map, -1 for dropped. */
static long mapped(const uint32_t *ops, const int *map, int n, uint32_t op)
{
	for (int j = 0; j < n; j++)
		if (ops[j] == op)
			return map[j];
	return -1;
}

/* Rewrites m's operator indices through (ops, map); entries mapped to -1 are removed. */
static void rewrite(struct sl_ckpt_manifest *m, const uint32_t *ops, const int *map, int n)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < m->nfiles; i++) {
		long to = mapped(ops, map, n, m->files[i].op_id);

		if (to < 0) {
			free(m->files[i].path);
			continue;
		}
		m->files[k] = m->files[i];
		m->files[k++].op_id = (uint32_t)to;
	}
	m->nfiles = k;
	k = 0;
	for (uint32_t i = 0; i < m->nsources; i++) {
		long to = mapped(ops, map, n, m->sources[i].op_id);

		if (to < 0) {
			free(m->sources[i].bytes);
			continue;
		}
		m->sources[k] = m->sources[i];
		m->sources[k++].op_id = (uint32_t)to;
	}
	m->nsources = k;
	k = 0;
	for (uint32_t i = 0; i < m->nsinks; i++) {
		long to = mapped(ops, map, n, m->sinks[i].op_id);

		if (to < 0) {
			free(m->sinks[i].bytes);
			continue;
		}
		m->sinks[k] = m->sinks[i];
		m->sinks[k++].op_id = (uint32_t)to;
	}
	m->nsinks = k;
}

static void append(char *buf, size_t cap, size_t *len, const char *s)
{
	int w = snprintf(buf + *len, *len < cap ? cap - *len : 0, "%s%s", *len ? ", " : "", s);

	if (w > 0 && *len + (size_t)w < cap)
		*len += (size_t)w;
}

int sl_ckpt_manifest_map_ops(struct sl_ckpt_manifest *m, const char *want, bool allow_drop,
			     char *why, size_t cap)
{
	uint32_t *ops;
	int *map, n, dropped = 0, rc = 0;
	size_t len = 0;

	if (cap)
		why[0] = 0;
	if (!strchr(m->job_id, '|') || !strchr(want, '|')) {
		/* an id of another form (not sl_ckpt_job_identity's): the same, or refused */
		if (!strcmp(m->job_id, want))
			return 0;
		sl_ckpt_job_id_diff(m->job_id, want, why, cap);
		return -ESTALE;
	}
	if (!sl_ckpt_job_names_equal(m->job_id, want)) {
		sl_ckpt_job_id_diff(m->job_id, want, why, cap);
		return -ESTALE;
	}
	n = state_ops(m, &ops);
	if (n < 0)
		return n;
	map = calloc((size_t)n + 1, sizeof(*map));
	if (!map) {
		free(ops);
		return -ENOMEM;
	}
	for (int j = 0; j < n && !rc; j++) {
		char desc[300];
		enum sl_ckpt_op_fate f =
			sl_ckpt_op_find(m->job_id, ops[j], want, &map[j], desc, sizeof desc);

		switch (f) {
		case SL_CKPT_OP_SAME:
			break;
		case SL_CKPT_OP_CHANGED:
			snprintf(
				why, cap,
				"the state of %s does not fit this job's operator of that uid: its "
				"input or output columns changed (to start it empty, name the "
				"statement anew with a UID hint and restore with "
				"--allow-non-restored-state)",
				desc);
			rc = -ESTALE;
			break;
		case SL_CKPT_OP_GONE:
			if (allow_drop) {
				map[j] = -1;
				append(why, cap, &len, desc);
				dropped++;
				break;
			}
			snprintf(why, cap,
				 "the checkpoint holds state of %s, which this job does not have "
				 "(--allow-non-restored-state drops it)",
				 desc);
			rc = -ESTALE;
			break;
		case SL_CKPT_OP_UNNAMED:
			snprintf(why, cap, "the manifest lists state of %s, which its job id lacks",
				 desc);
			rc = -ESTALE;
			break;
		}
	}
	if (!rc)
		rewrite(m, ops, map, n);
	free(map);
	free(ops);
	return rc ? rc : dropped;
}
