/*
 * cursor.c - the token cursor of the SQL parsers (see cursor.h).
 *
 * It exists so that ddl.c, query.c and expr.c word their errors alike and return them
 * alike: each used to carry its own copy of these helpers, and the copies had drifted
 * (expect_op returned 0/-errno in two parsers and bool in the third). Invariant: once
 * `failed` is set, err is never written again, so the message names the first place where
 * the input went wrong, not a caller's later complaint on the way out.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"

void sl_cur_init(struct sl_cur *c, const char *src, size_t len, uint32_t line, uint32_t col,
		 char *err, size_t errcap)
{
	memset(c, 0, sizeof(*c));
	c->err = err;
	c->errcap = errcap;
	if (errcap)
		err[0] = 0;
	sl_lexer_init(&c->lx, src, len);
	c->lx.line = line;
	c->lx.col = col;
	c->tok = sl_lexer_next(&c->lx);
}

void sl_cur_advance(struct sl_cur *c)
{
	c->prev = c->tok;
	c->tok = sl_lexer_next(&c->lx);
}

struct sl_tok sl_cur_peek(const struct sl_cur *c)
{
	struct sl_lexer copy = c->lx;

	return sl_lexer_next(&copy);
}

bool sl_cur_is_kw(const struct sl_cur *c, const char *kw)
{
	return sl_tok_is_kw(&c->tok, kw);
}

bool sl_cur_is_op(const struct sl_cur *c, const char *op)
{
	return sl_tok_is_op(&c->tok, op);
}

bool sl_cur_accept_kw(struct sl_cur *c, const char *kw)
{
	if (!sl_cur_is_kw(c, kw))
		return false;
	sl_cur_advance(c);
	return true;
}

bool sl_cur_accept_op(struct sl_cur *c, const char *op)
{
	if (!sl_cur_is_op(c, op))
		return false;
	sl_cur_advance(c);
	return true;
}

int sl_cur_expect_kw(struct sl_cur *c, const char *kw, const char *what)
{
	return sl_cur_accept_kw(c, kw) ? 0 : sl_cur_expected(c, what);
}

int sl_cur_expect_op(struct sl_cur *c, const char *op, const char *what)
{
	return sl_cur_accept_op(c, op) ? 0 : sl_cur_expected(c, what);
}

int sl_cur_fail_at(struct sl_cur *c, uint32_t line, uint32_t col, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->failed)
		return -EINVAL;
	c->failed = true;
	n = snprintf(c->err, c->errcap, "%u:%u: ", line, col);
	if (n >= 0 && (size_t)n < c->errcap) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errcap - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int sl_cur_expected(struct sl_cur *c, const char *what)
{
	const struct sl_tok *t = &c->tok;
	char found[96];

	if (t->kind == SL_TOK_ERROR)
		return sl_cur_fail_at(c, t->line, t->col, "%s", t->msg);
	sl_tok_describe(t, found, sizeof found);
	return sl_cur_fail_at(c, t->line, t->col, "expected %s, found %s", what, found);
}

int sl_cur_nomem(struct sl_cur *c)
{
	if (!c->failed) {
		c->failed = true;
		snprintf(c->err, c->errcap, "out of memory");
	}
	return -ENOMEM;
}

char *sl_cur_ident_dup(struct sl_cur *c, const struct sl_tok *t)
{
	char *s = sl_tok_ident_dup(t);

	if (!s)
		sl_cur_nomem(c);
	return s;
}

char *sl_cur_text_dup(struct sl_cur *c, const struct sl_tok *t)
{
	char *s = malloc(t->len + 1);

	if (!s) {
		sl_cur_nomem(c);
		return NULL;
	}
	if (t->kind == SL_TOK_STRING) {
		sl_tok_unquote(t, s, t->len + 1);
	} else {
		memcpy(s, t->text, t->len);
		s[t->len] = 0;
	}
	return s;
}

void *sl_cur_append(struct sl_cur *c, void **arr, uint32_t *n, size_t size)
{
	char *a = realloc(*arr, (*n + 1) * size);

	if (!a) {
		sl_cur_nomem(c);
		return NULL;
	}
	*arr = a;
	memset(a + *n * size, 0, size);
	return a + (*n)++ * size;
}
