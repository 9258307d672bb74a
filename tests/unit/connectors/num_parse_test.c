/*
 * num_parse_test.c - the hand-written number parsers of the record formats against their
 * references: sl_fmt_parse_f64 (Clinger's fast path, strtod otherwise) must give strtod's
 * double bit for bit and the same verdict for every text, and sl_fmt_parse_i64 (unchecked
 * accumulation of short digit runs) the verdicts and values of the digit-by-digit checked
 * parser it replaced. Edge cases by hand, then a few hundred thousand random texts from a
 * fixed seed (the run is the same every time).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "tests/test.h"

/* ---- references: the parsers as they were before the fast paths ---- */

static void ref_trim(const char **s, size_t *len)
{
	while (*len && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*len)--;
	}
	while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
		(*len)--;
}

static int ref_f64(const char *s, size_t len, double *out)
{
	char tmp[128];
	char *end;

	ref_trim(&s, &len);
	if (len == 0 || len >= sizeof tmp)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (s[i] == 'x' || s[i] == 'X')
			return -EINVAL;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	*out = strtod(tmp, &end);
	return end == tmp + len ? 0 : -EINVAL;
}

static int ref_i64(const char *s, size_t len, int64_t lo, int64_t hi, int64_t *out)
{
	uint64_t v = 0, limit;
	bool neg = false;
	size_t i = 0;

	ref_trim(&s, &len);
	if (len && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == len)
		return -EINVAL;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9)
			return -EINVAL;
		if (v > (limit - d) / 10) {
			for (i++; i < len; i++)
				if ((unsigned)((unsigned char)s[i] - '0') > 9)
					return -EINVAL;
			return -ERANGE;
		}
		v = v * 10 + d;
	}
	int64_t r = neg ? (int64_t)(0 - v) : (int64_t)v;

	if (r < lo || r > hi)
		return -ERANGE;
	*out = r;
	return 0;
}

/* ---- comparisons ---- */

static long n_checked, n_fast;

static void check_f64(const char *s, size_t len)
{
	double got = 12345.0, want = 12345.0, fast;
	int rg = sl_fmt_parse_f64(s, len, &got), rw = ref_f64(s, len, &want);
	uint64_t bg, bw;

	memcpy(&bg, &got, 8);
	memcpy(&bw, &want, 8);
	if (rg != rw || (rw == 0 && bg != bw && !(isnan(got) && isnan(want)))) {
		fprintf(stderr,
			"f64 [%.*s]: got %d %.17g (%016" PRIx64 "), strtod %d %.17g (%016" PRIx64
			")\n",
			(int)len, s, rg, got, bg, rw, want, bw);
		exit(T_EXIT_FAIL);
	}
	n_checked++;
	/* the fast path alone, on what sl_fmt_parse_f64 hands it: trimmed, under 128 bytes */
	ref_trim(&s, &len);
	if (len < 128 && sl_fmt_f64_fast(s, len, &fast)) {
		n_fast++;
		memcpy(&bg, &fast, 8);
		if (rw != 0 || bg != bw) {
			fprintf(stderr, "f64 fast path [%.*s]: %.17g, strtod %d %.17g\n", (int)len,
				s, fast, rw, want);
			exit(T_EXIT_FAIL);
		}
	}
}

static void check_f64_str(const char *s)
{
	check_f64(s, strlen(s));
}

static void check_i64(const char *s, size_t len, int64_t lo, int64_t hi)
{
	int64_t got = 7, want = 7;
	int rg = sl_fmt_parse_i64(s, len, lo, hi, &got), rw = ref_i64(s, len, lo, hi, &want);

	if (rg != rw || (rw == 0 && got != want)) {
		fprintf(stderr,
			"i64 [%.*s] in [%" PRId64 ", %" PRId64 "]: got %d %" PRId64
			", reference %d %" PRId64 "\n",
			(int)len, s, lo, hi, rg, got, rw, want);
		exit(T_EXIT_FAIL);
	}
}

static void check_i64_all(const char *s)
{
	size_t len = strlen(s);

	check_i64(s, len, INT64_MIN, INT64_MAX);
	check_i64(s, len, INT32_MIN, INT32_MAX);
	check_i64(s, len, 0, 12);
	check_i64(s, len, -5, INT64_MAX / 2);
}

/* ---- generators (splitmix64: fixed seed, the same texts every run) ---- */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static unsigned below(unsigned n)
{
	return (unsigned)(next() % n);
}

/* Digits, a point, an exponent, signs and the odd stray character, in random shapes. */
static size_t gen_decimal(char *b)
{
	size_t n = 0;
	unsigned ni = below(24), nf = below(4) ? below(22) : 0;

	if (below(3) == 0)
		b[n++] = below(2) ? '-' : '+';
	if (below(8) == 0)
		for (unsigned k = below(5); k; k--)
			b[n++] = '0';
	for (unsigned k = 0; k < ni; k++)
		b[n++] = (char)('0' + (k == 0 && below(2) ? 1 + below(9) : below(10)));
	if (nf || below(6) == 0) {
		b[n++] = '.';
		for (unsigned k = 0; k < nf; k++)
			b[n++] = (char)('0' + (below(4) == 0 ? 0 : below(10)));
	}
	if (below(4) == 0) {
		b[n++] = below(2) ? 'e' : 'E';
		if (below(2))
			b[n++] = below(2) ? '-' : '+';
		for (unsigned k = below(4); k; k--)
			b[n++] = (char)('0' + below(10));
	}
	if (below(40) == 0)
		b[n++] = " \tx.e-a\n"[below(8)];
	if (below(40) == 0) {
		memmove(b + 1, b, n++);
		b[0] = " \t\n"[below(3)];
	}
	return n;
}

/* The text of a random double as printf writes it in various precisions. */
static size_t gen_printed(char *b)
{
	uint64_t bits = next();
	double v;

	switch (below(4)) {
	case 0: /* any finite double */
		memcpy(&v, &bits, 8);
		if (!isfinite(v))
			v = 1.5;
		break;
	case 1: /* the range of amounts */
		v = (double)(bits % 100000000) / 100.0;
		break;
	case 2: /* near 2^53 */
		v = (double)((UINT64_C(1) << 53) - 50 + bits % 100);
		break;
	default: /* moderate magnitudes */
		v = ldexp((double)(bits >> 11), (int)below(120) - 100);
		break;
	}
	if (below(2))
		v = -v;
	switch (below(4)) {
	case 0:
		return (size_t)snprintf(b, 64, "%.17g", v);
	case 1:
		return (size_t)snprintf(b, 64, "%.*g", 1 + (int)below(17), v);
	case 2:
		return (size_t)snprintf(b, 64, "%.*e", (int)below(20), v);
	default:
		if (fabs(v) > 1e30)
			v = fmod(v, 1e20);
		return (size_t)snprintf(b, 64, "%.*f", (int)below(12), v);
	}
}

static void test_f64_edges(void)
{
	static const char *const cases[] = {
		"0",
		"-0",
		"+0",
		"0.0",
		"-0.0",
		"00",
		"000.000",
		"0e0",
		"-0e-5",
		"0e99999",
		"1",
		"-1",
		"1.",
		".5",
		"-.5",
		"+.5",
		".",
		"-",
		"+",
		"",
		" ",
		"e5",
		".e5",
		"1e",
		"1e+",
		"1e-",
		"1E5",
		"1e+5",
		"1e-5",
		"1e22",
		"1e23",
		"-1e22",
		"1e-22",
		"1e-23",
		"9007199254740992",
		"9007199254740993",
		"9007199254740994",
		"9007199254740991",
		"-9007199254740993",
		"900719925474099.3",
		"9007199254740993e-1",
		"123456789012345678",
		"1234567890123456789",
		"12345678901234567890",
		"0.1",
		"0.2",
		"0.3",
		"1.1",
		"2.01",
		"5",
		"5.00",
		"4.99",
		"997.99",
		"3.14159",
		"2.2250738585072014e-308",
		"2.2250738585072011e-308",
		"4.9e-324",
		"5e-324",
		"1e-400",
		"1.7976931348623157e308",
		"1.7976931348623159e308",
		"1e309",
		"NaN",
		"nan",
		"-nan",
		"Infinity",
		"-Infinity",
		"inf",
		"INF",
		"infinity",
		"0x10",
		"0X1p3",
		"1x",
		" 1.5",
		"1.5 ",
		"\t2.5\t",
		"\n1.5",
		"1.5\n",
		"1,5",
		"1..5",
		"1.5.5",
		"--1",
		"+-1",
		"1e5.5",
		"1e5e5",
		"12a",
		"0.000000000000000000001",
		"0.0000000000000000000000123",
		"1000000000000000000000",
		"100000000000000000000000",
		"123.456e-10",
		"123.456e10",
		"4503599627370497.5",
		"0.30000000000000004",
		"000000000000000000000000000000001",
		"1.0000000000000000000000000000001",
	};

	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		check_f64_str(cases[i]);
	/* too long for the stack copy: an error on both sides, even with a fast-path shape */
	char big[200];

	memset(big, '0', sizeof big);
	big[sizeof big - 1] = '1';
	check_f64(big, sizeof big);
	/* the workload's shape must take the fast path */
	double v;

	T_ASSERT(sl_fmt_f64_fast("123.45", 6, &v) && v == 123.45);
	T_ASSERT(sl_fmt_f64_fast("-0.5e2", 6, &v) && v == -50.0);
	T_ASSERT(!sl_fmt_f64_fast("9007199254740993", 16, &v));
	T_ASSERT(!sl_fmt_f64_fast("1e23", 4, &v));
	T_ASSERT(!sl_fmt_f64_fast("NaN", 3, &v));
}

static void test_f64_random(void)
{
	char b[256];

	for (int i = 0; i < 400000; i++)
		check_f64(b, gen_decimal(b));
	for (int i = 0; i < 200000; i++)
		check_f64(b, gen_printed(b));
	/* exhaustive over the amounts of the peer bench shape and their neighbours */
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(b, sizeof b, "%d.%02d", i / 100, i % 100);

		check_f64(b, (size_t)n);
	}
	/* the random texts must reach both paths, or the comparison proves little */
	T_ASSERT(n_fast > n_checked / 4 && n_fast < n_checked * 9 / 10);
}

static void test_i64(void)
{
	static const char *const cases[] = {
		"0",
		"-0",
		"+0",
		"1",
		"-1",
		"12",
		"13",
		"-",
		"+",
		"",
		" ",
		" 7 ",
		"\t-7\t",
		"1 2",
		"12x",
		"x12",
		"2147483647",
		"2147483648",
		"-2147483648",
		"-2147483649",
		"999999999999999999",
		"-999999999999999999",
		"1000000000000000000",
		"9223372036854775807",
		"9223372036854775808",
		"-9223372036854775808",
		"-9223372036854775809",
		"18446744073709551615",
		"18446744073709551616",
		"99999999999999999999999",
		"99999999999999999999999x",
		"0000000000000000000000001",
		"-0000000000000000000000009223372036854775808",
		"1704067200000",
		"1.5",
		"1e3",
	};
	char b[64];

	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		check_i64_all(cases[i]);
	for (int i = 0; i < 300000; i++) {
		size_t n = 0;
		unsigned nd = below(24);

		if (below(3) == 0)
			b[n++] = below(2) ? '-' : '+';
		if (below(6) == 0)
			for (unsigned k = below(6); k; k--)
				b[n++] = '0';
		for (unsigned k = 0; k < nd; k++)
			b[n++] = (char)('0' + below(10));
		if (n && below(30) == 0)
			b[below((unsigned)n)] = " x-+."[below(5)];
		if (below(20) == 0)
			b[n++] = ' ';
		b[n] = '\0';
		check_i64_all(b);
	}
}

int main(void)
{
	test_f64_edges();
	test_f64_random();
	test_i64();
	printf("%ld doubles compared with strtod (%ld by the fast path)\n", n_checked, n_fast);
	return T_EXIT_PASS;
}
