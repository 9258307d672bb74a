/*
 * hint.c - the query hints sluice reads, from the text of a hint comment (the lexer keeps
 * it for the token after it, lexer.h). Flink's hints that sluice has no use for (OPTIONS,
 * STATE_TTL, join strategies) stay what they were before: comments.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "hint.h"

/* s[0..n) from i: blanks skipped. */
static size_t skip_blanks(const char *s, size_t n, size_t i)
{
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	return i;
}

int sl_hint_uid(const char *text, size_t len, char *out, size_t cap, char *err, size_t errcap)
{
	for (size_t i = 0; i + 3 <= len; i++) {
		size_t j, v;

		if (strncasecmp(text + i, "UID", 3) ||
		    (i && (isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_')))
			continue;
		j = skip_blanks(text, len, i + 3);
		if (j >= len || text[j] != '(')
			continue; /* a word that only starts with UID */
		j = skip_blanks(text, len, j + 1);
		if (j >= len || text[j] != '\'') {
			snprintf(err, errcap, "UID hint: expected a quoted name, UID('name')");
			return -1;
		}
		v = ++j;
		while (j < len && text[j] != '\'')
			j++;
		if (j >= len || j == v || j - v >= cap) {
			snprintf(err, errcap, "UID hint: %s",
				 j >= len ? "unterminated name"
				 : j == v ? "empty name"
					  : "name too long");
			return -1;
		}
		snprintf(out, cap, "%.*s", (int)(j - v), text + v);
		j = skip_blanks(text, len, j + 1);
		if (j >= len || text[j] != ')') {
			snprintf(err, errcap, "UID hint: expected ')' after the name");
			return -1;
		}
		return 1;
	}
	return 0;
}
