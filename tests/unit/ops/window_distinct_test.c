/*
 * window_distinct_test.c - accumulators that own memory inside the window operator:
 * COUNT(DISTINCT), MIN/MAX of a STRING and FIRST/LAST_VALUE through tumbling windows, hopping
 * windows (slices merged at fire time: set union), session windows (sessions merged by a
 * bridging record), and late updates within allowed lateness (the old result is a copy, and
 * an update that leaves the result unchanged emits nothing). Every accumulator is dropped
 * through its destroy hook: the ASan build of this test fails on any leak or double free.
 */
#include "window_harness.h"

static const struct sl_agg_spec aggs[] = {
	{ .kind = SL_AGG_COUNT_DISTINCT, .field = 1, .name = "dv", .sql_types = true },
	{ .kind = SL_AGG_MIN, .field = 0, .name = "mn", .sql_types = true },
	{ .kind = SL_AGG_FIRST_VALUE, .field = 1, .name = "fv", .sql_types = true },
	{ .kind = SL_AGG_LAST_VALUE, .field = 2, .name = "ld", .sql_types = true },
	{ .kind = SL_AGG_COUNT_DISTINCT, .field = 0, .name = "du", .sql_types = true },
};

#define T0 "1970-01-01 00:00:00.0"

static void tumble(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_TUMBLE,
				       .size_ms = 10,
				       .allowed_lateness_ms = 20 };
	struct wh h;

	wh_init(&h, &spec, aggs, 5);
	T_ASSERT_EQ_I64(sl_schema_type(h.out, 3), SL_TYPE_BIGINT);
	T_ASSERT_EQ_I64(sl_schema_type(h.out, 4), SL_TYPE_STRING);
	wh_rec(&h, 1, "a", 1, 0.5);
	wh_rec(&h, 2, "a", 2, NAN);
	wh_rec(&h, 3, "a", 1, 1.5);
	wh_rec(&h, 4, "a", NOV, NAN);
	wh_rec(&h, 5, "b", NOV, NAN);
	wh_wm(&h, 9);
	EXPECT(&h.main, "+I[a, " T0 "00, " T0 "10, 2, a, 1, 1.5, 1] @9\n"
			"+I[b, " T0 "00, " T0 "10, 0, b, NULL, NULL, 1] @9\n");
	/* late, within lateness: a new distinct value updates; a repeated one changes
	 * nothing visible (FIRST/LAST/d unchanged too) and emits nothing */
	wh_rec(&h, 6, "a", 3, NAN);
	EXPECT(&h.main, "-U[a, " T0 "00, " T0 "10, 2, a, 1, 1.5, 1] @9\n"
			"+U[a, " T0 "00, " T0 "10, 3, a, 1, 1.5, 1] @9\n");
	wh_rec(&h, 7, "a", 2, NAN);
	EXPECT(&h.main, "");
	wh_rec(&h, 12, "a", 9, 2.5);
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main, "+I[a, " T0 "10, " T0 "20, 1, a, 9, 2.5, 1] @19\n");
	wh_fini(&h);
}

static void hop(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_HOP, .size_ms = 10, .slide_ms = 5 };
	struct wh h;

	wh_init(&h, &spec, aggs, 5);
	wh_rec(&h, 1, "a", 1, 0.5);
	wh_rec(&h, 6, "a", 2, NAN);
	wh_rec(&h, 7, "a", 1, 1.5);
	wh_rec(&h, 12, "a", 3, NAN);
	wh_rec(&h, 13, "a", 2, 4.0);
	wh_wm(&h, SL_TS_MAX);
	/* [0,10) = slices {1} u {2,1}; [5,15) = {2,1} u {3,2}: unions, not sums */
	EXPECT(&h.main, "+I[a, 1969-12-31 23:59:59.995, " T0 "05, 1, a, 1, 0.5, 1] @4\n"
			"+I[a, " T0 "00, " T0 "10, 2, a, 1, 1.5, 1] @9\n"
			"+I[a, " T0 "05, " T0 "15, 3, a, 2, 4.0, 1] @14\n"
			"+I[a, " T0 "10, " T0 "20, 2, a, 3, 4.0, 1] @19\n");
	wh_fini(&h);
}

static void session(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_SESSION, .gap_ms = 5 };
	struct wh h;

	wh_init(&h, &spec, aggs, 5);
	wh_rec(&h, 1, "a", 1, 0.5); /* [1, 6) */
	wh_rec(&h, 8, "a", 1, 1.5); /* [8, 13) */
	wh_rec(&h, 9, "b", 7, NAN);
	wh_rec(&h, 4, "a", 2, NAN);  /* [4, 9) bridges them: [1, 13), values {1, 1, 2} */
	wh_rec(&h, 30, "a", 5, NAN); /* a session of its own, left open until the end */
	wh_wm(&h, 20);
	EXPECT(&h.main, "+I[a, " T0 "01, " T0 "13, 2, a, 1, 1.5, 1] @12\n"
			"+I[b, " T0 "09, " T0 "14, 1, b, 7, NULL, 1] @13\n");
	wh_fini(&h); /* the open session's set is freed at close */
}

int main(void)
{
	tumble();
	hop();
	session();
	return T_EXIT_PASS;
}
