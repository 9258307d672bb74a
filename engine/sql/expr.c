/*
 * expr.c - Flink SQL expressions to a tree with positions (see expr.h).
 *
 * Recursive descent, one function per precedence level, over the caller's token cursor
 * (cursor.h: its return conventions are ours, and the query parser's cursor is shared, so
 * both read one token stream); the one two-token look-ahead (TIMESTAMP 'x' vs a column
 * named timestamp) is sl_cur_peek(). Invariants: a node is linked into its parent before
 * its children are parsed, so on failure freeing the root frees everything; the first
 * error wins (the cursor's err holds the message of the token where parsing stopped).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "expr.h"

struct parser {
	struct sl_cur *c;
	uint32_t depth; /* recursion guard: a hostile "((((..." must not exhaust the stack */
	uint32_t nops;	/* binary operators so far: chains are left-deep trees that every
			 * walker (destroy, print, the planner) recurses into */
};

/* A chain `a AND a AND ...` is a tree as deep as it is long. */
#define MAX_OPS 10000

/* Far beyond any hand-written query, far below what an 8 MB stack holds. */
#define MAX_DEPTH 256

static struct sl_expr *parse_or(struct parser *p);

struct sl_expr *sl_expr_new(struct sl_cur *c, enum sl_expr_kind kind, const struct sl_tok *at)
{
	struct sl_expr *e = calloc(1, sizeof(*e));

	if (!e) {
		sl_cur_nomem(c);
		return NULL;
	}
	e->kind = kind;
	e->line = at->line;
	e->col = at->col;
	return e;
}

int sl_expr_add_arg(struct sl_cur *c, struct sl_expr *e, struct sl_expr *child)
{
	struct sl_expr **a;

	if (!child)
		return -EINVAL;
	a = realloc(e->args, (e->nargs + 1) * sizeof(*a));
	if (!a) {
		sl_expr_destroy(child);
		return sl_cur_nomem(c);
	}
	e->args = a;
	e->args[e->nargs++] = child;
	return 0;
}

int sl_expr_add_path(struct sl_cur *c, struct sl_expr *e, const struct sl_tok *t)
{
	char **a = realloc(e->path, (e->npath + 1) * sizeof(*a));

	if (!a)
		return sl_cur_nomem(c);
	e->path = a;
	e->path[e->npath] = sl_cur_ident_dup(c, t);
	if (!e->path[e->npath])
		return -ENOMEM;
	e->npath++;
	return 0;
}

/*
 * Words that end an expression rather than name a column, so `SELECT a FROM t` stops at
 * FROM and `SELECT FROM` is reported at FROM. Backquoted, they are names again.
 */
bool sl_expr_is_reserved(const struct sl_tok *t)
{
	static const char *const words[] = {
		"AND",	  "OR",	   "NOT",    "FROM",	   "WHERE",    "GROUP",	    "BY",
		"HAVING", "ORDER", "AS",     "WHEN",	   "THEN",     "ELSE",	    "END",
		"SELECT", "IS",	   "IN",     "BETWEEN",	   "LIKE",     "ON",	    "JOIN",
		"UNION",  "LIMIT", "WINDOW", "TO",	   "DISTINCT", "ALL",	    "INTERVAL",
		"CASE",	  "CAST",  "TABLE",  "DESCRIPTOR", "OVER",     "PARTITION", "FILTER",
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

/* SECOND(S) | MINUTE(S) | HOUR(S) | DAY(S): Flink's parser takes both forms, and jobs write both.
 */
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
		if (sl_cur_is_kw(p->c, units[i].one) || sl_cur_is_kw(p->c, units[i].many)) {
			sl_cur_advance(p->c);
			*ms = units[i].ms;
			return units[i].unit;
		}
	}
	sl_cur_expected(p->c, "a time unit (SECOND, MINUTE, HOUR, DAY)");
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
	struct sl_expr *e = sl_expr_new(p->c, SL_EXPR_INTERVAL, &p->c->tok);
	struct sl_tok vt;
	int64_t unit_ms;

	if (!e)
		return NULL;
	sl_cur_advance(p->c);
	vt = p->c->tok;
	if (vt.kind != SL_TOK_STRING) {
		sl_cur_expected(p->c, "a quoted count after INTERVAL");
		goto out_free;
	}
	e->text = sl_cur_text_dup(p->c, &vt);
	if (!e->text)
		goto out_free;
	sl_cur_advance(p->c);
	e->unit = take_unit(p, &unit_ms);
	if (e->unit == SL_EXPR_UNIT_NONE)
		goto out_free;
	if (!interval_ms(e->text, unit_ms, &e->ival)) {
		sl_cur_fail_at(p->c, vt.line, vt.col,
			       "expected a count of whole milliseconds in INTERVAL, found '%s'",
			       e->text);
		goto out_free;
	}
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

/* Reads "(n)" into *v when present. 0 or -EINVAL. */
static int opt_len(struct parser *p, uint32_t *v, const char *what, const char *close)
{
	if (!sl_cur_accept_op(p->c, "("))
		return 0;
	if (p->c->tok.kind != SL_TOK_INTEGER || p->c->tok.len > 9)
		return sl_cur_expected(p->c, what);
	*v = (uint32_t)strtoul(p->c->tok.text, NULL, 10);
	sl_cur_advance(p->c);
	return sl_cur_expect_op(p->c, ")", close);
}

/* The CAST target types; ROW and the other DDL-only types are not castable here. */
static int parse_type(struct parser *p, struct sl_ddl_type *ty)
{
	static const char what[] = "a type (BOOLEAN, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, "
				   "STRING, VARCHAR, TIMESTAMP, TIMESTAMP_LTZ, DATE)";
	struct sl_cur *c = p->c;
	struct sl_tok t = c->tok;
	int rc;

	ty->line = t.line;
	ty->col = t.col;
	if (sl_cur_is_kw(c, "BOOLEAN")) {
		ty->kind = SL_DDL_BOOLEAN;
	} else if (sl_cur_is_kw(c, "INT") || sl_cur_is_kw(c, "INTEGER")) {
		ty->kind = SL_DDL_INT;
	} else if (sl_cur_is_kw(c, "BIGINT")) {
		ty->kind = SL_DDL_BIGINT;
	} else if (sl_cur_is_kw(c, "FLOAT")) {
		ty->kind = SL_DDL_FLOAT;
	} else if (sl_cur_is_kw(c, "DOUBLE")) {
		ty->kind = SL_DDL_DOUBLE;
	} else if (sl_cur_is_kw(c, "STRING")) {
		ty->kind = SL_DDL_STRING;
	} else if (sl_cur_is_kw(c, "DATE")) {
		ty->kind = SL_DDL_DATE;
	} else if (sl_cur_is_kw(c, "DECIMAL") || sl_cur_is_kw(c, "DEC") ||
		   sl_cur_is_kw(c, "NUMERIC")) {
		ty->kind = SL_DDL_DECIMAL;
		ty->precision = 10;
		sl_cur_advance(c);
		if (!sl_cur_accept_op(c, "("))
			return 0;
		if (c->tok.kind != SL_TOK_INTEGER || c->tok.len > 2)
			return sl_cur_expected(c, "DECIMAL precision");
		ty->precision = (uint32_t)strtoul(c->tok.text, NULL, 10);
		sl_cur_advance(c);
		if (sl_cur_accept_op(c, ",")) {
			if (c->tok.kind != SL_TOK_INTEGER || c->tok.len > 2)
				return sl_cur_expected(c, "DECIMAL scale");
			ty->scale = (uint32_t)strtoul(c->tok.text, NULL, 10);
			sl_cur_advance(c);
		}
		if (ty->precision < 1 || ty->precision > 38 || ty->scale > ty->precision)
			return sl_cur_fail_at(c, t.line, t.col,
					      "DECIMAL(%u, %u) needs 1 <= precision <= 38 and "
					      "scale <= precision",
					      ty->precision, ty->scale);
		return sl_cur_expect_op(c, ")", "')' after DECIMAL precision and scale");
	} else if (sl_cur_is_kw(c, "VARCHAR")) {
		ty->kind = SL_DDL_VARCHAR;
		ty->precision = 1;
		sl_cur_advance(c);
		return opt_len(p, &ty->precision, "VARCHAR length", "')' after VARCHAR length");
	} else if (sl_cur_is_kw(c, "TIMESTAMP") || sl_cur_is_kw(c, "TIMESTAMP_LTZ")) {
		ty->kind = sl_cur_is_kw(c, "TIMESTAMP") ? SL_DDL_TIMESTAMP : SL_DDL_TIMESTAMP_LTZ;
		ty->precision = 6;
		sl_cur_advance(c);
		if ((rc = opt_len(p, &ty->precision, "TIMESTAMP precision",
				  "')' after TIMESTAMP precision")))
			return rc;
		if (ty->precision > 9)
			return sl_cur_fail_at(c, t.line, t.col, "TIMESTAMP precision %u exceeds 9",
					      ty->precision);
		if (ty->kind == SL_DDL_TIMESTAMP && sl_cur_accept_kw(c, "WITH")) {
			if ((rc = sl_cur_expect_kw(c, "LOCAL",
						   "LOCAL TIME ZONE after TIMESTAMP WITH")) ||
			    (rc = sl_cur_expect_kw(c, "TIME",
						   "LOCAL TIME ZONE after TIMESTAMP WITH")) ||
			    (rc = sl_cur_expect_kw(c, "ZONE",
						   "LOCAL TIME ZONE after TIMESTAMP WITH")))
				return rc;
			ty->kind = SL_DDL_TIMESTAMP_LTZ;
		}
		return 0;
	} else {
		return sl_cur_expected(c, what);
	}
	sl_cur_advance(c);
	return 0;
}

/* One argument of a call: DESCRIPTOR(a, b) and TABLE name exist only here (window TVFs). */
static struct sl_expr *parse_arg(struct parser *p)
{
	struct sl_expr *e;

	if (sl_cur_is_kw(p->c, "TABLE")) {
		e = sl_expr_new(p->c, SL_EXPR_TABLE, &p->c->tok);
		if (!e)
			return NULL;
		sl_cur_advance(p->c);
		for (;;) {
			if (!is_name(&p->c->tok)) {
				sl_cur_expected(p->c, "a table name after TABLE");
				goto out_free;
			}
			if (sl_expr_add_path(p->c, e, &p->c->tok))
				goto out_free;
			sl_cur_advance(p->c);
			if (!sl_cur_accept_op(p->c, "."))
				return e;
		}
	}
	if (sl_cur_is_kw(p->c, "DESCRIPTOR")) {
		e = sl_expr_new(p->c, SL_EXPR_DESCRIPTOR, &p->c->tok);
		if (!e)
			return NULL;
		sl_cur_advance(p->c);
		if (sl_cur_expect_op(p->c, "(", "'(' after DESCRIPTOR"))
			goto out_free;
		for (;;) {
			struct sl_expr *col;

			if (!is_name(&p->c->tok)) {
				sl_cur_expected(p->c, "a column name in DESCRIPTOR");
				goto out_free;
			}
			col = sl_expr_new(p->c, SL_EXPR_COLUMN, &p->c->tok);
			if (sl_expr_add_arg(p->c, e, col) ||
			    sl_expr_add_path(p->c, col, &p->c->tok))
				goto out_free;
			sl_cur_advance(p->c);
			if (!sl_cur_accept_op(p->c, ","))
				break;
		}
		if (sl_cur_expect_op(p->c, ")", "',' or ')' in DESCRIPTOR"))
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
	sl_cur_advance(p->c);
	if (sl_cur_accept_op(p->c, ")")) {
		return e;
	}
	if (sl_cur_is_op(p->c, "*")) {
		struct sl_expr *star = sl_expr_new(p->c, SL_EXPR_STAR, &p->c->tok);

		if (sl_expr_add_arg(p->c, e, star))
			goto out_free;
		sl_cur_advance(p->c);
		if (sl_cur_expect_op(p->c, ")", "')' after *"))
			goto out_free;
		return e;
	}
	if (sl_cur_is_kw(p->c, "DISTINCT")) {
		e->distinct = true;
		sl_cur_advance(p->c);
	}
	for (;;) {
		if (sl_expr_add_arg(p->c, e, parse_arg(p)))
			goto out_free;
		if (!sl_cur_accept_op(p->c, ","))
			break;
	}
	if (sl_cur_expect_op(p->c, ")", "',' or ')' in the argument list"))
		goto out_free;
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

/* One frame bound: UNBOUNDED PRECEDING (-1), CURRENT ROW (0), n PRECEDING (ROWS) or
 * INTERVAL 'n' unit PRECEDING (RANGE), into e->frame_lo. Flink's OVER windows end at the
 * current row, so FOLLOWING is refused here with the reason. 0 or -errno. */
static int parse_frame_bound(struct parser *p, struct sl_expr *e)
{
	struct sl_tok at = p->c->tok;

	if (sl_cur_accept_kw(p->c, "UNBOUNDED")) {
		e->frame_lo = -1;
	} else if (sl_cur_accept_kw(p->c, "CURRENT")) {
		e->frame_lo = 0;
		return sl_cur_expect_kw(p->c, "ROW", "ROW after CURRENT");
	} else if (e->frame == SL_FRAME_ROWS && at.kind == SL_TOK_INTEGER && at.len <= 12) {
		e->frame_lo = 0;
		for (uint32_t i = 0; i < at.len; i++)
			e->frame_lo = e->frame_lo * 10 + (at.text[i] - '0');
		sl_cur_advance(p->c);
	} else if (e->frame == SL_FRAME_RANGE && sl_cur_is_kw(p->c, "INTERVAL")) {
		struct sl_expr *iv = parse_interval(p);

		if (!iv)
			return -EINVAL;
		e->frame_lo = iv->ival;
		sl_expr_destroy(iv);
		if (e->frame_lo < 0)
			return sl_cur_fail_at(p->c, at.line, at.col,
					      "a RANGE frame's INTERVAL must not be negative");
	} else {
		return sl_cur_expected(p->c,
				       e->frame == SL_FRAME_ROWS
					       ? "UNBOUNDED, CURRENT ROW or a row count"
					       : "UNBOUNDED, CURRENT ROW or INTERVAL 'n' unit");
	}
	if (sl_cur_is_kw(p->c, "FOLLOWING"))
		return sl_cur_fail_at(p->c, p->c->tok.line, p->c->tok.col,
				      "OVER windows end at the current row: FOLLOWING is not "
				      "supported (nor is it by Flink)");
	return sl_cur_expect_kw(p->c, "PRECEDING", "PRECEDING");
}

/* [ROWS|RANGE] [BETWEEN lo AND CURRENT ROW | lo] after an OVER's ORDER BY. 0 or -errno. */
static int parse_frame(struct parser *p, struct sl_expr *e)
{
	int rc;

	if (sl_cur_accept_kw(p->c, "ROWS"))
		e->frame = SL_FRAME_ROWS;
	else if (sl_cur_accept_kw(p->c, "RANGE"))
		e->frame = SL_FRAME_RANGE;
	else
		return 0;
	if (!sl_cur_accept_kw(p->c, "BETWEEN"))
		return parse_frame_bound(p, e);
	if ((rc = parse_frame_bound(p, e)) ||
	    (rc = sl_cur_expect_kw(p->c, "AND", "AND in the frame")))
		return rc;
	if (sl_cur_is_kw(p->c, "UNBOUNDED") || p->c->tok.kind == SL_TOK_INTEGER ||
	    sl_cur_is_kw(p->c, "INTERVAL"))
		return sl_cur_fail_at(p->c, p->c->tok.line, p->c->tok.col,
				      "OVER windows end at the current row: write AND CURRENT ROW");
	if ((rc = sl_cur_expect_kw(p->c, "CURRENT", "CURRENT ROW ending the frame")))
		return rc;
	return sl_cur_expect_kw(p->c, "ROW", "ROW after CURRENT");
}

/* ([PARTITION BY e, ...] [ORDER BY e [ASC|DESC], ...] [frame]) into e. 0 or -errno. */
static int parse_window_spec(struct parser *p, struct sl_expr *e)
{
	int rc;

	if ((rc = sl_cur_expect_op(p->c, "(", "'(' or a window name after OVER")))
		return rc;
	if (sl_cur_accept_kw(p->c, "PARTITION")) {
		if ((rc = sl_cur_expect_kw(p->c, "BY", "BY after PARTITION")))
			return rc;
		do {
			struct sl_expr *k = parse_or(p);
			struct sl_expr **a;

			if (!k)
				return -EINVAL;
			a = realloc(e->partition, (e->npartition + 1) * sizeof(*a));
			if (!a) {
				sl_expr_destroy(k);
				return sl_cur_nomem(p->c);
			}
			e->partition = a;
			e->partition[e->npartition++] = k;
		} while (sl_cur_accept_op(p->c, ","));
	}
	if (sl_cur_accept_kw(p->c, "ORDER")) {
		if ((rc = sl_cur_expect_kw(p->c, "BY", "BY after ORDER")))
			return rc;
		do {
			struct sl_expr *k = parse_or(p);
			struct sl_expr_order *a;

			if (!k)
				return -EINVAL;
			a = realloc(e->order, (e->norder + 1) * sizeof(*a));
			if (!a) {
				sl_expr_destroy(k);
				return sl_cur_nomem(p->c);
			}
			e->order = a;
			e->order[e->norder].expr = k;
			e->order[e->norder].desc = sl_cur_is_kw(p->c, "DESC");
			e->norder++;
			if (sl_cur_is_kw(p->c, "ASC") || sl_cur_is_kw(p->c, "DESC"))
				sl_cur_advance(p->c);
		} while (sl_cur_accept_op(p->c, ","));
		if ((rc = parse_frame(p, e)))
			return rc;
	}
	return sl_cur_expect_op(p->c, ")",
				e->frame	? "')' after the frame"
				: e->norder	? "',', ASC, DESC, ROWS, RANGE or ')' in OVER"
				: e->npartition ? "',', ORDER BY or ')' in OVER"
						: "PARTITION BY, ORDER BY or ')' in OVER");
}

/* OVER (spec) or OVER name (a WINDOW clause's) after a call. 0 or -errno. */
static int parse_over(struct parser *p, struct sl_expr *e)
{
	e->over = true;
	sl_cur_advance(p->c);
	if (p->c->tok.kind == SL_TOK_IDENT && !sl_expr_is_reserved(&p->c->tok)) {
		e->over_name = sl_cur_text_dup(p->c, &p->c->tok);
		if (!e->over_name)
			return sl_cur_nomem(p->c);
		sl_cur_advance(p->c);
		return 0;
	}
	return parse_window_spec(p, e);
}

int sl_expr_parse_window_spec(struct sl_cur *c, struct sl_expr *holder)
{
	struct parser p = { .c = c };

	return parse_window_spec(&p, holder);
}

/* A call, its aggregate FILTER (WHERE cond) (Nexmark q15 writes it), and its OVER window. */
static struct sl_expr *parse_call_over(struct parser *p, struct sl_expr *e)
{
	e = parse_call(p, e);
	if (e && sl_cur_is_kw(p->c, "FILTER")) {
		sl_cur_advance(p->c);
		if (sl_cur_expect_op(p->c, "(", "'(' after FILTER") ||
		    sl_cur_expect_kw(p->c, "WHERE", "WHERE after FILTER (") ||
		    !(e->filter = parse_or(p)) ||
		    sl_cur_expect_op(p->c, ")", "')' closing FILTER")) {
			sl_expr_destroy(e);
			return NULL;
		}
	}
	if (e && sl_cur_is_kw(p->c, "OVER") && parse_over(p, e)) {
		sl_expr_destroy(e);
		return NULL;
	}
	return e;
}

/* FLOOR(x TO unit) / CEIL(x TO unit), or the plain functions FLOOR(x) / CEIL(x). */
static struct sl_expr *parse_round(struct parser *p, struct sl_expr *e)
{
	int64_t ms;

	sl_cur_advance(p->c);
	if (sl_expr_add_arg(p->c, e, parse_or(p)))
		goto out_free;
	if (sl_cur_is_kw(p->c, "TO")) {
		e->kind = SL_EXPR_ROUND_TO;
		sl_cur_advance(p->c);
		e->unit = take_unit(p, &ms);
		if (e->unit == SL_EXPR_UNIT_NONE)
			goto out_free;
	}
	if (sl_cur_expect_op(p->c, ")", e->kind == SL_EXPR_ROUND_TO ? "')'" : "TO or ')'"))
		goto out_free;
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

/* CASE [x] WHEN c THEN r ... [ELSE e] END, with cur on CASE. */
static struct sl_expr *parse_case(struct parser *p)
{
	struct sl_expr *e = sl_expr_new(p->c, SL_EXPR_CASE, &p->c->tok);

	if (!e)
		return NULL;
	sl_cur_advance(p->c);
	/* CASE END would otherwise read END as the operand and blame it for not being one. */
	if (!sl_cur_is_kw(p->c, "WHEN") && !sl_cur_is_kw(p->c, "END")) {
		e->case_operand = parse_or(p);
		if (!e->case_operand)
			goto out_free;
	}
	if (!sl_cur_is_kw(p->c, "WHEN")) {
		sl_cur_expected(p->c, "WHEN");
		goto out_free;
	}
	while (sl_cur_is_kw(p->c, "WHEN")) {
		sl_cur_advance(p->c);
		if (sl_expr_add_arg(p->c, e, parse_or(p)) ||
		    sl_cur_expect_kw(p->c, "THEN", "THEN") || sl_expr_add_arg(p->c, e, parse_or(p)))
			goto out_free;
	}
	if (sl_cur_accept_kw(p->c, "ELSE")) {
		e->case_else = parse_or(p);
		if (!e->case_else)
			goto out_free;
	}
	if (sl_cur_expect_kw(p->c, "END", "WHEN, ELSE or END"))
		goto out_free;
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

/* CAST(x AS type), with cur on CAST. */
static struct sl_expr *parse_cast(struct parser *p)
{
	struct sl_expr *e = sl_expr_new(p->c, SL_EXPR_CAST, &p->c->tok);

	if (!e)
		return NULL;
	sl_cur_advance(p->c);
	if (sl_cur_expect_op(p->c, "(", "'(' after CAST") ||
	    sl_expr_add_arg(p->c, e, parse_or(p)) || sl_cur_expect_kw(p->c, "AS", "AS in CAST") ||
	    parse_type(p, &e->type) || sl_cur_expect_op(p->c, ")", "')' closing CAST"))
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

	for (uint32_t i = 0; i < p->c->tok.len; i++) {
		int d = p->c->tok.text[i] - '0';

		if (v > (INT64_MAX - d) / 10) {
			sl_cur_fail_at(
				p->c, p->c->tok.line, p->c->tok.col,
				"integer %.*s is out of BIGINT range (write it as a decimal)",
				(int)p->c->tok.len, p->c->tok.text);
			return NULL;
		}
		v = v * 10 + d;
	}
	e = sl_expr_new(p->c, SL_EXPR_INT, &p->c->tok);
	if (!e)
		return NULL;
	e->ival = v;
	e->text = sl_cur_text_dup(p->c, &p->c->tok);
	if (!e->text) {
		sl_expr_destroy(e);
		return NULL;
	}
	sl_cur_advance(p->c);
	return e;
}

/* Literal with its text copied: DECIMAL, STRING, TIMESTAMP 'x', DATE 'x' (cur on the text). */
static struct sl_expr *text_node(struct parser *p, enum sl_expr_kind kind, struct sl_tok at)
{
	struct sl_expr *e = sl_expr_new(p->c, kind, &at);

	if (!e)
		return NULL;
	e->text = sl_cur_text_dup(p->c, &p->c->tok);
	if (!e->text) {
		sl_expr_destroy(e);
		return NULL;
	}
	sl_cur_advance(p->c);
	return e;
}

static struct sl_expr *parse_concat(struct parser *p);

/* Renames a call node (the SQL-standard keyword forms map onto plain functions). */
static int rename_call(struct parser *p, struct sl_expr *e, const char *name)
{
	char *n = strdup(name);

	if (!n)
		return sl_cur_nomem(p->c);
	free(e->text);
	e->text = n;
	return 0;
}

/* A ' ' string literal at the current position (TRIM's default characters). */
static struct sl_expr *space_literal(struct parser *p)
{
	struct sl_expr *e = sl_expr_new(p->c, SL_EXPR_STRING, &p->c->tok);

	if (e && !(e->text = strdup(" "))) {
		sl_expr_destroy(e);
		sl_cur_nomem(p->c);
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
			{ "YEAR", "YEAR" },	{ "QUARTER", "QUARTER" }, { "MONTH", "MONTH" },
			{ "WEEK", "WEEK" },	{ "DAY", "DAYOFMONTH" },  { "DOW", "DAYOFWEEK" },
			{ "DOY", "DAYOFYEAR" }, { "HOUR", "HOUR" },	  { "MINUTE", "MINUTE" },
			{ "SECOND", "SECOND" },
		};
		const char *fn = NULL;

		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (sl_cur_is_kw(p->c, units[i].unit))
				fn = units[i].fn;
		if (!fn) {
			sl_cur_expected(
				p->c,
				"a unit (YEAR, QUARTER, MONTH, WEEK, DAY, DOW, DOY, HOUR, MINUTE, "
				"SECOND) in EXTRACT");
			goto out_free;
		}
		sl_cur_advance(p->c);
		if (sl_cur_expect_kw(p->c, "FROM", "FROM in EXTRACT") || rename_call(p, e, fn) ||
		    sl_expr_add_arg(p->c, e, parse_or(p)) ||
		    sl_cur_expect_op(p->c, ")", "')' closing EXTRACT"))
			goto out_free;
		return e;
	}
	if (!strcasecmp(e->text, "POSITION")) {
		/* the needle is read below comparisons so that IN is not taken as the operator */
		if (sl_expr_add_arg(p->c, e, parse_concat(p)) ||
		    sl_cur_expect_kw(p->c, "IN", "IN in POSITION") ||
		    sl_expr_add_arg(p->c, e, parse_or(p)) ||
		    sl_cur_expect_op(p->c, ")", "')' closing POSITION") ||
		    rename_call(p, e, "LOCATE"))
			goto out_free;
		return e;
	}
	if (!strcasecmp(e->text, "TRIM")) {
		const char *fn = "BTRIM";
		struct sl_expr *chars = NULL, *s;
		bool mode = false;

		if (sl_cur_is_kw(p->c, "BOTH") || sl_cur_is_kw(p->c, "LEADING") ||
		    sl_cur_is_kw(p->c, "TRAILING")) {
			fn = sl_cur_is_kw(p->c, "LEADING")    ? "LTRIM"
			     : sl_cur_is_kw(p->c, "TRAILING") ? "RTRIM"
							      : "BTRIM";
			mode = true;
			sl_cur_advance(p->c);
		}
		if (sl_cur_is_kw(p->c, "FROM")) {
			chars = space_literal(p);
			sl_cur_advance(p->c);
		} else {
			chars = parse_or(p);
			if (!chars)
				goto out_free;
			if (!mode && !sl_cur_is_kw(p->c, "FROM")) {
				/* TRIM(s) or TRIM(s, c): the ordinary form */
				if (sl_expr_add_arg(p->c, e, chars))
					goto out_free;
				*plain = true;
				return e;
			}
			if (sl_cur_expect_kw(p->c, "FROM", "FROM in TRIM")) {
				sl_expr_destroy(chars);
				goto out_free;
			}
		}
		if (!chars)
			goto out_free;
		s = parse_or(p);
		if (sl_expr_add_arg(p->c, e, s)) {
			sl_expr_destroy(chars);
			goto out_free;
		}
		if (sl_expr_add_arg(p->c, e, chars) ||
		    sl_cur_expect_op(p->c, ")", "')' closing TRIM") || rename_call(p, e, fn))
			goto out_free;
		return e;
	}
	/* SUBSTRING */
	if (sl_expr_add_arg(p->c, e, parse_or(p)))
		goto out_free;
	if (!sl_cur_is_kw(p->c, "FROM")) {
		*plain = true;
		return e;
	}
	sl_cur_advance(p->c);
	if (sl_expr_add_arg(p->c, e, parse_or(p)))
		goto out_free;
	if (sl_cur_accept_kw(p->c, "FOR")) {
		if (sl_expr_add_arg(p->c, e, parse_or(p)))
			goto out_free;
	}
	if (sl_cur_expect_op(p->c, ")", "FOR or ')' in SUBSTRING"))
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
	struct sl_tok first = p->c->tok;

	struct sl_tok next = sl_cur_peek(p->c);

	if (sl_tok_is_op(&next, "(")) {
		e = sl_expr_new(p->c, SL_EXPR_CALL, &first);
		if (!e)
			return NULL;
		e->text = sl_cur_ident_dup(p->c, &first);
		if (!e->text) {
			sl_expr_destroy(e);
			return NULL;
		}
		sl_cur_advance(p->c);
		if (sl_tok_is_kw(&first, "FLOOR") || sl_tok_is_kw(&first, "CEIL"))
			return parse_round(p, e);
		if ((sl_tok_is_kw(&first, "SUBSTRING") || sl_tok_is_kw(&first, "POSITION") ||
		     sl_tok_is_kw(&first, "EXTRACT") || sl_tok_is_kw(&first, "TRIM")) &&
		    !first.quoted) {
			bool plain;

			sl_cur_advance(p->c);
			if (sl_cur_is_op(p->c, ")")) {
				sl_cur_expected(p->c, "an argument");
				sl_expr_destroy(e);
				return NULL;
			}
			e = parse_keyword_call(p, e, &plain);
			if (!e || !plain)
				return e;
			/* the ordinary comma form: the first argument is already in e */
			while (sl_cur_is_op(p->c, ",")) {
				sl_cur_advance(p->c);
				if (sl_expr_add_arg(p->c, e, parse_arg(p))) {
					sl_expr_destroy(e);
					return NULL;
				}
			}
			if (sl_cur_expect_op(p->c, ")", "',' or ')' in the argument list")) {
				sl_expr_destroy(e);
				return NULL;
			}
			return e;
		}
		return parse_call_over(p, e);
	}
	e = sl_expr_new(p->c, SL_EXPR_COLUMN, &first);
	if (!e || sl_expr_add_path(p->c, e, &first))
		goto out_free;
	sl_cur_advance(p->c);
	while (sl_cur_is_op(p->c, ".")) {
		sl_cur_advance(p->c);
		if (p->c->tok.kind != SL_TOK_IDENT) {
			sl_cur_expected(p->c, "a field name after '.'");
			goto out_free;
		}
		if (sl_expr_add_path(p->c, e, &p->c->tok))
			goto out_free;
		sl_cur_advance(p->c);
	}
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

/* The query parser's subquery at tok (SELECT), through the cursor's hook. */
static struct sl_query *subquery(struct parser *p)
{
	struct sl_tok t = p->c->tok;

	if (!p->c->subquery) {
		sl_cur_fail_at(p->c, t.line, t.col, "a subquery is not allowed here");
		return NULL;
	}
	return p->c->subquery(p->c, p->c->subquery_arg);
}

/* EXISTS (SELECT ...) */
static struct sl_expr *parse_exists(struct parser *p)
{
	struct sl_expr *e = sl_expr_new(p->c, SL_EXPR_EXISTS, &p->c->tok);

	if (!e)
		return NULL;
	sl_cur_advance(p->c);
	if (sl_cur_expect_op(p->c, "(", "'(' after EXISTS"))
		goto out_free;
	if (!sl_cur_is_kw(p->c, "SELECT") && !sl_cur_is_kw(p->c, "WITH")) {
		sl_cur_expected(p->c, "SELECT after EXISTS (");
		goto out_free;
	}
	if (!(e->sub = subquery(p)) || sl_cur_expect_op(p->c, ")", "')' after the subquery"))
		goto out_free;
	return e;

out_free:
	sl_expr_destroy(e);
	return NULL;
}

static struct sl_expr *parse_primary(struct parser *p)
{
	struct sl_tok t = p->c->tok;
	struct sl_expr *e;

	switch (t.kind) {
	case SL_TOK_INTEGER:
		return parse_int(p);
	case SL_TOK_DECIMAL:
		return text_node(p, SL_EXPR_DECIMAL, t);
	case SL_TOK_STRING:
		return text_node(p, SL_EXPR_STRING, t);
	case SL_TOK_OP:
		if (!sl_cur_accept_op(p->c, "("))
			break;
		e = parse_or(p);
		if (e && sl_cur_expect_op(p->c, ")", "')'")) {
			sl_expr_destroy(e);
			return NULL;
		}
		return e;
	case SL_TOK_IDENT:
		if (t.quoted)
			return parse_name(p);
		if (sl_cur_is_kw(p->c, "TRUE") || sl_cur_is_kw(p->c, "FALSE") ||
		    sl_cur_is_kw(p->c, "NULL")) {
			e = sl_expr_new(
				p->c, sl_cur_is_kw(p->c, "NULL") ? SL_EXPR_NULL : SL_EXPR_BOOL, &t);
			if (e)
				e->ival = sl_cur_is_kw(p->c, "TRUE");
			sl_cur_advance(p->c);
			return e;
		}
		if (sl_cur_is_kw(p->c, "INTERVAL"))
			return parse_interval(p);
		if (sl_cur_is_kw(p->c, "CASE"))
			return parse_case(p);
		if (sl_cur_is_kw(p->c, "EXISTS")) {
			struct sl_tok n = sl_cur_peek(p->c);

			if (sl_tok_is_op(&n, "("))
				return parse_exists(p);
		}
		if (sl_cur_is_kw(p->c, "CAST"))
			return parse_cast(p);
		if ((sl_cur_is_kw(p->c, "TIMESTAMP") || sl_cur_is_kw(p->c, "DATE")) &&
		    sl_cur_peek(p->c).kind == SL_TOK_STRING) {
			enum sl_expr_kind k =
				sl_cur_is_kw(p->c, "DATE") ? SL_EXPR_DATE : SL_EXPR_TIMESTAMP;

			sl_cur_advance(p->c);
			return text_node(p, k, t);
		}
		if (sl_expr_is_reserved(&t))
			break;
		return parse_name(p);
	default:
		break;
	}
	sl_cur_expected(p->c, "an expression");
	return NULL;
}

/* Calls fn one nesting level deeper, refusing past MAX_DEPTH. */
static struct sl_expr *nested(struct parser *p, struct sl_expr *(*fn)(struct parser *))
{
	struct sl_expr *e;

	if (p->depth >= MAX_DEPTH) {
		sl_cur_fail_at(p->c, p->c->tok.line, p->c->tok.col,
			       "expression nested more than %d deep", MAX_DEPTH);
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
	struct sl_expr *e = sl_expr_new(p->c, kind, at);

	if (!e) {
		sl_expr_destroy(lhs);
		return NULL;
	}
	e->op = op;
	if (sl_expr_add_arg(p->c, e, lhs)) {
		sl_expr_destroy(e);
		return NULL;
	}
	return e;
}

static struct sl_expr *parse_unary(struct parser *p)
{
	struct sl_tok t = p->c->tok;
	struct sl_expr *e;

	if (!sl_cur_is_op(p->c, "-") && !sl_cur_is_op(p->c, "+"))
		return parse_primary(p);
	e = sl_expr_new(p->c, SL_EXPR_UNARY, &t);
	if (!e)
		return NULL;
	e->op = sl_cur_is_op(p->c, "-") ? SL_EXPR_OP_NEG : SL_EXPR_OP_PLUS;
	sl_cur_advance(p->c);
	if (sl_expr_add_arg(p->c, e, nested(p, parse_unary))) {
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
	{ "*", SL_EXPR_OP_MUL },
	{ "/", SL_EXPR_OP_DIV },
	{ "%", SL_EXPR_OP_MOD },
	{ NULL },
};
static const struct binop add_ops[] = {
	{ "+", SL_EXPR_OP_ADD },
	{ "-", SL_EXPR_OP_SUB },
	{ NULL },
};
static const struct binop concat_ops[] = { { "||", SL_EXPR_OP_CONCAT }, { NULL } };
static const struct binop cmp_ops[] = {
	{ "=", SL_EXPR_OP_EQ },	 { "<>", SL_EXPR_OP_NE },
	{ "!=", SL_EXPR_OP_NE }, { "<", SL_EXPR_OP_LT },
	{ "<=", SL_EXPR_OP_LE }, { ">", SL_EXPR_OP_GT },
	{ ">=", SL_EXPR_OP_GE }, { NULL },
};

static enum sl_expr_op match_op(const struct parser *p, const struct binop *ops)
{
	for (; ops->text; ops++)
		if (sl_cur_is_op(p->c, ops->text))
			return ops->op;
	return SL_EXPR_OP_NONE;
}

/* Left-associative level: operand (ops operand)*. */
/* Wraps e as the left operand of a binary operator at t, counting chain links. */
static struct sl_expr *chain_link(struct parser *p, enum sl_expr_op op, const struct sl_tok *t,
				  struct sl_expr *e)
{
	if (++p->nops > MAX_OPS) {
		sl_cur_fail_at(p->c, t->line, t->col, "expression has more than %d operators",
			       MAX_OPS);
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
		struct sl_tok t = p->c->tok;

		e = chain_link(p, op, &t, e);
		if (!e)
			return NULL;
		sl_cur_advance(p->c);
		if (sl_expr_add_arg(p->c, e, operand(p))) {
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
	struct sl_tok t = p->c->tok;
	enum sl_expr_op op = match_op(p, cmp_ops);
	struct sl_expr *e;
	bool neg = false;

	if (op != SL_EXPR_OP_NONE) {
		e = wrap(p, SL_EXPR_BINARY, op, &t, lhs);
		if (!e)
			return NULL;
		sl_cur_advance(p->c);
		goto out_rhs;
	}
	if (sl_cur_is_kw(p->c, "IS")) {
		e = wrap(p, SL_EXPR_IS, SL_EXPR_OP_NONE, &t, lhs);
		if (!e)
			return NULL;
		sl_cur_advance(p->c);
		if (sl_cur_is_kw(p->c, "NOT")) {
			e->negated = true;
			sl_cur_advance(p->c);
		}
		if (sl_cur_is_kw(p->c, "NULL")) {
			e->is_what = SL_EXPR_IS_NULL;
		} else if (sl_cur_is_kw(p->c, "TRUE")) {
			e->is_what = SL_EXPR_IS_TRUE;
		} else if (sl_cur_is_kw(p->c, "FALSE")) {
			e->is_what = SL_EXPR_IS_FALSE;
		} else {
			sl_cur_expected(p->c, e->negated ? "NULL, TRUE or FALSE after IS NOT"
							 : "NOT, NULL, TRUE or FALSE after IS");
			goto out_free;
		}
		sl_cur_advance(p->c);
		return e;
	}
	if (sl_cur_is_kw(p->c, "NOT")) {
		neg = true;
		sl_cur_advance(p->c);
	}
	if (sl_cur_is_kw(p->c, "BETWEEN")) {
		e = wrap(p, SL_EXPR_BETWEEN, SL_EXPR_OP_NONE, &t, lhs);
		if (!e)
			return NULL;
		e->negated = neg;
		sl_cur_advance(p->c);
		/* Bounds are read above AND, so the AND here is BETWEEN's own. */
		if (sl_expr_add_arg(p->c, e, parse_concat(p)) ||
		    sl_cur_expect_kw(p->c, "AND", "AND in BETWEEN") ||
		    sl_expr_add_arg(p->c, e, parse_concat(p)))
			goto out_free;
		return e;
	}
	if (sl_cur_is_kw(p->c, "IN")) {
		e = wrap(p, SL_EXPR_IN, SL_EXPR_OP_NONE, &t, lhs);
		if (!e)
			return NULL;
		e->negated = neg;
		sl_cur_advance(p->c);
		if (sl_cur_expect_op(p->c, "(", "'(' after IN"))
			goto out_free;
		if (sl_cur_is_kw(p->c, "SELECT") || sl_cur_is_kw(p->c, "WITH")) {
			if (!(e->sub = subquery(p)) ||
			    sl_cur_expect_op(p->c, ")", "')' after the subquery"))
				goto out_free;
			return e;
		}
		for (;;) {
			if (sl_expr_add_arg(p->c, e, parse_or(p)))
				goto out_free;
			if (!sl_cur_accept_op(p->c, ","))
				break;
		}
		if (sl_cur_expect_op(p->c, ")", "',' or ')' in the IN list"))
			goto out_free;
		return e;
	}
	if (sl_cur_is_kw(p->c, "LIKE")) {
		e = wrap(p, SL_EXPR_LIKE, SL_EXPR_OP_NONE, &t, lhs);
		if (!e)
			return NULL;
		e->negated = neg;
		sl_cur_advance(p->c);
		goto out_rhs;
	}
	/* Only reached after NOT: a bare NOT cannot follow an operand. */
	sl_cur_expected(p->c, "BETWEEN, IN or LIKE after NOT");
	sl_expr_destroy(lhs);
	return NULL;
out_rhs:
	if (sl_expr_add_arg(p->c, e, parse_concat(p)))
		goto out_free;
	return e;
out_free:
	sl_expr_destroy(e);
	return NULL;
}

static bool at_cmp(const struct parser *p)
{
	return match_op(p, cmp_ops) != SL_EXPR_OP_NONE || sl_cur_is_kw(p->c, "IS") ||
	       sl_cur_is_kw(p->c, "NOT") || sl_cur_is_kw(p->c, "BETWEEN") ||
	       sl_cur_is_kw(p->c, "IN") || sl_cur_is_kw(p->c, "LIKE");
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
	struct sl_tok t = p->c->tok;
	struct sl_expr *e;

	if (!sl_cur_is_kw(p->c, "NOT"))
		return parse_cmp(p);
	e = sl_expr_new(p->c, SL_EXPR_UNARY, &t);
	if (!e)
		return NULL;
	e->op = SL_EXPR_OP_NOT;
	sl_cur_advance(p->c);
	if (sl_expr_add_arg(p->c, e, nested(p, parse_not))) {
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

	while (e && sl_cur_is_kw(p->c, kw)) {
		struct sl_tok t = p->c->tok;

		e = chain_link(p, op, &t, e);
		if (!e)
			return NULL;
		sl_cur_advance(p->c);
		if (sl_expr_add_arg(p->c, e, operand(p))) {
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

struct sl_expr *sl_expr_parse(struct sl_cur *c)
{
	struct parser p = { .c = c };

	return parse_or(&p);
}

struct sl_expr *sl_expr_parse_str(const char *src, size_t len, char *err, size_t errcap)
{
	struct sl_cur c;
	struct sl_expr *e;

	sl_cur_init(&c, src, len, 1, 1, err, errcap);
	e = sl_expr_parse(&c);
	if (e && c.tok.kind != SL_TOK_EOF) {
		sl_cur_expected(&c, "an operator or end of expression");
		sl_expr_destroy(e);
		return NULL;
	}
	return e;
}
