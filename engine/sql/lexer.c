/*
 * lexer.c - Flink SQL tokens with positions (see lexer.h).
 *
 * One pass over the bytes, no allocation: tokens point into the source. Positions count
 * lines from 1 and columns in bytes from 1, which is what editors show for ASCII SQL and is
 * stable for UTF-8 text inside strings (columns after a multi-byte character are byte
 * columns; the messages say so by naming line and column only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"

void sl_lexer_init(struct sl_lexer *lx, const char *src, size_t len)
{
	lx->src = src;
	lx->len = len;
	lx->pos = 0;
	lx->line = 1;
	lx->col = 1;
}

static int peek(const struct sl_lexer *lx, size_t ahead)
{
	return lx->pos + ahead < lx->len ? (unsigned char)lx->src[lx->pos + ahead] : -1;
}

static void advance(struct sl_lexer *lx)
{
	if (lx->src[lx->pos] == '\n') {
		lx->line++;
		lx->col = 1;
	} else {
		lx->col++;
	}
	lx->pos++;
}

static bool is_ident_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Skips blanks and comments. Returns an error message for an unterminated block comment. */
static const char *skip_space(struct sl_lexer *lx, struct sl_tok *at)
{
	for (;;) {
		int c = peek(lx, 0);

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f') {
			advance(lx);
		} else if (c == '-' && peek(lx, 1) == '-') {
			while (peek(lx, 0) != -1 && peek(lx, 0) != '\n')
				advance(lx);
		} else if (c == '/' && peek(lx, 1) == '*') {
			/* a hint (a comment opening with a plus, as Flink writes OPTIONS or UID) is
			 * kept for the token after it */
			bool hint = peek(lx, 2) == '+';
			size_t from;

			at->line = lx->line;
			at->col = lx->col;
			advance(lx);
			advance(lx);
			from = lx->pos + hint;
			while (!(peek(lx, 0) == '*' && peek(lx, 1) == '/')) {
				if (peek(lx, 0) == -1)
					return "unterminated /* comment";
				advance(lx);
			}
			if (hint) {
				at->hint = lx->src + from;
				at->hint_len = (uint32_t)(lx->pos - from);
				at->hint_line = at->line;
				at->hint_col = at->col;
			}
			advance(lx);
			advance(lx);
		} else {
			return NULL;
		}
	}
}

static struct sl_tok finish(struct sl_lexer *lx, struct sl_tok t, size_t start)
{
	t.text = lx->src + start;
	t.len = (uint32_t)(lx->pos - start);
	return t;
}

static struct sl_tok error(struct sl_lexer *lx, struct sl_tok t, const char *msg)
{
	t.kind = SL_TOK_ERROR;
	t.msg = msg;
	t.text = lx->src + lx->pos;
	t.len = 0;
	lx->pos = lx->len; /* sticky: nothing follows an error */
	return t;
}

static const char *const two_char_ops[] = { "<=", ">=", "<>", "!=", "||" };

struct sl_tok sl_lexer_next(struct sl_lexer *lx)
{
	struct sl_tok t = { 0 };
	const char *err = skip_space(lx, &t);
	size_t start;
	int c;

	if (err)
		return error(lx, t, err);
	t.line = lx->line;
	t.col = lx->col;
	start = lx->pos;
	c = peek(lx, 0);
	if (c == -1) {
		t.kind = SL_TOK_EOF;
		return finish(lx, t, start);
	}
	if (is_ident_start(c)) {
		while (is_ident_start(peek(lx, 0)) || is_digit(peek(lx, 0)) || peek(lx, 0) == '$')
			advance(lx);
		t.kind = SL_TOK_IDENT;
		return finish(lx, t, start);
	}
	if (c == '`') {
		advance(lx);
		start = lx->pos;
		for (;;) {
			if (peek(lx, 0) == -1)
				return error(lx, t, "unterminated `quoted identifier`");
			if (peek(lx, 0) == '`') {
				if (peek(lx, 1) == '`') { /* `` inside stays doubled in text */
					advance(lx);
					advance(lx);
					continue;
				}
				break;
			}
			advance(lx);
		}
		t.kind = SL_TOK_IDENT;
		t.quoted = true;
		t = finish(lx, t, start);
		advance(lx);
		return t;
	}
	if (c == '\'') {
		advance(lx);
		start = lx->pos;
		for (;;) {
			if (peek(lx, 0) == -1)
				return error(lx, t, "unterminated string literal");
			if (peek(lx, 0) == '\'') {
				if (peek(lx, 1) == '\'') {
					advance(lx);
					advance(lx);
					continue;
				}
				break;
			}
			advance(lx);
		}
		t.kind = SL_TOK_STRING;
		t = finish(lx, t, start);
		advance(lx);
		return t;
	}
	if (is_digit(c) || (c == '.' && is_digit(peek(lx, 1)))) {
		bool dec = false;

		while (is_digit(peek(lx, 0)))
			advance(lx);
		if (peek(lx, 0) == '.' && is_digit(peek(lx, 1))) {
			dec = true;
			advance(lx);
			while (is_digit(peek(lx, 0)))
				advance(lx);
		} else if (peek(lx, 0) == '.' && !is_ident_start(peek(lx, 1))) {
			dec = true; /* "1." */
			advance(lx);
		}
		if ((peek(lx, 0) == 'e' || peek(lx, 0) == 'E') &&
		    (is_digit(peek(lx, 1)) ||
		     ((peek(lx, 1) == '+' || peek(lx, 1) == '-') && is_digit(peek(lx, 2))))) {
			dec = true;
			advance(lx);
			if (!is_digit(peek(lx, 0)))
				advance(lx);
			while (is_digit(peek(lx, 0)))
				advance(lx);
		}
		if (is_ident_start(peek(lx, 0)))
			return error(lx, t, "a number runs into a name (missing space?)");
		t.kind = dec ? SL_TOK_DECIMAL : SL_TOK_INTEGER;
		return finish(lx, t, start);
	}
	for (size_t i = 0; i < sizeof two_char_ops / sizeof two_char_ops[0]; i++) {
		if (c == two_char_ops[i][0] && peek(lx, 1) == two_char_ops[i][1]) {
			advance(lx);
			advance(lx);
			t.kind = SL_TOK_OP;
			return finish(lx, t, start);
		}
	}
	if (strchr("(),.;*+-/%=<>[]:", c)) {
		advance(lx);
		t.kind = SL_TOK_OP;
		return finish(lx, t, start);
	}
	return error(lx, t,
		     c == '"' ? "double quotes are not string quotes in Flink SQL: "
				"use 'text', or `name` for a name"
			      : "unexpected character");
}

bool sl_tok_is_kw(const struct sl_tok *tok, const char *kw)
{
	size_t n = strlen(kw);

	if (tok->kind != SL_TOK_IDENT || tok->quoted || tok->len != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char a = tok->text[i], b = kw[i];

		if (a >= 'a' && a <= 'z')
			a = (char)(a - 'a' + 'A');
		if (b >= 'a' && b <= 'z')
			b = (char)(b - 'a' + 'A');
		if (a != b)
			return false;
	}
	return true;
}

bool sl_tok_is_op(const struct sl_tok *tok, const char *op)
{
	return tok->kind == SL_TOK_OP && tok->len == strlen(op) && !memcmp(tok->text, op, tok->len);
}

size_t sl_tok_unquote(const struct sl_tok *tok, char *buf, size_t cap)
{
	size_t n = 0;

	for (uint32_t i = 0; i < tok->len; i++) {
		if (tok->text[i] == '\'' && i + 1 < tok->len && tok->text[i + 1] == '\'')
			i++;
		if (n + 1 < cap)
			buf[n] = tok->text[i];
		n++;
	}
	if (cap)
		buf[n < cap ? n : cap - 1] = 0;
	return n;
}

char *sl_tok_ident_dup(const struct sl_tok *tok)
{
	char *s = malloc(tok->len + 1);
	size_t n = 0;

	if (!s)
		return NULL;
	for (uint32_t i = 0; i < tok->len; i++) {
		if (tok->quoted && tok->text[i] == '`' && i + 1 < tok->len &&
		    tok->text[i + 1] == '`')
			i++;
		s[n++] = tok->text[i];
	}
	s[n] = 0;
	return s;
}

int sl_tok_describe(const struct sl_tok *t, char *buf, size_t cap)
{
	int n = 0;

	while (n < 40 && (uint32_t)n < t->len && t->text[n] != '\n' && t->text[n] != '\r')
		n++;
	switch (t->kind) {
	case SL_TOK_EOF:
		return snprintf(buf, cap, "end of input");
	case SL_TOK_ERROR:
		return snprintf(buf, cap, "%s", t->msg);
	case SL_TOK_STRING:
		return snprintf(buf, cap, "string '%.*s'", n, t->text);
	default:
		return snprintf(buf, cap,
				t->kind == SL_TOK_IDENT && t->quoted ? "`%.*s`" : "'%.*s'", n,
				t->text);
	}
}
