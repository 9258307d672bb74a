/*
 * decimal.c - exact DECIMAL(p, s) arithmetic with Flink SQL semantics (see decimal.h).
 *
 * Values are 128-bit unscaled integers with |v| < 10^38. Intermediate results are held as
 * sign and 256-bit magnitude ("wide"): aligning two scales multiplies by at most 10^38 and
 * a product of two values is below 10^76, both under 2^256 (about 1.16e77), so every exact
 * intermediate fits and rounding happens once, at the end, into the result type. A scale-up
 * that would leave 256 bits means the result exceeds 10^38 anyway, which is -ERANGE.
 *
 * HALF_UP needs only the first dropped digit (>= 5 rounds away from zero), so scaling down
 * truncates all but one digit in 64-bit chunks and looks at the last one. Division is the
 * one place that needs a remainder against a full divisor: 2r >= d rounds up.
 *
 * Cost: add/sub/mul/rescale are a few 64x64 multiplies and divisions by constants; div with
 * a divisor above 2^64 and a numerator above 2^128 falls back to shift-subtract (256 steps:
 * 0.76 us measured, against 12-47 ns for the other ops), which only divisions of wide
 * DECIMAL(38, x) operands reach.
 */
#include <errno.h>
#include <string.h>

#include "decimal.h"

typedef unsigned __int128 u128;

struct wide {
	uint64_t w[4]; /* magnitude, little-endian 64-bit limbs */
	bool neg;      /* may be set on zero: narrow() returns plain 0 then */
};

static const uint64_t pow10_64[20] = {
	1ULL,
	10ULL,
	100ULL,
	1000ULL,
	10000ULL,
	100000ULL,
	1000000ULL,
	10000000ULL,
	100000000ULL,
	1000000000ULL,
	10000000000ULL,
	100000000000ULL,
	1000000000000ULL,
	10000000000000ULL,
	100000000000000ULL,
	1000000000000000ULL,
	10000000000000000ULL,
	100000000000000000ULL,
	1000000000000000000ULL,
	10000000000000000000ULL,
};

/* 10^k for k <= 38. */
static u128 pow10_128(unsigned k)
{
	return k <= 19 ? pow10_64[k] : (u128)pow10_64[19] * pow10_64[k - 19];
}

bool sl_dec_type_valid(struct sl_dec_type t)
{
	return t.prec >= 1 && t.prec <= SL_DEC_MAX_PRECISION && t.scale <= t.prec;
}

/* ---- result types -------------------------------------------------------------------- */

static int imax(int a, int b)
{
	return a > b ? a : b;
}

static int imin(int a, int b)
{
	return a < b ? a : b;
}

/* Flink's adjustPrecisionScale: above 38 digits, keep the integer digits and give up
 * fraction digits, but keep at least min(scale, 6) of them. */
static struct sl_dec_type adjust(int prec, int scale)
{
	if (prec <= SL_DEC_MAX_PRECISION)
		return (struct sl_dec_type){ .prec = (uint8_t)prec, .scale = (uint8_t)scale };
	int digits = prec - scale;
	int min_scale = imin(scale, SL_DEC_MIN_ADJUSTED_SCALE);
	int s = imax(SL_DEC_MAX_PRECISION - digits, min_scale);

	return (struct sl_dec_type){ .prec = SL_DEC_MAX_PRECISION, .scale = (uint8_t)s };
}

struct sl_dec_type sl_dec_add_type(struct sl_dec_type a, struct sl_dec_type b)
{
	int s = imax(a.scale, b.scale);

	return adjust(imax(a.prec - a.scale, b.prec - b.scale) + s + 1, s);
}

struct sl_dec_type sl_dec_sub_type(struct sl_dec_type a, struct sl_dec_type b)
{
	return sl_dec_add_type(a, b);
}

struct sl_dec_type sl_dec_mul_type(struct sl_dec_type a, struct sl_dec_type b)
{
	return adjust(a.prec + b.prec + 1, a.scale + b.scale);
}

struct sl_dec_type sl_dec_div_type(struct sl_dec_type a, struct sl_dec_type b)
{
	int s = imax(SL_DEC_MIN_ADJUSTED_SCALE, a.scale + b.prec + 1);

	return adjust(a.prec - a.scale + b.scale + s, s);
}

struct sl_dec_type sl_dec_mod_type(struct sl_dec_type a, struct sl_dec_type b)
{
	int s = imax(a.scale, b.scale);

	return adjust(imin(a.prec - a.scale, b.prec - b.scale) + s, s);
}

/* ---- 256-bit magnitudes -------------------------------------------------------------- */

static struct wide widen(sl_dec_t v)
{
	u128 m = v < 0 ? -(u128)v : (u128)v;

	return (struct wide){ .w = { (uint64_t)m, (uint64_t)(m >> 64), 0, 0 }, .neg = v < 0 };
}

/* x *= m; returns true on overflow past 256 bits. */
static bool mul_small(struct wide *x, uint64_t m)
{
	uint64_t carry = 0;

	for (int i = 0; i < 4; i++) {
		u128 t = (u128)x->w[i] * m + carry;

		x->w[i] = (uint64_t)t;
		carry = (uint64_t)(t >> 64);
	}
	return carry != 0;
}

/* x /= d; returns the remainder. */
static uint64_t div_small(struct wide *x, uint64_t d)
{
	u128 r = 0;

	for (int i = 3; i >= 0; i--) {
		u128 cur = (r << 64) | x->w[i];

		x->w[i] = (uint64_t)(cur / d);
		r = cur % d;
	}
	return (uint64_t)r;
}

static void add_one(struct wide *x)
{
	for (int i = 0; i < 4 && ++x->w[i] == 0; i++)
		;
}

static int cmp_mag(const struct wide *a, const struct wide *b)
{
	for (int i = 3; i >= 0; i--)
		if (a->w[i] != b->w[i])
			return a->w[i] < b->w[i] ? -1 : 1;
	return 0;
}

/* a += b; the callers' bounds (< 2 * 10^76) keep it inside 256 bits. */
static void add_mag(struct wide *a, const struct wide *b)
{
	uint64_t carry = 0;

	for (int i = 0; i < 4; i++) {
		u128 t = (u128)a->w[i] + b->w[i] + carry;

		a->w[i] = (uint64_t)t;
		carry = (uint64_t)(t >> 64);
	}
}

/* a -= b, requires a >= b. */
static void sub_mag(struct wide *a, const struct wide *b)
{
	uint64_t borrow = 0;

	for (int i = 0; i < 4; i++) {
		uint64_t bi = b->w[i] + borrow;
		uint64_t nb = (bi < borrow) | (a->w[i] < bi);

		a->w[i] -= bi;
		borrow = nb;
	}
}

static void shl1(struct wide *x)
{
	for (int i = 3; i > 0; i--)
		x->w[i] = (x->w[i] << 1) | (x->w[i - 1] >> 63);
	x->w[0] <<= 1;
}

static int top_bit(const struct wide *x)
{
	for (int i = 3; i >= 0; i--)
		if (x->w[i])
			return i * 64 + 63 - __builtin_clzll(x->w[i]);
	return -1;
}

/* q = n / d, r = n % d for d != 0 (magnitudes only). */
static void divmod(const struct wide *n, const struct wide *d, struct wide *q, struct wide *r)
{
	*q = (struct wide){ 0 };
	*r = (struct wide){ 0 };
	if (!(d->w[1] | d->w[2] | d->w[3])) {
		*q = *n;
		r->w[0] = div_small(q, d->w[0]);
		return;
	}
	if (!(n->w[2] | n->w[3] | d->w[2] | d->w[3])) {
		u128 nn = (u128)n->w[1] << 64 | n->w[0], dd = (u128)d->w[1] << 64 | d->w[0];
		u128 qq = nn / dd, rr = nn % dd;

		q->w[0] = (uint64_t)qq;
		q->w[1] = (uint64_t)(qq >> 64);
		r->w[0] = (uint64_t)rr;
		r->w[1] = (uint64_t)(rr >> 64);
		return;
	}
	/* Shift-subtract; r stays below d < 2^255 (d < 10^76 here), so shl1 cannot overflow. */
	for (int i = top_bit(n); i >= 0; i--) {
		shl1(r);
		r->w[0] |= (n->w[i / 64] >> (i % 64)) & 1;
		if (cmp_mag(r, d) >= 0) {
			sub_mag(r, d);
			q->w[i / 64] |= 1ULL << (i % 64);
		}
	}
}

/* x *= 10^k; -ERANGE when it leaves 256 bits, which is far beyond any DECIMAL. */
static int scale_up(struct wide *x, unsigned k)
{
	while (k > 0) {
		unsigned step = k < 19 ? k : 19;

		if (mul_small(x, pow10_64[step]))
			return -ERANGE;
		k -= step;
	}
	return 0;
}

/* x = x / 10^k rounded HALF_UP (on the magnitude, so ties go away from zero). */
static void scale_down(struct wide *x, unsigned k)
{
	if (k == 0)
		return;
	for (unsigned left = k - 1; left > 0;) {
		unsigned step = left < 19 ? left : 19;

		div_small(x, pow10_64[step]);
		left -= step;
	}
	if (div_small(x, 10) >= 5)
		add_one(x);
}

static int rescale_wide(struct wide *x, unsigned from, unsigned to)
{
	if (to >= from)
		return scale_up(x, to - from);
	scale_down(x, from - to);
	return 0;
}

/* *out = x when |x| < 10^prec, else -ERANGE. */
static int narrow(const struct wide *x, unsigned prec, sl_dec_t *out)
{
	if (x->w[2] | x->w[3])
		return -ERANGE;
	u128 m = (u128)x->w[1] << 64 | x->w[0];

	if (m >= pow10_128(prec))
		return -ERANGE;
	*out = x->neg ? -(sl_dec_t)m : (sl_dec_t)m;
	return 0;
}

/* ---- arithmetic ---------------------------------------------------------------------- */

static bool valid3(struct sl_dec_type a, struct sl_dec_type b, struct sl_dec_type c)
{
	return sl_dec_type_valid(a) && sl_dec_type_valid(b) && sl_dec_type_valid(c);
}

/* Sum of a and (b negated when negate_b), exactly, at scale max(sa, sb). */
static int add_signed(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb,
		      bool negate_b, struct sl_dec_type rt, sl_dec_t *out)
{
	if (!valid3(ta, tb, rt))
		return -EINVAL;
	unsigned s = imax(ta.scale, tb.scale);
	struct wide x = widen(a), y = widen(b);

	y.neg ^= negate_b;
	/* Cannot fail: < 10^38 times at most 10^38. */
	scale_up(&x, s - ta.scale);
	scale_up(&y, s - tb.scale);
	if (x.neg == y.neg) {
		add_mag(&x, &y);
	} else if (cmp_mag(&x, &y) >= 0) {
		sub_mag(&x, &y);
	} else {
		sub_mag(&y, &x);
		x = y;
	}
	if (rescale_wide(&x, s, rt.scale))
		return -ERANGE;
	return narrow(&x, rt.prec, out);
}

int sl_dec_add(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb,
	       struct sl_dec_type rt, sl_dec_t *out)
{
	return add_signed(a, ta, b, tb, false, rt, out);
}

int sl_dec_sub(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb,
	       struct sl_dec_type rt, sl_dec_t *out)
{
	return add_signed(a, ta, b, tb, true, rt, out);
}

int sl_dec_mul(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb,
	       struct sl_dec_type rt, sl_dec_t *out)
{
	if (!valid3(ta, tb, rt))
		return -EINVAL;
	struct wide x = widen(a), y = widen(b), p = { .neg = x.neg != y.neg };

	/* Schoolbook 2x2 limbs: the product of two values below 10^38 is below 10^76. */
	for (int i = 0; i < 2; i++) {
		uint64_t carry = 0;

		for (int j = 0; j < 2; j++) {
			u128 t = (u128)x.w[i] * y.w[j] + p.w[i + j] + carry;

			p.w[i + j] = (uint64_t)t;
			carry = (uint64_t)(t >> 64);
		}
		p.w[i + 2] = carry;
	}
	if (rescale_wide(&p, ta.scale + tb.scale, rt.scale))
		return -ERANGE;
	return narrow(&p, rt.prec, out);
}

int sl_dec_div(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb,
	       struct sl_dec_type rt, sl_dec_t *out)
{
	if (!valid3(ta, tb, rt))
		return -EINVAL;
	if (b == 0)
		return -EDOM;
	/* a / b at scale rt.scale is (|a| * 10^e) / |b| with e = rt.scale - sa + sb; a
	 * negative e moves the power onto the divisor instead. */
	int e = rt.scale - ta.scale + tb.scale;
	struct wide n = widen(a), d = widen(b), q, r, half;

	if (e >= 0 ? scale_up(&n, e) : scale_up(&d, -e))
		return -ERANGE;
	divmod(&n, &d, &q, &r);
	/* HALF_UP: round away when 2r >= d, tested as r >= d - r to stay in range. */
	half = d;
	sub_mag(&half, &r);
	if (cmp_mag(&r, &half) >= 0)
		add_one(&q);
	q.neg = n.neg != d.neg;
	return narrow(&q, rt.prec, out);
}

int sl_dec_mod(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb,
	       struct sl_dec_type rt, sl_dec_t *out)
{
	if (!valid3(ta, tb, rt))
		return -EINVAL;
	if (b == 0)
		return -EDOM;
	unsigned s = imax(ta.scale, tb.scale);
	struct wide x = widen(a), y = widen(b), q, r;

	scale_up(&x, s - ta.scale);
	scale_up(&y, s - tb.scale);
	divmod(&x, &y, &q, &r);
	r.neg = x.neg;
	if (rescale_wide(&r, s, rt.scale))
		return -ERANGE;
	return narrow(&r, rt.prec, out);
}

int sl_dec_cmp(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb)
{
	int sa = (a > 0) - (a < 0), sb = (b > 0) - (b < 0);

	/* Signs decide unless both are equal and nonzero. */
	if (sa != sb || sa == 0)
		return (sa > sb) - (sa < sb);
	if (ta.scale == tb.scale)
		return (a > b) - (a < b);
	unsigned s = imax(ta.scale, tb.scale);
	struct wide x = widen(a), y = widen(b);

	scale_up(&x, s - ta.scale);
	scale_up(&y, s - tb.scale);
	int c = cmp_mag(&x, &y);

	return a < 0 ? -c : c;
}

int sl_dec_rescale(sl_dec_t v, struct sl_dec_type from, struct sl_dec_type to, sl_dec_t *out)
{
	if (!sl_dec_type_valid(from) || !sl_dec_type_valid(to))
		return -EINVAL;
	struct wide x = widen(v);

	if (rescale_wide(&x, from.scale, to.scale))
		return -ERANGE;
	return narrow(&x, to.prec, out);
}

int sl_dec_from_i64(int64_t x, struct sl_dec_type t, sl_dec_t *out)
{
	if (!sl_dec_type_valid(t))
		return -EINVAL;
	struct wide w = widen(x);

	if (scale_up(&w, t.scale))
		return -ERANGE;
	return narrow(&w, t.prec, out);
}

double sl_dec_to_double(sl_dec_t v, struct sl_dec_type t)
{
	static const double p10[] = {
		1e0,  1e1,  1e2,  1e3,	1e4,  1e5,  1e6,  1e7,	1e8,  1e9,  1e10, 1e11, 1e12,
		1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25,
		1e26, 1e27, 1e28, 1e29, 1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38,
	};

	/* One correctly rounded division of two exact doubles while both are exact. */
	return (double)v / p10[t.scale <= SL_DEC_MAX_PRECISION ? t.scale : 0];
}

/* ---- text ---------------------------------------------------------------------------- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int sl_dec_parse(const char *text, size_t len, struct sl_dec_type t, sl_dec_t *out)
{
	if (!sl_dec_type_valid(t))
		return -EINVAL;
	size_t i = 0, end = len;

	while (i < end && is_blank(text[i]))
		i++;
	while (end > i && is_blank(text[end - 1]))
		end--;

	/* Shape first, so malformed text is -EINVAL however large its number would be. */
	bool neg = false;

	if (i < end && (text[i] == '+' || text[i] == '-'))
		neg = text[i++] == '-';
	size_t int_at = i;

	while (i < end && is_digit(text[i]))
		i++;
	size_t n_int = i - int_at, frac_at = i, n_frac = 0;

	if (i < end && text[i] == '.') {
		frac_at = ++i;
		while (i < end && is_digit(text[i]))
			i++;
		n_frac = i - frac_at;
	}
	if (n_int + n_frac == 0)
		return -EINVAL;
	/* The exponent saturates: past a billion the value is zero or out of range anyway. */
	int64_t exp = 0;

	if (i < end && (text[i] == 'e' || text[i] == 'E')) {
		bool eneg = false;

		i++;
		if (i < end && (text[i] == '+' || text[i] == '-'))
			eneg = text[i++] == '-';
		if (i == end || !is_digit(text[i]))
			return -EINVAL;
		for (; i < end && is_digit(text[i]); i++)
			if (exp < 1000000000)
				exp = exp * 10 + (text[i] - '0');
		if (eneg)
			exp = -exp;
	}
	if (i != end)
		return -EINVAL;

	/* Digit k (of n_int + n_frac) lands at power q = n_int - 1 - k + exp + scale of the
	 * unscaled result: q >= 0 accumulates, q == -1 is the HALF_UP digit, below is ignored. */
	size_t n = n_int + n_frac;
	int64_t q = (int64_t)n_int - 1 + exp + t.scale;
	u128 acc = 0, limit = pow10_128(SL_DEC_MAX_PRECISION - 1);
	int round = 0;

	for (size_t k = 0; k < n && q >= -1; k++, q--) {
		int d = (k < n_int ? text[int_at + k] : text[frac_at + k - n_int]) - '0';

		if (q == -1) {
			round = d;
			break;
		}
		if (acc >= limit)
			return -ERANGE;
		acc = acc * 10 + d;
	}
	/* Digits ran out above the unit position: append zeros (q + 1 of them). */
	if (q >= 0 && acc != 0) {
		if (q + 1 > SL_DEC_MAX_PRECISION)
			return -ERANGE;
		struct wide w = { .w = { (uint64_t)acc, (uint64_t)(acc >> 64) } };

		if (scale_up(&w, (unsigned)(q + 1)) || (w.w[2] | w.w[3]))
			return -ERANGE;
		acc = (u128)w.w[1] << 64 | w.w[0];
	}
	if (round >= 5)
		acc++;
	if (acc >= pow10_128(t.prec))
		return -ERANGE;
	*out = neg ? -(sl_dec_t)acc : (sl_dec_t)acc;
	return 0;
}

int sl_dec_format(sl_dec_t v, struct sl_dec_type t, char *buf, size_t cap)
{
	if (!sl_dec_type_valid(t))
		return -EINVAL;
	u128 m = v < 0 ? -(u128)v : (u128)v;

	if (m >= pow10_128(SL_DEC_MAX_PRECISION))
		return -EINVAL;
	/* Digits backwards, in two 19-digit chunks and the rest, to divide by u64 mostly. */
	char dig[40];
	int nd = 0;
	uint64_t chunk[3] = { (uint64_t)(m % pow10_64[19]),
			      (uint64_t)(m / pow10_64[19] % pow10_64[19]),
			      (uint64_t)(m / pow10_64[19] / pow10_64[19]) };

	for (int c = 0; c < 3; c++) {
		/* A lower chunk under a nonzero higher one keeps its leading zeros. */
		bool more = c == 0 ? (chunk[1] | chunk[2]) != 0 : c == 1 ? chunk[2] != 0 : false;

		for (int j = 0; j < 19 && (chunk[c] || more); j++) {
			dig[nd++] = (char)('0' + chunk[c] % 10);
			chunk[c] /= 10;
		}
	}
	while (nd < t.scale + 1)
		dig[nd++] = '0';
	size_t need = (v < 0) + (size_t)nd + (t.scale > 0) + 1;

	if (need > cap)
		return -ENOSPC;
	char *p = buf;

	if (v < 0)
		*p++ = '-';
	for (int j = nd - 1; j >= 0; j--) {
		*p++ = dig[j];
		if (j == t.scale && t.scale > 0)
			*p++ = '.';
	}
	*p = '\0';
	return (int)(p - buf);
}
