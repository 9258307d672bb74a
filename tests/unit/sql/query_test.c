/*
 * query_test.c - statements to trees: every acceptance job's statements parse; the shape of
 * each construct (aliases, joins with FOR SYSTEM_TIME AS OF, window TVFs with named
 * arguments, UNION ALL, subqueries, GROUP BY/HAVING, the lab's view watermark, statement
 * sets) through a printer; node positions in the job file; errors with their line:column.
 *
 * argv[1] is the acceptance cases directory (meson passes it); without it the acceptance
 * part is skipped and the rest still runs.
 */
#include <dirent.h>
#include <stdarg.h>
#include <string.h>

#include "query.h"
#include "test.h"

static char err[256];

/* snprintf-like printer into a fixed buffer, as expr.c's */
struct out {
	char buf[4096];
	size_t n;
};

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->n >= sizeof o->buf)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->n, sizeof o->buf - o->n, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->n += (size_t)n;
}

static void put_expr(struct out *o, const struct sl_expr *e)
{
	char b[1024];

	sl_expr_print(e, b, sizeof b);
	put(o, "%s", b);
	/* sl_expr_print does not show TVF partition keys: they are the query parser's */
	for (uint32_t i = 0; e->kind == SL_EXPR_TABLE && i < e->npartition; i++) {
		put(o, i ? ", " : " PARTITION BY ");
		put_expr(o, e->partition[i]);
	}
}

static void put_query(struct out *o, const struct sl_query *q);

static const char *const join_names[] = {
	[SL_JOIN_INNER] = "JOIN",	[SL_JOIN_LEFT] = "LEFT JOIN",
	[SL_JOIN_RIGHT] = "RIGHT JOIN", [SL_JOIN_FULL] = "FULL JOIN",
	[SL_JOIN_CROSS] = "CROSS JOIN",
};

static void put_from(struct out *o, const struct sl_from *f)
{
	switch (f->kind) {
	case SL_FROM_TABLE:
		put(o, "%s", f->name);
		if (f->system_time) {
			put(o, " FOR SYSTEM_TIME AS OF ");
			put_expr(o, f->system_time);
		}
		break;
	case SL_FROM_SUBQUERY:
		put(o, "(");
		put_query(o, f->sub);
		put(o, ")");
		break;
	case SL_FROM_TVF:
		T_ASSERT(f->call->kind == SL_EXPR_CALL);
		put(o, "TABLE(%s(", f->call->text);
		for (uint32_t i = 0; i < f->call->nargs; i++) {
			put(o, i ? ", " : "");
			if (f->arg_names && f->arg_names[i])
				put(o, "%s => ", f->arg_names[i]);
			put_expr(o, f->call->args[i]);
		}
		put(o, "))");
		break;
	case SL_FROM_JOIN:
		put(o, "(");
		put_from(o, f->left);
		put(o, " %s ", join_names[f->join]);
		put_from(o, f->right);
		T_ASSERT((f->join == SL_JOIN_CROSS) == !f->on);
		if (f->on) {
			put(o, " ON ");
			put_expr(o, f->on);
		}
		put(o, ")");
		break;
	}
	if (f->alias)
		put(o, " AS %s", f->alias);
}

static void put_query(struct out *o, const struct sl_query *q)
{
	if (q->set_op != SL_SET_NONE) {
		put(o, "(");
		put_query(o, q->left);
		put(o, q->set_op == SL_SET_UNION_ALL ? " UNION ALL " : " UNION ");
		put_query(o, q->right);
		put(o, ")");
	} else {
		put(o, "SELECT %s", q->distinct ? "DISTINCT " : "");
		for (uint32_t i = 0; i < q->nitems; i++) {
			const struct sl_select_item *it = &q->items[i];

			put(o, i ? ", " : "");
			T_ASSERT(it->star == !it->expr);
			if (it->star)
				put(o, "%s%s*", it->star_qual ? it->star_qual : "",
				    it->star_qual ? "." : "");
			else
				put_expr(o, it->expr);
			if (it->alias)
				put(o, " AS %s", it->alias);
		}
		if (q->from) {
			put(o, " FROM ");
			put_from(o, q->from);
		}
		if (q->where) {
			put(o, " WHERE ");
			put_expr(o, q->where);
		}
		for (uint32_t i = 0; i < q->ngroup_by; i++) {
			put(o, i ? ", " : " GROUP BY ");
			put_expr(o, q->group_by[i]);
		}
		if (q->having) {
			put(o, " HAVING ");
			put_expr(o, q->having);
		}
	}
	for (uint32_t i = 0; i < q->norder_by; i++) {
		put(o, i ? ", " : " ORDER BY ");
		put_expr(o, q->order_by[i].expr);
		put(o, q->order_by[i].desc ? " DESC" : "");
	}
	if (q->limit >= 0)
		put(o, " LIMIT %lld", (long long)q->limit);
}

static void put_stmt(struct out *o, const struct sl_stmt *s)
{
	switch (s->kind) {
	case SL_STMT_SELECT:
		put_query(o, s->query);
		break;
	case SL_STMT_INSERT:
		put(o, "INSERT %s %s", s->overwrite ? "OVERWRITE" : "INTO", s->target);
		for (uint32_t i = 0; i < s->ncols; i++)
			put(o, "%s%s", i ? ", " : " (", s->cols[i]);
		put(o, s->ncols ? ") " : " ");
		put_query(o, s->query);
		break;
	case SL_STMT_CREATE_VIEW:
		put(o, "CREATE %sVIEW %s%s", s->temporary ? "TEMPORARY " : "",
		    s->if_not_exists ? "IF NOT EXISTS " : "", s->target);
		for (uint32_t i = 0; i < s->ncols; i++)
			put(o, "%s%s", i ? ", " : " (", s->cols[i]);
		put(o, s->ncols ? ") AS " : " AS ");
		put_query(o, s->query);
		T_ASSERT(!s->wm_for == !s->wm_expr);
		if (s->wm_for) {
			put(o, " WATERMARK@%u:%u FOR ", s->wm_line, s->wm_col);
			put_expr(o, s->wm_for);
			put(o, " AS ");
			put_expr(o, s->wm_expr);
		}
		break;
	case SL_STMT_EXPLAIN:
		put(o, "EXPLAIN ");
		put_stmt(o, s->inner);
		break;
	case SL_STMT_STATEMENT_SET:
		put(o, "SET {");
		for (uint32_t i = 0; i < s->nsub; i++) {
			T_ASSERT(s->sub[i]->kind == SL_STMT_INSERT);
			put(o, i ? "; " : "");
			put_stmt(o, s->sub[i]);
		}
		put(o, "}");
		break;
	case SL_STMT_BEGIN_SET:
		put(o, "BEGIN SET");
		break;
	case SL_STMT_EXPLAIN_WATERMARK:
		put(o, "EXPLAIN WATERMARK FOR %s", s->target);
		break;
	case SL_STMT_END:
		put(o, "END");
		break;
	}
}

static struct sl_stmt *parse_at(const char *src, uint32_t line, uint32_t col)
{
	struct sl_stmt *s = sl_stmt_parse(src, strlen(src), line, col, err, sizeof err);

	if (!s) {
		fprintf(stderr, "parse of '%s' failed: %s\n", src, err);
		exit(T_EXIT_FAIL);
	}
	return s;
}

/* src parses and prints as want. */
static void expect_tree(const char *src, const char *want)
{
	struct sl_stmt *s = parse_at(src, 1, 1);
	struct out o = { .n = 0 };

	put_stmt(&o, s);
	if (strcmp(o.buf, want)) {
		fprintf(stderr, "'%s'\n printed as '%s'\n       want '%s'\n", src, o.buf, want);
		exit(T_EXIT_FAIL);
	}
	sl_stmt_destroy(s);
}

static void expect_error_at(const char *src, uint32_t line, uint32_t col, const char *want)
{
	struct sl_stmt *s = sl_stmt_parse(src, strlen(src), line, col, err, sizeof err);

	if (s || strcmp(err, want)) {
		fprintf(stderr, "'%s'\n gave '%s'\n want '%s'\n", src, s ? "a tree" : err, want);
		exit(T_EXIT_FAIL);
	}
}

static void expect_error(const char *src, const char *want)
{
	expect_error_at(src, 1, 1, want);
}

static void test_select(void)
{
	expect_tree("SELECT a, b AS x, c y, `from` `select`, t.*, * FROM t",
		    "SELECT a, b AS x, c AS y, `from` AS select, t.*, * FROM t");
	expect_tree("select distinct a from cat.db.`my t` as t where a > 1",
		    "SELECT DISTINCT a FROM cat.db.my t AS t WHERE (a > 1)");
	expect_tree("SELECT ALL c.d.t.* FROM t", "SELECT c.d.t.* FROM t");
	expect_tree("SELECT 1 + 2", "SELECT (1 + 2)");
	expect_tree("SELECT a.b.c FROM t", "SELECT a.b.c FROM t");
	expect_tree("SELECT COUNT(*) cnt, SUM(x) FROM t GROUP BY k, TUMBLE(ts, INTERVAL '5' "
		    "SECOND) HAVING COUNT(*) > 1 AND SUM(x) < 10",
		    "SELECT COUNT(*) AS cnt, SUM(x) FROM t GROUP BY k, TUMBLE(ts, INTERVAL '5' "
		    "SECOND) HAVING ((COUNT(*) > 1) AND (SUM(x) < 10))");
	expect_tree("SELECT a FROM t ORDER BY a DESC, b ASC, c LIMIT 10",
		    "SELECT a FROM t ORDER BY a DESC, b, c LIMIT 10");
	expect_tree("SELECT a FROM t LIMIT 0", "SELECT a FROM t LIMIT 0");
	/* a `watermark` column outside a view is just a name */
	expect_tree("SELECT watermark FROM t watermark", "SELECT watermark FROM t AS watermark");
	/* the deduplication pattern: window function, subquery without an alias */
	expect_tree(
		"select order_id, `user` FROM (  SELECT *,    ROW_NUMBER() OVER "
		"(PARTITION BY product ORDER BY event_time DESC) AS row_num\n"
		"  FROM MyTable)WHERE row_num = 1",
		"SELECT order_id, user FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
		"product ORDER BY event_time DESC) AS row_num FROM MyTable) WHERE (row_num = 1)");
	expect_tree("SELECT * FROM (SELECT a FROM t) AS s, (SELECT b FROM u) v",
		    "SELECT * FROM ((SELECT a FROM t) AS s CROSS JOIN (SELECT b FROM u) AS v)");
}

static void test_joins(void)
{
	expect_tree("SELECT amount * r.rate FROM Orders AS o JOIN RatesHistory FOR SYSTEM_TIME "
		    "AS OF o.rowtime AS r ON o.currency = r.currency",
		    "SELECT (amount * r.rate) FROM (Orders AS o JOIN RatesHistory FOR SYSTEM_TIME "
		    "AS OF o.rowtime AS r ON (o.currency = r.currency))");
	expect_tree("SELECT * FROM orders o LEFT JOIN products FOR SYSTEM_TIME AS OF "
		    "o.proc_time p ON o.pid = p.pid",
		    "SELECT * FROM (orders AS o LEFT JOIN products FOR SYSTEM_TIME AS OF "
		    "o.proc_time AS p ON (o.pid = p.pid))");
	/* left-associative, every kind, OUTER optional */
	expect_tree("SELECT * FROM a INNER JOIN b ON x LEFT OUTER JOIN c ON y RIGHT JOIN d ON z "
		    "FULL OUTER JOIN e ON w CROSS JOIN f",
		    "SELECT * FROM (((((a JOIN b ON x) LEFT JOIN c ON y) RIGHT JOIN d ON z) FULL "
		    "JOIN e ON w) CROSS JOIN f)");
	/* a comma binds looser than JOIN */
	expect_tree("SELECT * FROM a, b JOIN c ON p, d",
		    "SELECT * FROM ((a CROSS JOIN (b JOIN c ON p)) CROSS JOIN d)");
	expect_tree("SELECT * FROM a JOIN (b JOIN c ON p) ON q",
		    "SELECT * FROM (a JOIN (b JOIN c ON p) ON q)");
	expect_tree("SELECT * FROM a JOIN (SELECT * FROM b) bb ON a.k = bb.k",
		    "SELECT * FROM (a JOIN (SELECT * FROM b) AS bb ON (a.k = bb.k))");
}

static void test_tvf(void)
{
	expect_tree("SELECT window_start, COUNT(*) FROM TABLE(\n"
		    "   TUMBLE(TABLE T1, DESCRIPTOR(rowtime), INTERVAL '5' SECOND))\n"
		    "GROUP BY `name`, window_start, window_end",
		    "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE T1, "
		    "DESCRIPTOR(rowtime), INTERVAL '5' SECOND)) GROUP BY name, window_start, "
		    "window_end");
	expect_tree("SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => "
		    "DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTES)) AS w",
		    "SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => "
		    "DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTE)) AS w");
	expect_tree("SELECT * FROM TABLE(HOP(TABLE db.Bid, DESCRIPTOR(ts), INTERVAL '5' "
		    "MINUTE, SIZE=>INTERVAL '10' MINUTE)) w",
		    "SELECT * FROM TABLE(HOP(TABLE db.Bid, DESCRIPTOR(ts), INTERVAL '5' MINUTE, "
		    "SIZE => INTERVAL '10' MINUTE)) AS w");
	expect_tree("SELECT * FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '2' "
		    "MINUTES, INTERVAL '10' MINUTES))",
		    "SELECT * FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '2' MINUTE, "
		    "INTERVAL '10' MINUTE))");
	expect_tree("SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY item, "
		    "DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))",
		    "SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY item, "
		    "DESCRIPTOR(bidtime), INTERVAL '5' MINUTE))");
	expect_tree("SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY (item, bidder), "
		    "DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))",
		    "SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY item, bidder, "
		    "DESCRIPTOR(bidtime), INTERVAL '5' MINUTE))");
	/* a window TVF joined like any table */
	expect_tree("SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '1' SECOND)) "
		    "l JOIN TABLE(TUMBLE(TABLE b, DESCRIPTOR(ts), INTERVAL '1' SECOND)) r ON "
		    "l.window_start = r.window_start",
		    "SELECT * FROM (TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '1' SECOND)) AS "
		    "l JOIN TABLE(TUMBLE(TABLE b, DESCRIPTOR(ts), INTERVAL '1' SECOND)) AS r ON "
		    "(l.window_start = r.window_start))");
}

static void test_tvf_nodes(void)
{
	struct sl_stmt *s = parse_at("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
				     "SIZE => INTERVAL '5' SECOND))",
				     1, 1);
	const struct sl_from *f = s->query->from;

	T_ASSERT(f->kind == SL_FROM_TVF && !f->alias);
	T_ASSERT(!strcmp(f->call->text, "TUMBLE") && f->call->nargs == 3);
	T_ASSERT(f->call->args[0]->kind == SL_EXPR_TABLE && f->call->args[0]->npath == 1);
	T_ASSERT(f->call->args[1]->kind == SL_EXPR_DESCRIPTOR);
	T_ASSERT(f->call->args[2]->kind == SL_EXPR_INTERVAL && f->call->args[2]->ival == 5000);
	T_ASSERT(f->arg_names && !f->arg_names[0] && !f->arg_names[1]);
	T_ASSERT(!strcmp(f->arg_names[2], "SIZE"));
	sl_stmt_destroy(s);

	s = parse_at("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND))", 1,
		     1);
	T_ASSERT(!s->query->from->arg_names); /* no name written: no array */
	sl_stmt_destroy(s);
}

static void test_union(void)
{
	expect_tree("SELECT a FROM t UNION ALL SELECT b FROM u UNION SELECT c FROM v",
		    "((SELECT a FROM t UNION ALL SELECT b FROM u) UNION SELECT c FROM v)");
	expect_tree("(SELECT a FROM t) UNION ALL (SELECT b FROM u UNION ALL SELECT c FROM v) "
		    "ORDER BY a LIMIT 5",
		    "(SELECT a FROM t UNION ALL (SELECT b FROM u UNION ALL SELECT c FROM v)) "
		    "ORDER BY a LIMIT 5");
	expect_tree("SELECT a FROM t WHERE x = 1 UNION DISTINCT SELECT a FROM u",
		    "(SELECT a FROM t WHERE (x = 1) UNION SELECT a FROM u)");
	expect_tree("SELECT * FROM (SELECT a FROM t UNION ALL SELECT a FROM u) x",
		    "SELECT * FROM ((SELECT a FROM t UNION ALL SELECT a FROM u)) AS x");
	expect_tree("((SELECT 1))", "SELECT 1");
}

static void test_statements(void)
{
	expect_tree("INSERT INTO sink SELECT * FROM src", "INSERT INTO sink SELECT * FROM src");
	expect_tree("insert overwrite c.d.sink (a, `b`) (SELECT x, y FROM src)",
		    "INSERT OVERWRITE c.d.sink (a, b) SELECT x, y FROM src");
	expect_tree("INSERT INTO sink (SELECT 1) UNION ALL (SELECT 2)",
		    "INSERT INTO sink (SELECT 1 UNION ALL SELECT 2)");
	expect_tree("CREATE TEMPORARY VIEW IF NOT EXISTS v (a, b) AS SELECT x, y FROM t",
		    "CREATE TEMPORARY VIEW IF NOT EXISTS v (a, b) AS SELECT x, y FROM t");
	expect_tree("create view v as (select 1)", "CREATE VIEW v AS SELECT 1");
	expect_tree("EXPLAIN SELECT a FROM t", "EXPLAIN SELECT a FROM t");
	expect_tree("EXPLAIN PLAN FOR INSERT INTO s SELECT a FROM t",
		    "EXPLAIN INSERT INTO s SELECT a FROM t");
	expect_tree("EXPLAIN WATERMARK FOR cat.orders", "EXPLAIN WATERMARK FOR cat.orders");
	expect_tree("EXECUTE STATEMENT SET BEGIN\n"
		    "INSERT INTO s1 SELECT a FROM t;\n"
		    "INSERT INTO s2 SELECT b FROM t WHERE b > 0;\n"
		    "END",
		    "SET {INSERT INTO s1 SELECT a FROM t; INSERT INTO s2 SELECT b FROM t WHERE "
		    "(b > 0)}");
	expect_tree("EXECUTE STATEMENT SET BEGIN INSERT INTO s1 SELECT 1 END",
		    "SET {INSERT INTO s1 SELECT 1}");
	expect_tree("EXPLAIN STATEMENT SET BEGIN INSERT INTO s1 SELECT 1; END",
		    "EXPLAIN SET {INSERT INTO s1 SELECT 1}");
	expect_tree("EXPLAIN EXECUTE STATEMENT SET BEGIN INSERT INTO s1 SELECT 1; END",
		    "EXPLAIN SET {INSERT INTO s1 SELECT 1}");
	expect_tree("BEGIN STATEMENT SET", "BEGIN SET");
	expect_tree("end", "END");
	/* the span sl_ddl_parse gives for BEGIN STATEMENT SET; ...; END is one whole set */
	expect_tree("BEGIN STATEMENT SET;\nINSERT INTO s1 SELECT 1;\nINSERT INTO s2 SELECT 2;\n"
		    "END",
		    "SET {INSERT INTO s1 SELECT 1; INSERT INTO s2 SELECT 2}");
	expect_tree("SELECT 1;", "SELECT 1");
}

/* The PyFlink lesson's lab: WATERMARK FOR after the view's WHERE, or as the last select item. */
static void test_view_watermark(void)
{
	static const char trailing[] =
		"CREATE VIEW orders_with_watermark AS\n"
		"SELECT\n"
		"    payload.after.id AS id,\n"
		"    TO_TIMESTAMP_LTZ(payload.ts_ms, 3) AS event_time\n"
		"FROM orders_cdc\n"
		"WHERE payload.op IN ('c', 'u', 'r')\n"
		"WATERMARK FOR TO_TIMESTAMP_LTZ(payload.ts_ms, 3) AS TO_TIMESTAMP_LTZ("
		"payload.ts_ms, 3) - INTERVAL '5' SECONDS";
	static const char in_list[] =
		"CREATE VIEW orders_current AS\n"
		"    SELECT\n"
		"        payload.after.id AS id,\n"
		"        TO_TIMESTAMP_LTZ(payload.ts_ms, 3) AS event_time,\n"
		"        WATERMARK FOR TO_TIMESTAMP_LTZ(payload.ts_ms, 3) AS TO_TIMESTAMP_LTZ("
		"payload.ts_ms, 3) - INTERVAL '5' SECONDS\n"
		"    FROM orders_cdc\n"
		"    WHERE payload.op IN ('c', 'u', 'r')";
	static const char want_tail[] =
		" FOR TO_TIMESTAMP_LTZ(payload.ts_ms, 3) AS (TO_TIMESTAMP_LTZ(payload.ts_ms, 3) - "
		"INTERVAL '5' SECOND)";
	char want[512];

	snprintf(want, sizeof want,
		 "CREATE VIEW orders_with_watermark AS SELECT "
		 "payload.after.id AS id, TO_TIMESTAMP_LTZ(payload.ts_ms, 3) AS event_time FROM "
		 "orders_cdc WHERE (payload.op IN ('c', 'u', 'r')) WATERMARK@7:1%s",
		 want_tail);
	expect_tree(trailing, want);
	snprintf(want, sizeof want,
		 "CREATE VIEW orders_current AS SELECT "
		 "payload.after.id AS id, TO_TIMESTAMP_LTZ(payload.ts_ms, 3) AS event_time FROM "
		 "orders_cdc WHERE (payload.op IN ('c', 'u', 'r')) WATERMARK@5:9%s",
		 want_tail);
	expect_tree(in_list, want);
	expect_tree("CREATE VIEW v AS SELECT a, ts FROM t WATERMARK FOR ts AS ts",
		    "CREATE VIEW v AS SELECT a, ts FROM t WATERMARK@1:38 FOR ts AS ts");
	/* only the view's own SELECT list: a subquery's is an ordinary list */
	expect_error("CREATE VIEW v AS SELECT * FROM (SELECT a, WATERMARK FOR a AS a FROM t)",
		     "1:53: expected an operator, ',', FROM or ')' closing '(' at 1:32, "
		     "found 'FOR'");
	expect_error("SELECT a FROM t WATERMARK FOR a AS a",
		     "1:17: expected ',', JOIN, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT, UNION or "
		     "end of statement, found 'WATERMARK'");
	expect_error("CREATE VIEW v AS SELECT a, WATERMARK FOR a AS a FROM t WATERMARK FOR a AS a",
		     "1:56: a view has one WATERMARK");
}

/* Positions are file positions when the statement starts mid-file. */
static void test_positions(void)
{
	struct sl_stmt *s = parse_at("SELECT a,\n  b AS x FROM t AS o\n"
				     "  JOIN r FOR SYSTEM_TIME AS OF o.ts ON o.k = r.k",
				     10, 5);
	const struct sl_query *q = s->query;
	const struct sl_from *j = q->from;

	T_ASSERT(s->line == 10 && s->col == 5 && q->line == 10 && q->col == 5);
	T_ASSERT(q->items[0].line == 10 && q->items[0].col == 12);
	T_ASSERT(q->items[0].expr->line == 10 && q->items[0].expr->col == 12);
	T_ASSERT(q->items[1].line == 11 && q->items[1].col == 3);
	T_ASSERT(j->kind == SL_FROM_JOIN && j->join == SL_JOIN_INNER);
	T_ASSERT(j->line == 11 && j->col == 15); /* a join sits at its first token */
	T_ASSERT(j->left->line == 11 && j->left->col == 15 && !strcmp(j->left->alias, "o"));
	T_ASSERT(j->right->line == 12 && j->right->col == 8);
	T_ASSERT(j->right->system_time->line == 12 && j->right->system_time->col == 32);
	T_ASSERT(j->on->line == 12 && j->on->col == 44); /* the '=' */
	sl_stmt_destroy(s);

	s = parse_at("INSERT INTO s\nSELECT 1 UNION ALL SELECT 2", 3, 1);
	T_ASSERT(s->kind == SL_STMT_INSERT && s->line == 3 && s->col == 1);
	T_ASSERT(s->query->set_op == SL_SET_UNION_ALL);
	T_ASSERT(s->query->line == 4 && s->query->col == 1);
	T_ASSERT(s->query->right->line == 4 && s->query->right->col == 20);
	T_ASSERT(s->query->limit == -1 && s->query->right->limit == -1);
	sl_stmt_destroy(s);
}

static void test_errors(void)
{
	expect_error("SELECT FROM t", "1:8: expected an expression, found 'FROM'");
	expect_error("SELECT a b c FROM t",
		     "1:12: expected an operator, ',', FROM or end of statement, found 'c'");
	expect_error_at("SELECT a\nFROM t\nWHERE a > 1 GROUP a", 7, 3,
			"9:19: expected BY after GROUP, found 'a'");
	expect_error("SELECT a FROM t JOIN u",
		     "1:23: expected ON and the join condition, found end of input");
	expect_error("SELECT a FROM t LEFT u", "1:22: expected JOIN, found 'u'");
	expect_error("SELECT * FROM t FOR SYSTEM_TIME AS OF x",
		     "1:17: FOR SYSTEM_TIME AS OF belongs to the table on the right of a JOIN");
	expect_error("SELECT * FROM a JOIN b FOR SYSTEM_TIME OF x ON c",
		     "1:40: expected AS OF after FOR SYSTEM_TIME, found 'OF'");
	expect_error("SELECT * FROM (SELECT a FROM t WHERE a b",
		     "1:40: expected an operator, GROUP BY, HAVING, ORDER BY, LIMIT, UNION or ')' "
		     "closing '(' at 1:15, found 'b'");
	expect_error("SELECT * FROM TABLE(TUMBLE(SIZE => INTERVAL '1' SECOND, TABLE t))",
		     "1:57: expected a named argument (NAME => value) after a named one, found "
		     "'TABLE'");
	expect_error(
		"SELECT * FROM TABLE(t)",
		"1:21: expected a window function such as TUMBLE(...) after TABLE(, found 't'");
	expect_error("SELECT a AS FROM t", "1:13: expected an alias after AS, found 'FROM'");
	expect_error("SELECT a FROM t LIMIT x",
		     "1:23: expected a row count after LIMIT, found 'x'");
	expect_error("SELECT a FROM t UNION ALL", "1:26: expected a query (SELECT or '('), found "
						  "end of input");
	expect_error("INSERT t SELECT 1",
		     "1:8: expected INTO or OVERWRITE after INSERT, found 't'");
	expect_error("INSERT INTO s VALUES (1), (2, 3)",
		     "1:27: VALUES row 2 has 2 values but row 1 has 1: every row needs the same "
		     "number");
	expect_error("WITH a AS SELECT 1 SELECT 2",
		     "1:11: expected '(' and the WITH query after AS, found 'SELECT'");
	expect_error("WITH a AS (SELECT 1) INSERT INTO s SELECT 2",
		     "1:22: expected a query (SELECT or '('), found 'INSERT'");
	expect_error("CREATE FUNCTION f AS 'x'",
		     "1:8: expected VIEW after CREATE, found 'FUNCTION'");
	expect_error("CREATE VIEW v SELECT 1",
		     "1:15: expected AS and the view's query, found 'SELECT'");
	expect_error("EXECUTE STATEMENT SET BEGIN INSERT INTO s SELECT 1; SELECT 2; END",
		     "1:53: expected INSERT or END in the statement set, found 'SELECT'");
	expect_error("EXECUTE STATEMENT SET BEGIN END",
		     "1:29: a statement set needs at least one INSERT");
	expect_error("EXECUTE STATEMENT SET BEGIN INSERT INTO s SELECT 1 INSERT INTO",
		     "1:52: expected an operator, ',', FROM or ';', found 'INSERT'");
	expect_error(
		"EXPLAIN CREATE VIEW v AS SELECT 1",
		"1:9: expected a query, INSERT or STATEMENT SET after EXPLAIN, found 'CREATE'");
	expect_error("EXPLAIN WATERMARK orders",
		     "1:19: expected FOR after EXPLAIN WATERMARK, found 'orders'");
	expect_error("DROP TABLE t", "1:1: expected a statement (SELECT, INSERT, CREATE VIEW, "
				     "EXPLAIN or a STATEMENT SET), found 'DROP'");
	expect_error("(SELECT 1) ORDER BY a x",
		     "1:23: expected an operator, ',', ASC, DESC, LIMIT or end of statement, found "
		     "'x'");
	expect_error("(SELECT 1 LIMIT 1) LIMIT 2",
		     "1:20: ORDER BY or LIMIT after a parenthesised query that has its own");
	expect_error("SELECT 'a", "1:8: unterminated string literal");
	expect_error("SELECT a FROM t LIMIT 1 x", "1:25: expected end of statement, found 'x'");
	expect_error("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(), INTERVAL '1' SECOND))",
		     "1:48: expected a column name in DESCRIPTOR, found ')'");
}

/* IN (SELECT ...) and EXISTS (SELECT ...): the subquery is a query of its own, printed by
 * its place in the expression. */
static void test_subqueries(void)
{
	struct sl_stmt *s;
	struct out o = { .n = 0 };

	expect_tree("SELECT * FROM t WHERE a IN (SELECT b FROM u WHERE u.k = t.k)",
		    "SELECT * FROM t WHERE (a IN (SELECT at 1:29))");
	expect_tree("SELECT * FROM t WHERE a NOT IN (SELECT b FROM u) AND NOT EXISTS (\n"
		    "  SELECT * FROM v WHERE v.k = t.k) AND c IN (1, 2)",
		    "SELECT * FROM t WHERE (((a NOT IN (SELECT at 1:33)) AND (NOT EXISTS "
		    "(SELECT at 2:3))) AND (c IN (1, 2)))");
	/* a subquery in a subquery, and EXISTS still a column name without its '(' */
	expect_tree("SELECT exists FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a IN (SELECT a "
		    "FROM v))",
		    "SELECT exists FROM t WHERE EXISTS (SELECT at 1:36)");
	s = parse_at("SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a IN (SELECT a FROM v "
		     "WHERE v.b > 1))",
		     1, 1);
	T_ASSERT(s->query->where->kind == SL_EXPR_EXISTS && s->query->where->sub);
	put_query(&o, s->query->where->sub);
	T_ASSERT(!strcmp(o.buf, "SELECT 1 FROM u WHERE (u.a IN (SELECT at 1:61))"));
	o.n = 0;
	put_query(&o, s->query->where->sub->where->sub);
	T_ASSERT(!strcmp(o.buf, "SELECT a FROM v WHERE (v.b > 1)"));
	sl_stmt_destroy(s);

	expect_error("SELECT * FROM t WHERE EXISTS (1)",
		     "1:31: expected SELECT after EXISTS (, found '1'");
	expect_error("SELECT * FROM t WHERE a IN (SELECT b FROM u",
		     "1:44: expected ')' after the subquery, found end of input");
	expect_error("SELECT * FROM t WHERE a IN (SELECT b FROM u WHERE)",
		     "1:50: expected an expression, found ')'");
}

/* Subqueries in expressions nested past their own bound: an error naming the place. */
static void test_subquery_depth(void)
{
	static char src[2048];

	for (int depth = 8; depth <= 9; depth++) {
		size_t n = (size_t)snprintf(src, sizeof src, "SELECT * FROM t");
		struct sl_stmt *s;

		for (int i = 0; i < depth; i++)
			n += (size_t)snprintf(src + n, sizeof src - n,
					      " WHERE EXISTS (SELECT 1 FROM t");
		for (int i = 0; i < depth; i++)
			src[n++] = ')';
		src[n] = 0;
		s = sl_stmt_parse(src, n, 1, 1, err, sizeof err);
		/* 8 deep parses; the 9th SELECT, at 15 + 8 * 30 + 16, is one too many */
		if (depth == 8 ? !s
			       : s || strcmp(err, "1:271: subqueries in expressions nested more "
						  "than 8 deep")) {
			fprintf(stderr, "%d deep subqueries gave '%s'\n", depth, s ? "a tree" : err);
			exit(T_EXIT_FAIL);
		}
		sl_stmt_destroy(s);
	}
}

/* Nesting past the bound is an error, not a stack overflow. */
static void test_depth(void)
{
	static char src[4096];
	size_t n = 0;

	for (int i = 0; i < 200; i++)
		n += (size_t)snprintf(src + n, sizeof src - n, "SELECT * FROM (");
	n += (size_t)snprintf(src + n, sizeof src - n, "SELECT 1");
	for (int i = 0; i < 200; i++)
		src[n++] = ')';
	src[n] = 0;
	T_ASSERT(!sl_stmt_parse(src, n, 1, 1, err, sizeof err));
	T_ASSERT(strstr(err, "nested more than 64 deep"));
	n = 0;
	for (int i = 0; i < 300; i++)
		src[n++] = '(';
	T_ASSERT(!sl_stmt_parse(src, n, 1, 1, err, sizeof err));
	T_ASSERT(strstr(err, "nested more than 64 deep"));
}

/*
 * Each OTHER statement of a job file, as the planner will hand them over: parsed at its
 * span's file position into out[0..n) (freed here when out is NULL). Returns n.
 */
static uint32_t parse_job(const char *name, const char *src, size_t len, struct sl_stmt **out,
			  uint32_t cap)
{
	struct sl_ddl_script *sc = sl_ddl_parse(src, len, err, sizeof err);
	uint32_t nother = 0;

	if (!sc) {
		fprintf(stderr, "%s: %s\n", name, err);
		exit(T_EXIT_FAIL);
	}
	for (uint32_t i = 0; i < sc->nstmts; i++) {
		const struct sl_ddl_span *sp = &sc->stmts[i].span;
		struct sl_stmt *s;

		if (sc->stmts[i].kind != SL_DDL_OTHER)
			continue;
		s = sl_stmt_parse(src + sp->start, sp->end - sp->start, sp->line, sp->col, err,
				  sizeof err);
		if (!s) {
			fprintf(stderr, "%s:%s\n", name, err);
			exit(T_EXIT_FAIL);
		}
		T_ASSERT(s->line == sp->line && s->col == sp->col);
		if (out) {
			T_ASSERT(nother < cap);
			out[nother] = s;
		} else {
			sl_stmt_destroy(s);
		}
		nother++;
	}
	sl_ddl_destroy(sc);
	return nother;
}

static uint32_t parse_job_file(const char *path)
{
	uint32_t n;
	char *src;
	long len;
	FILE *f = fopen(path, "rb");

	T_ASSERT(f);
	T_ASSERT(fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0);
	rewind(f);
	src = malloc((size_t)len + 1);
	T_ASSERT(src && fread(src, 1, (size_t)len, f) == (size_t)len);
	fclose(f);
	n = parse_job(path, src, (size_t)len, NULL, 0);
	free(src);
	return n;
}

/* Statement sets keep their inner ';' through sl_ddl_parse, in every form. */
static void test_job_file(void)
{
	static const char job[] =
		"SET 'parallelism.default' = '2';\n"
		"CREATE TABLE t (a INT) WITH ('connector' = 'datagen');\n"
		"CREATE VIEW v AS SELECT a FROM t;\n"
		"EXECUTE STATEMENT SET BEGIN\n"
		"  INSERT INTO s1 SELECT a FROM v;\n"
		"  INSERT INTO s2 SELECT a FROM v;\n"
		"END;\n"
		"BEGIN STATEMENT SET;\n"
		"  INSERT INTO s1 SELECT a FROM v;\n"
		"END;\n"
		"EXPLAIN PLAN FOR STATEMENT SET BEGIN INSERT INTO s1 SELECT 1; END;\n"
		"  SELECT a FROM v";
	struct sl_stmt *s[8];
	uint32_t n = parse_job("job", job, strlen(job), s, 8);

	T_ASSERT_EQ_I64(n, 5);
	T_ASSERT(s[0]->kind == SL_STMT_CREATE_VIEW && s[0]->line == 3 && s[0]->col == 1);
	T_ASSERT(s[1]->kind == SL_STMT_STATEMENT_SET && s[1]->nsub == 2 && s[1]->line == 4);
	T_ASSERT(s[1]->sub[1]->line == 6 && s[1]->sub[1]->col == 3);
	T_ASSERT(s[2]->kind == SL_STMT_STATEMENT_SET && s[2]->nsub == 1 && s[2]->line == 8);
	T_ASSERT(s[3]->kind == SL_STMT_EXPLAIN && s[3]->inner->kind == SL_STMT_STATEMENT_SET);
	T_ASSERT(s[3]->inner->line == 11 && s[3]->inner->col == 18);
	T_ASSERT(s[4]->kind == SL_STMT_SELECT && s[4]->line == 12 && s[4]->col == 3);
	T_ASSERT(s[4]->query->items[0].line == 12 && s[4]->query->items[0].col == 10);
	for (uint32_t i = 0; i < n; i++)
		sl_stmt_destroy(s[i]);
}

static int test_acceptance(const char *dir)
{
	struct dirent *d;
	int njobs = 0;
	DIR *dh;

	if (!dir || !(dh = opendir(dir))) {
		fprintf(stderr, "no acceptance cases at %s: skipped that part\n",
			dir ? dir : "(none given)");
		return 0;
	}
	while ((d = readdir(dh))) {
		char path[1024];
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s/job.sql", dir, d->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		fclose(f);
		T_ASSERT(parse_job_file(path) >= 1);
		njobs++;
	}
	closedir(dh);
	T_ASSERT(njobs > 0);
	return njobs;
}

int main(int argc, char **argv)
{
	test_select();
	test_joins();
	test_tvf();
	test_tvf_nodes();
	test_union();
	test_statements();
	test_view_watermark();
	test_positions();
	test_errors();
	test_subqueries();
	test_subquery_depth();
	test_depth();
	test_job_file();
	/* the other parts ran: skip only when there is nothing to check against at all */
	if (!test_acceptance(argc > 1 ? argv[1] : NULL))
		return T_EXIT_SKIP;
	return T_EXIT_PASS;
}
