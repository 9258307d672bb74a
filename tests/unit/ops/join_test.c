/*
 * join_test.c - the regular join process function (ops/join.h) driven by hand through the
 * keyed process operator, without the runtime: both sides fed into one instance as the keyed
 * union delivers them (field 0 = side, keyed by the trailing key column); a capture operator
 * records the changelog in Flink's notation.
 *
 * Checks, against what Flink's StreamingJoinOperator emits: inner joins forwarding the
 * input's kind (+I/+U, -U/-D), left, right and full outer joins (NULL-padded rows, their
 * -D when a first match arrives and their +I when the last match goes), duplicate rows (one
 * result per copy), NULL keys matching nothing, the extra ON condition, state TTL, rows
 * larger than one state chunk, state emptied by retractions, the interval join (padding
 * at expiry only, state cleaned by the watermark), and build refusals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "join.h"
#include "op.h"
#include "process.h"
#include "state.h"
#include "tests/test.h"

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

/* Union schema: 0 __side | 1 lk, 2 lv | 3 rk, 4 rv | 5 __key0. Output: lk, lv, rk, rv. */
enum { NLEFT = 2, NRIGHT = 2, KEY = 5 };

static struct sl_schema *in_schema, *out_schema;

/* ---- capture sink: each row as Flink prints it ---- */

#define MAXOUT 64
static char out[MAXOUT][4096];
static int nout;

static void cap_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	T_ASSERT(nout < MAXOUT);
	sl_row_format(row, out_schema, out[nout++], sizeof(out[0]));
}

static const struct sl_op_ops cap_ops = { .name = "capture", .process = cap_process };

/* ---- driver: one join instance ---- */

struct rig {
	struct sl_process_fn fn;
	struct sl_op_def def, cap_def;
	struct sl_ctx ctx, cap;
};

static bool lv_below_rv(struct sl_ctx *ctx, const struct sl_row *joined, void *arg)
{
	return !sl_row_is_null(joined, 1) && !sl_row_is_null(joined, 3) &&
	       sl_row_i64(joined, 1) < sl_row_i64(joined, 3);
}

static void rig_open_cfg(struct rig *g, bool left_outer, bool right_outer, sl_ts_t ttl,
			 bool (*cond)(struct sl_ctx *, const struct sl_row *, void *))
{
	struct sl_join_cfg cfg = {
		.in_schema = in_schema, .nleft = NLEFT, .nright = NRIGHT,
		.left_outer = left_outer, .right_outer = right_outer,
		.nkey = 1, .key = { KEY }, .ttl_ms = ttl, .cond = cond,
	};
	char err[160];

	memset(g, 0, sizeof(*g));
	T_ASSERT(sl_join_build(&cfg, &g->fn, err, sizeof(err)) == 0);
	g->def = (struct sl_op_def){ .ops = &sl_process_ops, .name = "join", .cfg = &g->fn,
				     .in_schema = in_schema, .out_schema = out_schema,
				     .nkey = 1 };
	g->def.key_types[0] = SL_TYPE_STRING;
	g->def.key_fields[0] = KEY;
	g->cap_def = (struct sl_op_def){ .ops = &cap_ops, .name = "cap", .in_schema = out_schema };
	g->cap = (struct sl_ctx){ .def = &g->cap_def, .watermark = SL_TS_MIN };
	g->ctx = (struct sl_ctx){ .def = &g->def, .watermark = SL_TS_MIN, .nports = 1 };
	g->ctx.port[0].n = 1;
	g->ctx.port[0].to[0] = &g->cap;
	T_ASSERT(g->def.ops->open(&g->ctx) == 0);
	nout = 0;
}

static void rig_open(struct rig *g, bool left_outer, bool right_outer)
{
	rig_open_cfg(g, left_outer, right_outer, 0, NULL);
}

static void rig_close(struct rig *g)
{
	g->def.ops->close(&g->ctx);
	sl_join_free(&g->fn);
}

static size_t entries(struct rig *g)
{
	return sl_kstate_entries(g->ctx.kstate);
}

static uint8_t rowbuf[16384] __attribute__((aligned(8)));
static uint8_t keybuf[SL_KEY_MAX];

/* A row of side `side` (0 left, 1 right) with key k (NULL: a NULL key) and value v. */
static void feed(struct rig *g, enum sl_row_kind kind, int side, const char *k, int64_t v)
{
	struct sl_row_builder b;
	const struct sl_row *row;
	int kf = side ? 3 : 1;

	sl_rowb_init(&b, rowbuf, sizeof(rowbuf), 1 + NLEFT + NRIGHT + 1);
	sl_rowb_set_i64(&b, 0, side);
	if (k) {
		sl_rowb_set_str(&b, kf, k, (uint32_t)strlen(k));
		sl_rowb_set_str(&b, KEY, k, (uint32_t)strlen(k));
	}
	sl_rowb_set_i64(&b, kf + 1, v);
	sl_rowb_set_kind(&b, kind);
	row = sl_rowb_finish(&b);
	T_ASSERT(row);
	g->ctx.klen = sl_key_encode(row, g->def.key_fields, g->def.key_types, 1, keybuf);
	g->ctx.key = keybuf;
	g->ctx.hash = sl_hash_bytes(keybuf, g->ctx.klen);
	g->def.ops->process(&g->ctx, 1000, row);
}

#define L(g, kind, k, v) feed(g, kind, 0, k, v)
#define R(g, kind, k, v) feed(g, kind, 1, k, v)

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The rows captured since the last call, in order (sorted: as a multiset, for steps whose
 * matches come out in hash order). */
static void expect_rows(bool sorted, const char *const *want, int n)
{
	if (sorted)
		qsort(out, (size_t)nout, sizeof(out[0]), cmp_str);
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

#define EXPECT(...)                                                                \
	do {                                                                       \
		static const char *const w_[] = { __VA_ARGS__ };                   \
		expect_rows(false, w_, (int)(sizeof w_ / sizeof w_[0]));           \
	} while (0)
#define EXPECT_SORTED(...)                                                         \
	do {                                                                       \
		static const char *const w_[] = { __VA_ARGS__ };                   \
		expect_rows(true, w_, (int)(sizeof w_ / sizeof w_[0]));            \
	} while (0)
#define EXPECT_NONE() expect_rows(false, NULL, 0)

/* INNER: results carry the input's kind; duplicates give one result per copy. */
static void test_inner(void)
{
	struct rig g;

	rig_open(&g, false, false);
	L(&g, SL_ROW_INSERT, "a", 1);
	EXPECT_NONE();
	R(&g, SL_ROW_INSERT, "a", 10);
	EXPECT("+I[a, 1, a, 10]");
	R(&g, SL_ROW_INSERT, "a", 20);
	EXPECT("+I[a, 1, a, 20]");
	L(&g, SL_ROW_INSERT, "b", 2);
	EXPECT_NONE();
	L(&g, SL_ROW_INSERT, "a", 1); /* a second copy */
	EXPECT_SORTED("+I[a, 1, a, 10]", "+I[a, 1, a, 20]");
	R(&g, SL_ROW_INSERT, "a", 30);
	EXPECT("+I[a, 1, a, 30]", "+I[a, 1, a, 30]");
	/* an update of the left row: -U and +U pass through as they came */
	L(&g, SL_ROW_UPDATE_BEFORE, "a", 1);
	EXPECT_SORTED("-U[a, 1, a, 10]", "-U[a, 1, a, 20]", "-U[a, 1, a, 30]");
	L(&g, SL_ROW_UPDATE_AFTER, "a", 5);
	EXPECT_SORTED("+U[a, 5, a, 10]", "+U[a, 5, a, 20]", "+U[a, 5, a, 30]");
	R(&g, SL_ROW_DELETE, "a", 10);
	EXPECT_SORTED("-D[a, 1, a, 10]", "-D[a, 5, a, 10]");
	/* a retraction of a row that is not there still retracts its results (Flink) */
	R(&g, SL_ROW_DELETE, "a", 99);
	EXPECT_SORTED("-D[a, 1, a, 99]", "-D[a, 5, a, 99]");
	L(&g, SL_ROW_DELETE, "a", 1);
	L(&g, SL_ROW_DELETE, "a", 5);
	L(&g, SL_ROW_DELETE, "b", 2);
	R(&g, SL_ROW_DELETE, "a", 20);
	R(&g, SL_ROW_DELETE, "a", 30);
	EXPECT_SORTED("-D[a, 1, a, 20]", "-D[a, 1, a, 30]", "-D[a, 5, a, 20]",
		      "-D[a, 5, a, 30]");
	T_ASSERT_EQ_I64(entries(&g), 0);
	rig_close(&g);
}

/* LEFT: the NULL-padded row comes and goes with the right side's matches. */
static void test_left(void)
{
	struct rig g;

	rig_open(&g, true, false);
	L(&g, SL_ROW_INSERT, "a", 1);
	EXPECT("+I[a, 1, NULL, NULL]");
	R(&g, SL_ROW_INSERT, "a", 10);
	EXPECT("-D[a, 1, NULL, NULL]", "+I[a, 1, a, 10]");
	R(&g, SL_ROW_INSERT, "a", 20);
	EXPECT("+I[a, 1, a, 20]");
	R(&g, SL_ROW_INSERT, "z", 7); /* right without a left: an inner side, nothing */
	EXPECT_NONE();
	R(&g, SL_ROW_DELETE, "a", 10);
	EXPECT("-D[a, 1, a, 10]");
	/* an update of the right row: the outer join says it with -D and +I */
	R(&g, SL_ROW_UPDATE_BEFORE, "a", 20);
	EXPECT("-U[a, 1, a, 20]", "+I[a, 1, NULL, NULL]");
	R(&g, SL_ROW_UPDATE_AFTER, "a", 21);
	EXPECT("-D[a, 1, NULL, NULL]", "+I[a, 1, a, 21]");
	/* a left row that matches: +I with the match, no padded row */
	L(&g, SL_ROW_INSERT, "a", 2);
	EXPECT("+I[a, 2, a, 21]");
	/* a left update: -D / +I (the input side is outer) */
	L(&g, SL_ROW_UPDATE_BEFORE, "a", 2);
	EXPECT("-D[a, 2, a, 21]");
	R(&g, SL_ROW_DELETE, "a", 21);
	EXPECT("-D[a, 1, a, 21]", "+I[a, 1, NULL, NULL]");
	L(&g, SL_ROW_DELETE, "a", 1);
	EXPECT("-D[a, 1, NULL, NULL]");
	R(&g, SL_ROW_DELETE, "z", 7);
	EXPECT_NONE();
	T_ASSERT_EQ_I64(entries(&g), 0);
	rig_close(&g);
}

/* RIGHT with duplicates on the left, FULL both ways. */
static void test_right_full(void)
{
	struct rig g;

	rig_open(&g, false, true);
	L(&g, SL_ROW_INSERT, "a", 1);
	L(&g, SL_ROW_INSERT, "a", 1);
	EXPECT_NONE();
	R(&g, SL_ROW_INSERT, "a", 10);
	EXPECT("+I[a, 1, a, 10]", "+I[a, 1, a, 10]");
	L(&g, SL_ROW_DELETE, "a", 1);
	EXPECT("-D[a, 1, a, 10]");
	L(&g, SL_ROW_DELETE, "a", 1); /* the last copy: the right row stands alone again */
	EXPECT("-D[a, 1, a, 10]", "+I[NULL, NULL, a, 10]");
	rig_close(&g);

	rig_open(&g, true, true);
	R(&g, SL_ROW_INSERT, "x", 7);
	R(&g, SL_ROW_INSERT, "x", 7);
	EXPECT("+I[NULL, NULL, x, 7]", "+I[NULL, NULL, x, 7]");
	L(&g, SL_ROW_INSERT, "x", 1); /* both padded copies go */
	EXPECT("-D[NULL, NULL, x, 7]", "+I[x, 1, x, 7]", "-D[NULL, NULL, x, 7]",
	       "+I[x, 1, x, 7]");
	L(&g, SL_ROW_INSERT, "y", 2);
	EXPECT("+I[y, 2, NULL, NULL]");
	L(&g, SL_ROW_DELETE, "x", 1);
	EXPECT("-D[x, 1, x, 7]", "+I[NULL, NULL, x, 7]", "-D[x, 1, x, 7]",
	       "+I[NULL, NULL, x, 7]");
	R(&g, SL_ROW_DELETE, "x", 7);
	EXPECT("-D[NULL, NULL, x, 7]");
	R(&g, SL_ROW_DELETE, "x", 7);
	EXPECT("-D[NULL, NULL, x, 7]");
	L(&g, SL_ROW_DELETE, "y", 2);
	EXPECT("-D[y, 2, NULL, NULL]");
	T_ASSERT_EQ_I64(entries(&g), 0);
	rig_close(&g);
}

/* A NULL key matches nothing, not even another NULL key; the outer side still pads it. */
static void test_null_key(void)
{
	struct rig g;

	rig_open(&g, true, true);
	L(&g, SL_ROW_INSERT, NULL, 1);
	EXPECT("+I[NULL, 1, NULL, NULL]");
	R(&g, SL_ROW_INSERT, NULL, 2);
	EXPECT("+I[NULL, NULL, NULL, 2]");
	L(&g, SL_ROW_DELETE, NULL, 1);
	EXPECT("-D[NULL, 1, NULL, NULL]");
	rig_close(&g);
}

/* ON l.k = r.k AND lv < rv: a pair failing the condition is no match. */
static void test_cond(void)
{
	struct rig g;

	rig_open_cfg(&g, true, false, 0, lv_below_rv);
	L(&g, SL_ROW_INSERT, "a", 5);
	EXPECT("+I[a, 5, NULL, NULL]");
	R(&g, SL_ROW_INSERT, "a", 3);
	EXPECT_NONE();
	R(&g, SL_ROW_INSERT, "a", 9);
	EXPECT("-D[a, 5, NULL, NULL]", "+I[a, 5, a, 9]");
	L(&g, SL_ROW_INSERT, "a", 4); /* matches 9 only */
	EXPECT("+I[a, 4, a, 9]");
	L(&g, SL_ROW_INSERT, "a", 10); /* matches nothing */
	EXPECT("+I[a, 10, NULL, NULL]");
	rig_close(&g);
}

/* table.exec.state.ttl: a row untouched for the TTL is gone. */
static void test_ttl(void)
{
	struct rig g;

	now_ms = 1000;
	rig_open_cfg(&g, false, false, 100, NULL);
	L(&g, SL_ROW_INSERT, "a", 1);
	now_ms = 1050;
	R(&g, SL_ROW_INSERT, "a", 10);
	EXPECT("+I[a, 1, a, 10]");
	now_ms = 1120; /* the left row expired at 1100, the right one lives until 1150 */
	R(&g, SL_ROW_INSERT, "a", 20);
	EXPECT_NONE();
	L(&g, SL_ROW_INSERT, "a", 2);
	EXPECT_SORTED("+I[a, 2, a, 10]", "+I[a, 2, a, 20]");
	now_ms = 1300;
	L(&g, SL_ROW_INSERT, "a", 3);
	EXPECT_NONE();
	rig_close(&g);
	now_ms = 0;
}

/* A row of several state chunks is kept and joined whole. */
static void test_big_rows(void)
{
	static char big[3000];
	struct sl_row_builder b;
	const struct sl_row *row;
	struct rig g;

	memset(big, 'x', sizeof(big) - 1);
	rig_open(&g, false, false);
	sl_rowb_init(&b, rowbuf, sizeof(rowbuf), 1 + NLEFT + NRIGHT + 1);
	sl_rowb_set_i64(&b, 0, 1);
	sl_rowb_set_str(&b, 3, big, (uint32_t)strlen(big));
	sl_rowb_set_i64(&b, 4, 42);
	sl_rowb_set_str(&b, KEY, big, (uint32_t)strlen(big));
	row = sl_rowb_finish(&b);
	g.ctx.klen = sl_key_encode(row, g.def.key_fields, g.def.key_types, 1, keybuf);
	g.ctx.key = keybuf;
	g.ctx.hash = sl_hash_bytes(keybuf, g.ctx.klen);
	g.def.ops->process(&g.ctx, 0, row);
	T_ASSERT_EQ_I64(entries(&g), 3); /* 3000 bytes: three chunks */
	sl_rowb_init(&b, rowbuf, sizeof(rowbuf), 1 + NLEFT + NRIGHT + 1);
	sl_rowb_set_i64(&b, 0, 0);
	sl_rowb_set_str(&b, 1, "l", 1);
	sl_rowb_set_i64(&b, 2, 1);
	sl_rowb_set_str(&b, KEY, big, (uint32_t)strlen(big));
	row = sl_rowb_finish(&b);
	g.def.ops->process(&g.ctx, 0, row);
	T_ASSERT_EQ_I64(nout, 1);
	T_ASSERT(strstr(out[0], big) && strstr(out[0], ", 42]"));
	nout = 0;
	rig_close(&g);
}

/* r within 4 of l after it: 0 <= rv - lv <= 4 (lv and rv stand for the two rowtimes) */
static bool within_4(struct sl_ctx *ctx, const struct sl_row *joined, void *arg)
{
	int64_t d = sl_row_i64(joined, 3) - sl_row_i64(joined, 1);

	return d >= 0 && d <= 4;
}

/* Interval join, LEFT: no NULL-padded row before the left row expires at the watermark,
 * none retracted; each side's rows leave state once they can match nothing more. */
static void test_interval(void)
{
	struct sl_join_cfg cfg = {
		.in_schema = in_schema, .nleft = NLEFT, .nright = NRIGHT, .left_outer = true,
		.nkey = 1, .key = { KEY }, .cond = within_4, .interval = true,
		.left_time = 2, .right_time = 4, .lower = -4, .upper = 0,
	};
	char err[160];
	struct rig g;

	memset(&g, 0, sizeof(g));
	T_ASSERT(sl_join_build(&cfg, &g.fn, err, sizeof(err)) == 0);
	g.def = (struct sl_op_def){ .ops = &sl_process_ops, .name = "join", .cfg = &g.fn,
				    .in_schema = in_schema, .out_schema = out_schema, .nkey = 1 };
	g.def.key_types[0] = SL_TYPE_STRING;
	g.def.key_fields[0] = KEY;
	g.cap_def = (struct sl_op_def){ .ops = &cap_ops, .name = "cap", .in_schema = out_schema };
	g.cap = (struct sl_ctx){ .def = &g.cap_def, .watermark = SL_TS_MIN };
	g.ctx = (struct sl_ctx){ .def = &g.def, .watermark = SL_TS_MIN, .nports = 1 };
	g.ctx.port[0].n = 1;
	g.ctx.port[0].to[0] = &g.cap;
	T_ASSERT(g.def.ops->open(&g.ctx) == 0);

	L(&g, SL_ROW_INSERT, "a", 1);
	EXPECT_NONE(); /* an outer row waits for its interval to close */
	R(&g, SL_ROW_INSERT, "a", 2);
	EXPECT("+I[a, 1, a, 2]");
	R(&g, SL_ROW_INSERT, "a", 9); /* outside l = 1's interval */
	EXPECT_NONE();
	L(&g, SL_ROW_INSERT, "a", 5);
	EXPECT("+I[a, 5, a, 9]");
	sl_op_watermark(&g.ctx, 4); /* r = 2 can meet no later l (l <= r) */
	T_ASSERT_EQ_I64(entries(&g), 3);
	sl_op_watermark(&g.ctx, 5); /* l = 1 can meet no later r (r <= l + 4): it matched */
	EXPECT_NONE();
	T_ASSERT_EQ_I64(entries(&g), 2);
	L(&g, SL_ROW_INSERT, "a", 20);
	EXPECT_NONE();
	sl_op_watermark(&g.ctx, 30);
	EXPECT("+I[a, 20, NULL, NULL]");
	T_ASSERT_EQ_I64(entries(&g), 0);
	rig_close(&g);

	cfg.lower = 1;
	T_ASSERT(sl_join_build(&cfg, &g.fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "lower <= upper"));
}

static void test_refusals(void)
{
	struct sl_join_cfg cfg = { .in_schema = in_schema, .nleft = NLEFT, .nright = 9 };
	struct sl_process_fn fn;
	char err[160];

	T_ASSERT(sl_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "expected 1 + 2 left + 9 right"));
	cfg.nright = NRIGHT;
	cfg.nkey = 1;
	cfg.key[0] = 77;
	T_ASSERT(sl_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "key field 77"));
	cfg.in_schema = NULL;
	T_ASSERT(sl_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
}

int main(void)
{
	in_schema = sl_schema_create();
	out_schema = sl_schema_create();
	T_ASSERT(in_schema && out_schema);
	sl_schema_add(in_schema, "__side", SL_TYPE_BIGINT);
	sl_schema_add(in_schema, "lk", SL_TYPE_STRING);
	sl_schema_add(in_schema, "lv", SL_TYPE_BIGINT);
	sl_schema_add(in_schema, "rk", SL_TYPE_STRING);
	sl_schema_add(in_schema, "rv", SL_TYPE_BIGINT);
	sl_schema_add(in_schema, "__key0", SL_TYPE_STRING);
	sl_schema_add(out_schema, "lk", SL_TYPE_STRING);
	sl_schema_add(out_schema, "lv", SL_TYPE_BIGINT);
	sl_schema_add(out_schema, "rk", SL_TYPE_STRING);
	sl_schema_add(out_schema, "rv", SL_TYPE_BIGINT);
	test_inner();
	test_left();
	test_right_full();
	test_null_key();
	test_cond();
	test_ttl();
	test_big_rows();
	test_interval();
	test_refusals();
	sl_schema_destroy(in_schema);
	sl_schema_destroy(out_schema);
	return T_EXIT_PASS;
}
