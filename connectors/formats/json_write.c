/*
 * json_write.c - a row as one JSON object per line (the JSON-lines file sink's format, and
 * what the JSON decoder reads back).
 *
 * Hot path: digits, timestamps and escapes are written by hand (no printf), doubles through
 * simdjson's shortest round-trip to_chars. Room is checked per field against that field's
 * worst case, so a full buffer is detected before anything is written past `cap`.
 */
#include <errno.h>
#include <math.h>

#include "format.h"

static char *put_u64(char *o, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*o++ = tmp[--n];
	return o;
}

static char *put_i64(char *o, int64_t v)
{
	if (v < 0) {
		*o++ = '-';
		return put_u64(o, 0 - (uint64_t)v);
	}
	return put_u64(o, (uint64_t)v);
}

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
	double d;

	if (cap < 3)
		return -ENOSPC;
	*o++ = '{';
	for (int i = 0; i < r->nfields; i++) {
		const char *name = sl_schema_name(s, i);
		size_t nlen = strlen(name);
		size_t need = 6 * nlen + 4 + 40; /* key, quotes, ':', ',' and any scalar */

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
		switch (sl_schema_type(s, i)) {
		case SL_TYPE_BOOL:
			o = put_lit(o, sl_row_bool(r, i) ? "true" : "false");
			break;
		case SL_TYPE_INT:
		case SL_TYPE_BIGINT:
			o = put_i64(o, sl_row_i64(r, i));
			break;
		case SL_TYPE_DOUBLE:
			d = sl_row_f64(r, i);
			if (isnan(d))
				o = put_lit(o, "\"NaN\"");
			else if (isinf(d))
				o = put_lit(o, d < 0 ? "\"-Infinity\"" : "\"Infinity\"");
			else
				o += sl_fmt_write_f64(d, o);
			break;
		case SL_TYPE_STRING:
			str = sl_row_str(r, i, &len);
			o = put_str(o, str, len);
			break;
		case SL_TYPE_TIMESTAMP:
			*o++ = '"';
			o += sl_fmt_write_ts(sl_row_i64(r, i), o);
			*o++ = '"';
			break;
		}
	}
	*o++ = '}';
	*o++ = '\n';
	return (int)(o - buf);
}
