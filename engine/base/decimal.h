/*
 * decimal.h - exact DECIMAL(p, s) arithmetic with Flink SQL semantics, for the planner
 * (result types) and the expression kernels (values).
 *
 * A value is its unscaled integer in a signed 128-bit slot (sl_dec_t); the scale lives in
 * its type, which the planner knows, so rows store 16 bytes and no per-value header. The
 * unscaled value of a DECIMAL(p, s) satisfies |v| < 10^p; 10^38 - 1 fits in 127 bits.
 *
 * Result types are computed apart from values (sl_dec_*_type at plan time), and value
 * functions take the result type to produce, so a kernel never re-derives a type per record.
 * Every rounding is HALF_UP (ties away from zero), as Flink's DecimalData does. A result
 * that does not fit its type returns -ERANGE and leaves *out untouched: the caller chooses
 * SQL NULL (Flink's default for overflowing arithmetic) or a job error. Nothing allocates;
 * all functions are pure and callable from any thread.
 */
#ifndef SL_BASE_DECIMAL_H
#define SL_BASE_DECIMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SL_DEC_MAX_PRECISION 38
/* Minimum scale kept when a result precision above 38 forces the scale down (Flink's
 * MINIMUM_ADJUSTED_SCALE, from SQL Server). */
#define SL_DEC_MIN_ADJUSTED_SCALE 6
/* Buffer size that holds any formatted DECIMAL(38, s): sign, 38 digits, "0.", NUL. */
#define SL_DEC_STR_MAX 48

/* Unscaled value; its scale is in the sl_dec_type it travels with. */
typedef __int128 sl_dec_t;

struct sl_dec_type {
	uint8_t prec;  /* 1..38 */
	uint8_t scale; /* 0..prec */
};

/* True when 1 <= prec <= 38 and scale <= prec (Flink's DecimalType bounds). */
bool sl_dec_type_valid(struct sl_dec_type t);

/*
 * Result types (plan time), Flink's LogicalTypeMerging rules, each followed by its
 * adjustment: a precision above 38 becomes 38 and the scale shrinks to keep the integer
 * digits, but never below min(scale, 6).
 *   add/sub: s = max(s1, s2),        p = max(p1 - s1, p2 - s2) + s + 1
 *   mul:     s = s1 + s2,            p = p1 + p2 + 1
 *   div:     s = max(6, s1 + p2 + 1), p = p1 - s1 + s2 + s
 *   mod:     s = max(s1, s2),        p = min(p1 - s1, p2 - s2) + s
 * Arguments must be valid types; the result is valid.
 */
struct sl_dec_type sl_dec_add_type(struct sl_dec_type a, struct sl_dec_type b);
struct sl_dec_type sl_dec_sub_type(struct sl_dec_type a, struct sl_dec_type b);
struct sl_dec_type sl_dec_mul_type(struct sl_dec_type a, struct sl_dec_type b);
struct sl_dec_type sl_dec_div_type(struct sl_dec_type a, struct sl_dec_type b);
struct sl_dec_type sl_dec_mod_type(struct sl_dec_type a, struct sl_dec_type b);

/*
 * Parses text[0..len) (not NUL-terminated: lexer tokens work) as a number and rounds it
 * HALF_UP to type t: [+-]digits[.digits][(e|E)[+-]digits], or a leading/trailing '.'
 * (".5", "5."), surrounded by optional blanks as Flink's CAST(string AS DECIMAL) trims.
 * Returns 0 with *out set, -EINVAL for malformed text or an invalid t, -ERANGE when the
 * rounded value needs more than t.prec digits.
 */
int sl_dec_parse(const char *text, size_t len, struct sl_dec_type t, sl_dec_t *out);

/*
 * Writes v of type t into buf as plain text with exactly t.scale fraction digits, as Flink
 * prints DECIMAL (BigDecimal.toPlainString): 154.80, -0.05, 0.00, 12. NUL-terminates.
 * Returns the length written (without NUL), or -ENOSPC when cap is too small
 * (SL_DEC_STR_MAX always suffices), -EINVAL for an invalid t or |v| >= 10^38.
 */
int sl_dec_format(sl_dec_t v, struct sl_dec_type t, char *buf, size_t cap);

/* Sets *out to x as type t (an integer has scale 0: BIGINT is DECIMAL(19, 0)). Returns 0,
 * -ERANGE when x needs more than t.prec - t.scale integer digits, -EINVAL for invalid t. */
int sl_dec_from_i64(int64_t x, struct sl_dec_type t, sl_dec_t *out);

/* Returns v of type t as the nearest double (exact to the last bit when |v| < 2^53 and
 * scale <= 22; within one ulp otherwise). */
double sl_dec_to_double(sl_dec_t v, struct sl_dec_type t);

/* CAST(v AS DECIMAL(to)): rounds HALF_UP when to.scale < from.scale. Returns 0, -ERANGE when
 * the result needs more than to.prec digits, -EINVAL for an invalid type. */
int sl_dec_rescale(sl_dec_t v, struct sl_dec_type from, struct sl_dec_type to, sl_dec_t *out);

/*
 * Arithmetic into the result type rt, normally the one sl_dec_<op>_type returned (any valid
 * type works: the exact result is rounded HALF_UP to rt.scale). Returns 0 with *out set,
 * -ERANGE when the rounded result needs more than rt.prec digits, -EINVAL for an invalid
 * type, -EDOM for division or modulo by zero. Per-record: no allocation.
 */
int sl_dec_add(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb,
	       struct sl_dec_type rt, sl_dec_t *out);
int sl_dec_sub(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb,
	       struct sl_dec_type rt, sl_dec_t *out);
int sl_dec_mul(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb,
	       struct sl_dec_type rt, sl_dec_t *out);
int sl_dec_div(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb,
	       struct sl_dec_type rt, sl_dec_t *out);
/* Remainder with the sign of a (SQL MOD, Java BigDecimal.remainder). */
int sl_dec_mod(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb,
	       struct sl_dec_type rt, sl_dec_t *out);

/* Returns -1, 0 or 1 as a <, =, > b numerically (scales may differ: 1.50 equals 1.5).
 * ta and tb must be valid types (checked at plan time; there is no error return). */
int sl_dec_cmp(sl_dec_t a, struct sl_dec_type ta, sl_dec_t b, struct sl_dec_type tb);

/* -v in the same type; never overflows since |v| < 10^38 < 2^127. */
static inline sl_dec_t sl_dec_negate(sl_dec_t v)
{
	return -v;
}

#endif
