/*
 * cursor.h - the token cursor the three SQL parsers read through (ddl.c for job files,
 * query.c for statements, expr.c for expressions): one current token over sl_lexer, the
 * token consumed last, look-ahead, and the parse's first error.
 *
 * One convention for every parser (STYLE: Errors): actions return 0 or -errno (-EINVAL
 * for a syntax error, -ENOMEM); predicates (sl_cur_is_*, sl_cur_accept_*) return bool and
 * never fail; the _dup and append helpers return a pointer or NULL, the reason written to
 * the cursor. A message is one line "LINE:COL: cause" naming the token where parsing
 * stopped ("expected <what>, found <token>"); the first error wins and later ones are
 * dropped, so callers unwinding past a failure cannot overwrite it.
 *
 * The query parser hands its cursor to the expression parser and takes it back at the first
 * token an expression cannot continue with, so both read one token stream and one error.
 * The lexer is a plain value: copy c->lx for look-ahead deeper than sl_cur_peek().
 *
 * Plan time only, one thread; nothing here allocates except the _dup and append helpers.
 */
#ifndef SL_SQL_CURSOR_H
#define SL_SQL_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lexer.h"

struct sl_query;

struct sl_cur {
	struct sl_lexer lx; /* positioned just after tok */
	struct sl_tok tok;  /* the current token, not yet consumed */
	struct sl_tok prev; /* the token consumed last (where a statement's span ends) */
	char *err;	    /* the first error, "LINE:COL: cause", NUL-terminated */
	size_t errcap;
	bool failed; /* err holds the first error; later ones are dropped */
	/* Set by the query parser for the expression parser's IN (SELECT ...) and EXISTS
	 * (SELECT ...): parses the query at tok (SELECT) up to its ')', and returns it (the
	 * caller frees it with sl_query_destroy) or NULL with the error recorded. NULL where
	 * no subquery may stand (the DDL's expressions). */
	struct sl_query *(*subquery)(struct sl_cur *c, void *arg);
	void *subquery_arg;
};

/* Starts reading src[0..len), whose first byte sits at line:col, with tok on its first
 * token; err[0..errcap) receives the first error (emptied here). Borrows src and err for
 * the cursor's life. */
void sl_cur_init(struct sl_cur *c, const char *src, size_t len, uint32_t line, uint32_t col,
		 char *err, size_t errcap);

/* Consumes tok: it becomes prev, and the next token becomes tok. */
void sl_cur_advance(struct sl_cur *c);

/* Returns the token after tok without consuming anything. */
struct sl_tok sl_cur_peek(const struct sl_cur *c);

/* True when tok is the keyword kw (ASCII case-insensitive, not backquoted). */
bool sl_cur_is_kw(const struct sl_cur *c, const char *kw);

/* True when tok is the operator op. */
bool sl_cur_is_op(const struct sl_cur *c, const char *op);

/* Consumes tok when it is the keyword kw (the operator op); returns whether it did. */
bool sl_cur_accept_kw(struct sl_cur *c, const char *kw);
bool sl_cur_accept_op(struct sl_cur *c, const char *op);

/* Consumes tok when it is the keyword kw (the operator op) and returns 0; otherwise
 * returns -EINVAL with "expected <what>, found <tok>" at tok. */
int sl_cur_expect_kw(struct sl_cur *c, const char *kw, const char *what);
int sl_cur_expect_op(struct sl_cur *c, const char *op, const char *what);

/* Records "expected <what>, found <tok>" at tok (a lexer error token reports its own
 * message instead) and returns -EINVAL. */
int sl_cur_expected(struct sl_cur *c, const char *what);

/* Records "LINE:COL: <fmt ...>" and returns -EINVAL. */
int sl_cur_fail_at(struct sl_cur *c, uint32_t line, uint32_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Records "out of memory" and returns -ENOMEM. */
int sl_cur_nomem(struct sl_cur *c);

/* Returns a NUL-terminated copy of an IDENT token's name (see sl_tok_ident_dup()), or NULL
 * with ENOMEM recorded. Caller frees. */
char *sl_cur_ident_dup(struct sl_cur *c, const struct sl_tok *t);

/* Returns a NUL-terminated copy of a token's text, a STRING's with '' undone, or NULL with
 * ENOMEM recorded. Caller frees. */
char *sl_cur_text_dup(struct sl_cur *c, const struct sl_tok *t);

/* Grows *arr (of *n elements of `size` bytes) by one zeroed element and returns it, or
 * NULL with ENOMEM recorded (*arr and *n unchanged). Caller frees *arr. One realloc per
 * element: lists in hand-written SQL are short. */
void *sl_cur_append(struct sl_cur *c, void **arr, uint32_t *n, size_t size);

#endif
