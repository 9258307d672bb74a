/*
 * window_cfg_test.c - plan-time validation of window aggregations: the output schema, and
 * one clear error for each bad spec (unsupported aggregate/type pairs, bad sizes, a user
 * aggregate without merge where merging is needed, duplicate output columns).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "window.h"
#include "tests/test.h"

static struct sl_schema *in;
static const int key0[] = { 0 };

static void expect_err(const struct sl_window_spec *spec, const struct sl_agg_spec *aggs,
		       int naggs, const char *msg, int line)
{
	struct sl_schema *out = (struct sl_schema *)1;
	struct sl_error err = { 0 };
	struct sl_window_cfg *c;

	c = sl_window_cfg_create(spec, aggs, naggs, in, key0, 1, &out, &err);
	if (c || out || err.code != -EINVAL || strcmp(err.msg, msg) != 0) {
		fprintf(stderr, "line %d: got cfg %p code %d msg '%s', want '%s'\n", line,
			(void *)c, err.code, err.msg, msg);
		exit(T_EXIT_FAIL);
	}
}

static void noop_add(void *acc, const struct sl_row *row, void *arg)
{
}

static void noop_result(const void *acc, struct sl_row_builder *out, int field, void *arg)
{
}

int main(void)
{
	struct sl_window_spec tumble = { .kind = SL_WIN_TUMBLE, .size_ms = 10 };
	struct sl_window_spec sess = { .kind = SL_WIN_SESSION, .gap_ms = 10 };
	struct sl_window_spec bad;
	struct sl_agg_spec a[2] = { { .kind = SL_AGG_SUM, .field = 0, .name = "s" } };
	struct sl_agg_fn nomerge = { .acc_size = 8, .add = noop_add, .result = noop_result,
				     .result_type = SL_TYPE_DOUBLE };
	struct sl_schema *out = NULL;
	struct sl_error err = { 0 };
	struct sl_window_cfg *c;

	in = sl_schema_create();
	T_ASSERT(in && sl_schema_add(in, "user", SL_TYPE_STRING) == 0);
	T_ASSERT(sl_schema_add(in, "v", SL_TYPE_INT) == 1);
	T_ASSERT(sl_schema_add(in, "d", SL_TYPE_DOUBLE) == 2);
	expect_err(&tumble, a, 1, "window: SUM over STRING field 'user' is not supported",
		   __LINE__);
	a[0].kind = SL_AGG_AVG;
	expect_err(&tumble, a, 1, "window: AVG over STRING field 'user' is not supported",
		   __LINE__);
	a[0].field = 3;
	expect_err(&tumble, a, 1, "window: AVG 's' refers to field 3 of 3", __LINE__);
	a[0] = (struct sl_agg_spec){ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "user" };
	expect_err(&tumble, a, 1, "window: duplicate output column 'user'", __LINE__);
	a[0].name = NULL;
	expect_err(&tumble, a, 1, "window: aggregate COUNT(*) has no output name", __LINE__);
	a[0] = (struct sl_agg_spec){ .kind = SL_AGG_USER, .name = "u", .user = nomerge };
	expect_err(&sess, a, 1, "window: user aggregate 'u' needs merge for session windows",
		   __LINE__);
	bad = (struct sl_window_spec){ .kind = SL_WIN_HOP, .size_ms = 10, .slide_ms = 4 };
	expect_err(&bad, a, 1, "window: user aggregate 'u' needs merge for hopping windows",
		   __LINE__);
	bad.slide_ms = 0;
	expect_err(&bad, a, 1, "window: hopping size and slide must be > 0 ms, got 10/0",
		   __LINE__);
	bad = (struct sl_window_spec){ .kind = SL_WIN_TUMBLE, .size_ms = 10,
				       .allowed_lateness_ms = -1 };
	expect_err(&bad, a, 1, "window: negative allowed lateness -1", __LINE__);
	bad = (struct sl_window_spec){ .kind = SL_WIN_SESSION };
	expect_err(&bad, a, 1, "window: session gap must be > 0 ms, got 0", __LINE__);

	/* a tumbling window never merges: a user aggregate without merge is fine */
	c = sl_window_cfg_create(&tumble, a, 1, in, key0, 1, &out, &err);
	T_ASSERT(c && out && err.code == 0);
	T_ASSERT_EQ_I64(sl_schema_nfields(out), 4);
	T_ASSERT(strcmp(sl_schema_name(out, 1), "window_start") == 0);
	T_ASSERT(strcmp(sl_schema_name(out, 2), "window_end") == 0);
	T_ASSERT(strcmp(sl_schema_name(out, 3), "u") == 0);
	T_ASSERT_EQ_I64(sl_schema_type(out, 3), SL_TYPE_DOUBLE);
	sl_window_cfg_destroy(c);
	sl_schema_destroy(out);
	sl_window_cfg_destroy(NULL);
	sl_schema_destroy(in);
	return T_EXIT_PASS;
}
