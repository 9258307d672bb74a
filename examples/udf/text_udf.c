/*
 * text_udf.c - example scalar SQL functions in C (sluice/udf.h), loaded by a job file with
 *
 *   CREATE FUNCTION rot13 AS 'build/examples/libsluice_text_udf.so:sl_example_rot13' LANGUAGE C;
 *   CREATE FUNCTION fnv1a AS 'build/examples/libsluice_text_udf.so:sl_example_fnv1a' LANGUAGE C;
 *   CREATE FUNCTION clamp AS 'build/examples/libsluice_text_udf.so:sl_example_clamp' LANGUAGE C;
 *   SELECT rot13(name), fnv1a(name), clamp(score, 0, 100) FROM users;
 *
 * Each export is a const struct sl_udf describing the function: the planner checks calls
 * against it. Build alone with: cc -shared -fPIC -I engine/include -o libtext.so text_udf.c
 * (meson builds it as build/examples/libsluice_text_udf.so). Nothing here allocates or keeps
 * state, so the functions can run on every shard at once.
 */
#include <sluice/udf.h>

/* rot13(s STRING) -> STRING: ASCII letters rotated by 13, other bytes kept. */
static int rot13(const struct sl_udf_value *args, struct sl_udf_value *result, char *buf,
		 uint32_t cap)
{
	const char *s = args[0].v.s.ptr;
	uint32_t n = args[0].v.s.len;

	if (n > cap)
		return -1; /* sluice makes the result NULL and counts the failure */
	for (uint32_t i = 0; i < n; i++) {
		char c = s[i];

		if ((c >= 'a' && c <= 'm') || (c >= 'A' && c <= 'M'))
			c = (char)(c + 13);
		else if ((c >= 'n' && c <= 'z') || (c >= 'N' && c <= 'Z'))
			c = (char)(c - 13);
		buf[i] = c;
	}
	result->is_null = false;
	result->v.s.ptr = buf;
	result->v.s.len = n;
	return 0;
}

/* fnv1a(s STRING) -> BIGINT: the 64-bit FNV-1a hash of the bytes, as a signed value. */
static int fnv1a(const struct sl_udf_value *args, struct sl_udf_value *result, char *buf,
		 uint32_t cap)
{
	uint64_t h = 14695981039346656037ull;

	(void)buf;
	(void)cap;
	for (uint32_t i = 0; i < args[0].v.s.len; i++) {
		h ^= (unsigned char)args[0].v.s.ptr[i];
		h *= 1099511628211ull;
	}
	result->is_null = false;
	result->v.i = (int64_t)h;
	return 0;
}

/* clamp(x BIGINT, lo BIGINT, hi BIGINT) -> BIGINT; called on NULLs too: a NULL bound is
 * no bound, a NULL x stays NULL. */
static int clamp(const struct sl_udf_value *args, struct sl_udf_value *result, char *buf,
		 uint32_t cap)
{
	int64_t x = args[0].v.i;

	(void)buf;
	(void)cap;
	result->is_null = args[0].is_null;
	if (!args[1].is_null && x < args[1].v.i)
		x = args[1].v.i;
	if (!args[2].is_null && x > args[2].v.i)
		x = args[2].v.i;
	result->v.i = x;
	return 0;
}

const struct sl_udf sl_example_rot13 = {
	.abi = SL_UDF_ABI,
	.name = "rot13",
	.result = SL_UDF_STRING,
	.nargs = 1,
	.args = { SL_UDF_STRING },
	.fn = rot13,
};

const struct sl_udf sl_example_fnv1a = {
	.abi = SL_UDF_ABI,
	.name = "fnv1a",
	.result = SL_UDF_BIGINT,
	.nargs = 1,
	.args = { SL_UDF_STRING },
	.fn = fnv1a,
};

const struct sl_udf sl_example_clamp = {
	.abi = SL_UDF_ABI,
	.flags = SL_UDF_CALLED_ON_NULL,
	.name = "clamp",
	.result = SL_UDF_BIGINT,
	.nargs = 3,
	.args = { SL_UDF_BIGINT, SL_UDF_BIGINT, SL_UDF_BIGINT },
	.fn = clamp,
};
