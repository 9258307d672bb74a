/*
 * utf8.h - UTF-8 validation and JSON string literals, for every layer that writes text
 * others parse: the JSON sink's lines (connectors) and the dead-letter output (runtime).
 */
#ifndef SL_BASE_UTF8_H
#define SL_BASE_UTF8_H

#include <stddef.h>

/* Length of the one valid UTF-8 sequence at s[0..len) (len > 0; RFC 3629: no overlong form,
 * surrogate or code point past U+10FFFF), or 0 when the bytes there are not one. */
size_t sl_utf8_seq(const unsigned char *s, size_t len);

/* Offset of the first byte of s[0..len) that is not part of valid UTF-8, or len when all of
 * it is. Hot path: ASCII costs a compare a byte. */
size_t sl_utf8_check(const char *s, size_t len);

/* Writes s as a JSON string literal with RFC 8259 escapes; a byte that is not part of valid
 * UTF-8 is written as U+FFFD, so the output is always UTF-8 JSON. Needs at most 6 * len + 2
 * bytes at o. Returns the end of what it wrote. Hot path: no allocation, no libc formatting. */
char *sl_json_put_str(char *o, const char *s, size_t len);

#endif
