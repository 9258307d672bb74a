/*
 * group_agg_test.c - the updating GROUP BY (ops/group_agg.c) run as a keyed process function
 * by hand, without the runtime (def + ctx built here, rows keyed as the runtime keys them, a
 * capture on port 0):
 *
 *  - a Debezium-like changelog: an update moving a row between groups emits -U/+U on both,
 *    a delete of a group's last row emits -D, an unchanged result emits nothing;
 *  - an oracle: random +I/-D/-U/+U streams over three keys, every aggregate kind over an INT
 *    and a STRING column with NULLs (LISTAGG: a retraction takes the earliest occurrence); after every input the changelog, applied to a table,
 *    must hold exactly the row recomputed from scratch from the key's live rows;
 *  - state TTL: an idle key starts over (+I, no -D), updates are re-sent even when equal,
 *    the TTL timer frees an idle key's state;
 *  - insert-only mode (no multisets) and plan-time errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "op.h"
#include "group_agg.h"
#include "process.h"
#include "state.h"
#include "tests/test.h"

static sl_ts_t now_ms;

/* No runtime: stand-ins for the shard services (weak: the real ones win when linked). */
__attribute__((weak)) sl_ts_t sl_shard_now(const struct sl_shard *sh)
{
	return now_ms;
}

__attribute__((weak)) int sl_shard_index(const struct sl_shard *sh)
{
	return 0;
}

__attribute__((weak)) int sl_shard_count(const struct sl_shard *sh)
{
	return 1;
}

__attribute__((weak)) uint32_t sl_shard_max_par(const struct sl_shard *sh)
{
	return 128;
}

__attribute__((weak)) void sl_shard_fail(struct sl_shard *sh, int code, const char *fmt, ...)
{
	fprintf(stderr, "shard failure %d: %s\n", code, fmt);
	exit(T_EXIT_FAIL);
}

/* ---- harness: one group_agg instance and a capture of its output ---- */

struct cap {
	struct sl_ctx ctx; /* first: the capture's process hook gets this pointer */
	char text[1 << 15];
	size_t len;
	char rows[64][1024]; /* the last rows, one string each, for the oracle */
	int nrows;
};

static const struct sl_schema *cap_schema;

static void cap_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	struct cap *c = (struct cap *)ctx;
	char line[1024];
	int n = sl_row_format(row, cap_schema, line, sizeof line);

	T_ASSERT(n > 0 && (size_t)n < sizeof line && c->nrows < 64);
	strcpy(c->rows[c->nrows++], line);
	T_ASSERT(c->len + (size_t)n + 2 < sizeof c->text);
	c->len += (size_t)snprintf(c->text + c->len, sizeof c->text - c->len, "%s\n", line);
}

static const struct sl_op_ops cap_ops = { .name = "capture", .process = cap_process };

struct ga_h {
	struct sl_process_fn fn;
	struct sl_schema *out;
	struct sl_op_def def, cap_def;
	struct sl_ctx ctx;
	struct cap cap;
	uint8_t key[SL_KEY_MAX];
	_Alignas(8) uint8_t rowbuf[4096];
};

static void h_init(struct ga_h *h, const struct sl_group_agg_cfg *cfg,
		   const enum sl_type *key_types)
{
	char err[256];

	memset(h, 0, sizeof(*h));
	if (sl_group_agg_build(cfg, &h->fn, &h->out, err, sizeof err)) {
		fprintf(stderr, "build: %s\n", err);
		exit(T_EXIT_FAIL);
	}
	cap_schema = h->out;
	h->def.ops = &sl_process_ops;
	h->def.name = "group";
	h->def.cfg = &h->fn;
	h->def.in_schema = cfg->in;
	h->def.out_schema = h->out;
	h->def.nkey = cfg->nkey;
	for (int i = 0; i < cfg->nkey; i++) {
		h->def.key_fields[i] = cfg->key_fields[i];
		h->def.key_types[i] = key_types[i];
	}
	h->cap_def.ops = &cap_ops;
	h->cap.ctx.def = &h->cap_def;
	h->ctx.def = &h->def;
	h->ctx.watermark = SL_TS_MIN;
	h->ctx.port[0].n = 1;
	h->ctx.port[0].to[0] = &h->cap.ctx;
	h->ctx.nports = 1;
	T_ASSERT(sl_process_ops.open(&h->ctx) == 0);
}

static void h_fini(struct ga_h *h)
{
	sl_process_ops.close(&h->ctx);
	sl_group_agg_free(&h->fn);
	T_ASSERT(h->fn.arg == NULL);
	sl_schema_destroy(h->out);
}

static void h_feed(struct ga_h *h, const struct sl_row *row)
{
	h->ctx.klen = sl_key_encode(row, h->def.key_fields, h->def.key_types, h->def.nkey, h->key);
	h->ctx.key = h->key;
	h->ctx.hash = sl_hash_bytes(h->key, h->ctx.klen);
	sl_process_ops.process(&h->ctx, 0, row);
}

static void expect_at(struct cap *c, const char *want, int line)
{
	if (strcmp(c->text, want) != 0) {
		fprintf(stderr, "line %d: output differs\n--- want\n%s--- got\n%s---\n", line, want,
			c->text);
		exit(T_EXIT_FAIL);
	}
	c->len = 0;
	c->text[0] = 0;
	c->nrows = 0;
}
#define EXPECT(h, want) expect_at(&(h)->cap, (want), __LINE__)

/* ---- 1. a Debezium-like changelog: orders (id, status, total DECIMAL(10,2)) by status ---- */

static struct sl_schema *orders;

static const struct sl_row *order(struct ga_h *h, enum sl_row_kind kind, int id, const char *status,
				  int64_t cents)
{
	struct sl_row_builder b;

	sl_rowb_init(&b, h->rowbuf, sizeof h->rowbuf, 3);
	sl_rowb_set_i64(&b, 0, id);
	sl_rowb_set_str(&b, 1, status, (uint32_t)strlen(status));
	if (cents != INT64_MIN)
		sl_rowb_set_i64(&b, 2, cents);
	sl_rowb_set_kind(&b, kind);
	return sl_rowb_finish(&b);
}

static void debezium(void)
{
	static const int keys[] = { 1 };
	static const enum sl_type kt[] = { SL_TYPE_STRING };
	static const struct sl_agg_spec aggs[] = {
		{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "orders", .sql_types = true },
		{ .kind = SL_AGG_SUM, .field = 2, .name = "total", .sql_types = true },
		{ .kind = SL_AGG_MAX, .field = 2, .name = "biggest", .sql_types = true },
		{ .kind = SL_AGG_MIN, .field = 0, .name = "first_id", .sql_types = true },
	};
	struct sl_group_agg_cfg cfg = {
		.in = orders, .key_fields = keys, .nkey = 1, .aggs = aggs, .naggs = 4
	};
	struct ga_h *h = calloc(1, sizeof(*h));

	T_ASSERT(h);
	h_init(h, &cfg, kt);
	T_ASSERT_EQ_I64(sl_schema_nfields(h->out), 5);
	T_ASSERT(strcmp(sl_schema_name(h->out, 0), "status") == 0);
	T_ASSERT_EQ_I64(sl_schema_type(h->out, 2), SL_TYPE_DECIMAL);
	T_ASSERT_EQ_I64(sl_schema_precision(h->out, 2), 18);
	T_ASSERT_EQ_I64(sl_schema_scale(h->out, 2), 2);
	T_ASSERT_EQ_I64(sl_schema_precision(h->out, 3), 10);

	h_feed(h, order(h, SL_ROW_INSERT, 1, "paid", 1000));
	EXPECT(h, "+I[paid, 1, 10.00, 10.00, 1]\n");
	h_feed(h, order(h, SL_ROW_INSERT, 2, "paid", 550));
	EXPECT(h, "-U[paid, 1, 10.00, 10.00, 1]\n+U[paid, 2, 15.50, 10.00, 1]\n");
	h_feed(h, order(h, SL_ROW_INSERT, 3, "pending", 700));
	EXPECT(h, "+I[pending, 1, 7.00, 7.00, 3]\n");
	/* order 1 moves paid -> pending: a retraction on one group, an addition on the other */
	h_feed(h, order(h, SL_ROW_UPDATE_BEFORE, 1, "paid", 1000));
	EXPECT(h, "-U[paid, 2, 15.50, 10.00, 1]\n+U[paid, 1, 5.50, 5.50, 2]\n");
	h_feed(h, order(h, SL_ROW_UPDATE_AFTER, 1, "pending", 1000));
	EXPECT(h, "-U[pending, 1, 7.00, 7.00, 3]\n+U[pending, 2, 17.00, 10.00, 1]\n");
	/* a NULL total: COUNT(*) changes, SUM/MAX skip it */
	h_feed(h, order(h, SL_ROW_INSERT, 9, "pending", INT64_MIN));
	EXPECT(h, "-U[pending, 2, 17.00, 10.00, 1]\n+U[pending, 3, 17.00, 10.00, 1]\n");
	/* deleting paid's last order: -D of its last result, state gone */
	h_feed(h, order(h, SL_ROW_DELETE, 2, "paid", 550));
	EXPECT(h, "-D[paid, 1, 5.50, 5.50, 2]\n");
	/* a retraction for a key without state is ignored, as Flink does */
	h_feed(h, order(h, SL_ROW_DELETE, 2, "paid", 550));
	EXPECT(h, "");
	h_feed(h, order(h, SL_ROW_INSERT, 4, "paid", 100));
	EXPECT(h, "+I[paid, 1, 1.00, 1.00, 4]\n");
	h_fini(h);
	free(h);
}

/* An unchanged result emits nothing when state TTL is off (Flink's equaliser). */
static void unchanged(void)
{
	static const int keys[] = { 1 };
	static const enum sl_type kt[] = { SL_TYPE_STRING };
	static const struct sl_agg_spec aggs[] = {
		{ .kind = SL_AGG_MAX, .field = 2, .name = "biggest", .sql_types = true },
	};
	struct sl_group_agg_cfg cfg = {
		.in = orders, .key_fields = keys, .nkey = 1, .aggs = aggs, .naggs = 1
	};
	struct ga_h *h = calloc(1, sizeof(*h));

	T_ASSERT(h);
	h_init(h, &cfg, kt);
	h_feed(h, order(h, SL_ROW_INSERT, 1, "x", 500));
	h_feed(h, order(h, SL_ROW_INSERT, 2, "x", 300));
	h_feed(h, order(h, SL_ROW_DELETE, 2, "x", 300));
	EXPECT(h, "+I[x, 5.00]\n");
	h_feed(h, order(h, SL_ROW_DELETE, 1, "x", 500));
	EXPECT(h, "-D[x, 5.00]\n");
	h_fini(h);
	free(h);
}

/* ---- 2. the oracle ---------------------------------------------------------------------- */

#define NKEYS	     3
#define MAXLIVE	     64
#define NORACLE_AGGS 15

static struct sl_schema *rin; /* k STRING, x INT, s STRING */

struct orow {
	int k;
	int x; /* -1: NULL */
	int s; /* -1: NULL, else "a".."c" index */
};

/* Per key: live rows, and per FIRST/LAST column the (arrival, value) occurrences held, where
 * a retraction removes the earliest occurrence of its value (group_agg.h's rule). */
struct okey {
	struct orow live[MAXLIVE];
	int nlive;
	struct occ {
		uint64_t seq;
		int v;
	} occ[5][MAXLIVE]; /* FIRST(x), LAST(x), FIRST(s), LAST(s), LISTAGG(s) */
	int nocc[5];
	uint64_t seq;
	char view[1024]; /* the changelog applied: current row, "" when none */
};

static struct okey ok[NKEYS];
static const char *const svals[] = { "a", "bb", "" };

static const struct sl_agg_spec oaggs[NORACLE_AGGS] = {
	{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "n", .sql_types = true },
	{ .kind = SL_AGG_COUNT, .field = 1, .name = "cx", .sql_types = true },
	{ .kind = SL_AGG_SUM, .field = 1, .name = "sx", .sql_types = true },
	{ .kind = SL_AGG_AVG, .field = 1, .name = "ax", .sql_types = true },
	{ .kind = SL_AGG_MIN, .field = 1, .name = "mnx", .sql_types = true },
	{ .kind = SL_AGG_MAX, .field = 1, .name = "mxx", .sql_types = true },
	{ .kind = SL_AGG_MIN, .field = 2, .name = "mns", .sql_types = true },
	{ .kind = SL_AGG_MAX, .field = 2, .name = "mxs", .sql_types = true },
	{ .kind = SL_AGG_COUNT_DISTINCT, .field = 1, .name = "dx", .sql_types = true },
	{ .kind = SL_AGG_COUNT_DISTINCT, .field = 2, .name = "ds", .sql_types = true },
	{ .kind = SL_AGG_FIRST_VALUE, .field = 1, .name = "fx", .sql_types = true },
	{ .kind = SL_AGG_LAST_VALUE, .field = 1, .name = "lx", .sql_types = true },
	{ .kind = SL_AGG_FIRST_VALUE, .field = 2, .name = "fs", .sql_types = true },
	{ .kind = SL_AGG_LAST_VALUE, .field = 2, .name = "ls", .sql_types = true },
	{ .kind = SL_AGG_LISTAGG, .field = 2, .name = "la", .sql_types = true },
};

static const struct sl_row *orow_build(uint8_t *buf, const struct orow *r, enum sl_row_kind kind)
{
	struct sl_row_builder b;
	char k[8];

	sl_rowb_init(&b, buf, 512, 3);
	snprintf(k, sizeof k, "k%d", r->k);
	sl_rowb_set_str(&b, 0, k, (uint32_t)strlen(k));
	if (r->x >= 0)
		sl_rowb_set_i64(&b, 1, r->x - 2); /* -2..2: negative AVGs truncate toward 0 */
	if (r->s >= 0)
		sl_rowb_set_str(&b, 2, svals[r->s], (uint32_t)strlen(svals[r->s]));
	sl_rowb_set_kind(&b, kind);
	return sl_rowb_finish(&b);
}

static int str_order(int a, int b)
{
	return strcmp(svals[a], svals[b]);
}

/* The arrival number of list c's earliest occurrence (the list is not empty). */
static uint64_t first_seq(const struct okey *o, int c)
{
	uint64_t m = o->occ[c][0].seq;

	for (int i = 1; i < o->nocc[c]; i++)
		if (o->occ[c][i].seq < m)
			m = o->occ[c][i].seq;
	return m;
}

/* The row recomputed from key kk's live rows, formatted like the output (kind stripped). */
static void oracle_row(int kk, const struct sl_schema *out, char *dst, size_t cap)
{
	struct okey *o = &ok[kk];
	_Alignas(8) uint8_t buf[2048];
	struct sl_row_builder b;
	int64_t cx = 0, sx = 0;
	int mnx = -1, mxx = -1, mns = -1, mxs = -1, dx = 0, ds = 0;
	bool seenx[5] = { 0 }, seens[3] = { 0 };
	char k[8], line[1024], list[512];
	uint64_t first = o->nocc[4] ? first_seq(o, 4) : 0;
	size_t ll = 0;

	if (o->nlive == 0) {
		dst[0] = 0;
		return;
	}
	for (int i = 0; i < o->nlive; i++) {
		const struct orow *r = &o->live[i];

		if (r->x >= 0) {
			int v = r->x - 2;

			cx++;
			sx += v;
			if (mnx < 0 || v < mnx - 2)
				mnx = r->x;
			if (mxx < 0 || v > mxx - 2)
				mxx = r->x;
			dx += !seenx[r->x];
			seenx[r->x] = true;
		}
		if (r->s >= 0) {
			if (mns < 0 || str_order(r->s, mns) < 0)
				mns = r->s;
			if (mxs < 0 || str_order(r->s, mxs) > 0)
				mxs = r->s;
			ds += !seens[r->s];
			seens[r->s] = true;
		}
	}
	sl_rowb_init(&b, buf, sizeof buf, 1 + NORACLE_AGGS);
	snprintf(k, sizeof k, "k%d", kk);
	sl_rowb_set_str(&b, 0, k, (uint32_t)strlen(k));
	sl_rowb_set_i64(&b, 1, o->nlive);
	sl_rowb_set_i64(&b, 2, cx);
	if (cx) {
		sl_rowb_set_i64(&b, 3, sx);
		sl_rowb_set_i64(&b, 4, sx / cx);
		sl_rowb_set_i64(&b, 5, mnx - 2);
		sl_rowb_set_i64(&b, 6, mxx - 2);
	}
	if (mns >= 0) {
		sl_rowb_set_str(&b, 7, svals[mns], (uint32_t)strlen(svals[mns]));
		sl_rowb_set_str(&b, 8, svals[mxs], (uint32_t)strlen(svals[mxs]));
	}
	sl_rowb_set_i64(&b, 9, dx);
	sl_rowb_set_i64(&b, 10, ds);
	for (int c = 0; c < 4; c++) {
		int best = -1;

		for (int i = 0; i < o->nocc[c]; i++)
			if (best < 0 || ((c & 1) ? o->occ[c][i].seq > o->occ[c][best].seq
						 : o->occ[c][i].seq < o->occ[c][best].seq))
				best = i;
		if (best < 0)
			continue;
		if (c < 2)
			sl_rowb_set_i64(&b, 11 + c, o->occ[c][best].v - 2);
		else
			sl_rowb_set_str(&b, 11 + c, svals[o->occ[c][best].v],
					(uint32_t)strlen(svals[o->occ[c][best].v]));
	}
	/* LISTAGG(s): the live occurrences in arrival order, joined by ',' */
	for (uint64_t seq = 1; o->nocc[4] && seq <= o->seq; seq++)
		for (int i = 0; i < o->nocc[4]; i++)
			if (o->occ[4][i].seq == seq)
				ll += (size_t)snprintf(list + ll, sizeof list - ll, "%s%s",
						       seq != first ? "," : "",
						       svals[o->occ[4][i].v]);
	if (o->nocc[4])
		sl_rowb_set_str(&b, 15, list, (uint32_t)ll);
	T_ASSERT(sl_row_format(sl_rowb_finish(&b), out, line, sizeof line) > 0);
	snprintf(dst, cap, "%s", line + 2); /* without "+I" */
}

static void occ_add(struct okey *o, int c, int v)
{
	uint64_t seq = ++o->seq;

	if (v < 0)
		return;
	o->occ[c][o->nocc[c]++] = (struct occ){ seq, v };
}

static void occ_remove(struct okey *o, int c, int v)
{
	int best = -1;

	if (v < 0)
		return;
	for (int i = 0; i < o->nocc[c]; i++)
		if (o->occ[c][i].v == v && (best < 0 || o->occ[c][i].seq < o->occ[c][best].seq))
			best = i;
	T_ASSERT(best >= 0);
	o->occ[c][best] = o->occ[c][--o->nocc[c]];
}

/* Applies the captured changelog rows of one input to the materialised view. */
static void view_apply(struct cap *c)
{
	for (int i = 0; i < c->nrows; i++) {
		const char *row = c->rows[i];
		int kk = row[4] - '0'; /* "+I[k1, ..." */
		struct okey *o = &ok[kk];

		if (!strncmp(row, "+I", 2) || !strncmp(row, "+U", 2)) {
			if (o->view[0]) {
				fprintf(stderr, "%s on a key that has a row: %s\n", row, o->view);
				exit(T_EXIT_FAIL);
			}
			snprintf(o->view, sizeof o->view, "%s", row + 2);
		} else {
			if (strcmp(o->view, row + 2) != 0) {
				fprintf(stderr, "%s retracts '%s', the row is '%s'\n", row, row + 2,
					o->view);
				exit(T_EXIT_FAIL);
			}
			o->view[0] = 0;
		}
	}
	c->nrows = 0;
	c->len = 0;
	c->text[0] = 0;
}

static void oracle(unsigned seed, int steps)
{
	static const int keys[] = { 0 };
	static const enum sl_type kt[] = { SL_TYPE_STRING };
	struct sl_group_agg_cfg cfg = {
		.in = rin, .key_fields = keys, .nkey = 1, .aggs = oaggs, .naggs = NORACLE_AGGS
	};
	struct ga_h *h = calloc(1, sizeof(*h));
	_Alignas(8) uint8_t buf[512];
	char want[1024];

	T_ASSERT(h);
	memset(ok, 0, sizeof ok);
	srand(seed);
	h_init(h, &cfg, kt);
	for (int step = 0; step < steps; step++) {
		int kk = rand() % NKEYS;
		struct okey *o = &ok[kk];
		bool del = o->nlive > 0 && (o->nlive == MAXLIVE || rand() % 100 < 45);
		bool upd = rand() % 4 == 0; /* as -U/+U instead of -D/+I */
		struct orow r;

		if (del) {
			int i = rand() % o->nlive;

			r = o->live[i];
			o->live[i] = o->live[--o->nlive];
			occ_remove(o, 0, r.x);
			occ_remove(o, 1, r.x);
			occ_remove(o, 2, r.s);
			occ_remove(o, 3, r.s);
			occ_remove(o, 4, r.s);
			h_feed(h, orow_build(buf, &r, upd ? SL_ROW_UPDATE_BEFORE : SL_ROW_DELETE));
		} else {
			r = (struct orow){ kk, rand() % 6 - 1, rand() % 4 - 1 };
			o->live[o->nlive++] = r;
			/* one arrival number per row, as group_agg.c's per-key counter */
			occ_add(o, 0, r.x);
			o->seq--;
			occ_add(o, 1, r.x);
			o->seq--;
			occ_add(o, 2, r.s);
			o->seq--;
			occ_add(o, 3, r.s);
			o->seq--;
			occ_add(o, 4, r.s);
			h_feed(h, orow_build(buf, &r, upd ? SL_ROW_UPDATE_AFTER : SL_ROW_INSERT));
		}
		view_apply(&h->cap);
		oracle_row(kk, h->out, want, sizeof want);
		if (strcmp(want, o->view) != 0) {
			fprintf(stderr, "seed %u step %d key k%d: view '%s', recomputed '%s'\n",
				seed, step, kk, o->view, want);
			exit(T_EXIT_FAIL);
		}
	}
	h_fini(h);
	free(h);
}

/* ---- 3. state TTL ------------------------------------------------------------------------ */

static void ttl(void)
{
	static const int keys[] = { 1 };
	static const enum sl_type kt[] = { SL_TYPE_STRING };
	static const struct sl_agg_spec aggs[] = {
		{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "n", .sql_types = true },
		{ .kind = SL_AGG_MAX, .field = 2, .name = "biggest", .sql_types = true },
	};
	struct sl_group_agg_cfg cfg = { .in = orders,
					.key_fields = keys,
					.nkey = 1,
					.aggs = aggs + 1,
					.naggs = 1,
					.state_ttl_ms = 100 };
	struct ga_h *h = calloc(1, sizeof(*h));

	T_ASSERT(h);
	h_init(h, &cfg, kt);
	now_ms = 1000;
	h_feed(h, order(h, SL_ROW_INSERT, 1, "x", 500));
	EXPECT(h, "+I[x, 5.00]\n");
	/* equal result, but TTL is on: re-sent (Flink keeps downstream state alive) */
	now_ms = 1050;
	h_feed(h, order(h, SL_ROW_INSERT, 2, "x", 300));
	EXPECT(h, "-U[x, 5.00]\n+U[x, 5.00]\n");
	/* last write 1050: alive until 1149 */
	now_ms = 1149;
	h_feed(h, order(h, SL_ROW_INSERT, 3, "x", 200));
	EXPECT(h, "-U[x, 5.00]\n+U[x, 5.00]\n");
	/* idle for 100 ms: forgotten; the next row starts a new group, no -D */
	now_ms = 1249;
	h_feed(h, order(h, SL_ROW_INSERT, 4, "x", 100));
	EXPECT(h, "+I[x, 1.00]\n");
	/* a retraction of a forgotten row is ignored */
	now_ms = 2000;
	h_feed(h, order(h, SL_ROW_DELETE, 4, "x", 100));
	EXPECT(h, "");
	T_ASSERT(sl_kstate_entries(h->ctx.kstate) == 0);
	h_fini(h);
	free(h);

	/* the TTL timer frees an idle key's maps (MAX with retraction keeps a multiset) */
	cfg.aggs = aggs;
	cfg.naggs = 2;
	h = calloc(1, sizeof(*h));
	T_ASSERT(h);
	h_init(h, &cfg, kt);
	now_ms = 0;
	h_feed(h, order(h, SL_ROW_INSERT, 1, "x", 500));
	h_feed(h, order(h, SL_ROW_INSERT, 2, "y", 300));
	now_ms = 60;
	h_feed(h, order(h, SL_ROW_INSERT, 3, "y", 400));
	EXPECT(h, "+I[x, 1, 5.00]\n+I[y, 1, 3.00]\n-U[y, 1, 3.00]\n+U[y, 2, 4.00]\n");
	T_ASSERT_EQ_I64(sl_kstate_entries(h->ctx.kstate), 5); /* 2 blocks, 3 multiset values */
	now_ms = 100;
	sl_process_ops.on_proctime(&h->ctx, 100); /* x idle since 0: gone; y re-armed */
	T_ASSERT_EQ_I64(sl_kstate_entries(h->ctx.kstate), 3);
	now_ms = 159;
	sl_process_ops.on_proctime(&h->ctx, 159);
	T_ASSERT_EQ_I64(sl_kstate_entries(h->ctx.kstate), 3);
	now_ms = 160;
	sl_process_ops.on_proctime(&h->ctx, 160);
	T_ASSERT_EQ_I64(sl_kstate_entries(h->ctx.kstate), 0);
	EXPECT(h, "");
	h_fini(h);
	free(h);
}

/* ---- 4. insert-only input and plan-time errors ------------------------------------------ */

static void insert_only(void)
{
	static const int keys[] = { 0 };
	static const enum sl_type kt[] = { SL_TYPE_STRING };
	struct sl_group_agg_cfg cfg = { .in = rin,
					.key_fields = keys,
					.nkey = 1,
					.aggs = oaggs,
					.naggs = NORACLE_AGGS,
					.insert_only = true };
	struct ga_h *h = calloc(1, sizeof(*h));
	_Alignas(8) uint8_t buf[512];
	static const struct orow rows[] = {
		{ 0, 3, 1 }, { 0, -1, -1 }, { 0, 1, 0 }, { 0, 4, 2 }, { 0, 3, 1 },
	};
	char want[1024];

	T_ASSERT(h);
	memset(ok, 0, sizeof ok);
	h_init(h, &cfg, kt);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct okey *o = &ok[0];

		o->live[o->nlive++] = rows[i];
		for (int c = 0; c < 5; c++) {
			occ_add(o, c, c < 2 ? rows[i].x : rows[i].s);
			o->seq -= c < 4;
		}
		h_feed(h, orow_build(buf, &rows[i], SL_ROW_INSERT));
		view_apply(&h->cap);
		oracle_row(0, h->out, want, sizeof want);
		T_ASSERT(strcmp(want, ok[0].view) == 0);
	}
	/* COUNT(DISTINCT) keeps a map, LISTAGG every non-NULL value (4); MIN/MAX/FIRST/LAST of
	 * s keep one current value */
	T_ASSERT_EQ_I64(sl_kstate_entries(h->ctx.kstate), 1 + 4 + 3 + 3 + 4);
	h_fini(h);
	free(h);
}

static void errors(void)
{
	static const int keys[] = { 0 }, bad_keys[] = { 7 };
	struct sl_agg_spec aggs[2] = {
		{ .kind = SL_AGG_SUM, .field = 2, .name = "s" },
	};
	struct sl_group_agg_cfg cfg = {
		.in = rin, .key_fields = keys, .nkey = 1, .aggs = aggs, .naggs = 1
	};
	struct sl_process_fn fn;
	struct sl_schema *out = (struct sl_schema *)1;
	char err[256];

	T_ASSERT(sl_group_agg_build(&cfg, &fn, &out, err, sizeof err) == -EINVAL);
	T_ASSERT(out == NULL && fn.arg == NULL);
	T_ASSERT(strcmp(err, "group aggregate: SUM over STRING field 's' is not supported") == 0);
	aggs[0] = (struct sl_agg_spec){ .kind = SL_AGG_USER, .name = "u" };
	T_ASSERT(sl_group_agg_build(&cfg, &fn, &out, err, sizeof err) == -EINVAL);
	aggs[0] = (struct sl_agg_spec){ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "k" };
	T_ASSERT(sl_group_agg_build(&cfg, &fn, &out, err, sizeof err) == -EINVAL);
	T_ASSERT(strcmp(err, "group aggregate: duplicate output column 'k'") == 0);
	cfg.key_fields = bad_keys;
	T_ASSERT(sl_group_agg_build(&cfg, &fn, &out, err, sizeof err) == -EINVAL);
	T_ASSERT(strcmp(err, "group aggregate: key field 7 out of range (3 fields)") == 0);
	sl_group_agg_free(&fn);
}

int main(void)
{
	orders = sl_schema_create();
	rin = sl_schema_create();
	T_ASSERT(orders && rin);
	T_ASSERT(sl_schema_add(orders, "id", SL_TYPE_INT) == 0);
	T_ASSERT(sl_schema_add(orders, "status", SL_TYPE_STRING) == 1);
	T_ASSERT(sl_schema_add_decimal(orders, "total", 10, 2) == 2);
	T_ASSERT(sl_schema_add(rin, "k", SL_TYPE_STRING) == 0);
	T_ASSERT(sl_schema_add(rin, "x", SL_TYPE_INT) == 1);
	T_ASSERT(sl_schema_add(rin, "s", SL_TYPE_STRING) == 2);

	debezium();
	unchanged();
	for (unsigned seed = 1; seed <= 20; seed++)
		oracle(seed, 3000);
	ttl();
	insert_only();
	errors();
	sl_schema_destroy(rin);
	sl_schema_destroy(orders);
	return T_EXIT_PASS;
}
