/*
 * lexer_test.c - Flink SQL tokens with their line:column: a job with the PyFlink lesson's constructs,
 * comments, quoting, numbers, operators, and each lexical error with its position.
 */
#include <string.h>

#include "lexer.h"
#include "test.h"

struct want {
	enum sl_tok_kind kind;
	const char *text;
	uint32_t line, col;
};

static void expect(const char *src, const struct want *w, size_t n)
{
	struct sl_lexer lx;

	sl_lexer_init(&lx, src, strlen(src));
	for (size_t i = 0; i < n; i++) {
		struct sl_tok t = sl_lexer_next(&lx);

		if (t.kind != w[i].kind || t.len != strlen(w[i].text) ||
		    memcmp(t.text, w[i].text, t.len) || t.line != w[i].line || t.col != w[i].col) {
			fprintf(stderr, "token %zu: got kind %d '%.*s' at %u:%u, want kind %d '%s' "
					"at %u:%u%s%s\n",
				i, t.kind, (int)t.len, t.text, t.line, t.col, w[i].kind, w[i].text,
				w[i].line, w[i].col, t.msg ? " msg: " : "", t.msg ? t.msg : "");
			exit(T_EXIT_FAIL);
		}
	}
}

static void test_statement(void)
{
	const char *src = "-- a comment\n"
			  "CREATE TABLE `order` (\n"
			  "  total DECIMAL(10,2), /* inline\n comment */ ts AS TO_TIMESTAMP_LTZ(p.ts_ms, 3),\n"
			  "  WATERMARK FOR ts AS ts - INTERVAL '5' SECONDS\n"
			  ") WITH ('connector' = 'filesystem');";
	const struct want w[] = {
		{ SL_TOK_IDENT, "CREATE", 2, 1 },   { SL_TOK_IDENT, "TABLE", 2, 8 },
		{ SL_TOK_IDENT, "order", 2, 14 },   { SL_TOK_OP, "(", 2, 22 },
		{ SL_TOK_IDENT, "total", 3, 3 },    { SL_TOK_IDENT, "DECIMAL", 3, 9 },
		{ SL_TOK_OP, "(", 3, 16 },          { SL_TOK_INTEGER, "10", 3, 17 },
		{ SL_TOK_OP, ",", 3, 19 },          { SL_TOK_INTEGER, "2", 3, 20 },
		{ SL_TOK_OP, ")", 3, 21 },          { SL_TOK_OP, ",", 3, 22 },
		{ SL_TOK_IDENT, "ts", 4, 13 },      { SL_TOK_IDENT, "AS", 4, 16 },
		{ SL_TOK_IDENT, "TO_TIMESTAMP_LTZ", 4, 19 }, { SL_TOK_OP, "(", 4, 35 },
		{ SL_TOK_IDENT, "p", 4, 36 },       { SL_TOK_OP, ".", 4, 37 },
		{ SL_TOK_IDENT, "ts_ms", 4, 38 },   { SL_TOK_OP, ",", 4, 43 },
		{ SL_TOK_INTEGER, "3", 4, 45 },     { SL_TOK_OP, ")", 4, 46 },
		{ SL_TOK_OP, ",", 4, 47 },          { SL_TOK_IDENT, "WATERMARK", 5, 3 },
		{ SL_TOK_IDENT, "FOR", 5, 13 },     { SL_TOK_IDENT, "ts", 5, 17 },
		{ SL_TOK_IDENT, "AS", 5, 20 },      { SL_TOK_IDENT, "ts", 5, 23 },
		{ SL_TOK_OP, "-", 5, 26 },          { SL_TOK_IDENT, "INTERVAL", 5, 28 },
		{ SL_TOK_STRING, "5", 5, 37 },      { SL_TOK_IDENT, "SECONDS", 5, 41 },
		{ SL_TOK_OP, ")", 6, 1 },           { SL_TOK_IDENT, "WITH", 6, 3 },
		{ SL_TOK_OP, "(", 6, 8 },           { SL_TOK_STRING, "connector", 6, 9 },
		{ SL_TOK_OP, "=", 6, 21 },          { SL_TOK_STRING, "filesystem", 6, 23 },
		{ SL_TOK_OP, ")", 6, 35 },          { SL_TOK_OP, ";", 6, 36 },
		{ SL_TOK_EOF, "", 6, 37 },
	};

	expect(src, w, sizeof w / sizeof w[0]);
}

static void test_numbers_and_ops(void)
{
	const char *src = "1 1.5 .5 2e3 7E-2 1. a<=b>=c<>d!=e||f[1]:x%2";
	const struct want w[] = {
		{ SL_TOK_INTEGER, "1", 1, 1 },  { SL_TOK_DECIMAL, "1.5", 1, 3 },
		{ SL_TOK_DECIMAL, ".5", 1, 7 }, { SL_TOK_DECIMAL, "2e3", 1, 10 },
		{ SL_TOK_DECIMAL, "7E-2", 1, 14 }, { SL_TOK_DECIMAL, "1.", 1, 19 },
		{ SL_TOK_IDENT, "a", 1, 22 },   { SL_TOK_OP, "<=", 1, 23 },
		{ SL_TOK_IDENT, "b", 1, 25 },   { SL_TOK_OP, ">=", 1, 26 },
		{ SL_TOK_IDENT, "c", 1, 28 },   { SL_TOK_OP, "<>", 1, 29 },
		{ SL_TOK_IDENT, "d", 1, 31 },   { SL_TOK_OP, "!=", 1, 32 },
		{ SL_TOK_IDENT, "e", 1, 34 },   { SL_TOK_OP, "||", 1, 35 },
		{ SL_TOK_IDENT, "f", 1, 37 },   { SL_TOK_OP, "[", 1, 38 },
		{ SL_TOK_INTEGER, "1", 1, 39 }, { SL_TOK_OP, "]", 1, 40 },
		{ SL_TOK_OP, ":", 1, 41 },      { SL_TOK_IDENT, "x", 1, 42 },
		{ SL_TOK_OP, "%", 1, 43 },      { SL_TOK_INTEGER, "2", 1, 44 },
		{ SL_TOK_EOF, "", 1, 45 },
	};

	expect(src, w, sizeof w / sizeof w[0]);
}

static void test_strings_and_keywords(void)
{
	struct sl_lexer lx;
	struct sl_tok t;
	char buf[32];
	const char *src = "'it''s' select `a``b` Select";

	sl_lexer_init(&lx, src, strlen(src));
	t = sl_lexer_next(&lx);
	T_ASSERT(t.kind == SL_TOK_STRING);
	T_ASSERT_EQ_I64(sl_tok_unquote(&t, buf, sizeof buf), 4);
	T_ASSERT(!strcmp(buf, "it's"));
	T_ASSERT_EQ_I64(sl_tok_unquote(&t, buf, 3), 4); /* cut, still NUL-terminated */
	T_ASSERT(!strcmp(buf, "it"));
	t = sl_lexer_next(&lx);
	T_ASSERT(sl_tok_is_kw(&t, "SELECT") && sl_tok_is_kw(&t, "select"));
	T_ASSERT(!sl_tok_is_kw(&t, "SELECTS"));
	t = sl_lexer_next(&lx);
	T_ASSERT(t.kind == SL_TOK_IDENT && t.quoted && t.len == 4);
	T_ASSERT(!sl_tok_is_kw(&t, "a``b")); /* a quoted name is never a keyword */
	t = sl_lexer_next(&lx);
	T_ASSERT(sl_tok_is_kw(&t, "SELECT"));
	T_ASSERT(sl_lexer_next(&lx).kind == SL_TOK_EOF);
	T_ASSERT(sl_lexer_next(&lx).kind == SL_TOK_EOF);
}

static void expect_error(const char *src, uint32_t line, uint32_t col, const char *msg_part)
{
	struct sl_lexer lx;
	struct sl_tok t;

	sl_lexer_init(&lx, src, strlen(src));
	do
		t = sl_lexer_next(&lx);
	while (t.kind != SL_TOK_ERROR && t.kind != SL_TOK_EOF);
	if (t.kind != SL_TOK_ERROR || t.line != line || t.col != col || !strstr(t.msg, msg_part)) {
		fprintf(stderr, "'%s': got kind %d at %u:%u (%s), want error at %u:%u (%s)\n", src,
			t.kind, t.line, t.col, t.msg ? t.msg : "-", line, col, msg_part);
		exit(T_EXIT_FAIL);
	}
	/* sticky */
	T_ASSERT(sl_lexer_next(&lx).kind == SL_TOK_EOF);
}

int main(void)
{
	test_statement();
	test_numbers_and_ops();
	test_strings_and_keywords();
	expect_error("SELECT 'abc\nFROM t", 1, 8, "unterminated string");
	expect_error("SELECT a /* never\n closed", 1, 10, "unterminated /*");
	expect_error("SELECT `a", 1, 8, "unterminated `quoted");
	expect_error("SELECT \"a\" FROM t", 1, 8, "double quotes");
	expect_error("x = 12abc", 1, 5, "number runs into a name");
	expect_error("a\n  # b", 2, 3, "unexpected character");
	return T_EXIT_PASS;
}
