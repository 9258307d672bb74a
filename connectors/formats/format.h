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
/* Parses true/false in any case. Returns 0 or -EINVAL. */
int sl_fmt_parse_bool(const char *s, size_t len, bool *out);
/* Parses 'YYYY-MM-DD[( |T)HH:MM[:SS[.f...]]][Z|(+|-)HH[:]MM]' into epoch ms (UTC unless an
 * offset is given; fractions beyond ms are truncated). Returns 0 or -EINVAL. */
int sl_fmt_parse_ts(const char *s, size_t len, sl_ts_t *out);

/* Sets field i (type t, named `name`) from text. Returns 0, or -EINVAL with why filled. */
int sl_fmt_set_text(struct sl_row_builder *b, int i, enum sl_type t, const char *name,
		    const char *s, size_t len, char *why);

/* Writes a one-line reason into why[SL_FMT_WHY_MAX] (error path only). */
void sl_fmt_why(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Formats epoch ms as 'YYYY-MM-DD HH:MM:SS.fff' (23 chars, UTC) without libc. Returns 23. */
int sl_fmt_write_ts(sl_ts_t ts, char *out);

/* Shortest round-trip text of a finite double (json_simdjson.cc). Writes at most 32 bytes,
 * no NUL; returns the length. */
int sl_fmt_write_f64(double v, char *out);

#ifdef __cplusplus
}
#endif
#endif
