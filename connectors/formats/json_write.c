/*
 * json_write.c - a row as one JSON object per line (the JSON-lines file sink's format, and
 * what the JSON decoder reads back).
 *
 * Hot path: values are written by sl_fmt_write_scalar() (by hand, doubles through simdjson's
 * shortest round-trip to_chars) and escapes here, no printf. DECIMAL is a JSON number with
 * its scale (1.10), DATE/TIMESTAMP/TIMESTAMP_LTZ are strings, as Flink's JSON format writes. Room is checked per field against that field's
 * worst case, so a full buffer is detected before anything is written past `cap`.
 */
#include <errno.h>
#include <math.h>

#include "format.h"

/* Writes s as a JSON string literal (RFC 8259 escapes). Needs at most 6 * len + 2 bytes. */
static char *put_str(char *o, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	*o++ = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c != '"' && c != '\\') {
			*o++ = (char)c;
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\n': *o++ = 'n'; break;
		case '\r': *o++ = 'r'; break;
		case '\t': *o++ = 't'; break;
		case '\b': *o++ = 'b'; break;
		case '\f': *o++ = 'f'; break;
		default:
			*o++ = 'u';
			*o++ = '0';
			*o++ = '0';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o++ = '"';
	return o;
}

static char *put_lit(char *o, const char *lit)
{
	while (*lit)
		*o++ = *lit++;
	return o;
}

int sl_json_write_row(const struct sl_row *r, const struct sl_schema *s, char *buf, size_t cap)
{
	char *o = buf, *end = buf + cap;
	uint32_t len;
	const char *str;
	enum sl_type t;
	bool q;

	if (cap < 3)
		return -ENOSPC;
	*o++ = '{';
	for (int i = 0; i < r->nfields; i++) {
		const char *name = sl_schema_name(s, i);
		size_t nlen = strlen(name);
		size_t need = 6 * nlen + 6 + SL_FMT_SCALAR_MAX; /* key, quotes, ':', ',', scalar */

		if (!sl_row_is_null(r, i) && sl_schema_type(s, i) == SL_TYPE_STRING) {
			sl_row_str(r, i, &len);
			need += 6 * (size_t)len;
		}
		if (need + 2 > (size_t)(end - o))
			return -ENOSPC;
		if (i)
			*o++ = ',';
		o = put_str(o, name, nlen);
		*o++ = ':';
		if (sl_row_is_null(r, i)) {
			o = put_lit(o, "null");
			continue;
		}
		t = sl_schema_type(s, i);
		if (t == SL_TYPE_STRING) {
			str = sl_row_str(r, i, &len);
			o = put_str(o, str, len);
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
	*o++ = '}';
	*o++ = '\n';
	return (int)(o - buf);
}
