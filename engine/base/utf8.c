/*
 * utf8.c - UTF-8 validation (RFC 3629) and JSON string literals (RFC 8259) that are always
 * valid UTF-8: a byte that is not part of a valid sequence becomes U+FFFD, one replacement a
 * byte, as a decoder replacing it would read it. Strings arriving from the formats are
 * validated there; this is what keeps any other string from breaking a line.
 */
#include <string.h>

#include "utf8.h"

size_t sl_utf8_seq(const unsigned char *s, size_t len)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xBF;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0; /* a continuation byte, an overlong lead (C0, C1) or past U+10FFFF */
	/* the second byte's range excludes overlong forms, surrogates and > U+10FFFF */
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

size_t sl_utf8_check(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		if (u[i] < 0x80) {
			i++;
			continue;
		}
		n = sl_utf8_seq(u + i, len - i);
		if (!n)
			return i;
		i += n;
	}
	return len;
}

char *sl_json_put_str(char *o, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;

	*o++ = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = u[i];
		size_t n;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*o++ = (char)c;
			continue;
		}
		if (c >= 0x80) {
			n = sl_utf8_seq(u + i, len - i);
			if (!n) {
				*o++ = (char)0xEF; /* U+FFFD */
				*o++ = (char)0xBF;
				*o++ = (char)0xBD;
				continue;
			}
			memcpy(o, u + i, n);
			o += n;
			i += n - 1;
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"':
			*o++ = '"';
			break;
		case '\\':
			*o++ = '\\';
			break;
		case '\n':
			*o++ = 'n';
			break;
		case '\r':
			*o++ = 'r';
			break;
		case '\t':
			*o++ = 't';
			break;
		case '\b':
			*o++ = 'b';
			break;
		case '\f':
			*o++ = 'f';
			break;
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
