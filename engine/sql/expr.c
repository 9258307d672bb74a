/*
 * expr.c - Flink SQL expressions to a tree with positions (see expr.h).
 *
 * Recursive descent, one function per precedence level, over sl_lexer with one current
 * token; the one two-token look-ahead (TIMESTAMP 'x' vs a column named timestamp) copies
 * the lexer, a plain value. Invariants: a node is linked into its parent before its
 * children are parsed, so on failure freeing the root frees everything; the first error
 * wins (err holds the message of the token where parsing stopped).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

struct parser {
	struct sl_lexer *lx;
	struct sl_tok cur;
	char *err;
	size_t errcap;
	uint32_t depth; /* recursion guard: a hostile "((((..." must not exhaust the stack */
	uint32_t nops;  /* binary operators so far: chains are left-deep trees that every
			 * walker (destroy, print, the planner) recurses into */
	bool failed;
};

/* A chain `a AND a AND ...` is a tree as deep as it is long. */
#define MAX_OPS 10000

/* Far beyond any hand-written query, far below what an 8 MB stack holds. */
#define MAX_DEPTH 256

static struct sl_expr *parse_or(struct parser *p);

static void advance(struct parser *p)
{
	p->cur = sl_lexer_next(p->lx);
}

static struct sl_tok peek(const struct parser *p)
{
	struct sl_lexer copy = *p->lx;

	return sl_lexer_next(&copy);
}

static void fail_at(struct parser *p, uint32_t line, uint32_t col, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->failed)
		return;
	p->failed = true;
	n = snprintf(p->err, p->errcap, "%u:%u: ", line, col);
	if (n >= 0 && (size_t)n < p->errcap) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errcap - (size_t)n, fmt, ap);
		va_end(ap);
	}
}

static void nomem(struct parser *p)
{
	if (!p->failed) {
		p->failed = true;
		snprintf(p->err, p->errcap, "out of memory");
	}
}

/* "expected <what>, found <cur>" at cur, worded as ddl.c does; lexer errors say their own. */
static void expected(struct parser *p, const char *what)
{
	const struct sl_tok *t = &p->cur;
	char found[96];

	if (t->kind == SL_TOK_ERROR) {
		fail_at(p, t->line, t->col, "%s", t->msg);
		return;
	}
	sl_tok_describe(t, found, sizeof found);
	fail_at(p, t->line, t->col, "expected %s, found %s", what, found);
}

static bool is_kw(const struct parser *p, const char *kw)
{
	return sl_tok_is_kw(&p->cur, kw);
}

static bool is_op(const struct parser *p, const char *op)
{
	return sl_tok_is_op(&p->cur, op);
}

static bool expect_op(struct parser *p, const char *op, const char *what)
{
	if (!is_op(p, op)) {
		expected(p, what);
		return false;
	}
	advance(p);
	return true;
}

static bool expect_kw(struct parser *p, const char *kw, const char *what)
{
	if (!is_kw(p, kw)) {
		expected(p, what);
		return false;
	}
	advance(p);
	return true;
}

static struct sl_expr *node_at(struct parser *p, enum sl_expr_kind kind, const struct sl_tok *t)
{
	struct sl_expr *e = calloc(1, sizeof(*e));

	if (!e) {
		nomem(p);
		return NULL;
	}
	e->kind = kind;
	e->line = t->line;
	e->col = t->col;
	return e;
}

/* Appends child (NULL is allowed: the caller has already failed) to e->args. */
static bool add_arg(struct parser *p, struct sl_expr *e, struct sl_expr *child)
{
	struct sl_expr **a;

	if (!child)
		return false;
	a = realloc(e->args, (e->nargs + 1) * sizeof(*a));
	if (!a) {
		sl_expr_destroy(child);
		nomem(p);
		return false;
	}
	e->args = a;
	e->args[e->nargs++] = child;
	return true;
}

/* Copies an identifier (see sl_tok_ident_dup), reporting ENOMEM to the parser. */
static char *ident_dup(struct parser *p, const struct sl_tok *t)
{
	char *s = sl_tok_ident_dup(t);

	if (!s)
		nomem(p);
	return s;
}

static char *text_dup(struct parser *p, const struct sl_tok *t)
{
	char *s = malloc(t->len + 1);

	if (!s) {
		nomem(p);
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

static bool add_path(struct parser *p, struct sl_expr *e, const struct sl_tok *t)
{
	char **a = realloc(e->path, (e->npath + 1) * sizeof(*a));

	if (!a) {
		nomem(p);
		return false;
	}
	e->path = a;
	e->path[e->npath] = ident_dup(p, t);
	if (!e->path[e->npath])
		return false;
	e->npath++;
	return true;
}

/*
 * Words that end an expression rather than name a column, so `SELECT a FROM t` stops at
 * FROM and `SELECT FROM` is reported at FROM. Backquoted, they are names again.
 */
bool sl_expr_is_reserved(const struct sl_tok *t)
{
	static const char *const words[] = {
		"AND", "OR", "NOT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "AS",
		"WHEN", "THEN", "ELSE", "END", "SELECT", "IS", "IN", "BETWEEN", "LIKE", "ON",
		"JOIN", "UNION", "LIMIT", "WINDOW", "TO", "DISTINCT", "ALL", "INTERVAL",
		"CASE", "CAST", "TABLE", "DESCRIPTOR", "OVER", "PARTITION", "FILTER",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (sl_tok_is_kw(t, words[i]))
			return true;
	return false;
}

/* An identifier usable as a name: not a reserved word unless backquoted. */
static bool is_name(const struct sl_tok *t)
{
	return t->kind == SL_TOK_IDENT && (t->quoted || !sl_expr_is_reserved(t));
}

/* SECOND(S) | MINUTE(S) | HOUR(S) | DAY(S): the plural forms are what the seeds write. */
static enum sl_expr_unit take_unit(struct parser *p, int64_t *ms)
{
	static const struct {
		const char *one, *many;
		enum sl_expr_unit unit;
		int64_t ms;
	} units[] = {
		{ "SECOND", "SECONDS", SL_EXPR_UNIT_SECOND, 1000 },
		{ "MINUTE", "MINUTES", SL_EXPR_UNIT_MINUTE, 60 * 1000 },
		{ "HOUR", "HOURS", SL_EXPR_UNIT_HOUR, 3600 * 1000 },
		{ "DAY", "DAYS", SL_EXPR_UNIT_DAY, 86400 * 1000 },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (is_kw(p, units[i].one) || is_kw(p, units[i].many)) {
			advance(p);
			*ms = units[i].ms;
			return units[i].unit;
		}
	}
	expected(p, "a time unit (SECOND, MINUTE, HOUR, DAY)");
	return SL_EXPR_UNIT_NONE;
}

/*
 * The quoted count of INTERVAL 'n' unit in ms: [+-]digits[.digits], exact or refused, since
 * Flink jobs write '0.005' SECOND for 5 ms. 11 integer digits keep n * 86400000 in int64.
 */
static bool interval_ms(const char *s, int64_t unit_ms, int64_t *ms)
{
	bool neg = *s == '-';
	int64_t whole = 0, frac = 0, scale = 1;
	size_t nd = 0, nf = 0;

	s += neg || *s == '+';
	for (; *s >= '0' && *s <= '9'; s++, nd++)
		whole = nd < 11 ? whole * 10 + (*s - '0') : whole;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, nf++)
			if (nf < 9) {
				frac = frac * 10 + (*s - '0');
				scale *= 10;
			}
	if (*s || nd > 11 || nf > 9 || nd + nf == 0 || frac * unit_ms % scale)
		return false;
	*ms = whole * unit_ms + frac * unit_ms / scale;
	if (neg)
		*ms = -*ms;
	return true;
}

/* INTERVAL 'n' unit, with cur on INTERVAL. */
static struct sl_expr *parse_interval(struct parser *p)
{
	struct sl_expr *e = node_at(p, SL_EXPR_INTERVAL, &p->cur);
	struct sl_tok vt;
	int64_t unit_ms;

	if (!e)
		return NULL;
	advance(p);
	vt = p->cur;
	if (vt.kind != SL_TOK_STRING) {
		expected(p, "a quoted count after INTERVAL");
		goto out_free;
	}
	e->text = text_dup(p, &vt);
	if (!e->text)
		goto out_free;
	advance(p);
	e->unit = take_unit(p, &unit_ms);
	if (e->unit == SL_EXPR_UNIT_NONE)
		goto out_free;
	if (!interval_ms(e->text, unit_ms, &e->ival)) {
		fail_at(p, vt.line, vt.col,
			"expected a count of whole milliseconds in INTERVAL, found '%s'", e->text);
		goto out_free;
	}
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

/* Reads "(n)" into *v when present; false only on error. */
static bool opt_len(struct parser *p, uint32_t *v, const char *what, const char *close)
{
	if (!is_op(p, "("))
		return true;
	advance(p);
	if (p->cur.kind != SL_TOK_INTEGER || p->cur.len > 9) {
		expected(p, what);
		return false;
	}
	*v = (uint32_t)strtoul(p->cur.text, NULL, 10);
	advance(p);
	return expect_op(p, ")", close);
}

/* The CAST target types; ROW and the other DDL-only types are not castable here. */
static bool parse_type(struct parser *p, struct sl_ddl_type *ty)
{
	static const char what[] = "a type (BOOLEAN, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, "
				   "STRING, VARCHAR, TIMESTAMP, TIMESTAMP_LTZ, DATE)";
	struct sl_tok t = p->cur;

	ty->line = t.line;
	ty->col = t.col;
	if (is_kw(p, "BOOLEAN")) {
		ty->kind = SL_DDL_BOOLEAN;
	} else if (is_kw(p, "INT") || is_kw(p, "INTEGER")) {
		ty->kind = SL_DDL_INT;
	} else if (is_kw(p, "BIGINT")) {
		ty->kind = SL_DDL_BIGINT;
	} else if (is_kw(p, "FLOAT")) {
		ty->kind = SL_DDL_FLOAT;
	} else if (is_kw(p, "DOUBLE")) {
		ty->kind = SL_DDL_DOUBLE;
	} else if (is_kw(p, "STRING")) {
		ty->kind = SL_DDL_STRING;
	} else if (is_kw(p, "DATE")) {
		ty->kind = SL_DDL_DATE;
	} else if (is_kw(p, "DECIMAL") || is_kw(p, "DEC") || is_kw(p, "NUMERIC")) {
		ty->kind = SL_DDL_DECIMAL;
		ty->precision = 10;
		advance(p);
		if (!is_op(p, "("))
			return true;
		advance(p);
		if (p->cur.kind != SL_TOK_INTEGER || p->cur.len > 2) {
			expected(p, "DECIMAL precision");
			return false;
		}
		ty->precision = (uint32_t)strtoul(p->cur.text, NULL, 10);
		advance(p);
		if (is_op(p, ",")) {
			advance(p);
			if (p->cur.kind != SL_TOK_INTEGER || p->cur.len > 2) {
				expected(p, "DECIMAL scale");
				return false;
			}
			ty->scale = (uint32_t)strtoul(p->cur.text, NULL, 10);
			advance(p);
		}
		if (ty->precision < 1 || ty->precision > 38 || ty->scale > ty->precision) {
			fail_at(p, t.line, t.col, "DECIMAL(%u, %u) needs 1 <= precision <= 38 and "
				"scale <= precision", ty->precision, ty->scale);
			return false;
		}
		return expect_op(p, ")", "')' after DECIMAL precision and scale");
	} else if (is_kw(p, "VARCHAR")) {
		ty->kind = SL_DDL_VARCHAR;
		ty->precision = 1;
		advance(p);
		return opt_len(p, &ty->precision, "VARCHAR length", "')' after VARCHAR length");
	} else if (is_kw(p, "TIMESTAMP") || is_kw(p, "TIMESTAMP_LTZ")) {
		ty->kind = is_kw(p, "TIMESTAMP") ? SL_DDL_TIMESTAMP : SL_DDL_TIMESTAMP_LTZ;
		ty->precision = 6;
		advance(p);
		if (!opt_len(p, &ty->precision, "TIMESTAMP precision",
			     "')' after TIMESTAMP precision"))
			return false;
		if (ty->precision > 9) {
			fail_at(p, t.line, t.col, "TIMESTAMP precision %u exceeds 9",
				ty->precision);
			return false;
		}
		if (ty->kind == SL_DDL_TIMESTAMP && is_kw(p, "WITH")) {
			advance(p);
			if (!expect_kw(p, "LOCAL", "LOCAL TIME ZONE after TIMESTAMP WITH") ||
			    !expect_kw(p, "TIME", "LOCAL TIME ZONE after TIMESTAMP WITH") ||
			    !expect_kw(p, "ZONE", "LOCAL TIME ZONE after TIMESTAMP WITH"))
				return false;
			ty->kind = SL_DDL_TIMESTAMP_LTZ;
		}
		return true;
	} else {
		expected(p, what);
		return false;
	}
	advance(p);
	return true;
}

/* One argument of a call: DESCRIPTOR(a, b) and TABLE name exist only here (window TVFs). */
static struct sl_expr *parse_arg(struct parser *p)
{
	struct sl_expr *e;

	if (is_kw(p, "TABLE")) {
		e = node_at(p, SL_EXPR_TABLE, &p->cur);
		if (!e)
			return NULL;
		advance(p);
		for (;;) {
			if (!is_name(&p->cur)) {
				expected(p, "a table name after TABLE");
				goto out_free;
			}
			if (!add_path(p, e, &p->cur))
				goto out_free;
			advance(p);
			if (!is_op(p, "."))
				return e;
			advance(p);
		}
	}
	if (is_kw(p, "DESCRIPTOR")) {
		e = node_at(p, SL_EXPR_DESCRIPTOR, &p->cur);
		if (!e)
			return NULL;
		advance(p);
		if (!expect_op(p, "(", "'(' after DESCRIPTOR"))
			goto out_free;
		for (;;) {
			struct sl_expr *c;

			if (!is_name(&p->cur)) {
				expected(p, "a column name in DESCRIPTOR");
				goto out_free;
			}
			c = node_at(p, SL_EXPR_COLUMN, &p->cur);
			if (!add_arg(p, e, c) || !add_path(p, c, &p->cur))
				goto out_free;
			advance(p);
			if (!is_op(p, ","))
				break;
			advance(p);
		}
		if (!expect_op(p, ")", "',' or ')' in DESCRIPTOR"))
			goto out_free;
		return e;
	}
	return parse_or(p);
out_free:
	sl_expr_destroy(e);
	return NULL;
}

/* name(args) with cur on '('; e already holds the name. */
static struct sl_expr *parse_call(struct parser *p, struct sl_expr *e)
{
	advance(p);
	if (is_op(p, ")")) {
		advance(p);
		return e;
	}
	if (is_op(p, "*")) {
		struct sl_expr *star = node_at(p, SL_EXPR_STAR, &p->cur);

		if (!add_arg(p, e, star))
			goto out_free;
		advance(p);
		if (!expect_op(p, ")", "')' after *"))
			goto out_free;
		return e;
	}
	if (is_kw(p, "DISTINCT")) {
		e->distinct = true;
		advance(p);
	}
	for (;;) {
		if (!add_arg(p, e, parse_arg(p)))
			goto out_free;
		if (!is_op(p, ","))
			break;
		advance(p);
	}
	if (!expect_op(p, ")", "',' or ')' in the argument list"))
		goto out_free;
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

/* OVER ([PARTITION BY e, ...] [ORDER BY e [ASC|DESC], ...]) after a call; false on error. */
static bool parse_over(struct parser *p, struct sl_expr *e)
{
	e->over = true;
	advance(p);
	if (!expect_op(p, "(", "'(' after OVER"))
		return false;
	if (is_kw(p, "PARTITION")) {
		advance(p);
		if (!expect_kw(p, "BY", "BY after PARTITION"))
			return false;
		do {
			struct sl_expr *k = parse_or(p);
			struct sl_expr **a;

			if (!k)
				return false;
			a = realloc(e->partition, (e->npartition + 1) * sizeof(*a));
			if (!a) {
				sl_expr_destroy(k);
				nomem(p);
				return false;
			}
			e->partition = a;
			e->partition[e->npartition++] = k;
		} while (is_op(p, ",") && (advance(p), true));
	}
	if (is_kw(p, "ORDER")) {
		advance(p);
		if (!expect_kw(p, "BY", "BY after ORDER"))
			return false;
		do {
			struct sl_expr *k = parse_or(p);
			struct sl_expr_order *a;

			if (!k)
				return false;
			a = realloc(e->order, (e->norder + 1) * sizeof(*a));
			if (!a) {
				sl_expr_destroy(k);
				nomem(p);
				return false;
			}
			e->order = a;
			e->order[e->norder].expr = k;
			e->order[e->norder].desc = is_kw(p, "DESC");
			e->norder++;
			if (is_kw(p, "ASC") || is_kw(p, "DESC"))
				advance(p);
		} while (is_op(p, ",") && (advance(p), true));
	}
	return expect_op(p, ")", e->norder ? "',', ASC, DESC or ')' in OVER"
			 : e->npartition ? "',', ORDER BY or ')' in OVER"
					 : "PARTITION BY, ORDER BY or ')' in OVER");
}

/* A call, its aggregate FILTER (WHERE cond) (Nexmark q15 writes it), and its OVER window. */
static struct sl_expr *parse_call_over(struct parser *p, struct sl_expr *e)
{
	e = parse_call(p, e);
	if (e && is_kw(p, "FILTER")) {
		advance(p);
		if (!expect_op(p, "(", "'(' after FILTER") ||
		    !expect_kw(p, "WHERE", "WHERE after FILTER (") ||
		    !(e->filter = parse_or(p)) || !expect_op(p, ")", "')' closing FILTER")) {
			sl_expr_destroy(e);
			return NULL;
		}
	}
	if (e && is_kw(p, "OVER") && !parse_over(p, e)) {
		sl_expr_destroy(e);
		return NULL;
	}
	return e;
}

/* FLOOR(x TO unit) / CEIL(x TO unit), or the plain functions FLOOR(x) / CEIL(x). */
static struct sl_expr *parse_round(struct parser *p, struct sl_expr *e)
{
	int64_t ms;

	advance(p);
	if (!add_arg(p, e, parse_or(p)))
		goto out_free;
	if (is_kw(p, "TO")) {
		e->kind = SL_EXPR_ROUND_TO;
		advance(p);
		e->unit = take_unit(p, &ms);
		if (e->unit == SL_EXPR_UNIT_NONE)
			goto out_free;
	}
	if (!expect_op(p, ")", e->kind == SL_EXPR_ROUND_TO ? "')'" : "TO or ')'"))
		goto out_free;
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

/* CASE [x] WHEN c THEN r ... [ELSE e] END, with cur on CASE. */
static struct sl_expr *parse_case(struct parser *p)
{
	struct sl_expr *e = node_at(p, SL_EXPR_CASE, &p->cur);

	if (!e)
		return NULL;
	advance(p);
	/* CASE END would otherwise read END as the operand and blame it for not being one. */
	if (!is_kw(p, "WHEN") && !is_kw(p, "END")) {
		e->case_operand = parse_or(p);
		if (!e->case_operand)
			goto out_free;
	}
	if (!is_kw(p, "WHEN")) {
		expected(p, "WHEN");
		goto out_free;
	}
	while (is_kw(p, "WHEN")) {
		advance(p);
		if (!add_arg(p, e, parse_or(p)) || !expect_kw(p, "THEN", "THEN") ||
		    !add_arg(p, e, parse_or(p)))
			goto out_free;
	}
	if (is_kw(p, "ELSE")) {
		advance(p);
		e->case_else = parse_or(p);
		if (!e->case_else)
			goto out_free;
	}
	if (!expect_kw(p, "END", "WHEN, ELSE or END"))
		goto out_free;
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

/* CAST(x AS type), with cur on CAST. */
static struct sl_expr *parse_cast(struct parser *p)
{
	struct sl_expr *e = node_at(p, SL_EXPR_CAST, &p->cur);

	if (!e)
		return NULL;
	advance(p);
	if (!expect_op(p, "(", "'(' after CAST") || !add_arg(p, e, parse_or(p)) ||
	    !expect_kw(p, "AS", "AS in CAST") || !parse_type(p, &e->type) ||
	    !expect_op(p, ")", "')' closing CAST"))
		goto out_free;
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

static struct sl_expr *parse_int(struct parser *p)
{
	struct sl_expr *e;
	int64_t v = 0;

	for (uint32_t i = 0; i < p->cur.len; i++) {
		int d = p->cur.text[i] - '0';

		if (v > (INT64_MAX - d) / 10) {
			fail_at(p, p->cur.line, p->cur.col,
				"integer %.*s is out of BIGINT range (write it as a decimal)",
				(int)p->cur.len, p->cur.text);
			return NULL;
		}
		v = v * 10 + d;
	}
	e = node_at(p, SL_EXPR_INT, &p->cur);
	if (!e)
		return NULL;
	e->ival = v;
	e->text = text_dup(p, &p->cur);
	if (!e->text) {
		sl_expr_destroy(e);
		return NULL;
	}
	advance(p);
	return e;
}

/* Literal with its text copied: DECIMAL, STRING, TIMESTAMP 'x', DATE 'x' (cur on the text). */
static struct sl_expr *text_node(struct parser *p, enum sl_expr_kind kind, struct sl_tok at)
{
	struct sl_expr *e = node_at(p, kind, &at);

	if (!e)
		return NULL;
	e->text = text_dup(p, &p->cur);
	if (!e->text) {
		sl_expr_destroy(e);
		return NULL;
	}
	advance(p);
	return e;
}

static struct sl_expr *parse_concat(struct parser *p);

/* Renames a call node (the SQL-standard keyword forms map onto plain functions). */
static bool rename_call(struct parser *p, struct sl_expr *e, const char *name)
{
	char *n = strdup(name);

	if (!n) {
		nomem(p);
		return false;
	}
	free(e->text);
	e->text = n;
	return true;
}

/* A ' ' string literal at the current position (TRIM's default characters). */
static struct sl_expr *space_literal(struct parser *p)
{
	struct sl_expr *e = node_at(p, SL_EXPR_STRING, &p->cur);

	if (e && !(e->text = strdup(" "))) {
		sl_expr_destroy(e);
		nomem(p);
		return NULL;
	}
	return e;
}

/*
 * The SQL-standard call forms with keywords between the arguments, with cur just after '('
 * and e the call; each becomes a plain function the compiler knows:
 *   SUBSTRING(s FROM a [FOR b])               SUBSTRING(s, a[, b])
 *   POSITION(a IN b)                          LOCATE(a, b)
 *   EXTRACT(unit FROM x)                      YEAR(x), MONTH(x), DAYOFMONTH(x), HOUR(x), ...
 *   TRIM([BOTH|LEADING|TRAILING] [c] FROM s)  BTRIM / LTRIM / RTRIM(s, c)
 * Returns e, NULL on error (e freed), or e untouched with *plain set for the ordinary
 * comma form.
 */
static struct sl_expr *parse_keyword_call(struct parser *p, struct sl_expr *e, bool *plain)
{
	*plain = false;
	if (!strcasecmp(e->text, "EXTRACT")) {
		static const struct {
			const char *unit, *fn;
		} units[] = {
			{ "YEAR", "YEAR" }, { "QUARTER", "QUARTER" }, { "MONTH", "MONTH" },
			{ "WEEK", "WEEK" }, { "DAY", "DAYOFMONTH" }, { "DOW", "DAYOFWEEK" },
			{ "DOY", "DAYOFYEAR" }, { "HOUR", "HOUR" }, { "MINUTE", "MINUTE" },
			{ "SECOND", "SECOND" },
		};
		const char *fn = NULL;

		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (is_kw(p, units[i].unit))
				fn = units[i].fn;
		if (!fn) {
			expected(p, "a unit (YEAR, QUARTER, MONTH, WEEK, DAY, DOW, DOY, HOUR, MINUTE, "
				 "SECOND) in EXTRACT");
			goto out_free;
		}
		advance(p);
		if (!expect_kw(p, "FROM", "FROM in EXTRACT") || !rename_call(p, e, fn) ||
		    !add_arg(p, e, parse_or(p)) || !expect_op(p, ")", "')' closing EXTRACT"))
			goto out_free;
		return e;
	}
	if (!strcasecmp(e->text, "POSITION")) {
		/* the needle is read below comparisons so that IN is not taken as the operator */
		if (!add_arg(p, e, parse_concat(p)) || !expect_kw(p, "IN", "IN in POSITION") ||
		    !add_arg(p, e, parse_or(p)) || !expect_op(p, ")", "')' closing POSITION") ||
		    !rename_call(p, e, "LOCATE"))
			goto out_free;
		return e;
	}
	if (!strcasecmp(e->text, "TRIM")) {
		const char *fn = "BTRIM";
		struct sl_expr *chars = NULL, *s;
		bool mode = false;

		if (is_kw(p, "BOTH") || is_kw(p, "LEADING") || is_kw(p, "TRAILING")) {
			fn = is_kw(p, "LEADING") ? "LTRIM" : is_kw(p, "TRAILING") ? "RTRIM" : "BTRIM";
			mode = true;
			advance(p);
		}
		if (is_kw(p, "FROM")) {
			chars = space_literal(p);
			advance(p);
		} else {
			chars = parse_or(p);
			if (!chars)
				goto out_free;
			if (!mode && !is_kw(p, "FROM")) {
				/* TRIM(s) or TRIM(s, c): the ordinary form */
				if (!add_arg(p, e, chars))
					goto out_free;
				*plain = true;
				return e;
			}
			if (!expect_kw(p, "FROM", "FROM in TRIM")) {
				sl_expr_destroy(chars);
				goto out_free;
			}
		}
		if (!chars)
			goto out_free;
		s = parse_or(p);
		if (!add_arg(p, e, s)) {
			sl_expr_destroy(chars);
			goto out_free;
		}
		if (!add_arg(p, e, chars) || !expect_op(p, ")", "')' closing TRIM") ||
		    !rename_call(p, e, fn))
			goto out_free;
		return e;
	}
	/* SUBSTRING */
	if (!add_arg(p, e, parse_or(p)))
		goto out_free;
	if (!is_kw(p, "FROM")) {
		*plain = true;
		return e;
	}
	advance(p);
	if (!add_arg(p, e, parse_or(p)))
		goto out_free;
	if (is_kw(p, "FOR")) {
		advance(p);
		if (!add_arg(p, e, parse_or(p)))
			goto out_free;
	}
	if (!expect_op(p, ")", "FOR or ')' in SUBSTRING"))
		goto out_free;
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

/* Column a.b.c or function call name(...), with cur on the first name. */
static struct sl_expr *parse_name(struct parser *p)
{
	struct sl_expr *e;
	struct sl_tok first = p->cur;

	struct sl_tok next = peek(p);

	if (sl_tok_is_op(&next, "(")) {
		e = node_at(p, SL_EXPR_CALL, &first);
		if (!e)
			return NULL;
		e->text = ident_dup(p, &first);
		if (!e->text) {
			sl_expr_destroy(e);
			return NULL;
		}
		advance(p);
		if (sl_tok_is_kw(&first, "FLOOR") || sl_tok_is_kw(&first, "CEIL"))
			return parse_round(p, e);
		if ((sl_tok_is_kw(&first, "SUBSTRING") || sl_tok_is_kw(&first, "POSITION") ||
		     sl_tok_is_kw(&first, "EXTRACT") || sl_tok_is_kw(&first, "TRIM")) &&
		    !first.quoted) {
			bool plain;

			advance(p);
			if (is_op(p, ")")) {
				expected(p, "an argument");
				sl_expr_destroy(e);
				return NULL;
			}
			e = parse_keyword_call(p, e, &plain);
			if (!e || !plain)
				return e;
			/* the ordinary comma form: the first argument is already in e */
			while (is_op(p, ",")) {
				advance(p);
				if (!add_arg(p, e, parse_arg(p))) {
					sl_expr_destroy(e);
					return NULL;
				}
			}
			if (!expect_op(p, ")", "',' or ')' in the argument list")) {
				sl_expr_destroy(e);
				return NULL;
			}
			return e;
		}
		return parse_call_over(p, e);
	}
	e = node_at(p, SL_EXPR_COLUMN, &first);
	if (!e || !add_path(p, e, &first))
		goto out_free;
	advance(p);
	while (is_op(p, ".")) {
		advance(p);
		if (p->cur.kind != SL_TOK_IDENT) {
			expected(p, "a field name after '.'");
			goto out_free;
		}
		if (!add_path(p, e, &p->cur))
			goto out_free;
		advance(p);
	}
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

static struct sl_expr *parse_primary(struct parser *p)
{
	struct sl_tok t = p->cur;
	struct sl_expr *e;

	switch (t.kind) {
	case SL_TOK_INTEGER:
		return parse_int(p);
	case SL_TOK_DECIMAL:
		return text_node(p, SL_EXPR_DECIMAL, t);
	case SL_TOK_STRING:
		return text_node(p, SL_EXPR_STRING, t);
	case SL_TOK_OP:
		if (!is_op(p, "("))
			break;
		advance(p);
		e = parse_or(p);
		if (e && !expect_op(p, ")", "')'")) {
			sl_expr_destroy(e);
			return NULL;
		}
		return e;
	case SL_TOK_IDENT:
		if (t.quoted)
			return parse_name(p);
		if (is_kw(p, "TRUE") || is_kw(p, "FALSE") || is_kw(p, "NULL")) {
			e = node_at(p, is_kw(p, "NULL") ? SL_EXPR_NULL : SL_EXPR_BOOL, &t);
			if (e)
				e->ival = is_kw(p, "TRUE");
			advance(p);
			return e;
		}
		if (is_kw(p, "INTERVAL"))
			return parse_interval(p);
		if (is_kw(p, "CASE"))
			return parse_case(p);
		if (is_kw(p, "CAST"))
			return parse_cast(p);
		if ((is_kw(p, "TIMESTAMP") || is_kw(p, "DATE")) && peek(p).kind == SL_TOK_STRING) {
			enum sl_expr_kind k = is_kw(p, "DATE") ? SL_EXPR_DATE : SL_EXPR_TIMESTAMP;

			advance(p);
			return text_node(p, k, t);
		}
		if (sl_expr_is_reserved(&t))
			break;
		return parse_name(p);
	default:
		break;
	}
	expected(p, "an expression");
	return NULL;
}

/* Calls fn one nesting level deeper, refusing past MAX_DEPTH. */
static struct sl_expr *nested(struct parser *p, struct sl_expr *(*fn)(struct parser *))
{
	struct sl_expr *e;

	if (p->depth >= MAX_DEPTH) {
		fail_at(p, p->cur.line, p->cur.col, "expression nested more than %d deep",
			MAX_DEPTH);
		return NULL;
	}
	p->depth++;
	e = fn(p);
	p->depth--;
	return e;
}

/* A new operator node over lhs (already parsed), positioned at the operator token. */
static struct sl_expr *wrap(struct parser *p, enum sl_expr_kind kind, enum sl_expr_op op,
			    const struct sl_tok *at, struct sl_expr *lhs)
{
	struct sl_expr *e = node_at(p, kind, at);

	if (!e) {
		sl_expr_destroy(lhs);
		return NULL;
	}
	e->op = op;
	if (!add_arg(p, e, lhs)) {
		sl_expr_destroy(e);
		return NULL;
	}
	return e;
}

static struct sl_expr *parse_unary(struct parser *p)
{
	struct sl_tok t = p->cur;
	struct sl_expr *e;

	if (!is_op(p, "-") && !is_op(p, "+"))
		return parse_primary(p);
	e = node_at(p, SL_EXPR_UNARY, &t);
	if (!e)
		return NULL;
	e->op = is_op(p, "-") ? SL_EXPR_OP_NEG : SL_EXPR_OP_PLUS;
	advance(p);
	if (!add_arg(p, e, nested(p, parse_unary))) {
		sl_expr_destroy(e);
		return NULL;
	}
	return e;
}

struct binop {
	const char *text;
	enum sl_expr_op op;
};

static const struct binop mul_ops[] = {
	{ "*", SL_EXPR_OP_MUL }, { "/", SL_EXPR_OP_DIV }, { "%", SL_EXPR_OP_MOD }, { NULL },
};
static const struct binop add_ops[] = {
	{ "+", SL_EXPR_OP_ADD }, { "-", SL_EXPR_OP_SUB }, { NULL },
};
static const struct binop concat_ops[] = { { "||", SL_EXPR_OP_CONCAT }, { NULL } };
static const struct binop cmp_ops[] = {
	{ "=", SL_EXPR_OP_EQ }, { "<>", SL_EXPR_OP_NE }, { "!=", SL_EXPR_OP_NE },
	{ "<", SL_EXPR_OP_LT }, { "<=", SL_EXPR_OP_LE }, { ">", SL_EXPR_OP_GT },
	{ ">=", SL_EXPR_OP_GE }, { NULL },
};

static enum sl_expr_op match_op(const struct parser *p, const struct binop *ops)
{
	for (; ops->text; ops++)
		if (is_op(p, ops->text))
			return ops->op;
	return SL_EXPR_OP_NONE;
}

/* Left-associative level: operand (ops operand)*. */
/* Wraps e as the left operand of a binary operator at t, counting chain links. */
static struct sl_expr *chain_link(struct parser *p, enum sl_expr_op op, const struct sl_tok *t,
				  struct sl_expr *e)
{
	if (++p->nops > MAX_OPS) {
		fail_at(p, t->line, t->col, "expression has more than %d operators", MAX_OPS);
		sl_expr_destroy(e);
		return NULL;
	}
	return wrap(p, SL_EXPR_BINARY, op, t, e);
}

static struct sl_expr *parse_level(struct parser *p, const struct binop *ops,
				   struct sl_expr *(*operand)(struct parser *))
{
	struct sl_expr *e = operand(p);
	enum sl_expr_op op;

	while (e && (op = match_op(p, ops)) != SL_EXPR_OP_NONE) {
		struct sl_tok t = p->cur;

		e = chain_link(p, op, &t, e);
		if (!e)
			return NULL;
		advance(p);
		if (!add_arg(p, e, operand(p))) {
			sl_expr_destroy(e);
			return NULL;
		}
	}
	return e;
}

static struct sl_expr *parse_mul(struct parser *p)
{
	return parse_level(p, mul_ops, parse_unary);
}

static struct sl_expr *parse_add(struct parser *p)
{
	return parse_level(p, add_ops, parse_mul);
}

static struct sl_expr *parse_concat(struct parser *p)
{
	return parse_level(p, concat_ops, parse_add);
}

/* One comparison suffix applied to lhs; cur is on the operator (or NOT, IS, ...). */
static struct sl_expr *parse_cmp_suffix(struct parser *p, struct sl_expr *lhs)
{
	struct sl_tok t = p->cur;
	enum sl_expr_op op = match_op(p, cmp_ops);
	struct sl_expr *e;
	bool neg = false;

	if (op != SL_EXPR_OP_NONE) {
		e = wrap(p, SL_EXPR_BINARY, op, &t, lhs);
		if (!e)
			return NULL;
		advance(p);
		goto out_rhs;
	}
	if (is_kw(p, "IS")) {
		e = wrap(p, SL_EXPR_IS, SL_EXPR_OP_NONE, &t, lhs);
		if (!e)
			return NULL;
		advance(p);
		if (is_kw(p, "NOT")) {
			e->negated = true;
			advance(p);
		}
		if (is_kw(p, "NULL")) {
			e->is_what = SL_EXPR_IS_NULL;
		} else if (is_kw(p, "TRUE")) {
			e->is_what = SL_EXPR_IS_TRUE;
		} else if (is_kw(p, "FALSE")) {
			e->is_what = SL_EXPR_IS_FALSE;
		} else {
			expected(p, e->negated ? "NULL, TRUE or FALSE after IS NOT"
					       : "NOT, NULL, TRUE or FALSE after IS");
			goto out_free;
		}
		advance(p);
		return e;
	}
	if (is_kw(p, "NOT")) {
		neg = true;
		advance(p);
	}
	if (is_kw(p, "BETWEEN")) {
		e = wrap(p, SL_EXPR_BETWEEN, SL_EXPR_OP_NONE, &t, lhs);
		if (!e)
			return NULL;
		e->negated = neg;
		advance(p);
		/* Bounds are read above AND, so the AND here is BETWEEN's own. */
		if (!add_arg(p, e, parse_concat(p)) ||
		    !expect_kw(p, "AND", "AND in BETWEEN") || !add_arg(p, e, parse_concat(p)))
			goto out_free;
		return e;
	}
	if (is_kw(p, "IN")) {
		e = wrap(p, SL_EXPR_IN, SL_EXPR_OP_NONE, &t, lhs);
		if (!e)
			return NULL;
		e->negated = neg;
		advance(p);
		if (!expect_op(p, "(", "'(' after IN"))
			goto out_free;
		for (;;) {
			if (!add_arg(p, e, parse_or(p)))
				goto out_free;
			if (!is_op(p, ","))
				break;
			advance(p);
		}
		if (!expect_op(p, ")", "',' or ')' in the IN list"))
			goto out_free;
		return e;
	}
	if (is_kw(p, "LIKE")) {
		e = wrap(p, SL_EXPR_LIKE, SL_EXPR_OP_NONE, &t, lhs);
		if (!e)
			return NULL;
		e->negated = neg;
		advance(p);
		goto out_rhs;
	}
	/* Only reached after NOT: a bare NOT cannot follow an operand. */
	expected(p, "BETWEEN, IN or LIKE after NOT");
	sl_expr_destroy(lhs);
	return NULL;
out_rhs:
	if (!add_arg(p, e, parse_concat(p)))
		goto out_free;
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

static bool at_cmp(const struct parser *p)
{
	return match_op(p, cmp_ops) != SL_EXPR_OP_NONE || is_kw(p, "IS") || is_kw(p, "NOT") ||
	       is_kw(p, "BETWEEN") || is_kw(p, "IN") || is_kw(p, "LIKE");
}

static struct sl_expr *parse_cmp(struct parser *p)
{
	struct sl_expr *e = parse_concat(p);

	while (e && at_cmp(p))
		e = parse_cmp_suffix(p, e);
	return e;
}

static struct sl_expr *parse_not(struct parser *p)
{
	struct sl_tok t = p->cur;
	struct sl_expr *e;

	if (!is_kw(p, "NOT"))
		return parse_cmp(p);
	e = node_at(p, SL_EXPR_UNARY, &t);
	if (!e)
		return NULL;
	e->op = SL_EXPR_OP_NOT;
	advance(p);
	if (!add_arg(p, e, nested(p, parse_not))) {
		sl_expr_destroy(e);
		return NULL;
	}
	return e;
}

/* AND and OR are words, not operator tokens, so they get their own small loops. */
static struct sl_expr *parse_kw_level(struct parser *p, const char *kw, enum sl_expr_op op,
				      struct sl_expr *(*operand)(struct parser *))
{
	struct sl_expr *e = operand(p);

	while (e && is_kw(p, kw)) {
		struct sl_tok t = p->cur;

		e = chain_link(p, op, &t, e);
		if (!e)
			return NULL;
		advance(p);
		if (!add_arg(p, e, operand(p))) {
			sl_expr_destroy(e);
			return NULL;
		}
	}
	return e;
}

static struct sl_expr *parse_and(struct parser *p)
{
	return parse_kw_level(p, "AND", SL_EXPR_OP_AND, parse_not);
}

static struct sl_expr *parse_or_level(struct parser *p)
{
	return parse_kw_level(p, "OR", SL_EXPR_OP_OR, parse_and);
}

/* Every nested expression (parentheses, arguments, CASE parts) comes through here. */
static struct sl_expr *parse_or(struct parser *p)
{
	return nested(p, parse_or_level);
}

struct sl_expr *sl_expr_parse(struct sl_lexer *lx, struct sl_tok *cur, char *err, size_t errcap)
{
	struct parser p = { .lx = lx, .cur = *cur, .err = err, .errcap = errcap };
	struct sl_expr *e;

	if (errcap)
		err[0] = 0;
	e = parse_or(&p);
	*cur = p.cur;
	return e;
}

struct sl_expr *sl_expr_parse_str(const char *src, size_t len, char *err, size_t errcap)
{
	struct sl_lexer lx;
	struct sl_tok cur;
	struct sl_expr *e;

	sl_lexer_init(&lx, src, len);
	cur = sl_lexer_next(&lx);
	e = sl_expr_parse(&lx, &cur, err, errcap);
	if (e && cur.kind != SL_TOK_EOF) {
		struct parser p = { .lx = &lx, .cur = cur, .err = err, .errcap = errcap };

		expected(&p, "an operator or end of expression");
		sl_expr_destroy(e);
		return NULL;
	}
	return e;
}
