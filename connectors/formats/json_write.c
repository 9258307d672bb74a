/*
 * json_write.c - a row as one JSON object per line (the JSON-lines file sink's format, and
 * what the JSON decoder reads back).
 *
 * Hot path: values are written by sl_fmt_write_scalar() (by hand, doubles through simdjson's
 * shortest round-trip to_chars) and escapes here, no printf. Every line is UTF-8: a string
 * byte that is not part of valid UTF-8 is written as U+FFFD (the decoders reject such input,
 * so only a computed string can hold one), never copied raw into a line JSON readers reject.
 * DECIMAL is a JSON number with its scale (1.10), DATE/TIMESTAMP/TIMESTAMP_LTZ are strings, as
 * Flink's JSON format writes. Room is checked per field against that field's worst case, so a full
 * buffer is detected before anything is written past `cap`.
 *
 * Dotted field names (flattened ROW columns) are written as nested objects, the shape the
 * decoder reads: the writer keeps the path of objects open so far and, per field, closes
 * the levels its name does not share and opens the new ones. Fields of one ROW are adjacent
 * in a flattened schema, so each object is opened once; a flat schema costs one strchr per
 * field.
 */
#include <errno.h>
#include <math.h>

#include "format.h"
#include "utf8.h"

static char *put_lit(char *o, const char *lit)
{
	while (*lit)
		*o++ = *lit++;
	return o;
}

/* Length of the first path component of name (up to '.' or the end). */
static size_t comp_len(const char *name)
{
	const char *dot = strchr(name, '.');

	return dot ? (size_t)(dot - name) : strlen(name);
}

int sl_json_write_row(const struct sl_row *r, const struct sl_schema *s, char *buf, size_t cap)
{
	char *o = buf, *end = buf + cap;
	const char *open[SL_SCHEMA_MAX_FIELDS]; /* components of the open objects */
	size_t olen[SL_SCHEMA_MAX_FIELDS];
	int depth = 0;
	bool first = true; /* nothing written yet in the innermost open object */
	uint32_t len;
	const char *str;
	enum sl_type t;
	bool q;

	if (cap < 3)
		return -ENOSPC;
	*o++ = '{';
	for (int i = 0; i < r->nfields; i++) {
		const char *name = sl_schema_name(s, i), *leaf = name;
		size_t nlen = strlen(name), cl;
		/* key and every object key on its path, quotes, ':', ',', '{', scalar, closings */
		size_t need = 6 * nlen + 8 + 4 * (size_t)SL_SCHEMA_MAX_FIELDS + SL_FMT_SCALAR_MAX;
		int d = 0;

		if (!sl_row_is_null(r, i) && sl_schema_type(s, i) == SL_TYPE_STRING) {
			sl_row_str(r, i, &len);
			need += 6 * (size_t)len;
		}
		if (need + 2 > (size_t)(end - o))
			return -ENOSPC;
		if (depth || strchr(name, '.')) {
			/* the open objects this name shares, then close the rest */
			while (d < depth && strchr(leaf, '.') && (cl = comp_len(leaf)) == olen[d] &&
			       !memcmp(leaf, open[d], cl)) {
				leaf += cl + 1;
				d++;
			}
			for (; depth > d; depth--) {
				*o++ = '}';
				first = false;
			}
			/* open the objects on the rest of the path */
			while (strchr(leaf, '.')) {
				cl = comp_len(leaf);
				if (!first)
					*o++ = ',';
				o = sl_json_put_str(o, leaf, cl);
				*o++ = ':';
				*o++ = '{';
				open[depth] = leaf;
				olen[depth++] = cl;
				first = true;
				leaf += cl + 1;
			}
			nlen = strlen(leaf);
		}
		if (!first)
			*o++ = ',';
		first = false;
		o = sl_json_put_str(o, leaf, nlen);
		*o++ = ':';
		if (sl_row_is_null(r, i)) {
			o = put_lit(o, "null");
			continue;
		}
		t = sl_schema_type(s, i);
		if (t == SL_TYPE_STRING) {
			str = sl_row_str(r, i, &len);
			o = sl_json_put_str(o, str, len);
			continue;
		}
		/* dates, timestamps and non-finite numbers are strings (Jackson writes NaN so) */
		q = t == SL_TYPE_DATE || t == SL_TYPE_TIMESTAMP || t == SL_TYPE_TIMESTAMP_LTZ ||
		    ((t == SL_TYPE_DOUBLE || t == SL_TYPE_FLOAT) && !isfinite(sl_row_f64(r, i)));
		if (q)
			*o++ = '"';
		o += sl_fmt_write_scalar(r, i, t, sl_schema_scale(s, i), o);
		if (q)
			*o++ = '"';
	}
	if ((size_t)(end - o) < (size_t)depth + 2)
		return -ENOSPC;
	while (depth--)
		*o++ = '}';
	*o++ = '}';
	*o++ = '\n';
	return (int)(o - buf);
}
