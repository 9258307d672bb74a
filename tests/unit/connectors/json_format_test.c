/*
 * json_format_test.c - the JSON-lines decoder and writer: every type, NULLs (missing key and
 * null), timestamps as epoch millis and as text, quoted numbers, key order changes and
 * escaped keys, the exact error reasons (field and cause), the writer's escapes, and a
 * round trip of random rows through writer and decoder.
 */
#include <math.h>

#include "conn_harness.h"
#include "format.h"

static _Alignas(8) char rowbuf[SL_ROW_SCRATCH];
static char why[SL_FMT_WHY_MAX];

static const struct sl_row *dec(struct sl_json_dec *d, const char *json)
{
	why[0] = '\0';
	return sl_json_dec_row_copy(d, json, strlen(json), rowbuf, sizeof rowbuf, why);
}

static void expect_error(struct sl_json_dec *d, const char *json, const char *want)
{
	const struct sl_row *r = dec(d, json);

	if (r || !strstr(why, want)) {
		fprintf(stderr, "decoding %s: got %s '%s', expected an error with '%s'\n", json,
			r ? "a row" : "error", why, want);
		exit(T_EXIT_FAIL);
	}
}

static void test_types(void)
{
	static const char *const spec[] = { "b", "BOOL", "i", "INT", "l", "BIGINT", "d", "DOUBLE",
					    "s", "STRING", "t", "TIMESTAMP", NULL };
	struct sl_schema *s = h_schema(spec);
	struct sl_json_dec *d = sl_json_dec_create(s);
	const struct sl_row *r;

	T_ASSERT(d);
	r = dec(d, "{\"b\":true,\"i\":-42,\"l\":9007199254740993,\"d\":2.5,"
		   "\"s\":\"h\\u00e9\\\"y\\n\",\"t\":1700000000123}");
	T_ASSERT(r);
	T_ASSERT(r->nfields == 6 && r->nulls == 0);
	T_ASSERT(sl_row_bool(r, 0));
	T_ASSERT_EQ_I64(sl_row_i64(r, 1), -42);
	T_ASSERT_EQ_I64(sl_row_i64(r, 2), 9007199254740993ll);
	T_ASSERT(sl_row_f64(r, 3) == 2.5);
	T_ASSERT_STR(r, 4, "h\xc3\xa9\"y\n");
	T_ASSERT_EQ_I64(sl_row_i64(r, 5), 1700000000123ll);

	/* keys in another order, an unknown nested key, missing and null fields */
	r = dec(d, "{\"zz\":{\"a\":[1,{\"b\":2}]},\"s\":\"x\",\"i\":null,\"b\":false,\"q\":[]}");
	T_ASSERT(r);
	T_ASSERT(!sl_row_bool(r, 0) && !sl_row_is_null(r, 0));
	T_ASSERT(sl_row_is_null(r, 1) && sl_row_is_null(r, 2) && sl_row_is_null(r, 3));
	T_ASSERT_STR(r, 4, "x");
	T_ASSERT(sl_row_is_null(r, 5));

	/* empty object: all NULL; whitespace around is fine */
	r = dec(d, "  { }  ");
	T_ASSERT(r && r->nulls == 0x3f);

	/* quoted numbers and booleans (Flink accepts them), numbers into STRING keep their text,
	 * nested JSON into STRING keeps its text */
	r = dec(d, "{\"b\":\"TRUE\",\"i\":\" 17 \",\"l\":\"-9223372036854775808\",\"d\":\"NaN\","
		   "\"s\":1.50,\"t\":\"1700000000123\"}");
	T_ASSERT(r);
	T_ASSERT(sl_row_bool(r, 0));
	T_ASSERT_EQ_I64(sl_row_i64(r, 1), 17);
	T_ASSERT(sl_row_i64(r, 2) == INT64_MIN);
	T_ASSERT(isnan(sl_row_f64(r, 3)));
	T_ASSERT_STR(r, 4, "1.50");
	T_ASSERT_EQ_I64(sl_row_i64(r, 5), 1700000000123ll);
	r = dec(d, "{\"s\":{\"k\": [1, 2]}}");
	T_ASSERT(r);
	T_ASSERT_STR(r, 4, "{\"k\": [1, 2]}");
	r = dec(d, "{\"s\":true, \"d\": 3}");
	T_ASSERT(r);
	T_ASSERT_STR(r, 4, "true");
	T_ASSERT(sl_row_f64(r, 3) == 3.0);

	/* an escaped key matches its field */
	r = dec(d, "{\"\\u0069\":7}");
	T_ASSERT(r && sl_row_i64(r, 1) == 7);

	/* a duplicate key: the last one wins */
	r = dec(d, "{\"i\":1,\"i\":2}");
	T_ASSERT(r && sl_row_i64(r, 1) == 2);

	sl_json_dec_destroy(d);
	sl_schema_destroy(s);
}

static void test_timestamps(void)
{
	static const char *const spec[] = { "t", "TIMESTAMP", NULL };
	static const struct {
		const char *json;
		sl_ts_t want;
	} ok[] = {
		{ "{\"t\":\"2024-01-31 04:19:31.784\"}", 1706674771784ll },
		{ "{\"t\":\"2024-01-31T04:19:31.784Z\"}", 1706674771784ll },
		{ "{\"t\":\"2024-01-31T04:19:31Z\"}", 1706674771000ll },
		{ "{\"t\":\"2024-01-31 04:19:31.7\"}", 1706674771700ll },
		{ "{\"t\":\"2024-01-31 04:19:31.784999\"}", 1706674771784ll },
		{ "{\"t\":\"2024-01-31T05:19:31.784+01:00\"}", 1706674771784ll },
		{ "{\"t\":\"2024-02-29 00:00:00\"}", 1709164800000ll },
		{ "{\"t\":\"1969-12-31 23:59:59.999\"}", -1 },
		{ "{\"t\":\"1970-01-01\"}", 0 },
		{ "{\"t\":0}", 0 },
		{ "{\"t\":-5}", -5 },
	};
	static const char *const bad[] = {
		"{\"t\":\"2023-02-29 00:00:00\"}", "{\"t\":\"2024-13-01 00:00:00\"}",
		"{\"t\":\"2024-01-31 24:00:00\"}", "{\"t\":\"2024-01-31 04:19:31.\"}",
		"{\"t\":\"2024-01-31 04:19:31 junk\"}", "{\"t\":\"yesterday\"}",
	};
	struct sl_schema *s = h_schema(spec);
	struct sl_json_dec *d = sl_json_dec_create(s);

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		const struct sl_row *r = dec(d, ok[i].json);

		if (!r)
			fprintf(stderr, "%s: %s\n", ok[i].json, why);
		T_ASSERT(r);
		T_ASSERT_EQ_I64(sl_row_i64(r, 0), ok[i].want);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		expect_error(d, bad[i], "field 't': '");
	expect_error(d, "{\"t\":1.5}", "field 't': 1.5 is not a valid TIMESTAMP(3)");
	expect_error(d, "{\"t\":true}", "field 't': expected TIMESTAMP(3), got boolean");
	sl_json_dec_destroy(d);
	sl_schema_destroy(s);
}

static void test_errors(void)
{
	static const char *const spec[] = { "age", "INT", "name", "STRING", "ok", "BOOL", "d",
					    "DOUBLE", NULL };
	struct sl_schema *s = h_schema(spec);
	struct sl_json_dec *d = sl_json_dec_create(s);

	expect_error(d, "{\"age\":\"abc\"}", "field 'age': 'abc' is not a valid INT");
	expect_error(d, "{\"age\":3000000000}", "field 'age': 3000000000 out of range for INT");
	expect_error(d, "{\"age\":\"3000000000\"}", "field 'age': 3000000000 out of range for INT");
	expect_error(d, "{\"age\":1.5}", "field 'age': 1.5 is not a valid INT");
	expect_error(d, "{\"age\":[1]}", "field 'age': expected INT, got array");
	expect_error(d, "{\"ok\":1}", "field 'ok': expected BOOLEAN, got number");
	expect_error(d, "{\"ok\":\"yes\"}", "field 'ok': 'yes' is not a valid BOOLEAN");
	expect_error(d, "{\"d\":{}}", "field 'd': expected DOUBLE, got object");
	expect_error(d, "{\"d\":\"1.5x\"}", "field 'd': '1.5x' is not a valid DOUBLE");
	expect_error(d, "{\"age\":1,", "broken JSON");
	expect_error(d, "{\"age\":1} {}", "broken JSON");
	expect_error(d, "{\"age\":1} x", "broken JSON");
	expect_error(d, "{\"name\":\"unterminated}", "broken JSON");
	expect_error(d, "{\"age\":nul}", "broken JSON");
	expect_error(d, "{\"name\":tru}", "broken JSON");
	expect_error(d, "{\"name\":12.}", "broken JSON");
	expect_error(d, "{\"name\":\"\xff\"}", "broken JSON");
	expect_error(d, "", "broken JSON");
	expect_error(d, "[1,2]", "not a JSON object");
	expect_error(d, "42", "not a JSON object");
	/* the decoder stays usable after errors */
	T_ASSERT(dec(d, "{\"age\":30,\"name\":\"ann\"}") && sl_row_i64((void *)rowbuf, 0) == 30);
	sl_json_dec_destroy(d);
	sl_schema_destroy(s);
}

/* A record longer than the parser's initial capacity grows it; a row beyond cap fails. */
static void test_large(void)
{
	static const char *const spec[] = { "s", "STRING", NULL };
	struct sl_schema *s = h_schema(spec);
	struct sl_json_dec *d = sl_json_dec_create(s);
	size_t n = 200000;
	char *big = malloc(n + 16);
	const struct sl_row *r;

	memcpy(big, "{\"x\":\"", 6);
	memset(big + 6, 'a', n - 8);
	memcpy(big + n - 2, "\"}", 3);
	r = dec(d, big);
	T_ASSERT(r && sl_row_is_null(r, 0)); /* unknown key skipped */
	big[2] = 's';
	T_ASSERT(!dec(d, big));
	T_ASSERT(strstr(why, "row exceeds 65536 bytes"));
	free(big);
	sl_json_dec_destroy(d);
	sl_schema_destroy(s);
}

static void test_writer(void)
{
	static const char *const spec[] = { "b", "BOOL", "i", "INT", "d", "DOUBLE", "s", "STRING",
					    "t", "TIMESTAMP", "n", "BIGINT", NULL };
	struct sl_schema *s = h_schema(spec);
	struct sl_row_builder b;
	_Alignas(8) char rb[512];
	char out[512];
	const char *want;
	int n;

	sl_rowb_init(&b, rb, sizeof rb, 6);
	sl_rowb_set_bool(&b, 0, true);
	sl_rowb_set_i64(&b, 1, INT32_MIN);
	sl_rowb_set_f64(&b, 2, 0.1);
	sl_rowb_set_str(&b, 3, "q\"\\\n\t\x01\xc3\xa9/", 9);
	sl_rowb_set_i64(&b, 4, -1);
	T_ASSERT(sl_rowb_finish(&b));
	n = sl_json_write_row(b.row, s, out, sizeof out);
	want = "{\"b\":true,\"i\":-2147483648,\"d\":0.1,\"s\":\"q\\\"\\\\\\n\\t\\u0001\xc3\xa9/\","
	       "\"t\":\"1969-12-31 23:59:59.999\",\"n\":null}\n";
	if (n != (int)strlen(want) || memcmp(out, want, (size_t)n) != 0) {
		fprintf(stderr, "wrote %.*s", n, out);
		exit(T_EXIT_FAIL);
	}
	/* too small a buffer is -ENOSPC, at every size below the need */
	for (int cap = 0; cap < n; cap++)
		T_ASSERT(sl_json_write_row(b.row, s, out, (size_t)cap) == -ENOSPC);
	sl_rowb_init(&b, rb, sizeof rb, 6);
	sl_rowb_set_f64(&b, 2, -INFINITY);
	sl_rowb_set_i64(&b, 4, 253402300799999ll); /* 9999-12-31 23:59:59.999 */
	T_ASSERT(sl_rowb_finish(&b));
	n = sl_json_write_row(b.row, s, out, sizeof out);
	want = "{\"b\":null,\"i\":null,\"d\":\"-Infinity\",\"s\":null,"
	       "\"t\":\"9999-12-31 23:59:59.999\",\"n\":null}\n";
	T_ASSERT(n == (int)strlen(want) && memcmp(out, want, (size_t)n) == 0);
	/* a string byte that is not UTF-8 is written as U+FFFD, never raw */
	sl_rowb_init(&b, rb, sizeof rb, 6);
	sl_rowb_set_str(&b, 3, "a\xe9" "b\xed\xa0\x80\xf0\x9f\x98\x80\xe2\x82", 12);
	T_ASSERT(sl_rowb_finish(&b));
	n = sl_json_write_row(b.row, s, out, sizeof out);
	want = "{\"b\":null,\"i\":null,\"d\":null,\"s\":\"a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd"
	       "\xef\xbf\xbd\xf0\x9f\x98\x80\xef\xbf\xbd\xef\xbf\xbd\",\"t\":null,\"n\":null}\n";
	if (n != (int)strlen(want) || memcmp(out, want, (size_t)n) != 0) {
		fprintf(stderr, "wrote %.*s", n, out);
		exit(T_EXIT_FAIL);
	}
	for (int cap = 0; cap < n; cap++)
		T_ASSERT(sl_json_write_row(b.row, s, out, (size_t)cap) == -ENOSPC);
	sl_schema_destroy(s);
}

static uint64_t rs = 0x1234567;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* Random rows through the writer and back through the decoder come back equal. */
static void test_round_trip(void)
{
	static const char *const spec[] = { "b", "BOOL", "i", "INT", "d", "DOUBLE", "s", "STRING",
					    "t", "TIMESTAMP", "n", "BIGINT", NULL };
	struct sl_schema *s = h_schema(spec);
	struct sl_json_dec *d = sl_json_dec_create(s);
	_Alignas(8) char rb[1024];
	char out[4096];

	for (int it = 0; it < 20000; it++) {
		struct sl_row_builder b;
		char str[40];
		uint32_t len = (uint32_t)(rnd() % sizeof str), l2;
		const struct sl_row *r;
		double dv;
		int n;

		for (uint32_t k = 0; k < len; k++)
			str[k] = (char)(rnd() % 128); /* ASCII incl. control characters */
		do {
			uint64_t bits = rnd();

			memcpy(&dv, &bits, 8);
		} while (isnan(dv)); /* NaN != NaN; tested above */
		sl_rowb_init(&b, rb, sizeof rb, 6);
		sl_rowb_set_bool(&b, 0, rnd() & 1);
		sl_rowb_set_i64(&b, 1, (int32_t)rnd());
		sl_rowb_set_f64(&b, 2, it % 3 ? dv : (double)(int64_t)rnd() / 1000);
		sl_rowb_set_str(&b, 3, str, len);
		sl_rowb_set_i64(&b, 4, (int64_t)(rnd() % 253402300800000ull) - 62167219200000ll);
		sl_rowb_set_i64(&b, 5, (int64_t)rnd());
		for (int f = 0; f < 6; f++)
			if (rnd() % 7 == 0)
				sl_rowb_set_null(&b, f);
		T_ASSERT(sl_rowb_finish(&b));
		n = sl_json_write_row(b.row, s, out, sizeof out - SL_JSON_PADDING);
		T_ASSERT(n > 0 && out[n - 1] == '\n');
		r = sl_json_dec_row(d, out, (size_t)n - 1, rowbuf, sizeof rowbuf, why);
		if (!r)
			fprintf(stderr, "%.*s -> %s\n", n, out, why);
		T_ASSERT(r);
		T_ASSERT(r->nulls == b.row->nulls);
		for (int f = 0; f < 6; f++) {
			if (sl_row_is_null(r, f))
				continue;
			if (f == 3) {
				const char *p = sl_row_str(r, 3, &l2);

				T_ASSERT(l2 == len && memcmp(p, str, len) == 0);
			} else if (f == 2) {
				T_ASSERT(sl_row_f64(r, 2) == sl_row_f64(b.row, 2));
			} else {
				T_ASSERT_EQ_I64(sl_row_i64(r, f), sl_row_i64(b.row, f));
			}
		}
	}
	sl_json_dec_destroy(d);
	sl_schema_destroy(s);
}

static void test_lines(void)
{
	static const char *const spec[] = { "a", "INT", NULL };
	const char text[] = "{\"a\":1}\n\n{\"a\":2}\r\n{\"a\":x}\n{\"a\":3}";
	struct sl_schema *s = h_schema(spec);
	struct sl_json_dec *d = sl_json_dec_create(s);
	char *buf = calloc(1, sizeof text + SL_JSON_PADDING);
	uint64_t nerr = 0;

	memcpy(buf, text, sizeof text - 1);
	T_ASSERT_EQ_I64(sl_json_dec_lines(d, buf, sizeof text - 1, rowbuf, sizeof rowbuf, &nerr),
			3);
	T_ASSERT_EQ_I64(nerr, 1);
	free(buf);
	sl_json_dec_destroy(d);
	sl_schema_destroy(s);
}

int main(void)
{
	test_types();
	test_timestamps();
	test_errors();
	test_large();
	test_writer();
	test_round_trip();
	test_lines();
	return T_EXIT_PASS;
}
