/*
 * window_cumulate_test.c - cumulating windows (Flink's CUMULATE) over slices: every window of
 * a period starts at the period's start and a record counts in each window of its period that
 * ends after it; windows fired in (end, key hash) order, in-order and shuffled input giving
 * the same output, offsets, allowed lateness where only some windows of a period are still
 * within it (-U/+U, +I for a key new to a fired window), records beyond lateness, state
 * cleanup, config checks, and a randomized comparison against a brute-force computation of
 * every cumulative window.
 */
#include <errno.h>

#include "window_harness.h"

static const struct sl_agg_spec aggs[] = {
	{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "cnt" },
	{ .kind = SL_AGG_SUM, .field = 1, .name = "s" },
	{ .kind = SL_AGG_MIN, .field = 1, .name = "mn" },
	{ .kind = SL_AGG_MAX, .field = 1, .name = "mx" },
	{ .kind = SL_AGG_COUNT_DISTINCT, .field = 1, .name = "dv" },
};
#define NAGGS 5

#define T0 "1970-01-01 00:00:00.0"

/* The in-order run's whole output, which the shuffled run must reproduce. */
#define OUT_P0                                                                                     \
	"+I[a, " T0 "00, " T0 "02, 2, 3, 1, 2, 2] @1\n"                                            \
	"+I[a, " T0 "00, " T0 "04, 2, 3, 1, 2, 2] @3\n"                                            \
	"+I[b, " T0 "00, " T0 "04, 1, 5, 5, 5, 1] @3\n"                                            \
	"+I[a, " T0 "00, " T0 "06, 3, 4, 1, 2, 2] @5\n"                                            \
	"+I[b, " T0 "00, " T0 "06, 1, 5, 5, 5, 1] @5\n"
#define OUT_P1                                                                                     \
	"+I[a, " T0 "06, " T0 "08, 1, 3, 3, 3, 1] @7\n"                                            \
	"+I[c, " T0 "06, " T0 "08, 1, NULL, NULL, NULL, 0] @7\n"                                   \
	"+I[a, " T0 "06, " T0 "10, 1, 3, 3, 3, 1] @9\n"                                            \
	"+I[c, " T0 "06, " T0 "10, 1, NULL, NULL, NULL, 0] @9\n"                                   \
	"+I[a, " T0 "06, " T0 "12, 1, 3, 3, 3, 1] @11\n"                                           \
	"+I[b, " T0 "06, " T0 "12, 1, 4, 4, 4, 1] @11\n"                                           \
	"+I[c, " T0 "06, " T0 "12, 1, NULL, NULL, NULL, 0] @11\n"

static const struct sl_window_spec spec_2_6 = {
	.kind = SL_WIN_CUMULATE, .size_ms = 6, .slide_ms = 2, .late_tag = 7
};

/* step 2, max size 6: periods [0, 6), [6, 12); windows end every 2 ms. */
static void test_in_order(void)
{
	struct wh h;

	wh_init(&h, &spec_2_6, aggs, NAGGS);
	T_ASSERT(sl_schema_type(h.out, 1) == SL_TYPE_TIMESTAMP);
	T_ASSERT(sl_schema_type(h.out, 7) == SL_TYPE_BIGINT);
	wh_rec(&h, 0, "a", 1, 0);
	wh_rec(&h, 1, "a", 2, 0);
	wh_wm(&h, 1);
	EXPECT(&h.main, "+I[a, " T0 "00, " T0 "02, 2, 3, 1, 2, 2] @1\n");
	wh_rec(&h, 3, "b", 5, 0);
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 2);
	/* a has no row in [2, 4) but its window [0, 4) still fires: the period so far */
	wh_wm(&h, 3);
	EXPECT(&h.main, "+I[a, " T0 "00, " T0 "04, 2, 3, 1, 2, 2] @3\n"
			"+I[b, " T0 "00, " T0 "04, 1, 5, 5, 5, 1] @3\n");
	wh_rec(&h, 4, "a", 1, 0);
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 3); /* slices live until their period ends */
	wh_wm(&h, 5);
	EXPECT(&h.main, "+I[a, " T0 "00, " T0 "06, 3, 4, 1, 2, 2] @5\n"
			"+I[b, " T0 "00, " T0 "06, 1, 5, 5, 5, 1] @5\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	wh_rec(&h, 7, "a", 3, 0);
	wh_rec(&h, 6, "c", NOV, 0);
	wh_rec(&h, 11, "b", 4, 0);
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main, OUT_P1);
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	T_ASSERT_EQ_I64(h.ctx.m.late, 0);
	EXPECT(&h.late, "");
	wh_fini(&h);
}

/* The same rows shuffled across both periods, with fewer watermarks: the same output. */
static void test_out_of_order(void)
{
	struct wh h;

	wh_init(&h, &spec_2_6, aggs, NAGGS);
	wh_rec(&h, 11, "b", 4, 0);
	wh_rec(&h, 4, "a", 1, 0);
	wh_rec(&h, 7, "a", 3, 0);
	wh_rec(&h, 3, "b", 5, 0);
	wh_rec(&h, 1, "a", 2, 0);
	wh_rec(&h, 6, "c", NOV, 0);
	wh_rec(&h, 0, "a", 1, 0);
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 6);
	wh_wm(&h, 6); /* [6, 8) is not due yet (end - 1 = 7) */
	EXPECT(&h.main, OUT_P0);
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 3);
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main, OUT_P1);
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	T_ASSERT_EQ_I64(h.ctx.m.late, 0);
	wh_fini(&h);
}

/* step 2, max size 6, lateness 4: a record re-fires only the windows of its period that
 * fired and are within lateness; one beyond it for the whole period goes to the side. */
static void test_lateness(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_CUMULATE,
				       .size_ms = 6,
				       .slide_ms = 2,
				       .allowed_lateness_ms = 4,
				       .late_tag = 9 };
	struct wh h;

	wh_init(&h, &spec, aggs, NAGGS);
	wh_rec(&h, 1, "a", 10, 0);
	wh_wm(&h, 3);
	EXPECT(&h.main, "+I[a, " T0 "00, " T0 "02, 1, 10, 10, 10, 1] @1\n"
			"+I[a, " T0 "00, " T0 "04, 1, 10, 10, 10, 1] @3\n");
	/* slice [0, 2): windows 2 and 4 fired (both re-fire), 6 has not */
	wh_rec(&h, 0, "a", 1, 0);
	EXPECT(&h.main, "-U[a, " T0 "00, " T0 "02, 1, 10, 10, 10, 1] @1\n"
			"+U[a, " T0 "00, " T0 "02, 2, 11, 1, 10, 2] @1\n"
			"-U[a, " T0 "00, " T0 "04, 1, 10, 10, 10, 1] @3\n"
			"+U[a, " T0 "00, " T0 "04, 2, 11, 1, 10, 2] @3\n");
	/* b's first row of the period, in fired window 4: +I */
	wh_rec(&h, 2, "b", 7, 0);
	EXPECT(&h.main, "+I[b, " T0 "00, " T0 "04, 1, 7, 7, 7, 1] @3\n");
	/* a's first row in slice [2, 4): window 4 merges it with slice [0, 2) */
	wh_rec(&h, 3, "a", 2, 0);
	EXPECT(&h.main, "-U[a, " T0 "00, " T0 "04, 2, 11, 1, 10, 2] @3\n"
			"+U[a, " T0 "00, " T0 "04, 3, 13, 1, 10, 3] @3\n");
	wh_rec(&h, 6, "b", 1, 0);
	wh_wm(&h, 6);
	EXPECT(&h.main, "+I[a, " T0 "00, " T0 "06, 3, 13, 1, 10, 3] @5\n"
			"+I[b, " T0 "00, " T0 "06, 1, 7, 7, 7, 1] @5\n");
	/* window 2 is past lateness (1 + 4 <= 6): only 4 and 6 re-fire */
	wh_rec(&h, 1, "a", 5, 0);
	EXPECT(&h.main, "-U[a, " T0 "00, " T0 "04, 3, 13, 1, 10, 3] @3\n"
			"+U[a, " T0 "00, " T0 "04, 4, 18, 1, 10, 4] @3\n"
			"-U[a, " T0 "00, " T0 "06, 3, 13, 1, 10, 3] @5\n"
			"+U[a, " T0 "00, " T0 "06, 4, 18, 1, 10, 4] @5\n");
	T_ASSERT_EQ_I64(h.ctx.m.late, 0);
	wh_wm(&h, 9); /* period [0, 6) past lateness (5 + 4 <= 9): dropped */
	EXPECT(&h.main, "+I[b, " T0 "06, " T0 "08, 1, 1, 1, 1, 1] @7\n"
			"+I[b, " T0 "06, " T0 "10, 1, 1, 1, 1, 1] @9\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 1);
	wh_rec(&h, 5, "a", 1, 0);
	T_ASSERT_EQ_I64(h.ctx.m.late, 1);
	EXPECT(&h.late, "+I[a, 1, 0.0] @5\n");
	EXPECT(&h.main, "");
	wh_rec(&h, 8, "b", 2, 0);
	EXPECT(&h.main, "-U[b, " T0 "06, " T0 "10, 1, 1, 1, 1, 1] @9\n"
			"+U[b, " T0 "06, " T0 "10, 2, 3, 1, 2, 2] @9\n");
	/* c new in two fired windows of the period: +I for both */
	wh_rec(&h, 7, "c", 3, 0);
	EXPECT(&h.main, "+I[c, " T0 "06, " T0 "08, 1, 3, 3, 3, 1] @7\n"
			"+I[c, " T0 "06, " T0 "10, 1, 3, 3, 3, 1] @9\n");
	wh_wm(&h, 12);
	EXPECT(&h.main, "+I[b, " T0 "06, " T0 "12, 2, 3, 1, 2, 2] @11\n"
			"+I[c, " T0 "06, " T0 "12, 1, 3, 3, 3, 1] @11\n");
	/* window 8 past lateness (7 + 4 <= 12), 10 and 12 re-fire */
	wh_rec(&h, 6, "c", 4, 0);
	EXPECT(&h.main, "-U[c, " T0 "06, " T0 "10, 1, 3, 3, 3, 1] @9\n"
			"+U[c, " T0 "06, " T0 "10, 2, 7, 3, 4, 2] @9\n"
			"-U[c, " T0 "06, " T0 "12, 1, 3, 3, 3, 1] @11\n"
			"+U[c, " T0 "06, " T0 "12, 2, 7, 3, 4, 2] @11\n");
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main, "");
	EXPECT(&h.late, "");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	T_ASSERT_EQ_I64(h.ctx.m.late, 1);
	wh_fini(&h);
}

/* Offset 1 (and -5, the same alignment modulo 6): periods [1, 7), [7, 13), [-5, 1). */
static void test_offset(void)
{
	static const char *want = "+I[a, 1969-12-31 23:59:59.995, " T0 "01, 1, 1, 1, 1, 1] @0\n"
				  "+I[a, " T0 "01, " T0 "03, 1, 2, 2, 2, 1] @2\n"
				  "+I[a, " T0 "01, " T0 "05, 1, 2, 2, 2, 1] @4\n"
				  "+I[a, " T0 "01, " T0 "07, 2, 5, 2, 3, 2] @6\n"
				  "+I[a, " T0 "07, " T0 "09, 1, 4, 4, 4, 1] @8\n"
				  "+I[a, " T0 "07, " T0 "11, 1, 4, 4, 4, 1] @10\n"
				  "+I[a, " T0 "07, " T0 "13, 1, 4, 4, 4, 1] @12\n";
	static const sl_ts_t offsets[] = { 1, -5, 7 };

	for (int i = 0; i < 3; i++) {
		struct sl_window_spec spec = { .kind = SL_WIN_CUMULATE,
					       .size_ms = 6,
					       .slide_ms = 2,
					       .offset_ms = offsets[i] };
		struct wh h;

		wh_init(&h, &spec, aggs, NAGGS);
		wh_rec(&h, 7, "a", 4, 0);
		wh_rec(&h, 0, "a", 1, 0);
		wh_rec(&h, 6, "a", 3, 0);
		wh_rec(&h, 1, "a", 2, 0);
		wh_wm(&h, SL_TS_MAX);
		EXPECT(&h.main, want);
		T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
		wh_fini(&h);
	}
}

static void no_merge_add(void *acc, const struct sl_row *row, void *arg)
{
	(void)row;
	(void)arg;
	++*(int64_t *)acc;
}

static void no_merge_result(const void *acc, struct sl_row_builder *out, int field, void *arg)
{
	(void)arg;
	sl_rowb_set_i64(out, field, *(const int64_t *)acc);
}

static void test_cfg(void)
{
	struct sl_agg_spec user = { .kind = SL_AGG_USER,
				    .field = -1,
				    .name = "u",
				    .user = { .acc_size = 8,
					      .add = no_merge_add,
					      .result = no_merge_result,
					      .result_type = SL_TYPE_BIGINT } };
	static const int key[] = { 0 };
	struct sl_schema *in = wh_input_schema(), *out = NULL;
	struct sl_window_spec s = { .kind = SL_WIN_CUMULATE, .size_ms = 5, .slide_ms = 2 };
	struct sl_error err = { 0 };
	struct sl_window_cfg *c;

	T_ASSERT(!sl_window_cfg_create(&s, aggs, NAGGS, in, key, 1, &out, &err));
	T_ASSERT(err.code == -EINVAL && strstr(err.msg, "multiple of the step"));
	s.slide_ms = 0;
	T_ASSERT(!sl_window_cfg_create(&s, aggs, NAGGS, in, key, 1, &out, &err));
	s = (struct sl_window_spec){ .kind = SL_WIN_CUMULATE, .size_ms = -4, .slide_ms = 2 };
	T_ASSERT(!sl_window_cfg_create(&s, aggs, NAGGS, in, key, 1, &out, &err));
	/* windows merge slices: a user aggregate needs merge, unless max size = step */
	s = (struct sl_window_spec){ .kind = SL_WIN_CUMULATE, .size_ms = 4, .slide_ms = 2 };
	memset(&err, 0, sizeof err);
	T_ASSERT(!sl_window_cfg_create(&s, &user, 1, in, key, 1, &out, &err));
	T_ASSERT(err.code == -EINVAL && strstr(err.msg, "merge for cumulating windows"));
	s.slide_ms = 4;
	c = sl_window_cfg_create(&s, &user, 1, in, key, 1, &out, &err);
	T_ASSERT(c && out);
	sl_window_cfg_destroy(c);
	sl_schema_destroy(out);
	sl_schema_destroy(in);
}

/* ---- randomized comparison with a brute-force model --------------------------------------- */

#define NKEYS 5
#define NREC  600
#define TMAX  300 /* event times in [0, TMAX) */
#define EBASE 64  /* window ends (>= -40) index res[] at end + EBASE */
#define NEND  (TMAX + 2 * EBASE)

struct res {
	bool present;
	int64_t v[NAGGS]; /* cnt, sum, min, max, distinct; INT64_MIN = NULL */
};

static struct res got[NKEYS][NEND];
static sl_ts_t got_start[NKEYS][NEND];
static sl_ts_t fire_last_end; /* ends of the rows fired by one watermark never decrease */
static bool in_wm;
static const struct sl_window_spec *o_spec;
/* Over all rounds: late +I / -U/+U pairs and dropped records, so coverage cannot vanish. */
static int64_t n_late_insert, n_update, n_dropped;

static sl_ts_t mod_floor(sl_ts_t a, sl_ts_t m)
{
	sl_ts_t r = a % m;

	return r < 0 ? r + m : r;
}

/* Start of cumulating window e: its period's start. */
static sl_ts_t period_start(const struct sl_window_spec *s, sl_ts_t e)
{
	return (e - 1) - mod_floor(e - 1 - s->offset_ms, s->size_ms);
}

/* Applies one changelog row to got[]: +I on an absent window, -U equal to the current
 * result, +U on a window whose -U just came. */
static void oracle_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	uint32_t len;
	const char *k = sl_row_str(row, 0, &len);
	sl_ts_t start = sl_row_i64(row, 1), end = sl_row_i64(row, 2);
	int ki;
	struct res r = { .present = true };
	static bool pending_u;

	(void)ctx;
	T_ASSERT(len == 2 && k[0] == 'k');
	ki = k[1] - '0';
	T_ASSERT(ki >= 0 && ki < NKEYS);
	T_ASSERT(end + EBASE >= 0 && end + EBASE < NEND);
	T_ASSERT_EQ_I64(ts, end - 1);
	T_ASSERT_EQ_I64(start, period_start(o_spec, end));
	T_ASSERT(end > start && end - start <= o_spec->size_ms);
	T_ASSERT_EQ_I64((end - start) % o_spec->slide_ms, 0);
	for (int i = 0; i < NAGGS; i++)
		r.v[i] = sl_row_is_null(row, 3 + i) ? INT64_MIN : sl_row_i64(row, 3 + i);
	if (in_wm) {
		T_ASSERT(row->kind == SL_ROW_INSERT);
		T_ASSERT(end >= fire_last_end);
		fire_last_end = end;
	}
	switch (row->kind) {
	case SL_ROW_INSERT:
		T_ASSERT(!pending_u && !got[ki][end + EBASE].present);
		n_late_insert += !in_wm;
		got[ki][end + EBASE] = r;
		got_start[ki][end + EBASE] = start;
		break;
	case SL_ROW_UPDATE_BEFORE:
		T_ASSERT(!pending_u && got[ki][end + EBASE].present);
		T_ASSERT(memcmp(got[ki][end + EBASE].v, r.v, sizeof r.v) == 0);
		pending_u = true;
		break;
	case SL_ROW_UPDATE_AFTER:
		T_ASSERT(pending_u);
		pending_u = false;
		n_update++;
		T_ASSERT(memcmp(got[ki][end + EBASE].v, r.v, sizeof r.v) != 0);
		got[ki][end + EBASE] = r;
		break;
	default:
		T_ASSERT(!"unexpected row kind");
	}
}

static const struct sl_op_ops oracle_ops = { .name = "oracle", .process = oracle_process };

struct orec {
	sl_ts_t ts, wm; /* event time, watermark when it arrived */
	int key;
	int64_t v; /* NOV: NULL */
};

/* The final result of window e for key k: every record of k in [p(e), e) that was not late
 * for the whole period and arrived while e was not yet past end - 1 + lateness. */
static struct res model(const struct sl_window_spec *s, const struct orec *r, int n, int k,
			sl_ts_t e)
{
	sl_ts_t p = period_start(s, e), L = s->allowed_lateness_ms;
	struct res m = { .v = { 0, INT64_MIN, INT64_MIN, INT64_MIN, 0 } };
	bool seen[64] = { 0 };

	for (int i = 0; i < n; i++) {
		sl_ts_t pe = period_start(s, r[i].ts + 1) + s->size_ms;

		if (r[i].key != k || r[i].ts < p || r[i].ts >= e)
			continue;
		if (pe - 1 + L <= r[i].wm || e - 1 + L <= r[i].wm)
			continue;
		m.present = true;
		m.v[0]++;
		if (r[i].v == NOV)
			continue;
		m.v[1] = m.v[1] == INT64_MIN ? r[i].v : m.v[1] + r[i].v;
		m.v[2] = m.v[2] == INT64_MIN || r[i].v < m.v[2] ? r[i].v : m.v[2];
		m.v[3] = m.v[3] == INT64_MIN || r[i].v > m.v[3] ? r[i].v : m.v[3];
		if (!seen[r[i].v]) {
			seen[r[i].v] = true;
			m.v[4]++;
		}
	}
	return m;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

static void oracle_round(int round)
{
	static const sl_ts_t lateness[] = { 0, 0, 3, 10 };
	static struct orec recs[NREC];
	struct sl_window_spec spec = { .kind = SL_WIN_CUMULATE };
	sl_ts_t clock = 0, wm = SL_TS_MIN;
	int64_t late = 0, fired = 0;
	struct wh h;
	int n = 0;

	spec.slide_ms = 1 + rnd(4);
	spec.size_ms = spec.slide_ms * (1 + rnd(6));
	spec.offset_ms = (sl_ts_t)rnd(17) - 8;
	spec.allowed_lateness_ms = lateness[rnd(4)];
	spec.late_tag = 3;
	o_spec = &spec;
	memset(got, 0, sizeof got);
	wh_init(&h, &spec, aggs, NAGGS);
	h.main.def.ops = &oracle_ops;
	for (int step = 0; n < NREC; step++) {
		if (rnd(5) == 0) {
			sl_ts_t to = clock - (sl_ts_t)rnd(8);

			if (to > wm) {
				in_wm = true;
				fire_last_end = SL_TS_MIN;
				wm = to;
				wh_wm(&h, wm);
				in_wm = false;
			}
			continue;
		}
		if (clock < TMAX - 1 && rnd(2))
			clock++;
		recs[n] = (struct orec){ .ts = clock - (sl_ts_t)rnd(16),
					 .wm = wm,
					 .key = (int)rnd(NKEYS),
					 .v = rnd(7) ? (int64_t)rnd(40) : NOV };
		if (recs[n].ts < 0)
			recs[n].ts = 0;
		{
			char k[3] = { 'k', (char)('0' + recs[n].key), 0 };
			uint64_t before = h.ctx.m.late;

			wh_rec(&h, recs[n].ts, k, recs[n].v, 0);
			if (h.ctx.m.late != before)
				late++;
		}
		n++;
	}
	in_wm = true;
	fire_last_end = SL_TS_MIN;
	wh_wm(&h, SL_TS_MAX);
	in_wm = false;
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	T_ASSERT_EQ_I64(h.late.rows, late);
	T_ASSERT_EQ_I64(h.ctx.m.late, late);
	n_dropped += late;
	/* every window of every key: the model's final result is what the changelog left */
	for (int k = 0; k < NKEYS; k++) {
		for (sl_ts_t e = -EBASE + 1; e < NEND - EBASE; e++) {
			struct res want = { 0 };
			const struct res *g = &got[k][e + EBASE];

			if (mod_floor(e - spec.offset_ms, spec.slide_ms) == 0)
				want = model(&spec, recs, n, k, e);
			if (want.present != g->present ||
			    (want.present && memcmp(want.v, g->v, sizeof want.v) != 0)) {
				fprintf(stderr,
					"round %d (step %lld, max %lld, offset %lld, lateness "
					"%lld): key k%d window end %lld: want %d [%lld %lld "
					"%lld %lld %lld] got %d [%lld %lld %lld %lld %lld]\n",
					round, (long long)spec.slide_ms, (long long)spec.size_ms,
					(long long)spec.offset_ms,
					(long long)spec.allowed_lateness_ms, k, (long long)e,
					want.present, (long long)want.v[0], (long long)want.v[1],
					(long long)want.v[2], (long long)want.v[3],
					(long long)want.v[4], g->present, (long long)g->v[0],
					(long long)g->v[1], (long long)g->v[2], (long long)g->v[3],
					(long long)g->v[4]);
				exit(T_EXIT_FAIL);
			}
			fired += g->present;
		}
	}
	T_ASSERT(fired > 0);
	h.late.len = 0; /* late rows were counted, their text is not checked here */
	wh_fini(&h);
}

int main(void)
{
	test_in_order();
	test_out_of_order();
	test_lateness();
	test_offset();
	test_cfg();
	for (int r = 0; r < 200; r++)
		oracle_round(r);
	fprintf(stderr, "oracle: %lld late +I, %lld -U/+U, %lld dropped\n",
		(long long)n_late_insert, (long long)n_update, (long long)n_dropped);
	T_ASSERT(n_late_insert > 0 && n_update > 0 && n_dropped > 0);
	return T_EXIT_PASS;
}
