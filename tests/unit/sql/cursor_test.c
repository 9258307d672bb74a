/*
 * cursor_test.c - the token cursor the SQL parsers share: its one return convention
 * (actions 0 / -errno, predicates bool), the wording and place of its errors, the first
 * error winning, look-ahead without consuming, and the copies it makes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "test.h"

static char err[256];

static void expect_err(const char *want)
{
	if (strcmp(err, want)) {
		fprintf(stderr, "error '%s', want '%s'\n", err, want);
		exit(T_EXIT_FAIL);
	}
}

static void test_expect(void)
{
	static const char src[] = "CREATE TABLE t (\n  a INT)";
	struct sl_cur c;
	struct sl_tok next;

	sl_cur_init(&c, src, strlen(src), 1, 1, err, sizeof err);
	T_ASSERT(err[0] == 0 && !c.failed);
	T_ASSERT(sl_cur_is_kw(&c, "create") && !sl_cur_is_op(&c, "("));
	next = sl_cur_peek(&c);
	T_ASSERT(sl_tok_is_kw(&next, "TABLE") && sl_cur_is_kw(&c, "CREATE"));
	T_ASSERT_EQ_I64(sl_cur_expect_kw(&c, "CREATE", "CREATE"), 0);
	T_ASSERT(sl_tok_is_kw(&c.prev, "CREATE"));
	T_ASSERT(!sl_cur_accept_kw(&c, "VIEW") && sl_cur_accept_kw(&c, "TABLE"));
	T_ASSERT(!sl_cur_accept_op(&c, "(") && c.tok.kind == SL_TOK_IDENT);
	sl_cur_advance(&c);
	T_ASSERT(sl_cur_accept_op(&c, "("));
	T_ASSERT_EQ_I64(c.tok.line, 2);
	T_ASSERT_EQ_I64(c.tok.col, 3);
	/* a miss consumes nothing and says where and what */
	T_ASSERT_EQ_I64(sl_cur_expect_op(&c, ")", "')' after the columns"), -EINVAL);
	T_ASSERT(c.failed && sl_tok_is_kw(&c.tok, "a"));
	expect_err("2:3: expected ')' after the columns, found 'a'");
	/* the first error wins: callers unwinding cannot overwrite it */
	T_ASSERT_EQ_I64(sl_cur_expect_kw(&c, "NOT", "NOT"), -EINVAL);
	T_ASSERT_EQ_I64(sl_cur_fail_at(&c, 9, 9, "later"), -EINVAL);
	T_ASSERT_EQ_I64(sl_cur_nomem(&c), -ENOMEM);
	expect_err("2:3: expected ')' after the columns, found 'a'");
}

/* The token found is named as the other messages name it; lexer errors say their own. */
static void test_found(void)
{
	struct sl_cur c;

	sl_cur_init(&c, "", 0, 1, 1, err, sizeof err);
	T_ASSERT_EQ_I64(sl_cur_expected(&c, "a statement"), -EINVAL);
	expect_err("1:1: expected a statement, found end of input");
	sl_cur_init(&c, "x 'it''s'", 9, 1, 1, err, sizeof err);
	sl_cur_advance(&c);
	T_ASSERT_EQ_I64(sl_cur_expected(&c, "a name"), -EINVAL);
	expect_err("1:3: expected a name, found string 'it''s'");
	sl_cur_init(&c, "a \"b\"", 5, 1, 1, err, sizeof err);
	sl_cur_advance(&c);
	T_ASSERT_EQ_I64(sl_cur_expect_op(&c, ",", "','"), -EINVAL);
	expect_err("1:3: double quotes are not string quotes in Flink SQL: use 'text', or `name` "
		   "for a name");
	/* a cursor can start inside a file: positions count from there */
	sl_cur_init(&c, "SELECT\n1 +", 10, 7, 12, err, sizeof err);
	T_ASSERT_EQ_I64(c.tok.line, 7);
	T_ASSERT_EQ_I64(c.tok.col, 12);
	sl_cur_advance(&c);
	T_ASSERT_EQ_I64(sl_cur_fail_at(&c, c.tok.line, c.tok.col, "%s %d", "n", 1), -EINVAL);
	expect_err("8:1: n 1");
}

static void test_copies(void)
{
	static const char src[] = "`a``b` 'x''y' 12.5";
	struct sl_cur c;
	uint32_t *v = NULL, n = 0;
	char *s;

	sl_cur_init(&c, src, strlen(src), 1, 1, err, sizeof err);
	s = sl_cur_ident_dup(&c, &c.tok);
	T_ASSERT(s && !strcmp(s, "a`b"));
	free(s);
	sl_cur_advance(&c);
	s = sl_cur_text_dup(&c, &c.tok);
	T_ASSERT(s && !strcmp(s, "x'y"));
	free(s);
	sl_cur_advance(&c);
	s = sl_cur_text_dup(&c, &c.tok);
	T_ASSERT(s && !strcmp(s, "12.5"));
	free(s);
	for (uint32_t i = 0; i < 5; i++) {
		uint32_t *slot = sl_cur_append(&c, (void **)&v, &n, sizeof *slot);

		T_ASSERT(slot && *slot == 0 && n == i + 1);
		*slot = i * 10;
	}
	T_ASSERT(v[0] == 0 && v[4] == 40 && !c.failed);
	free(v);
}

int main(void)
{
	test_expect();
	test_found();
	test_copies();
	return T_EXIT_PASS;
}
