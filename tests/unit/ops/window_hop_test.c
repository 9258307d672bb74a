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

/* size 10, slide 4: slices of 2 ms, windows end on multiples of 4. */
static void test_slices(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_HOP, .size_ms = 10, .slide_ms = 4 };
	struct wh h;

	wh_init(&h, &spec, aggs, 3);
	wh_rec(&h, 7, "a", 2, 0);  /* windows ending 8, 12, 16 */
	wh_rec(&h, 13, "a", 4, 0); /* 16, 20 */
	wh_rec(&h, 1, "a", 1, 0);  /* 4, 8 */
	wh_rec(&h, 9, "b", 3, 0);  /* 12, 16 */
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 4); /* one per (key, slice) */
	wh_wm(&h, 7);
	EXPECT(&h.main,
	       "+I[a, 1969-12-31 23:59:59.994, 1970-01-01 00:00:00.004, 1, 1, 1] @3\n"
	       "+I[a, 1969-12-31 23:59:59.998, 1970-01-01 00:00:00.008, 2, 3, 1] @7\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 3); /* slice [0, 2) has no window left */
	wh_wm(&h, 15);
	EXPECT(&h.main,
	       "+I[a, 1970-01-01 00:00:00.002, 1970-01-01 00:00:00.012, 1, 2, 2] @11\n"
	       "+I[b, 1970-01-01 00:00:00.002, 1970-01-01 00:00:00.012, 1, 3, 3] @11\n"
	       "+I[a, 1970-01-01 00:00:00.006, 1970-01-01 00:00:00.016, 2, 6, 2] @15\n"
	       "+I[b, 1970-01-01 00:00:00.006, 1970-01-01 00:00:00.016, 1, 3, 3] @15\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 1);
	/* a gap with no data, then a record far ahead: no empty windows are emitted */
	wh_rec(&h, 101, "b", 5, 0); /* 104, 108 */
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main,
	       "+I[a, 1970-01-01 00:00:00.010, 1970-01-01 00:00:00.020, 1, 4, 4] @19\n"
	       "+I[b, 1970-01-01 00:00:00.094, 1970-01-01 00:00:00.104, 1, 5, 5] @103\n"
	       "+I[b, 1970-01-01 00:00:00.098, 1970-01-01 00:00:00.108, 1, 5, 5] @107\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	T_ASSERT_EQ_I64(h.ctx.m.late, 0);
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
	test_lateness();
	return T_EXIT_PASS;
}
