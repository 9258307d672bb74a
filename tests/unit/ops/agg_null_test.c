/*
 * agg_null_test.c - the built-in aggregates through a tumbling window: SQL NULL semantics
 * (COUNT(field) skips NULLs, SUM/AVG/MIN/MAX of only NULLs are NULL, COUNT(*) counts rows),
 * Flink's result types (SUM(INT) BIGINT, AVG(INT) INT with truncating division, AVG(DOUBLE)
 * DOUBLE) and a NULL key.
 */
#include "window_harness.h"

static const struct sl_agg_spec aggs[] = {
	{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "n" },
	{ .kind = SL_AGG_COUNT, .field = 1, .name = "nv" },
	{ .kind = SL_AGG_SUM, .field = 1, .name = "sv" },
	{ .kind = SL_AGG_AVG, .field = 1, .name = "av" },
	{ .kind = SL_AGG_MIN, .field = 2, .name = "mind" },
	{ .kind = SL_AGG_MAX, .field = 2, .name = "maxd" },
	{ .kind = SL_AGG_AVG, .field = 2, .name = "ad" },
	{ .kind = SL_AGG_SUM, .field = 2, .name = "sd" },
	{ .kind = SL_AGG_MAX, .field = 1, .name = "maxv" },
};

int main(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_TUMBLE, .size_ms = 10 };
	static const enum sl_type types[] = {
		SL_TYPE_STRING, SL_TYPE_TIMESTAMP, SL_TYPE_TIMESTAMP, SL_TYPE_BIGINT,
		SL_TYPE_BIGINT, SL_TYPE_BIGINT, SL_TYPE_INT, SL_TYPE_DOUBLE, SL_TYPE_DOUBLE,
		SL_TYPE_DOUBLE, SL_TYPE_DOUBLE, SL_TYPE_INT,
	};
	struct wh h;

	wh_init(&h, &spec, aggs, 9);
	T_ASSERT_EQ_I64(sl_schema_nfields(h.out), 12);
	for (int i = 0; i < 12; i++)
		T_ASSERT_EQ_I64(sl_schema_type(h.out, i), types[i]);
	T_ASSERT(strcmp(sl_schema_name(h.out, 9), "ad") == 0);

	wh_rec(&h, 1, "a", NOV, NAN);
	wh_rec(&h, 2, "a", NOV, NAN);
	wh_rec(&h, 1, "b", 7, 1.5);
	wh_rec(&h, 2, "b", -2, NAN);
	wh_rec(&h, 3, "b", NOV, -0.5);
	wh_rec(&h, 4, "c", -7, 0.1);
	wh_rec(&h, 5, "c", 0, 0.2);
	wh_rec(&h, 6, NULL, 3, NAN);
	wh_wm(&h, SL_TS_MAX);
	/* key hash order: a, b, the NULL key, c */
	EXPECT(&h.main,
	       "+I[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 2, 0, NULL, NULL, NULL, "
	       "NULL, NULL, NULL, NULL] @9\n"
	       "+I[b, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 3, 2, 5, 2, -0.5, 1.5, "
	       "0.5, 1.0, 7] @9\n"
	       "+I[NULL, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 1, 1, 3, 3, NULL, NULL, "
	       "NULL, NULL, 3] @9\n"
	       "+I[c, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 2, 2, -7, -3, 0.1, 0.2, "
	       "0.15000000000000002, 0.30000000000000004, 0] @9\n");
	wh_fini(&h);
	return T_EXIT_PASS;
}
