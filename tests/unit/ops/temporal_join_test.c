/*
 * temporal_join_test.c - the event-time temporal join process function (ops/temporal_join.h)
 * driven by hand through the keyed process operator, without the runtime: both sides fed
 * into one instance as the keyed union delivers them (field 0 = side, the row keyed by its
 * own side's key field), watermarks through sl_op_watermark; a capture operator records the
 * output.
 *
 * Checks: the Flink acceptance case flink_temporal_join_event_time_versioned_rates under
 * three interleavings of the two inputs (expected.json's rows), inclusive version lookup,
 * out-of-order versions, a later version of the same time replacing the earlier, -U ignored,
 * -D ending validity, left outer with no version, the extra join condition, NULL keys
 * matching nothing, emission in arrival order at the watermark, late left rows, state
 * cleanup (entry and timer counts shrink as the watermark passes), idle-state retention
 * (processing-time cleanup timers), rows larger than one state chunk, and build refusals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "op.h"
#include "process.h"
#include "temporal_join.h"
#include "state.h"
#include "tests/test.h"
#include "timer.h"

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

/*
 * Union schema: 0 __side | 1 amount, 2 currency, 3 note, 4 o_rowtime | 5 r_currency,
 * 6 rate, 7 r_rowtime. Output: amount, currency, note, o_rowtime, r_currency, rate,
 * r_rowtime.
 */
enum { NLEFT = 4, NRIGHT = 3, LTIME = 4, RTIME = 7, LKEY = 2, RKEY = 5 };

static struct sl_schema *in_schema, *out_schema;

/* ---- capture sink: "amount*rate@ts" per row ("amount*NULL@ts" without a version) ---- */

#define MAXOUT 64
static char out[MAXOUT][64];
static int nout;
static uint32_t big_note, big_cur; /* string lengths of the last long row */
static char note_seen[4096], cur_seen[4096];

static void cap_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	int64_t amount = sl_row_i64(row, 0);
	const char *s;
	uint32_t n;

	T_ASSERT(nout < MAXOUT);
	T_ASSERT(row->kind == SL_ROW_INSERT);
	T_ASSERT_EQ_I64(ts, sl_row_i64(row, 3)); /* the left row's time */
	s = sl_row_str(row, 2, &n);
	if (n > 100) {
		big_note = n;
		memcpy(note_seen, s, n);
		s = sl_row_str(row, 4, &big_cur);
		memcpy(cur_seen, s, big_cur);
	}
	if (sl_row_is_null(row, 5)) {
		/* no version: every right field is NULL */
		T_ASSERT(sl_row_is_null(row, 4) && sl_row_is_null(row, 6));
		snprintf(out[nout++], sizeof(out[0]), "%lld*NULL@%lld", (long long)amount,
			 (long long)ts);
	} else {
		snprintf(out[nout++], sizeof(out[0]), "%lld@%lld",
			 (long long)(amount * sl_row_i64(row, 5)), (long long)ts);
	}
}

static const struct sl_op_ops cap_ops = { .name = "capture", .process = cap_process };

/* ---- driver: one join instance ---- */

struct rig {
	struct sl_process_fn fn;
	struct sl_op_def def, cap_def;
	struct sl_ctx ctx, cap;
};

static void rig_open_ttl(struct rig *g, bool left_outer,
			 bool (*cond)(const struct sl_row *joined, void *arg), sl_ts_t ttl)
{
	struct sl_temporal_join_cfg cfg = {
		.in_schema = in_schema, .nleft = NLEFT, .nright = NRIGHT, .left_time = LTIME,
		.right_time = RTIME, .left_outer = left_outer, .cond = cond,
		.nkey = 1, .left_key = { LKEY }, .ttl_ms = ttl,
	};
	char err[160];

	memset(g, 0, sizeof(*g));
	T_ASSERT(sl_temporal_join_build(&cfg, &g->fn, err, sizeof(err)) == 0);
	g->def = (struct sl_op_def){ .ops = &sl_process_ops, .name = "tj", .cfg = &g->fn,
				     .in_schema = in_schema, .out_schema = out_schema,
				     .nkey = 1 };
	g->def.key_types[0] = SL_TYPE_STRING;
	g->cap_def = (struct sl_op_def){ .ops = &cap_ops, .name = "cap", .in_schema = out_schema };
	g->cap = (struct sl_ctx){ .def = &g->cap_def, .watermark = SL_TS_MIN };
	g->ctx = (struct sl_ctx){ .def = &g->def, .watermark = SL_TS_MIN, .nports = 1 };
	g->ctx.port[0].n = 1;
	g->ctx.port[0].to[0] = &g->cap;
	T_ASSERT(g->def.ops->open(&g->ctx) == 0);
	nout = 0;
}

static void rig_open(struct rig *g, bool left_outer,
		     bool (*cond)(const struct sl_row *joined, void *arg))
{
	rig_open_ttl(g, left_outer, cond, 0);
}

static void rig_close(struct rig *g)
{
	g->def.ops->close(&g->ctx);
	sl_temporal_join_free(&g->fn);
}

static size_t entries(struct rig *g)
{
	return sl_kstate_entries(g->ctx.kstate);
}

static size_t timers(struct rig *g)
{
	return sl_timers_count(g->ctx.event_timers);
}

static size_t proc_timers(struct rig *g)
{
	return sl_timers_count(g->ctx.proc_timers);
}

static uint8_t rowbuf[16384] __attribute__((aligned(8)));
static uint8_t keybuf[SL_KEY_MAX];

static void feed_row(struct rig *g, const struct sl_row *row, int keyfield, sl_ts_t ts)
{
	/* the keyed union keys each side by its own key field */
	g->def.key_fields[0] = keyfield;
	g->ctx.klen = sl_key_encode(row, g->def.key_fields, g->def.key_types, 1, keybuf);
	g->ctx.key = keybuf;
	g->ctx.hash = sl_hash_bytes(keybuf, g->ctx.klen);
	g->def.ops->process(&g->ctx, ts, row);
}

static void order_note(struct rig *g, int64_t amount, const char *cur, const char *note,
		       sl_ts_t t)
{
	struct sl_row_builder b;

	sl_rowb_init(&b, rowbuf, sizeof(rowbuf), 1 + NLEFT + NRIGHT);
	sl_rowb_set_i64(&b, 0, 0);
	sl_rowb_set_i64(&b, 1, amount);
	sl_rowb_set_str(&b, 2, cur, (uint32_t)strlen(cur));
	sl_rowb_set_str(&b, 3, note, (uint32_t)strlen(note));
	sl_rowb_set_i64(&b, 4, t);
	feed_row(g, sl_rowb_finish(&b), LKEY, t);
}

static void order(struct rig *g, int64_t amount, const char *cur, sl_ts_t t)
{
	order_note(g, amount, cur, "", t);
}

static void rate_kind(struct rig *g, enum sl_row_kind kind, const char *cur, int64_t rate,
		      sl_ts_t t)
{
	struct sl_row_builder b;

	sl_rowb_init(&b, rowbuf, sizeof(rowbuf), 1 + NLEFT + NRIGHT);
	sl_rowb_set_i64(&b, 0, 1);
	sl_rowb_set_str(&b, 5, cur, (uint32_t)strlen(cur));
	sl_rowb_set_i64(&b, 6, rate);
	sl_rowb_set_i64(&b, 7, t);
	sl_rowb_set_kind(&b, kind);
	feed_row(g, sl_rowb_finish(&b), RKEY, t);
}

static void rate(struct rig *g, const char *cur, int64_t r, sl_ts_t t)
{
	rate_kind(g, SL_ROW_INSERT, cur, r, t);
}

static void expect(const char *const *want, int n)
{
	for (int i = 0; i < n && i < nout; i++) {
		if (strcmp(out[i], want[i]) != 0) {
			fprintf(stderr, "row %d: got '%s', want '%s'\n", i, out[i], want[i]);
			exit(T_EXIT_FAIL);
		}
	}
	if (nout != n) {
		for (int i = 0; i < nout; i++)
			fprintf(stderr, "  got %s\n", out[i]);
	}
	T_ASSERT_EQ_I64(nout, n);
	nout = 0;
}

/* ---- the acceptance case ---- */

#define S(x) (1602288000000LL + (x) * 1000LL) /* 2020-10-10 00:00:xx */

static const struct {
	int64_t amount;
	const char *cur;
	sl_ts_t t;
} orders[] = {
	{ 2, "Euro", S(42) }, { 1, "USD", S(43) }, { 50, "Yen", S(44) },
	{ 3, "Euro", S(45) }, { 1, "Euro", S(58) }, { 1, "USD", S(58) },
};

static const struct {
	const char *cur;
	int64_t rate;
	sl_ts_t t;
} rates[] = {
	{ "USD", 102, S(41) }, { "Euro", 114, S(41) }, { "Yen", 1, S(41) }, { "Euro", 116, S(45) },
	{ "Euro", 119, S(47) }, { "USD", 103, S(58) }, { "Euro", 120, S(59) },
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* mode 0: rates first, 1: orders first, 2: merged by time (each source's watermark is its
 * last time, 'on-event'; the union's is the smaller of the two) */
static void run_acceptance(int mode)
{
	const size_t no = sizeof(orders) / sizeof(orders[0]);
	const size_t nr = sizeof(rates) / sizeof(rates[0]);
	sl_ts_t wm_o = SL_TS_MIN, wm_r = SL_TS_MIN;
	size_t io = 0, ir = 0;
	int64_t got[MAXOUT];
	struct rig g;

	rig_open(&g, false, NULL);
	while (io < no || ir < nr) {
		bool take_order = ir == nr || (io < no && (mode == 1 ||
							   (mode == 2 && orders[io].t < rates[ir].t)));

		if (take_order) {
			order(&g, orders[io].amount, orders[io].cur, orders[io].t);
			wm_o = orders[io++].t;
		} else {
			rate(&g, rates[ir].cur, rates[ir].rate, rates[ir].t);
			wm_r = rates[ir++].t;
		}
		if ((wm_o < wm_r ? wm_o : wm_r) > g.ctx.watermark)
			sl_op_watermark(&g.ctx, wm_o < wm_r ? wm_o : wm_r);
	}
	sl_op_watermark(&g.ctx, SL_TS_MAX);
	/* expected.json: 50, 102, 103, 119, 228, 348 (an append stream, order-free) */
	T_ASSERT_EQ_I64(nout, 6);
	for (int i = 0; i < nout; i++)
		got[i] = strtoll(out[i], NULL, 10);
	qsort(got, (size_t)nout, sizeof(got[0]), cmp_i64);
	{
		static const int64_t want[] = { 50, 102, 103, 119, 228, 348 };

		for (int i = 0; i < 6; i++)
			T_ASSERT_EQ_I64(got[i], want[i]);
	}
	/* left rows all gone; per currency the latest version and the meta value stay, except
	 * that cleanup runs only when the key's timer fires (Flink): rates first, Euro's last
	 * firing (at 58) keeps 47 and 59, and no later row of Euro arms another timer */
	T_ASSERT_EQ_I64(entries(&g), mode == 0 ? 7 : 6);
	T_ASSERT_EQ_I64(timers(&g), 0);
	nout = 0;
	rig_close(&g);
}

/* ---- semantics ---- */

static void test_versions(void)
{
	struct rig g;

	rig_open(&g, true, NULL);
	/* out of order versions, a replacement at the same time, an ignored -U */
	rate(&g, "X", 1, 10);
	rate(&g, "X", 3, 30);
	rate(&g, "X", 2, 20);
	rate(&g, "X", 9, 20);                         /* replaces 2 at 20 */
	rate_kind(&g, SL_ROW_UPDATE_BEFORE, "X", 7, 25); /* ignored */
	order(&g, 100, "X", 5);  /* before the first version */
	order(&g, 100, "X", 35);
	order(&g, 100, "X", 25);
	order(&g, 100, "X", 20); /* inclusive: the version at 20 */
	order(&g, 100, "X", 15);
	order(&g, 100, "Y", 15); /* a key without versions */
	T_ASSERT_EQ_I64(timers(&g), 2); /* one per key: X at 5, Y at 15 */
	sl_op_watermark(&g.ctx, 40);
	{
		/* keys fire in timer order (X's at 5, Y's at 15), rows of a key in arrival
		 * order */
		static const char *const want[] = {
			"100*NULL@5", "300@35", "900@25", "900@20", "100@15", "100*NULL@15",
		};

		expect(want, 6);
	}
	/* X keeps only the version at 30 (the latest <= 40) and its meta; Y nothing */
	T_ASSERT_EQ_I64(entries(&g), 2);
	T_ASSERT_EQ_I64(timers(&g), 0);

	/* a late left row is joined at the next watermark with what is left */
	order(&g, 1, "X", 12);
	T_ASSERT_EQ_I64(nout, 0);
	sl_op_watermark(&g.ctx, 41);
	{
		static const char *const want[] = { "1*NULL@12" };

		expect(want, 1);
	}
	rig_close(&g);
}

static void test_delete_and_inner(void)
{
	struct rig g;

	/* inner join: -D ends the version's validity until the next version */
	rig_open(&g, false, NULL);
	rate(&g, "X", 2, 10);
	rate_kind(&g, SL_ROW_DELETE, "X", 2, 20);
	rate(&g, "X", 4, 30);
	order(&g, 1, "X", 15);
	order(&g, 1, "X", 20);
	order(&g, 1, "X", 25);
	order(&g, 1, "X", 30);
	order(&g, 1, "X", 5);
	order(&g, 1, "Z", 5);
	sl_op_watermark(&g.ctx, 100);
	{
		static const char *const want[] = { "2@15", "4@30" };

		expect(want, 2);
	}
	rig_close(&g);

	/* left outer: the same rows, unmatched ones with NULLs */
	rig_open(&g, true, NULL);
	rate(&g, "X", 2, 10);
	rate_kind(&g, SL_ROW_DELETE, "X", 2, 20);
	order(&g, 1, "X", 15);
	order(&g, 1, "X", 20);
	sl_op_watermark(&g.ctx, 100);
	{
		static const char *const want[] = { "2@15", "1*NULL@20" };

		expect(want, 2);
	}
	/* the -D is the latest version: it stays (with the meta) */
	T_ASSERT_EQ_I64(entries(&g), 2);
	rig_close(&g);
}

static bool rate_below_100(const struct sl_row *joined, void *arg)
{
	return !sl_row_is_null(joined, 5) && sl_row_i64(joined, 5) < 100;
}

static void test_condition(void)
{
	struct rig g;

	for (int outer = 0; outer < 2; outer++) {
		rig_open(&g, outer, rate_below_100);
		rate(&g, "X", 50, 10);
		rate(&g, "X", 500, 20);
		order(&g, 1, "X", 15);
		order(&g, 1, "X", 25);
		sl_op_watermark(&g.ctx, SL_TS_MAX);
		if (outer) {
			static const char *const want[] = { "50@15", "1*NULL@25" };

			expect(want, 2);
		} else {
			static const char *const want[] = { "50@15" };

			expect(want, 1);
		}
		rig_close(&g);
	}
}

/* NULL = NULL is not true: a left row with a NULL key finds no version, although the keyed
 * union groups it with the right rows whose key is NULL. */
static void test_null_key(void)
{
	struct sl_row_builder b;
	struct rig g;

	for (int outer = 0; outer < 2; outer++) {
		rig_open(&g, outer, NULL);
		sl_rowb_init(&b, rowbuf, sizeof(rowbuf), 1 + NLEFT + NRIGHT);
		sl_rowb_set_i64(&b, 0, 1);
		sl_rowb_set_i64(&b, 6, 5);
		sl_rowb_set_i64(&b, 7, 10); /* r_currency NULL */
		feed_row(&g, sl_rowb_finish(&b), RKEY, 10);
		sl_rowb_init(&b, rowbuf, sizeof(rowbuf), 1 + NLEFT + NRIGHT);
		sl_rowb_set_i64(&b, 0, 0);
		sl_rowb_set_i64(&b, 1, 2);
		sl_rowb_set_str(&b, 3, "", 0);
		sl_rowb_set_i64(&b, 4, 20); /* currency NULL */
		feed_row(&g, sl_rowb_finish(&b), LKEY, 20);
		sl_op_watermark(&g.ctx, 30);
		if (outer) {
			static const char *const want[] = { "2*NULL@20" };

			expect(want, 1);
		} else {
			T_ASSERT_EQ_I64(nout, 0);
		}
		rig_close(&g);
	}
}

/* Left rows wait for the watermark; versions are cleaned as it passes. */
static void test_cleanup(void)
{
	struct rig g;

	rig_open(&g, false, NULL);
	rate(&g, "X", 1, 10);
	rate(&g, "X", 2, 20);
	rate(&g, "X", 3, 30);
	order(&g, 1, "X", 15);
	order(&g, 1, "X", 25);
	T_ASSERT_EQ_I64(entries(&g), 6); /* 3 versions, 2 left rows, meta */
	T_ASSERT_EQ_I64(timers(&g), 1);  /* one timer per key, at the smallest time: 10 */
	sl_op_watermark(&g.ctx, 9);
	T_ASSERT_EQ_I64(nout, 0);
	sl_op_watermark(&g.ctx, 22);
	{
		static const char *const want[] = { "1@15" };

		expect(want, 1);
	}
	/* version 10 gone (20 is the latest <= 22), left row 15 gone; a timer at 25 */
	T_ASSERT_EQ_I64(entries(&g), 4);
	T_ASSERT_EQ_I64(timers(&g), 1);
	sl_op_watermark(&g.ctx, 24);
	T_ASSERT_EQ_I64(nout, 0);
	sl_op_watermark(&g.ctx, 100);
	{
		static const char *const want[] = { "2@25" };

		expect(want, 1);
	}
	/* only the version at 30 and the meta remain; no timer */
	T_ASSERT_EQ_I64(entries(&g), 2);
	T_ASSERT_EQ_I64(timers(&g), 0);
	rig_close(&g);

	/* a key that only ever had left rows leaves nothing behind */
	rig_open(&g, true, NULL);
	order(&g, 1, "Q", 1);
	order(&g, 1, "Q", 2);
	sl_op_watermark(&g.ctx, 2);
	T_ASSERT_EQ_I64(nout, 2);
	T_ASSERT_EQ_I64(entries(&g), 0);
	T_ASSERT_EQ_I64(timers(&g), 0);
	nout = 0;
	rig_close(&g);
}

/* Idle-state retention: a key untouched for ttl .. 1.5 ttl of processing time is dropped,
 * pending left rows included; activity pushes the cleanup out. */
static void test_retention(void)
{
	struct rig g;

	rig_open_ttl(&g, true, NULL, 100);
	now_ms = 1000;
	rate(&g, "X", 2, 10);
	order(&g, 1, "X", 20);
	T_ASSERT_EQ_I64(proc_timers(&g), 1); /* at 1150 */
	now_ms = 1040;
	order(&g, 1, "X", 21);               /* 1140 <= 1150: the timer stays */
	g.def.ops->on_proctime(&g.ctx, 1149);
	T_ASSERT_EQ_I64(entries(&g), 4);
	now_ms = 1060;
	rate(&g, "Y", 3, 10);                /* another key: its own timer at 1210 */
	g.def.ops->on_proctime(&g.ctx, 1150);
	/* X is gone: versions, pending orders, timers; Y stays */
	T_ASSERT_EQ_I64(entries(&g), 2);
	T_ASSERT_EQ_I64(timers(&g), 1);
	T_ASSERT_EQ_I64(proc_timers(&g), 1);
	sl_op_watermark(&g.ctx, 30);
	T_ASSERT_EQ_I64(nout, 0);            /* X's orders were dropped, never emitted */

	/* activity: a row after now + ttl passed the timer moves it to now + 150 */
	now_ms = 1200;
	order(&g, 1, "Y", 40);               /* 1300 > 1210: timer now at 1350 */
	g.def.ops->on_proctime(&g.ctx, 1210);
	T_ASSERT_EQ_I64(entries(&g), 3);
	/* a firing that leaves only a version keeps the key alive: now + 100 > 1350 */
	now_ms = 1300;
	sl_op_watermark(&g.ctx, 40);
	{
		static const char *const want[] = { "3@40" };

		expect(want, 1);
	}
	g.def.ops->on_proctime(&g.ctx, 1350);
	T_ASSERT_EQ_I64(entries(&g), 2);
	g.def.ops->on_proctime(&g.ctx, 1450);
	T_ASSERT_EQ_I64(entries(&g), 0);
	T_ASSERT_EQ_I64(timers(&g) + proc_timers(&g), 0);
	rig_close(&g);

	/* a key whose firing leaves nothing also drops its cleanup timer */
	rig_open_ttl(&g, true, NULL, 100);
	order(&g, 1, "Q", 1);
	T_ASSERT_EQ_I64(proc_timers(&g), 1);
	sl_op_watermark(&g.ctx, 1);
	T_ASSERT_EQ_I64(nout, 1);
	T_ASSERT_EQ_I64(entries(&g) + timers(&g) + proc_timers(&g), 0);
	nout = 0;
	rig_close(&g);
	now_ms = 0;
}

/* Rows of several state chunks on both sides come out whole. */
static void test_big_rows(void)
{
	static char note[3001], cur[2001];
	struct rig g;

	for (int i = 0; i < 3000; i++)
		note[i] = (char)('a' + i % 26);
	for (int i = 0; i < 2000; i++)
		cur[i] = (char)('A' + i % 26);
	rig_open(&g, false, NULL);
	rate(&g, cur, 7, 10);
	order_note(&g, 3, cur, note, 11);
	T_ASSERT(entries(&g) >= 1 + 3 + 2);
	sl_op_watermark(&g.ctx, 11);
	{
		static const char *const want[] = { "21@11" };

		expect(want, 1);
	}
	T_ASSERT_EQ_I64(big_note, 3000);
	T_ASSERT_EQ_I64(big_cur, 2000);
	T_ASSERT(memcmp(note_seen, note, 3000) == 0 && memcmp(cur_seen, cur, 2000) == 0);
	rig_close(&g);
}

static void test_refusals(void)
{
	struct sl_temporal_join_cfg cfg = {
		.in_schema = in_schema, .nleft = NLEFT, .nright = NRIGHT, .left_time = LTIME,
		.right_time = RTIME,
	};
	struct sl_process_fn fn;
	char err[160];

	cfg.nleft = 3;
	T_ASSERT(sl_temporal_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "fields") && fn.arg == NULL);
	cfg.nleft = NLEFT;
	cfg.left_time = 1; /* amount: BIGINT */
	T_ASSERT(sl_temporal_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	cfg.left_time = RTIME; /* a right field */
	T_ASSERT(sl_temporal_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	cfg.left_time = LTIME;
	cfg.right_time = LTIME; /* a left field */
	T_ASSERT(sl_temporal_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "versioned"));
	cfg.right_time = 6; /* rate: BIGINT */
	T_ASSERT(sl_temporal_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	cfg.right_time = RTIME;
	cfg.nkey = 1;
	cfg.left_key[0] = RKEY; /* not a left field */
	T_ASSERT(sl_temporal_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "left key"));
	cfg.left_key[0] = LKEY;
	cfg.ttl_ms = -1;
	T_ASSERT(sl_temporal_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	cfg.in_schema = NULL;
	T_ASSERT(sl_temporal_join_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	sl_temporal_join_free(NULL);
}

int main(void)
{
	in_schema = sl_schema_create();
	out_schema = sl_schema_create();
	T_ASSERT(in_schema && out_schema);
	sl_schema_add(in_schema, "__side", SL_TYPE_BIGINT);
	sl_schema_add(in_schema, "amount", SL_TYPE_BIGINT);
	sl_schema_add(in_schema, "currency", SL_TYPE_STRING);
	sl_schema_add(in_schema, "note", SL_TYPE_STRING);
	sl_schema_add(in_schema, "o_rowtime", SL_TYPE_TIMESTAMP);
	sl_schema_add(in_schema, "r_currency", SL_TYPE_STRING);
	sl_schema_add(in_schema, "rate", SL_TYPE_BIGINT);
	sl_schema_add(in_schema, "r_rowtime", SL_TYPE_TIMESTAMP);
	for (int i = 1; i < sl_schema_nfields(in_schema); i++)
		sl_schema_add(out_schema, sl_schema_name(in_schema, i),
			      sl_schema_type(in_schema, i));

	for (int mode = 0; mode < 3; mode++)
		run_acceptance(mode);
	test_versions();
	test_delete_and_inner();
	test_condition();
	test_null_key();
	test_cleanup();
	test_retention();
	test_big_rows();
	test_refusals();
	sl_schema_destroy(out_schema);
	sl_schema_destroy(in_schema);
	return T_EXIT_PASS;
}
