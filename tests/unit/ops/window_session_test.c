/*
 * window_session_test.c - session windows: merging of touching and overlapping sessions
 * (also bridging two sessions), per-key independence, firing order, Flink's lateness rule
 * on the merged session, allowed lateness with -U/+U, -D for fired sessions that a merge
 * replaces, late side output, and end of input.
 */
#include "window_harness.h"

static const struct sl_agg_spec aggs[] = {
	{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "cnt" },
	{ .kind = SL_AGG_SUM, .field = 1, .name = "s" },
};

static void test_merge(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_SESSION, .gap_ms = 5, .late_tag = 2 };
	struct wh h;

	wh_init(&h, &spec, aggs, 2);
	wh_rec(&h, 1, "a", 1, 0);  /* [1, 6) */
	wh_rec(&h, 10, "a", 2, 0); /* [10, 15) */
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 2);
	wh_rec(&h, 6, "a", 4, 0);  /* [6, 11) touches [1, 6) and overlaps [10, 15) */
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 1);
	wh_rec(&h, 3, "b", 8, 0);  /* [3, 8) */
	wh_wm(&h, 7);
	EXPECT(&h.main, "+I[b, 1970-01-01 00:00:00.003, 1970-01-01 00:00:00.008, 1, 8] @7\n");
	wh_wm(&h, 13);
	EXPECT(&h.main, "");
	wh_rec(&h, 17, "a", 16, 0); /* [17, 22): 15 < 17, separate */
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 2);
	wh_rec(&h, 14, "a", 32, 0); /* [14, 19) bridges [1, 15) and [17, 22) */
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 1);
	wh_rec(&h, 16, "b", 64, 0); /* b's new session [16, 21) */
	wh_wm(&h, 20);
	EXPECT(&h.main, "+I[b, 1970-01-01 00:00:00.016, 1970-01-01 00:00:00.021, 1, 64] @20\n");
	wh_wm(&h, 21);
	EXPECT(&h.main, "+I[a, 1970-01-01 00:00:00.001, 1970-01-01 00:00:00.022, 5, 55] @21\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);

	/* Flink's rule: [26, 31) alone would be late at watermark 40, but it touches the
	 * live [31, 45), so it counts; [2, 7) merges with nothing and is late. */
	wh_rec(&h, 40, "a", 1, 0);
	wh_rec(&h, 31, "a", 1, 0);
	wh_rec(&h, 35, "a", 1, 0);
	wh_wm(&h, 40);
	wh_rec(&h, 26, "a", 100, 0);
	wh_rec(&h, 2, "b", 7, 0);
	T_ASSERT_EQ_I64(h.ctx.m.late, 1);
	EXPECT(&h.late, "+I[b, 7, 0.0] @2\n");
	/* same end time for two keys: key hash order */
	wh_rec(&h, 40, "c", 3, 0);
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main,
	       "+I[a, 1970-01-01 00:00:00.026, 1970-01-01 00:00:00.045, 4, 103] @44\n"
	       "+I[c, 1970-01-01 00:00:00.040, 1970-01-01 00:00:00.045, 1, 3] @44\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	wh_fini(&h);
}

static void test_lateness(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_SESSION, .gap_ms = 5,
				       .allowed_lateness_ms = 5, .late_tag = 4 };
	struct wh h;

	wh_init(&h, &spec, aggs, 2);
	wh_rec(&h, 1, "a", 1, 0); /* [1, 6) */
	wh_wm(&h, 5);
	EXPECT(&h.main, "+I[a, 1970-01-01 00:00:00.001, 1970-01-01 00:00:00.006, 1, 1] @5\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 1);
	/* same bounds: update in place, re-fire */
	wh_rec(&h, 1, "a", 2, 0);
	EXPECT(&h.main,
	       "-U[a, 1970-01-01 00:00:00.001, 1970-01-01 00:00:00.006, 1, 1] @5\n"
	       "+U[a, 1970-01-01 00:00:00.001, 1970-01-01 00:00:00.006, 2, 3] @5\n");
	/* grows to [1, 9): the fired [1, 6) row is retracted, the new one fires at 8 */
	wh_rec(&h, 4, "a", 4, 0);
	EXPECT(&h.main, "-D[a, 1970-01-01 00:00:00.001, 1970-01-01 00:00:00.006, 2, 3] @5\n");
	wh_wm(&h, 8);
	EXPECT(&h.main, "+I[a, 1970-01-01 00:00:00.001, 1970-01-01 00:00:00.009, 3, 7] @8\n");
	/* within lateness and already due: fires at once */
	wh_rec(&h, 0, "b", 5, 0); /* [0, 5): 4 + 5 > 8 */
	EXPECT(&h.main, "+I[b, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.005, 1, 5] @4\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 2);
	wh_wm(&h, 13); /* b cleaned at 9, a at 13 */
	EXPECT(&h.main, "");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	wh_rec(&h, 2, "c", 6, 0); /* [2, 7): 6 + 5 <= 13 */
	wh_rec(&h, 3, "a", 7, 0); /* a's session is gone */
	T_ASSERT_EQ_I64(h.ctx.m.late, 2);
	EXPECT(&h.late, "+I[c, 6, 0.0] @2\n+I[a, 7, 0.0] @3\n");
	EXPECT(&h.main, "");
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main, "");
	wh_fini(&h);
}

int main(void)
{
	test_merge();
	test_lateness();
	return T_EXIT_PASS;
}
