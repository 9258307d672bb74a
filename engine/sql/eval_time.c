/*
 * eval_time.c - calendar arithmetic, timestamp text and Java DateTimeFormatter-style
 * patterns for the SQL expression interpreter (TO_TIMESTAMP, DATE_FORMAT, CAST).
 *
 * Everything works on "wall clock" milliseconds (a TIMESTAMP value: the local date-time read
 * as if it were UTC); the caller adds or removes the session offset for TIMESTAMP_LTZ. No
 * stdio, no locale, no time zone database: per-record safe. Days follow the proleptic
 * Gregorian calendar (Howard Hinnant's days_from_civil), as java.time does.
 */
#include <errno.h>
#include <string.h>

#include "eval_int.h"

int64_t sl_eval_floor_div_(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t sl_eval_days_from_civil_(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + (int64_t)doe - 719468;
}

void sl_eval_civil_from_days_(int64_t z, int64_t *y, unsigned *m, unsigned *d)
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

static unsigned month_days(int64_t y, unsigned m)
{
	static const unsigned char md[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : md[m - 1];
}

/* Writes v as exactly `w` digits (zero padded); returns w. */
static int put_num(char *buf, int64_t v, int w)
{
	for (int i = w - 1; i >= 0; i--) {
		buf[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return w;
}

/* Writes a year: 4 digits, or more / with a sign outside 0..9999. */
static int put_year(char *buf, int64_t y)
{
	int n = 0;
	char tmp[24];
	int k = 0;

	if (y >= 0 && y <= 9999)
		return put_num(buf, y, 4);
	if (y < 0) {
		buf[n++] = '-';
		y = -y;
	}
	do {
		tmp[k++] = (char)('0' + y % 10);
		y /= 10;
	} while (y);
	while (k < 4)
		tmp[k++] = '0';
	while (k)
		buf[n++] = tmp[--k];
	return n;
}

int sl_eval_date_print_(int64_t days, char *buf)
{
	int64_t y;
	unsigned m, d;
	int n;

	sl_eval_civil_from_days_(days, &y, &m, &d);
	n = put_year(buf, y);
	buf[n++] = '-';
	n += put_num(buf + n, m, 2);
	buf[n++] = '-';
	n += put_num(buf + n, d, 2);
	return n;
}

int sl_eval_ts_print_(int64_t ms, int prec, char *buf)
{
	int64_t days = sl_eval_floor_div_(ms, MS_PER_DAY);
	int64_t rem = ms - days * MS_PER_DAY;
	int n = sl_eval_date_print_(days, buf);

	buf[n++] = ' ';
	n += put_num(buf + n, rem / 3600000, 2);
	buf[n++] = ':';
	n += put_num(buf + n, rem / 60000 % 60, 2);
	buf[n++] = ':';
	n += put_num(buf + n, rem / 1000 % 60, 2);
	if (!prec)
		return n;
	buf[n++] = '.';
	n += put_num(buf + n, rem % 1000, 3);
	if (prec < 3)
		return n - (3 - prec);
	for (int k = 3; k < prec; k++)
		buf[n++] = '0';
	return n;
}

int64_t sl_eval_extract_(int64_t ms, enum ex_field f)
{
	int64_t days = sl_eval_floor_div_(ms, MS_PER_DAY);
	int64_t rem = ms - days * MS_PER_DAY;
	int64_t y;
	unsigned m, d;

	sl_eval_civil_from_days_(days, &y, &m, &d);
	switch (f) {
	case EX_YEAR:
		return y;
	case EX_QUARTER:
		return (m + 2) / 3;
	case EX_MONTH:
		return m;
	case EX_DAY:
		return d;
	case EX_HOUR:
		return rem / 3600000;
	case EX_MINUTE:
		return rem / 60000 % 60;
	case EX_SECOND:
		return rem / 1000 % 60;
	case EX_MILLISECOND:
		return rem % 1000;
	case EX_DOW: /* SQL: 1 = Sunday .. 7 = Saturday; 1970-01-01 was a Thursday */
		return (days % 7 + 7 + 4) % 7 + 1;
	case EX_DOY:
		return days - sl_eval_days_from_civil_(y, 1, 1) + 1;
	case EX_WEEK: {
		/* ISO-8601 week (Flink's WEEK): the week holding its Thursday */
		int64_t dow = (days % 7 + 7 + 3) % 7; /* 0 = Monday */
		int64_t thursday = days - dow + 3;
		int64_t ty;
		unsigned tm, td;

		sl_eval_civil_from_days_(thursday, &ty, &tm, &td);
		return (thursday - sl_eval_days_from_civil_(ty, 1, 1)) / 7 + 1;
	}
	}
	return 0;
}

/* Reads between min and max digits at s[*i]; false when fewer than min. */
static bool take_digits(const char *s, uint32_t len, uint32_t *i, int min, int max, int64_t *v,
			int *nd)
{
	int n = 0;

	*v = 0;
	while (*i < len && n < max && s[*i] >= '0' && s[*i] <= '9') {
		*v = *v * 10 + (s[*i] - '0');
		(*i)++;
		n++;
	}
	if (nd)
		*nd = n;
	return n >= min;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool make_ms(int64_t y, int64_t mo, int64_t d, int64_t h, int64_t mi, int64_t s,
		    int64_t frac_ms, int64_t *ms)
{
	if (mo < 1 || mo > 12 || d < 1 || d > month_days(y, (unsigned)mo) || h > 23 || mi > 59 ||
	    s > 59)
		return false;
	*ms = sl_eval_days_from_civil_(y, (unsigned)mo, (unsigned)d) * MS_PER_DAY + h * 3600000 +
	      mi * 60000 + s * 1000 + frac_ms;
	return true;
}

/* Fraction digits to ms, truncating past the third digit (TIMESTAMP(3)). */
static int64_t frac_to_ms(int64_t v, int nd)
{
	while (nd > 3) {
		v /= 10;
		nd--;
	}
	while (nd < 3) {
		v *= 10;
		nd++;
	}
	return v;
}

/* yyyy-M-d at s[*i]: the date part both parsers share. */
static bool take_date(const char *s, uint32_t len, uint32_t *i, int64_t *y, int64_t *m, int64_t *d)
{
	bool neg = *i < len && s[*i] == '-';

	*i += neg;
	if (!take_digits(s, len, i, 1, 9, y, NULL) || *i >= len || s[*i] != '-')
		return false;
	(*i)++;
	if (!take_digits(s, len, i, 1, 2, m, NULL) || *i >= len || s[*i] != '-')
		return false;
	(*i)++;
	if (!take_digits(s, len, i, 1, 2, d, NULL))
		return false;
	if (neg)
		*y = -*y;
	return true;
}

bool sl_eval_date_parse_(const char *s, uint32_t len, int64_t *days)
{
	uint32_t i = 0;
	int64_t y, m, d, ms;

	while (len && is_blank(s[len - 1]))
		len--;
	while (i < len && is_blank(s[i]))
		i++;
	if (!take_date(s, len, &i, &y, &m, &d) || i != len || !make_ms(y, m, d, 0, 0, 0, 0, &ms))
		return false;
	*days = ms / MS_PER_DAY;
	if (ms < 0 && ms % MS_PER_DAY)
		(*days)--;
	return true;
}

bool sl_eval_ts_parse_(const char *s, uint32_t len, int64_t *ms)
{
	uint32_t i = 0;
	int64_t y, mo, d, h = 0, mi = 0, sec = 0, frac = 0;
	int nd = 0;

	while (len && is_blank(s[len - 1]))
		len--;
	while (i < len && is_blank(s[i]))
		i++;
	if (!take_date(s, len, &i, &y, &mo, &d))
		return false;
	if (i < len && (s[i] == ' ' || s[i] == 'T')) {
		i++;
		if (!take_digits(s, len, &i, 1, 2, &h, NULL) || i >= len || s[i] != ':')
			return false;
		i++;
		if (!take_digits(s, len, &i, 1, 2, &mi, NULL))
			return false;
		if (i < len && s[i] == ':') {
			i++;
			if (!take_digits(s, len, &i, 1, 2, &sec, NULL))
				return false;
			if (i < len && s[i] == '.') {
				i++;
				if (!take_digits(s, len, &i, 1, 9, &frac, &nd))
					return false;
			}
		}
	}
	if (i != len)
		return false;
	return make_ms(y, mo, d, h, mi, sec, frac_to_ms(frac, nd), ms);
}

static enum tf_kind letter_kind(char c)
{
	switch (c) {
	case 'y':
	case 'u':
		return TF_YEAR;
	case 'M':
	case 'L':
		return TF_MONTH;
	case 'd':
		return TF_DAY;
	case 'H':
		return TF_HOUR;
	case 'h':
		return TF_HOUR12;
	case 'm':
		return TF_MINUTE;
	case 's':
		return TF_SECOND;
	case 'S':
		return TF_FRAC;
	case 'a':
		return TF_AMPM;
	default:
		return TF_LIT;
	}
}

static bool add_lit(struct tfmt *f, const char *s, uint32_t n)
{
	if (f->nlit + n > sizeof f->lit || f->n >= TF_MAX_TOK)
		return false;
	/* extend the previous literal when it ends where this one starts */
	if (f->n && f->tok[f->n - 1].kind == TF_LIT &&
	    f->tok[f->n - 1].off + f->tok[f->n - 1].len == f->nlit) {
		memcpy(f->lit + f->nlit, s, n);
		f->nlit += (uint16_t)n;
		f->tok[f->n - 1].len += (uint16_t)n;
		return true;
	}
	memcpy(f->lit + f->nlit, s, n);
	f->tok[f->n].kind = TF_LIT;
	f->tok[f->n].off = f->nlit;
	f->tok[f->n].len = (uint16_t)n;
	f->nlit += (uint16_t)n;
	f->n++;
	return true;
}

int sl_eval_tfmt_compile_(const char *pat, uint32_t len, struct tfmt *f)
{
	uint32_t i = 0;

	f->n = 0;
	f->nlit = 0;
	while (i < len) {
		char c = pat[i];
		enum tf_kind k = letter_kind(c);
		uint32_t j = i;

		if (c == '\'') {
			/* 'text' is literal; '' is one quote */
			if (i + 1 < len && pat[i + 1] == '\'') {
				if (!add_lit(f, "'", 1))
					return -EINVAL;
				i += 2;
				continue;
			}
			for (j = i + 1; j < len && pat[j] != '\''; j++)
				;
			if (j >= len || !add_lit(f, pat + i + 1, j - i - 1))
				return -EINVAL;
			i = j + 1;
			continue;
		}
		if (k == TF_LIT) {
			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
				return -EINVAL; /* a pattern letter we do not implement */
			if (!add_lit(f, pat + i, 1))
				return -EINVAL;
			i++;
			continue;
		}
		while (j < len && pat[j] == c)
			j++;
		if (f->n >= TF_MAX_TOK || j - i > 9)
			return -EINVAL;
		f->tok[f->n].kind = (uint8_t)k;
		f->tok[f->n].width = (uint8_t)(j - i);
		f->n++;
		i = j;
	}
	return 0;
}

bool sl_eval_ts_parse_fmt_(const struct tfmt *f, const char *s, uint32_t len, int64_t *ms)
{
	int64_t y = 1970, mo = 1, d = 1, h = 0, mi = 0, sec = 0, frac = 0, v;
	int nd = 0, pm = -1;
	uint32_t i = 0;

	for (int t = 0; t < f->n; t++) {
		uint8_t k = f->tok[t].kind, w = f->tok[t].width;
		/* A field followed by another field takes exactly its width (yyyyMMdd);
		 * otherwise up to 9 digits for years and fractions, 2 for the rest. */
		bool adjacent = t + 1 < f->n && f->tok[t + 1].kind != TF_LIT;
		int max = adjacent ? w : (k == TF_YEAR || k == TF_FRAC) ? 9 : 2;
		int min = adjacent ? w : 1;

		if (k == TF_LIT) {
			if (i + f->tok[t].len > len ||
			    memcmp(s + i, f->lit + f->tok[t].off, f->tok[t].len))
				return false;
			i += f->tok[t].len;
			continue;
		}
		if (k == TF_AMPM) {
			if (i + 2 > len)
				return false;
			if ((s[i] == 'A' || s[i] == 'a') && (s[i + 1] == 'M' || s[i + 1] == 'm'))
				pm = 0;
			else if ((s[i] == 'P' || s[i] == 'p') &&
				 (s[i + 1] == 'M' || s[i + 1] == 'm'))
				pm = 1;
			else
				return false;
			i += 2;
			continue;
		}
		if (!take_digits(s, len, &i, min, max, &v, &nd))
			return false;
		switch (k) {
		case TF_YEAR:
			y = (w == 2 && nd == 2) ? 2000 + v : v;
			break;
		case TF_MONTH:
			mo = v;
			break;
		case TF_DAY:
			d = v;
			break;
		case TF_HOUR:
		case TF_HOUR12:
			h = v;
			break;
		case TF_MINUTE:
			mi = v;
			break;
		case TF_SECOND:
			sec = v;
			break;
		case TF_FRAC:
			frac = frac_to_ms(v, nd);
			break;
		}
	}
	if (i != len)
		return false;
	if (pm >= 0) {
		if (h < 1 || h > 12)
			return false;
		h = h % 12 + (pm ? 12 : 0);
	}
	return make_ms(y, mo, d, h, mi, sec, frac, ms);
}

int sl_eval_ts_format_fmt_(const struct tfmt *f, int64_t ms, char *buf, uint32_t cap)
{
	int64_t days = sl_eval_floor_div_(ms, MS_PER_DAY);
	int64_t rem = ms - days * MS_PER_DAY;
	int64_t y, v = 0;
	unsigned mo, d;
	uint32_t n = 0;

	sl_eval_civil_from_days_(days, &y, &mo, &d);
	for (int t = 0; t < f->n; t++) {
		uint8_t k = f->tok[t].kind, w = f->tok[t].width;

		/* the widest field is a 9-digit fraction or a 20-character year */
		if (n + (k == TF_LIT ? f->tok[t].len : 24u) > cap)
			return -1;
		switch (k) {
		case TF_LIT:
			memcpy(buf + n, f->lit + f->tok[t].off, f->tok[t].len);
			n += f->tok[t].len;
			continue;
		case TF_AMPM:
			memcpy(buf + n, rem >= 43200000 ? "PM" : "AM", 2);
			n += 2;
			continue;
		case TF_YEAR:
			if (w == 2) {
				n += (uint32_t)put_num(buf + n, ((y % 100) + 100) % 100, 2);
				continue;
			}
			if (w >= 4 || y < 0 || y > 9999) {
				n += (uint32_t)put_year(buf + n, y);
				continue;
			}
			v = y;
			break;
		case TF_MONTH:
			v = mo;
			break;
		case TF_DAY:
			v = d;
			break;
		case TF_HOUR:
			v = rem / 3600000;
			break;
		case TF_HOUR12:
			v = (rem / 3600000) % 12;
			v = v ? v : 12;
			break;
		case TF_MINUTE:
			v = rem / 60000 % 60;
			break;
		case TF_SECOND:
			v = rem / 1000 % 60;
			break;
		case TF_FRAC: {
			/* S..S: the leading digits of the fraction (ms, zero past the third) */
			int64_t frac = rem % 1000;

			for (int j = 0; j < w; j++) {
				int digit = j < 3 ? (int)(frac /
							  (j == 0   ? 100
							   : j == 1 ? 10
								    : 1) %
							  10)
						  : 0;
				buf[n++] = (char)('0' + digit);
			}
			continue;
		}
		}
		{
			int nd = 1;

			for (int64_t x = v; x >= 10; x /= 10)
				nd++;
			n += (uint32_t)put_num(buf + n, v, nd > w ? nd : w);
		}
	}
	return (int)n;
}
