/*
 * format.h - internals shared by the record formats (JSON shim, CSV, JSON writer): text to
 * typed values and the one-line error reasons. Not included from outside connectors/.
 */
#ifndef SL_CONNECTORS_FORMAT_H
#define SL_CONNECTORS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/connectors.h>
#include <sluice/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parses a decimal integer (optional sign, surrounding blanks allowed) within [lo, hi].
 * Returns 0, -EINVAL (not an integer) or -ERANGE. */
int sl_fmt_parse_i64(const char *s, size_t len, int64_t lo, int64_t hi, int64_t *out);
/* Parses a floating-point number (strtod syntax incl. NaN, Infinity). Returns 0 or -EINVAL. */
int sl_fmt_parse_f64(const char *s, size_t len, double *out);
/* Clinger's fast path (f64_fast.c) for trimmed text s[0..len): true and *out set, bit for
 * bit what strtod gives, when s is a plain decimal of at most 19 significant digits whose
 * value is w * 10^e with w <= 2^53 and |e| <= 22; false (*out untouched) for anything else,
 * which the caller hands to strtod. Hot path. */
bool sl_fmt_f64_fast(const char *s, size_t len, double *out);
/* The same for the number at the start of s[0..len): true with *out and *used (the bytes of
 * the number, which end before the first byte that cannot continue it) when that number is
 * one the fast path decides, and then *out is what strtod gives for s[0..*used). For a
 * reader that finds a field's end while parsing it. Hot path. */
bool sl_fmt_f64_fast_prefix(const char *s, size_t len, double *out, size_t *used);
/* Parses true/false in any case. Returns 0 or -EINVAL. */
int sl_fmt_parse_bool(const char *s, size_t len, bool *out);
/* Parses 'YYYY-MM-DD[( |T)HH:MM[:SS[.f...]]][Z|(+|-)HH[:]MM]' into epoch ms (UTC unless an
 * offset is given; fractions beyond ms are truncated). Returns 0 or -EINVAL. */
int sl_fmt_parse_ts(const char *s, size_t len, sl_ts_t *out);

/* Parses 'YYYY-MM-DD' into days since 1970-01-01. Returns 0 or -EINVAL. */
int sl_fmt_parse_date(const char *s, size_t len, int64_t *out);
/* Parses a decimal number ([+-]digits[.digits][(e|E)[+-]digits], blanks around allowed) and
 * rounds it HALF_UP to `scale` fraction digits: *out is the unscaled value. Returns 0,
 * -EINVAL (not a number) or -ERANGE (needs more than `prec` digits: Flink makes it NULL). */
int sl_fmt_parse_dec(const char *s, size_t len, int prec, int scale, int64_t *out);

/* What a decoder needs to know of one schema field to convert text into it. */
struct sl_fmt_field {
	const char *name; /* borrowed from the schema */
	enum sl_type type;
	uint8_t prec, scale; /* DECIMAL */
	bool fail_overflow;  /* DECIMAL overflow is a record error, not NULL */
	uint64_t *overflows; /* the decoder's count of DECIMAL values made NULL */
};

/* Fills f from field i of schema s (overflow: NULL, counted in *overflows). */
void sl_fmt_field_init(struct sl_fmt_field *f, const struct sl_schema *s, int i,
		       uint64_t *overflows, bool fail_overflow);

/* Sets field i of b (described by f) from text: a DECIMAL beyond its precision is NULL, as
 * Flink's formats make it, and counted; with f->fail_overflow it is a record error. Returns
 * 0, or -EINVAL with why filled. Hot path. */
int sl_fmt_set_text(struct sl_row_builder *b, int i, const struct sl_fmt_field *f, const char *s,
		    size_t len, char *why);

/* Writes a one-line reason into why[SL_FMT_WHY_MAX] (error path only). */
void sl_fmt_why(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Formats epoch ms as 'YYYY-MM-DD HH:MM:SS.fff' (23 chars, UTC) without libc. Returns 23. */
int sl_fmt_write_ts(sl_ts_t ts, char *out);

/* Writes a date (days since the epoch) as 'YYYY-MM-DD' (10 chars, no NUL). Returns 10. */
int sl_fmt_write_date(int64_t days, char *out);

/* Writes a float as Java's Float.toString does (shortest digits that read back as the same
 * float; plain notation for 1e-3 <= |v| < 1e7, else d.dddE[-]n; NaN, Infinity). At most 24
 * bytes, no NUL; returns the length. No libc formatting. */
int sl_fmt_write_f32(float v, char *out);

/* Writes an unscaled decimal with `scale` fraction digits ("-0.05"). At most 24 bytes, no
 * NUL; returns the length. */
int sl_fmt_write_dec(int64_t unscaled, int scale, char *out);

/* Writes the text of non-NULL field i of r (any type but STRING) as the JSON and CSV
 * writers print it: true/false, digits, doubles shortest round trip (NaN, Infinity,
 * -Infinity), floats as Java does, decimals with their scale, dates 'YYYY-MM-DD', timestamps
 * 'YYYY-MM-DD HH:MM:SS[.f[f[f]]]' without the fraction's trailing zeros (as Flink's formats
 * write them) and TIMESTAMP_LTZ the same plus 'Z'. At most SL_FMT_SCALAR_MAX
 * bytes, no NUL; returns the length. Hot path: no libc formatting. */
#define SL_FMT_SCALAR_MAX 40
int sl_fmt_write_scalar(const struct sl_row *r, int i, enum sl_type t, int scale, char *out);

/* Shortest round-trip text of a finite double (json_simdjson.cc). Writes at most 32 bytes,
 * no NUL; returns the length. */
int sl_fmt_write_f64(double v, char *out);

#ifdef __cplusplus
}
#endif
#endif
