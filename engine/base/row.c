/*
 * row.c - building rows in caller memory and printing them in changelog notation.
 *
 * The builder reserves header and slots up front and appends string bytes behind them, so a
 * row is built in one pass with no allocation; a builder that runs out of room remembers it
 * and fails at finish() instead of at every set.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <sluice/types.h>

void sl_rowb_set_str(struct sl_row_builder *b, int i, const char *s, uint32_t len)
{
	uint32_t off = b->used;

	if (b->overflow)
		return;
	if ((uint64_t)off + len > b->cap) {
		b->overflow = true;
		return;
	}
	memcpy((char *)b->row + off, s, len);
	b->used = off + len;
	sl_rowb_set_slot_(b, i, ((uint64_t)off << 32) | len);
}

char *sl_rowb_str_space(struct sl_row_builder *b, int i, uint32_t len)
{
	uint32_t off = b->used;

	if (b->overflow)
		return NULL;
	if ((uint64_t)off + len > b->cap) {
		b->overflow = true;
		return NULL;
	}
	b->used = off + len;
	sl_rowb_set_slot_(b, i, ((uint64_t)off << 32) | len);
	return (char *)b->row + off;
}

void sl_rowb_copy_field(struct sl_row_builder *b, int i, const struct sl_row *src, int j,
			enum sl_type t)
{
	uint32_t len;
	const char *s;

	if (sl_row_is_null(src, j)) {
		sl_rowb_set_null(b, i);
		return;
	}
	if (t == SL_TYPE_STRING) {
		s = sl_row_str(src, j, &len);
		sl_rowb_set_str(b, i, s, len);
		return;
	}
	sl_rowb_set_slot_(b, i, src->slot[j]);
}

const struct sl_row *sl_rowb_finish(struct sl_row_builder *b)
{
	uint32_t size = (b->used + 7u) & ~7u;

	if (b->overflow || size > b->cap)
		return NULL;
	memset((char *)b->row + b->used, 0, size - b->used);
	b->row->size = size;
	return b->row;
}

int sl_ts_format(sl_ts_t ts, char *buf, size_t cap)
{
	time_t secs = (time_t)(ts >= 0 ? ts / 1000 : (ts - 999) / 1000);
	int ms = (int)(ts - (sl_ts_t)secs * 1000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	return snprintf(buf, cap, "%04d-%02d-%02d %02d:%02d:%02d.%03d", tm.tm_year + 1900,
			tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

int sl_ts_format_prec(sl_ts_t ts, int prec, char *buf, size_t cap)
{
	char full[40], frac[12] = "";
	int n = sl_ts_format(ts, full, sizeof full);

	if (n < 4 || prec == SL_TS_PREC_DEFAULT)
		return snprintf(buf, cap, "%s", full);
	if (prec > SL_TS_PREC_MAX)
		prec = SL_TS_PREC_MAX;
	/* full ends in ".fff": keep `prec` of those digits, then zeros */
	for (int k = 0; k < prec; k++)
		frac[k] = k < 3 ? full[n - 3 + k] : '0';
	frac[prec] = 0;
	return snprintf(buf, cap, "%.*s%s%s", n - 4, full, prec ? "." : "", frac);
}

/*
 * Java's Double.toString / Float.toString, which Flink's printed rows use: the shortest
 * digits that read back as the same value, plain notation with at least one fraction digit
 * for 1e-3 <= |v| < 1e7 (1.0, 0.001, 1234567.0), else d.dddE[-]n (1.0E7, 1.4E-45).
 * `prec_max` 17 for doubles, 9 for floats; `is_float` reads candidates back as floats.
 */
static int java_format(double v, int prec_max, bool is_float, char *buf, size_t cap)
{
	char tmp[48], dig[24], out[64];
	int nd = 0, e = 0, n = 0;
	double a = v < 0 ? -v : v;

	if (v != v)
		return snprintf(buf, cap, "NaN");
	if (a == 1.0 / 0.0)
		return snprintf(buf, cap, "%sInfinity", v < 0 ? "-" : "");
	if (v == 0)
		return snprintf(buf, cap, "%s0.0", signbit(v) ? "-" : "");
	for (int prec = 1; prec <= prec_max; prec++) {
		snprintf(tmp, sizeof tmp, "%.*e", prec - 1, a);
		if (is_float ? strtof(tmp, NULL) == (float)a : strtod(tmp, NULL) == a)
			break;
	}
	/* tmp is d[.ddd]e[+-]xx: collect the digits and the exponent */
	for (const char *p = tmp; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			dig[nd++] = *p;
	e = atoi(strchr(tmp, 'e') + 1);
	while (nd > 1 && dig[nd - 1] == '0')
		nd--;
	if (v < 0)
		out[n++] = '-';
	if (a >= 1e-3 && a < 1e7) {
		if (e >= 0) {
			for (int j = 0; j <= e; j++)
				out[n++] = j < nd ? dig[j] : '0';
			out[n++] = '.';
			if (nd > e + 1)
				for (int j = e + 1; j < nd; j++)
					out[n++] = dig[j];
			else
				out[n++] = '0';
		} else {
			out[n++] = '0';
			out[n++] = '.';
			for (int j = -1; j > e; j--)
				out[n++] = '0';
			for (int j = 0; j < nd; j++)
				out[n++] = dig[j];
		}
	} else {
		out[n++] = dig[0];
		out[n++] = '.';
		if (nd > 1)
			for (int j = 1; j < nd; j++)
				out[n++] = dig[j];
		else
			out[n++] = '0';
		n += snprintf(out + n, sizeof out - (size_t)n, "E%d", e);
	}
	out[n] = 0;
	return snprintf(buf, cap, "%s", out);
}

int sl_double_format(double v, char *buf, size_t cap)
{
	return java_format(v, 17, false, buf, cap);
}

int sl_float_format(float v, char *buf, size_t cap)
{
	return java_format((double)v, 9, true, buf, cap);
}

int sl_decimal_format(int64_t unscaled, int scale, char *buf, size_t cap)
{
	char digits[32];
	uint64_t mag = unscaled < 0 ? -(uint64_t)unscaled : (uint64_t)unscaled;
	int nd = snprintf(digits, sizeof digits, "%" PRIu64, mag);

	if (scale <= 0)
		return snprintf(buf, cap, "%s%s", unscaled < 0 ? "-" : "", digits);
	if (nd <= scale) {
		/* 0.0xy: zeros between the point and the digits */
		char frac[40];

		memset(frac, '0', (size_t)(scale - nd));
		memcpy(frac + scale - nd, digits, (size_t)nd + 1);
		return snprintf(buf, cap, "%s0.%s", unscaled < 0 ? "-" : "", frac);
	}
	return snprintf(buf, cap, "%s%.*s.%s", unscaled < 0 ? "-" : "", nd - scale, digits,
			digits + nd - scale);
}

int sl_date_format(int64_t days, char *buf, size_t cap)
{
	time_t secs = (time_t)(days * 86400);
	struct tm tm;

	gmtime_r(&secs, &tm);
	return snprintf(buf, cap, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

static const char *const kind_tag[] = { "+I", "-U", "+U", "-D" };

/* Appends with snprintf semantics: `n` counts what would have been written. */
#define APPEND(...)                                                                                \
	do {                                                                                       \
		int w_ = snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, __VA_ARGS__);  \
		if (w_ > 0)                                                                        \
			n += (size_t)w_;                                                           \
	} while (0)

int sl_row_format(const struct sl_row *r, const struct sl_schema *s, char *buf, size_t cap)
{
	size_t n = 0;
	char ts[40];
	uint32_t len;
	const char *str;

	APPEND("%s[", kind_tag[r->kind & 3]);
	for (int i = 0; i < r->nfields; i++) {
		if (i)
			APPEND(", ");
		if (sl_row_is_null(r, i)) {
			APPEND("NULL");
			continue;
		}
		switch (sl_schema_type(s, i)) {
		case SL_TYPE_BOOL:
			APPEND("%s", sl_row_bool(r, i) ? "TRUE" : "FALSE");
			break;
		case SL_TYPE_INT:
		case SL_TYPE_BIGINT:
			APPEND("%" PRId64, sl_row_i64(r, i));
			break;
		case SL_TYPE_DOUBLE:
			sl_double_format(sl_row_f64(r, i), ts, sizeof ts);
			APPEND("%s", ts);
			break;
		case SL_TYPE_STRING:
			str = sl_row_str(r, i, &len);
			APPEND("%.*s", (int)len, str);
			break;
		case SL_TYPE_TIMESTAMP:
		case SL_TYPE_TIMESTAMP_LTZ:
			sl_ts_format_prec(sl_row_i64(r, i), sl_schema_precision(s, i), ts,
					  sizeof ts);
			APPEND("%s", ts);
			break;
		case SL_TYPE_FLOAT:
			sl_float_format((float)sl_row_f64(r, i), ts, sizeof ts);
			APPEND("%s", ts);
			break;
		case SL_TYPE_DECIMAL:
			sl_decimal_format(sl_row_i64(r, i), sl_schema_scale(s, i), ts, sizeof ts);
			APPEND("%s", ts);
			break;
		case SL_TYPE_DATE:
			sl_date_format(sl_row_i64(r, i), ts, sizeof ts);
			APPEND("%s", ts);
			break;
		}
	}
	APPEND("]");
	return (int)n;
}
