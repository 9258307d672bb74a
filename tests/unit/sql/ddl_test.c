/*
 * ddl_test.c - job files split into statements: the PyFlink lesson's Debezium CREATE TABLE with
 * nested ROWs, computed column and watermark spans, keys, options with '' escapes, SET,
 * other statements kept as spans, and each error with its line:column.
 */
#include <string.h>

#include "ddl.h"
#include "test.h"

static char err[256];

static struct sl_ddl_script *parse(const char *src)
{
	struct sl_ddl_script *s = sl_ddl_parse(src, strlen(src), err, sizeof err);

	if (!s) {
		fprintf(stderr, "parse failed: %s\n", err);
		exit(T_EXIT_FAIL);
	}
	return s;
}

static void expect_span(const char *src, const struct sl_ddl_span *sp, const char *text,
			uint32_t line, uint32_t col)
{
	size_t n = sp->end - sp->start;

	if (n != strlen(text) || memcmp(src + sp->start, text, n) || sp->line != line ||
	    sp->col != col) {
		fprintf(stderr, "span '%.*s' at %u:%u, want '%s' at %u:%u\n", (int)n,
			src + sp->start, sp->line, sp->col, text, line, col);
		exit(T_EXIT_FAIL);
	}
}

static const char lesson_job[] =
	"-- the PyFlink lesson's orders per customer in 5-minute windows\n"
	"SET 'table.local-time-zone' = 'UTC';\n"
	"\n"
	"CREATE TABLE orders_cdc (\n"
	"  payload ROW<\n"
	"    after ROW<\n"
	"      id INT,\n"
	"      customer_id INT,\n"
	"      total DECIMAL(10,2),\n"
	"      status STRING,\n"
	"      created_at TIMESTAMP(3)\n"
	"    >,\n"
	"    op STRING,\n"
	"    ts_ms BIGINT\n"
	"  >,\n"
	"  event_time AS TO_TIMESTAMP_LTZ(payload.ts_ms, 3),\n"
	"  WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND\n"
	") WITH (\n"
	"  'connector' = 'filesystem',\n"
	"  'path' = '@DIR@/orders_cdc.jsonl',\n"
	"  'format' = 'json',\n"
	"  'scan.watermark.emit.strategy' = 'on-event'\n"
	");\n"
	"\n"
	"CREATE VIEW orders_current AS\n"
	"SELECT payload.after.id AS id, event_time\n"
	"FROM orders_cdc\n"
	"WHERE payload.op IN ('c', 'u', 'r');\n"
	"\n"
	"SELECT customer_id, COUNT(*) AS n\n"
	"FROM orders_current\n"
	"GROUP BY TUMBLE(event_time, INTERVAL '5' MINUTES), customer_id;\n";

static void test_lesson_job(void)
{
	struct sl_ddl_script *s = parse(lesson_job);
	const struct sl_ddl_table *tb;
	const struct sl_ddl_type *pay, *after;

	T_ASSERT_EQ_I64(s->nstmts, 4);
	T_ASSERT(s->stmts[0].kind == SL_DDL_SET);
	T_ASSERT(!strcmp(s->stmts[0].set.key, "table.local-time-zone"));
	T_ASSERT(!strcmp(s->stmts[0].set.value, "UTC"));
	expect_span(lesson_job, &s->stmts[0].span, "SET 'table.local-time-zone' = 'UTC'", 2, 1);

	T_ASSERT(s->stmts[1].kind == SL_DDL_CREATE_TABLE);
	tb = &s->stmts[1].table;
	T_ASSERT(!strcmp(tb->name, "orders_cdc") && !tb->temporary && !tb->if_not_exists);
	T_ASSERT_EQ_I64(tb->ncols, 2);
	T_ASSERT(!strcmp(tb->cols[0].name, "payload") && !tb->cols[0].computed);
	T_ASSERT_EQ_I64(tb->cols[0].line, 5);
	T_ASSERT_EQ_I64(tb->cols[0].col, 3);
	pay = &tb->cols[0].type;
	T_ASSERT(pay->kind == SL_DDL_ROW && pay->nfields == 3);
	T_ASSERT(!strcmp(pay->fields[0].name, "after"));
	T_ASSERT(!strcmp(pay->fields[1].name, "op") && pay->fields[1].type.kind == SL_DDL_STRING);
	T_ASSERT(!strcmp(pay->fields[2].name, "ts_ms"));
	T_ASSERT(pay->fields[2].type.kind == SL_DDL_BIGINT);
	after = &pay->fields[0].type;
	T_ASSERT(after->kind == SL_DDL_ROW && after->nfields == 5);
	T_ASSERT(!strcmp(after->fields[2].name, "total"));
	T_ASSERT(after->fields[2].type.kind == SL_DDL_DECIMAL);
	T_ASSERT_EQ_I64(after->fields[2].type.precision, 10);
	T_ASSERT_EQ_I64(after->fields[2].type.scale, 2);
	T_ASSERT(after->fields[4].type.kind == SL_DDL_TIMESTAMP);
	T_ASSERT_EQ_I64(after->fields[4].type.precision, 3);
	T_ASSERT_EQ_I64(after->fields[4].line, 11);
	T_ASSERT_EQ_I64(after->fields[4].col, 7);
	T_ASSERT(after->fields[0].type.kind == SL_DDL_INT && !after->fields[0].type.not_null);

	T_ASSERT(!strcmp(tb->cols[1].name, "event_time") && tb->cols[1].computed);
	expect_span(lesson_job, &tb->cols[1].expr, "TO_TIMESTAMP_LTZ(payload.ts_ms, 3)", 16, 17);
	T_ASSERT(tb->has_watermark && !strcmp(tb->wm_col.name, "event_time"));
	T_ASSERT_EQ_I64(tb->wm_col.line, 17);
	T_ASSERT_EQ_I64(tb->wm_col.col, 17);
	expect_span(lesson_job, &tb->wm_expr, "event_time - INTERVAL '5' SECOND", 17, 31);
	T_ASSERT(tb->pk == NULL && tb->npk == 0);
	T_ASSERT_EQ_I64(tb->nopts, 4);
	T_ASSERT(!strcmp(tb->opts[1].key, "path"));
	T_ASSERT(!strcmp(tb->opts[1].value, "@DIR@/orders_cdc.jsonl"));
	T_ASSERT(!strcmp(tb->opts[3].key, "scan.watermark.emit.strategy"));
	T_ASSERT(!strcmp(tb->opts[3].value, "on-event"));
	T_ASSERT_EQ_I64(tb->opts[3].line, 22);
	T_ASSERT_EQ_I64(tb->opts[3].col, 3);

	T_ASSERT(s->stmts[2].kind == SL_DDL_OTHER);
	expect_span(lesson_job, &s->stmts[2].span,
		    "CREATE VIEW orders_current AS\n"
		    "SELECT payload.after.id AS id, event_time\n"
		    "FROM orders_cdc\n"
		    "WHERE payload.op IN ('c', 'u', 'r')",
		    25, 1);
	T_ASSERT(s->stmts[3].kind == SL_DDL_OTHER);
	expect_span(lesson_job, &s->stmts[3].span,
		    "SELECT customer_id, COUNT(*) AS n\n"
		    "FROM orders_current\n"
		    "GROUP BY TUMBLE(event_time, INTERVAL '5' MINUTES), customer_id",
		    30, 1);
	sl_ddl_destroy(s);
}

static void test_types_keys_options(void)
{
	const char *src =
		"CREATE TEMPORARY TABLE IF NOT EXISTS cat.db.`my``t` (\n"
		"  id BIGINT NOT NULL, a DECIMAL, b DECIMAL(5) NULL, v VARCHAR(20), w VARCHAR,\n"
		"  f FLOAT, d DOUBLE, ok BOOLEAN, dt DATE, ts TIMESTAMP, l TIMESTAMP_LTZ(3),\n"
		"  z TIMESTAMP(3) WITH LOCAL TIME ZONE, i INTEGER, s STRING NOT NULL,\n"
		"  r ROW(x INT, y ROW<q STRING>),\n"
		"  c AS CAST(r AS ROW<x INT, y STRING>), e AS f(a, (b + 1)) * 2,\n"
		"  PRIMARY KEY (id, v) NOT ENFORCED\n"
		") WITH ('k' = 'it''s', 'a''b'='', 'x' = ',)')";
	struct sl_ddl_script *s = parse(src);
	const struct sl_ddl_table *tb = &s->stmts[0].table;
	static const enum sl_ddl_type_kind kinds[] = {
		SL_DDL_BIGINT, SL_DDL_DECIMAL,	 SL_DDL_DECIMAL,       SL_DDL_VARCHAR,
		SL_DDL_VARCHAR, SL_DDL_FLOAT,	 SL_DDL_DOUBLE,	       SL_DDL_BOOLEAN,
		SL_DDL_DATE,	SL_DDL_TIMESTAMP, SL_DDL_TIMESTAMP_LTZ, SL_DDL_TIMESTAMP_LTZ,
		SL_DDL_INT,	SL_DDL_STRING,	 SL_DDL_ROW,
	};
	static const uint32_t prec[] = { 0, 10, 5, 20, 1, 0, 0, 0, 0, 6, 3, 3, 0, 0, 0 };

	T_ASSERT_EQ_I64(s->nstmts, 1);
	T_ASSERT(s->stmts[0].kind == SL_DDL_CREATE_TABLE);
	T_ASSERT(!strcmp(tb->name, "cat.db.my`t") && tb->temporary && tb->if_not_exists);
	T_ASSERT_EQ_I64(tb->ncols, 17);
	for (uint32_t i = 0; i < 15; i++) {
		T_ASSERT_EQ_I64(tb->cols[i].type.kind, kinds[i]);
		T_ASSERT_EQ_I64(tb->cols[i].type.precision, prec[i]);
		T_ASSERT(!tb->cols[i].computed);
	}
	T_ASSERT(tb->cols[0].type.not_null && !tb->cols[2].type.not_null);
	T_ASSERT(tb->cols[13].type.not_null);
	T_ASSERT_EQ_I64(tb->cols[1].type.scale, 0);
	T_ASSERT_EQ_I64(tb->cols[14].type.nfields, 2);
	T_ASSERT(tb->cols[14].type.fields[1].type.kind == SL_DDL_ROW);
	T_ASSERT(!strcmp(tb->cols[14].type.fields[1].type.fields[0].name, "q"));
	expect_span(src, &tb->cols[15].expr, "CAST(r AS ROW<x INT, y STRING>)", 6, 8);
	expect_span(src, &tb->cols[16].expr, "f(a, (b + 1)) * 2", 6, 46);
	T_ASSERT(!tb->has_watermark);
	T_ASSERT_EQ_I64(tb->npk, 2);
	T_ASSERT(!strcmp(tb->pk[0].name, "id") && !strcmp(tb->pk[1].name, "v"));
	T_ASSERT_EQ_I64(tb->pk[1].line, 7);
	T_ASSERT_EQ_I64(tb->pk[1].col, 20);
	T_ASSERT_EQ_I64(tb->nopts, 3);
	T_ASSERT(!strcmp(tb->opts[0].key, "k") && !strcmp(tb->opts[0].value, "it's"));
	T_ASSERT(!strcmp(tb->opts[1].key, "a'b") && !strcmp(tb->opts[1].value, ""));
	T_ASSERT(!strcmp(tb->opts[2].value, ",)"));
	/* no ';' at the end: the span still ends at the last ')' */
	T_ASSERT_EQ_I64(s->stmts[0].span.end, strlen(src));
	sl_ddl_destroy(s);

	/* a column-level key; a ROW< in a top-level expression holds its commas */
	src = "CREATE TABLE t (id INT PRIMARY KEY NOT ENFORCED, r AS g(ROW<a INT, b INT>), "
	      "x INT)";
	s = parse(src);
	tb = &s->stmts[0].table;
	T_ASSERT_EQ_I64(tb->npk, 1);
	T_ASSERT(!strcmp(tb->pk[0].name, "id"));
	T_ASSERT_EQ_I64(tb->ncols, 3);
	expect_span(src, &tb->cols[1].expr, "g(ROW<a INT, b INT>)", 1, 55);
	T_ASSERT(tb->nopts == 0);
	sl_ddl_destroy(s);
	src = "CREATE TABLE t (m AS x < y, r AS ROW<a INT, b INT>, k INT)";
	s = parse(src);
	tb = &s->stmts[0].table;
	T_ASSERT_EQ_I64(tb->ncols, 3);
	expect_span(src, &tb->cols[0].expr, "x < y", 1, 22);
	expect_span(src, &tb->cols[1].expr, "ROW<a INT, b INT>", 1, 34);
	sl_ddl_destroy(s);
}

static void test_many_statements(void)
{
	const char *src = "/* header\n comment */ SET 'a' = 'x''y'; ;\n"
			  "-- comment ; with a semicolon\n"
			  "SET 'b'='2'\n"
			  ";INSERT INTO t SELECT ';' FROM s;\n"
			  "EXECUTE STATEMENT SET BEGIN\n"
			  "  INSERT INTO a SELECT * FROM s;\n"
			  "  INSERT INTO b SELECT * FROM s;\n"
			  "END;\n"
			  "EXPLAIN SELECT 1";
	struct sl_ddl_script *s = parse(src);

	T_ASSERT_EQ_I64(s->nstmts, 5);
	T_ASSERT(s->stmts[0].kind == SL_DDL_SET && !strcmp(s->stmts[0].set.value, "x'y"));
	expect_span(src, &s->stmts[0].span, "SET 'a' = 'x''y'", 2, 13);
	T_ASSERT(s->stmts[1].kind == SL_DDL_SET && !strcmp(s->stmts[1].set.key, "b"));
	expect_span(src, &s->stmts[1].span, "SET 'b'='2'", 4, 1);
	T_ASSERT(s->stmts[2].kind == SL_DDL_OTHER);
	expect_span(src, &s->stmts[2].span, "INSERT INTO t SELECT ';' FROM s", 5, 2);
	T_ASSERT(s->stmts[3].kind == SL_DDL_OTHER);
	expect_span(src, &s->stmts[3].span,
		    "EXECUTE STATEMENT SET BEGIN\n"
		    "  INSERT INTO a SELECT * FROM s;\n"
		    "  INSERT INTO b SELECT * FROM s;\n"
		    "END",
		    6, 1);
	expect_span(src, &s->stmts[4].span, "EXPLAIN SELECT 1", 10, 1);
	sl_ddl_destroy(s);

	s = parse("  -- only a comment\n;;");
	T_ASSERT_EQ_I64(s->nstmts, 0);
	sl_ddl_destroy(s);
}

static void expect_error(const char *src, const char *want)
{
	struct sl_ddl_script *s = sl_ddl_parse(src, strlen(src), err, sizeof err);

	if (s || strcmp(err, want)) {
		fprintf(stderr, "'%s':\n  got  '%s'\n  want '%s'\n", src, s ? "(parsed)" : err,
			want);
		exit(T_EXIT_FAIL);
	}
}

static void test_errors(void)
{
	expect_error("SET 'a' = 'b';\n"
		     "CREATE TABLE t (\n"
		     "  a INT, b STRING WITH ('x' = 'y')",
		     "3:19: expected ')' or ',' after column definition, found 'WITH'");
	expect_error("CREATE TABLE t (\n  a INT,\n  e AS f(a\n) WITH ('x'='y')",
		     "4:3: expected ')' or ',' after computed column, found 'WITH'");
	expect_error("CREATE TABLE t (e AS f(a, b) WITH ('x'='y');",
		     "1:30: expected ')' or ',' after computed column, found 'WITH'");
	expect_error("CREATE TABLE t (e AS f(a, (b) WITH ('x'='y');",
		     "1:45: expected ')' to close '(' at 1:23, found ';'");
	expect_error("CREATE TABLE t (e AS f(a, b]", "1:28: expected ')', found ']'");
	expect_error("CREATE TABLE t (e AS f(a, b)", "1:29: expected ')' or ',' after computed "
						    "column, found end of input");
	expect_error("CREATE TABLE t (r AS ROW<a INT, b INT)", "1:38: expected '>', found ')'");
	expect_error("CREATE TABLE t (a INT, e AS , b INT)",
		     "1:29: expected an expression after AS, found ','");
	expect_error("CREATE TABLE t (a INTT)",
		     "1:19: expected a type (BOOLEAN, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, STRING, "
		     "VARCHAR, TIMESTAMP, TIMESTAMP_LTZ, DATE, ROW), found 'INTT'");
	expect_error("CREATE TABLE t (p ROW<a INT, b STRING)",
		     "1:38: expected '>' or ',' after ROW field, found ')'");
	expect_error("CREATE TABLE t (p ROW<a INT,\n  b>)", "2:4: expected a type (BOOLEAN, INT, "
		     "BIGINT, FLOAT, DOUBLE, DECIMAL, STRING, VARCHAR, TIMESTAMP, TIMESTAMP_LTZ, "
		     "DATE, ROW), found '>'");
	expect_error("CREATE TABLE t (d DECIMAL(40, 2))",
		     "1:27: DECIMAL precision must be between 1 and 38, found 40");
	expect_error("CREATE TABLE t (d DECIMAL(4, 5))",
		     "1:30: DECIMAL scale must be between 0 and the precision 4");
	expect_error("CREATE TABLE t (ts TIMESTAMP(3),\n  WATERMARK FOR tz AS ts)",
		     "2:17: WATERMARK FOR names 'tz', which is not a column of t");
	expect_error("CREATE TABLE t (a INT, PRIMARY KEY (a, c) NOT ENFORCED)",
		     "1:40: PRIMARY KEY names 'c', which is not a column of t");
	expect_error("CREATE TABLE t (a INT, PRIMARY KEY (a))",
		     "1:39: expected NOT ENFORCED after PRIMARY KEY (Flink does not enforce keys), "
		     "found ')'");
	expect_error("CREATE TABLE t (a INT, a BIGINT)", "1:24: duplicate column 'a'");
	expect_error("CREATE TABLE t (a INT) WITH ('k' = 'v', 'k' = 'w')",
		     "1:41: duplicate option 'k'");
	expect_error("CREATE TABLE t (a INT) WITH ('k' = v)",
		     "1:36: expected an option value as 'string', found 'v'");
	expect_error("CREATE TABLE t (a INT) WITH ('k' = 'v') PARTITIONED BY (a)",
		     "1:41: expected ';' after CREATE TABLE, found 'PARTITIONED'");
	expect_error("SET 'k' = 'v' 'w';", "1:15: expected ';' after SET 'key' = 'value', found "
					     "string 'w'");
	expect_error("SET k = 'v';", "1:5: expected a 'key' after SET, found 'k'");
	expect_error("SELECT 1;\nFOO bar;", "2:1: expected a statement (SET, CREATE, INSERT, "
					    "SELECT, EXPLAIN, ...), found 'FOO'");
	expect_error("SELECT 'abc", "1:8: unterminated string literal");
	expect_error("CREATE TABLE t (a INT) WITH ('k' = 'v\n",
		     "1:36: unterminated string literal");
	expect_error("BEGIN STATEMENT SET;\nINSERT INTO a SELECT 1;",
		     "2:24: expected END closing the statement set, found end of input");
}

/* Flink's metadata columns: METADATA, FROM 'key', VIRTUAL, alone or together. */
static void test_metadata(void)
{
	const char *src = "CREATE TABLE k (id BIGINT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',\n"
			  "  part INT METADATA VIRTUAL, `offset` BIGINT METADATA FROM 'offset' "
			  "VIRTUAL,\n  topic STRING METADATA) WITH ('connector' = 'kafka');";
	struct sl_ddl_script *s = parse(src);
	const struct sl_ddl_table *tb = &s->stmts[0].table;

	T_ASSERT_EQ_I64(tb->ncols, 5);
	T_ASSERT(!tb->cols[0].metadata);
	T_ASSERT(tb->cols[1].metadata && !tb->cols[1].is_virtual);
	T_ASSERT(!strcmp(tb->cols[1].meta_key, "timestamp"));
	T_ASSERT(tb->cols[1].type.kind == SL_DDL_TIMESTAMP_LTZ);
	T_ASSERT(tb->cols[2].metadata && tb->cols[2].is_virtual && !tb->cols[2].meta_key);
	T_ASSERT(tb->cols[3].metadata && tb->cols[3].is_virtual);
	T_ASSERT(!strcmp(tb->cols[3].meta_key, "offset") && !strcmp(tb->cols[3].name, "offset"));
	T_ASSERT(tb->cols[4].metadata && !tb->cols[4].meta_key);
	sl_ddl_destroy(s);
	src = "CREATE TABLE k (a INT METADATA FROM x) WITH ('a' = 'b');";
	T_ASSERT(!sl_ddl_parse(src, strlen(src), err, sizeof err));
	T_ASSERT(strstr(err, "a metadata key after FROM"));
}

int main(void)
{
	test_metadata();
	test_lesson_job();
	test_types_keys_options();
	test_many_statements();
	test_errors();
	return T_EXIT_PASS;
}
