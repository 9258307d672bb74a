/*
 * expr_test.c - SQL expressions to trees: precedence through the fully parenthesised
 * printer, every construct, the PyFlink lesson's expressions, where each node sits, where a parse
 * stops inside a longer statement, and each error with its exact line:column.
 */
#include <string.h>

#include "expr.h"
#include "test.h"

static char err[256];

static struct sl_expr *parse(const char *src)
{
	struct sl_expr *e = sl_expr_parse_str(src, strlen(src), err, sizeof err);

	if (!e) {
		fprintf(stderr, "parse of '%s' failed: %s\n", src, err);
		exit(T_EXIT_FAIL);
	}
	return e;
}

/* src parses and prints as want. */
static void expect_print(const char *src, const char *want)
{
	struct sl_expr *e = parse(src);
	char buf[512];
	size_t n = sl_expr_print(e, buf, sizeof buf);

	if (strcmp(buf, want) || n != strlen(want)) {
		fprintf(stderr, "'%s' printed as '%s' (%zu), want '%s'\n", src, buf, n, want);
		exit(T_EXIT_FAIL);
	}
	sl_expr_destroy(e);
}

static void expect_error(const char *src, const char *want)
{
	struct sl_expr *e = sl_expr_parse_str(src, strlen(src), err, sizeof err);

	if (e || strcmp(err, want)) {
		fprintf(stderr, "'%s' gave '%s', want error '%s'\n", src, e ? "a tree" : err,
			want);
		exit(T_EXIT_FAIL);
	}
}

static void test_precedence(void)
{
	expect_print("a + b * c = d OR NOT e AND f", "(((a + (b * c)) = d) OR ((NOT e) AND f))");
	expect_print("a OR b OR c", "((a OR b) OR c)");
	expect_print("a - b - c", "((a - b) - c)");
	expect_print("a / b % c * d", "(((a / b) % c) * d)");
	expect_print("-a * b", "((-a) * b)");
	expect_print("- - a", "(-(-a))");
	expect_print("+a", "(+a)");
	expect_print("(a + b) * c", "((a + b) * c)");
	expect_print("a || b + c", "(a || (b + c))");
	expect_print("a || b = c || d", "((a || b) = (c || d))");
	expect_print("NOT a = b", "(NOT (a = b))");
	expect_print("NOT NOT a", "(NOT (NOT a))");
	expect_print("a < b AND c >= d OR e <> f AND g != h",
		     "(((a < b) AND (c >= d)) OR ((e <> f) AND (g <> h)))");
	expect_print("a <= b AND c > d", "((a <= b) AND (c > d))");
	expect_print("a = b = c", "((a = b) = c)");
}

static void test_predicates(void)
{
	expect_print("a IS NULL", "(a IS NULL)");
	expect_print("a IS NOT NULL AND b", "((a IS NOT NULL) AND b)");
	expect_print("x > 1 IS TRUE", "((x > 1) IS TRUE)");
	expect_print("a IS NOT FALSE", "(a IS NOT FALSE)");
	expect_print("a BETWEEN 1 AND 2 AND b", "((a BETWEEN 1 AND 2) AND b)");
	expect_print("a NOT BETWEEN b + 1 AND c * 2", "(a NOT BETWEEN (b + 1) AND (c * 2))");
	expect_print("a IN (1, 2 + 3)", "(a IN (1, (2 + 3)))");
	expect_print("a NOT IN ('x')", "(a NOT IN ('x'))");
	expect_print("name LIKE 'a%' OR name NOT LIKE '%b'",
		     "((name LIKE 'a%') OR (name NOT LIKE '%b'))");
	expect_print("NOT a IN (1)", "(NOT (a IN (1)))");
}

static void test_literals(void)
{
	struct sl_expr *e;

	expect_print("42", "42");
	expect_print("1.50", "1.50");
	expect_print(".5 + 1e3", "(.5 + 1e3)");
	expect_print("'it''s'", "'it''s'");
	expect_print("TRUE OR FALSE OR NULL", "((TRUE OR FALSE) OR NULL)");
	expect_print("TIMESTAMP '2024-01-01 00:00:00'", "TIMESTAMP '2024-01-01 00:00:00'");
	expect_print("DATE '2024-01-01'", "DATE '2024-01-01'");
	expect_print("INTERVAL '1' HOURS", "INTERVAL '1' HOUR");
	expect_print("INTERVAL '2' DAY", "INTERVAL '2' DAY");

	e = parse("9223372036854775807");
	T_ASSERT(e->kind == SL_EXPR_INT);
	T_ASSERT_EQ_I64(e->ival, INT64_MAX);
	sl_expr_destroy(e);
	e = parse("'it''s'");
	T_ASSERT(e->kind == SL_EXPR_STRING && !strcmp(e->text, "it's"));
	sl_expr_destroy(e);
	e = parse("INTERVAL '5' MINUTES");
	T_ASSERT(e->kind == SL_EXPR_INTERVAL && e->unit == SL_EXPR_UNIT_MINUTE);
	T_ASSERT_EQ_I64(e->ival, 300000);
	sl_expr_destroy(e);
	e = parse("INTERVAL '-3' SECOND");
	T_ASSERT_EQ_I64(e->ival, -3000);
	sl_expr_destroy(e);
	e = parse("INTERVAL '0.005' SECOND");
	T_ASSERT_EQ_I64(e->ival, 5);
	sl_expr_destroy(e);
	e = parse("INTERVAL '1.5' MINUTES");
	T_ASSERT_EQ_I64(e->ival, 90000);
	sl_expr_destroy(e);
	e = parse("INTERVAL '99999999999' DAYS");
	T_ASSERT_EQ_I64(e->ival, 99999999999LL * 86400000);
	sl_expr_destroy(e);
	expect_print("INTERVAL '0.005' SECOND", "INTERVAL '0.005' SECOND");
	/* TIMESTAMP and DATE not followed by a string are column names. */
	expect_print("timestamp + date", "(timestamp + date)");
}

static void test_names_and_calls(void)
{
	struct sl_expr *e;

	expect_print("a.b.c", "a.b.c");
	expect_print("`select`.`from` + `a``b c` + `x1`", "((`select`.`from` + `a``b c`) + x1)");
	expect_print("`null` IS NULL", "(`null` IS NULL)");
	expect_print("COUNT(*)", "COUNT(*)");
	expect_print("count(DISTINCT user_id)", "count(DISTINCT user_id)");
	expect_print("NOW()", "NOW()");
	expect_print("`my udf`(1)", "`my udf`(1)");
	expect_print("SUM(a * 2) / COUNT(*)", "(SUM((a * 2)) / COUNT(*))");
	expect_print("f(g(x), 'y', NULL)", "f(g(x), 'y', NULL)");
	expect_print("CASE WHEN a > 1 THEN 'big' WHEN a > 0 THEN 'small' ELSE 'none' END",
		     "CASE WHEN (a > 1) THEN 'big' WHEN (a > 0) THEN 'small' ELSE 'none' END");
	expect_print("CASE op WHEN 'c' THEN 1 END + 1", "(CASE op WHEN 'c' THEN 1 END + 1)");
	expect_print("CAST(a AS BIGINT)", "CAST(a AS BIGINT)");
	expect_print("CAST(a AS DECIMAL(10, 2))", "CAST(a AS DECIMAL(10, 2))");
	expect_print("CAST(a AS DECIMAL)", "CAST(a AS DECIMAL(10, 0))");
	expect_print("CAST(a AS VARCHAR(20))", "CAST(a AS VARCHAR(20))");
	expect_print("CAST(a AS TIMESTAMP(3))", "CAST(a AS TIMESTAMP(3))");
	expect_print("CAST(a AS TIMESTAMP_LTZ(3))", "CAST(a AS TIMESTAMP_LTZ(3))");
	expect_print("CAST(a AS TIMESTAMP(3) WITH LOCAL TIME ZONE)",
		     "CAST(a AS TIMESTAMP_LTZ(3))");
	expect_print("CAST(a AS BOOLEAN) OR CAST(b AS INT) = CAST(c AS DOUBLE)",
		     "(CAST(a AS BOOLEAN) OR (CAST(b AS INT) = CAST(c AS DOUBLE)))");
	expect_print("CAST(a AS FLOAT) || CAST(b AS STRING) || CAST(c AS DATE)",
		     "((CAST(a AS FLOAT) || CAST(b AS STRING)) || CAST(c AS DATE))");
	expect_print("ROW_NUMBER() OVER (PARTITION BY product ORDER BY event_time DESC) = 1",
		     "(ROW_NUMBER() OVER (PARTITION BY product ORDER BY event_time DESC) = 1)");
	expect_print("ROW_NUMBER() OVER (PARTITION BY a, b.c ORDER BY t ASC, u DESC)",
		     "ROW_NUMBER() OVER (PARTITION BY a, b.c ORDER BY t, u DESC)");
	expect_print("ROW_NUMBER() OVER (ORDER BY t)", "ROW_NUMBER() OVER (ORDER BY t)");
	expect_print("f(x) OVER ()", "f(x) OVER ()");
	expect_print("SUM(x) OVER (PARTITION BY k ORDER BY t ROWS BETWEEN 2 PRECEDING AND CURRENT "
		     "ROW)",
		     "SUM(x) OVER (PARTITION BY k ORDER BY t ROWS BETWEEN 2 PRECEDING AND CURRENT "
		     "ROW)");
	expect_print("SUM(x) OVER (ORDER BY t RANGE INTERVAL '2' SECOND PRECEDING)",
		     "SUM(x) OVER (ORDER BY t RANGE BETWEEN INTERVAL '2000' MILLISECOND PRECEDING "
		     "AND CURRENT ROW)");
	expect_print("SUM(x) OVER (ORDER BY t ROWS UNBOUNDED PRECEDING)",
		     "SUM(x) OVER (ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)");
	expect_print("SUM(x) OVER w", "SUM(x) OVER w");
	expect_print("count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000)",
		     "count(DISTINCT bidder) FILTER (WHERE ((price >= 10000) AND "
		     "(price < 1000000)))");
	expect_print("FLOOR(ts TO HOUR)", "FLOOR(ts TO HOUR)");
	expect_print("CEIL(ts TO MINUTES)", "CEIL(ts TO MINUTE)");
	expect_print("FLOOR(x / 2)", "FLOOR((x / 2))");

	e = parse("COUNT(DISTINCT x)");
	T_ASSERT(e->kind == SL_EXPR_CALL && e->distinct && e->nargs == 1);
	sl_expr_destroy(e);
	e = parse("CAST(x AS DECIMAL(38, 4))");
	T_ASSERT(e->type.kind == SL_DDL_DECIMAL);
	T_ASSERT_EQ_I64(e->type.precision, 38);
	T_ASSERT_EQ_I64(e->type.scale, 4);
	sl_expr_destroy(e);
}

static void test_lesson_exprs(void)
{
	expect_print("TO_TIMESTAMP_LTZ(payload.ts_ms, 3)", "TO_TIMESTAMP_LTZ(payload.ts_ms, 3)");
	expect_print("event_time - INTERVAL '5' SECOND", "(event_time - INTERVAL '5' SECOND)");
	expect_print("payload.op IN ('c', 'u', 'r')", "(payload.op IN ('c', 'u', 'r'))");
	expect_print("TUMBLE(event_time, INTERVAL '5' MINUTES)",
		     "TUMBLE(event_time, INTERVAL '5' MINUTE)");
	expect_print("TUMBLE(TABLE orders, DESCRIPTOR(event_time), INTERVAL '5' MINUTES)",
		     "TUMBLE(TABLE orders, DESCRIPTOR(event_time), INTERVAL '5' MINUTE)");
	expect_print("HOP(TABLE db.orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE, "
		     "INTERVAL '10' MINUTES)",
		     "HOP(TABLE db.orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE, "
		     "INTERVAL '10' MINUTE)");
}

/* Every node carries the line:col of its first token, operators of the operator. */
static void test_positions(void)
{
	static const char src[] = "a +\n  f(b.c,\n    'x') * 2 IS NULL";
	struct sl_expr *e = parse(src), *add, *mul, *call;

	T_ASSERT(e->kind == SL_EXPR_IS);
	T_ASSERT_EQ_I64(e->line, 3);
	T_ASSERT_EQ_I64(e->col, 14);
	add = e->args[0];
	T_ASSERT(add->op == SL_EXPR_OP_ADD);
	T_ASSERT_EQ_I64(add->line, 1);
	T_ASSERT_EQ_I64(add->col, 3);
	T_ASSERT_EQ_I64(add->args[0]->line, 1);
	T_ASSERT_EQ_I64(add->args[0]->col, 1);
	mul = add->args[1];
	T_ASSERT(mul->op == SL_EXPR_OP_MUL);
	T_ASSERT_EQ_I64(mul->line, 3);
	T_ASSERT_EQ_I64(mul->col, 10);
	call = mul->args[0];
	T_ASSERT(call->kind == SL_EXPR_CALL && !strcmp(call->text, "f"));
	T_ASSERT_EQ_I64(call->line, 2);
	T_ASSERT_EQ_I64(call->col, 3);
	T_ASSERT(call->args[0]->kind == SL_EXPR_COLUMN && call->args[0]->npath == 2);
	T_ASSERT_EQ_I64(call->args[0]->col, 5);
	T_ASSERT_EQ_I64(call->args[1]->line, 3);
	T_ASSERT_EQ_I64(call->args[1]->col, 5);
	T_ASSERT_EQ_I64(mul->args[1]->col, 12);
	sl_expr_destroy(e);
}

/* The SELECT parser calls in between commas: each parse stops at the token after it. */
static void test_stops(void)
{
	static const char src[] = "SELECT a + 1 AS x, COUNT(*) cnt, b FROM t WHERE c;";
	struct sl_cur c;
	struct sl_expr *e;
	char buf[64];

	sl_cur_init(&c, src, strlen(src), 1, 1, err, sizeof err);
	T_ASSERT(sl_cur_accept_kw(&c, "SELECT"));
	e = sl_expr_parse(&c);
	T_ASSERT(e && sl_cur_is_kw(&c, "AS"));
	sl_expr_print(e, buf, sizeof buf);
	T_ASSERT(!strcmp(buf, "(a + 1)"));
	sl_expr_destroy(e);
	sl_cur_advance(&c); /* AS */
	sl_cur_advance(&c); /* x */
	T_ASSERT(sl_cur_accept_op(&c, ","));
	e = sl_expr_parse(&c);
	T_ASSERT(e && c.tok.kind == SL_TOK_IDENT && c.tok.len == 3 &&
		 !memcmp(c.tok.text, "cnt", 3));
	sl_expr_destroy(e);
	sl_cur_advance(&c); /* cnt */
	T_ASSERT(sl_cur_accept_op(&c, ","));
	e = sl_expr_parse(&c);
	T_ASSERT(e && sl_cur_is_kw(&c, "FROM"));
	T_ASSERT_EQ_I64(c.tok.col, 36);
	sl_expr_destroy(e);
	sl_cur_advance(&c); /* FROM */
	sl_cur_advance(&c); /* t */
	T_ASSERT(sl_cur_accept_kw(&c, "WHERE"));
	e = sl_expr_parse(&c);
	T_ASSERT(e && sl_cur_is_op(&c, ";"));
	sl_expr_destroy(e);
}

/* A whole SELECT list from the legacy group-window case, read the way the query parser will. */
static void test_select_list(void)
{
	static const char src[] =
		"SELECT name, TUMBLE_START(rowtime, INTERVAL '5' SECOND) AS window_start, "
		"TUMBLE_END(rowtime, INTERVAL '0.005' SECOND) AS window_end, COUNT(*), "
		"SUM(a_int), COUNT(DISTINCT `comment`), amount * r.rate FROM source_t";
	static const char *const want[] = {
		"name", "TUMBLE_START(rowtime, INTERVAL '5' SECOND)",
		"TUMBLE_END(rowtime, INTERVAL '0.005' SECOND)", "COUNT(*)", "SUM(a_int)",
		"COUNT(DISTINCT comment)", "(amount * r.rate)",
	};
	struct sl_cur c;
	char buf[128];
	size_t i = 0;

	sl_cur_init(&c, src, strlen(src), 1, 1, err, sizeof err);
	do {
		struct sl_expr *e;

		sl_cur_advance(&c); /* SELECT, then ',' */
		e = sl_expr_parse(&c);
		T_ASSERT(e && i < sizeof(want) / sizeof(want[0]));
		sl_expr_print(e, buf, sizeof buf);
		if (strcmp(buf, want[i])) {
			fprintf(stderr, "item %zu printed '%s', want '%s'\n", i, buf, want[i]);
			exit(T_EXIT_FAIL);
		}
		sl_expr_destroy(e);
		i++;
		if (sl_cur_accept_kw(&c, "AS"))
			sl_cur_advance(&c);
	} while (sl_cur_is_op(&c, ","));
	T_ASSERT_EQ_I64(i, sizeof(want) / sizeof(want[0]));
	T_ASSERT(sl_cur_is_kw(&c, "FROM"));
}

static void test_errors(void)
{
	expect_error("", "1:1: expected an expression, found end of input");
	expect_error("a +", "1:4: expected an expression, found end of input");
	expect_error("a + * b", "1:5: expected an expression, found '*'");
	expect_error("FROM t", "1:1: expected an expression, found 'FROM'");
	expect_error("(a + b", "1:7: expected ')', found end of input");
	expect_error("f(a b)", "1:5: expected ',' or ')' in the argument list, found 'b'");
	expect_error("a b", "1:3: expected an operator or end of expression, found 'b'");
	expect_error("a IS 5", "1:6: expected NOT, NULL, TRUE or FALSE after IS, found '5'");
	expect_error("a IS NOT x", "1:10: expected NULL, TRUE or FALSE after IS NOT, found 'x'");
	expect_error("a NOT b", "1:7: expected BETWEEN, IN or LIKE after NOT, found 'b'");
	/* without the query parser (a DDL's expression) a subquery has no place to stand */
	expect_error("a IN (SELECT b FROM t)", "1:7: a subquery is not allowed here");
	expect_error("NOT EXISTS (SELECT 1)", "1:13: a subquery is not allowed here");
	expect_error("a BETWEEN 1 OR 2", "1:13: expected AND in BETWEEN, found 'OR'");
	expect_error("a IN 1", "1:6: expected '(' after IN, found '1'");
	expect_error("a IN (1,", "1:9: expected an expression, found end of input");
	expect_error("a IN (1 2)", "1:9: expected ',' or ')' in the IN list, found '2'");
	expect_error("INTERVAL 5 SECOND",
		     "1:10: expected a quoted count after INTERVAL, found '5'");
	expect_error("INTERVAL '5' WEEK",
		     "1:14: expected a time unit (SECOND, MINUTE, HOUR, DAY), found 'WEEK'");
	expect_error("INTERVAL '0.0005' SECOND",
		     "1:10: expected a count of whole milliseconds in INTERVAL, found '0.0005'");
	expect_error("INTERVAL '1x' SECOND",
		     "1:10: expected a count of whole milliseconds in INTERVAL, found '1x'");
	expect_error("INTERVAL '' SECOND",
		     "1:10: expected a count of whole milliseconds in INTERVAL, found ''");
	expect_error("INTERVAL '123456789012' DAY",
		     "1:10: expected a count of whole milliseconds in INTERVAL, "
		     "found '123456789012'");
	expect_error("CASE END", "1:6: expected WHEN, found 'END'");
	expect_error("CASE WHEN a 1 END", "1:13: expected THEN, found '1'");
	expect_error("CASE WHEN a THEN 1", "1:19: expected WHEN, ELSE or END, found end of input");
	expect_error("CAST(a BIGINT)", "1:8: expected AS in CAST, found 'BIGINT'");
	expect_error("CAST(a AS BLOB)",
		     "1:11: expected a type (BOOLEAN, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, "
		     "STRING, VARCHAR, TIMESTAMP, TIMESTAMP_LTZ, DATE), found 'BLOB'");
	expect_error("CAST(a AS DECIMAL(40, 2))",
		     "1:11: DECIMAL(40, 2) needs 1 <= precision <= 38 and scale <= precision");
	expect_error("CAST(a AS TIMESTAMP(12))", "1:11: TIMESTAMP precision 12 exceeds 9");
	expect_error("CAST(a AS INT", "1:14: expected ')' closing CAST, found end of input");
	expect_error("FLOOR(ts TO WEEK)",
		     "1:13: expected a time unit (SECOND, MINUTE, HOUR, DAY), found 'WEEK'");
	expect_error("ROW_NUMBER() OVER (PARTITION a)",
		     "1:30: expected BY after PARTITION, found 'a'");
	expect_error("ROW_NUMBER() OVER (ORDER BY t DESC LIMIT)",
		     "1:36: expected ',', ASC, DESC, ROWS, RANGE or ')' in OVER, found 'LIMIT'");
	expect_error("SUM(x) OVER (ORDER BY t ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING)",
		     "1:54: OVER windows end at the current row: write AND CURRENT ROW");
	expect_error("SUM(x) OVER (ORDER BY t ROWS 1 FOLLOWING)",
		     "1:32: OVER windows end at the current row: FOLLOWING is not supported "
		     "(nor is it by Flink)");
	expect_error("SUM(x) OVER (ORDER BY t RANGE BETWEEN 3 PRECEDING AND CURRENT ROW)",
		     "1:39: expected UNBOUNDED, CURRENT ROW or INTERVAL 'n' unit, found '3'");
	expect_error("SUM(x) OVER (ORDER BY t ROWS UNBOUNDED PRECEDING x)",
		     "1:50: expected ')' after the frame, found 'x'");
	expect_error("ROW_NUMBER() OVER (PARTITION BY a x)",
		     "1:35: expected ',', ORDER BY or ')' in OVER, found 'x'");
	expect_error("COUNT(*) FILTER (price > 1)",
		     "1:18: expected WHERE after FILTER (, found 'price'");
	expect_error("COUNT(*) FILTER (WHERE a",
		     "1:25: expected ')' closing FILTER, found end of input");
	expect_error("ROW_NUMBER() OVER 3", "1:19: expected '(' or a window name after OVER, found '3'");
	expect_error("a.", "1:3: expected a field name after '.', found end of input");
	expect_error("a.\n  1", "2:3: expected a field name after '.', found '1'");
	expect_error("f(DESCRIPTOR(1))",
		     "1:14: expected a column name in DESCRIPTOR, found '1'");
	expect_error("f(TABLE)", "1:8: expected a table name after TABLE, found ')'");
	expect_error("COUNT(* 1)", "1:9: expected ')' after *, found '1'");
	expect_error("99999999999999999999",
		     "1:1: integer 99999999999999999999 is out of BIGINT range "
		     "(write it as a decimal)");
	expect_error("a = 'open", "1:5: unterminated string literal");
	expect_error("x +\n\n   y *  )", "3:9: expected an expression, found ')'");
}

/* Deep nesting is refused with an error rather than a stack overflow. */
static void test_depth(void)
{
	static char src[3 * 1000 + 2];
	struct sl_expr *e;
	size_t n = 0;

	for (int i = 0; i < 100; i++)
		src[n++] = '(';
	src[n++] = 'a';
	for (int i = 0; i < 100; i++)
		src[n++] = ')';
	src[n] = 0;
	expect_print(src, "a");
	n = 0;
	for (int i = 0; i < 1000; i++)
		src[n++] = '(';
	src[n] = 0;
	e = sl_expr_parse_str(src, n, err, sizeof err);
	T_ASSERT(!e && !strcmp(err, "1:257: expression nested more than 256 deep"));
	n = 0;
	for (int i = 0; i < 1000; i++) {
		src[n++] = '-';
		src[n++] = ' ';
	}
	src[n++] = '1';
	src[n] = 0;
	e = sl_expr_parse_str(src, n, err, sizeof err);
	T_ASSERT(!e && strstr(err, "expression nested more than 256 deep"));
}

int main(void)
{
	test_depth();
	test_precedence();
	test_predicates();
	test_literals();
	test_names_and_calls();
	test_lesson_exprs();
	test_positions();
	test_stops();
	test_select_list();
	test_errors();
	return T_EXIT_PASS;
}
