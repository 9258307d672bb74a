/*
 * eval_test.c - compiled SQL expressions: a table of expressions over one row (every type,
 * UTF-8, NULLs, flattened ROW columns, `match` columns) checked by printed result, type and
 * nullability; run-time error counting; compile errors with their line:col; a property test
 * against SQLite for integer arithmetic, comparisons, CASE and NULL logic, where the two
 * agree; no malloc while evaluating 1M rows, with the throughput of a 5-operator
 * filter + projection printed.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval.h"
#include "test.h"

/* ---- malloc counting (the test links with -Wl,--wrap=malloc,...) ---------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

static uint64_t nallocs;

void *__wrap_malloc(size_t n)
{
	nallocs++;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	nallocs++;
	return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	nallocs++;
	return __real_realloc(p, n);
}

/* ---- the test row ---------------------------------------------------------------------- */

enum {
	F_I,
	F_J,
	F_B,
	F_N,
	F_D,
	F_E,
	F_F,
	F_G,
	F_S,
	F_U,
	F_NS,
	F_TS,
	F_LT,
	F_DT,
	F_FLAG,
	F_NB,
	F_PID,
	F_POP,
	F_CUR,
	F_SEL,
	F_SUM,
	F_CNT,
	F_TSTART,
	F_OAMT,
	F_PAMT,
	F_NFIELDS
};

#define TS_MS	1706674771784LL /* 2024-01-31 04:19:31.784 */
#define DT_DAYS 19782		/* 2024-02-29 */

static struct sl_expr *m_sum, *m_cnt, *m_tstart;

/* a timestamp column as a TIMESTAMP(3) table column is */
static struct sl_sql_type ty(enum sl_type t, bool nullable)
{
	int prec = t == SL_TYPE_TIMESTAMP || t == SL_TYPE_TIMESTAMP_LTZ ? SL_TS_PREC_DEFAULT : 0;

	return (struct sl_sql_type){ .type = t, .prec = prec, .nullable = nullable };
}

static struct sl_sql_type tdec(int p, int s, bool nullable)
{
	return (struct sl_sql_type){
		.type = SL_TYPE_DECIMAL, .prec = p, .scale = s, .nullable = nullable
	};
}

static struct sl_sql_col cols[F_NFIELDS];
static struct sl_scope scope = { cols, F_NFIELDS };

static struct sl_expr *parse(const char *src)
{
	char err[256];
	struct sl_expr *e = sl_expr_parse_str(src, strlen(src), err, sizeof err);

	if (!e) {
		fprintf(stderr, "parse of '%s' failed: %s\n", src, err);
		exit(T_EXIT_FAIL);
	}
	return e;
}

static void setup_scope(void)
{
	static const struct {
		const char *qual, *name;
		int field;
	} names[] = {
		{ NULL, "i", F_I },
		{ NULL, "j", F_J },
		{ NULL, "b", F_B },
		{ NULL, "n", F_N },
		{ NULL, "d", F_D },
		{ NULL, "e", F_E },
		{ NULL, "f", F_F },
		{ NULL, "g", F_G },
		{ NULL, "s", F_S },
		{ NULL, "u", F_U },
		{ NULL, "ns", F_NS },
		{ "t", "ts", F_TS },
		{ "t", "lt", F_LT },
		{ NULL, "dt", F_DT },
		{ NULL, "flag", F_FLAG },
		{ NULL, "nb", F_NB },
		{ NULL, "payload.after.id", F_PID },
		{ NULL, "payload.op", F_POP },
		{ "o", "currency", F_CUR },
		{ NULL, "select", F_SEL },
		{ NULL, NULL, F_SUM },
		{ NULL, NULL, F_CNT },
		{ NULL, NULL, F_TSTART },
		{ "o", "amount", F_OAMT },
		{ "p", "amount", F_PAMT },
	};
	struct sl_sql_type types[F_NFIELDS] = {
		[F_I] = ty(SL_TYPE_INT, false),
		[F_J] = ty(SL_TYPE_INT, false),
		[F_B] = ty(SL_TYPE_BIGINT, false),
		[F_N] = ty(SL_TYPE_INT, true),
		[F_D] = tdec(10, 2, false),
		[F_E] = tdec(5, 3, false),
		[F_F] = ty(SL_TYPE_DOUBLE, false),
		[F_G] = ty(SL_TYPE_FLOAT, false),
		[F_S] = ty(SL_TYPE_STRING, false),
		[F_U] = ty(SL_TYPE_STRING, false),
		[F_NS] = ty(SL_TYPE_STRING, true),
		[F_TS] = ty(SL_TYPE_TIMESTAMP, false),
		[F_LT] = ty(SL_TYPE_TIMESTAMP_LTZ, false),
		[F_DT] = ty(SL_TYPE_DATE, false),
		[F_FLAG] = ty(SL_TYPE_BOOL, false),
		[F_NB] = ty(SL_TYPE_BOOL, true),
		[F_PID] = ty(SL_TYPE_BIGINT, true),
		[F_POP] = ty(SL_TYPE_STRING, true),
		[F_CUR] = ty(SL_TYPE_STRING, false),
		[F_SEL] = ty(SL_TYPE_STRING, false),
		[F_SUM] = tdec(18, 2, true),
		[F_CNT] = ty(SL_TYPE_BIGINT, false),
		[F_TSTART] = ty(SL_TYPE_TIMESTAMP, false),
		[F_OAMT] = tdec(10, 2, false),
		[F_PAMT] = tdec(10, 2, false),
	};

	m_sum = parse("SUM(amount)");
	m_cnt = parse("COUNT(*)");
	m_tstart = parse("TUMBLE_START(ts, INTERVAL '5' MINUTE)");
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		struct sl_sql_col *c = &cols[names[k].field];

		c->qual = names[k].qual;
		c->name = names[k].name;
		c->field = names[k].field;
		c->type = types[names[k].field];
	}
	cols[F_SUM].match = m_sum;
	cols[F_CNT].match = m_cnt;
	cols[F_TSTART].match = m_tstart;
}

static uint64_t rowbuf[512];

static const struct sl_row *make_row(void)
{
	struct sl_row_builder b;

	sl_rowb_init(&b, rowbuf, sizeof rowbuf, F_NFIELDS);
	sl_rowb_set_i64(&b, F_I, 7);
	sl_rowb_set_i64(&b, F_J, -3);
	sl_rowb_set_i64(&b, F_B, 10000000000LL);
	sl_rowb_set_i64(&b, F_D, 15480);
	sl_rowb_set_i64(&b, F_E, 1005);
	sl_rowb_set_f64(&b, F_F, 2.5);
	sl_rowb_set_f64(&b, F_G, (double)0.1f);
	sl_rowb_set_str(&b, F_S, "Hello World", 11);
	sl_rowb_set_str(&b, F_U, "h\xc3\xa9llo w\xc3\xb6rld", 13);
	sl_rowb_set_i64(&b, F_TS, TS_MS);
	sl_rowb_set_i64(&b, F_LT, TS_MS);
	sl_rowb_set_i64(&b, F_DT, DT_DAYS);
	sl_rowb_set_bool(&b, F_FLAG, true);
	sl_rowb_set_i64(&b, F_PID, 42);
	sl_rowb_set_str(&b, F_POP, "u", 1);
	sl_rowb_set_str(&b, F_CUR, "EUR", 3);
	sl_rowb_set_str(&b, F_SEL, "kw", 2);
	sl_rowb_set_i64(&b, F_SUM, 100050);
	sl_rowb_set_i64(&b, F_CNT, 4);
	sl_rowb_set_i64(&b, F_TSTART, TS_MS - 271784); /* 04:15:00 */
	sl_rowb_set_i64(&b, F_OAMT, 1234);
	sl_rowb_set_i64(&b, F_PAMT, 500);
	T_ASSERT(sl_rowb_finish(&b));
	return (const struct sl_row *)rowbuf;
}

static void format_val(const struct sl_val *v, const struct sl_sql_type *t, char *buf, size_t cap)
{
	if (v->null) {
		snprintf(buf, cap, "NULL");
		return;
	}
	if (t->interval) {
		snprintf(buf, cap, "%lld", (long long)v->i);
		return;
	}
	switch (t->type) {
	case SL_TYPE_BOOL:
		snprintf(buf, cap, "%s", v->i ? "TRUE" : "FALSE");
		break;
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
		snprintf(buf, cap, "%lld", (long long)v->i);
		break;
	case SL_TYPE_FLOAT:
		sl_float_format((float)v->f, buf, cap);
		break;
	case SL_TYPE_DOUBLE:
		sl_double_format(v->f, buf, cap);
		break;
	case SL_TYPE_DECIMAL:
		sl_decimal_format(v->i, t->scale, buf, cap);
		break;
	case SL_TYPE_STRING:
		snprintf(buf, cap, "'%.*s'", (int)v->s.len, v->s.p);
		break;
	case SL_TYPE_DATE:
		sl_date_format(v->i, buf, cap);
		break;
	case SL_TYPE_TIMESTAMP:
	case SL_TYPE_TIMESTAMP_LTZ:
		sl_ts_format(v->i, buf, cap);
		break;
	}
}

static char scratch[SL_EVAL_SCRATCH];
static struct sl_eval_ctx ec = { .scratch = scratch,
				 .scratch_cap = sizeof scratch,
				 .proctime_ms = 1000 };
static int failures;

/* One table row: expression, printed result, type, nullable (0, 1; -1: either), errors. */
struct tcase {
	const char *src;
	const char *want;
	const char *type;
	int nullable;
	int errors;
};

static void check(const struct tcase *tc, const struct sl_row *row)
{
	struct sl_expr *e = parse(tc->src);
	struct sl_sql_type t;
	char err[256], got[256], tn[64];
	struct sl_prog *p = sl_prog_compile(e, &scope, NULL, &t, err, sizeof err);
	struct sl_val v;
	uint64_t errs0 = ec.errors;

	if (!p) {
		fprintf(stderr, "FAIL %s: compile error: %s\n", tc->src, err);
		failures++;
		sl_expr_destroy(e);
		return;
	}
	sl_prog_eval(p, row, &ec, &v);
	format_val(&v, &t, got, sizeof got);
	sl_sql_type_name(&t, tn, sizeof tn);
	if (strcmp(got, tc->want) || strcmp(tn, tc->type) ||
	    (tc->nullable >= 0 && t.nullable != (tc->nullable == 1)) ||
	    ec.errors - errs0 != (uint64_t)tc->errors) {
		fprintf(stderr, "FAIL %s: got %s %s%s (%llu errors), want %s %s%s (%d errors)\n",
			tc->src, got, tn, t.nullable ? " NULL" : "",
			(unsigned long long)(ec.errors - errs0), tc->want, tc->type,
			tc->nullable == 1   ? " NULL"
			: tc->nullable == 0 ? ""
					    : " ?",
			tc->errors);
		failures++;
	}
	/* a predicate agrees with the value */
	if (t.type == SL_TYPE_BOOL && !t.null_type)
		T_ASSERT(sl_prog_eval_pred(p, row, &ec) == (!v.null && v.i));
	sl_prog_destroy(p);
	sl_expr_destroy(e);
}

static const struct tcase cases[] = {
	/* arithmetic: Java wrap-around, truncating division, Flink's DECIMAL types */
	{ "1 + 2", "3", "INT", 0, 0 },
	{ "i + j", "4", "INT", 0, 0 },
	{ "i - j", "10", "INT", 0, 0 },
	{ "i * j", "-21", "INT", 0, 0 },
	{ "i / 2", "3", "INT", 0, 0 },
	{ "j / 2", "-1", "INT", 0, 0 },
	{ "i % 3", "1", "INT", 0, 0 },
	{ "j % 2", "-1", "INT", 0, 0 },
	{ "MOD(j, 2)", "-1", "INT", 0, 0 },
	{ "i / 0", "NULL", "INT", 1, 1 },
	{ "i % (j + 3)", "NULL", "INT", 1, 1 },
	{ "i / j", "-2", "INT", 1, 0 },
	{ "2147483647 + 1", "-2147483648", "INT", 0, 0 },
	{ "-2147483647 - 2", "2147483647", "INT", 0, 0 },
	{ "b * 1000000000", "-8446744073709551616", "BIGINT", 0, 0 },
	{ "i + b", "10000000007", "BIGINT", 0, 0 },
	{ "-i", "-7", "INT", 0, 0 },
	{ "- -i", "7", "INT", 0, 0 },
	{ "+i", "7", "INT", 0, 0 },
	{ "i + 1.5", "8.5", "DECIMAL(12, 1)", 0, 0 },
	{ "d + e", "155.805", "DECIMAL(12, 3)", 0, 0 },
	{ "d * e", "155.57400", "DECIMAL(16, 5)", 0, 0 },
	{ "d / 4", "38.7000000000000", "DECIMAL(18, 13)", 1, 0 },
	{ "d - d", "0.00", "DECIMAL(11, 2)", 0, 0 },
	{ "d * 2", "309.60", "DECIMAL(18, 2)", 1, 0 },
	{ "d / 0", "NULL", "DECIMAL(18, 13)", 1, 1 },
	{ "d % 10", "4.80", "DECIMAL(10, 2)", 0, 0 },
	{ "-d", "-154.80", "DECIMAL(10, 2)", 0, 0 },
	{ "1.5 + 2.25", "3.75", "DECIMAL(4, 2)", 0, 0 },
	{ "0.1 + 0.2", "0.3", "DECIMAL(2, 1)", 0, 0 },
	{ "0.05", "0.05", "DECIMAL(2, 2)", 0, 0 },
	{ "10.00 / 3", "3.3333333333333", "DECIMAL(15, 13)", 0, 0 },
	{ "f * 2", "5.0", "DOUBLE", 0, 0 },
	{ "f / 0", "Infinity", "DOUBLE", 0, 0 },
	{ "g + 1", "1.1", "FLOAT", 0, 0 },
	{ "i + f", "9.5", "DOUBLE", 0, 0 },
	{ "d + f", "157.3", "DOUBLE", 0, 0 },
	{ "d + g", "154.90001", "FLOAT", 0, 0 },
	{ "1e3 + 0.5", "1000.5", "DOUBLE", 0, 0 },
	{ "n + 1", "NULL", "INT", 1, 0 },
	{ "NULL", "NULL", "NULL", 1, 0 },
	{ "NULL + 1", "NULL", "INT", 1, 0 },
	{ "99999999999999999.9 * 10", "NULL", "DECIMAL(18, 1)", 1, 1 },
	{ "CAST(e AS DECIMAL(30, 25)) + CAST(1 AS DECIMAL(5, 0))", "2.005000000000",
	  "DECIMAL(18, 12)", 1, 0 },
	{ "CAST(e AS DECIMAL(30, 25)) > 1", "TRUE", "BOOLEAN", 0, 0 },
	{ "CAST(e AS DECIMAL(30, 25)) * CAST(d AS DECIMAL(8, 2))", "155.574000", "DECIMAL(18, 6)",
	  1, 0 },
	{ "d * d * d * d", "574227286.041600", "DECIMAL(18, 6)", 1, 0 },
	{ "d * d * d * d * d", "88890383879.239680", "DECIMAL(18, 6)", 1, 0 },
	{ "d * d * d * d * d * d", "NULL", "DECIMAL(18, 6)", 1, 1 },
	/* comparisons with widening */
	{ "i > j", "TRUE", "BOOLEAN", 0, 0 },
	{ "i = 7", "TRUE", "BOOLEAN", 0, 0 },
	{ "i <> 7", "FALSE", "BOOLEAN", 0, 0 },
	{ "i != 8", "TRUE", "BOOLEAN", 0, 0 },
	{ "i >= b", "FALSE", "BOOLEAN", 0, 0 },
	{ "d > 100", "TRUE", "BOOLEAN", 0, 0 },
	{ "d = 154.8", "TRUE", "BOOLEAN", 0, 0 },
	{ "e < 1.01", "TRUE", "BOOLEAN", 0, 0 },
	{ "f > i", "FALSE", "BOOLEAN", 0, 0 },
	{ "f = 2.5", "TRUE", "BOOLEAN", 0, 0 },
	{ "CAST(g AS DOUBLE) > 0.1", "TRUE", "BOOLEAN", 0, 0 },
	{ "s = 'Hello World'", "TRUE", "BOOLEAN", 0, 0 },
	{ "s < 'Hello'", "FALSE", "BOOLEAN", 0, 0 },
	{ "'a' < 'b'", "TRUE", "BOOLEAN", 0, 0 },
	{ "u > s", "TRUE", "BOOLEAN", 0, 0 },
	{ "n = 1", "NULL", "BOOLEAN", 1, 0 },
	{ "n <> n", "NULL", "BOOLEAN", 1, 0 },
	{ "ts > TIMESTAMP '2024-01-01 00:00:00'", "TRUE", "BOOLEAN", 0, 0 },
	{ "ts < '2024-02-01'", "TRUE", "BOOLEAN", 0, 0 },
	{ "ts = '2024-01-31 04:19:31.784'", "TRUE", "BOOLEAN", 0, 0 },
	{ "dt > DATE '2024-02-28'", "TRUE", "BOOLEAN", 0, 0 },
	{ "dt < ts", "FALSE", "BOOLEAN", 0, 0 },
	{ "lt = ts", "TRUE", "BOOLEAN", 0, 0 },
	{ "flag = TRUE", "TRUE", "BOOLEAN", 0, 0 },
	{ "nb = TRUE", "NULL", "BOOLEAN", 1, 0 },
	{ "INTERVAL '1' MINUTE > INTERVAL '59' SECOND", "TRUE", "BOOLEAN", 0, 0 },
	/* three-valued logic */
	{ "flag AND i > 0", "TRUE", "BOOLEAN", 0, 0 },
	{ "nb AND FALSE", "FALSE", "BOOLEAN", 1, 0 },
	{ "FALSE AND nb", "FALSE", "BOOLEAN", 1, 0 },
	{ "nb OR TRUE", "TRUE", "BOOLEAN", 1, 0 },
	{ "nb AND TRUE", "NULL", "BOOLEAN", 1, 0 },
	{ "nb OR FALSE", "NULL", "BOOLEAN", 1, 0 },
	{ "NOT flag", "FALSE", "BOOLEAN", 0, 0 },
	{ "NOT nb", "NULL", "BOOLEAN", 1, 0 },
	{ "i > 0 OR n > 0", "TRUE", "BOOLEAN", 1, 0 },
	{ "n > 0 OR i < 0", "NULL", "BOOLEAN", 1, 0 },
	{ "n > 0 AND i < 0", "FALSE", "BOOLEAN", 1, 0 },
	{ "j <> 0 AND i / j < 0", "TRUE", "BOOLEAN", 1, 0 },
	{ "j = 0 AND i / (j + 3) < 0", "FALSE", "BOOLEAN", 1, 0 },
	/* IS */
	{ "n IS NULL", "TRUE", "BOOLEAN", 0, 0 },
	{ "n IS NOT NULL", "FALSE", "BOOLEAN", 0, 0 },
	{ "s IS NOT NULL", "TRUE", "BOOLEAN", 0, 0 },
	{ "nb IS TRUE", "FALSE", "BOOLEAN", 0, 0 },
	{ "nb IS NOT TRUE", "TRUE", "BOOLEAN", 0, 0 },
	{ "nb IS FALSE", "FALSE", "BOOLEAN", 0, 0 },
	{ "nb IS NOT FALSE", "TRUE", "BOOLEAN", 0, 0 },
	{ "flag IS TRUE", "TRUE", "BOOLEAN", 0, 0 },
	{ "(i > 100) IS FALSE", "TRUE", "BOOLEAN", 0, 0 },
	/* BETWEEN, IN */
	{ "i BETWEEN 1 AND 10", "TRUE", "BOOLEAN", 0, 0 },
	{ "i NOT BETWEEN 1 AND 10", "FALSE", "BOOLEAN", 0, 0 },
	{ "d BETWEEN 100 AND 200.5", "TRUE", "BOOLEAN", 0, 0 },
	{ "n BETWEEN 1 AND 2", "NULL", "BOOLEAN", 1, 0 },
	{ "s BETWEEN 'A' AND 'I'", "TRUE", "BOOLEAN", 0, 0 },
	{ "ts BETWEEN '2024-01-31' AND '2024-02-01'", "TRUE", "BOOLEAN", 0, 0 },
	{ "i IN (1, 7, 9)", "TRUE", "BOOLEAN", 0, 0 },
	{ "i IN (1, 2)", "FALSE", "BOOLEAN", 0, 0 },
	{ "i NOT IN (1, 2)", "TRUE", "BOOLEAN", 0, 0 },
	{ "i IN (1, NULL)", "NULL", "BOOLEAN", 1, 0 },
	{ "i IN (7, NULL)", "TRUE", "BOOLEAN", 1, 0 },
	{ "i NOT IN (1, NULL)", "NULL", "BOOLEAN", 1, 0 },
	{ "s IN ('a', 'Hello World')", "TRUE", "BOOLEAN", 0, 0 },
	{ "d IN (154.8, 1)", "TRUE", "BOOLEAN", 0, 0 },
	{ "b IN (10000000000, 1)", "TRUE", "BOOLEAN", 0, 0 },
	{ "i IN (j, 7)", "TRUE", "BOOLEAN", 0, 0 },
	{ "i IN (j, n)", "NULL", "BOOLEAN", 1, 0 },
	{ "n IN (1, 2)", "NULL", "BOOLEAN", 1, 0 },
	{ "f IN (2.5, 3)", "TRUE", "BOOLEAN", 0, 0 },
	{ "payload.op IN ('c', 'u')", "TRUE", "BOOLEAN", 1, 0 },
	{ "dt IN (DATE '2024-02-29')", "TRUE", "BOOLEAN", 0, 0 },
	{ "ts IN ('2024-01-31 04:19:31.784')", "TRUE", "BOOLEAN", 0, 0 },
	/* LIKE */
	{ "s LIKE 'Hello%'", "TRUE", "BOOLEAN", 0, 0 },
	{ "s LIKE '%World'", "TRUE", "BOOLEAN", 0, 0 },
	{ "s LIKE '%lo W%'", "TRUE", "BOOLEAN", 0, 0 },
	{ "s LIKE 'H_llo%'", "TRUE", "BOOLEAN", 0, 0 },
	{ "s LIKE 'Hello World'", "TRUE", "BOOLEAN", 0, 0 },
	{ "s LIKE 'hello%'", "FALSE", "BOOLEAN", 0, 0 },
	{ "s NOT LIKE '%x%'", "TRUE", "BOOLEAN", 0, 0 },
	{ "s LIKE '%o%o%'", "TRUE", "BOOLEAN", 0, 0 },
	{ "s LIKE '%o%x%'", "FALSE", "BOOLEAN", 0, 0 },
	{ "u LIKE 'h_llo%'", "TRUE", "BOOLEAN", 0, 0 },
	{ "u LIKE 'h__llo%'", "FALSE", "BOOLEAN", 0, 0 },
	{ "u LIKE '%w_rld'", "TRUE", "BOOLEAN", 0, 0 },
	{ "s LIKE s", "TRUE", "BOOLEAN", 0, 0 },
	{ "ns LIKE 'a'", "NULL", "BOOLEAN", 1, 0 },
	{ "'100%' LIKE '100\\%'", "TRUE", "BOOLEAN", 0, 0 },
	{ "'1000' LIKE '100\\%'", "FALSE", "BOOLEAN", 0, 0 },
	{ "'' LIKE '%'", "TRUE", "BOOLEAN", 0, 0 },
	/* CASE, COALESCE, IF, NULLIF */
	{ "CASE WHEN i > 5 THEN 'big' ELSE 'small' END", "'big'", "STRING", 0, 0 },
	{ "CASE WHEN i > 50 THEN 'big' END", "NULL", "STRING", 1, 0 },
	{ "CASE i WHEN 1 THEN 'one' WHEN 7 THEN 'seven' END", "'seven'", "STRING", 1, 0 },
	{ "CASE WHEN n > 0 THEN 1 ELSE 2 END", "2", "INT", 0, 0 },
	{ "CASE WHEN i > 0 THEN 1 ELSE 2.5 END", "1.0", "DECIMAL(11, 1)", 0, 0 },
	{ "CASE WHEN i > 0 THEN i ELSE b END", "7", "BIGINT", 0, 0 },
	{ "CASE WHEN j <> 0 THEN i / j ELSE 0 END", "-2", "INT", 1, 0 },
	{ "CASE WHEN j = -3 THEN NULL ELSE 1 END", "NULL", "INT", 1, 0 },
	{ "CASE WHEN i > 0 THEN f ELSE i END", "2.5", "DOUBLE", 0, 0 },
	{ "CASE WHEN i < 0 THEN 'neg' WHEN i = 0 THEN 'zero' ELSE s END", "'Hello World'", "STRING",
	  0, 0 },
	{ "CASE WHEN nb THEN 1 WHEN flag THEN 2 END", "2", "INT", 1, 0 },
	{ "COALESCE(n, i)", "7", "INT", 0, 0 },
	{ "COALESCE(n, NULL, 3)", "3", "INT", 0, 0 },
	{ "COALESCE(ns, s)", "'Hello World'", "STRING", 0, 0 },
	{ "COALESCE(n, b)", "10000000000", "BIGINT", 0, 0 },
	{ "COALESCE(n, 1.5)", "1.5", "DECIMAL(11, 1)", 0, 0 },
	{ "COALESCE(n, n)", "NULL", "INT", 1, 0 },
	{ "IF(i > 5, 'y', 'n')", "'y'", "STRING", 0, 0 },
	{ "IF(nb, 1, 2)", "2", "INT", 0, 0 },
	{ "IFNULL(n, 0)", "0", "INT", 0, 0 },
	{ "NULLIF(i, 7)", "NULL", "INT", 1, 0 },
	{ "NULLIF(i, 8)", "7", "INT", 1, 0 },
	/* CAST */
	{ "CAST(i AS STRING)", "'7'", "STRING", 0, 0 },
	{ "CAST(j AS VARCHAR(10))", "'-3'", "STRING", 0, 0 },
	{ "CAST(d AS STRING)", "'154.80'", "STRING", 0, 0 },
	{ "CAST(f AS STRING)", "'2.5'", "STRING", 0, 0 },
	{ "CAST(g AS STRING)", "'0.1'", "STRING", 0, 0 },
	{ "CAST(flag AS STRING)", "'TRUE'", "STRING", 0, 0 },
	{ "CAST(ts AS STRING)", "'2024-01-31 04:19:31.784'", "STRING", 0, 0 },
	{ "CAST(dt AS STRING)", "'2024-02-29'", "STRING", 0, 0 },
	{ "CAST('42' AS INT)", "42", "INT", 0, 0 },
	{ "CAST(' 42 ' AS INT)", "42", "INT", 0, 0 },
	{ "CAST('4x' AS INT)", "NULL", "INT", 1, 1 },
	{ "CAST('99999999999' AS INT)", "NULL", "INT", 1, 1 },
	{ "CAST(s AS INT)", "NULL", "INT", 1, 1 },
	{ "CAST('3.14159' AS DECIMAL(5, 2))", "3.14", "DECIMAL(5, 2)", 0, 0 },
	{ "CAST('-1.5e0' AS DOUBLE)", "-1.5", "DOUBLE", 0, 0 },
	{ "CAST(d AS INT)", "154", "INT", 0, 0 },
	{ "CAST(-1.5 AS INT)", "-1", "INT", 0, 0 },
	{ "CAST(f AS INT)", "2", "INT", 0, 0 },
	{ "CAST(d AS DECIMAL(5, 1))", "154.8", "DECIMAL(5, 1)", 1, 0 },
	{ "CAST(e AS DECIMAL(5, 2))", "1.01", "DECIMAL(5, 2)", 0, 0 },
	{ "CAST(d AS DECIMAL(3, 0))", "155", "DECIMAL(3, 0)", 1, 0 },
	{ "CAST(d AS DECIMAL(2, 0))", "NULL", "DECIMAL(2, 0)", 1, 1 },
	{ "CAST(i AS DOUBLE)", "7.0", "DOUBLE", 0, 0 },
	{ "CAST(d AS DOUBLE)", "154.8", "DOUBLE", 0, 0 },
	{ "CAST(f AS DECIMAL(4, 2))", "2.50", "DECIMAL(4, 2)", 1, 0 },
	{ "CAST(g AS DECIMAL(4, 2))", "0.10", "DECIMAL(4, 2)", 1, 0 },
	{ "CAST('2024-03-01 10:00:00' AS TIMESTAMP)", "2024-03-01 10:00:00.000", "TIMESTAMP(6)", 0,
	  0 },
	/* Flink: CAST to TIMESTAMP(p < 3) zeroes the digits past p; the string shows p digits */
	{ "CAST(ts AS TIMESTAMP(0))", "2024-01-31 04:19:31.000", "TIMESTAMP(0)", 0, 0 },
	{ "CAST(ts AS TIMESTAMP(1))", "2024-01-31 04:19:31.700", "TIMESTAMP(1)", 0, 0 },
	{ "CAST(CAST(ts AS TIMESTAMP(0)) AS STRING)", "'2024-01-31 04:19:31'", "STRING", 0, 0 },
	{ "CAST(CAST(ts AS TIMESTAMP(2)) AS STRING)", "'2024-01-31 04:19:31.78'", "STRING", 0, 0 },
	{ "CAST(CAST(ts AS TIMESTAMP(6)) AS STRING)", "'2024-01-31 04:19:31.784000'", "STRING", 0,
	  0 },
	{ "CAST(TIMESTAMP '2024-01-31 04:19:31' AS STRING)", "'2024-01-31 04:19:31'", "STRING", 0,
	  0 },
	{ "TIMESTAMP '2024-01-31 04:19:31.5'", "2024-01-31 04:19:31.500", "TIMESTAMP(1)", 0, 0 },
	{ "CAST('2024-03-01' AS DATE)", "2024-03-01", "DATE", 0, 0 },
	{ "CAST('2024-02-30' AS DATE)", "NULL", "DATE", 1, 1 },
	{ "CAST(ts AS DATE)", "2024-01-31", "DATE", 0, 0 },
	{ "CAST(dt AS TIMESTAMP)", "2024-02-29 00:00:00.000", "TIMESTAMP(6)", 0, 0 },
	{ "CAST(lt AS TIMESTAMP)", "2024-01-31 04:19:31.784", "TIMESTAMP(6)", 0, 0 },
	{ "CAST(lt AS BIGINT)", "1706674771", "BIGINT", 0, 0 },
	{ "CAST(1706674771 AS TIMESTAMP_LTZ(3))", "2024-01-31 04:19:31.000", "TIMESTAMP_LTZ(3)", 0,
	  0 },
	{ "CAST('true' AS BOOLEAN)", "TRUE", "BOOLEAN", 0, 0 },
	{ "CAST('maybe' AS BOOLEAN)", "NULL", "BOOLEAN", 1, 1 },
	{ "CAST(i AS BOOLEAN)", "TRUE", "BOOLEAN", 0, 0 },
	{ "CAST(i AS BIGINT) * b", "70000000000", "BIGINT", 0, 0 },
	{ "CAST(b AS INT)", "1410065408", "INT", 0, 0 },
	{ "CAST(s AS VARCHAR(5))", "'Hello'", "STRING", 0, 0 },
	{ "CAST(u AS VARCHAR(2))", "'h\xc3\xa9'", "STRING", 0, 0 },
	{ "CAST(NULL AS INT)", "NULL", "INT", 1, 0 },
	{ "CAST(n AS STRING)", "NULL", "STRING", 1, 0 },
	/* strings, UTF-8 */
	{ "UPPER(s)", "'HELLO WORLD'", "STRING", 0, 0 },
	{ "LOWER(s)", "'hello world'", "STRING", 0, 0 },
	{ "UPPER(u)", "'H\xc3\x89LLO W\xc3\x96RLD'", "STRING", 0, 0 },
	{ "upper(ns)", "NULL", "STRING", 1, 0 },
	{ "INITCAP('hello wORLD')", "'Hello World'", "STRING", 0, 0 },
	{ "CONCAT(s, '!')", "'Hello World!'", "STRING", 0, 0 },
	{ "CONCAT(s, ns)", "NULL", "STRING", 1, 0 },
	{ "CONCAT_WS('-', 'a', ns, 'b')", "'a-b'", "STRING", 0, 0 },
	{ "CONCAT_WS(ns, 'a', 'b')", "NULL", "STRING", 1, 0 },
	{ "s || '?'", "'Hello World?'", "STRING", 0, 0 },
	{ "ns || 'x'", "NULL", "STRING", 1, 0 },
	{ "'a' || 'b' || 'c'", "'abc'", "STRING", 0, 0 },
	{ "SUBSTRING(s, 1, 5)", "'Hello'", "STRING", 1, 0 },
	{ "SUBSTRING(s, 7)", "'World'", "STRING", 0, 0 },
	{ "SUBSTRING(u, 2, 3)", "'\xc3\xa9ll'", "STRING", 1, 0 },
	{ "SUBSTR(s, -5)", "'World'", "STRING", 0, 0 },
	{ "SUBSTRING(s, 0, 2)", "'He'", "STRING", 1, 0 },
	{ "SUBSTRING(s, 20)", "''", "STRING", 0, 0 },
	{ "SUBSTRING(s, 2, -1)", "NULL", "STRING", 1, 0 },
	{ "TRIM('  ab  ')", "'ab'", "STRING", 0, 0 },
	{ "LTRIM('  ab  ')", "'ab  '", "STRING", 0, 0 },
	{ "RTRIM('  ab  ')", "'  ab'", "STRING", 0, 0 },
	{ "BTRIM('xxabxx', 'x')", "'ab'", "STRING", 0, 0 },
	{ "LTRIM('\xc3\xa9\xc3\xa9z', '\xc3\xa9')", "'z'", "STRING", 0, 0 },
	{ "CHAR_LENGTH(s)", "11", "INT", 0, 0 },
	{ "CHAR_LENGTH(u)", "11", "INT", 0, 0 },
	{ "CHARACTER_LENGTH('')", "0", "INT", 0, 0 },
	{ "REPLACE(s, 'o', '0')", "'Hell0 W0rld'", "STRING", 0, 0 },
	{ "REPLACE(s, 'World', '')", "'Hello '", "STRING", 0, 0 },
	{ "LOCATE('World', s)", "7", "INT", 0, 0 },
	{ "LOCATE('x', s)", "0", "INT", 0, 0 },
	{ "LOCATE('l', u)", "3", "INT", 0, 0 },
	{ "LOCATE('o', s, 6)", "8", "INT", 0, 0 },
	/* time */
	{ "TO_TIMESTAMP('2024-01-31 04:19:31')", "2024-01-31 04:19:31.000", "TIMESTAMP(3)", 0, 0 },
	{ "TO_TIMESTAMP('2024-01-31 04:19:31.5')", "2024-01-31 04:19:31.500", "TIMESTAMP(3)", 0,
	  0 },
	{ "TO_TIMESTAMP('31/01/2024 04:19', 'dd/MM/yyyy HH:mm')", "2024-01-31 04:19:00.000",
	  "TIMESTAMP(3)", 0, 0 },
	{ "TO_TIMESTAMP('20240131041931123', 'yyyyMMddHHmmssSSS')", "2024-01-31 04:19:31.123",
	  "TIMESTAMP(3)", 0, 0 },
	{ "TO_TIMESTAMP('2024-01-31T04:19:31Z', 'yyyy-MM-dd''T''HH:mm:ss''Z''')",
	  "2024-01-31 04:19:31.000", "TIMESTAMP(3)", 0, 0 },
	{ "TO_TIMESTAMP('garbage')", "NULL", "TIMESTAMP(3)", 1, 0 },
	{ "TO_TIMESTAMP(s, 'yyyy')", "NULL", "TIMESTAMP(3)", 1, 0 },
	{ "TO_TIMESTAMP_LTZ(1706674771784, 3)", "2024-01-31 04:19:31.784", "TIMESTAMP_LTZ(3)", 0,
	  0 },
	{ "TO_TIMESTAMP_LTZ(1706674771, 0)", "2024-01-31 04:19:31.000", "TIMESTAMP_LTZ(3)", 0, 0 },
	{ "TO_TIMESTAMP_LTZ(b, 3)", "1970-04-26 17:46:40.000", "TIMESTAMP_LTZ(3)", 0, 0 },
	{ "FROM_UNIXTIME(0)", "'1970-01-01 00:00:00'", "STRING", 0, 0 },
	{ "FROM_UNIXTIME(86400, 'yyyy/MM/dd')", "'1970/01/02'", "STRING", 0, 0 },
	{ "UNIX_TIMESTAMP('1970-01-02 00:00:00')", "86400", "BIGINT", 0, 0 },
	{ "UNIX_TIMESTAMP('02.01.1970', 'dd.MM.yyyy')", "86400", "BIGINT", 0, 0 },
	{ "DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm')", "'2024-01-31 04:19'", "STRING", 0, 0 },
	{ "DATE_FORMAT(ts, 'HH:mm:ss.SSS')", "'04:19:31.784'", "STRING", 0, 0 },
	{ "DATE_FORMAT(ts, 'hh:mm a')", "'04:19 AM'", "STRING", 0, 0 },
	{ "DATE_FORMAT('2024-05-06 07:08:09', 'yyyyMMdd')", "'20240506'", "STRING", 0, 0 },
	{ "DATE_FORMAT(dt, 'dd.MM.yy')", "'29.02.24'", "STRING", 0, 0 },
	{ "DATE_FORMAT(lt, 'yyyy-MM-dd')", "'2024-01-31'", "STRING", 0, 0 },
	{ "FLOOR(ts TO MINUTE)", "2024-01-31 04:19:00.000", "TIMESTAMP(3)", 0, 0 },
	{ "CEIL(ts TO HOUR)", "2024-01-31 05:00:00.000", "TIMESTAMP(3)", 0, 0 },
	{ "FLOOR(ts TO DAY)", "2024-01-31 00:00:00.000", "TIMESTAMP(3)", 0, 0 },
	{ "FLOOR(lt TO SECOND)", "2024-01-31 04:19:31.000", "TIMESTAMP_LTZ(3)", 0, 0 },
	{ "CEIL(FLOOR(ts TO MINUTE) TO MINUTE)", "2024-01-31 04:19:00.000", "TIMESTAMP(3)", 0, 0 },
	{ "ts + INTERVAL '1' HOUR", "2024-01-31 05:19:31.784", "TIMESTAMP(3)", 0, 0 },
	{ "ts - INTERVAL '5' SECONDS", "2024-01-31 04:19:26.784", "TIMESTAMP(3)", 0, 0 },
	{ "ts - INTERVAL '0.784' SECOND", "2024-01-31 04:19:31.000", "TIMESTAMP(3)", 0, 0 },
	{ "INTERVAL '1' DAY + ts", "2024-02-01 04:19:31.784", "TIMESTAMP(3)", 0, 0 },
	{ "dt + INTERVAL '1' DAY", "2024-03-01", "DATE", 0, 0 },
	{ "dt - INTERVAL '29' DAYS", "2024-01-31", "DATE", 0, 0 },
	{ "dt + INTERVAL '1' HOUR", "2024-02-29 01:00:00.000", "TIMESTAMP(3)", 0, 0 },
	{ "INTERVAL '1' MINUTE + INTERVAL '30' SECOND", "90000", "INTERVAL", 0, 0 },
	{ "TO_DATE('2024-12-25')", "2024-12-25", "DATE", 0, 0 },
	{ "TO_DATE('25/12/2024', 'dd/MM/yyyy')", "2024-12-25", "DATE", 0, 0 },
	{ "YEAR(ts)", "2024", "BIGINT", 0, 0 },
	{ "MONTH(dt)", "2", "BIGINT", 0, 0 },
	{ "DAYOFMONTH(dt)", "29", "BIGINT", 0, 0 },
	{ "HOUR(ts)", "4", "BIGINT", 0, 0 },
	{ "MINUTE(ts)", "19", "BIGINT", 0, 0 },
	{ "SECOND(ts)", "31", "BIGINT", 0, 0 },
	{ "QUARTER(ts)", "1", "BIGINT", 0, 0 },
	{ "DAYOFWEEK(dt)", "5", "BIGINT", 0, 0 },
	{ "DAYOFYEAR(dt)", "60", "BIGINT", 0, 0 },
	{ "WEEK(dt)", "9", "BIGINT", 0, 0 },
	{ "YEAR(DATE '1969-12-31')", "1969", "BIGINT", 0, 0 },
	{ "PROCTIME()", "1970-01-01 00:00:01.000", "TIMESTAMP_LTZ(3)", 0, 0 },
	{ "NOW()", "1970-01-01 00:00:01.000", "TIMESTAMP_LTZ(3)", 0, 0 },
	{ "CURRENT_TIMESTAMP", "1970-01-01 00:00:01.000", "TIMESTAMP_LTZ(3)", 0, 0 },
	{ "LOCALTIMESTAMP", "1970-01-01 00:00:01.000", "TIMESTAMP(3)", 0, 0 },
	{ "CURRENT_DATE", "1970-01-01", "DATE", 0, 0 },
	{ "UNIX_TIMESTAMP()", "1", "BIGINT", 0, 0 },
	/* math */
	{ "ABS(j)", "3", "INT", 0, 0 },
	{ "ABS(-2.5)", "2.5", "DECIMAL(2, 1)", 0, 0 },
	{ "ABS(-f)", "2.5", "DOUBLE", 0, 0 },
	{ "ROUND(d, 1)", "154.8", "DECIMAL(10, 1)", 0, 0 },
	{ "ROUND(e, 2)", "1.01", "DECIMAL(5, 2)", 0, 0 },
	{ "ROUND(d)", "155", "DECIMAL(9, 0)", 0, 0 },
	{ "ROUND(d, -1)", "150", "DECIMAL(9, 0)", 0, 0 },
	{ "ROUND(2.5)", "3", "DECIMAL(2, 0)", 0, 0 },
	{ "ROUND(-2.5)", "-3", "DECIMAL(2, 0)", 0, 0 },
	{ "ROUND(f)", "3.0", "DOUBLE", 0, 0 },
	{ "ROUND(1234, -2)", "1200", "INT", 0, 0 },
	{ "ROUND(1250, -2)", "1300", "INT", 0, 0 },
	{ "ROUND(g, 1)", "0.1", "FLOAT", 0, 0 },
	{ "FLOOR(d)", "154", "DECIMAL(9, 0)", 0, 0 },
	{ "CEIL(d)", "155", "DECIMAL(9, 0)", 0, 0 },
	{ "FLOOR(-1.5)", "-2", "DECIMAL(2, 0)", 0, 0 },
	{ "CEIL(f)", "3.0", "DOUBLE", 0, 0 },
	{ "FLOOR(i)", "7", "INT", 0, 0 },
	{ "POWER(2, 10)", "1024.0", "DOUBLE", 0, 0 },
	{ "SQRT(16)", "4.0", "DOUBLE", 0, 0 },
	{ "LN(1)", "0.0", "DOUBLE", 0, 0 },
	{ "LOG10(1000)", "3.0", "DOUBLE", 0, 0 },
	{ "EXP(0)", "1.0", "DOUBLE", 0, 0 },
	{ "LOG(2, 8)", "3.0", "DOUBLE", 0, 0 },
	{ "LOG2(8)", "3.0", "DOUBLE", 0, 0 },
	/* flattened ROW columns, qualifiers, backquotes, match columns */
	{ "payload.after.id", "42", "BIGINT", 1, 0 },
	{ "payload.after.id + 1", "43", "BIGINT", 1, 0 },
	{ "`payload`.`after`.`id`", "42", "BIGINT", 1, 0 },
	{ "o.currency", "'EUR'", "STRING", 0, 0 },
	{ "currency", "'EUR'", "STRING", 0, 0 },
	{ "t.ts = ts", "TRUE", "BOOLEAN", 0, 0 },
	{ "`select`", "'kw'", "STRING", 0, 0 },
	{ "o.amount", "12.34", "DECIMAL(10, 2)", 0, 0 },
	{ "p.amount + o.amount", "17.34", "DECIMAL(11, 2)", 0, 0 },
	{ "SUM(amount)", "1000.50", "DECIMAL(18, 2)", 1, 0 },
	{ "sum(amount) / COUNT(*)", "250.125000", "DECIMAL(18, 6)", 1, 0 },
	{ "COUNT(*) + 1", "5", "BIGINT", 0, 0 },
	{ "tumble_start(ts, INTERVAL '5' MINUTE) + INTERVAL '1' SECOND", "2024-01-31 04:15:01.000",
	  "TIMESTAMP(3)", 0, 0 },
	{ "CASE WHEN COUNT(*) > 3 THEN 'many' ELSE 'few' END", "'many'", "STRING", 0, 0 },
};

static void test_table(void)
{
	const struct sl_row *row = make_row();

	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
		check(&cases[k], row);
	fprintf(stderr, "%zu expressions checked\n", sizeof cases / sizeof cases[0]);
	T_ASSERT(failures == 0);
}

/* Compile-time errors: where, and what. */
static void expect_error(const char *src, const char *file, const char *want)
{
	struct sl_expr *e = parse(src);
	struct sl_sql_env env = { .file = file };
	char err[256];
	struct sl_sql_type t;
	struct sl_prog *p = sl_prog_compile(e, &scope, &env, &t, err, sizeof err);

	if (p || strcmp(err, want)) {
		fprintf(stderr, "FAIL %s: got '%s', want '%s'\n", src, p ? "(compiled)" : err,
			want);
		failures++;
	}
	sl_prog_destroy(p);
	sl_expr_destroy(e);
}

static void test_errors(void)
{
	expect_error("nope + 1", NULL, "1:1: unknown column 'nope'");
	expect_error("i + nope", "job.sql", "job.sql:1:5: unknown column 'nope'");
	expect_error("payload.after.idd", NULL,
		     "1:1: unknown column 'payload.after.idd' (did you mean 'payload.after.id'?)");
	expect_error("currencyy", NULL,
		     "1:1: unknown column 'currencyy' (did you mean "
		     "'currency'?)");
	expect_error("amount", NULL,
		     "1:1: column 'amount' is ambiguous: it could be o.amount "
		     "or p.amount; qualify it");
	expect_error("payload.after", NULL,
		     "1:1: column 'payload.after' is a ROW: name one of "
		     "its fields, such as 'payload.after.id'");
	expect_error("i +\n  frob(1)", NULL, "2:3: unknown function frob");
	expect_error("uper(s)", NULL, "1:1: unknown function uper (did you mean UPPER?)");
	expect_error("s + 1", NULL, "1:3: cannot apply '+' to STRING and INT");
	expect_error("i = 'x'", NULL, "1:3: cannot compare INT with STRING");
	expect_error("flag AND\n  COUNT(i) > 1", NULL,
		     "2:3: aggregate function COUNT is not allowed here");
	expect_error("ROW_NUMBER() OVER (ORDER BY ts)", NULL,
		     "1:1: window function ROW_NUMBER is not allowed here");
	expect_error("TUMBLE_END(ts, INTERVAL '5' MINUTE)", NULL,
		     "1:1: window function TUMBLE_END is not allowed here");
	expect_error("UPPER(i)", NULL, "1:7: UPPER expects STRING, got INT");
	expect_error("SUBSTRING(s)", NULL, "1:1: SUBSTRING expects 2 to 3 arguments, got 1");
	expect_error("CAST(ts AS INT)", NULL, "1:1: cannot CAST TIMESTAMP(3) to INT");
	expect_error("NOT i", NULL, "1:5: NOT expects BOOLEAN, got INT");
	expect_error("i AND flag", NULL, "1:1: AND expects BOOLEAN, got INT");
	expect_error("CASE WHEN flag THEN 1 ELSE 'x' END", NULL,
		     "1:28: incompatible types INT and STRING");
	expect_error("DATE_FORMAT(ts, 'yyyy-QQ')", NULL,
		     "1:17: unsupported date/time format 'yyyy-QQ' (known: yyyy yy MM M dd d HH H "
		     "hh h mm ss S..S a, 'text')");
	expect_error("ts - ts", NULL,
		     "1:4: cannot subtract TIMESTAMP(3) from TIMESTAMP(3): use "
		     "TIMESTAMPDIFF");
	expect_error("ROUND(d, i)", NULL, "1:10: ROUND's digit count must be an integer constant");
	expect_error("TO_TIMESTAMP_LTZ(b, 6)", NULL,
		     "1:21: TO_TIMESTAMP_LTZ's precision must be 0 (seconds) or 3 (milliseconds), "
		     "got 6");
	expect_error("TIMESTAMP '2024-13-01 00:00:00'", NULL,
		     "1:1: invalid TIMESTAMP literal '2024-13-01 00:00:00' (expected yyyy-MM-dd "
		     "HH:mm:ss[.SSS])");
	expect_error("MAX(i)", NULL, "1:1: aggregate function MAX is not allowed here");
	expect_error("SUM(i) FILTER (WHERE i > 0)", NULL,
		     "1:1: aggregate function SUM is not allowed here");
	expect_error("UPPER(s) FILTER (WHERE i > 0)", NULL,
		     "1:1: FILTER applies to aggregate functions only, not UPPER");
	expect_error("i IN (1, 'a')", NULL, "1:10: incompatible types INT and STRING");
	expect_error("UPPER(DESCRIPTOR(ts))", NULL,
		     "1:7: DESCRIPTOR is only allowed as a window "
		     "function argument");
	expect_error("FLOOR(s TO DAY)", NULL,
		     "1:7: FLOOR(... TO unit) expects a TIMESTAMP, got STRING");
	T_ASSERT(failures == 0);
}

/* Constant folding and the is_const flag; eval_into conversions. */
static void test_const_and_into(void)
{
	const struct sl_row *row = make_row();
	struct {
		const char *src;
		bool is_const;
	} consts[] = {
		{ "1 + 2 * 3", true },	      { "UPPER('a') || 'b'", true },
		{ "i + 1", false },	      { "PROCTIME()", false },
		{ "CAST('x' AS INT)", true }, { "CASE WHEN 1 > 2 THEN 'a' ELSE 'b' END", true },
	};
	char err[256];
	struct sl_sql_type t;
	uint64_t buf[64];
	struct sl_row_builder b;
	const struct sl_row *out;
	struct sl_sql_type to_bigint = ty(SL_TYPE_BIGINT, true);
	struct sl_sql_type to_dec = tdec(12, 4, true);
	struct sl_sql_type to_dec_small = tdec(3, 1, true);
	struct sl_sql_type to_str = ty(SL_TYPE_STRING, true);
	struct sl_sql_type to_dbl = ty(SL_TYPE_DOUBLE, true);
	uint32_t len;

	for (size_t k = 0; k < sizeof consts / sizeof consts[0]; k++) {
		struct sl_expr *e = parse(consts[k].src);
		struct sl_prog *p = sl_prog_compile(e, &scope, NULL, &t, err, sizeof err);

		T_ASSERT(p);
		T_ASSERT(sl_prog_is_const(p) == consts[k].is_const);
		sl_prog_destroy(p);
		sl_expr_destroy(e);
	}

	struct sl_expr *ei = parse("i * 2"), *ed = parse("d + e"), *es = parse("UPPER(s)");
	struct sl_prog *pi = sl_prog_compile(ei, &scope, NULL, &t, err, sizeof err);
	struct sl_prog *pd = sl_prog_compile(ed, &scope, NULL, &t, err, sizeof err);
	struct sl_prog *ps = sl_prog_compile(es, &scope, NULL, &t, err, sizeof err);
	uint64_t errs0 = ec.errors;

	T_ASSERT(pi && pd && ps);
	sl_rowb_init(&b, buf, sizeof buf, 6);
	sl_prog_eval_into(pi, row, &ec, &to_bigint, &b, 0);    /* INT -> BIGINT */
	sl_prog_eval_into(pi, row, &ec, &to_dec, &b, 1);       /* INT -> DECIMAL(12, 4) */
	sl_prog_eval_into(pd, row, &ec, &to_dec, &b, 2);       /* DECIMAL(12,3) -> (12,4) */
	sl_prog_eval_into(pd, row, &ec, &to_dec_small, &b, 3); /* does not fit: NULL */
	sl_prog_eval_into(ps, row, &ec, &to_str, &b, 4);
	sl_prog_eval_into(pd, row, &ec, &to_dbl, &b, 5);
	out = sl_rowb_finish(&b);
	T_ASSERT(out);
	T_ASSERT_EQ_I64(sl_row_i64(out, 0), 14);
	T_ASSERT_EQ_I64(sl_row_i64(out, 1), 140000);
	T_ASSERT_EQ_I64(sl_row_i64(out, 2), 1558050);
	T_ASSERT(sl_row_is_null(out, 3));
	T_ASSERT(!memcmp(sl_row_str(out, 4, &len), "HELLO WORLD", 11) && len == 11);
	T_ASSERT(sl_row_f64(out, 5) == 155.805);
	T_ASSERT_EQ_I64(ec.errors - errs0, 1);
	sl_prog_destroy(pi);
	sl_prog_destroy(pd);
	sl_prog_destroy(ps);
	sl_expr_destroy(ei);
	sl_expr_destroy(ed);
	sl_expr_destroy(es);

	/* the session time zone moves TIMESTAMP_LTZ wall clocks */
	struct sl_sql_env env = { .local_tz_offset_ms = 3600000 };
	struct {
		const char *src, *want;
	} tz[] = {
		{ "CAST(lt AS STRING)", "'2024-01-31 05:19:31.784'" },
		{ "HOUR(lt)", "5" },
		{ "FLOOR(lt TO DAY)", "2024-01-30 23:00:00.000" },
		{ "FROM_UNIXTIME(0)", "'1970-01-01 01:00:00'" },
		{ "UNIX_TIMESTAMP('1970-01-01 01:00:00')", "0" },
		{ "CAST(lt AS TIMESTAMP) = ts + INTERVAL '1' HOUR", "TRUE" },
		{ "LOCALTIMESTAMP", "1970-01-01 01:00:01.000" },
	};
	for (size_t k = 0; k < sizeof tz / sizeof tz[0]; k++) {
		struct sl_expr *e = parse(tz[k].src);
		struct sl_prog *p = sl_prog_compile(e, &scope, &env, &t, err, sizeof err);
		struct sl_val v;
		char got[128];

		T_ASSERT(p);
		sl_prog_eval(p, row, &ec, &v);
		format_val(&v, &t, got, sizeof got);
		if (strcmp(got, tz[k].want)) {
			fprintf(stderr, "FAIL tz %s: got %s want %s\n", tz[k].src, got, tz[k].want);
			failures++;
		}
		sl_prog_destroy(p);
		sl_expr_destroy(e);
	}
	T_ASSERT(failures == 0);
}

/* ---- property test against SQLite ---------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

struct sb {
	char buf[4096];
	size_t n;
};

static void put(struct sb *b, const char *s)
{
	size_t k = strlen(s);

	if (b->n + k < sizeof b->buf) {
		memcpy(b->buf + b->n, s, k + 1);
		b->n += k;
	}
}

static void gen_bool(struct sb *b, int depth);

/* Integer expressions over BIGINT columns a, b, c and literals 0..9: no overflow at this
 * depth, so Java wrap-around and SQLite's switch to REAL never meet. */
static void gen_int(struct sb *b, int depth)
{
	static const char *const ops[] = { " + ", " - ", " * ", " / ", " % " };
	static const char *const colnames[] = { "a", "b", "c" };
	char lit[8];

	switch (depth <= 0 ? rnd(2) : rnd(8)) {
	case 0:
		put(b, colnames[rnd(3)]);
		break;
	case 1:
		snprintf(lit, sizeof lit, "%u", rnd(10));
		put(b, lit);
		break;
	case 2:
	case 3:
		put(b, "(");
		gen_int(b, depth - 1);
		put(b, ops[rnd(5)]);
		gen_int(b, depth - 1);
		put(b, ")");
		break;
	case 4:
		put(b, "(-");
		gen_int(b, depth - 1);
		put(b, ")");
		break;
	case 5:
		put(b, "(CASE WHEN ");
		gen_bool(b, depth - 1);
		put(b, " THEN ");
		gen_int(b, depth - 1);
		if (rnd(2)) {
			put(b, " ELSE ");
			gen_int(b, depth - 1);
		}
		put(b, " END)");
		break;
	case 6:
		put(b, "COALESCE(");
		gen_int(b, depth - 1);
		put(b, ", ");
		gen_int(b, depth - 1);
		put(b, ")");
		break;
	default:
		put(b, "(CASE ");
		gen_int(b, depth - 1);
		put(b, " WHEN ");
		gen_int(b, depth - 1);
		put(b, " THEN ");
		gen_int(b, depth - 1);
		put(b, " ELSE NULL END)");
		break;
	}
}

static void gen_bool(struct sb *b, int depth)
{
	static const char *const cmps[] = { " = ", " <> ", " < ", " <= ", " > ", " >= " };

	switch (depth <= 0 ? 0 : rnd(9)) {
	case 0:
	case 1:
		put(b, "(");
		gen_int(b, depth - 1);
		put(b, cmps[rnd(6)]);
		gen_int(b, depth - 1);
		put(b, ")");
		break;
	case 2:
		put(b, "(");
		gen_bool(b, depth - 1);
		put(b, rnd(2) ? " AND " : " OR ");
		gen_bool(b, depth - 1);
		put(b, ")");
		break;
	case 3:
		put(b, "(NOT ");
		gen_bool(b, depth - 1);
		put(b, ")");
		break;
	case 4:
		put(b, "(");
		gen_int(b, depth - 1);
		put(b, rnd(2) ? " IS NULL)" : " IS NOT NULL)");
		break;
	case 5:
		put(b, "(");
		gen_int(b, depth - 1);
		put(b, rnd(2) ? " BETWEEN " : " NOT BETWEEN ");
		gen_int(b, depth - 1);
		put(b, " AND ");
		gen_int(b, depth - 1);
		put(b, ")");
		break;
	case 6: {
		char lit[8];

		put(b, "(");
		gen_int(b, depth - 1);
		put(b, rnd(2) ? " IN (" : " NOT IN (");
		for (int k = 0, n = 1 + (int)rnd(4); k < n; k++) {
			if (k)
				put(b, ", ");
			if (rnd(6) == 0) {
				put(b, "NULL");
			} else if (rnd(3) == 0) {
				gen_int(b, 0);
			} else {
				snprintf(lit, sizeof lit, "%u", rnd(10));
				put(b, lit);
			}
		}
		put(b, "))");
		break;
	}
	case 7:
		put(b, rnd(2) ? "TRUE" : "FALSE");
		break;
	default:
		put(b, "(");
		gen_bool(b, depth - 1);
		put(b, " IS ");
		put(b, rnd(2) ? "NOT " : "");
		put(b, rnd(2) ? "TRUE)" : "FALSE)");
		break;
	}
}

#define PROP_ROWS  64
#define PROP_EXPRS 2000

static void test_sqlite(void)
{
	sqlite3 *db;
	int64_t vals[PROP_ROWS][3];
	bool nulls[PROP_ROWS][3];
	uint64_t rows[PROP_ROWS][16];
	struct sl_sql_col pc[3] = {
		{ .name = "a", .type = ty(SL_TYPE_BIGINT, true), .field = 0 },
		{ .name = "b", .type = ty(SL_TYPE_BIGINT, true), .field = 1 },
		{ .name = "c", .type = ty(SL_TYPE_BIGINT, true), .field = 2 },
	};
	struct sl_scope psc = { pc, 3 };
	int checked = 0;

	T_ASSERT(sqlite3_open(":memory:", &db) == SQLITE_OK);
	T_ASSERT(sqlite3_exec(db, "CREATE TABLE t(a INTEGER, b INTEGER, c INTEGER)", NULL, NULL,
			      NULL) == SQLITE_OK);
	for (int r = 0; r < PROP_ROWS; r++) {
		struct sl_row_builder b;
		char sql[160];
		char v[3][24];

		sl_rowb_init(&b, rows[r], sizeof rows[r], 3);
		for (int k = 0; k < 3; k++) {
			nulls[r][k] = rnd(5) == 0;
			vals[r][k] = (int64_t)rnd(41) - 20;
			if (nulls[r][k]) {
				snprintf(v[k], sizeof v[k], "NULL");
			} else {
				snprintf(v[k], sizeof v[k], "%lld", (long long)vals[r][k]);
				sl_rowb_set_i64(&b, k, vals[r][k]);
			}
		}
		T_ASSERT(sl_rowb_finish(&b));
		snprintf(sql, sizeof sql, "INSERT INTO t VALUES (%s, %s, %s)", v[0], v[1], v[2]);
		T_ASSERT(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	}
	for (int x = 0; x < PROP_EXPRS; x++) {
		struct sb src = { .n = 0 };
		char sql[4200], err[256];
		sqlite3_stmt *st;
		struct sl_expr *e;
		struct sl_prog *p;
		struct sl_sql_type t;
		bool boolean = rnd(2);

		src.buf[0] = 0;
		if (boolean)
			gen_bool(&src, 3);
		else
			gen_int(&src, 3);
		snprintf(sql, sizeof sql, "SELECT %s FROM t ORDER BY rowid", src.buf);
		T_ASSERT(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
		e = parse(src.buf);
		p = sl_prog_compile(e, &psc, NULL, &t, err, sizeof err);
		if (!p) {
			fprintf(stderr, "FAIL %s: %s\n", src.buf, err);
			exit(T_EXIT_FAIL);
		}
		for (int r = 0; r < PROP_ROWS; r++) {
			struct sl_val v;
			bool snull;
			int64_t sv;

			T_ASSERT(sqlite3_step(st) == SQLITE_ROW);
			snull = sqlite3_column_type(st, 0) == SQLITE_NULL;
			sv = sqlite3_column_int64(st, 0);
			sl_prog_eval(p, (const struct sl_row *)rows[r], &ec, &v);
			if (snull != v.null || (!snull && sv != v.i)) {
				fprintf(stderr,
					"FAIL %s on (%lld%s, %lld%s, %lld%s): sluice %s%lld, "
					"sqlite %s%lld\n",
					src.buf, (long long)vals[r][0], nulls[r][0] ? "/NULL" : "",
					(long long)vals[r][1], nulls[r][1] ? "/NULL" : "",
					(long long)vals[r][2], nulls[r][2] ? "/NULL" : "",
					v.null ? "NULL " : "", (long long)v.i, snull ? "NULL " : "",
					(long long)sv);
				exit(T_EXIT_FAIL);
			}
			checked++;
		}
		T_ASSERT(sqlite3_step(st) == SQLITE_DONE);
		sqlite3_finalize(st);
		sl_prog_destroy(p);
		sl_expr_destroy(e);
	}
	sqlite3_close(db);
	fprintf(stderr, "%d expression values agree with SQLite\n", checked);
}

/* ---- robustness: random expressions of every shape ------------------------------------- */

static void gen_any(struct sb *b, int depth)
{
	static const char *const leaves[] = {
		"i",
		"j",
		"b",
		"n",
		"d",
		"e",
		"f",
		"g",
		"s",
		"u",
		"ns",
		"ts",
		"lt",
		"dt",
		"flag",
		"nb",
		"payload.after.id",
		"o.currency",
		"amount",
		"NULL",
		"0",
		"-1",
		"2147483647",
		"1.5",
		"0.001",
		"1e308",
		"'x'",
		"''",
		"'2024-01-01'",
		"'%a_'",
		"TRUE",
		"INTERVAL '1' DAY",
		"TIMESTAMP '2024-01-01 00:00:00'",
		"DATE '2024-01-01'",
		"COUNT(*)",
		"99999999999999999.99",
	};
	static const char *const fns[] = {
		"UPPER",
		"LOWER",
		"INITCAP",
		"CHAR_LENGTH",
		"CONCAT",
		"CONCAT_WS",
		"SUBSTRING",
		"TRIM",
		"LTRIM",
		"RTRIM",
		"REPLACE",
		"LOCATE",
		"IF",
		"COALESCE",
		"NULLIF",
		"MOD",
		"ABS",
		"ROUND",
		"FLOOR",
		"CEIL",
		"POWER",
		"SQRT",
		"LN",
		"LOG",
		"EXP",
		"TO_TIMESTAMP",
		"TO_DATE",
		"UNIX_TIMESTAMP",
		"TO_TIMESTAMP_LTZ",
		"FROM_UNIXTIME",
		"DATE_FORMAT",
		"NOW",
		"PROCTIME",
		"YEAR",
		"HOUR",
		"WEEK",
		"SUM",
		"NOSUCH",
	};
	static const char *const bin[] = {
		" + ", " - ",  " * ", " / ",  " % ",   " || ",
		" = ", " <> ", " < ", " >= ", " AND ", " OR ",
	};
	static const char *const types[] = {
		"INT",		 "BIGINT",	     "DOUBLE", "FLOAT",
		"DECIMAL(5, 2)", "DECIMAL(38, 10)",  "STRING", "VARCHAR(3)",
		"TIMESTAMP(3)",	 "TIMESTAMP_LTZ(3)", "DATE",   "BOOLEAN",
	};

	switch (depth <= 0 ? 0 : rnd(10)) {
	case 0:
	case 1:
		put(b, leaves[rnd(sizeof leaves / sizeof leaves[0])]);
		break;
	case 2:
	case 3: {
		uint32_t n = rnd(4);

		put(b, fns[rnd(sizeof fns / sizeof fns[0])]);
		put(b, "(");
		for (uint32_t k = 0; k < n; k++) {
			if (k)
				put(b, ", ");
			gen_any(b, depth - 1);
		}
		put(b, ")");
		break;
	}
	case 4:
	case 5:
		put(b, "(");
		gen_any(b, depth - 1);
		put(b, bin[rnd(sizeof bin / sizeof bin[0])]);
		gen_any(b, depth - 1);
		put(b, ")");
		break;
	case 6:
		put(b, "CAST(");
		gen_any(b, depth - 1);
		put(b, " AS ");
		put(b, types[rnd(sizeof types / sizeof types[0])]);
		put(b, ")");
		break;
	case 7:
		put(b, "CASE WHEN ");
		gen_any(b, depth - 1);
		put(b, " THEN ");
		gen_any(b, depth - 1);
		put(b, " ELSE ");
		gen_any(b, depth - 1);
		put(b, " END");
		break;
	case 8:
		put(b, "(");
		gen_any(b, depth - 1);
		put(b, rnd(2) ? " IN (" : " LIKE ");
		gen_any(b, depth - 1);
		put(b, rnd(2) ? ", NULL)" : ")");
		if (b->buf[b->n - 1] == ')' && strstr(b->buf, " LIKE ") == NULL)
			put(b, ")");
		break;
	default:
		put(b, "(");
		gen_any(b, depth - 1);
		put(b, rnd(2) ? " IS NULL)" : " BETWEEN 1 AND 2)");
		break;
	}
}

static void test_random_shapes(void)
{
	const struct sl_row *row = make_row();
	uint64_t nullrow[64];
	struct sl_row_builder nb;
	int compiled = 0, tried = 0;

	sl_rowb_init(&nb, nullrow, sizeof nullrow, F_NFIELDS);
	T_ASSERT(sl_rowb_finish(&nb));
	/* EVAL_SHAPES=n runs longer (under ASan/UBSan, say) */
	int shapes = getenv("EVAL_SHAPES") ? atoi(getenv("EVAL_SHAPES")) : 20000;

	for (int x = 0; x < shapes; x++) {
		struct sb src = { .n = 0 };
		char err[256];
		struct sl_expr *e;
		struct sl_prog *p;
		struct sl_sql_type t;
		struct sl_val v;
		unsigned line, col;

		src.buf[0] = 0;
		gen_any(&src, 1 + (int)rnd(4));
		e = sl_expr_parse_str(src.buf, src.n, err, sizeof err);
		if (!e)
			continue;
		tried++;
		p = sl_prog_compile(e, &scope, NULL, &t, err, sizeof err);
		if (!p) {
			if (sscanf(err, "%u:%u: ", &line, &col) != 2 || !line || !col) {
				fprintf(stderr, "FAIL %s: message without place: %s\n", src.buf,
					err);
				exit(T_EXIT_FAIL);
			}
		} else {
			compiled++;
			sl_prog_eval(p, (const struct sl_row *)nullrow, &ec, &v);
			sl_prog_eval(p, row, &ec, &v);
			if (!t.nullable && !t.null_type && v.null) {
				fprintf(stderr, "FAIL %s: NULL from a NOT NULL type\n", src.buf);
				exit(T_EXIT_FAIL);
			}
			sl_prog_destroy(p);
		}
		sl_expr_destroy(e);
	}
	fprintf(stderr, "%d random expressions parsed, %d compiled and ran\n", tried, compiled);
	T_ASSERT(compiled > shapes / 20);
}

/* ---- no allocation per record, and throughput ------------------------------------------ */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void test_no_malloc(void)
{
	static const char *const proj_src[] = {
		"d * 1.1",
		"payload.after.id + 1",
		"UPPER(SUBSTRING(s, 1, 5)) || currency",
		"CASE WHEN i > 5 THEN 'big' ELSE 'small' END",
		"DATE_FORMAT(ts, 'yyyy-MM-dd')",
		"COALESCE(n, i) * 2",
	};
	const struct sl_row *row = make_row();
	struct sl_expr *fe = parse("d > 10 AND currency = 'EUR'");
	struct sl_expr *pe[6], *p1 = parse("d * 1.1"), *p2 = parse("payload.after.id + 1");
	struct sl_prog *filter, *proj[6], *q1, *q2;
	struct sl_sql_type t, pt[6];
	char err[256];
	uint64_t out[64], a0, sink = 0;
	int n = 1000000, pass = 0;
	double t0, t1;

	filter = sl_prog_compile(fe, &scope, NULL, &t, err, sizeof err);
	T_ASSERT(filter);
	for (int k = 0; k < 6; k++) {
		pe[k] = parse(proj_src[k]);
		proj[k] = sl_prog_compile(pe[k], &scope, NULL, &pt[k], err, sizeof err);
		T_ASSERT(proj[k]);
	}
	q1 = sl_prog_compile(p1, &scope, NULL, &pt[0], err, sizeof err);
	q2 = sl_prog_compile(p2, &scope, NULL, &pt[1], err, sizeof err);
	T_ASSERT(q1 && q2);

	/* every kind of program, 1M rows, not one allocation */
	a0 = nallocs;
	for (int r = 0; r < n; r++) {
		struct sl_row_builder b;

		if (!sl_prog_eval_pred(filter, row, &ec))
			continue;
		sl_rowb_init(&b, out, sizeof out, 6);
		for (int k = 0; k < 6; k++)
			sl_prog_eval_into(proj[k], row, &ec, &pt[k], &b, k);
		sink += sl_rowb_finish(&b) != NULL;
	}
	T_ASSERT_EQ_I64(nallocs - a0, 0);
	T_ASSERT_EQ_I64(sink, n);

	/* the 5-operator filter + projection: >, =, AND; *, + */
	t0 = now_s();
	for (int r = 0; r < n; r++) {
		struct sl_row_builder b;

		if (!sl_prog_eval_pred(filter, row, &ec))
			continue;
		sl_rowb_init(&b, out, sizeof out, 2);
		sl_prog_eval_into(q1, row, &ec, &pt[0], &b, 0);
		sl_prog_eval_into(q2, row, &ec, &pt[1], &b, 1);
		pass += sl_rowb_finish(&b) != NULL;
	}
	t1 = now_s();
	T_ASSERT_EQ_I64(pass, n);

	/* the same work written by hand in C: the ceiling an interpreter is measured against */
	{
		volatile const struct sl_row *vrow = row;
		int hand = 0;
		double h0 = now_s(), h1;

		for (int r = 0; r < n; r++) {
			const struct sl_row *in = (const struct sl_row *)vrow;
			struct sl_row_builder b;
			uint32_t len;
			const char *cur = sl_row_str(in, F_CUR, &len);

			if (sl_row_is_null(in, F_D) || sl_row_is_null(in, F_CUR) ||
			    !(sl_row_i64(in, F_D) > 1000 && len == 3 && !memcmp(cur, "EUR", 3)))
				continue;
			sl_rowb_init(&b, out, sizeof out, 2);
			sl_rowb_set_i64(&b, 0, sl_row_i64(in, F_D) * 11);
			if (sl_row_is_null(in, F_PID))
				sl_rowb_set_null(&b, 1);
			else
				sl_rowb_set_i64(&b, 1, sl_row_i64(in, F_PID) + 1);
			hand += sl_rowb_finish(&b) != NULL;
		}
		h1 = now_s();
		T_ASSERT_EQ_I64(hand, n);
		fprintf(stderr,
			"5-operator filter + projection: %.1f M rows/s compiled, %.1f M rows/s "
			"hand-written C (ratio %.2f)\n",
			n / (t1 - t0) / 1e6, n / (h1 - h0) / 1e6, (h1 - h0) / (t1 - t0));
	}

	sl_prog_destroy(filter);
	sl_prog_destroy(q1);
	sl_prog_destroy(q2);
	for (int k = 0; k < 6; k++) {
		sl_prog_destroy(proj[k]);
		sl_expr_destroy(pe[k]);
	}
	sl_expr_destroy(fe);
	sl_expr_destroy(p1);
	sl_expr_destroy(p2);
}

int main(void)
{
	setup_scope();
	test_table();
	test_errors();
	test_const_and_into();
	test_sqlite();
	test_random_shapes();
	test_no_malloc();
	sl_expr_destroy(m_sum);
	sl_expr_destroy(m_cnt);
	sl_expr_destroy(m_tstart);
	return failures ? T_EXIT_FAIL : T_EXIT_PASS;
}
