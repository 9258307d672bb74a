/*
 * count_char.c - Nexmark q14's user function, count_char(s, c): how many times the first
 * character of c occurs in s, as the Nexmark suite's Java CountChar does (0 when s is NULL,
 * not NULL). A C scalar function (sluice/udf.h), loaded by bench/nexmark/q14.sql:
 *
 *   CREATE FUNCTION count_char AS 'libnexmark_udf.so:count_char' LANGUAGE C;
 *
 * with the library's directory on LD_LIBRARY_PATH (meson builds it as
 * build/bench/libnexmark_udf.so; the bench and the differential test point there).
 * Characters are UTF-8 code points; Java compares UTF-16 units, which is the same for every
 * character outside the astral planes (the Nexmark strings are ASCII).
 */
#include <sluice/udf.h>

/* The length of the UTF-8 sequence starting with byte b (1 for a stray byte). */
static uint32_t seq_len(unsigned char b)
{
	return b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
}

static int count_char_fn(const struct sl_udf_value *args, struct sl_udf_value *result, char *buf,
			 uint32_t cap)
{
	const char *s = args[0].v.s.ptr, *c = args[1].v.s.ptr;
	uint32_t n = args[0].v.s.len, cl;
	int64_t count = 0;

	(void)buf;
	(void)cap;
	result->is_null = false;
	result->v.i = 0;
	if (args[0].is_null)
		return 0;
	if (args[1].is_null || args[1].v.s.len == 0)
		return -1; /* Java's charAt(0) throws: a failure, NULL and counted */
	cl = seq_len((unsigned char)c[0]);
	if (cl > args[1].v.s.len)
		cl = args[1].v.s.len;
	for (uint32_t i = 0; i + cl <= n;) {
		uint32_t k = 0;

		while (k < cl && s[i + k] == c[k])
			k++;
		count += k == cl;
		i += seq_len((unsigned char)s[i]);
	}
	result->v.i = count;
	return 0;
}

const struct sl_udf count_char = {
	.abi = SL_UDF_ABI,
	.flags = SL_UDF_CALLED_ON_NULL,
	.name = "count_char",
	.result = SL_UDF_BIGINT,
	.nargs = 2,
	.args = { SL_UDF_STRING, SL_UDF_STRING },
	.fn = count_char_fn,
};
