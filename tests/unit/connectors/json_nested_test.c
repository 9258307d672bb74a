/*
 * json_nested_test.c - the JSON decoder on dotted (flattened ROW) field names and on the
 * FLOAT, DECIMAL, DATE and TIMESTAMP_LTZ types: nested objects in any key order, NULL or
 * missing intermediate objects, a non-object on a path, DECIMAL rounding (HALF_UP) and
 * overflow to NULL from numbers and strings, fail-on-missing-field, schemas whose names do
 * not form a tree; and the text helpers behind them (decimal parse, float/decimal/date
 * writers).
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

/* The PyFlink lesson's CDC envelope: payload ROW<after ROW<id, customer_id, total, status>, op, ts_ms> */
static struct sl_schema *cdc_schema(void)
{
	struct sl_schema *s = sl_schema_create();

	T_ASSERT(s);
	T_ASSERT(sl_schema_add(s, "payload.after.id", SL_TYPE_INT) == 0);
	T_ASSERT(sl_schema_add(s, "payload.after.customer_id", SL_TYPE_INT) == 1);
	T_ASSERT(sl_schema_add_decimal(s, "payload.after.total", 10, 2) == 2);
	T_ASSERT(sl_schema_add(s, "payload.after.status", SL_TYPE_STRING) == 3);
	T_ASSERT(sl_schema_add(s, "payload.op", SL_TYPE_STRING) == 4);
	T_ASSERT(sl_schema_add(s, "payload.ts_ms", SL_TYPE_BIGINT) == 5);
	T_ASSERT(sl_schema_add(s, "top", SL_TYPE_STRING) == 6);
	return s;
}

static void test_nested(void)
{
	struct sl_schema *s = cdc_schema();
	struct sl_json_dec *d = sl_json_dec_create(s);
	const struct sl_row *r;

	T_ASSERT(d);
	r = dec(d, "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"a\":1}]},\"payload\":{\"before\":"
		   "null,\"after\":{\"id\":1006,\"customer_id\":17,\"product_id\":115,\"total\":"
		   "154.84,\"status\":\"pending\"},\"source\":{\"lsn\":24},\"op\":\"r\",\"ts_ms\":"
		   "1706781600185,\"transaction\":null},\"top\":\"t\"}");
	T_ASSERT(r && r->nulls == 0);
	T_ASSERT_EQ_I64(sl_row_i64(r, 0), 1006);
	T_ASSERT_EQ_I64(sl_row_i64(r, 1), 17);
	T_ASSERT_EQ_I64(sl_row_i64(r, 2), 15484);
	T_ASSERT_STR(r, 3, "pending");
	T_ASSERT_STR(r, 4, "r");
	T_ASSERT_EQ_I64(sl_row_i64(r, 5), 1706781600185ll);
	T_ASSERT_STR(r, 6, "t");

	/* keys in another order at every level (the predicted order is now wrong) */
	r = dec(d, "{\"top\":\"u\",\"payload\":{\"ts_ms\":5,\"op\":\"c\",\"after\":{\"status\":"
		   "\"paid\",\"total\":\"1.005\",\"id\":7}}}");
	T_ASSERT(r);
	T_ASSERT_EQ_I64(sl_row_i64(r, 0), 7);
	T_ASSERT(sl_row_is_null(r, 1));
	T_ASSERT_EQ_I64(sl_row_i64(r, 2), 101); /* 1.005 HALF_UP -> 1.01 */
	T_ASSERT_STR(r, 3, "paid");
	T_ASSERT_STR(r, 4, "c");
	T_ASSERT_EQ_I64(sl_row_i64(r, 5), 5);
	T_ASSERT_STR(r, 6, "u");

	/* a null intermediate object: all its leaves NULL, siblings kept */
	r = dec(d, "{\"payload\":{\"after\":null,\"op\":\"d\",\"ts_ms\":9}}");
	T_ASSERT(r);
	for (int i = 0; i < 4; i++)
		T_ASSERT(sl_row_is_null(r, i));
	T_ASSERT_STR(r, 4, "d");
	T_ASSERT(sl_row_is_null(r, 6));
	/* a missing intermediate object, and a missing root of the path */
	r = dec(d, "{\"payload\":{\"op\":\"x\"}}");
	T_ASSERT(r && r->nulls == (0x7full & ~(1ull << 4)));
	r = dec(d, "{\"payload\":null,\"top\":\"z\"}");
	T_ASSERT(r && r->nulls == 0x3f);
	r = dec(d, "{}");
	T_ASSERT(r && r->nulls == 0x7f);
	/* a leaf name of the path at the wrong level is not the leaf */
	r = dec(d, "{\"id\":1,\"after\":{\"id\":2},\"payload\":{\"id\":3}}");
	T_ASSERT(r && sl_row_is_null(r, 0));

	/* the writer nests dotted names the same way, and its text decodes to the same row */
	{
		char out[1024];
		_Alignas(8) char keep[1024];
		int n;

		r = dec(d, "{\"payload\":{\"after\":{\"id\":1,\"total\":2.5},\"op\":\"c\"},"
			   "\"top\":\"t\"}");
		T_ASSERT(r && r->size <= sizeof keep);
		memcpy(keep, r, r->size);
		n = sl_json_write_row((const struct sl_row *)keep, s, out, sizeof out);
		T_ASSERT(n > 0);
		out[n] = '\0';
		if (strcmp(out, "{\"payload\":{\"after\":{\"id\":1,\"customer_id\":null,\"total\":"
			   "2.50,\"status\":null},\"op\":\"c\",\"ts_ms\":null},\"top\":\"t\"}\n")) {
			fprintf(stderr, "nested writer: %s", out);
			exit(T_EXIT_FAIL);
		}
		r = dec(d, out);
		T_ASSERT(r && !memcmp(r, keep, r->size));
		for (int cap = 0; cap < n; cap++)
			T_ASSERT(sl_json_write_row((const struct sl_row *)keep, s, out, (size_t)cap) ==
				 -ENOSPC);
	}

	/* a path through a non-object, and errors deep inside name the full field */
	expect_error(d, "{\"payload\":{\"after\":[1,2]}}",
		     "field 'payload.after': expected an object, got array");
	expect_error(d, "{\"payload\":5}", "field 'payload': expected an object, got number");
	expect_error(d, "{\"payload\":{\"after\":{\"id\":\"x\"}}}",
		     "field 'payload.after.id': 'x' is not a valid INT");
	expect_error(d, "{\"payload\":{\"after\":{\"id\":1},}}", "broken JSON");
	sl_json_dec_destroy(d);

	/* fail-on-missing-field: a null object counts as present for its leaves */
	int err = 0;

	d = sl_json_dec_create_ex(s, SL_JSON_FAIL_ON_MISSING, &err);
	T_ASSERT(d);
	expect_error(d, "{\"payload\":{\"op\":\"c\",\"ts_ms\":1,\"after\":null}}",
		     "field 'top' is missing");
	expect_error(d, "{\"top\":null,\"payload\":{\"op\":\"c\",\"ts_ms\":1}}",
		     "field 'payload.after.id' is missing");
	T_ASSERT(dec(d, "{\"top\":null,\"payload\":{\"op\":\"c\",\"ts_ms\":1,\"after\":null}}"));
	sl_json_dec_destroy(d);
	sl_schema_destroy(s);

	/* names that are no tree */
	s = sl_schema_create();
	T_ASSERT(sl_schema_add(s, "a", SL_TYPE_INT) == 0 && sl_schema_add(s, "a.b", SL_TYPE_INT) == 1);
	T_ASSERT(!sl_json_dec_create_ex(s, 0, &err) && err == -EINVAL);
	sl_schema_destroy(s);
	s = sl_schema_create();
	T_ASSERT(sl_schema_add(s, "a..b", SL_TYPE_INT) == 0);
	T_ASSERT(!sl_json_dec_create_ex(s, 0, &err) && err == -EINVAL);
	sl_schema_destroy(s);
}

static void test_new_types(void)
{
	struct sl_schema *s = sl_schema_create();
	struct sl_json_dec *d;
	const struct sl_row *r;

	T_ASSERT(sl_schema_add(s, "f", SL_TYPE_FLOAT) == 0);
	T_ASSERT(sl_schema_add_decimal(s, "m", 5, 2) == 1);
	T_ASSERT(sl_schema_add(s, "day", SL_TYPE_DATE) == 2);
	T_ASSERT(sl_schema_add(s, "ltz", SL_TYPE_TIMESTAMP_LTZ) == 3);
	T_ASSERT(sl_schema_add(s, "s", SL_TYPE_STRING) == 4);
	T_ASSERT(sl_schema_add_decimal(s, "z", 18, 0) == 5);
	d = sl_json_dec_create(s);
	T_ASSERT(d);

	r = dec(d, "{\"f\":0.1,\"m\":-123.455,\"day\":\"2024-02-29\",\"ltz\":\"2024-01-31T04:19:31.784Z\","
		   "\"s\":{\"a\": [1, {\"b\": null}]},\"z\":999999999999999999}");
	T_ASSERT(r && r->nulls == 0);
	T_ASSERT(sl_row_f64(r, 0) == (double)0.1f);
	T_ASSERT_EQ_I64(sl_row_i64(r, 1), -12346); /* HALF_UP away from zero */
	T_ASSERT_EQ_I64(sl_row_i64(r, 2), 19782);
	T_ASSERT_EQ_I64(sl_row_i64(r, 3), 1706674771784ll);
	T_ASSERT_STR(r, 4, "{\"a\": [1, {\"b\": null}]}");
	T_ASSERT_EQ_I64(sl_row_i64(r, 5), 999999999999999999ll);

	/* DECIMAL: exact from the literal (no double round trip), exponents, quoted text */
	r = dec(d, "{\"m\":1.005,\"z\":1.5e17,\"ltz\":1700000000123,\"s\":[1,2],\"f\":\"3.5\"}");
	T_ASSERT(r);
	T_ASSERT_EQ_I64(sl_row_i64(r, 1), 101);
	T_ASSERT_EQ_I64(sl_row_i64(r, 5), 150000000000000000ll);
	T_ASSERT_EQ_I64(sl_row_i64(r, 3), 1700000000123ll);
	T_ASSERT_STR(r, 4, "[1,2]");
	T_ASSERT(sl_row_f64(r, 0) == 3.5);
	r = dec(d, "{\"m\":\"  0.004 \",\"z\":-0.5}");
	T_ASSERT(r && sl_row_i64(r, 1) == 0 && !sl_row_is_null(r, 1));
	T_ASSERT_EQ_I64(sl_row_i64(r, 5), -1);
	/* overflow of the precision is NULL (Flink), also after rounding up */
	r = dec(d, "{\"m\":1000.00,\"z\":1e18}");
	T_ASSERT(r && sl_row_is_null(r, 1) && sl_row_is_null(r, 5));
	r = dec(d, "{\"m\":999.995}");
	T_ASSERT(r && sl_row_is_null(r, 1));
	r = dec(d, "{\"m\":999.994}");
	T_ASSERT(r && sl_row_i64(r, 1) == 99999);

	/* the writer: decimals as numbers with their scale, dates and LTZ as text, floats as
	 * Java prints them; and the text decodes back to the same values */
	{
		char out[512];
		const char *want = "{\"f\":1.0E10,\"m\":-0.05,\"day\":\"2024-02-29\",\"ltz\":"
				   "\"2024-01-31 04:19:31.784Z\",\"s\":null,\"z\":-123}\n";
		struct sl_row_builder b;
		_Alignas(8) char buf[256];
		const struct sl_row *w;
		int n;

		sl_rowb_init(&b, buf, sizeof buf, 6);
		sl_rowb_set_f64(&b, 0, (double)1e10f);
		sl_rowb_set_i64(&b, 1, -5);
		sl_rowb_set_i64(&b, 2, 19782);
		sl_rowb_set_i64(&b, 3, 1706674771784ll);
		sl_rowb_set_i64(&b, 5, -123);
		w = sl_rowb_finish(&b);
		n = sl_json_write_row(w, s, out, sizeof out);
		T_ASSERT(n > 0);
		out[n] = '\0';
		if (strcmp(out, want)) {
			fprintf(stderr, "json writer: %s", out);
			exit(T_EXIT_FAIL);
		}
		r = dec(d, out);
		T_ASSERT(r && r->size == w->size && !memcmp(r, w, w->size));
		sl_rowb_init(&b, buf, sizeof buf, 6);
		sl_rowb_set_f64(&b, 0, (double)NAN);
		w = sl_rowb_finish(&b);
		n = sl_json_write_row(w, s, out, sizeof out);
		T_ASSERT(n > 10 && !memcmp(out, "{\"f\":\"NaN\",", 11));
		T_ASSERT(sl_json_write_row(w, s, out, 20) == -ENOSPC);
	}

	expect_error(d, "{\"m\":\"1.2.3\"}", "field 'm': '1.2.3' is not a valid DECIMAL");
	expect_error(d, "{\"m\":true}", "field 'm': expected DECIMAL, got boolean");
	expect_error(d, "{\"day\":20240101}", "field 'day': expected DATE, got number");
	expect_error(d, "{\"day\":\"2023-02-29\"}", "'2023-02-29' is not a valid DATE");
	expect_error(d, "{\"f\":\"x\"}", "field 'f': 'x' is not a valid FLOAT");
	expect_error(d, "{\"ltz\":\"noon\"}", "is not a valid TIMESTAMP_LTZ");
	sl_json_dec_destroy(d);
	sl_schema_destroy(s);
}

static void test_text(void)
{
	char o[64];
	int64_t v;
	int n;

	T_ASSERT(sl_fmt_parse_dec("12.345", 6, 10, 2, &v) == 0 && v == 1235);
	T_ASSERT(sl_fmt_parse_dec("-12.344", 7, 10, 2, &v) == 0 && v == -1234);
	T_ASSERT(sl_fmt_parse_dec("+.5", 3, 1, 0, &v) == 0 && v == 1);
	T_ASSERT(sl_fmt_parse_dec("5.", 2, 3, 2, &v) == 0 && v == 500);
	T_ASSERT(sl_fmt_parse_dec("0.00000000000000000000001", 25, 18, 2, &v) == 0 && v == 0);
	T_ASSERT(sl_fmt_parse_dec("000123", 6, 3, 0, &v) == 0 && v == 123);
	T_ASSERT(sl_fmt_parse_dec("1234", 4, 3, 0, &v) == -ERANGE);
	T_ASSERT(sl_fmt_parse_dec("1e400", 5, 18, 0, &v) == -ERANGE);
	T_ASSERT(sl_fmt_parse_dec("1e-400", 6, 18, 0, &v) == 0 && v == 0);
	T_ASSERT(sl_fmt_parse_dec("12E-1", 5, 3, 1, &v) == 0 && v == 12);
	T_ASSERT(sl_fmt_parse_dec("", 0, 3, 1, &v) == -EINVAL);
	T_ASSERT(sl_fmt_parse_dec(".", 1, 3, 1, &v) == -EINVAL);
	T_ASSERT(sl_fmt_parse_dec("1e", 2, 3, 1, &v) == -EINVAL);
	T_ASSERT(sl_fmt_parse_dec("NaN", 3, 3, 1, &v) == -EINVAL);
	T_ASSERT(sl_fmt_parse_dec("99999999999999999999.4", 22, 18, 0, &v) == -ERANGE);
	T_ASSERT(sl_fmt_parse_date("1969-12-31", 10, &v) == 0 && v == -1);

#define F32(x, want)                                                                     \
	do {                                                                             \
		n = sl_fmt_write_f32((x), o);                                            \
		o[n] = '\0';                                                             \
		if (strcmp(o, (want))) {                                                 \
			fprintf(stderr, "float %s: got %s, expected %s\n", #x, o, want); \
			exit(T_EXIT_FAIL);                                               \
		}                                                                        \
	} while (0)
	F32(1.0f, "1.0");
	F32(0.1f, "0.1");
	F32(-2.5f, "-2.5");
	F32(100.0f, "100.0");
	F32(1234567.0f, "1234567.0");
	F32(1.0e7f, "1.0E7");
	F32(1.5e10f, "1.5E10");
	F32(0.001f, "0.001");
	F32(0.0001f, "1.0E-4");
	F32(3.4028235e38f, "3.4028235E38");
	F32(1.4e-45f, "1.4E-45");
	F32(0.0f, "0.0");
	F32(-0.0f, "-0.0");
	F32(NAN, "NaN");
	F32(-INFINITY, "-Infinity");
	F32(0.3f, "0.3");
	F32(16777216.0f, "1.6777216E7");
	F32(123.456f, "123.456");

	n = sl_fmt_write_dec(-5, 2, o);
	T_ASSERT(n == 5 && !memcmp(o, "-0.05", 5));
	n = sl_fmt_write_dec(12345, 0, o);
	T_ASSERT(n == 5 && !memcmp(o, "12345", 5));
	n = sl_fmt_write_dec(0, 3, o);
	T_ASSERT(n == 5 && !memcmp(o, "0.000", 5));
	n = sl_fmt_write_dec(INT64_MIN + 1, 18, o);
	T_ASSERT(n == 21 && !memcmp(o, "-9.223372036854775807", 21));
	n = sl_fmt_write_date(19782, o);
	T_ASSERT(n == 10 && !memcmp(o, "2024-02-29", 10));
	n = sl_fmt_write_date(-719528, o);
	T_ASSERT(n == 10 && !memcmp(o, "0000-01-01", 10));
}

int main(void)
{
	test_nested();
	test_new_types();
	test_text();
	return T_EXIT_PASS;
}
