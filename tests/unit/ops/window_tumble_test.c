/*
 * window_tumble_test.c - tumbling windows, driven record by record: out-of-order input,
 * firing at watermark >= end - 1, output order (end, key hash), late records to the side
 * output and the late counter, the +inf watermark at end of input, state cleanup.
 */
#include "window_harness.h"

static const struct sl_agg_spec aggs[] = {
	{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "cnt" },
	{ .kind = SL_AGG_SUM, .field = 1, .name = "s" },
	{ .kind = SL_AGG_MAX, .field = 2, .name = "mx" },
};

static uint64_t key_hash(const char *user)
{
	uint8_t buf[64];
	uint32_t len = (uint32_t)strlen(user);

	buf[0] = 2;
	memcpy(buf + 1, &len, 4);
	memcpy(buf + 5, user, len);
	return sl_hash_bytes(buf, 5 + len);
}

static void test_basic(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_TUMBLE, .size_ms = 10, .late_tag = 7 };
	struct wh h;

	/* the golden order below is by key hash: a before b before c */
	T_ASSERT(key_hash("a") < key_hash("b"));
	T_ASSERT(key_hash("b") < key_hash("c"));

	wh_init(&h, &spec, aggs, 3);
	T_ASSERT(strcmp(sl_schema_name(h.out, 0), "user") == 0);
	T_ASSERT(sl_schema_type(h.out, 1) == SL_TYPE_TIMESTAMP);
	T_ASSERT(sl_schema_type(h.out, 3) == SL_TYPE_BIGINT);
	T_ASSERT(sl_schema_type(h.out, 4) == SL_TYPE_BIGINT);
	T_ASSERT(sl_schema_type(h.out, 5) == SL_TYPE_DOUBLE);

	wh_rec(&h, 1, "a", 1, 0.5);
	wh_rec(&h, 7, "b", 2, 1.5);
	wh_rec(&h, 12, "a", 4, 2.0);
	wh_rec(&h, 3, "a", 3, 0.25);
	wh_rec(&h, 9, "b", NOV, NAN);
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 3);
	wh_wm(&h, 8); /* window [0, 10) fires at 9, not before */
	EXPECT(&h.main, "");
	wh_rec(&h, 0, "a", 5, -1.0);
	wh_wm(&h, 9);
	EXPECT(&h.main,
	       "+I[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 3, 9, 0.5] @9\n"
	       "+I[b, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 2, 2, 1.5] @9\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 1);

	/* [0, 10) is gone: late, counted, sent to the side output unchanged */
	wh_rec(&h, 9, "a", 100, 9.0);
	T_ASSERT_EQ_I64(h.ctx.m.late, 1);
	EXPECT(&h.late, "+I[a, 100, 9.0] @9\n");
	EXPECT(&h.main, "");

	wh_rec(&h, 25, "c", 6, 3.0);
	wh_rec(&h, 19, "a", NOV, NAN);
	wh_rec(&h, 21, "c", 7, NAN);
	/* one watermark firing two windows: by end, then key */
	wh_wm(&h, 1000);
	EXPECT(&h.main,
	       "+I[a, 1970-01-01 00:00:00.010, 1970-01-01 00:00:00.020, 2, 4, 2.0] @19\n"
	       "+I[c, 1970-01-01 00:00:00.020, 1970-01-01 00:00:00.030, 2, 13, 3.0] @29\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	T_ASSERT_EQ_I64(h.ctx.m.late, 1);
	EXPECT(&h.late, "");
	wh_fini(&h);
}

/* End of input: the +inf watermark fires everything, however far in the future. */
static void test_end_of_input(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_TUMBLE, .size_ms = 1000, .offset_ms = 250 };
	struct wh h;

	wh_init(&h, &spec, aggs, 1);
	wh_rec(&h, 249, "a", 1, 0);
	wh_rec(&h, 250, "a", 1, 0);
	wh_rec(&h, -5, "b", 1, 0);
	wh_rec(&h, (sl_ts_t)1 << 50, "a", 1, 0);
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main,
	       "+I[a, 1969-12-31 23:59:59.250, 1970-01-01 00:00:00.250, 1] @249\n"
	       "+I[b, 1969-12-31 23:59:59.250, 1970-01-01 00:00:00.250, 1] @249\n"
	       "+I[a, 1970-01-01 00:00:00.250, 1970-01-01 00:00:01.250, 1] @1249\n"
	       "+I[a, 37648-05-06 22:07:22.250, 37648-05-06 22:07:23.250, 1] @1125899906843249\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	/* after the end everything is late */
	wh_rec(&h, 5, "a", 1, 0);
	T_ASSERT_EQ_I64(h.ctx.m.late, 1);
	EXPECT(&h.late, "");
	wh_fini(&h);
}

/* Allowed lateness: fired windows stay until end - 1 + L and re-fire with -U/+U. */
static void test_lateness(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_TUMBLE, .size_ms = 10,
				       .allowed_lateness_ms = 5, .late_tag = 3 };
	struct wh h;

	wh_init(&h, &spec, aggs, 3);
	wh_rec(&h, 2, "a", 1, 1.0);
	wh_wm(&h, 9);
	EXPECT(&h.main, "+I[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 1, 1, 1.0] @9\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 1);
	/* within lateness (9 + 5 > 13): update and re-fire at once */
	wh_wm(&h, 13);
	wh_rec(&h, 5, "a", 2, 0.5);
	EXPECT(&h.main,
	       "-U[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 1, 1, 1.0] @9\n"
	       "+U[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 2, 3, 1.0] @9\n");
	/* a key new to a fired window gets its first firing, +I */
	wh_rec(&h, 8, "b", 7, 2.0);
	EXPECT(&h.main, "+I[b, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 1, 7, 2.0] @9\n");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 2);
	T_ASSERT_EQ_I64(h.ctx.m.late, 0);
	/* watermark 14 = end - 1 + L: the window's state goes, its records are late */
	wh_wm(&h, 14);
	EXPECT(&h.main, "");
	T_ASSERT_EQ_I64(h.ctx.m.state_entries, 0);
	wh_rec(&h, 1, "a", 3, 0.0);
	EXPECT(&h.main, "");
	EXPECT(&h.late, "+I[a, 3, 0.0] @1\n");
	T_ASSERT_EQ_I64(h.ctx.m.late, 1);
	wh_fini(&h);
}

/* No aggregates: the distinct keys of each window. */
static void test_no_aggregates(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_TUMBLE, .size_ms = 10 };
	struct wh h;

	wh_init(&h, &spec, aggs, 0);
	wh_rec(&h, 1, "b", 1, 0);
	wh_rec(&h, 2, "b", 1, 0);
	wh_rec(&h, 11, "a", 1, 0);
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main, "+I[b, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010] @9\n"
			"+I[a, 1970-01-01 00:00:00.010, 1970-01-01 00:00:00.020] @19\n");
	wh_fini(&h);
}

int main(void)
{
	test_basic();
	test_no_aggregates();
	test_end_of_input();
	test_lateness();
	return T_EXIT_PASS;
}
