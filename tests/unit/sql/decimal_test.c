/*
 * decimal_test.c - DECIMAL(p, s) with Flink semantics: parsing with HALF_UP and range
 * checks, plain formatting, Flink's result types (cases from Flink's LogicalTypeMergingTest),
 * exact values of each operation compared as strings (expected values from Python's decimal
 * module with ROUND_HALF_UP), overflow at 38 digits, and randomized identities.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "decimal.h"
#include "test.h"

#define D(p, s) ((struct sl_dec_type){ .prec = (p), .scale = (s) })

typedef int (*op_fn)(sl_dec_t, struct sl_dec_type, sl_dec_t, struct sl_dec_type,
		     struct sl_dec_type, sl_dec_t *);
typedef struct sl_dec_type (*type_fn)(struct sl_dec_type, struct sl_dec_type);

static const char *fmt(sl_dec_t v, struct sl_dec_type t)
{
	static char buf[SL_DEC_STR_MAX];
	int n = sl_dec_format(v, t, buf, sizeof(buf));

	T_ASSERT(n >= 0 && (size_t)n == strlen(buf));
	return buf;
}

static void check_str(const char *got, const char *want, int line)
{
	if (strcmp(got, want)) {
		fprintf(stderr, "line %d: got %s, want %s\n", line, got, want);
		exit(T_EXIT_FAIL);
	}
}

static sl_dec_t parse_ok(const char *txt, struct sl_dec_type t)
{
	sl_dec_t v;
	int rc = sl_dec_parse(txt, strlen(txt), t, &v);

	if (rc) {
		fprintf(stderr, "parse '%s' as (%u,%u): %d\n", txt, t.prec, t.scale, rc);
		exit(T_EXIT_FAIL);
	}
	return v;
}

/* Parses txt as t and checks the printed value. */
#define PARSE(txt, p, s, want) check_str(fmt(parse_ok(txt, D(p, s)), D(p, s)), want, __LINE__)

#define PARSE_ERR(txt, p, s, err)                                                        \
	do {                                                                             \
		sl_dec_t v_ = 12345;                                                     \
		T_ASSERT_EQ_I64(sl_dec_parse(txt, strlen(txt), D(p, s), &v_), err);      \
		T_ASSERT(v_ == 12345);                                                   \
	} while (0)

static void check_type(struct sl_dec_type got, int p, int s, int line)
{
	if (got.prec != p || got.scale != s) {
		fprintf(stderr, "line %d: type (%u,%u), want (%d,%d)\n", line, got.prec,
			got.scale, p, s);
		exit(T_EXIT_FAIL);
	}
}

#define TYPE(fn, p1, s1, p2, s2, p, s) check_type(fn(D(p1, s1), D(p2, s2)), p, s, __LINE__)

/*
 * Runs `op` on the parsed operands in the result type its type function derives, checks
 * that type is (rp, rs) and the result prints as `want` (or the call returns `err`).
 */
static void run_op(op_fn op, type_fn tf, const char *a, struct sl_dec_type ta, const char *b,
		   struct sl_dec_type tb, int rp, int rs, int err, const char *want, int line)
{
	struct sl_dec_type rt = tf(ta, tb);
	sl_dec_t out = 777;
	int rc;

	check_type(rt, rp, rs, line);
	rc = op(parse_ok(a, ta), ta, parse_ok(b, tb), tb, rt, &out);
	if (rc != err) {
		fprintf(stderr, "line %d: %s op %s returned %d, want %d\n", line, a, b, rc, err);
		exit(T_EXIT_FAIL);
	}
	if (err)
		T_ASSERT(out == 777);
	else
		check_str(fmt(out, rt), want, line);
}

#define OP(name, a, p1, s1, b, p2, s2, rp, rs, want)                                      \
	run_op(sl_dec_##name, sl_dec_##name##_type, a, D(p1, s1), b, D(p2, s2), rp, rs, 0,  \
	       want, __LINE__)
#define OP_ERR(name, a, p1, s1, b, p2, s2, rp, rs, err)                                   \
	run_op(sl_dec_##name, sl_dec_##name##_type, a, D(p1, s1), b, D(p2, s2), rp, rs, err, \
	       NULL, __LINE__)

#define MAX38 "99999999999999999999999999999999999999"

static void test_parse(void)
{
	PARSE("-12.345", 10, 3, "-12.345");
	PARSE("154.8", 10, 2, "154.80");
	PARSE("0", 5, 2, "0.00");
	PARSE("-0", 5, 0, "0");
	PARSE("1.005", 10, 2, "1.01");
	PARSE("-1.005", 10, 2, "-1.01");
	PARSE("1.004999", 10, 2, "1.00");
	PARSE("-0.004", 10, 2, "0.00");
	PARSE("-0.005", 10, 2, "-0.01");
	PARSE("0.5", 1, 0, "1");
	PARSE("-2.5", 5, 0, "-3");
	PARSE("2.4999", 5, 0, "2");
	PARSE("1e3", 10, 2, "1000.00");
	PARSE("1.5E-2", 10, 3, "0.015");
	PARSE("1.5e+2", 10, 0, "150");
	PARSE("5e-3", 5, 2, "0.01");
	PARSE("5e-4", 5, 2, "0.00");
	PARSE("12.5e-1", 5, 0, "1");
	PARSE(".5", 3, 1, "0.5");
	PARSE("5.", 3, 0, "5");
	PARSE("+7", 3, 0, "7");
	PARSE("  42.1 \t", 5, 1, "42.1");
	PARSE("0000000000000000000000000000000000000000000001.5", 2, 0, "2");
	PARSE("0.00000000000000000000000000000000000000000000000000001", 38, 38,
	      "0.00000000000000000000000000000000000000");
	PARSE("1e-1000000000000000", 10, 2, "0.00");
	PARSE("0e999999999999", 10, 2, "0.00");
	PARSE("1e37", 38, 0, "10000000000000000000000000000000000000");
	PARSE(MAX38, 38, 0, MAX38);
	PARSE("-" MAX38, 38, 0, "-" MAX38);
	PARSE("-." MAX38, 38, 38, "-0." MAX38);
	PARSE("999.994", 5, 2, "999.99");
	PARSE("12345678901234567890.123456789012345678", 38, 18,
	      "12345678901234567890.123456789012345678");

	PARSE_ERR("999.995", 5, 2, -ERANGE);
	PARSE_ERR("1000", 5, 2, -ERANGE);
	PARSE_ERR(MAX38 ".5", 38, 0, -ERANGE);
	PARSE_ERR("100000000000000000000000000000000000000", 38, 0, -ERANGE);
	PARSE_ERR("1e38", 38, 0, -ERANGE);
	/* 2^128 and 2^128 * 10: would wrap a 128-bit accumulator to 0. */
	PARSE_ERR("340282366920938463463374607431768211456", 38, 0, -ERANGE);
	PARSE_ERR("340282366920938463463374607431768211456.0e1", 38, 0, -ERANGE);
	PARSE_ERR("1e999999999999", 38, 0, -ERANGE);
	PARSE_ERR("1234567890123456789012345678901234567890123456789", 38, 0, -ERANGE);
	PARSE("0.5", 1, 1, "0.5");
	PARSE_ERR("1", 1, 1, -ERANGE);

	const char *bad[] = { "", " ", "abc", "1.2.3", "1e", "1e+", "--1", "+", ".", "-.",
			      "1 2", "1,5", "0x10", "e5", "1e5.0", "1.5f", "NaN", "Infinity" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		PARSE_ERR(bad[i], 10, 2, -EINVAL);
	/* Shape is checked before size: long malformed text is -EINVAL, not -ERANGE. */
	PARSE_ERR(MAX38 MAX38 "x", 38, 0, -EINVAL);
	/* Length is honoured: text need not be NUL-terminated. */
	sl_dec_t v;

	T_ASSERT_EQ_I64(sl_dec_parse("12.75xyz", 5, D(5, 1), &v), 0);
	check_str(fmt(v, D(5, 1)), "12.8", __LINE__);

	PARSE_ERR("1", 0, 0, -EINVAL);
	PARSE_ERR("1", 39, 0, -EINVAL);
	PARSE_ERR("1", 5, 6, -EINVAL);
}

static void test_format(void)
{
	char buf[SL_DEC_STR_MAX];
	sl_dec_t v = parse_ok("154.8", D(10, 2));

	T_ASSERT_EQ_I64(sl_dec_format(v, D(10, 2), buf, 6), -ENOSPC);
	T_ASSERT_EQ_I64(sl_dec_format(v, D(10, 2), buf, 7), 6);
	check_str(buf, "154.80", __LINE__);
	check_str(fmt(-5, D(3, 2)), "-0.05", __LINE__);
	check_str(fmt(0, D(38, 38)), "0.00000000000000000000000000000000000000", __LINE__);
	/* Chunk boundaries of the digit loop: 10^19, 10^19 + 1, 10^38 - 1 at full scale. */
	check_str(fmt((sl_dec_t)10000000000000000000ULL, D(20, 0)), "10000000000000000000",
		  __LINE__);
	check_str(fmt((sl_dec_t)10000000000000000000ULL * 1000000000000000000ULL + 7, D(38, 0)),
		  "10000000000000000000000000000000000007", __LINE__);
	check_str(fmt(-parse_ok(MAX38, D(38, 0)), D(38, 38)), "-0." MAX38, __LINE__);
}

static void test_types(void)
{
	TYPE(sl_dec_add_type, 10, 2, 5, 0, 11, 2);
	TYPE(sl_dec_sub_type, 10, 2, 5, 0, 11, 2);
	TYPE(sl_dec_add_type, 38, 10, 38, 0, 38, 6);
	TYPE(sl_dec_add_type, 38, 0, 38, 0, 38, 0);
	TYPE(sl_dec_add_type, 38, 2, 2, 2, 38, 2);
	TYPE(sl_dec_mul_type, 10, 2, 10, 0, 21, 2);
	TYPE(sl_dec_mul_type, 30, 10, 30, 10, 38, 6);
	TYPE(sl_dec_mul_type, 30, 20, 30, 20, 38, 17);
	TYPE(sl_dec_mul_type, 38, 2, 38, 3, 38, 5);
	TYPE(sl_dec_mul_type, 5, 2, 5, 3, 11, 5);
	TYPE(sl_dec_div_type, 10, 2, 10, 0, 21, 13);
	TYPE(sl_dec_div_type, 32, 8, 38, 8, 38, 6);
	TYPE(sl_dec_div_type, 30, 20, 30, 20, 38, 8);
	TYPE(sl_dec_div_type, 5, 0, 5, 0, 11, 6);
	/* AVG over DECIMAL(10, 2): Flink divides by DECIMAL(20, 0), giving (38, 6). */
	TYPE(sl_dec_div_type, 38, 2, 20, 0, 38, 6);
	TYPE(sl_dec_mod_type, 10, 2, 5, 0, 7, 2);
	TYPE(sl_dec_mod_type, 38, 38, 38, 0, 38, 38);
}

static void test_ops(void)
{
	OP(add, "1.5", 2, 1, "-2.25", 3, 2, 4, 2, "-0.75");
	OP(add, "154.8", 10, 2, "0.2", 5, 1, 11, 2, "155.00");
	OP(add, "-1", 5, 0, "1", 5, 0, 6, 0, "0");
	OP(sub, "0.1", 2, 1, "0.1", 2, 1, 3, 1, "0.0");
	OP(sub, "-3.25", 5, 2, "1.125", 5, 3, 7, 3, "-4.375");
	OP_ERR(add, MAX38, 38, 0, "1", 38, 0, 38, 0, -ERANGE);
	OP_ERR(sub, "-" MAX38, 38, 0, "1", 38, 0, 38, 0, -ERANGE);
	OP(add, MAX38, 38, 0, "-1", 38, 0, 38, 0, "99999999999999999999999999999999999998");
	/* Scale reduction rounds: (38,10) + (38,0) is (38,6). */
	OP(add, "0.0000005", 38, 10, "1", 38, 0, 38, 6, "1.000001");
	OP(add, "-0.0000005", 38, 10, "0", 38, 0, 38, 6, "-0.000001");
	OP(add, "-0.0000015", 38, 10, "0.000001", 38, 6, 38, 6, "-0.000001");

	OP(mul, "1.25", 3, 2, "-0.5", 2, 1, 6, 3, "-0.625");
	OP(mul, "-1.5", 2, 1, "-1.5", 2, 1, 5, 2, "2.25");
	OP(mul, "154.80", 10, 2, "3", 10, 0, 21, 2, "464.40");
	OP(mul, "1.2345665", 38, 10, "1", 38, 10, 38, 6, "1.234567");
	OP(mul, "-1.2345665", 38, 10, "1", 38, 10, 38, 6, "-1.234567");
	OP(mul, "1234567890123456789012345678.0123456789", 38, 10, "0.0000000001", 38, 10, 38,
	   6, "123456789012345678.901235");
	OP(mul, "10000000000000000000", 20, 0, "1000000000000000000", 20, 0, 38, 0,
	   "10000000000000000000000000000000000000");
	OP_ERR(mul, "10000000000000000000", 20, 0, "10000000000000000000", 20, 0, 38, 0,
	       -ERANGE);
	OP_ERR(mul, MAX38, 38, 0, MAX38, 38, 0, 38, 0, -ERANGE);
	OP(mul, "-" MAX38, 38, 0, "0", 38, 0, 38, 0, "0");

	OP(div, "10", 10, 2, "3", 10, 0, 21, 13, "3.3333333333333");
	OP(div, "-10", 10, 2, "3", 10, 0, 21, 13, "-3.3333333333333");
	OP(div, "2", 5, 0, "3", 5, 0, 11, 6, "0.666667");
	OP(div, "-2", 5, 0, "3", 5, 0, 11, 6, "-0.666667");
	OP(div, "2", 5, 0, "-3", 5, 0, 11, 6, "-0.666667");
	OP(div, "1", 5, 0, "8", 5, 0, 11, 6, "0.125000");
	OP(div, "1", 5, 0, "16", 5, 0, 11, 6, "0.062500");
	/* 1/64 is exact at scale 6; 1/128 = 0.0078125 is a tie, HALF_UP goes away from 0. */
	OP(div, "1", 5, 0, "64", 5, 0, 11, 6, "0.015625");
	OP(div, "1", 5, 0, "128", 5, 0, 11, 6, "0.007813");
	OP(div, "-1", 5, 0, "128", 5, 0, 11, 6, "-0.007813");
	OP(div, "0", 5, 0, "-7", 5, 0, 11, 6, "0.000000");
	OP_ERR(div, "1", 5, 0, "0", 5, 0, 11, 6, -EDOM);
	OP_ERR(div, MAX38, 38, 0, "0.1", 1, 1, 38, 6, -ERANGE);
	/* Wide operands: numerator above 2^128, divisor above 2^64 (shift-subtract path). */
	OP(div, "1234567890123456789012345678.0123456789", 38, 10,
	   "98765432109876543210.1234567890", 38, 10, 38, 6, "12499999.886094");
	OP(div, "-1234567890123456789012345678.0123456789", 38, 10,
	   "98765432109876543210.1234567890", 38, 10, 38, 6, "-12499999.886094");
	OP(div, MAX38, 38, 0, MAX38, 38, 0, 38, 6, "1.000000");

	OP(mod, "10.5", 3, 1, "3", 1, 0, 2, 1, "1.5");
	OP(mod, "-10.5", 3, 1, "3", 1, 0, 2, 1, "-1.5");
	OP(mod, "10.5", 3, 1, "-3", 1, 0, 2, 1, "1.5");
	OP(mod, "1234567890123456789012345678.0123456789", 38, 10,
	   "98765432109876543210.1234567890", 38, 10, 38, 10,
	   "87515432108762345678.2733024679");
	OP_ERR(mod, "1", 5, 0, "0", 5, 0, 5, 0, -EDOM);

	/* Caller-chosen result types: rounding and range are applied to the given type. */
	sl_dec_t out;

	T_ASSERT_EQ_I64(sl_dec_div(parse_ok("10", D(10, 2)), D(10, 2), 3, D(10, 0), D(10, 2),
				   &out), 0);
	check_str(fmt(out, D(10, 2)), "3.33", __LINE__);
	T_ASSERT_EQ_I64(sl_dec_div(parse_ok("20", D(10, 2)), D(10, 2), 3, D(10, 0), D(10, 2),
				   &out), 0);
	check_str(fmt(out, D(10, 2)), "6.67", __LINE__);
	/* Negative power moved to the divisor: 12345.67 / 1 at scale 0 of (38,30). */
	T_ASSERT_EQ_I64(sl_dec_div(parse_ok("12345.5", D(38, 30)), D(38, 30), 1, D(1, 0), D(10, 0),
				   &out), 0);
	check_str(fmt(out, D(10, 0)), "12346", __LINE__);
	T_ASSERT_EQ_I64(sl_dec_add(1, D(1, 0), 2, D(1, 0), D(1, 0), &out), 0);
	T_ASSERT_EQ_I64(sl_dec_add(9, D(1, 0), 2, D(1, 0), D(1, 0), &out), -ERANGE);
	T_ASSERT_EQ_I64(sl_dec_add(1, D(1, 0), 2, D(1, 0), D(0, 0), &out), -EINVAL);
	T_ASSERT_EQ_I64(sl_dec_mul(1, D(40, 0), 2, D(1, 0), D(5, 0), &out), -EINVAL);
}

static void test_cmp_cast(void)
{
	T_ASSERT_EQ_I64(sl_dec_cmp(150, D(3, 2), 15, D(2, 1)), 0);
	T_ASSERT_EQ_I64(sl_dec_cmp(-1, D(1, 0), 5, D(1, 1)), -1);
	T_ASSERT_EQ_I64(sl_dec_cmp(0, D(1, 0), -1, D(2, 2)), 1);
	T_ASSERT_EQ_I64(sl_dec_cmp(0, D(1, 0), 0, D(5, 5)), 0);
	T_ASSERT_EQ_I64(sl_dec_cmp(-20, D(2, 1), -199, D(3, 2)), -1);
	T_ASSERT_EQ_I64(sl_dec_cmp(-199, D(3, 2), -20, D(2, 1)), 1);
	/* Scales 38 apart: 10^37 at scale 0 against 0.99... at scale 38. */
	T_ASSERT_EQ_I64(sl_dec_cmp(parse_ok("1e37", D(38, 0)), D(38, 0),
				   parse_ok("." MAX38, D(38, 38)), D(38, 38)), 1);
	T_ASSERT_EQ_I64(sl_dec_cmp(parse_ok("-." MAX38, D(38, 38)), D(38, 38), -1, D(1, 0)), 1);

	sl_dec_t out;

	T_ASSERT_EQ_I64(sl_dec_rescale(2345, D(4, 3), D(3, 2), &out), 0);
	check_str(fmt(out, D(3, 2)), "2.35", __LINE__);
	T_ASSERT_EQ_I64(sl_dec_rescale(-2345, D(4, 3), D(3, 2), &out), 0);
	check_str(fmt(out, D(3, 2)), "-2.35", __LINE__);
	T_ASSERT_EQ_I64(sl_dec_rescale(2344, D(4, 3), D(3, 2), &out), 0);
	check_str(fmt(out, D(3, 2)), "2.34", __LINE__);
	T_ASSERT_EQ_I64(sl_dec_rescale(1234, D(10, 2), D(10, 4), &out), 0);
	check_str(fmt(out, D(10, 4)), "12.3400", __LINE__);
	T_ASSERT_EQ_I64(sl_dec_rescale(9999, D(4, 2), D(3, 1), &out), -ERANGE);
	T_ASSERT_EQ_I64(sl_dec_rescale(9999, D(4, 2), D(4, 1), &out), 0);
	check_str(fmt(out, D(4, 1)), "100.0", __LINE__);
	T_ASSERT_EQ_I64(sl_dec_rescale(1, D(38, 38), D(38, 0), &out), 0);
	T_ASSERT(out == 0);
	T_ASSERT_EQ_I64(sl_dec_rescale(1, D(1, 0), D(38, 38), &out), -ERANGE);

	T_ASSERT_EQ_I64(sl_dec_from_i64(INT64_MIN, D(19, 0), &out), 0);
	check_str(fmt(out, D(19, 0)), "-9223372036854775808", __LINE__);
	T_ASSERT_EQ_I64(sl_dec_from_i64(INT64_MAX, D(20, 2), &out), -ERANGE);
	T_ASSERT_EQ_I64(sl_dec_from_i64(INT64_MAX, D(21, 2), &out), 0);
	check_str(fmt(out, D(21, 2)), "9223372036854775807.00", __LINE__);
	T_ASSERT_EQ_I64(sl_dec_from_i64(-42, D(5, 3), &out), 0);
	check_str(fmt(out, D(5, 3)), "-42.000", __LINE__);

	T_ASSERT(sl_dec_to_double(15480, D(10, 2)) == 154.8);
	T_ASSERT(sl_dec_to_double(-125, D(4, 3)) == -0.125);
	T_ASSERT(sl_dec_to_double(parse_ok("1e37", D(38, 0)), D(38, 0)) == 1e37);
	T_ASSERT(sl_dec_negate(parse_ok("-154.8", D(10, 2))) == 15480);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Identities on random DECIMAL(18, 4) values: text round trip, (a + b) - b = a,
 * a * 1 = a, a / 1 = a, cmp agrees with the sign of a - b. */
static void test_random(void)
{
	struct sl_dec_type t = D(18, 4), one_t = D(1, 0);

	for (int i = 0; i < 100000; i++) {
		sl_dec_t a = (sl_dec_t)(int64_t)(next() % 1000000000000000000ULL) *
			     (next() & 1 ? 1 : -1);
		sl_dec_t b = (sl_dec_t)(int64_t)(next() % 1000000000000000000ULL) *
			     (next() & 1 ? 1 : -1);
		char buf[SL_DEC_STR_MAX];
		sl_dec_t x, y, z;

		T_ASSERT(sl_dec_format(a, t, buf, sizeof(buf)) > 0);
		T_ASSERT(sl_dec_parse(buf, strlen(buf), t, &x) == 0 && x == a);

		struct sl_dec_type st = sl_dec_add_type(t, t);

		T_ASSERT(sl_dec_add(a, t, b, t, st, &x) == 0 && x == a + b);
		T_ASSERT(sl_dec_sub(x, st, b, t, sl_dec_sub_type(st, t), &y) == 0 && y == a);
		T_ASSERT(sl_dec_mul(a, t, 1, one_t, sl_dec_mul_type(t, one_t), &z) == 0 &&
			 z == a);
		T_ASSERT(sl_dec_div(a, t, 1, one_t, t, &z) == 0 && z == a);
		T_ASSERT(sl_dec_cmp(a, t, b, t) == (a > b) - (a < b));
	}
}

int main(void)
{
	test_parse();
	test_format();
	test_types();
	test_ops();
	test_cmp_cast();
	test_random();
	return T_EXIT_PASS;
}
