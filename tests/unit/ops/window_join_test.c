/*
 * window_join_test.c - the window join of the join process function (ops/join.h,
 * cfg.window: Flink's WindowJoinOperator) driven by hand through the keyed process operator,
 * without the runtime: both sides fed into one instance as the keyed union delivers them
 * (field 0 = side, keyed by the join key and the window); capture operators record the
 * output and each side's late rows.
 *
 * Checks: nothing comes out while a window is open; when the watermark reaches its end - 1
 * its rows are joined at once, +I with event time end - 1, and its state is gone; INNER,
 * LEFT, RIGHT and FULL (an outer side's unmatched rows NULL-padded), one result per copy of
 * a row, a NULL key matching nothing (an outer side still pads it, an inner one keeps none),
 * the extra condition, SEMI and ANTI (the left rows alone), late rows of either side counted
 * and sent to that side's late output, and build refusals.
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

/* Union schema: 0 __side | 1 lk, 2 lv, 3 lwe | 4 rk, 5 rv, 6 rwe | 7 __key0 (k), 8 __key1
 * (the window end). Output: lk, lv, lwe, rk, rv, rwe; semi / anti: lk, lv, lwe. */
enum { NLEFT = 3, NRIGHT = 3, LWE = 3, RWE = 6, KEY = 7, WKEY = 8, NIN = 9 };

static struct sl_schema *in_schema, *out_schema, *left_schema, *right_schema;

#define MAXOUT 64
static char out[MAXOUT][256], late[MAXOUT][256];
static sl_ts_t out_ts[MAXOUT];
static int nout, nlate;
static const struct sl_schema *cur_out;

static void cap_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	T_ASSERT(nout < MAXOUT);
	T_ASSERT(row->kind == SL_ROW_INSERT);
	out_ts[nout] = ts;
	sl_row_format(row, cur_out, out[nout++], sizeof(out[0]));
}

static void late_left(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	T_ASSERT(nlate < MAXOUT);
	snprintf(late[nlate], 8, "left ");
	sl_row_format(row, left_schema, late[nlate++] + 5, sizeof(late[0]) - 5);
}

static void late_right(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	T_ASSERT(nlate < MAXOUT);
	snprintf(late[nlate], 8, "right ");
	sl_row_format(row, right_schema, late[nlate++] + 6, sizeof(late[0]) - 6);
}

static const struct sl_op_ops cap_ops = { .name = "capture", .process = cap_process };
static const struct sl_op_ops late_l_ops = { .name = "late left", .process = late_left };
static const struct sl_op_ops late_r_ops = { .name = "late right", .process = late_right };

struct rig {
	struct sl_process_fn fn;
	struct sl_op_def def, cap_def, ll_def, lr_def;
	struct sl_ctx ctx, cap, ll, lr;
};

static struct sl_join_cfg window_cfg(bool left_outer, bool right_outer)
{
	return (struct sl_join_cfg){ .in_schema = in_schema,
				     .nleft = NLEFT,
				     .nright = NRIGHT,
				     .left_outer = left_outer,
				     .right_outer = right_outer,
				     .nkey = 2,
				     .key = { KEY, WKEY },
				     .window = true,
				     .window_end = { LWE, RWE },
				     .late_tag = { 1, 2 } };
}

static void rig_open(struct rig *g, const struct sl_join_cfg *cfg)
{
	char err[200];

	memset(g, 0, sizeof(*g));
	cur_out = cfg->semi || cfg->anti ? left_schema : out_schema;
	T_ASSERT(sl_join_build(cfg, &g->fn, err, sizeof(err)) == 0);
	g->def = (struct sl_op_def){ .ops = &sl_process_ops,
				     .name = "window join",
				     .cfg = &g->fn,
				     .in_schema = in_schema,
				     .out_schema = cur_out,
				     .nkey = 2 };
	g->def.key_types[0] = SL_TYPE_STRING;
	g->def.key_fields[0] = KEY;
	g->def.key_types[1] = SL_TYPE_TIMESTAMP;
	g->def.key_fields[1] = WKEY;
	g->cap_def = (struct sl_op_def){ .ops = &cap_ops, .name = "cap", .in_schema = cur_out };
	g->ll_def =
		(struct sl_op_def){ .ops = &late_l_ops, .name = "ll", .in_schema = left_schema };
	g->lr_def =
		(struct sl_op_def){ .ops = &late_r_ops, .name = "lr", .in_schema = right_schema };
	g->cap = (struct sl_ctx){ .def = &g->cap_def, .watermark = SL_TS_MIN };
	g->ll = (struct sl_ctx){ .def = &g->ll_def, .watermark = SL_TS_MIN };
	g->lr = (struct sl_ctx){ .def = &g->lr_def, .watermark = SL_TS_MIN };
	g->ctx = (struct sl_ctx){ .def = &g->def, .watermark = SL_TS_MIN, .nports = 3 };
	g->ctx.port[0].n = 1;
	g->ctx.port[0].to[0] = &g->cap;
	g->ctx.port[1].n = 1;
	g->ctx.port[1].to[0] = &g->ll;
	g->ctx.port_tag[1] = 1;
	g->ctx.port[2].n = 1;
	g->ctx.port[2].to[0] = &g->lr;
	g->ctx.port_tag[2] = 2;
	T_ASSERT(g->def.ops->open(&g->ctx) == 0);
	nout = nlate = 0;
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

static uint8_t rowbuf[4096] __attribute__((aligned(8)));
static uint8_t keybuf[SL_KEY_MAX];

/* A row of side `side` (0 left, 1 right) with key k (NULL: a NULL key) and value v in the
 * window ending at we, sent with event time we - 1 as the window TVF sends it. */
static void feed(struct rig *g, int side, const char *k, int64_t v, sl_ts_t we)
{
	struct sl_row_builder b;
	const struct sl_row *row;
	int kf = side ? 4 : 1;

	sl_rowb_init(&b, rowbuf, sizeof(rowbuf), NIN);
	sl_rowb_set_i64(&b, 0, side);
	if (k) {
		sl_rowb_set_str(&b, kf, k, (uint32_t)strlen(k));
		sl_rowb_set_str(&b, KEY, k, (uint32_t)strlen(k));
	}
	sl_rowb_set_i64(&b, kf + 1, v);
	sl_rowb_set_i64(&b, kf + 2, we);
	sl_rowb_set_i64(&b, WKEY, we);
	sl_rowb_set_kind(&b, SL_ROW_INSERT);
	row = sl_rowb_finish(&b);
	T_ASSERT(row);
	g->ctx.klen = sl_key_encode(row, g->def.key_fields, g->def.key_types, 2, keybuf);
	g->ctx.key = keybuf;
	g->ctx.hash = sl_hash_bytes(keybuf, g->ctx.klen);
	g->def.ops->process(&g->ctx, we - 1, row);
}

#define L(g, k, v, we) feed(g, 0, k, v, we)
#define R(g, k, v, we) feed(g, 1, k, v, we)

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The rows captured since the last call, as a multiset (a window's results come out in
 * the state's (hash, bytes) order). */
static void expect_rows(char (*got)[256], int *ngot, const char *const *want, int n)
{
	qsort(got, (size_t)*ngot, sizeof(got[0]), cmp_str);
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

#define W10 "1970-01-01 00:00:00.010"
#define W20 "1970-01-01 00:00:00.020"

/* INNER: nothing until the watermark passes the window's end, then every pair at once, one
 * per copy of each row, and the window's state gone; another window waits. */
static void test_inner(void)
{
	struct sl_join_cfg cfg = window_cfg(false, false);
	struct rig g;

	rig_open(&g, &cfg);
	L(&g, "a", 1, 10);
	L(&g, "a", 2, 10);
	L(&g, "a", 2, 10); /* a second copy */
	R(&g, "a", 5, 10);
	R(&g, "a", 5, 10); /* and of a right row: 2 x 2 results */
	R(&g, "b", 6, 10); /* no left row with b */
	L(&g, "a", 3, 20); /* the next window */
	R(&g, "a", 7, 20);
	EXPECT_NONE();
	sl_op_watermark(&g.ctx, 8);
	EXPECT_NONE();
	sl_op_watermark(&g.ctx, 9);
	EXPECT("+I[a, 1, " W10 ", a, 5, " W10 "]", "+I[a, 1, " W10 ", a, 5, " W10 "]",
	       "+I[a, 2, " W10 ", a, 5, " W10 "]", "+I[a, 2, " W10 ", a, 5, " W10 "]",
	       "+I[a, 2, " W10 ", a, 5, " W10 "]", "+I[a, 2, " W10 ", a, 5, " W10 "]");
	T_ASSERT_EQ_I64(out_ts[0], 9);
	T_ASSERT_EQ_I64(entries(&g), 2); /* window 20's two rows */
	sl_op_watermark(&g.ctx, SL_TS_MAX);
	EXPECT("+I[a, 3, " W20 ", a, 7, " W20 "]");
	T_ASSERT_EQ_I64(out_ts[0], 19);
	T_ASSERT_EQ_I64(entries(&g), 0);
	T_ASSERT_EQ_I64(nlate, 0);
	rig_close(&g);
}

/* The outer joins pad what met nothing, once per copy, when the window fires. */
static void test_outer(void)
{
	static const bool kinds[3][2] = { { true, false }, { false, true }, { true, true } };

	for (int k = 0; k < 3; k++) {
		struct sl_join_cfg cfg = window_cfg(kinds[k][0], kinds[k][1]);
		struct rig g;

		rig_open(&g, &cfg);
		L(&g, "a", 1, 10);
		R(&g, "a", 5, 10);
		L(&g, "b", 2, 10);
		L(&g, "b", 2, 10);
		R(&g, "c", 6, 10);
		EXPECT_NONE();
		sl_op_watermark(&g.ctx, SL_TS_MAX);
		if (k == 0)
			EXPECT("+I[a, 1, " W10 ", a, 5, " W10 "]",
			       "+I[b, 2, " W10 ", NULL, NULL, NULL]",
			       "+I[b, 2, " W10 ", NULL, NULL, NULL]");
		else if (k == 1)
			EXPECT("+I[NULL, NULL, NULL, c, 6, " W10 "]",
			       "+I[a, 1, " W10 ", a, 5, " W10 "]");
		else
			EXPECT("+I[NULL, NULL, NULL, c, 6, " W10 "]",
			       "+I[a, 1, " W10 ", a, 5, " W10 "]",
			       "+I[b, 2, " W10 ", NULL, NULL, NULL]",
			       "+I[b, 2, " W10 ", NULL, NULL, NULL]");
		T_ASSERT_EQ_I64(entries(&g), 0);
		rig_close(&g);
	}
}

/* A NULL key meets nothing, not even a NULL key: FULL pads both rows, INNER keeps none. */
static void test_null_key(void)
{
	struct sl_join_cfg cfg = window_cfg(true, true);
	struct rig g;

	rig_open(&g, &cfg);
	L(&g, NULL, 1, 10);
	R(&g, NULL, 2, 10);
	sl_op_watermark(&g.ctx, SL_TS_MAX);
	EXPECT("+I[NULL, 1, " W10 ", NULL, NULL, NULL]", "+I[NULL, NULL, NULL, NULL, 2, " W10 "]");
	rig_close(&g);

	cfg = window_cfg(false, false);
	rig_open(&g, &cfg);
	L(&g, NULL, 1, 10);
	R(&g, NULL, 2, 10);
	T_ASSERT_EQ_I64(entries(&g), 0);
	sl_op_watermark(&g.ctx, SL_TS_MAX);
	EXPECT_NONE();
	rig_close(&g);
}

/* The extra condition on the pair (lv < rv); a left row failing it with every right row is
 * padded in a LEFT join. */
static bool lv_below_rv(struct sl_ctx *ctx, const struct sl_row *joined, void *arg)
{
	return sl_row_i64(joined, 1) < sl_row_i64(joined, 4);
}

static void test_cond(void)
{
	struct sl_join_cfg cfg = window_cfg(true, false);
	struct rig g;

	cfg.cond = lv_below_rv;
	rig_open(&g, &cfg);
	L(&g, "a", 1, 10);
	L(&g, "a", 9, 10);
	R(&g, "a", 5, 10);
	sl_op_watermark(&g.ctx, SL_TS_MAX);
	EXPECT("+I[a, 1, " W10 ", a, 5, " W10 "]", "+I[a, 9, " W10 ", NULL, NULL, NULL]");
	rig_close(&g);
}

/* SEMI and ANTI: the left rows alone, once per copy, with / without a match; a NULL key
 * has none. */
static void test_semi_anti(void)
{
	for (int anti = 0; anti <= 1; anti++) {
		struct sl_join_cfg cfg = window_cfg(false, false);
		struct rig g;

		cfg.semi = !anti;
		cfg.anti = anti;
		rig_open(&g, &cfg);
		L(&g, "a", 1, 10);
		L(&g, "a", 1, 10);
		R(&g, "a", 5, 10);
		R(&g, "a", 6, 10); /* two matches: still one row per left copy */
		L(&g, "b", 2, 10);
		L(&g, NULL, 3, 10);
		R(&g, NULL, 3, 10);
		sl_op_watermark(&g.ctx, SL_TS_MAX);
		if (anti)
			EXPECT("+I[NULL, 3, " W10 "]", "+I[b, 2, " W10 "]");
		else
			EXPECT("+I[a, 1, " W10 "]", "+I[a, 1, " W10 "]");
		T_ASSERT_EQ_I64(entries(&g), 0);
		rig_close(&g);
	}
}

/* A row of either side whose window has fired is late: counted, sent to its side's late
 * output as its own fields, and in no window. */
static void test_late(void)
{
	struct sl_join_cfg cfg = window_cfg(true, true);
	struct rig g;

	rig_open(&g, &cfg);
	L(&g, "a", 1, 10);
	sl_op_watermark(&g.ctx, 9);
	EXPECT("+I[a, 1, " W10 ", NULL, NULL, NULL]");
	R(&g, "a", 5, 10);
	L(&g, "a", 2, 10);
	L(&g, "a", 3, 20); /* in time */
	EXPECT_LATE("left +I[a, 2, " W10 "]", "right +I[a, 5, " W10 "]");
	T_ASSERT_EQ_I64(g.ctx.m.late, 2);
	T_ASSERT_EQ_I64(entries(&g), 1);
	sl_op_watermark(&g.ctx, SL_TS_MAX);
	EXPECT("+I[a, 3, " W20 ", NULL, NULL, NULL]");
	rig_close(&g);
}

static void test_refusals(void)
{
	struct sl_join_cfg cfg = window_cfg(false, false);
	struct sl_process_fn fn;
	char err[200];

	cfg.window_end[1] = LWE; /* not a right field */
	T_ASSERT(sl_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "right side's window_end"));
	cfg.window_end[1] = RWE;
	cfg.ttl_ms = 1000;
	T_ASSERT(sl_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	cfg.ttl_ms = 0;
	cfg.semi = true;
	cfg.left_outer = true;
	T_ASSERT(sl_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "semi and anti"));
	cfg.left_outer = false;
	T_ASSERT(sl_join_build(&cfg, &fn, err, sizeof(err)) == 0);
	sl_join_free(&fn);
	cfg.window = false;
	T_ASSERT(sl_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
}

static void side_fields(struct sl_schema *s, const char *p)
{
	char n[8];

	snprintf(n, sizeof n, "%sk", p);
	sl_schema_add(s, n, SL_TYPE_STRING);
	snprintf(n, sizeof n, "%sv", p);
	sl_schema_add(s, n, SL_TYPE_BIGINT);
	snprintf(n, sizeof n, "%swe", p);
	sl_schema_add(s, n, SL_TYPE_TIMESTAMP);
}

int main(void)
{
	in_schema = sl_schema_create();
	out_schema = sl_schema_create();
	left_schema = sl_schema_create();
	right_schema = sl_schema_create();
	T_ASSERT(in_schema && out_schema && left_schema && right_schema);
	sl_schema_add(in_schema, "__side", SL_TYPE_BIGINT);
	side_fields(in_schema, "l");
	side_fields(in_schema, "r");
	sl_schema_add(in_schema, "__key0", SL_TYPE_STRING);
	sl_schema_add(in_schema, "__key1", SL_TYPE_TIMESTAMP);
	side_fields(out_schema, "l");
	side_fields(out_schema, "r");
	side_fields(left_schema, "l");
	side_fields(right_schema, "r");
	test_inner();
	test_outer();
	test_null_key();
	test_cond();
	test_semi_anti();
	test_late();
	test_refusals();
	T_ASSERT_EQ_I64(failures, 0);
	sl_schema_destroy(in_schema);
	sl_schema_destroy(out_schema);
	sl_schema_destroy(left_schema);
	sl_schema_destroy(right_schema);
	return T_EXIT_PASS;
}
