/*
 * window_hop_test.c - hopping windows over slices: a record counted in every window that
 * contains it (size not a multiple of slide, so slices are gcd-sized), merging of slices at
 * fire time, slice cleanup, and allowed lateness where only some of a record's windows are
 * still within it.
 */
#include "window_harness.h"

static const struct sl_agg_spec aggs[] = {
	{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "cnt" },
	{ .kind = SL_AGG_SUM, .field = 1, .name = "s" },
	{ .kind = SL_AGG_MIN, .field = 1, .name = "mn" },
};

/* size 10, slide 4: slices of 2 ms; windows start on multiples of 4, as Flink assigns them
 * (getWindowStartWithOffset(ts, offset, slide)), so they end on 2 + multiples of 4. */
static void test_slices(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_HOP, .size_ms = 10, .slide_ms = 4 };
	struct wh h;

	wh_init(&h, &spec, aggs, 3);
	wh_rec(&h, 7, "a", 2, 0);  /* windows [0, 10), [4, 14) */
	wh_rec(&h, 13, "a", 4, 0); /* [4, 14), [8, 18), [12, 22) */
	wh_rec(&h, 1, "a", 1, 0);  /* [-8, 2), [-4, 6), [0, 10) */
	wh_rec(&h, 9, "b", 3, 0);  /* [0, 10), [4, 14), [8, 18) */
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 4); /* one per (key, slice) */
	wh_wm(&h, 7);
	EXPECT(&h.main,
	       "+I[a, 1969-12-31 23:59:59.992, 1970-01-01 00:00:00.002, 1, 1, 1] @1\n"
	       "+I[a, 1969-12-31 23:59:59.996, 1970-01-01 00:00:00.006, 1, 1, 1] @5\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 4); /* slice [0, 2) is still in [0, 10) */
	wh_wm(&h, 15);
	EXPECT(&h.main,
	       "+I[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 2, 3, 1] @9\n"
	       "+I[b, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 1, 3, 3] @9\n"
	       "+I[a, 1970-01-01 00:00:00.004, 1970-01-01 00:00:00.014, 2, 6, 2] @13\n"
	       "+I[b, 1970-01-01 00:00:00.004, 1970-01-01 00:00:00.014, 1, 3, 3] @13\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 2); /* [0, 2) and [6, 8) have no window left */
	/* a gap with no data, then a record far ahead: no empty windows are emitted */
	wh_rec(&h, 101, "b", 5, 0); /* [92, 102), [96, 106), [100, 110) */
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main,
	       "+I[a, 1970-01-01 00:00:00.008, 1970-01-01 00:00:00.018, 1, 4, 4] @17\n"
	       "+I[b, 1970-01-01 00:00:00.008, 1970-01-01 00:00:00.018, 1, 3, 3] @17\n"
	       "+I[a, 1970-01-01 00:00:00.012, 1970-01-01 00:00:00.022, 1, 4, 4] @21\n"
	       "+I[b, 1970-01-01 00:00:00.092, 1970-01-01 00:00:00.102, 1, 5, 5] @101\n"
	       "+I[b, 1970-01-01 00:00:00.096, 1970-01-01 00:00:00.106, 1, 5, 5] @105\n"
	       "+I[b, 1970-01-01 00:00:00.100, 1970-01-01 00:00:00.110, 1, 5, 5] @109\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	T_ASSERT_EQ_I64(h.ctx.m.late, 0);
	wh_fini(&h);
}

/* slice 4, size 5 (the case of the Flink window tests): [0, 5), [4, 9), [8, 13); an offset
 * of -1 ms moves them to [-1, 4), [3, 8), ... */
static void test_size_not_multiple(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_HOP, .size_ms = 5, .slide_ms = 4 };
	struct wh h;

	wh_init(&h, &spec, aggs, 3);
	wh_rec(&h, 4, "a", 1, 0); /* [0, 5), [4, 9) */
	wh_rec(&h, 6, "a", 2, 0); /* [4, 9) only */
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main,
	       "+I[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.005, 1, 1, 1] @4\n"
	       "+I[a, 1970-01-01 00:00:00.004, 1970-01-01 00:00:00.009, 2, 3, 1] @8\n");
	wh_fini(&h);

	spec.offset_ms = -1;
	wh_init(&h, &spec, aggs, 3);
	wh_rec(&h, 3, "a", 1, 0); /* [-1, 4), [3, 8) */
	wh_rec(&h, 8, "a", 2, 0); /* [7, 12) */
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main,
	       "+I[a, 1969-12-31 23:59:59.999, 1970-01-01 00:00:00.004, 1, 1, 1] @3\n"
	       "+I[a, 1970-01-01 00:00:00.003, 1970-01-01 00:00:00.008, 1, 1, 1] @7\n"
	       "+I[a, 1970-01-01 00:00:00.007, 1970-01-01 00:00:00.012, 1, 2, 2] @11\n");
	wh_fini(&h);
}

/* size 10, slide 5, lateness 5. */
static void test_lateness(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_HOP, .size_ms = 10, .slide_ms = 5,
				       .allowed_lateness_ms = 5, .late_tag = 9 };
	struct wh h;

	wh_init(&h, &spec, aggs, 3);
	wh_rec(&h, 3, "a", 10, 0); /* windows ending 5 and 10 */
	wh_wm(&h, 9);
	EXPECT(&h.main,
	       "+I[a, 1969-12-31 23:59:59.995, 1970-01-01 00:00:00.005, 1, 10, 10] @4\n"
	       "+I[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 1, 10, 10] @9\n");
	wh_wm(&h, 12);
	/* window 5 is past lateness (4 + 5 <= 12), window 10 is not: only 10 re-fires */
	wh_rec(&h, 4, "a", 1, 0);
	EXPECT(&h.main,
	       "-U[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 1, 10, 10] @9\n"
	       "+U[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 2, 11, 1] @9\n");
	/* first data of b in fired window 10: +I */
	wh_rec(&h, 1, "b", 6, 0);
	EXPECT(&h.main, "+I[b, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 1, 6, 6] @9\n");
	/* a record in windows 10 (fired) and 15 (open): re-fires 10, 15 fires later */
	wh_rec(&h, 8, "a", 7, 0);
	EXPECT(&h.main,
	       "-U[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 2, 11, 1] @9\n"
	       "+U[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 3, 18, 1] @9\n");
	T_ASSERT_EQ_I64(h.ctx.m.late, 0);
	EXPECT(&h.late, "");
	wh_wm(&h, 14); /* window 10 past lateness: slice [0, 5) dropped */
	EXPECT(&h.main, "+I[a, 1970-01-01 00:00:00.005, 1970-01-01 00:00:00.015, 1, 7, 7] @14\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 1);
	wh_rec(&h, 2, "a", 5, 0); /* both its windows (5, 10) are past lateness */
	T_ASSERT_EQ_I64(h.ctx.m.late, 1);
	EXPECT(&h.late, "+I[a, 5, 0.0] @2\n");
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main, "");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	wh_fini(&h);
}

int main(void)
{
	test_slices();
	test_size_not_multiple();
	test_lateness();
	return T_EXIT_PASS;
}
