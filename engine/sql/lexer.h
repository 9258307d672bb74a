/*
 * lexer.h - tokens of the Flink SQL dialect, with the file:line:column of each, for the
 * parser (issue 3) and its error messages.
 *
 * The lexer reads a whole job file held in memory and hands out tokens one at a time; token
 * text points into that buffer (borrowed: keep the source alive while tokens are used).
 * Keywords are not told apart from identifiers here: the parser asks sl_tok_is_kw(), so
 * non-reserved words stay usable as column names, as in Flink.
 */
#ifndef SL_SQL_LEXER_H
#define SL_SQL_LEXER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sl_tok_kind {
	SL_TOK_EOF = 0,
	SL_TOK_IDENT,	/* name or keyword; `quoted` names have their backquotes removed */
	SL_TOK_STRING,	/* 'text' with '' for a quote; text is the raw inside (unescape it) */
	SL_TOK_INTEGER, /* 123 */
	SL_TOK_DECIMAL, /* 1.5, .5, 1e3, 1.5E-2 */
	SL_TOK_OP,	/* ( ) , . ; * + - / % = < > <= >= <> != || [ ] : */
	SL_TOK_ERROR,	/* unterminated string or comment, stray character: see msg */
};

struct sl_tok {
	enum sl_tok_kind kind;
	const char *text; /* into the source */
	uint32_t len;
	uint32_t line;	 /* 1-based */
	uint32_t col;	 /* 1-based, in bytes */
	bool quoted;	 /* IDENT written as `name` */
	const char *msg; /* SL_TOK_ERROR: what is wrong */
	/* the text inside the hint comment (one opening with a plus) just before this token, into
	 * the source, and where the comment starts; NULL when there was none */
	const char *hint;
	uint32_t hint_len, hint_line, hint_col;
};

struct sl_lexer {
	const char *src;
	size_t len;
	size_t pos;
	uint32_t line;
	uint32_t col;
};

/* Starts lexing src[0..len). */
void sl_lexer_init(struct sl_lexer *lx, const char *src, size_t len);
/* Returns the next token (skipping blanks and -- and block comments). After SL_TOK_EOF
 * or SL_TOK_ERROR it keeps returning the same kind. */
struct sl_tok sl_lexer_next(struct sl_lexer *lx);
/* True when tok is the identifier `kw` (ASCII case-insensitive, not backquoted). */
bool sl_tok_is_kw(const struct sl_tok *tok, const char *kw);
/* True when tok is the operator `op`. */
bool sl_tok_is_op(const struct sl_tok *tok, const char *op);
/* Copies a STRING token's value with '' turned into ' into buf (NUL-terminated). Returns the
 * value's length, or the length needed if it exceeds cap (like snprintf). */
size_t sl_tok_unquote(const struct sl_tok *tok, char *buf, size_t cap);

/* Writes how an error message names the token found: "end of input", "string 'abc'",
 * "`name`" or "'tok'" (at most 40 bytes of it, and only its first line, so messages stay one
 * line). SL_TOK_ERROR tokens are described by their msg instead. Returns the length. */
int sl_tok_describe(const struct sl_tok *tok, char *buf, size_t cap);

/* Returns a NUL-terminated copy of an IDENT token's name with `` inside backquoted names
 * undone, or NULL on ENOMEM. Caller frees. */
char *sl_tok_ident_dup(const struct sl_tok *tok);

#endif
