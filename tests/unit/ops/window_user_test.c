/*
 * window_user_test.c - a user aggregate (sl_agg_fn) next to a built-in one: init is called
 * for every new accumulator (its base value shows in the result), add sees the whole row,
 * merge combines slices of a hopping window and merged sessions, result writes the field.
 */
#include "window_harness.h"

struct sq_acc {
	int64_t base; /* set by init: proves init ran before add/merge */
	int64_t sumsq;
};

static void sq_init(void *acc, void *arg)
{
	struct sq_acc *a = acc;

	a->base = *(const int64_t *)arg;
	a->sumsq = 0;
}

static void sq_add(void *acc, const struct sl_row *row, void *arg)
{
	struct sq_acc *a = acc;

	if (!sl_row_is_null(row, 1))
		a->sumsq += sl_row_i64(row, 1) * sl_row_i64(row, 1);
}

static void sq_merge(void *acc, const void *other, void *arg)
{
	((struct sq_acc *)acc)->sumsq += ((const struct sq_acc *)other)->sumsq;
}

static void sq_result(const void *acc, struct sl_row_builder *out, int field, void *arg)
{
	const struct sq_acc *a = acc;

	sl_rowb_set_i64(out, field, a->base + a->sumsq);
}

static const int64_t base = 1000;

static const struct sl_agg_spec aggs[] = {
	{ .kind = SL_AGG_USER, .field = -1, .name = "sq",
	  .user = { .acc_size = sizeof(struct sq_acc), .init = sq_init, .add = sq_add,
		    .merge = sq_merge, .result = sq_result, .result_type = SL_TYPE_BIGINT,
		    .arg = (void *)&base } },
	{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "cnt" },
};

static void test_hop(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_HOP, .size_ms = 10, .slide_ms = 5 };
	struct wh h;

	wh_init(&h, &spec, aggs, 2);
	T_ASSERT_EQ_I64(sl_schema_type(h.out, 3), SL_TYPE_BIGINT);
	wh_rec(&h, 2, "a", 2, 0);
	wh_rec(&h, 7, "a", 3, 0);
	wh_rec(&h, 8, "a", NOV, 0);
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main,
	       "+I[a, 1969-12-31 23:59:59.995, 1970-01-01 00:00:00.005, 1004, 1] @4\n"
	       "+I[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.010, 1013, 3] @9\n"
	       "+I[a, 1970-01-01 00:00:00.005, 1970-01-01 00:00:00.015, 1009, 2] @14\n");
	wh_fini(&h);
}

static void test_session(void)
{
	struct sl_window_spec spec = { .kind = SL_WIN_SESSION, .gap_ms = 3 };
	struct wh h;

	wh_init(&h, &spec, aggs, 2);
	wh_rec(&h, 0, "a", 1, 0);
	wh_rec(&h, 6, "a", 2, 0);
	wh_rec(&h, 3, "a", 4, 0); /* joins [0, 3) and [6, 9) */
	wh_rec(&h, 20, "a", 5, 0);
	wh_wm(&h, SL_TS_MAX);
	EXPECT(&h.main,
	       "+I[a, 1970-01-01 00:00:00.000, 1970-01-01 00:00:00.009, 1021, 3] @8\n"
	       "+I[a, 1970-01-01 00:00:00.020, 1970-01-01 00:00:00.023, 1025, 1] @22\n");
	wh_fini(&h);
}

int main(void)
{
	test_hop();
	test_session();
	return T_EXIT_PASS;
}
