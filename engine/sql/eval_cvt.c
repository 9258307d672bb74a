/*
 * eval_cvt.c - value conversions between SQL types (CAST and the planner's output columns
 * share them) and LIKE matching, for the interpreter in eval_vm.c. Per-record code: no
 * allocation; strings go to the evaluation scratch.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval_int.h"

/* ---- conversions ---------------------------------------------------------------------- */

const int64_t sl_eval_pow10_i64_[19] = {
	1LL,
	10LL,
	100LL,
	1000LL,
	10000LL,
	100000LL,
	1000000LL,
	10000000LL,
	100000000LL,
	1000000000LL,
	10000000000LL,
	100000000000LL,
	1000000000000LL,
	10000000000000LL,
	100000000000000LL,
	1000000000000000LL,
	10000000000000000LL,
	100000000000000000LL,
	1000000000000000000LL,
};

/* 10^0 .. 10^38: every power a DECIMAL(38) needs, as constants (shared by all shards). */
const sl_dec_t sl_eval_pow10_dec_[39] = {
	(sl_dec_t)1LL,
	(sl_dec_t)10LL,
	(sl_dec_t)100LL,
	(sl_dec_t)1000LL,
	(sl_dec_t)10000LL,
	(sl_dec_t)100000LL,
	(sl_dec_t)1000000LL,
	(sl_dec_t)10000000LL,
	(sl_dec_t)100000000LL,
	(sl_dec_t)1000000000LL,
	(sl_dec_t)10000000000LL,
	(sl_dec_t)100000000000LL,
	(sl_dec_t)1000000000000LL,
	(sl_dec_t)10000000000000LL,
	(sl_dec_t)100000000000000LL,
	(sl_dec_t)1000000000000000LL,
	(sl_dec_t)10000000000000000LL,
	(sl_dec_t)100000000000000000LL,
	(sl_dec_t)1000000000000000000LL,
	(sl_dec_t)1000000000000000000LL * 10LL,
	(sl_dec_t)1000000000000000000LL * 100LL,
	(sl_dec_t)1000000000000000000LL * 1000LL,
	(sl_dec_t)1000000000000000000LL * 10000LL,
	(sl_dec_t)1000000000000000000LL * 100000LL,
	(sl_dec_t)1000000000000000000LL * 1000000LL,
	(sl_dec_t)1000000000000000000LL * 10000000LL,
	(sl_dec_t)1000000000000000000LL * 100000000LL,
	(sl_dec_t)1000000000000000000LL * 1000000000LL,
	(sl_dec_t)1000000000000000000LL * 10000000000LL,
	(sl_dec_t)1000000000000000000LL * 100000000000LL,
	(sl_dec_t)1000000000000000000LL * 1000000000000LL,
	(sl_dec_t)1000000000000000000LL * 10000000000000LL,
	(sl_dec_t)1000000000000000000LL * 100000000000000LL,
	(sl_dec_t)1000000000000000000LL * 1000000000000000LL,
	(sl_dec_t)1000000000000000000LL * 10000000000000000LL,
	(sl_dec_t)1000000000000000000LL * 100000000000000000LL,
	(sl_dec_t)1000000000000000000LL * 1000000000000000000LL,
	(sl_dec_t)1000000000000000000LL * 1000000000000000000LL * 10LL,
	(sl_dec_t)1000000000000000000LL * 1000000000000000000LL * 100LL,
};

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void trim_blanks(const char **s, uint32_t *len)
{
	while (*len && blank((*s)[*len - 1]))
		(*len)--;
	while (*len && blank(**s)) {
		(*s)++;
		(*len)--;
	}
}

static bool parse_i64(const char *s, uint32_t len, int64_t *out)
{
	bool neg = false;
	uint64_t v = 0;
	uint32_t i = 0;

	trim_blanks(&s, &len);
	if (len && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i++;
	}
	if (i == len)
		return false;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > (uint64_t)INT64_MAX + neg)
		return false;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

static bool parse_f64(const char *s, uint32_t len, double *out)
{
	char buf[64];
	char *end;

	trim_blanks(&s, &len);
	if (!len || len >= sizeof buf)
		return false;
	memcpy(buf, s, len);
	buf[len] = 0;
	*out = strtod(buf, &end);
	return end == buf + len;
}

/* Java's (long) d: NaN is 0, out of range saturates. */

static int32_t f64_to_i32(double f)
{
	if (f != f)
		return 0;
	if (f >= 2147483647.0)
		return INT32_MAX;
	if (f <= -2147483648.0)
		return INT32_MIN;
	return (int32_t)f;
}

static bool to_int(struct reg *r, const struct vty *from, bool is_int)
{
	int64_t v;

	switch (from->t) {
	case SL_TYPE_BOOL:
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
		v = r->i;
		break;
	case SL_TYPE_TIMESTAMP_LTZ:
		v = sl_eval_floor_div_(r->i, 1000);
		break;
	case SL_TYPE_FLOAT:
	case SL_TYPE_DOUBLE:
		r->i = is_int ? f64_to_i32(r->f) : f64_to_i64(r->f);
		return true;
	case SL_TYPE_DECIMAL:
		/* truncation toward zero, then Java's narrowing of the low bits */
		v = (int64_t)(uint64_t)(r->d / pow10_dec(from->scale));
		break;
	case SL_TYPE_STRING:
		if (!parse_i64(r->s.p, r->s.len, &v) ||
		    (is_int && (v < INT32_MIN || v > INT32_MAX)))
			return false;
		break;
	default:
		return false;
	}
	r->i = is_int ? (int32_t)(uint32_t)(uint64_t)v : v;
	return true;
}

/* To DECIMAL; a value beyond the target's precision also counts in ec->overflows. */
static bool to_dec(struct reg *r, const struct vty *from, const struct vty *to,
		   struct sl_eval_ctx *ec)
{
	struct sl_dec_type tt = { to->prec, to->scale };
	sl_dec_t v;
	int rc;

	switch (from->t) {
	case SL_TYPE_BOOL:
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
		rc = sl_dec_from_i64(r->i, tt, &v);
		break;
	case SL_TYPE_DECIMAL:
		if (from->scale == to->scale) {
			/* same scale (narrowing to DECIMAL(18, s)): a range check */
			sl_dec_t lim = pow10_dec(to->prec);

			if (r->d >= lim || r->d <= -lim) {
				ec->overflows++;
				return false;
			}
			return true;
		}
		rc = sl_dec_rescale(r->d, (struct sl_dec_type){ from->prec, from->scale }, tt, &v);
		break;
	case SL_TYPE_FLOAT:
	case SL_TYPE_DOUBLE: {
		/* BigDecimal.valueOf(d): the shortest text that reads back, then HALF_UP */
		char buf[40];
		int n;

		if (!isfinite(r->f))
			return false;
		n = from->t == SL_TYPE_FLOAT ? sl_float_format((float)r->f, buf, sizeof buf)
					     : sl_double_format(r->f, buf, sizeof buf);
		rc = sl_dec_parse(buf, (size_t)n, tt, &v);
		break;
	}
	case SL_TYPE_STRING:
		rc = sl_dec_parse(r->s.p, r->s.len, tt, &v);
		break;
	default:
		return false;
	}
	if (rc == -ERANGE)
		ec->overflows++;
	if (rc)
		return false;
	r->d = v;
	return true;
}

static bool to_dbl(struct reg *r, const struct vty *from, bool is_float)
{
	double f;

	switch (from->t) {
	case SL_TYPE_BOOL:
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
		f = (double)r->i;
		break;
	case SL_TYPE_DECIMAL:
		f = sl_dec_to_double(r->d, (struct sl_dec_type){ from->prec, from->scale });
		break;
	case SL_TYPE_FLOAT:
	case SL_TYPE_DOUBLE:
		f = r->f;
		break;
	case SL_TYPE_STRING:
		if (!parse_f64(r->s.p, r->s.len, &f))
			return false;
		break;
	default:
		return false;
	}
	r->f = is_float ? (double)(float)f : f;
	return true;
}

static int fmt_i64(int64_t v, char *buf)
{
	char tmp[24];
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	int k = 0, n = 0;

	do {
		tmp[k++] = (char)('0' + m % 10);
		m /= 10;
	} while (m);
	if (v < 0)
		buf[n++] = '-';
	while (k)
		buf[n++] = tmp[--k];
	return n;
}

static bool to_str(struct reg *r, const struct vty *from, const struct vty *to, int64_t tz,
		   struct sl_eval_ctx *ec)
{
	char *buf;
	int n;

	if (from->t == SL_TYPE_STRING) {
		if (to->maxlen)
			r->s.len = cp_offset(r->s.p, r->s.len, to->maxlen);
		return true;
	}
	buf = salloc(ec, SL_DEC_STR_MAX + 16);
	if (!buf)
		return false;
	switch (from->t) {
	case SL_TYPE_BOOL:
		n = r->i ? 4 : 5;
		memcpy(buf, r->i ? "TRUE" : "FALSE", (size_t)n);
		break;
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
		n = fmt_i64(r->i, buf);
		break;
	case SL_TYPE_FLOAT:
		n = sl_float_format((float)r->f, buf, SL_DEC_STR_MAX);
		break;
	case SL_TYPE_DOUBLE:
		n = sl_double_format(r->f, buf, SL_DEC_STR_MAX);
		break;
	case SL_TYPE_DECIMAL:
		n = sl_dec_format(r->d, (struct sl_dec_type){ from->prec, from->scale }, buf,
				  SL_DEC_STR_MAX);
		break;
	case SL_TYPE_DATE:
		n = sl_eval_date_print_(r->i, buf);
		break;
	case SL_TYPE_TIMESTAMP:
		n = sl_eval_ts_print_(r->i, from->prec, buf);
		break;
	case SL_TYPE_TIMESTAMP_LTZ:
		n = sl_eval_ts_print_(r->i + tz, from->prec, buf);
		break;
	default:
		n = -1;
		break;
	}
	if (n < 0) {
		sshrink(ec, SL_DEC_STR_MAX + 16);
		return false;
	}
	sshrink(ec, SL_DEC_STR_MAX + 16 - (uint32_t)n);
	r->s.p = buf;
	r->s.len = (uint32_t)n;
	if (to->maxlen)
		r->s.len = cp_offset(r->s.p, r->s.len, to->maxlen);
	return true;
}

/* TRUE/FALSE words Flink's CAST(string AS BOOLEAN) accepts, case-insensitively. */
static int str_bool(const char *s, uint32_t len)
{
	static const char *const t[] = { "true", "t", "yes", "y", "1" };
	static const char *const f[] = { "false", "f", "no", "n", "0" };

	trim_blanks(&s, &len);
	for (int i = 0; i < 5; i++) {
		if (strlen(t[i]) == len && !strncasecmp(s, t[i], len))
			return 1;
		if (strlen(f[i]) == len && !strncasecmp(s, f[i], len))
			return 0;
	}
	return -1;
}

/* A timestamp of fewer than 3 fraction digits: Flink zeroes the digits past them, toward
 * zero as Java's division (its DateTimeUtils.truncate). */
static int64_t ts_truncate(int64_t ms, uint8_t prec)
{
	return prec >= 3 ? ms : ms / sl_eval_pow10_i64_[3 - prec] * sl_eval_pow10_i64_[3 - prec];
}

static bool to_time(struct reg *r, const struct vty *from, const struct vty *tv, int64_t tz)
{
	uint8_t to = tv->t;
	int64_t ms;

	/* everything goes through the wall clock of the session zone */
	switch (from->t) {
	case SL_TYPE_STRING:
		if (to == SL_TYPE_DATE && sl_eval_date_parse_(r->s.p, r->s.len, &ms)) {
			r->i = ms;
			return true;
		}
		if (!sl_eval_ts_parse_(r->s.p, r->s.len, &ms))
			return false;
		break;
	case SL_TYPE_DATE:
		ms = r->i * MS_PER_DAY;
		break;
	case SL_TYPE_TIMESTAMP:
		ms = r->i;
		break;
	case SL_TYPE_TIMESTAMP_LTZ:
		ms = r->i + tz;
		break;
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
		if (to != SL_TYPE_TIMESTAMP_LTZ || __builtin_mul_overflow(r->i, 1000, &r->i))
			return false;
		return true;
	case SL_TYPE_DECIMAL: {
		sl_dec_t v;

		if (to != SL_TYPE_TIMESTAMP_LTZ ||
		    sl_dec_rescale(r->d, (struct sl_dec_type){ from->prec, from->scale },
				   (struct sl_dec_type){ 38, 3 }, &v) ||
		    v > INT64_MAX || v < INT64_MIN)
			return false;
		r->i = (int64_t)v;
		return true;
	}
	case SL_TYPE_FLOAT:
	case SL_TYPE_DOUBLE:
		if (to != SL_TYPE_TIMESTAMP_LTZ || !isfinite(r->f) || fabs(r->f) > 9.2e15)
			return false;
		r->i = f64_to_i64(r->f * 1000.0);
		return true;
	default:
		return false;
	}
	if (to == SL_TYPE_DATE)
		r->i = sl_eval_floor_div_(ms, MS_PER_DAY);
	else
		r->i = ts_truncate(to == SL_TYPE_TIMESTAMP_LTZ ? ms - tz : ms, tv->prec);
	return true;
}

bool sl_eval_cvt_(struct reg *r, const struct vty *from, const struct vty *to, int64_t tz,
		  struct sl_eval_ctx *ec)
{
	bool ok;

	if (r->null)
		return true;
	switch (to->t) {
	case SL_TYPE_BOOL:
		if (from->t == SL_TYPE_STRING) {
			int b = str_bool(r->s.p, r->s.len);

			ok = b >= 0;
			r->i = b;
		} else if (from->t == SL_TYPE_FLOAT || from->t == SL_TYPE_DOUBLE) {
			r->i = r->f != 0;
			ok = true;
		} else if (from->t == SL_TYPE_DECIMAL) {
			r->i = r->d != 0;
			ok = true;
		} else {
			r->i = r->i != 0;
			ok = true;
		}
		break;
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
		ok = to_int(r, from, to->t == SL_TYPE_INT);
		break;
	case SL_TYPE_DECIMAL:
		ok = to_dec(r, from, to, ec);
		break;
	case SL_TYPE_FLOAT:
	case SL_TYPE_DOUBLE:
		ok = to_dbl(r, from, to->t == SL_TYPE_FLOAT);
		break;
	case SL_TYPE_STRING:
		ok = to_str(r, from, to, tz, ec);
		break;
	case SL_TYPE_DATE:
	case SL_TYPE_TIMESTAMP:
	case SL_TYPE_TIMESTAMP_LTZ:
		ok = to_time(r, from, to, tz);
		break;
	default:
		ok = false;
		break;
	}
	if (!ok)
		r->null = true;
	return ok;
}

/* ---- LIKE ----------------------------------------------------------------------------- */

void sl_eval_like_compile_(struct like_pat *lp, const char *pat, uint32_t len, char esc)
{
	uint32_t lead = 0, trail = 0, inner = 0;
	bool special = false;

	lp->kind = LIKE_GENERAL;
	lp->lit = pat;
	lp->len = len;
	lp->esc = esc;
	for (uint32_t i = 0; i < len; i++)
		if (pat[i] == '_' || (esc && pat[i] == esc))
			special = true;
	if (special)
		return;
	while (lead < len && pat[lead] == '%')
		lead++;
	while (trail < len - lead && pat[len - 1 - trail] == '%')
		trail++;
	for (uint32_t i = lead; i < len - trail; i++)
		inner += pat[i] == '%';
	if (inner)
		return;
	lp->lit = pat + lead;
	lp->len = len - lead - trail;
	if (!lead && !trail)
		lp->kind = LIKE_EXACT;
	else if (!lead)
		lp->kind = LIKE_PREFIX;
	else if (!trail)
		lp->kind = LIKE_SUFFIX;
	else
		lp->kind = LIKE_CONTAINS;
}

/* % and _ (one code point) with an escape character; O(|s| * |p|) worst case, backtracking
 * only to the last %. */
static bool like_general(const char *p, uint32_t pn, const char *s, uint32_t sn, char esc)
{
	uint32_t pi = 0, si = 0, star_p = UINT32_MAX, star_s = 0;

	while (si < sn) {
		if (pi < pn) {
			char c = p[pi];
			uint32_t adv = 1;

			if (c == '%') {
				star_p = ++pi;
				star_s = si;
				continue;
			}
			if (c == '_') {
				si += cp_len((unsigned char)s[si]);
				pi++;
				continue;
			}
			if (esc && c == esc && pi + 1 < pn) {
				c = p[pi + 1];
				adv = 2;
			}
			if (s[si] == c) {
				pi += adv;
				si++;
				continue;
			}
		}
		if (star_p == UINT32_MAX)
			return false;
		pi = star_p;
		star_s += cp_len((unsigned char)s[star_s]);
		si = star_s;
	}
	while (pi < pn && p[pi] == '%')
		pi++;
	return pi == pn && si <= sn + 3; /* a '_' on a truncated code point still counts */
}

bool sl_eval_like_(const struct like_pat *lp, const char *s, uint32_t n)
{
	switch (lp->kind) {
	case LIKE_EXACT:
		return n == lp->len && !memcmp(s, lp->lit, n);
	case LIKE_PREFIX:
		return n >= lp->len && !memcmp(s, lp->lit, lp->len);
	case LIKE_SUFFIX:
		return n >= lp->len && !memcmp(s + n - lp->len, lp->lit, lp->len);
	case LIKE_CONTAINS:
		return !lp->len || memmem(s, n, lp->lit, lp->len) != NULL;
	default:
		return like_general(lp->lit, lp->len, s, n, lp->esc);
	}
}
