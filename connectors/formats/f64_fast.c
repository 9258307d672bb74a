/*
 * f64_fast.c - decimal text to double without strtod for the numbers records actually hold
 * ("12.34", "-7", "0.5e3"): Clinger's fast path, the first step of sl_fmt_parse_f64.
 *
 * Why it is exact: a decimal w * 10^e with an integer w <= 2^53 and |e| <= 22 has both w and
 * 10^|e| exactly representable as doubles (5^22 < 2^53), and IEEE 754 multiplication and
 * division round their exact result correctly, so one operation gives the same double as
 * strtod's arbitrary-precision rounding. Anything else - more than 19 significant digits,
 * a larger mantissa or exponent, NaN, Infinity, a syntax strtod would read differently
 * (leading whitespace other than blanks, hex, a lone sign) - returns false and the caller
 * takes strtod. It costs a few instructions a digit; glibc's strtod costs several hundred a
 * call (its locale lookup and multi-precision setup), which was a tenth of a CSV job.
 *
 * The result depends on the rounding mode in force exactly as strtod's does (the engine never
 * changes it from round-to-nearest). It needs double arithmetic without excess precision,
 * which FLT_EVAL_METHOD == 0 (every SSE2/AArch64 target) guarantees; elsewhere it never
 * takes the fast path.
 */
#include <float.h>

#include "format.h"

/* 10^0 .. 10^22: every one an exact double. */
static const double exact_pow10[23] = {
	1e0,  1e1,  1e2,  1e3,	1e4,  1e5,  1e6,  1e7,	1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static bool is_digit(char c)
{
	return (unsigned)((unsigned char)c - '0') <= 9;
}

bool sl_fmt_f64_fast(const char *s, size_t len, double *out)
{
	size_t used;

	return sl_fmt_f64_fast_prefix(s, len, out, &used) && used == len;
}

bool sl_fmt_f64_fast_prefix(const char *s, size_t len, double *out, size_t *used)
{
#if FLT_EVAL_METHOD != 0
	(void)s;
	(void)len;
	(void)out;
	(void)used;
	return false;
#else
	const char *p = s, *end = s + len;
	uint64_t w = 0; /* the significant digits, as an integer */
	int nd = 0;	/* digits in w (leading zeros not counted): at most 19 fit */
	int e10 = 0;	/* value = w * 10^e10 */
	bool neg = false, any = false;
	double v;

	if (p < end && (*p == '-' || *p == '+')) {
		neg = *p == '-';
		p++;
	}
	while (p < end && *p == '0') {
		p++;
		any = true;
	}
	for (; p < end && is_digit(*p); p++) {
		if (nd == 19)
			return false;
		w = w * 10 + (unsigned)(*p - '0');
		nd++;
		any = true;
	}
	if (p < end && *p == '.') {
		p++;
		if (nd == 0) {
			/* zeros between the point and the first significant digit */
			for (; p < end && *p == '0'; p++) {
				e10--;
				any = true;
			}
		}
		for (; p < end && is_digit(*p); p++) {
			if (nd == 19)
				return false;
			w = w * 10 + (unsigned)(*p - '0');
			nd++;
			e10--;
			any = true;
		}
	}
	if (!any)
		return false; /* "", ".", "-", "inf", "nan"...: strtod decides */
	if (p < end && (*p == 'e' || *p == 'E')) {
		bool eneg = false;
		int x = 0;

		p++;
		if (p < end && (*p == '-' || *p == '+')) {
			eneg = *p == '-';
			p++;
		}
		if (p == end || !is_digit(*p))
			return false; /* "1e", "1e+": strtod stops before the 'e' */
		for (; p < end && is_digit(*p); p++)
			if (x < 10000) /* saturate: far outside the fast range anyway */
				x = x * 10 + (*p - '0');
		e10 += eneg ? -x : x;
	}
	/* the number ends here; the text after it is the caller's to judge */
	*used = (size_t)(p - s);
	if (w == 0) {
		*out = neg ? -0.0 : 0.0; /* zero at any exponent, signed as strtod signs it */
		return true;
	}
	if (w > (UINT64_C(1) << 53) || e10 < -22 || e10 > 22)
		return false;
	v = (double)w;
	v = e10 < 0 ? v / exact_pow10[-e10] : v * exact_pow10[e10];
	*out = neg ? -v : v;
	return true;
#endif
}
