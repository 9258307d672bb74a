/*
 * dead_letter.c - the dead-letter line: one JSON object per record that could not be used,
 *
 *   {"where":"path:line","why":"the cause","raw":"the record"}
 *
 * with "raw_base64" holding the record's exact bytes when they are not UTF-8 (raw then shows
 * U+FFFD for those bytes), and "raw_len", the record's full length, when raw is cut at
 * SL_DEAD_LETTER_RAW_MAX bytes. Every line is valid JSON whatever the input held, because
 * `where`, `why` and `raw` all go through one escaper: a cause that quotes the record
 * ('unknown "op" value "z"', a value with a line break) or a path with a quote in its name
 * cannot break the line.
 *
 * Error path: the cost of formatting does not matter, a bounded buffer does (a flood of bad
 * records allocates nothing), so each part is cut at a stated length on a UTF-8 boundary and
 * the worst case fits SL_DEAD_LETTER_MAX.
 */
#include <stdio.h>
#include <string.h>

#include "runtime.h"
#include "utf8.h"

#define WHERE_MAX 1024 /* bytes of `where` and of `why` written; the rest is cut */
#define WHY_MAX	  512

_Static_assert(SL_DEAD_LETTER_MAX >= 6 * (WHERE_MAX + WHY_MAX + SL_DEAD_LETTER_RAW_MAX) +
					     4 * ((SL_DEAD_LETTER_RAW_MAX + 2) / 3) + 128,
	       "a dead-letter line's worst case must fit SL_DEAD_LETTER_MAX");

/* The length of s[0..len) cut to at most max bytes without splitting a UTF-8 sequence. */
static size_t cut(const char *s, size_t len, size_t max)
{
	size_t n = max;

	if (len <= max)
		return len;
	while (n > 0 && max - n < 3 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

static char *put_key(char *o, const char *key)
{
	size_t n = strlen(key);

	memcpy(o, key, n);
	return o + n;
}

static char *put_base64(char *o, const unsigned char *s, size_t len)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i = 0;

	*o++ = '"';
	for (; i + 2 < len; i += 3) {
		*o++ = b64[s[i] >> 2];
		*o++ = b64[(s[i] & 3) << 4 | s[i + 1] >> 4];
		*o++ = b64[(s[i + 1] & 15) << 2 | s[i + 2] >> 6];
		*o++ = b64[s[i + 2] & 63];
	}
	if (i < len) {
		*o++ = b64[s[i] >> 2];
		if (i + 1 < len) {
			*o++ = b64[(s[i] & 3) << 4 | s[i + 1] >> 4];
			*o++ = b64[(s[i + 1] & 15) << 2];
		} else {
			*o++ = b64[(s[i] & 3) << 4];
			*o++ = '=';
		}
		*o++ = '=';
	}
	*o++ = '"';
	return o;
}

size_t sl_dead_letter_format(char *buf, const char *where, const char *why, const char *raw,
			     size_t rawlen)
{
	size_t rn = raw ? cut(raw, rawlen, SL_DEAD_LETTER_RAW_MAX) : 0;
	char *o = buf;

	where = where ? where : "";
	why = why ? why : "";
	o = put_key(o, "{\"where\":");
	o = sl_json_put_str(o, where, cut(where, strlen(where), WHERE_MAX));
	o = put_key(o, ",\"why\":");
	o = sl_json_put_str(o, why, cut(why, strlen(why), WHY_MAX));
	o = put_key(o, ",\"raw\":");
	o = sl_json_put_str(o, raw, rn);
	if (sl_utf8_check(raw, rn) != rn) {
		o = put_key(o, ",\"raw_base64\":");
		o = put_base64(o, (const unsigned char *)raw, rn);
	}
	if (rn < rawlen)
		o += sprintf(o, ",\"raw_len\":%zu", rawlen);
	o = put_key(o, "}\n");
	return (size_t)(o - buf);
}
