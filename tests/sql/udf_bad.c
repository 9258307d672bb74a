/*
 * udf_bad.c - a shared object of C functions sluice must refuse or fence (tests/sql/udf.py):
 * a descriptor of another ABI, one without a function, a function that fails, one that
 * returns a string outside its buffer and arguments, and a DOUBLE function for the
 * widening of INT arguments.
 */
#include <sluice/udf.h>

static int fail(const struct sl_udf_value *args, struct sl_udf_value *result, char *buf,
		uint32_t cap)
{
	(void)args;
	(void)result;
	(void)buf;
	(void)cap;
	return 5;
}

static int stray(const struct sl_udf_value *args, struct sl_udf_value *result, char *buf,
		 uint32_t cap)
{
	static const char elsewhere[] = "not in the buffer";

	(void)args;
	(void)buf;
	(void)cap;
	result->is_null = false;
	result->v.s.ptr = elsewhere;
	result->v.s.len = 3;
	return 0;
}

static int half(const struct sl_udf_value *args, struct sl_udf_value *result, char *buf,
		uint32_t cap)
{
	(void)buf;
	(void)cap;
	result->is_null = false;
	result->v.d = args[0].v.d / 2;
	return 0;
}

const struct sl_udf t_future_abi = {
	.abi = SL_UDF_ABI + 1, .name = "future", .result = SL_UDF_INT, .fn = fail
};
const struct sl_udf t_no_fn = { .abi = SL_UDF_ABI, .name = "nofn", .result = SL_UDF_INT };
const struct sl_udf t_fail = {
	.abi = SL_UDF_ABI, .name = "fail", .result = SL_UDF_INT, .nargs = 1,
	.args = { SL_UDF_INT }, .fn = fail
};
const struct sl_udf t_stray = {
	.abi = SL_UDF_ABI, .name = "stray", .result = SL_UDF_STRING, .fn = stray
};
const struct sl_udf t_half = {
	.abi = SL_UDF_ABI, .name = "half", .result = SL_UDF_DOUBLE, .nargs = 1,
	.args = { SL_UDF_DOUBLE }, .fn = half
};
