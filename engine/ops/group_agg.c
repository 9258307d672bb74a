/*
 * group_agg.c - the updating GROUP BY as a keyed process function (see group_agg.h for the
 * changelog it emits; the logic mirrors Flink's GroupAggHelper.processElement).
 *
 * State of one group key, all through operator.h so any state backend serves it:
 *
 *   ST_ACC  value  the block: header {rows, last write, arrival counter}, then one fixed
 *                  part per aggregate (a kernel accumulator, or struct ga_cur)
 *   ST_CUR  map    [agg index][bytes] -> unused: the current STRING value of MIN/MAX/FIRST/
 *                  LAST_VALUE (map values are fixed-size, map keys are not, so variable bytes
 *                  live in keys); at most one entry per aggregate
 *   ST_MS+j map    multiset of aggregate j's inputs, value -> int64 count, or for
 *                  FIRST/LAST_VALUE and LISTAGG [arrival][value] -> 1
 *
 * Per record: read the block into a stack copy (a backend may hand out copies), build the
 * old result row, accumulate or retract into the copy and the maps, build the new row, write
 * the block back, emit. A map is touched only by the aggregates that need one; nothing is
 * allocated except by a new key or a new multiset value (state entries). Rescans of a
 * multiset (the current MIN/MAX or FIRST/LAST was retracted) cost O(its distinct values), as
 * Flink's MinWithRetractAggFunction's do.
 *
 * Invariants: a key has ST_ACC iff rows != 0; ga_cur.n counts the non-NULL inputs held (for
 * COUNT(DISTINCT) the distinct values, i.e. multiset entries); a fixed-width current value
 * sits in ga_cur.v, a STRING one in ST_CUR, and either exists iff n > 0.
 *
 * TTL (table.exec.state.ttl) is the state descriptors' OnCreateAndWrite TTL: every record
 * rewrites the block and refreshes the key's ST_CUR entries. Multiset entries expire on their
 * own, like the MapView entries of Flink's retracting functions (a rescan then sees fewer
 * values, as in Flink). One processing-time timer per key, re-armed lazily at last write +
 * ttl, frees an idle key's maps; expired values are never returned in between.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "group_agg.h"
#include "agg.h"
#include "partials.h"

enum { ST_ACC = 0, ST_CUR = 1, ST_MS = 2 };

enum ga_mode {
	GA_KERNEL,	  /* the kernel's own accumulator (COUNT, SUM, AVG; fixed-width MIN/MAX/
			   * FIRST/LAST on insert-only input) */
	GA_EXTREME,	  /* MIN/MAX with retraction: value -> count */
	GA_ORDER,	  /* FIRST/LAST_VALUE with retraction: (arrival, value) -> 1 */
	GA_DISTINCT,	  /* COUNT(DISTINCT): value -> count */
	GA_DISTINCT_FOLD, /* SUM/AVG(DISTINCT): value -> count, and the plain kernel's
			   * accumulator fed a value as its count goes 0 -> 1 (add) or
			   * 1 -> 0 (retract) */
	GA_STR,	 /* MIN/MAX/FIRST/LAST of STRING on insert-only input: current value only */
	GA_LIST, /* LISTAGG, any input: (arrival, value) -> 1, the result joined from it */
};

struct ga_hdr {
	int64_t rows; /* accumulated minus retracted rows */
	sl_ts_t last; /* processing time of the last write (TTL timer) */
	uint64_t seq; /* arrival numbers given to FIRST/LAST_VALUE inputs so far */
};

/* The fixed part of the non-kernel modes. */
struct ga_cur {
	int64_t n;    /* non-NULL inputs held (GA_DISTINCT: distinct values) */
	uint64_t v;   /* current value's slot, fixed-width types */
	uint64_t seq; /* current value's arrival number (FIRST/LAST) */
};

struct ga_agg {
	struct sl_agg_bound b;	/* b.off: offset of the fixed part in the block */
	struct sl_agg_bound ib; /* GA_DISTINCT_FOLD: b with the plain kernel, b.inner */
	enum ga_mode mode;
	int ms;	      /* map state id of the multiset, -1: none */
	int sign;     /* MIN, FIRST_VALUE: -1; MAX, LAST_VALUE: +1 */
	bool str;     /* the current value is a STRING, kept in ST_CUR */
	bool ordered; /* FIRST/LAST_VALUE: values keyed by arrival */
};

struct ga {
	int nkey, naggs, nout;
	uint32_t size; /* block bytes */
	sl_ts_t ttl;
	bool insert_only;
	int nstates;
	struct sl_state_desc *desc;
	struct ga_agg *agg;
	enum sl_type *out_type; /* nout */
	bool split;		/* two-stage: senders run group_agg_local.c over `local` */
	struct sl_ga_local local;
};

#define BLOCK_MAX (sizeof(struct ga_hdr) + SL_SCHEMA_MAX_FIELDS * 24)

/* Per-record scratch on the stack: the old row must live while the new one is built. */
struct run {
	struct sl_ctx *ctx;
	const struct ga *g;
	uint8_t *blk;
	int i;		  /* aggregate being worked on */
	const uint8_t *x; /* its input value's bytes */
	uint32_t xl;
	uint64_t best_seq; /* scans: best arrival number so far, 0: none */
	uint32_t bestl;	   /* scans: length of best, UINT32_MAX: none */
	uint8_t best[SL_KEY_MAX];
	struct sl_row_builder *b;
	int rc;
};

static void fail(struct sl_ctx *ctx, int code, const char *what, const struct ga_agg *a)
{
	/* unit tests drive instances without a shard; the job path always has one */
	if (ctx->shard)
		sl_shard_fail(ctx->shard, code, "group aggregate '%s', %s: %s", ctx->def->name,
			      sl_agg_kind_name(a->b.kind), what);
}

static inline struct ga_hdr *hdr_of(uint8_t *blk)
{
	return (struct ga_hdr *)blk;
}

static inline struct ga_cur *cur_of(const struct ga_agg *a, uint8_t *blk)
{
	return (struct ga_cur *)(blk + a->b.off);
}

/* ---- values as map-key bytes ------------------------------------------------------------ */

/* Writes the bytes agg a's value in row is told apart by at buf + pre: a string's bytes, or
 * the 8 slot bytes (NaN made canonical, as Java's Double.equals has one NaN). Returns the
 * total length, or -1 for a string longer than SL_GROUP_AGG_STR_MAX. */
static int enc_value(const struct ga_agg *a, const struct sl_row *row, uint8_t *buf, uint32_t pre)
{
	uint64_t v = row->slot[a->b.field];
	double d;

	if (a->b.in_type == SL_TYPE_STRING) {
		uint32_t len;
		const char *s = sl_row_str(row, a->b.field, &len);

		if (len > SL_GROUP_AGG_STR_MAX)
			return -1;
		memcpy(buf + pre, s, len);
		return (int)(pre + len);
	}
	if (a->b.in_type == SL_TYPE_DOUBLE || a->b.in_type == SL_TYPE_FLOAT) {
		memcpy(&d, &v, 8);
		if (d != d)
			v = 0x7ff8000000000000ull;
	}
	memcpy(buf + pre, &v, 8);
	return (int)(pre + 8);
}

/* Orders two encoded values of agg a: bytes for strings (Flink's binary string order),
 * numbers with NaN above everything (Java's Double.compareTo). */
static int val_cmp(const struct ga_agg *a, const uint8_t *x, uint32_t xl, const uint8_t *y,
		   uint32_t yl)
{
	if (a->b.in_type == SL_TYPE_STRING) {
		int r = memcmp(x, y, xl < yl ? xl : yl);

		return r ? r : (xl > yl) - (xl < yl);
	}
	if (a->b.in_type == SL_TYPE_DOUBLE || a->b.in_type == SL_TYPE_FLOAT) {
		double p, q;

		memcpy(&p, x, 8);
		memcpy(&q, y, 8);
		if (p != p || q != q)
			return (p != p) - (q != q);
		return (p > q) - (p < q);
	} else {
		int64_t p, q;

		memcpy(&p, x, 8);
		memcpy(&q, y, 8);
		return (p > q) - (p < q);
	}
}

/* ---- the current STRING values (ST_CUR) ------------------------------------------------- */

/* Removes agg r->i's entries of ST_CUR other than [i][r->x] (r->x NULL: all of them). */
static bool cur_drop_other(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct run *r = arg;
	const uint8_t *k = mkey;
	uint8_t copy[SL_KEY_MAX];

	if (k[0] != r->i)
		return true;
	if (r->x && mklen == r->xl + 1 && !memcmp(k + 1, r->x, r->xl))
		return true;
	memcpy(copy, k, mklen);
	sl_map_remove(r->ctx, ST_CUR, copy, mklen);
	return true;
}

/* Makes x the current value of agg i: insert first, then drop the old entry, so the key's
 * map never empties (an empty map is freed and would be allocated again). */
static int cur_set(struct run *r, int i, const uint8_t *x, uint32_t xl)
{
	uint8_t k[SL_KEY_MAX];

	k[0] = (uint8_t)i;
	memcpy(k + 1, x, xl);
	if (!sl_map_put(r->ctx, ST_CUR, k, xl + 1))
		return -ENOMEM;
	r->i = i;
	r->x = k + 1;
	r->xl = xl;
	sl_map_foreach(r->ctx, ST_CUR, cur_drop_other, r);
	return 0;
}

static void cur_clear(struct run *r, int i)
{
	r->i = i;
	r->x = NULL;
	sl_map_foreach(r->ctx, ST_CUR, cur_drop_other, r);
}

/* Sets the current value of agg a (index i) to x, in ga_cur.v or in ST_CUR. */
static int set_current(struct run *r, int i, const uint8_t *x, uint32_t xl)
{
	const struct ga_agg *a = &r->g->agg[i];

	if (a->str)
		return cur_set(r, i, x, xl);
	memcpy(&cur_of(a, r->blk)->v, x, 8);
	return 0;
}

/* ---- multisets ---------------------------------------------------------------------------- */

/* Scan for the best value of a MIN/MAX multiset: keeps the extreme in r->best. */
static bool scan_extreme(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct run *r = arg;
	const struct ga_agg *a = &r->g->agg[r->i];

	if (*(int64_t *)value <= 0)
		return true;
	if (r->bestl == UINT32_MAX || a->sign * val_cmp(a, mkey, mklen, r->best, r->bestl) > 0) {
		memcpy(r->best, mkey, mklen);
		r->bestl = mklen;
	}
	return true;
}

/* Scan of a FIRST/LAST multiset. With r->x set: the earliest occurrence of that value (to
 * retract it); else the earliest (FIRST) or latest (LAST) entry. */
static bool scan_order(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct run *r = arg;
	const struct ga_agg *a = &r->g->agg[r->i];
	const uint8_t *k = mkey;
	uint64_t seq;

	memcpy(&seq, k, 8);
	if (r->x) {
		if (mklen - 8 != r->xl || memcmp(k + 8, r->x, r->xl))
			return true;
		if (!r->best_seq || seq < r->best_seq)
			r->best_seq = seq;
		return true;
	}
	if (!r->best_seq || (a->sign < 0 ? seq < r->best_seq : seq > r->best_seq)) {
		r->best_seq = seq;
		memcpy(r->best, k + 8, mklen - 8);
		r->bestl = mklen - 8;
	}
	return true;
}

/* Copies agg i's current STRING value out of ST_CUR into r->best (bestl UINT32_MAX: none). */
static bool cur_find(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct run *r = arg;
	const uint8_t *k = mkey;

	if (k[0] != r->i)
		return true;
	memcpy(r->best, k + 1, mklen - 1);
	r->bestl = mklen - 1;
	return false;
}

static void cur_get(struct run *r, int i)
{
	r->i = i;
	r->bestl = UINT32_MAX;
	sl_map_foreach(r->ctx, ST_CUR, cur_find, r);
}

/* Whether x beats agg i's current value (MIN: smaller, MAX: larger). */
static bool beats_current(struct run *r, int i, const uint8_t *x, uint32_t xl)
{
	const struct ga_agg *a = &r->g->agg[i];
	uint8_t cv[8];

	if (a->str) {
		cur_get(r, i);
		return r->bestl == UINT32_MAX || a->sign * val_cmp(a, x, xl, r->best, r->bestl) > 0;
	}
	memcpy(cv, &cur_of(a, r->blk)->v, 8);
	return a->sign * val_cmp(a, x, xl, cv, 8) > 0;
}

static int extreme_add(struct run *r, int i, const uint8_t *x, uint32_t xl)
{
	const struct ga_agg *a = &r->g->agg[i];
	struct ga_cur *c = cur_of(a, r->blk);
	int64_t *cnt;

	if (a->ms >= 0) {
		cnt = sl_map_put(r->ctx, a->ms, x, xl);
		if (!cnt)
			return -ENOMEM;
		(*cnt)++;
	}
	if (c->n++ == 0 || beats_current(r, i, x, xl))
		return set_current(r, i, x, xl);
	return 0;
}

/* Recomputes agg i's current value from its multiset after the old one left it. */
static int extreme_rescan(struct run *r, int i)
{
	const struct ga_agg *a = &r->g->agg[i];
	struct ga_cur *c = cur_of(a, r->blk);

	r->i = i;
	r->bestl = UINT32_MAX;
	sl_map_foreach(r->ctx, a->ms, scan_extreme, r);
	if (r->bestl == UINT32_MAX) {
		/* entries expired (TTL) before the count: nothing is held any more */
		c->n = 0;
		if (a->str)
			cur_clear(r, i);
		return 0;
	}
	return set_current(r, i, r->best, r->bestl);
}

static int extreme_retract(struct run *r, int i, const uint8_t *x, uint32_t xl)
{
	const struct ga_agg *a = &r->g->agg[i];
	struct ga_cur *c = cur_of(a, r->blk);
	int64_t *cnt = sl_map_get(r->ctx, a->ms, x, xl);
	bool was_current;

	if (!cnt)
		return 0; /* never accumulated (or expired): nothing to take back */
	if (--*cnt > 0) {
		c->n--;
		return 0;
	}
	sl_map_remove(r->ctx, a->ms, x, xl);
	if (--c->n <= 0) {
		c->n = 0;
		if (a->str)
			cur_clear(r, i);
		return 0;
	}
	if (a->str) {
		cur_get(r, i);
		was_current = r->bestl == xl && !memcmp(r->best, x, xl);
	} else {
		was_current = !memcmp(&c->v, x, 8);
	}
	return was_current ? extreme_rescan(r, i) : 0;
}

static int distinct_add(struct run *r, int i, const uint8_t *x, uint32_t xl)
{
	const struct ga_agg *a = &r->g->agg[i];
	int64_t *cnt = sl_map_put(r->ctx, a->ms, x, xl);

	if (!cnt)
		return -ENOMEM;
	if ((*cnt)++ == 0)
		cur_of(a, r->blk)->n++;
	return 0;
}

static int distinct_retract(struct run *r, int i, const uint8_t *x, uint32_t xl)
{
	const struct ga_agg *a = &r->g->agg[i];
	int64_t *cnt = sl_map_get(r->ctx, a->ms, x, xl);

	if (!cnt)
		return 0;
	if (--*cnt <= 0) {
		sl_map_remove(r->ctx, a->ms, x, xl);
		cur_of(a, r->blk)->n--;
	}
	return 0;
}

/* SUM/AVG(DISTINCT): counts x, and feeds row to the plain kernel when x is new (add) or
 * gone (retract); a retraction of a value never seen changes nothing. */
static int distinct_fold(struct run *r, int i, const struct sl_row *row, const uint8_t *x,
			 uint32_t xl, bool retract)
{
	const struct ga_agg *a = &r->g->agg[i];
	void *fixed = r->blk + a->b.off;
	int64_t *cnt;

	if (!retract) {
		if (!(cnt = sl_map_put(r->ctx, a->ms, x, xl)))
			return -ENOMEM;
		if ((*cnt)++ == 0)
			a->ib.k->add(&a->ib, fixed, row);
		return 0;
	}
	if (!(cnt = sl_map_get(r->ctx, a->ms, x, xl)))
		return 0;
	if (--*cnt <= 0) {
		sl_map_remove(r->ctx, a->ms, x, xl);
		a->ib.k->retract(&a->ib, fixed, row);
	}
	return 0;
}

/* FIRST/LAST_VALUE: x is [arrival][value] (the arrival number already written). */
static int order_add(struct run *r, int i, uint8_t *x, uint32_t xl)
{
	const struct ga_agg *a = &r->g->agg[i];
	struct ga_cur *c = cur_of(a, r->blk);
	uint64_t seq = ++hdr_of(r->blk)->seq;
	int64_t *one;

	if (a->ms >= 0) {
		memcpy(x, &seq, 8);
		one = sl_map_put(r->ctx, a->ms, x, xl);
		if (!one)
			return -ENOMEM;
		*one = 1;
	}
	x += 8;
	xl -= 8;
	/* arrival numbers only grow: FIRST keeps its value, LAST takes every new one */
	if (c->n++ > 0 && a->sign < 0)
		return 0;
	c->seq = seq;
	return set_current(r, i, x, xl);
}

/* Removes the earliest held occurrence of x's value ([arrival][value]) from aggregate i's
 * map; returns its arrival number, 0 when the value is not held. */
static uint64_t remove_earliest(struct run *r, int i, uint8_t *x, uint32_t xl)
{
	const struct ga_agg *a = &r->g->agg[i];

	r->i = i;
	r->x = x + 8;
	r->xl = xl - 8;
	r->best_seq = 0;
	sl_map_foreach(r->ctx, a->ms, scan_order, r);
	if (!r->best_seq)
		return 0;
	memcpy(x, &r->best_seq, 8);
	sl_map_remove(r->ctx, a->ms, x, xl);
	return r->best_seq;
}

static int order_retract(struct run *r, int i, uint8_t *x, uint32_t xl)
{
	const struct ga_agg *a = &r->g->agg[i];
	struct ga_cur *c = cur_of(a, r->blk);
	uint64_t seq = remove_earliest(r, i, x, xl);

	if (!seq)
		return 0; /* not held */
	if (--c->n <= 0) {
		c->n = 0;
		if (a->str)
			cur_clear(r, i);
		return 0;
	}
	if (seq != c->seq)
		return 0;
	r->x = NULL;
	r->best_seq = 0;
	r->bestl = UINT32_MAX;
	sl_map_foreach(r->ctx, a->ms, scan_order, r);
	if (!r->best_seq) {
		c->n = 0;
		if (a->str)
			cur_clear(r, i);
		return 0;
	}
	c->seq = r->best_seq;
	return set_current(r, i, r->best, r->bestl);
}

/* LISTAGG: x is [arrival][value]; every value is kept, in arrival order. */
static int list_add(struct run *r, int i, uint8_t *x, uint32_t xl)
{
	const struct ga_agg *a = &r->g->agg[i];
	uint64_t seq = ++hdr_of(r->blk)->seq;
	int64_t *one;

	memcpy(x, &seq, 8);
	one = sl_map_put(r->ctx, a->ms, x, xl);
	if (!one)
		return -ENOMEM;
	*one = 1;
	cur_of(a, r->blk)->n++;
	return 0;
}

/* Removes the earliest occurrence of the value, as Flink's ListAggWithRetractAggFunction
 * removes one from its list; a value not held is ignored, as there. */
static int list_retract(struct run *r, int i, uint8_t *x, uint32_t xl)
{
	struct ga_cur *c = cur_of(&r->g->agg[i], r->blk);

	if (remove_earliest(r, i, x, xl) && --c->n < 0)
		c->n = 0;
	return 0;
}

/* Accumulates (retract false) or retracts row into aggregate i. Returns 0 or -errno. */
static int apply(struct run *r, int i, const struct sl_row *row, bool retract)
{
	const struct ga_agg *a = &r->g->agg[i];
	uint8_t buf[SL_KEY_MAX];
	void *fixed = r->blk + a->b.off;
	int len;

	if (a->mode == GA_KERNEL) {
		if (retract)
			a->b.k->retract(&a->b, fixed, row);
		else
			a->b.k->add(&a->b, fixed, row);
		return 0;
	}
	if (sl_row_is_null(row, a->b.field))
		return 0;
	len = enc_value(a, row, buf, a->ordered ? 8 : 0);
	if (len < 0)
		return -E2BIG;
	switch (a->mode) {
	case GA_EXTREME:
		return retract ? extreme_retract(r, i, buf, (uint32_t)len)
			       : extreme_add(r, i, buf, (uint32_t)len);
	case GA_DISTINCT:
		return retract ? distinct_retract(r, i, buf, (uint32_t)len)
			       : distinct_add(r, i, buf, (uint32_t)len);
	case GA_DISTINCT_FOLD:
		return distinct_fold(r, i, row, buf, (uint32_t)len, retract);
	case GA_ORDER:
		return retract ? order_retract(r, i, buf, (uint32_t)len)
			       : order_add(r, i, buf, (uint32_t)len);
	case GA_LIST:
		return retract ? list_retract(r, i, buf, (uint32_t)len)
			       : list_add(r, i, buf, (uint32_t)len);
	case GA_STR:
		/* insert-only string MIN/MAX (sign compare) or FIRST/LAST (arrival) */
		if (a->ordered)
			return order_add(r, i, buf, (uint32_t)len);
		return extreme_add(r, i, buf, (uint32_t)len);
	case GA_KERNEL:
		break;
	}
	return 0;
}

/* ---- result rows -------------------------------------------------------------------------- */

/* Sets the STRING results from ST_CUR (and refreshes their TTL: only the block is rewritten
 * on every record otherwise). */
static bool cur_emit(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct run *r = arg;
	const uint8_t *k = mkey;
	const struct ga_agg *a;

	if (k[0] >= r->g->naggs)
		return true;
	a = &r->g->agg[k[0]];
	if (cur_of(a, r->blk)->n > 0)
		sl_rowb_set_str(r->b, r->g->nkey + k[0], (const char *)k + 1, mklen - 1);
	return true;
}

static bool cur_touch(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct run *r = arg;
	uint8_t copy[SL_KEY_MAX];

	memcpy(copy, mkey, mklen);
	sl_map_put(r->ctx, ST_CUR, copy, mklen);
	return true;
}

/*
 * LISTAGG's result from its multiset, whose entries a backend returns in any order: pass 1
 * reads every (arrival, length), sorted by arrival they give each value its place in the
 * joined string, reserved in the row; pass 2 copies each value to its place (found by
 * binary search). O(n log n) in the values held per result and no copy of them; a key
 * holding more than LIST_STACK values allocates its index per result.
 */
#define LIST_STACK 256

struct list_ent {
	uint64_t seq;
	uint32_t len;
	uint32_t pos; /* of the value in the joined string */
};

struct list_scan {
	struct list_ent *e;
	uint32_t n, cap;
	const struct sl_agg_bound *b;
	char *dst; /* pass 2: the joined string's bytes in the row */
	bool bad;  /* more entries than held, or one not seen in pass 1 */
};

static int ent_cmp(const void *x, const void *y)
{
	const struct list_ent *p = x, *q = y;

	return (p->seq > q->seq) - (p->seq < q->seq);
}

static bool list_index(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct list_scan *ls = arg;

	if (ls->n == ls->cap) {
		ls->bad = true;
		return false;
	}
	memcpy(&ls->e[ls->n].seq, mkey, 8);
	ls->e[ls->n++].len = mklen - 8;
	return true;
}

static bool list_place(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct list_scan *ls = arg;
	struct list_ent k, *e;

	memcpy(&k.seq, mkey, 8);
	e = bsearch(&k, ls->e, ls->n, sizeof(*e), ent_cmp);
	if (!e || e->len != mklen - 8) {
		ls->bad = true;
		return false;
	}
	memcpy(ls->dst + e->pos, (const uint8_t *)mkey + 8, e->len);
	if (e != ls->e)
		memcpy(ls->dst + e->pos - ls->b->sep_len, ls->b->sep, ls->b->sep_len);
	return true;
}

static void list_emit(struct run *r, int i, struct sl_row_builder *b, int field)
{
	const struct ga_agg *a = &r->g->agg[i];
	struct list_ent stack[LIST_STACK];
	struct list_scan ls = { .e = stack, .cap = LIST_STACK, .b = &a->b };
	uint64_t pos = 0;

	if ((uint64_t)cur_of(a, r->blk)->n > LIST_STACK) {
		ls.cap = (uint32_t)cur_of(a, r->blk)->n;
		ls.e = malloc(sizeof(*ls.e) * ls.cap);
		if (!ls.e) {
			b->overflow = true; /* reported as a row that cannot be built */
			return;
		}
	}
	sl_map_foreach(r->ctx, a->ms, list_index, &ls);
	if (!ls.bad && ls.n == 0) {
		sl_rowb_set_null(b, field); /* every value expired (TTL) */
		goto out_free;
	}
	qsort(ls.e, ls.n, sizeof(*ls.e), ent_cmp);
	for (uint32_t k = 0; k < ls.n; k++) {
		pos += k ? a->b.sep_len : 0;
		ls.e[k].pos = (uint32_t)pos;
		pos += ls.e[k].len;
	}
	if (ls.bad || pos > SL_ROW_SCRATCH ||
	    !(ls.dst = sl_rowb_str_space(b, field, (uint32_t)pos))) {
		b->overflow = true;
		goto out_free;
	}
	sl_map_foreach(r->ctx, a->ms, list_place, &ls);
	if (ls.bad)
		b->overflow = true;
out_free:
	if (ls.e != stack)
		free(ls.e);
}

static const struct sl_row *build_row(struct run *r, struct sl_row_builder *b,
				      enum sl_row_kind kind)
{
	const struct ga *g = r->g;
	bool strs = false;

	for (int i = 0; i < g->nkey; i++)
		sl_ctx_key_copy(r->ctx, i, b, i);
	for (int i = 0; i < g->naggs; i++) {
		const struct ga_agg *a = &g->agg[i];
		const struct ga_cur *c = cur_of(a, r->blk);
		int f = g->nkey + i;

		if (a->mode == GA_KERNEL)
			a->b.k->result(&a->b, r->blk + a->b.off, b, f);
		else if (a->mode == GA_DISTINCT_FOLD)
			a->ib.k->result(&a->ib, r->blk + a->b.off, b, f);
		else if (a->mode == GA_DISTINCT)
			sl_rowb_set_i64(b, f, c->n);
		else if (c->n <= 0)
			sl_rowb_set_null(b, f);
		else if (a->mode == GA_LIST)
			list_emit(r, i, b, f);
		else if (a->str)
			strs = true;
		else
			sl_rowb_set_i64(b, f, (int64_t)c->v);
	}
	if (strs) {
		r->b = b;
		sl_map_foreach(r->ctx, ST_CUR, cur_emit, r);
	}
	sl_rowb_set_kind(b, kind);
	return sl_rowb_finish(b);
}

/* Field-wise equality (string bytes may sit in a different order in the two rows). */
static bool same_result(const struct ga *g, const struct sl_row *x, const struct sl_row *y)
{
	if (x->nulls != y->nulls)
		return false;
	for (int i = 0; i < g->nout; i++) {
		if (sl_row_is_null(x, i))
			continue;
		if (g->out_type[i] == SL_TYPE_STRING) {
			uint32_t xl, yl;
			const char *xs = sl_row_str(x, i, &xl), *ys = sl_row_str(y, i, &yl);

			if (xl != yl || memcmp(xs, ys, xl))
				return false;
		} else if (x->slot[i] != y->slot[i]) {
			return false;
		}
	}
	return true;
}

/* ---- the process function ------------------------------------------------------------------ */

static void clear_key(struct sl_ctx *ctx, const struct ga *g)
{
	sl_value_clear(ctx, ST_ACC);
	for (int i = ST_CUR; i < g->nstates; i++)
		sl_map_clear(ctx, i);
}

/*
 * Reads the current key's block into blk (zeroed for a new key, whose expired map entries
 * are freed first) and sets up r; for a key that had a block, *prev is its result as a -U
 * row over prevbuf (SL_ROW_SCRATCH bytes), else NULL. Returns 1 (the key had a block), 0 (a
 * new key), -1 (nothing to do: a new key when !create, or a failure already reported).
 */
static int load_key(struct sl_ctx *ctx, const struct ga *g, struct run *r, uint8_t *blk,
		    uint8_t *prevbuf, const struct sl_row **prev, bool create)
{
	const void *stored = sl_value_get(ctx, ST_ACC);
	struct sl_row_builder pb;

	r->ctx = ctx;
	r->g = g;
	r->blk = blk;
	*prev = NULL;
	if (!stored) {
		if (g->ttl)
			clear_key(ctx, g);
		if (!create)
			return -1;
		memset(blk, 0, g->size);
		return 0;
	}
	memcpy(blk, stored, g->size);
	sl_rowb_init(&pb, prevbuf, SL_ROW_SCRATCH, g->nout);
	*prev = build_row(r, &pb, SL_ROW_UPDATE_BEFORE);
	if (!*prev) {
		fail(ctx, -ENOSPC, "result row larger than the row scratch buffer", &g->agg[0]);
		return -1;
	}
	return 1;
}

/* Writes the key's updated block back and emits the change from prev (NULL: the key is
 * new): -U/+U, +I, or nothing for an unchanged result. */
static void store_emit(struct sl_ctx *ctx, const struct ga *g, struct run *r, uint8_t *blk,
		       bool had, const struct sl_row *prev, sl_ts_t ts)
{
	const struct sl_row *new;
	void *stored;

	if (g->ttl) {
		hdr_of(blk)->last = sl_ctx_proctime(ctx);
		if (!had && sl_timer_proc(ctx, hdr_of(blk)->last + g->ttl) < 0) {
			fail(ctx, -ENOMEM, "out of memory for state TTL timers", &g->agg[0]);
			return;
		}
		sl_map_foreach(ctx, ST_CUR, cur_touch, r);
	}
	stored = sl_value_put(ctx, ST_ACC);
	if (!stored) {
		fail(ctx, -ENOMEM, "out of memory for aggregate state", &g->agg[0]);
		return;
	}
	memcpy(stored, blk, g->size);
	new = build_row(r, sl_ctx_out(ctx), prev ? SL_ROW_UPDATE_AFTER : SL_ROW_INSERT);
	if (!new) {
		fail(ctx, -ENOSPC, "result row larger than the row scratch buffer", &g->agg[0]);
		return;
	}
	if (prev) {
		/* Flink sends nothing for an unchanged result, unless state expires (then every
		 * update is re-sent so downstream state is refreshed too) */
		if (!g->ttl && same_result(g, prev, new))
			return;
		sl_emit(ctx, ts, prev);
	}
	sl_emit(ctx, ts, new);
}

/* Hot path: one value get/put, the aggregates, two row builds. */
static void ga_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	const struct ga *g = arg;
	bool retract = row->kind == SL_ROW_UPDATE_BEFORE || row->kind == SL_ROW_DELETE;
	_Alignas(16) uint8_t blk[BLOCK_MAX];
	_Alignas(8) uint8_t prevbuf[SL_ROW_SCRATCH];
	const struct sl_row *prev;
	struct run r;
	int had, rc;

	if (retract && g->insert_only) {
		if (ctx->shard)
			sl_shard_fail(ctx->shard, -EINVAL,
				      "group aggregate '%s': a retraction on an insert-only input",
				      ctx->def->name);
		return;
	}
	/* Flink: no accumulator is created for a retraction (never counted, or expired) */
	had = load_key(ctx, g, &r, blk, prevbuf, &prev, !retract);
	if (had < 0)
		return;
	hdr_of(blk)->rows += retract ? -1 : 1;
	for (int i = 0; i < g->naggs; i++) {
		rc = apply(&r, i, row, retract);
		if (rc) {
			fail(ctx, rc,
			     rc == -E2BIG ? "string value longer than the state limit"
					  : "out of memory for aggregate state",
			     &g->agg[i]);
			return;
		}
	}
	if (hdr_of(blk)->rows == 0) {
		/* the last row of the key was retracted: -D the old result, forget the key */
		if (prev) {
			((struct sl_row *)prev)->kind = SL_ROW_DELETE;
			sl_emit(ctx, ts, prev);
		}
		clear_key(ctx, g);
		return;
	}
	store_emit(ctx, g, &r, blk, had, prev, ts);
}

/*
 * A partial of the local stage (group_agg_local.c): `nrows` rows of the current key
 * combined on their sender, merged into the key's block as ga_process would have added
 * them one by one, and one update emitted for all of them. Only insert-only inputs with
 * kernel aggregates are split (sl_group_agg_build), so no map state is involved.
 */
static void ga_merge_partial(struct sl_ctx *ctx, sl_ts_t ts, const void *acc, uint32_t acc_len,
			     uint32_t nrows, void *arg)
{
	const struct ga *g = arg;
	_Alignas(16) uint8_t blk[BLOCK_MAX];
	_Alignas(8) uint8_t prevbuf[SL_ROW_SCRATCH];
	const struct sl_row *prev;
	struct run r;
	int had;

	if (acc_len != g->size || !g->split) {
		fail(ctx, -EPROTO, "a partial that is not this aggregate's", &g->agg[0]);
		return;
	}
	had = load_key(ctx, g, &r, blk, prevbuf, &prev, true);
	if (had < 0)
		return;
	hdr_of(blk)->rows += nrows;
	for (int i = 0; i < g->naggs; i++)
		g->agg[i].b.k->merge(&g->agg[i].b, blk + g->agg[i].b.off,
				     (const uint8_t *)acc + g->agg[i].b.off);
	store_emit(ctx, g, &r, blk, had, prev, ts);
}

/* The key's TTL timer: free an idle key's maps, or come back when it may be idle. */
static void ga_on_timer(struct sl_ctx *ctx, sl_ts_t at, enum sl_time_domain d, void *arg)
{
	const struct ga *g = arg;
	const struct ga_hdr *h = sl_value_get(ctx, ST_ACC);

	if (!h) {
		clear_key(ctx, g);
		return;
	}
	if (sl_timer_proc(ctx, h->last + g->ttl > at ? h->last + g->ttl : at + 1) < 0)
		fail(ctx, -ENOMEM, "out of memory for state TTL timers", &g->agg[0]);
}

/* ---- plan time ------------------------------------------------------------------------------ */

static void ga_free(struct ga *g)
{
	if (!g)
		return;
	free(g->desc);
	free(g->agg);
	free(g->out_type);
	free(g);
}

void sl_group_agg_free(struct sl_process_fn *fn)
{
	if (!fn)
		return;
	ga_free(fn->arg);
	memset(fn, 0, sizeof(*fn));
}

static int bind_one(struct ga *g, int i, const struct sl_agg_spec *spec, const struct sl_schema *in,
		    uint32_t *off, char *err, size_t errcap)
{
	struct ga_agg *a = &g->agg[i];
	char msg[200];
	uint32_t size;

	if (sl_agg_bind(&a->b, spec, in, msg, sizeof msg)) {
		snprintf(err, errcap, "group aggregate: %s", msg);
		return -EINVAL;
	}
	a->ms = -1;
	a->sign = spec->kind == SL_AGG_MIN || spec->kind == SL_AGG_FIRST_VALUE ? -1 : 1;
	a->ordered = spec->kind == SL_AGG_FIRST_VALUE || spec->kind == SL_AGG_LAST_VALUE;
	a->str = false;
	switch (spec->kind) {
	case SL_AGG_COUNT_DISTINCT:
		a->mode = GA_DISTINCT;
		break;
	case SL_AGG_SUM:
	case SL_AGG_AVG:
		a->mode = a->b.inner ? GA_DISTINCT_FOLD : GA_KERNEL;
		a->ib = a->b;
		if (a->b.inner)
			a->ib.k = a->b.inner;
		break;
	case SL_AGG_MIN:
	case SL_AGG_MAX:
	case SL_AGG_FIRST_VALUE:
	case SL_AGG_LAST_VALUE:
		a->str = a->b.in_type == SL_TYPE_STRING;
		if (!g->insert_only)
			a->mode = a->ordered ? GA_ORDER : GA_EXTREME;
		else
			a->mode = a->str ? GA_STR : GA_KERNEL;
		break;
	case SL_AGG_LISTAGG:
		/* every value is kept in map state, on insert-only input too: the result of a
		 * key needs them all, and so does a retraction */
		a->mode = GA_LIST;
		a->ordered = true;
		break;
	default:
		a->mode = GA_KERNEL;
		break;
	}
	if (a->mode == GA_DISTINCT || a->mode == GA_DISTINCT_FOLD || a->mode == GA_EXTREME ||
	    a->mode == GA_ORDER || a->mode == GA_LIST)
		a->ms = g->nstates++;
	size = a->mode == GA_KERNEL	     ? a->b.k->acc_size
	       : a->mode == GA_DISTINCT_FOLD ? a->ib.k->acc_size
					     : (uint32_t)sizeof(struct ga_cur);
	a->b.off = *off;
	*off += (size + 7u) & ~7u;
	return 0;
}

static struct sl_schema *out_schema(const struct sl_group_agg_cfg *cfg, const struct ga *g,
				    char *err, size_t errcap)
{
	struct sl_schema *s = sl_schema_create();
	const char *name = "";
	int rc = 0;

	if (!s)
		goto out_nomem;
	for (int i = 0; i < cfg->nkey && rc >= 0; i++) {
		int k = cfg->key_fields[i];

		name = sl_schema_name(cfg->in, k);
		rc = sl_schema_add_like(s, name, cfg->in, k);
	}
	for (int i = 0; i < g->naggs && rc >= 0; i++) {
		name = cfg->aggs[i].name;
		rc = sl_agg_schema_add(s, name, &g->agg[i].b);
	}
	if (rc == -ENOMEM)
		goto out_nomem;
	if (rc < 0) {
		snprintf(err, errcap, "group aggregate: duplicate output column '%s'", name);
		sl_schema_destroy(s);
		return NULL;
	}
	return s;

out_nomem:
	sl_schema_destroy(s);
	snprintf(err, errcap, "group aggregate: out of memory");
	return NULL;
}

/* Whether the GROUP BY splits into two stages (group_agg.h says when). */
static bool splits(const struct sl_group_agg_cfg *cfg, const struct ga *g)
{
	if (cfg->agg_phase == SL_AGG_PHASE_ONE || cfg->mini_batch_latency_ms <= 0 ||
	    !g->insert_only)
		return false;
	for (int i = 0; i < g->naggs; i++) {
		const struct ga_agg *a = &g->agg[i];
		bool fp = a->b.in_type == SL_TYPE_FLOAT || a->b.in_type == SL_TYPE_DOUBLE;

		if (a->mode != GA_KERNEL || !a->b.k->merge || a->b.k->destroy)
			return false;
		switch (a->b.kind) {
		case SL_AGG_COUNT_STAR:
		case SL_AGG_COUNT:
		case SL_AGG_MIN:
		case SL_AGG_MAX:
			break;
		case SL_AGG_SUM:
		case SL_AGG_AVG:
			if (fp && cfg->agg_phase != SL_AGG_PHASE_TWO)
				return false;
			break;
		case SL_AGG_M2: /* merges in floating point, whatever the input */
			if (cfg->agg_phase != SL_AGG_PHASE_TWO)
				return false;
			break;
		default:
			return false; /* FIRST/LAST_VALUE: arrival order does not survive a split */
		}
	}
	return true;
}

int sl_group_agg_build(const struct sl_group_agg_cfg *cfg, struct sl_process_fn *out,
		       struct sl_schema **out_schema_p, char *err, size_t errcap)
{
	uint32_t off = sizeof(struct ga_hdr);
	struct ga *g;
	int nin, rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	*out_schema_p = NULL;
	if (!cfg || !cfg->in || cfg->nkey < 0 || cfg->nkey > SL_MAX_KEY_FIELDS ||
	    (cfg->nkey && !cfg->key_fields) || cfg->naggs < 1 || !cfg->aggs ||
	    cfg->nkey + cfg->naggs > SL_SCHEMA_MAX_FIELDS || cfg->state_ttl_ms < 0) {
		snprintf(err, errcap,
			 "group aggregate: needs an input schema, at most %d keys, "
			 "1..%d aggregates in all and a TTL >= 0",
			 SL_MAX_KEY_FIELDS, SL_SCHEMA_MAX_FIELDS);
		return -EINVAL;
	}
	nin = sl_schema_nfields(cfg->in);
	for (int i = 0; i < cfg->nkey; i++) {
		if (cfg->key_fields[i] < 0 || cfg->key_fields[i] >= nin) {
			snprintf(err, errcap,
				 "group aggregate: key field %d out of range (%d fields)",
				 cfg->key_fields[i], nin);
			return -EINVAL;
		}
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		goto out_nomem;
	g->nkey = cfg->nkey;
	g->naggs = cfg->naggs;
	g->nout = cfg->nkey + cfg->naggs;
	g->ttl = cfg->state_ttl_ms;
	g->insert_only = cfg->insert_only;
	g->nstates = ST_MS;
	g->agg = calloc((size_t)g->naggs, sizeof(*g->agg));
	g->out_type = calloc((size_t)g->nout, sizeof(*g->out_type));
	g->desc = calloc((size_t)(ST_MS + g->naggs), sizeof(*g->desc));
	if (!g->agg || !g->out_type || !g->desc)
		goto out_free;
	for (int i = 0; i < g->naggs; i++) {
		rc = bind_one(g, i, &cfg->aggs[i], cfg->in, &off, err, errcap);
		if (rc)
			goto out_free;
	}
	g->size = off;
	g->desc[ST_ACC] = (struct sl_state_desc){ "group_agg.acc", SL_STATE_VALUE, off, g->ttl };
	g->desc[ST_CUR] = (struct sl_state_desc){ "group_agg.cur", SL_STATE_MAP, 8, g->ttl };
	for (int i = ST_MS; i < g->nstates; i++)
		g->desc[i] =
			(struct sl_state_desc){ "group_agg.multiset", SL_STATE_MAP, 8, g->ttl };
	*out_schema_p = out_schema(cfg, g, err, errcap);
	if (!*out_schema_p) {
		rc = strstr(err, "memory") ? -ENOMEM : -EINVAL;
		goto out_free;
	}
	for (int i = 0; i < g->nout; i++)
		g->out_type[i] = sl_schema_type(*out_schema_p, i);
	out->states = g->desc;
	out->nstates = g->nstates;
	out->process = ga_process;
	out->on_timer = g->ttl ? ga_on_timer : NULL;
	out->arg = g;
	g->split = splits(cfg, g);
	if (g->split) {
		g->local.block = g->size;
		g->local.cap = cfg->mini_batch_size ? cfg->mini_batch_size : SL_PARTIALS_CAP;
		g->local.delay_ms = cfg->mini_batch_latency_ms;
		g->local.naggs = g->naggs;
		for (int i = 0; i < g->naggs; i++)
			g->local.agg[i] = &g->agg[i].b;
		out->combiner = &sl_group_agg_combiner;
		out->combiner_cfg = &g->local;
		out->merge_partial = ga_merge_partial;
	}
	return 0;

out_free:
	ga_free(g);
	if (rc != -ENOMEM)
		return rc;
out_nomem:
	snprintf(err, errcap, "group aggregate: out of memory");
	return -ENOMEM;
}
