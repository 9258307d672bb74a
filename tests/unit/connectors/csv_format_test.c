/*
 * csv_format_test.c - the CSV decoder (RFC 4180 quoting, delimiters, NULLs, field-count and
 * type errors with their exact reasons), record boundaries with quoted newlines, and the text
 * conversions shared with JSON (integers at their limits, timestamps both ways).
 */
#include "conn_harness.h"
#include "format.h"

static _Alignas(8) char rowbuf[SL_ROW_SCRATCH];
static char why[SL_FMT_WHY_MAX];

static const struct sl_row *dec(struct sl_csv_dec *d, const char *rec)
{
	why[0] = '\0';
	return sl_csv_dec_row(d, rec, strlen(rec), rowbuf, sizeof rowbuf, why);
}

static void expect_error(struct sl_csv_dec *d, const char *rec, const char *want)
{
	const struct sl_row *r = dec(d, rec);

	if (r || strcmp(why, want) != 0) {
		fprintf(stderr, "decoding [%s]: got %s '%s', expected '%s'\n", rec,
			r ? "a row" : "error", why, want);
		exit(T_EXIT_FAIL);
	}
}

static void test_decode(void)
{
	static const char *const spec[] = { "id", "BIGINT", "name", "STRING", "score", "DOUBLE",
					    "ok", "BOOL", "ts", "TIMESTAMP", NULL };
	struct sl_schema *s = h_schema(spec);
	struct sl_csv_dec *d = sl_csv_dec_create(s, NULL);
	const struct sl_row *r;
	char txt[SL_FMT_SCALAR_MAX];

	T_ASSERT(d);
	r = dec(d, "1,ann,2.5,true,2024-01-31 04:19:31.784");
	T_ASSERT(r && r->nulls == 0);
	T_ASSERT_EQ_I64(sl_row_i64(r, 0), 1);
	T_ASSERT_STR(r, 1, "ann");
	T_ASSERT(sl_row_f64(r, 2) == 2.5);
	T_ASSERT(sl_row_bool(r, 3));
	T_ASSERT_EQ_I64(sl_row_i64(r, 4), 1706674771784ll);
	/* written back as Flink's formats write timestamps: no trailing zeros in the fraction */
	T_ASSERT(sl_fmt_write_scalar(r, 4, SL_TYPE_TIMESTAMP, 0, txt) == 23 &&
		 !memcmp(txt, "2024-01-31 04:19:31.784", 23));
	r = dec(d, "1,ann,2.5,true,2024-01-31 04:19:31.50");
	T_ASSERT(r && sl_fmt_write_scalar(r, 4, SL_TYPE_TIMESTAMP_LTZ, 0, txt) == 22 &&
		 !memcmp(txt, "2024-01-31 04:19:31.5Z", 22));
	r = dec(d, "1,ann,2.5,true,2024-01-31 04:19:00");
	T_ASSERT(r && sl_fmt_write_scalar(r, 4, SL_TYPE_TIMESTAMP, 0, txt) == 19 &&
		 !memcmp(txt, "2024-01-31 04:19:00", 19));

	/* quotes: delimiter, doubled quote and a line break inside; a quoted number */
	r = dec(d, "\"2\",\"a,\"\"b\"\"\r\nc\",\"-0.5\",FALSE,1706674771784");
	T_ASSERT(r && r->nulls == 0);
	T_ASSERT_EQ_I64(sl_row_i64(r, 0), 2);
	T_ASSERT_STR(r, 1, "a,\"b\"\r\nc");
	T_ASSERT(sl_row_f64(r, 2) == -0.5);
	T_ASSERT(!sl_row_bool(r, 3));
	T_ASSERT_EQ_I64(sl_row_i64(r, 4), 1706674771784ll);

	/* empty fields: NULL except for STRING (empty string); quoted empty STRING too */
	r = dec(d, ",,,,");
	T_ASSERT(r);
	T_ASSERT(sl_row_is_null(r, 0) && sl_row_is_null(r, 2) && sl_row_is_null(r, 3) &&
		 sl_row_is_null(r, 4));
	T_ASSERT_STR(r, 1, "");
	r = dec(d, "3,\"\",,,");
	T_ASSERT(r);
	T_ASSERT_STR(r, 1, "");

	/* a stray quote inside an unquoted field is kept (lenient) */
	r = dec(d, "4,5\" tall,1,true,0");
	T_ASSERT(r);
	T_ASSERT_STR(r, 1, "5\" tall");

	expect_error(d, "1,a,2", "record has 3 fields, schema has 5");
	expect_error(d, "1", "record has 1 field, schema has 5");
	expect_error(d, "1,a,2,true,0,extra", "record has more than 5 fields");
	expect_error(d, "1,\"a,2,true,0", "column 2 ('name'): unterminated quoted field");
	expect_error(d, "1,\"a\"x,2,true,0", "column 2 ('name'): 'x' after closing quote");
	expect_error(d, "x1,a,2,true,0", "field 'id': 'x1' is not a valid BIGINT");
	expect_error(d, "99999999999999999999,a,2,true,0",
		     "field 'id': 99999999999999999999 out of range for BIGINT");
	expect_error(d, "1,a,2..5,true,0", "field 'score': '2..5' is not a valid DOUBLE");
	expect_error(d, "1,a,0x10,true,0", "field 'score': '0x10' is not a valid DOUBLE");
	expect_error(d, "1,a,2,maybe,0", "field 'ok': 'maybe' is not a valid BOOLEAN");
	expect_error(d, "1,a,2,true,2024-02-30 00:00:00",
		     "field 'ts': '2024-02-30 00:00:00' is not a valid TIMESTAMP(3)");
	sl_csv_dec_destroy(d);
	sl_schema_destroy(s);
}

static void test_options(void)
{
	static const char *const spec[] = { "a", "INT", "b", "STRING", NULL };
	struct sl_schema *s = h_schema(spec);
	struct sl_csv_opts o = { .delimiter = '\t', .null_literal = "\\N" };
	struct sl_csv_dec *d = sl_csv_dec_create(s, &o);
	const struct sl_row *r;

	r = dec(d, "7\tx,y");
	T_ASSERT(r && sl_row_i64(r, 0) == 7);
	T_ASSERT_STR(r, 1, "x,y");
	r = dec(d, "\\N\t\\N");
	T_ASSERT(r && r->nulls == 3);
	r = dec(d, "1\t\"\\N\""); /* a quoted null literal is text */
	T_ASSERT(r);
	T_ASSERT_STR(r, 1, "\\N");
	r = dec(d, "-2147483648\t");
	T_ASSERT(r && sl_row_i64(r, 0) == INT32_MIN);
	T_ASSERT_STR(r, 1, "");
	expect_error(d, "2147483648\tz", "field 'a': 2147483648 out of range for INT");
	sl_csv_dec_destroy(d);
	sl_schema_destroy(s);
}

/* A STRING that is not UTF-8 is a record error; a DECIMAL beyond its precision is NULL and
 * counted, or with fail_on_decimal_overflow an error naming the value and the type. */
static void test_utf8_decimal(void)
{
	struct sl_schema *s = sl_schema_create();
	struct sl_csv_opts strict = { .fail_on_decimal_overflow = true };
	struct sl_csv_dec *d, *ds;
	const struct sl_row *r;

	T_ASSERT(s && sl_schema_add(s, "s", SL_TYPE_STRING) >= 0 &&
		 sl_schema_add_decimal(s, "amount", 5, 2) >= 0);
	d = sl_csv_dec_create(s, NULL);
	ds = sl_csv_dec_create(s, &strict);
	T_ASSERT(d && ds);
	r = dec(d, "caf\xc3\xa9 \xf0\x9f\x98\x80,1.5");
	T_ASSERT(r && sl_row_i64(r, 1) == 150);
	T_ASSERT_STR(r, 0, "caf\xc3\xa9 \xf0\x9f\x98\x80");
	expect_error(d, "caf\xe9,1", "field 's': not UTF-8 (byte 4 of the value is 0xe9)");
	expect_error(d, "\"a\xed\xa0\x80\",1", "field 's': not UTF-8 (byte 2 of the value is 0xed)");
	expect_error(d, "\xc0\xaf,1", "field 's': not UTF-8 (byte 1 of the value is 0xc0)");
	expect_error(d, "\xf4\x90\x80\x80,1", "field 's': not UTF-8 (byte 1 of the value is 0xf4)");
	expect_error(d, "ab\xe2\x82,1", "field 's': not UTF-8 (byte 3 of the value is 0xe2)");
	T_ASSERT_EQ_I64(sl_csv_dec_overflows(d), 0);
	r = dec(d, "x,1000");
	T_ASSERT(r && sl_row_is_null(r, 1));
	r = dec(d, "x,-999.995");
	T_ASSERT(r && sl_row_is_null(r, 1));
	r = dec(d, "x,999.994");
	T_ASSERT(r && sl_row_i64(r, 1) == 99999);
	T_ASSERT_EQ_I64(sl_csv_dec_overflows(d), 2);
	expect_error(ds, "x,1000", "field 'amount': 1000 does not fit DECIMAL(5, 2)");
	r = dec(ds, "x,999.994");
	T_ASSERT(r && sl_row_i64(r, 1) == 99999);
	T_ASSERT_EQ_I64(sl_csv_dec_overflows(ds), 0);
	sl_csv_dec_destroy(ds);
	sl_csv_dec_destroy(d);
	sl_schema_destroy(s);
}

static size_t rlen(struct sl_csv_dec *d, const char *buf, size_t len, bool eof)
{
	return sl_csv_dec_record_len(d, buf, len, eof);
}

static void test_record_len(void)
{
	static const char *const spec[] = { "a", "INT", "b", "STRING", NULL };
	struct sl_schema *s = h_schema(spec);
	struct sl_csv_dec *d = sl_csv_dec_create(s, NULL);
	const char *a = "a,b\nc,d\n";
	const char *q = "1,\"x\ny\",\"\"\"\n\"\nnext\n";
	const char *open = "2,\"b\n3,c\n4,d\n";
	const char *late = "2,\"b\n3,c\n4,\"d\"\n";
	const char *later = "1,\"a\nb\",\"c\"x\n2,z\n";
	size_t big = 2 * SL_ROW_SCRATCH;
	char *huge = malloc(big + 1);

	T_ASSERT(d && huge);
	T_ASSERT_EQ_I64(rlen(d, a, strlen(a), false), 4);
	T_ASSERT_EQ_I64(rlen(d, a + 4, 4, false), 4);
	T_ASSERT_EQ_I64(rlen(d, a, 3, false), 0);
	T_ASSERT_EQ_I64(rlen(d, a, 3, true), 3);
	/* the record holds two quoted newlines */
	T_ASSERT_EQ_I64(rlen(d, q, strlen(q), false), strlen(q) - 5);
	T_ASSERT_EQ_I64(rlen(d, q, 8, false), 0);
	T_ASSERT_EQ_I64(rlen(d, "", 0, false), 0);
	/* a stray quote in an unquoted field opens nothing */
	T_ASSERT_EQ_I64(rlen(d, "1,5\" tall\n2,x\n", 15, false), 10);
	/* CRLF after a closing quote ends the record */
	T_ASSERT_EQ_I64(rlen(d, "1,\"x\"\r\n2,y\n", 12, false), 7);
	/* unterminated: ends at its first line, once the input is known to end inside it */
	T_ASSERT_EQ_I64(rlen(d, open, strlen(open), false), 0);
	T_ASSERT_EQ_I64(rlen(d, open, strlen(open), true), 5);
	T_ASSERT_EQ_I64(rlen(d, "2,\"b", 4, true), 4);
	/* paired with a quote lines later that is followed by text: the same */
	T_ASSERT_EQ_I64(rlen(d, late, strlen(late), false), 5);
	/* a bad close after a good multi-line field: the record is whole, the decoder says why */
	T_ASSERT_EQ_I64(rlen(d, later, strlen(later), false), strlen(later) - 4);
	/* a multi-line quoted field larger than any row is cut without waiting for its end */
	memset(huge, 'x', big);
	memcpy(huge, "7,\"a\n", 5);
	T_ASSERT_EQ_I64(rlen(d, huge, big, false), 5);
	free(huge);
	sl_csv_dec_destroy(d);
	sl_schema_destroy(s);
}

static void test_text(void)
{
	int64_t v;
	sl_ts_t t;
	char out[32];

	T_ASSERT(sl_fmt_parse_i64("9223372036854775807", 19, INT64_MIN, INT64_MAX, &v) == 0 &&
		 v == INT64_MAX);
	T_ASSERT(sl_fmt_parse_i64("-9223372036854775808", 20, INT64_MIN, INT64_MAX, &v) == 0 &&
		 v == INT64_MIN);
	T_ASSERT(sl_fmt_parse_i64("9223372036854775808", 19, INT64_MIN, INT64_MAX, &v) ==
		 -ERANGE);
	T_ASSERT(sl_fmt_parse_i64("-", 1, INT64_MIN, INT64_MAX, &v) == -EINVAL);
	T_ASSERT(sl_fmt_parse_i64("", 0, INT64_MIN, INT64_MAX, &v) == -EINVAL);
	T_ASSERT(sl_fmt_parse_i64("+12", 3, 0, 12, &v) == 0 && v == 12);
	T_ASSERT(sl_fmt_parse_i64("13", 2, 0, 12, &v) == -ERANGE);
	T_ASSERT(sl_fmt_parse_i64("1 2", 3, 0, 100, &v) == -EINVAL);
	T_ASSERT(sl_fmt_parse_ts("2000-02-29T12:00:00.5-02:30", 27, &t) == 0 &&
		 t == 951825600500ll + 9000000);
	T_ASSERT(sl_fmt_parse_ts("1900-02-29", 10, &t) == -EINVAL);
	T_ASSERT(sl_fmt_parse_ts("0001-01-01 00:00:00", 19, &t) == 0 && t == -62135596800000ll);
	/* writer and parser agree over four centuries, on both sides of 1970 */
	for (sl_ts_t ts = -6000000000000ll; ts < 8000000000000ll; ts += 987654321987ll / 13) {
		int n = sl_fmt_write_ts(ts, out);

		T_ASSERT(n == 23);
		T_ASSERT(sl_fmt_parse_ts(out, 23, &t) == 0);
		T_ASSERT_EQ_I64(t, ts);
	}
	sl_fmt_write_ts(0, out);
	T_ASSERT(memcmp(out, "1970-01-01 00:00:00.000", 23) == 0);
}

int main(void)
{
	test_decode();
	test_options();
	test_record_len();
	test_utf8_decimal();
	test_text();
	return T_EXIT_PASS;
}
