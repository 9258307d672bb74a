/*
 * window_topn_test.c - the window Top-N of the Top-N process function (ops/topn.h,
 * cfg.window: Flink's WindowRankOperator, which also runs window deduplication) driven by
 * hand through the keyed process operator, without the runtime; capture operators record the
 * main output and the late side output.
 *
 * Checks: nothing comes out while a window is open; when the watermark reaches its end - 1
 * the rows ranked in range come out once, +I in rank order, with event time end - 1, and
 * the window's state is gone; a window's rows are kept at the top N only; a row whose
 * window fired is late (counted, sent whole to the late side output, never joining a
 * window); ties go in arrival order, or latest first for keep-last deduplication; the rank
 * range and the form without the rank; refusals of what the window form cannot take.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "op.h"
#include "process.h"
#include "state.h"
#include "tests/test.h"
#include "topn.h"

/* No runtime: stand-ins for the shard services (weak: the real ones win when linked). */
__attribute__((weak)) sl_ts_t sl_shard_now(const struct sl_shard *sh)
{
	return 0;
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

static int failures;

__attribute__((weak)) void sl_shard_fail(struct sl_shard *sh, int code, const char *fmt, ...)
{
	failures++;
}

/* Input: 0 k STRING, 1 v BIGINT (the order), 2 id STRING, 3 we TIMESTAMP (window_end); the
 * partition key is (k, we). Output: the four, then the rank when shown. */
enum { K, V, ID, WE, NIN };
static struct sl_schema *in_schema, *out_schema, *out_rank_schema;
static const struct sl_schema *cur_out;

#define MAXOUT 64
static char out[MAXOUT][256], late[MAXOUT][256];
static sl_ts_t out_ts[MAXOUT];
static int nout, nlate;

static void cap_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	T_ASSERT(nout < MAXOUT);
	out_ts[nout] = ts;
	sl_row_format(row, cur_out, out[nout++], sizeof(out[0]));
}

static void late_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	T_ASSERT(nlate < MAXOUT);
	sl_row_format(row, in_schema, late[nlate++], sizeof(late[0]));
}

static const struct sl_op_ops cap_ops = { .name = "capture", .process = cap_process };
static const struct sl_op_ops late_ops = { .name = "late", .process = late_process };

struct rig {
	struct sl_process_fn fn;
	struct sl_op_def def, cap_def, late_def;
	struct sl_ctx ctx, cap, late;
};

static struct sl_topn_cfg window_cfg(int64_t lo, int64_t hi, bool rank, bool desc)
{
	return (struct sl_topn_cfg){ .in_schema = in_schema,
				     .nout = NIN,
				     .fn = SL_TOPN_ROW_NUMBER,
				     .norder = 1,
				     .order = { V },
				     .desc = { desc },
				     .rank_lo = lo,
				     .rank_hi = hi,
				     .emit_rank = rank,
				     .input_insert_only = true,
				     .window = true,
				     .window_end = WE,
				     .late_tag = 1 };
}

static void rig_open(struct rig *g, const struct sl_topn_cfg *cfg)
{
	char err[200];

	memset(g, 0, sizeof(*g));
	cur_out = cfg->emit_rank ? out_rank_schema : out_schema;
	T_ASSERT(sl_topn_build(cfg, &g->fn, err, sizeof(err)) == 0);
	g->def = (struct sl_op_def){ .ops = &sl_process_ops,
				     .name = "window top-n",
				     .cfg = &g->fn,
				     .in_schema = in_schema,
				     .out_schema = cur_out,
				     .nkey = 2 };
	g->def.key_types[0] = SL_TYPE_STRING;
	g->def.key_fields[0] = K;
	g->def.key_types[1] = SL_TYPE_TIMESTAMP;
	g->def.key_fields[1] = WE;
	g->cap_def = (struct sl_op_def){ .ops = &cap_ops, .name = "cap", .in_schema = cur_out };
	g->late_def =
		(struct sl_op_def){ .ops = &late_ops, .name = "late", .in_schema = in_schema };
	g->cap = (struct sl_ctx){ .def = &g->cap_def, .watermark = SL_TS_MIN };
	g->late = (struct sl_ctx){ .def = &g->late_def, .watermark = SL_TS_MIN };
	g->ctx = (struct sl_ctx){ .def = &g->def, .watermark = SL_TS_MIN, .nports = 2 };
	g->ctx.port[0].n = 1;
	g->ctx.port[0].to[0] = &g->cap;
	g->ctx.port[1].n = 1;
	g->ctx.port[1].to[0] = &g->late;
	g->ctx.port_tag[1] = 1;
	T_ASSERT(g->def.ops->open(&g->ctx) == 0);
	nout = nlate = 0;
}

static void rig_close(struct rig *g)
{
	g->def.ops->close(&g->ctx);
	sl_topn_free(&g->fn);
}

static uint8_t rowbuf[4096] __attribute__((aligned(8)));
static uint8_t keybuf[SL_KEY_MAX];

/* A row of partition k in the window ending at `we`, sent with event time we - 1 as the
 * window TVF sends it. */
static void feed(struct rig *g, const char *k, int64_t v, const char *id, sl_ts_t we)
{
	struct sl_row_builder b;
	const struct sl_row *row;

	sl_rowb_init(&b, rowbuf, sizeof(rowbuf), NIN);
	sl_rowb_set_str(&b, K, k, (uint32_t)strlen(k));
	sl_rowb_set_i64(&b, V, v);
	sl_rowb_set_str(&b, ID, id, (uint32_t)strlen(id));
	sl_rowb_set_i64(&b, WE, we);
	sl_rowb_set_kind(&b, SL_ROW_INSERT);
	row = sl_rowb_finish(&b);
	g->ctx.klen = sl_key_encode(row, g->def.key_fields, g->def.key_types, 2, keybuf);
	g->ctx.key = keybuf;
	g->ctx.hash = sl_hash_bytes(keybuf, g->ctx.klen);
	g->def.ops->process(&g->ctx, we - 1, row);
}

static void expect_rows(char (*got)[256], int *ngot, const char *const *want, int n)
{
	for (int i = 0; i < n && i < *ngot; i++) {
		if (strcmp(got[i], want[i]) != 0) {
			fprintf(stderr, "row %d: got '%s', want '%s'\n", i, got[i], want[i]);
			exit(T_EXIT_FAIL);
		}
	}
	if (*ngot != n)
		for (int i = 0; i < *ngot; i++)
			fprintf(stderr, "  got %s\n", got[i]);
	T_ASSERT_EQ_I64(*ngot, n);
	*ngot = 0;
}

#define EXPECT(...)                                                                                \
	do {                                                                                       \
		static const char *const w_[] = { __VA_ARGS__ };                                   \
		expect_rows(out, &nout, w_, (int)(sizeof w_ / sizeof w_[0]));                      \
	} while (0)
#define EXPECT_NONE() expect_rows(out, &nout, NULL, 0)
#define EXPECT_LATE(...)                                                                           \
	do {                                                                                       \
		static const char *const w_[] = { __VA_ARGS__ };                                   \
		expect_rows(late, &nlate, w_, (int)(sizeof w_ / sizeof w_[0]));                    \
	} while (0)

static size_t entries(struct rig *g)
{
	return sl_kstate_entries(g->ctx.kstate);
}

/* Top 2 per (k, window) by v DESC: nothing until the watermark passes the window's end,
 * then each window's two best, in rank order, and its state gone. */
static void test_fire(void)
{
	struct sl_topn_cfg cfg = window_cfg(1, 2, true, true);
	struct rig g;

	rig_open(&g, &cfg);
	feed(&g, "a", 5, "x", 10);
	feed(&g, "a", 9, "y", 10);
	feed(&g, "b", 1, "z", 10);
	feed(&g, "a", 7, "w", 10);
	feed(&g, "a", 1, "v", 10); /* below the top 2 already: never kept */
	feed(&g, "a", 3, "u", 20);
	EXPECT_NONE();
	/* window a/10 keeps y and w (x fell below), plus its arrival counter; b/10 z and its
	 * counter; a/20 u and its counter */
	T_ASSERT_EQ_I64(entries(&g), 7);
	sl_op_watermark(&g.ctx, 8); /* not yet: the window's last millisecond is 9 */
	EXPECT_NONE();
	sl_op_watermark(&g.ctx, 9);
	EXPECT("+I[a, 9, y, 1970-01-01 00:00:00.010, 1]", "+I[a, 7, w, 1970-01-01 00:00:00.010, 2]",
	       "+I[b, 1, z, 1970-01-01 00:00:00.010, 1]");
	T_ASSERT_EQ_I64(out_ts[0], 9);
	T_ASSERT_EQ_I64(entries(&g), 2); /* only window a/20 is left */
	sl_op_watermark(&g.ctx, SL_TS_MAX);
	EXPECT("+I[a, 3, u, 1970-01-01 00:00:00.020, 1]");
	T_ASSERT_EQ_I64(out_ts[0], 19);
	T_ASSERT_EQ_I64(entries(&g), 0);
	T_ASSERT_EQ_I64(nlate, 0);
	rig_close(&g);
}

/* A row whose window has fired is late: counted, sent whole to the late side output, and
 * never starts the window again. A window still open takes its rows. */
static void test_late(void)
{
	struct sl_topn_cfg cfg = window_cfg(1, 1, false, true);
	struct rig g;

	rig_open(&g, &cfg);
	feed(&g, "a", 5, "x", 10);
	feed(&g, "a", 6, "y", 20);
	sl_op_watermark(&g.ctx, 12);
	EXPECT("+I[a, 5, x, 1970-01-01 00:00:00.010]");
	feed(&g, "a", 99, "late", 10); /* its window fired at 9 */
	feed(&g, "a", 1, "in time", 20);
	EXPECT_NONE();
	EXPECT_LATE("+I[a, 99, late, 1970-01-01 00:00:00.010]");
	T_ASSERT_EQ_I64(g.ctx.m.late, 1);
	T_ASSERT_EQ_I64(entries(&g), 2); /* window a/20: y and its counter */
	sl_op_watermark(&g.ctx, 19);
	EXPECT("+I[a, 6, y, 1970-01-01 00:00:00.020]");
	T_ASSERT_EQ_I64(entries(&g), 0);
	/* the watermark at the window's last millisecond has fired it: late (Flink's
	 * isWindowFired: watermark >= end - 1) */
	feed(&g, "b", 1, "at the edge", 20);
	EXPECT_LATE("+I[b, 1, at the edge, 1970-01-01 00:00:00.020]");
	T_ASSERT_EQ_I64(g.ctx.m.late, 2);
	rig_close(&g);

	/* without a late tag a late row is still counted */
	cfg.late_tag = 0;
	rig_open(&g, &cfg);
	sl_op_watermark(&g.ctx, 100);
	feed(&g, "a", 5, "x", 10);
	T_ASSERT_EQ_I64(g.ctx.m.late, 1);
	T_ASSERT_EQ_I64(nlate, 0);
	T_ASSERT_EQ_I64(entries(&g), 0);
	rig_close(&g);
}

/* Ties: in arrival order (ROW_NUMBER, keep-first deduplication), or the latest first
 * (keep-last deduplication, ORDER BY rowtime DESC: the last row to arrive wins). */
static void test_ties(void)
{
	struct sl_topn_cfg cfg = window_cfg(1, 1, false, true);
	struct rig g;

	rig_open(&g, &cfg);
	feed(&g, "a", 5, "first", 10);
	feed(&g, "a", 5, "second", 10);
	feed(&g, "a", 4, "lower", 10);
	sl_op_watermark(&g.ctx, SL_TS_MAX);
	EXPECT("+I[a, 5, first, 1970-01-01 00:00:00.010]");
	rig_close(&g);

	cfg.ties_last = true;
	rig_open(&g, &cfg);
	feed(&g, "a", 5, "first", 10);
	feed(&g, "a", 5, "second", 10);
	feed(&g, "a", 4, "lower", 10);
	feed(&g, "a", 5, "third", 10);
	T_ASSERT_EQ_I64(entries(&g), 2); /* only the current last row and the counter */
	sl_op_watermark(&g.ctx, SL_TS_MAX);
	EXPECT("+I[a, 5, third, 1970-01-01 00:00:00.010]");
	rig_close(&g);
}

/* A rank range not starting at 1 keeps the rows above it (they decide the ranks) and emits
 * only the range; a row present twice takes two numbers. */
static void test_range(void)
{
	struct sl_topn_cfg cfg = window_cfg(2, 3, true, false);
	struct rig g;

	rig_open(&g, &cfg);
	feed(&g, "a", 4, "d", 10);
	feed(&g, "a", 1, "a", 10);
	feed(&g, "a", 3, "c", 10);
	feed(&g, "a", 3, "c", 10);
	feed(&g, "a", 2, "b", 10);
	sl_op_watermark(&g.ctx, SL_TS_MAX);
	EXPECT("+I[a, 2, b, 1970-01-01 00:00:00.010, 2]",
	       "+I[a, 3, c, 1970-01-01 00:00:00.010, 3]");
	rig_close(&g);
}

static void test_refusals(void)
{
	struct sl_topn_cfg cfg = window_cfg(1, 1, false, false);
	struct sl_process_fn fn;
	char err[200];

	cfg.window_end = K; /* a STRING */
	T_ASSERT(sl_topn_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "window top-n"));
	cfg.window_end = WE;
	cfg.input_insert_only = false;
	T_ASSERT(sl_topn_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	cfg.input_insert_only = true;
	cfg.ttl_ms = 1000;
	T_ASSERT(sl_topn_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	cfg.ttl_ms = 0;
	T_ASSERT(sl_topn_build(&cfg, &fn, err, sizeof(err)) == 0);
	sl_topn_free(&fn);
}

static void schema_fields(struct sl_schema *s, bool rank)
{
	sl_schema_add(s, "k", SL_TYPE_STRING);
	sl_schema_add(s, "v", SL_TYPE_BIGINT);
	sl_schema_add(s, "id", SL_TYPE_STRING);
	sl_schema_add(s, "we", SL_TYPE_TIMESTAMP);
	if (rank)
		sl_schema_add(s, "rn", SL_TYPE_BIGINT);
}

int main(void)
{
	in_schema = sl_schema_create();
	out_schema = sl_schema_create();
	out_rank_schema = sl_schema_create();
	T_ASSERT(in_schema && out_schema && out_rank_schema);
	schema_fields(in_schema, false);
	schema_fields(out_schema, false);
	schema_fields(out_rank_schema, true);
	test_fire();
	test_late();
	test_ties();
	test_range();
	test_refusals();
	T_ASSERT_EQ_I64(failures, 0);
	sl_schema_destroy(in_schema);
	sl_schema_destroy(out_schema);
	sl_schema_destroy(out_rank_schema);
	return T_EXIT_PASS;
}
