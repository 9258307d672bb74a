/*
 * text.c - text to typed field values, shared by the CSV decoder and the JSON shim (for
 * values that arrive as strings), and the timestamp formatter of the JSON writer.
 *
 * Everything here runs per field on the hot path, so integers and timestamps are parsed by
 * hand (no strtol/strptime/timegm, no locale, no allocation); only doubles go through strtod
 * on a stack copy, because correct rounding is not worth re-deriving. Reasons are formatted
 * only when a record fails.
 */
#include <errno.h>
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
		 off_min * 60) * 1000) + ms;
	return 0;
}

int sl_fmt_set_text(struct sl_row_builder *b, int i, enum sl_type t, const char *name,
		    const char *s, size_t len, char *why)
{
	int64_t v;
	double f;
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
			sl_fmt_why(why, "field '%s': %.*s out of range for %s", name,
				   (int)(len > 40 ? 40 : len), s, sl_type_name(t));
			return -EINVAL;
		}
		if (rc < 0)
			break;
		sl_rowb_set_i64(b, i, v);
		return 0;
	case SL_TYPE_DOUBLE:
		if (sl_fmt_parse_f64(s, len, &f) < 0)
			break;
		sl_rowb_set_f64(b, i, f);
		return 0;
	case SL_TYPE_TIMESTAMP:
		/* epoch millis as text, else a date-time */
		if (sl_fmt_parse_i64(s, len, INT64_MIN, INT64_MAX, &v) < 0 &&
		    sl_fmt_parse_ts(s, len, &v) < 0)
			break;
		sl_rowb_set_i64(b, i, v);
		return 0;
	}
	sl_fmt_why(why, "field '%s': '%.*s%s' is not a valid %s", name, (int)(len > 40 ? 40 : len),
		   s, len > 40 ? "..." : "", sl_type_name(t));
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
