/*
 * text.c - text to typed field values, shared by the CSV decoder and the JSON shim (for
 * values that arrive as strings, and DECIMAL/FLOAT numbers by their literal), and the
 * value formatters of the JSON and CSV writers.
 *
 * Everything here runs per field on the hot path, so integers, decimals, dates and
 * timestamps are parsed and written by hand (no strtol/strptime/timegm/printf, no locale, no
 * allocation); doubles take Clinger's exact fast path (f64_fast.c) when their digits allow
 * and otherwise, like floats, strtod/strtof on a stack copy, because correct rounding in
 * general is not worth re-deriving. Reasons are formatted only when a record fails.
 *
 * DECIMAL text is rounded HALF_UP to the field's scale from its digits (never through a
 * double), and a value that needs more than the precision becomes NULL, as Flink's
 * DecimalData.fromBigDecimal() does for its JSON and CSV formats, and is counted in the
 * decoder (the source reports it per operator); a table that asks for strictness
 * ('<format>.fail-on-decimal-overflow') makes it a record error instead.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static void trim(const char **s, size_t *len)
{
	while (*len && is_blank(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && is_blank((*s)[*len - 1]))
		(*len)--;
}

void sl_fmt_why(char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, SL_FMT_WHY_MAX, fmt, ap);
	va_end(ap);
}

int sl_fmt_parse_i64(const char *s, size_t len, int64_t lo, int64_t hi, int64_t *out)
{
	uint64_t v = 0, limit;
	bool neg = false;
	size_t i = 0;

	trim(&s, &len);
	if (len && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == len)
		return -EINVAL;
	if (len - i <= 18) {
		/* the usual case: 18 digits stay below 10^18 < 2^63, so no overflow test per
		 * digit (that test, a division, was most of this function's cost) */
		for (; i < len; i++) {
			unsigned d = (unsigned char)s[i] - '0';

			if (d > 9)
				return -EINVAL;
			v = v * 10 + d;
		}
	} else {
		/* magnitude limit: 2^63 for negatives, 2^63-1 otherwise */
		limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
		for (; i < len; i++) {
			unsigned d = (unsigned char)s[i] - '0';

			if (d > 9)
				return -EINVAL;
			if (v > (limit - d) / 10) {
				/* keep scanning so "12x" with many digits is still -EINVAL */
				for (i++; i < len; i++)
					if ((unsigned)((unsigned char)s[i] - '0') > 9)
						return -EINVAL;
				return -ERANGE;
			}
			v = v * 10 + d;
		}
	}
	int64_t r = neg ? (int64_t)(0 - v) : (int64_t)v;

	if (r < lo || r > hi)
		return -ERANGE;
	*out = r;
	return 0;
}

int sl_fmt_parse_f64(const char *s, size_t len, double *out)
{
	char tmp[128];
	char *end;

	trim(&s, &len);
	if (len == 0 || len >= sizeof tmp)
		return -EINVAL;
	if (sl_fmt_f64_fast(s, len, out))
		return 0;
	/* strtod accepts hex floats; a record format should not */
	for (size_t i = 0; i < len; i++)
		if (s[i] == 'x' || s[i] == 'X')
			return -EINVAL;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	*out = strtod(tmp, &end);
	return end == tmp + len ? 0 : -EINVAL;
}

static bool ieq(const char *s, size_t len, const char *lit)
{
	size_t n = strlen(lit);

	if (len != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((s[i] | 0x20) != lit[i])
			return false;
	return true;
}

int sl_fmt_parse_bool(const char *s, size_t len, bool *out)
{
	trim(&s, &len);
	if (ieq(s, len, "true")) {
		*out = true;
		return 0;
	}
	if (ieq(s, len, "false")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + (int64_t)doe - 719468;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
	static const unsigned char dim[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return dim[m - 1] + (m == 2 && leap);
}

/* Reads exactly n digits at s[*p]. Returns -1 if they are not all digits. */
static int digits(const char *s, size_t len, size_t *p, int n)
{
	int v = 0;

	if (*p + (size_t)n > len)
		return -1;
	for (int k = 0; k < n; k++) {
		unsigned d = (unsigned char)s[*p + k] - '0';

		if (d > 9)
			return -1;
		v = v * 10 + (int)d;
	}
	*p += (size_t)n;
	return v;
}

int sl_fmt_parse_date(const char *s, size_t len, int64_t *out)
{
	int y, mo, d;
	size_t p = 0;

	trim(&s, &len);
	y = digits(s, len, &p, 4);
	if (y < 0 || p >= len || s[p++] != '-')
		return -EINVAL;
	mo = digits(s, len, &p, 2);
	if (mo < 1 || mo > 12 || p >= len || s[p++] != '-')
		return -EINVAL;
	d = digits(s, len, &p, 2);
	if (d < 1 || (unsigned)d > days_in_month(y, (unsigned)mo) || p != len)
		return -EINVAL;
	*out = days_from_civil(y, (unsigned)mo, (unsigned)d);
	return 0;
}

static const uint64_t pow10u[19] = {
	1ull,
	10ull,
	100ull,
	1000ull,
	10000ull,
	100000ull,
	1000000ull,
	10000000ull,
	100000000ull,
	1000000000ull,
	10000000000ull,
	100000000000ull,
	1000000000000ull,
	10000000000000ull,
	100000000000000ull,
	1000000000000000ull,
	10000000000000000ull,
	100000000000000000ull,
	1000000000000000000ull,
};

/*
 * The mantissa's digits A (fracd of them after the point) times 10^exp: the unscaled result
 * is A * 10^(exp - fracd + scale), rounded HALF_UP on the first dropped digit. Only the kept
 * digits are accumulated and more than `prec` of them is an overflow (the first is not 0),
 * so the arithmetic never leaves uint64 (prec <= 18).
 */
int sl_fmt_parse_dec(const char *s, size_t len, int prec, int scale, int64_t *out)
{
	const char *first = NULL; /* first non-zero mantissa digit */
	size_t p = 0, mend, ndig = 0, fracd = 0, n = 0;
	int64_t exp = 0, kept, taken = 0;
	bool neg = false, point = false;
	uint64_t v = 0;
	int round = 0;

	trim(&s, &len);
	if (p < len && (s[p] == '-' || s[p] == '+'))
		neg = s[p++] == '-';
	for (; p < len; p++) {
		if (s[p] == '.' && !point) {
			point = true;
			continue;
		}
		if ((unsigned)((unsigned char)s[p] - '0') > 9)
			break;
		ndig++;
		fracd += point;
		if (!first && s[p] != '0')
			first = s + p;
		n += first != NULL;
	}
	mend = p;
	if (!ndig)
		return -EINVAL;
	if (p < len && (s[p] == 'e' || s[p] == 'E')) {
		bool eneg = false, edig = false;

		if (++p < len && (s[p] == '-' || s[p] == '+'))
			eneg = s[p++] == '-';
		for (; p < len && (unsigned)((unsigned char)s[p] - '0') <= 9; p++) {
			edig = true;
			if (exp < 100000) /* far beyond any overflow or underflow to 0 */
				exp = exp * 10 + (s[p] - '0');
		}
		if (!edig)
			return -EINVAL;
		if (eneg)
			exp = -exp;
	}
	if (p != len)
		return -EINVAL;
	if (!first) {
		*out = 0;
		return 0;
	}
	kept = (int64_t)n + exp - (int64_t)fracd + scale; /* digits of the integer result */
	if (kept > prec)
		return -ERANGE;
	if (kept < 0) {
		*out = 0; /* below half a unit of the last digit kept */
		return 0;
	}
	for (const char *q = first; q < s + mend; q++) {
		if (*q == '.')
			continue;
		if (taken == kept) {
			round = *q >= '5';
			break;
		}
		v = v * 10 + (uint64_t)(*q - '0');
		taken++;
	}
	for (; taken < kept; taken++)
		v *= 10;
	v += (uint64_t)round;
	if (v >= pow10u[prec])
		return -ERANGE; /* 99.5 rounded up to DECIMAL(2, 0) */
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

int sl_fmt_parse_ts(const char *s, size_t len, sl_ts_t *out)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, ms = 0;
	int64_t off_min = 0;
	size_t p = 0;

	trim(&s, &len);
	y = digits(s, len, &p, 4);
	if (y < 0 || p >= len || s[p++] != '-')
		return -EINVAL;
	mo = digits(s, len, &p, 2);
	if (mo < 1 || mo > 12 || p >= len || s[p++] != '-')
		return -EINVAL;
	d = digits(s, len, &p, 2);
	if (d < 1 || (unsigned)d > days_in_month(y, (unsigned)mo))
		return -EINVAL;
	if (p < len && (s[p] == ' ' || s[p] == 'T')) {
		p++;
		h = digits(s, len, &p, 2);
		if (h < 0 || h > 23 || p >= len || s[p++] != ':')
			return -EINVAL;
		mi = digits(s, len, &p, 2);
		if (mi < 0 || mi > 59)
			return -EINVAL;
		if (p < len && s[p] == ':') {
			p++;
			sec = digits(s, len, &p, 2);
			if (sec < 0 || sec > 59)
				return -EINVAL;
			if (p < len && s[p] == '.') {
				int nd = 0;

				for (p++; p < len && (unsigned)((unsigned char)s[p] - '0') <= 9;
				     p++, nd++)
					if (nd < 3)
						ms = ms * 10 + (s[p] - '0');
				if (nd == 0 || nd > 9)
					return -EINVAL;
				for (; nd < 3; nd++)
					ms *= 10;
			}
		}
	}
	if (p < len && s[p] == 'Z') {
		p++;
	} else if (p < len && (s[p] == '+' || s[p] == '-')) {
		int sign = s[p++] == '-' ? -1 : 1;
		int oh = digits(s, len, &p, 2), om;

		if (p < len && s[p] == ':')
			p++;
		om = digits(s, len, &p, 2);
		if (oh < 0 || oh > 18 || om < 0 || om > 59)
			return -EINVAL;
		off_min = sign * (oh * 60 + om);
	}
	if (p != len)
		return -EINVAL;
	*out = ((days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec -
		 off_min * 60) *
		1000) +
	       ms;
	return 0;
}

void sl_fmt_field_init(struct sl_fmt_field *f, const struct sl_schema *s, int i,
		       uint64_t *overflows, bool fail_overflow)
{
	f->name = sl_schema_name(s, i);
	f->type = sl_schema_type(s, i);
	f->prec = (uint8_t)sl_schema_precision(s, i);
	f->scale = (uint8_t)sl_schema_scale(s, i);
	f->overflows = overflows;
	f->fail_overflow = fail_overflow;
}

static int parse_f32(const char *s, size_t len, float *out)
{
	char tmp[128];
	char *end;

	trim(&s, &len);
	if (len == 0 || len >= sizeof tmp)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (s[i] == 'x' || s[i] == 'X')
			return -EINVAL;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	*out = strtof(tmp, &end);
	return end == tmp + len ? 0 : -EINVAL;
}

int sl_fmt_set_text(struct sl_row_builder *b, int i, const struct sl_fmt_field *f, const char *s,
		    size_t len, char *why)
{
	enum sl_type t = f->type;
	int64_t v;
	double d;
	float fl;
	bool bl;
	int rc;

	switch (t) {
	case SL_TYPE_STRING:
		if (len > UINT32_MAX)
			break;
		sl_rowb_set_str(b, i, s, (uint32_t)len);
		return 0;
	case SL_TYPE_BOOL:
		if (sl_fmt_parse_bool(s, len, &bl) < 0)
			break;
		sl_rowb_set_bool(b, i, bl);
		return 0;
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
		rc = t == SL_TYPE_INT ? sl_fmt_parse_i64(s, len, INT32_MIN, INT32_MAX, &v)
				      : sl_fmt_parse_i64(s, len, INT64_MIN, INT64_MAX, &v);
		if (rc == -ERANGE) {
			sl_fmt_why(why, "field '%s': %.*s out of range for %s", f->name,
				   (int)(len > 40 ? 40 : len), s, sl_type_name(t));
			return -EINVAL;
		}
		if (rc < 0)
			break;
		sl_rowb_set_i64(b, i, v);
		return 0;
	case SL_TYPE_DOUBLE:
		if (sl_fmt_parse_f64(s, len, &d) < 0)
			break;
		sl_rowb_set_f64(b, i, d);
		return 0;
	case SL_TYPE_FLOAT:
		if (parse_f32(s, len, &fl) < 0)
			break;
		sl_rowb_set_f64(b, i, (double)fl);
		return 0;
	case SL_TYPE_DECIMAL:
		rc = sl_fmt_parse_dec(s, len, f->prec, f->scale, &v);
		if (rc == -EINVAL)
			break;
		if (rc == -ERANGE && f->fail_overflow) {
			sl_fmt_why(why, "field '%s': %.*s does not fit DECIMAL(%d, %d)", f->name,
				   (int)(len > 40 ? 40 : len), s, f->prec, f->scale);
			return -EINVAL;
		}
		if (rc == -ERANGE) {
			sl_rowb_set_null(b, i);
			(*f->overflows)++;
		} else {
			sl_rowb_set_i64(b, i, v);
		}
		return 0;
	case SL_TYPE_DATE:
		if (sl_fmt_parse_date(s, len, &v) < 0)
			break;
		sl_rowb_set_i64(b, i, v);
		return 0;
	case SL_TYPE_TIMESTAMP:
	case SL_TYPE_TIMESTAMP_LTZ:
		/* epoch millis as text, else a date-time */
		if (sl_fmt_parse_i64(s, len, INT64_MIN, INT64_MAX, &v) < 0 &&
		    sl_fmt_parse_ts(s, len, &v) < 0)
			break;
		sl_rowb_set_i64(b, i, v);
		return 0;
	}
	sl_fmt_why(why, "field '%s': '%.*s%s' is not a valid %s", f->name,
		   (int)(len > 40 ? 40 : len), s, len > 40 ? "..." : "", sl_type_name(t));
	return -EINVAL;
}

/* Civil date of a day count since 1970-01-01 (H. Hinnant's civil_from_days). */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;

	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static void put2(char *o, unsigned v)
{
	o[0] = (char)('0' + v / 10);
	o[1] = (char)('0' + v % 10);
}

int sl_fmt_write_ts(sl_ts_t ts, char *o)
{
	/* floor division so times before 1970 print as the calendar does */
	int64_t days = ts >= 0 ? ts / 86400000 : -((-(ts + 1)) / 86400000) - 1;
	int64_t rem = ts - days * 86400000, y;
	unsigned m, d, ms = (unsigned)(rem % 1000), s = (unsigned)(rem / 1000);

	civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999)
		y = y < 0 ? 0 : 9999; /* TIMESTAMP(3) range is years 0000..9999 */
	put2(o, (unsigned)(y / 100));
	put2(o + 2, (unsigned)(y % 100));
	o[4] = '-';
	put2(o + 5, m);
	o[7] = '-';
	put2(o + 8, d);
	o[10] = ' ';
	put2(o + 11, s / 3600);
	o[13] = ':';
	put2(o + 14, s / 60 % 60);
	o[16] = ':';
	put2(o + 17, s % 60);
	o[19] = '.';
	o[20] = (char)('0' + ms / 100);
	put2(o + 21, ms % 100);
	return 23;
}

int sl_fmt_write_date(int64_t days, char *o)
{
	int64_t y;
	unsigned m, d;

	civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999)
		y = y < 0 ? 0 : 9999; /* DATE range is years 0000..9999 */
	put2(o, (unsigned)(y / 100));
	put2(o + 2, (unsigned)(y % 100));
	o[4] = '-';
	put2(o + 5, m);
	o[7] = '-';
	put2(o + 8, d);
	return 10;
}

/* Writes v's decimal digits; returns the count. */
static int put_digits(uint64_t v, char *o)
{
	char tmp[20];
	int n = 0, len = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		o[len++] = tmp[--n];
	return len;
}

int sl_fmt_write_dec(int64_t unscaled, int scale, char *o)
{
	uint64_t mag = unscaled < 0 ? 0 - (uint64_t)unscaled : (uint64_t)unscaled;
	char dig[20];
	int nd = put_digits(mag, dig), len = 0;

	if (unscaled < 0)
		o[len++] = '-';
	if (nd <= scale) {
		o[len++] = '0';
		o[len++] = '.';
		for (int k = nd; k < scale; k++)
			o[len++] = '0';
		memcpy(o + len, dig, (size_t)nd);
		return len + nd;
	}
	memcpy(o + len, dig, (size_t)(nd - scale));
	len += nd - scale;
	if (scale > 0) {
		o[len++] = '.';
		memcpy(o + len, dig + nd - scale, (size_t)scale);
		len += scale;
	}
	return len;
}

static long double pow10l_(int e)
{
	long double r = 1, b = 10;
	unsigned u = (unsigned)(e < 0 ? -e : e);

	for (; u; u >>= 1, b *= b)
		if (u & 1)
			r *= b;
	return e < 0 ? 1 / r : r;
}

/*
 * Java's Float.toString: the fewest significant digits (2..9, Java always shows two: 1.0,
 * 1.4E-45) whose value reads back as v, trailing zeros dropped.
 * Each candidate is rounded from v in long double and checked by reading it back with
 * strtof (a parse, not a formatting call); the first that round-trips wins. Up to nine
 * tries per value: FLOAT columns are rare in sinks, and exactness beats speed here.
 */
int sl_fmt_write_f32(float v, char *o)
{
	long double a;
	uint64_t m = 0;
	int e, k, len = 0, nd;
	char dig[24], tmp[40];

	if (v != v) {
		memcpy(o, "NaN", 3);
		return 3;
	}
	if (signbit(v))
		o[len++] = '-';
	if (isinf(v)) {
		memcpy(o + len, "Infinity", 8);
		return len + 8;
	}
	if (v == 0) {
		memcpy(o + len, "0.0", 3);
		return len + 3;
	}
	a = fabsl((long double)v);
	e = (int)floorl(log10l(a));
	if (pow10l_(e) > a)
		e--;
	else if (pow10l_(e + 1) <= a)
		e++;
	for (k = 2; k <= 9; k++) {
		int ek = e, tl;

		m = (uint64_t)llroundl(a * pow10l_(k - 1 - e));
		if (m >= pow10u[k]) { /* 9.96 rounded to 2 digits is 10: one more decade */
			m /= 10;
			ek++;
		}
		tl = put_digits(m, tmp);
		tmp[tl++] = 'e';
		if (ek - k + 1 < 0)
			tmp[tl++] = '-';
		tl += put_digits((uint64_t)(ek - k + 1 < 0 ? -(ek - k + 1) : ek - k + 1), tmp + tl);
		tmp[tl] = '\0';
		if (strtof(tmp, NULL) == fabsf(v)) {
			e = ek;
			break;
		}
	}
	nd = put_digits(m, dig);
	while (nd > 1 && dig[nd - 1] == '0')
		nd--;
	if (a >= 1e-3L && a < 1e7L) {
		if (e >= 0) {
			for (int j = 0; j <= e; j++)
				o[len++] = j < nd ? dig[j] : '0';
			o[len++] = '.';
			if (nd > e + 1) {
				memcpy(o + len, dig + e + 1, (size_t)(nd - e - 1));
				len += nd - e - 1;
			} else {
				o[len++] = '0';
			}
		} else {
			o[len++] = '0';
			o[len++] = '.';
			for (int j = -1; j > e; j--)
				o[len++] = '0';
			memcpy(o + len, dig, (size_t)nd);
			len += nd;
		}
		return len;
	}
	o[len++] = dig[0];
	o[len++] = '.';
	if (nd > 1) {
		memcpy(o + len, dig + 1, (size_t)(nd - 1));
		len += nd - 1;
	} else {
		o[len++] = '0';
	}
	o[len++] = 'E';
	if (e < 0)
		o[len++] = '-';
	len += put_digits((uint64_t)(e < 0 ? -e : e), o + len);
	return len;
}

/* A timestamp as Flink's json and csv formats write it (SQL_TIMESTAMP_FORMAT: the fraction's
 * trailing zeros dropped, and its point with them): 2024-01-01 00:00:04, ...:04.5. */
static int ts_trimmed(sl_ts_t ts, char *o)
{
	int len = sl_fmt_write_ts(ts, o);

	while (o[len - 1] == '0')
		len--;
	return o[len - 1] == '.' ? len - 1 : len;
}

int sl_fmt_write_scalar(const struct sl_row *r, int i, enum sl_type t, int scale, char *o)
{
	int64_t v = sl_row_i64(r, i);
	double d;
	int len = 0;

	switch (t) {
	case SL_TYPE_BOOL:
		memcpy(o, v ? "true" : "false", v ? 4 : 5);
		return v ? 4 : 5;
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
		if (v < 0)
			o[len++] = '-';
		return len + put_digits(v < 0 ? 0 - (uint64_t)v : (uint64_t)v, o + len);
	case SL_TYPE_DOUBLE:
		d = sl_row_f64(r, i);
		if (d != d) {
			memcpy(o, "NaN", 3);
			return 3;
		}
		if (isinf(d)) {
			if (d < 0)
				o[len++] = '-';
			memcpy(o + len, "Infinity", 8);
			return len + 8;
		}
		return sl_fmt_write_f64(d, o);
	case SL_TYPE_FLOAT:
		return sl_fmt_write_f32((float)sl_row_f64(r, i), o);
	case SL_TYPE_DECIMAL:
		return sl_fmt_write_dec(v, scale, o);
	case SL_TYPE_DATE:
		return sl_fmt_write_date(v, o);
	case SL_TYPE_TIMESTAMP:
		return ts_trimmed(v, o);
	case SL_TYPE_TIMESTAMP_LTZ:
		len = ts_trimmed(v, o);
		o[len++] = 'Z'; /* Flink's SQL_TIMESTAMP_WITH_LOCAL_TIMEZONE_FORMAT, in UTC */
		return len;
	case SL_TYPE_STRING:
		break;
	}
	return 0;
}
