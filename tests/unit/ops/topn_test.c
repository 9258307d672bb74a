/*
 * topn_test.c - the Top-N process function (ops/topn.h) driven by hand through the keyed
 * process operator, without the runtime; a capture operator records the changelog in
 * Flink's notation.
 *
 * Checks: ROW_NUMBER by position (-U/+U, +I, -D) as Flink's AppendOnlyTopNFunction emits
 * it, ties in arrival order, the "no rank number" form, state kept at the top N for an
 * insert-only input, a retraction letting a row from below move up (RetractableTopN),
 * RANK and DENSE_RANK ties, a rank range not starting at 1, and build refusals.
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
static sl_ts_t now_ms;

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
}

/* Input: 0 k STRING (the partition), 1 v BIGINT (the order). Output: k, v[, rank]. */
static struct sl_schema *in_schema, *out_schema, *out_rank_schema;
static const struct sl_schema *cur_out;

#define MAXOUT 64
static char out[MAXOUT][256];
static int nout;

static void cap_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	T_ASSERT(nout < MAXOUT);
	sl_row_format(row, cur_out, out[nout++], sizeof(out[0]));
}

static const struct sl_op_ops cap_ops = { .name = "capture", .process = cap_process };

struct rig {
	struct sl_process_fn fn;
	struct sl_op_def def, cap_def;
	struct sl_ctx ctx, cap;
};

static void rig_open(struct rig *g, enum sl_topn_fn fn, int64_t lo, int64_t hi, bool rank,
		     bool insert_only)
{
	struct sl_topn_cfg cfg = { .in_schema = in_schema, .nout = 2, .fn = fn, .norder = 1,
				   .order = { 1 }, .desc = { true }, .rank_lo = lo,
				   .rank_hi = hi, .emit_rank = rank,
				   .input_insert_only = insert_only };
	char err[160];

	memset(g, 0, sizeof(*g));
	cur_out = rank ? out_rank_schema : out_schema;
	T_ASSERT(sl_topn_build(&cfg, &g->fn, err, sizeof(err)) == 0);
	g->def = (struct sl_op_def){ .ops = &sl_process_ops, .name = "topn", .cfg = &g->fn,
				     .in_schema = in_schema, .out_schema = cur_out, .nkey = 1 };
	g->def.key_types[0] = SL_TYPE_STRING;
	g->def.key_fields[0] = 0;
	g->cap_def = (struct sl_op_def){ .ops = &cap_ops, .name = "cap", .in_schema = cur_out };
	g->cap = (struct sl_ctx){ .def = &g->cap_def, .watermark = SL_TS_MIN };
	g->ctx = (struct sl_ctx){ .def = &g->def, .watermark = SL_TS_MIN, .nports = 1 };
	g->ctx.port[0].n = 1;
	g->ctx.port[0].to[0] = &g->cap;
	T_ASSERT(g->def.ops->open(&g->ctx) == 0);
	nout = 0;
}

static void rig_close(struct rig *g)
{
	g->def.ops->close(&g->ctx);
	sl_topn_free(&g->fn);
}

static uint8_t rowbuf[4096] __attribute__((aligned(8)));
static uint8_t keybuf[SL_KEY_MAX];

static void feed(struct rig *g, enum sl_row_kind kind, const char *k, int64_t v)
{
	struct sl_row_builder b;
	const struct sl_row *row;

	sl_rowb_init(&b, rowbuf, sizeof(rowbuf), 2);
	sl_rowb_set_str(&b, 0, k, (uint32_t)strlen(k));
	sl_rowb_set_i64(&b, 1, v);
	sl_rowb_set_kind(&b, kind);
	row = sl_rowb_finish(&b);
	g->ctx.klen = sl_key_encode(row, g->def.key_fields, g->def.key_types, 1, keybuf);
	g->ctx.key = keybuf;
	g->ctx.hash = sl_hash_bytes(keybuf, g->ctx.klen);
	g->def.ops->process(&g->ctx, 0, row);
}

static void expect_rows(const char *const *want, int n)
{
	for (int i = 0; i < n && i < nout; i++) {
		if (strcmp(out[i], want[i]) != 0) {
			fprintf(stderr, "row %d: got '%s', want '%s'\n", i, out[i], want[i]);
			exit(T_EXIT_FAIL);
		}
	}
	if (nout != n)
		for (int i = 0; i < nout; i++)
			fprintf(stderr, "  got %s\n", out[i]);
	T_ASSERT_EQ_I64(nout, n);
	nout = 0;
}

#define EXPECT(...)                                                      \
	do {                                                             \
		static const char *const w_[] = { __VA_ARGS__ };         \
		expect_rows(w_, (int)(sizeof w_ / sizeof w_[0]));        \
	} while (0)
#define EXPECT_NONE() expect_rows(NULL, 0)

static size_t entries(struct rig *g)
{
	return sl_kstate_entries(g->ctx.kstate);
}

/* Top 2 by v DESC of an insert-only input, with the row number: what Flink emits. */
static void test_append(void)
{
	struct rig g;

	rig_open(&g, SL_TOPN_ROW_NUMBER, 1, 2, true, true);
	feed(&g, SL_ROW_INSERT, "a", 5);
	EXPECT("+I[a, 5, 1]");
	feed(&g, SL_ROW_INSERT, "a", 9);
	EXPECT("-U[a, 5, 1]", "+U[a, 9, 1]", "+I[a, 5, 2]");
	feed(&g, SL_ROW_INSERT, "a", 7);
	EXPECT("-U[a, 5, 2]", "+U[a, 7, 2]");
	feed(&g, SL_ROW_INSERT, "a", 1); /* below the top: nothing */
	EXPECT_NONE();
	feed(&g, SL_ROW_INSERT, "a", 9); /* ties with the first 9: goes after it */
	EXPECT("-U[a, 7, 2]", "+U[a, 9, 2]");
	/* an insert-only input keeps the top 2 only: 9 twice is one row counted twice, plus
	 * the seq value */
	T_ASSERT_EQ_I64(entries(&g), 2);
	rig_close(&g);

	rig_open(&g, SL_TOPN_ROW_NUMBER, 1, 2, false, true);
	feed(&g, SL_ROW_INSERT, "a", 5);
	feed(&g, SL_ROW_INSERT, "a", 9);
	feed(&g, SL_ROW_INSERT, "a", 7);
	EXPECT("+I[a, 5]", "+I[a, 9]", "-D[a, 5]", "+I[a, 7]");
	rig_close(&g);
}

/* An updating input: every row is kept, so a retraction lets the next one up. */
static void test_retract(void)
{
	struct rig g;

	rig_open(&g, SL_TOPN_ROW_NUMBER, 1, 2, true, false);
	feed(&g, SL_ROW_INSERT, "a", 3);
	feed(&g, SL_ROW_INSERT, "a", 2);
	feed(&g, SL_ROW_INSERT, "a", 1);
	EXPECT("+I[a, 3, 1]", "+I[a, 2, 2]");
	T_ASSERT_EQ_I64(entries(&g), 4);
	feed(&g, SL_ROW_DELETE, "a", 3);
	EXPECT("-U[a, 3, 1]", "+U[a, 2, 1]", "-U[a, 2, 2]", "+U[a, 1, 2]");
	feed(&g, SL_ROW_UPDATE_BEFORE, "a", 1);
	EXPECT("-D[a, 1, 2]");
	feed(&g, SL_ROW_UPDATE_AFTER, "a", 8);
	EXPECT("-U[a, 2, 1]", "+U[a, 8, 1]", "+I[a, 2, 2]");
	feed(&g, SL_ROW_DELETE, "a", 42); /* not there: nothing */
	EXPECT_NONE();
	feed(&g, SL_ROW_DELETE, "a", 8);
	feed(&g, SL_ROW_DELETE, "a", 2);
	EXPECT("-U[a, 8, 1]", "+U[a, 2, 1]", "-D[a, 2, 2]", "-D[a, 2, 1]");
	rig_close(&g);
}

/* RANK and DENSE_RANK: ties share a rank; a range not starting at 1. */
static void test_rank(void)
{
	struct rig g;

	rig_open(&g, SL_TOPN_RANK, 1, 2, true, true);
	feed(&g, SL_ROW_INSERT, "a", 9);
	feed(&g, SL_ROW_INSERT, "a", 9);
	feed(&g, SL_ROW_INSERT, "a", 5); /* rank 3: out */
	EXPECT("+I[a, 9, 1]", "+I[a, 9, 1]");
	rig_close(&g);

	rig_open(&g, SL_TOPN_DENSE_RANK, 2, 2, true, true);
	feed(&g, SL_ROW_INSERT, "a", 9);
	feed(&g, SL_ROW_INSERT, "a", 9);
	EXPECT_NONE();
	feed(&g, SL_ROW_INSERT, "a", 5);
	EXPECT("+I[a, 5, 2]");
	feed(&g, SL_ROW_INSERT, "a", 7);
	EXPECT("-U[a, 5, 2]", "+U[a, 7, 2]");
	rig_close(&g);
}

static void test_refusals(void)
{
	struct sl_topn_cfg cfg = { .in_schema = in_schema, .nout = 2, .norder = 1,
				   .order = { 1 }, .rank_lo = 3, .rank_hi = 2 };
	struct sl_process_fn fn;
	char err[160];

	T_ASSERT(sl_topn_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "rank range [3, 2] is empty"));
	cfg.rank_lo = 1;
	cfg.order[0] = 5;
	T_ASSERT(sl_topn_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "ORDER BY field 5"));
}

int main(void)
{
	in_schema = sl_schema_create();
	out_schema = sl_schema_create();
	out_rank_schema = sl_schema_create();
	T_ASSERT(in_schema && out_schema && out_rank_schema);
	sl_schema_add(in_schema, "k", SL_TYPE_STRING);
	sl_schema_add(in_schema, "v", SL_TYPE_BIGINT);
	sl_schema_add(out_schema, "k", SL_TYPE_STRING);
	sl_schema_add(out_schema, "v", SL_TYPE_BIGINT);
	sl_schema_add(out_rank_schema, "k", SL_TYPE_STRING);
	sl_schema_add(out_rank_schema, "v", SL_TYPE_BIGINT);
	sl_schema_add(out_rank_schema, "rn", SL_TYPE_BIGINT);
	test_append();
	test_retract();
	test_rank();
	test_refusals();
	sl_schema_destroy(in_schema);
	sl_schema_destroy(out_schema);
	sl_schema_destroy(out_rank_schema);
	return T_EXIT_PASS;
}
