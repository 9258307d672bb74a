/*
 * query.c - SELECT, INSERT, CREATE VIEW, EXPLAIN and statement sets to trees (see query.h).
 *
 * Recursive descent over the token cursor (cursor.h), whose conventions it follows. Every
 * scalar expression goes to sl_expr_parse() on the same cursor, which stops at the first
 * token it cannot continue with, so the clause words it does not know (FROM, GROUP,
 * WATERMARK, ...) come back to us. Look-ahead beyond sl_cur_peek() copies the lexer, a
 * plain value.
 *
 * Invariants, as in ddl.c and expr.c: a node is linked into its parent before its children
 * are parsed, and an array grows by one zeroed element before the element is filled, so on
 * any failure destroying the root frees everything exactly once; the first error wins (err
 * holds the message of the token where parsing stopped). Query and FROM nesting is bounded
 * by MAX_DEPTH and left-deep chains (joins, unions) are freed by loops, so hostile input
 * exhausts neither the stack nor the heap's patience.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "eval_cc.h" /* sl_compiler_expr_equal: one grouping expression once */
#include "hint.h"
#include "query.h"

/* Subqueries and parenthesised FROM items nested this deep are refused (hand-written SQL
 * stays below 10; each level costs a few hundred bytes of stack, more under ASan). */
#define MAX_DEPTH 64
/* IN / EXISTS subqueries nested in expressions: each may hold an expression as deep as the
 * expression parser allows (256 levels), so they are bounded on their own. */
#define MAX_EXPR_SUBQUERIES 8

struct parser {
	struct sl_cur *c;
	/* What may follow the clause just parsed ("an operator, GROUP BY, ..."), so the error
	 * at a token that ends nothing names every way to go on; NULL when nothing can. */
	const char *follow;
	/* CREATE VIEW being parsed: its top SELECT list may hold sluice's WATERMARK item */
	struct sl_stmt *view;
	uint32_t view_depth;
	uint32_t depth;
	uint32_t nsubq; /* IN / EXISTS subqueries open now (each with a fresh expression stack) */
};

static int parse_query(struct parser *p, struct sl_query **out);
static int parse_from_list(struct parser *p, struct sl_from **out);

/* The error at a token that continues nothing: what the last clause allows, or `end`. */
static int expected_after(struct parser *p, const char *end)
{
	char what[192];

	if (!p->follow)
		return sl_cur_expected(p->c, end);
	snprintf(what, sizeof what, "%s or %s", p->follow, end);
	return sl_cur_expected(p->c, what);
}

/*
 * Words that end a clause or start the next one, so they are never taken as a name or an
 * alias unless backquoted: `FROM t WHERE ...` has no alias WHERE. The expression parser's
 * own reserved words are here too, so `SELECT a AND` is not an alias AND.
 */
static bool is_reserved(const struct sl_tok *t)
{
	/* clang-format off */
	static const char *const words[] = {
		"SELECT", "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "BY", "LIMIT", "OFFSET",
		"FETCH", "UNION", "EXCEPT", "INTERSECT", "MINUS", "JOIN", "INNER", "LEFT",
		"RIGHT", "FULL", "CROSS", "OUTER", "NATURAL", "LATERAL", "UNNEST", "ON", "USING",
		"FOR", "AS", "WINDOW", "VALUES", "END", "AND", "OR", "NOT", "IS", "IN",
		"BETWEEN", "LIKE", "WHEN", "THEN", "ELSE", "CASE", "CAST", "TABLE", "DESCRIPTOR",
		"OVER", "PARTITION", "FILTER", "INTERVAL", "DISTINCT", "ALL", "TO", "ASC", "DESC",
		"INSERT",
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (sl_tok_is_kw(t, words[i]))
			return true;
	return false;
}

/* An identifier usable as a name or alias: not a reserved word unless backquoted. */
static bool is_name(const struct sl_tok *t)
{
	return t->kind == SL_TOK_IDENT && (t->quoted || !is_reserved(t));
}

/* sluice's `WATERMARK FOR` (an extension of sluice for views) rather than a column or alias
 * `watermark`. */
static bool at_watermark_for(const struct parser *p)
{
	struct sl_tok n;

	if (!sl_cur_is_kw(p->c, "WATERMARK"))
		return false;
	n = sl_cur_peek(p->c);
	return sl_tok_is_kw(&n, "FOR");
}

/* '(' that opens a query rather than a column list or a parenthesised join. */
static bool at_query_paren(const struct parser *p)
{
	struct sl_tok n;

	if (!sl_cur_is_op(p->c, "("))
		return false;
	n = sl_cur_peek(p->c);
	return sl_tok_is_kw(&n, "SELECT") || sl_tok_is_kw(&n, "WITH") ||
	       sl_tok_is_kw(&n, "VALUES") || sl_tok_is_op(&n, "(");
}

static int parse_expr(struct parser *p, struct sl_expr **out)
{
	*out = sl_expr_parse(p->c);
	if (!*out) {
		/* the expression parser quotes a token whole, even a string with line breaks */
		for (char *ch = p->c->err; p->c->errcap && *ch; ch++)
			if (*ch == '\n' || *ch == '\r')
				*ch = ' ';
		p->c->failed = true;
		return -EINVAL;
	}
	return 0;
}

/*
 * A dotted name (catalog.db.table) joined with '.' into *out. Stops before ".*", so
 * `t.*` leaves cur on the '.'. `what` names the first part in the error.
 */
static int take_dotted(struct parser *p, char **out, const char *what)
{
	size_t n = 0;

	for (;;) {
		struct sl_tok next;
		size_t plen;
		char *part, *s;

		if (n ? p->c->tok.kind != SL_TOK_IDENT : !is_name(&p->c->tok))
			return sl_cur_expected(p->c, n ? "a name after '.'" : what);
		part = sl_cur_ident_dup(p->c, &p->c->tok);
		if (!part)
			return -ENOMEM;
		plen = strlen(part);
		s = realloc(*out, n + plen + 2);
		if (!s) {
			free(part);
			return sl_cur_nomem(p->c);
		}
		*out = s;
		if (n)
			s[n++] = '.';
		memcpy(s + n, part, plen + 1);
		n += plen;
		free(part);
		sl_cur_advance(p->c);
		if (!sl_cur_is_op(p->c, "."))
			return 0;
		next = sl_cur_peek(p->c);
		if (sl_tok_is_op(&next, "*"))
			return 0;
		sl_cur_advance(p->c);
	}
}

/* `(a, b, c)`: the column list of INSERT and CREATE VIEW, cur on '('. */
static int parse_name_list(struct parser *p, char ***names, uint32_t *n, const char *what)
{
	int rc;

	sl_cur_advance(p->c);
	for (;;) {
		char **slot = sl_cur_append(p->c, (void **)names, n, sizeof *slot);

		if (!slot)
			return -ENOMEM;
		if (!is_name(&p->c->tok))
			return sl_cur_expected(p->c, what);
		*slot = sl_cur_ident_dup(p->c, &p->c->tok);
		if (!*slot)
			return -ENOMEM;
		sl_cur_advance(p->c);
		if (sl_cur_is_op(p->c, ")"))
			break;
		if ((rc = sl_cur_expect_op(p->c, ",", "',' or ')' in the column list")))
			return rc;
	}
	sl_cur_advance(p->c);
	return 0;
}

/* `[AS] alias` after a select item or FROM item; nothing when no alias is written. */
static int parse_alias(struct parser *p, char **alias)
{
	if (sl_cur_accept_kw(p->c, "AS")) {
		if (!is_name(&p->c->tok))
			return sl_cur_expected(p->c, "an alias after AS");
	} else if (!is_name(&p->c->tok) || at_watermark_for(p)) {
		return 0;
	}
	*alias = sl_cur_ident_dup(p->c, &p->c->tok);
	if (!*alias)
		return -ENOMEM;
	sl_cur_advance(p->c);
	return 0;
}

/* A FROM item's `[AS] alias [(c1, c2, ...)]`: the list renames the item's columns. */
static int parse_from_alias(struct parser *p, struct sl_from *f)
{
	int rc = parse_alias(p, &f->alias);

	if (rc || !f->alias || !sl_cur_is_op(p->c, "("))
		return rc;
	return parse_name_list(p, &f->alias_cols, &f->nalias_cols, "a column name");
}

static struct sl_query *new_query(struct parser *p, uint32_t line, uint32_t col)
{
	struct sl_query *q = calloc(1, sizeof *q);

	if (!q) {
		sl_cur_nomem(p->c);
		return NULL;
	}
	q->line = line;
	q->col = col;
	q->limit = -1;
	return q;
}

static struct sl_from *new_from(struct parser *p, enum sl_from_kind kind, uint32_t line,
				uint32_t col)
{
	struct sl_from *f = calloc(1, sizeof *f);

	if (!f) {
		sl_cur_nomem(p->c);
		return NULL;
	}
	f->kind = kind;
	f->line = line;
	f->col = col;
	return f;
}

/* Window TVF data argument: TABLE name [PARTITION BY key | PARTITION BY (key, ...)], the
 * keys (SESSION's, Flink 1.19+) going to e->partition; cur on TABLE. */
static int parse_table_arg(struct parser *p, struct sl_expr **out)
{
	struct sl_expr *e = sl_expr_new(p->c, SL_EXPR_TABLE, &p->c->tok);
	bool paren;
	int rc;

	if (!e)
		return -ENOMEM;
	*out = e;
	sl_cur_advance(p->c);
	for (;;) {
		if (e->npath ? p->c->tok.kind != SL_TOK_IDENT : !is_name(&p->c->tok))
			return sl_cur_expected(p->c, e->npath ? "a name after '.'"
							      : "a table name after TABLE");
		if ((rc = sl_expr_add_path(p->c, e, &p->c->tok)))
			return rc;
		sl_cur_advance(p->c);
		if (!sl_cur_accept_op(p->c, "."))
			break;
	}
	if (!sl_cur_accept_kw(p->c, "PARTITION"))
		return 0;
	if ((rc = sl_cur_expect_kw(p->c, "BY", "BY after PARTITION")))
		return rc;
	paren = sl_cur_accept_op(p->c, "(");
	for (;;) {
		struct sl_expr **k =
			sl_cur_append(p->c, (void **)&e->partition, &e->npartition, sizeof *k);

		if (!k)
			return -ENOMEM;
		if ((rc = parse_expr(p, k)))
			return rc;
		if (!paren || !sl_cur_is_op(p->c, ","))
			break;
		sl_cur_advance(p->c);
	}
	return paren ? sl_cur_expect_op(p->c, ")", "',' or ')' in PARTITION BY") : 0;
}

/* DESCRIPTOR(col, ...), cur on DESCRIPTOR. */
static int parse_descriptor(struct parser *p, struct sl_expr **out)
{
	struct sl_expr *e = sl_expr_new(p->c, SL_EXPR_DESCRIPTOR, &p->c->tok);
	int rc;

	if (!e)
		return -ENOMEM;
	*out = e;
	sl_cur_advance(p->c);
	if ((rc = sl_cur_expect_op(p->c, "(", "'(' after DESCRIPTOR")))
		return rc;
	for (;;) {
		struct sl_expr *col;

		if (!is_name(&p->c->tok))
			return sl_cur_expected(p->c, "a column name in DESCRIPTOR");
		col = sl_expr_new(p->c, SL_EXPR_COLUMN, &p->c->tok);
		if (!col)
			return -ENOMEM;
		if ((rc = sl_expr_add_arg(p->c, e, col)) ||
		    (rc = sl_expr_add_path(p->c, col, &p->c->tok)))
			return rc;
		sl_cur_advance(p->c);
		if (!sl_cur_accept_op(p->c, ","))
			break;
	}
	return sl_cur_expect_op(p->c, ")", "',' or ')' in DESCRIPTOR");
}

/* `NAME =>` before a TVF argument: '=' and '>' written together (the lexer has no "=>"). */
static bool at_arg_name(const struct parser *p)
{
	struct sl_lexer copy = p->c->lx;
	struct sl_tok eq, gt;

	if (p->c->tok.kind != SL_TOK_IDENT)
		return false;
	eq = sl_lexer_next(&copy);
	gt = sl_lexer_next(&copy);
	return sl_tok_is_op(&eq, "=") && sl_tok_is_op(&gt, ">") && gt.text == eq.text + 1;
}

/*
 * TABLE(fn(arg, ...)) [[AS] alias], cur on TABLE: the window TVFs. Arguments are TABLE t,
 * DESCRIPTOR(c) or expressions, positional or named (`SIZE => INTERVAL ...`, then all
 * that follow are named too, as in Flink).
 */
static int parse_tvf(struct parser *p, struct sl_from *f)
{
	struct sl_expr *call;
	struct sl_tok next;
	bool named = false;
	int rc;

	sl_cur_advance(p->c);
	if ((rc = sl_cur_expect_op(p->c, "(", "'(' after TABLE")))
		return rc;
	next = sl_cur_peek(p->c);
	if (!is_name(&p->c->tok) || !sl_tok_is_op(&next, "("))
		return sl_cur_expected(p->c, "a window function such as TUMBLE(...) after TABLE(");
	call = sl_expr_new(p->c, SL_EXPR_CALL, &p->c->tok);
	if (!call)
		return -ENOMEM;
	f->call = call;
	call->text = sl_cur_ident_dup(p->c, &p->c->tok);
	if (!call->text)
		return -ENOMEM;
	sl_cur_advance(p->c);
	sl_cur_advance(p->c);
	while (!sl_cur_is_op(p->c, ")")) {
		struct sl_expr *arg = NULL;
		char *name = NULL, **names;

		if (at_arg_name(p)) {
			name = sl_cur_ident_dup(p->c, &p->c->tok);
			if (!name)
				return -ENOMEM;
			sl_cur_advance(p->c);
			sl_cur_advance(p->c);
			sl_cur_advance(p->c);
			named = true;
		} else if (named) {
			return sl_cur_expected(
				p->c, "a named argument (NAME => value) after a named one");
		}
		if (sl_cur_is_kw(p->c, "TABLE"))
			rc = parse_table_arg(p, &arg);
		else if (sl_cur_is_kw(p->c, "DESCRIPTOR"))
			rc = parse_descriptor(p, &arg);
		else
			rc = parse_expr(p, &arg);
		/* names and args grow together, so arg_names[i] always matches args[i] */
		names = rc ? NULL : realloc(f->arg_names, (call->nargs + 1) * sizeof *names);
		if (!rc && !names)
			rc = sl_cur_nomem(p->c);
		if (rc) {
			free(name);
			sl_expr_destroy(arg);
			return rc;
		}
		f->arg_names = names;
		names[call->nargs] = name;
		if ((rc = sl_expr_add_arg(p->c, call, arg))) {
			free(name);
			return rc;
		}
		if (!sl_cur_accept_op(p->c, ","))
			break;
	}
	if ((rc = sl_cur_expect_op(p->c, ")", "',' or ')' in the argument list")) ||
	    (rc = sl_cur_expect_op(p->c, ")", "')' closing TABLE(")))
		return rc;
	if (!named) {
		free(f->arg_names);
		f->arg_names = NULL;
	}
	return parse_alias(p, &f->alias);
}

/* `)` closing what `open` opened, or an error naming what else could have come. */
static int expect_close(struct parser *p, const struct sl_tok *open)
{
	char what[64];

	if (sl_cur_accept_op(p->c, ")")) {
		return 0;
	}
	snprintf(what, sizeof what, "')' closing '(' at %u:%u", open->line, open->col);
	return expected_after(p, what);
}

/*
 * One FROM item: name [FOR SYSTEM_TIME AS OF e] [[AS] alias], (query) [[AS] alias],
 * TABLE(tvf) [[AS] alias], or a parenthesised FROM list. `right`: the right side of a JOIN,
 * the only place a temporal table may stand.
 */
static int parse_from_item(struct parser *p, struct sl_from **out, bool right)
{
	struct sl_tok at = p->c->tok, next = sl_cur_peek(p->c);
	struct sl_from *f;
	int rc;

	if (sl_cur_is_op(p->c, "(")) {
		if (p->depth >= MAX_DEPTH)
			return sl_cur_fail_at(p->c, at.line, at.col,
					      "FROM nested more than %d deep", MAX_DEPTH);
		if (!at_query_paren(p)) {
			sl_cur_advance(p->c);
			p->depth++;
			rc = parse_from_list(p, out);
			p->depth--;
			p->follow = "a JOIN";
			return rc ? rc : expect_close(p, &at);
		}
		f = new_from(p, SL_FROM_SUBQUERY, at.line, at.col);
		if (!f)
			return -ENOMEM;
		*out = f;
		sl_cur_advance(p->c);
		if ((rc = parse_query(p, &f->sub)) || (rc = expect_close(p, &at)))
			return rc;
		return parse_from_alias(p, f);
	}
	if (sl_cur_is_kw(p->c, "TABLE") && sl_tok_is_op(&next, "(")) {
		f = new_from(p, SL_FROM_TVF, at.line, at.col);
		if (!f)
			return -ENOMEM;
		*out = f;
		return parse_tvf(p, f);
	}
	f = new_from(p, SL_FROM_TABLE, at.line, at.col);
	if (!f)
		return -ENOMEM;
	*out = f;
	if ((rc = take_dotted(p, &f->name, "a table name, a (subquery) or TABLE(...)")))
		return rc;
	if (sl_cur_is_kw(p->c, "FOR")) {
		if (!right)
			return sl_cur_fail_at(p->c, p->c->tok.line, p->c->tok.col,
					      "FOR SYSTEM_TIME AS OF belongs "
					      "to the table on the right of a JOIN");
		sl_cur_advance(p->c);
		if ((rc = sl_cur_expect_kw(p->c, "SYSTEM_TIME", "SYSTEM_TIME after FOR")) ||
		    (rc = sl_cur_expect_kw(p->c, "AS", "AS OF after FOR SYSTEM_TIME")) ||
		    (rc = sl_cur_expect_kw(p->c, "OF", "OF after FOR SYSTEM_TIME AS")) ||
		    (rc = parse_expr(p, &f->system_time)))
			return rc;
	}
	return parse_from_alias(p, f);
}

/* Consumes the join keywords at cur into *kind, *found false (nothing taken) if none. */
static int take_join(struct parser *p, enum sl_join_kind *kind, bool *found)
{
	*found = true;
	if (sl_cur_is_kw(p->c, "JOIN")) {
		*kind = SL_JOIN_INNER;
	} else if (sl_cur_is_kw(p->c, "INNER")) {
		*kind = SL_JOIN_INNER;
		sl_cur_advance(p->c);
	} else if (sl_cur_is_kw(p->c, "CROSS")) {
		*kind = SL_JOIN_CROSS;
		sl_cur_advance(p->c);
	} else if (sl_cur_is_kw(p->c, "LEFT") || sl_cur_is_kw(p->c, "RIGHT") ||
		   sl_cur_is_kw(p->c, "FULL")) {
		*kind = sl_cur_is_kw(p->c, "LEFT")    ? SL_JOIN_LEFT
			: sl_cur_is_kw(p->c, "RIGHT") ? SL_JOIN_RIGHT
						      : SL_JOIN_FULL;
		sl_cur_advance(p->c);
		sl_cur_accept_kw(p->c, "OUTER");
	} else {
		*found = false;
		return 0;
	}
	return sl_cur_expect_kw(p->c, "JOIN", "JOIN");
}

/* item { join item [ON e] }: left-associative, each join wrapping what came before. */
static int parse_join_chain(struct parser *p, struct sl_from **out)
{
	int rc = parse_from_item(p, out, false);

	while (!rc) {
		enum sl_join_kind kind;
		struct sl_from *j;
		bool found;

		if ((rc = take_join(p, &kind, &found)) || !found)
			break;
		j = new_from(p, SL_FROM_JOIN, (*out)->line, (*out)->col);
		if (!j)
			return -ENOMEM;
		j->join = kind;
		j->left = *out;
		*out = j;
		if ((rc = parse_from_item(p, &j->right, true)))
			break;
		if (kind == SL_JOIN_CROSS)
			continue;
		if ((rc = sl_cur_expect_kw(p->c, "ON", "ON and the join condition")))
			break;
		rc = parse_expr(p, &j->on);
	}
	return rc;
}

/* chain {, chain}: a comma is a CROSS join binding looser than JOIN, as in SQL. */
static int parse_from_list(struct parser *p, struct sl_from **out)
{
	int rc = parse_join_chain(p, out);

	while (!rc && sl_cur_is_op(p->c, ",")) {
		struct sl_from *j = new_from(p, SL_FROM_JOIN, (*out)->line, (*out)->col);

		if (!j)
			return -ENOMEM;
		j->join = SL_JOIN_CROSS;
		j->left = *out;
		*out = j;
		sl_cur_advance(p->c);
		rc = parse_join_chain(p, &j->right);
	}
	return rc;
}

/* WATERMARK FOR e AS e of sluice's views, cur on WATERMARK (FOR checked by the caller). */
static int parse_view_watermark(struct parser *p, struct sl_stmt *s)
{
	int rc;

	if (s->wm_for)
		return sl_cur_fail_at(p->c, p->c->tok.line, p->c->tok.col,
				      "a view has one WATERMARK");
	s->wm_line = p->c->tok.line;
	s->wm_col = p->c->tok.col;
	sl_cur_advance(p->c);
	sl_cur_advance(p->c);
	if ((rc = parse_expr(p, &s->wm_for)) ||
	    (rc = sl_cur_expect_kw(p->c, "AS", "AS after the WATERMARK FOR expression")))
		return rc;
	return parse_expr(p, &s->wm_expr);
}

/* `*`, `t.*`, or `expr [[AS] alias]`. */
static int parse_item(struct parser *p, struct sl_select_item *it)
{
	struct sl_lexer scan = p->c->lx;
	struct sl_tok t = p->c->tok;
	int rc;

	it->line = t.line;
	it->col = t.col;
	if (sl_cur_is_op(p->c, "*")) {
		it->star = true;
		sl_cur_advance(p->c);
		return 0;
	}
	/* t.* and cat.db.t.*: names and dots up to a star, else an expression */
	while (is_name(&p->c->tok)) {
		struct sl_tok dot = sl_lexer_next(&scan);

		if (!sl_tok_is_op(&dot, "."))
			break;
		t = sl_lexer_next(&scan);
		if (sl_tok_is_op(&t, "*")) {
			it->star = true;
			if ((rc = take_dotted(p, &it->star_qual, "a table name before .*")))
				return rc;
			sl_cur_advance(p->c);
			sl_cur_advance(p->c);
			return 0;
		}
		if (t.kind != SL_TOK_IDENT)
			break;
	}
	if ((rc = parse_expr(p, &it->expr)))
		return rc;
	return parse_alias(p, &it->alias);
}

static int parse_items(struct parser *p, struct sl_query *q)
{
	/* only the view's own SELECT list, not one of its subqueries */
	bool view_top = p->view && p->depth == p->view_depth + 1;
	int rc;

	for (;;) {
		if (view_top && at_watermark_for(p)) {
			rc = parse_view_watermark(p, p->view);
		} else {
			struct sl_select_item *it =
				sl_cur_append(p->c, (void **)&q->items, &q->nitems, sizeof *it);

			rc = it ? parse_item(p, it) : -ENOMEM;
		}
		if (rc)
			return rc;
		if (!sl_cur_accept_op(p->c, ","))
			break;
	}
	if (!q->nitems)
		return sl_cur_fail_at(p->c, q->line, q->col,
				      "a SELECT needs a column besides WATERMARK");
	return 0;
}

/* Grouping sets: at most SL_MAX_GSETS sets over at most 63 distinct expressions. */
#define SL_MAX_GSETS 64

/* The index of e in q->group_by, appending it when it is new (taking e; a duplicate is
 * freed). -errno on failure. */
static int gexpr_index(struct parser *p, struct sl_query *q, struct sl_expr *e)
{
	struct sl_expr **slot;

	for (uint32_t i = 0; i < q->ngroup_by; i++)
		if (sl_compiler_expr_equal(q->group_by[i], e)) {
			sl_expr_destroy(e);
			return (int)i;
		}
	if (q->ngroup_by == 63) {
		sl_expr_destroy(e);
		return sl_cur_fail_at(p->c, e->line, e->col, "GROUP BY: more than 63 expressions");
	}
	slot = sl_cur_append(p->c, (void **)&q->group_by, &q->ngroup_by, sizeof *slot);
	if (!slot) {
		sl_expr_destroy(e);
		return -ENOMEM;
	}
	*slot = e;
	return (int)q->ngroup_by - 1;
}

/* One grouping expression, its bit ORed into *mask. 0 or -errno. */
static int parse_gexpr(struct parser *p, struct sl_query *q, uint64_t *mask)
{
	struct sl_expr *e;
	int i;

	if (parse_expr(p, &e))
		return -EINVAL;
	if ((i = gexpr_index(p, q, e)) < 0)
		return i;
	*mask |= 1ull << i;
	return 0;
}

/* "(e, ...)" or "()" (cur on '('), or one expression: its mask. 0 or -errno. */
static int parse_gset(struct parser *p, struct sl_query *q, uint64_t *mask)
{
	bool paren = sl_cur_accept_op(p->c, "(");
	int rc;

	*mask = 0;
	if (paren && sl_cur_accept_op(p->c, ")"))
		return 0;
	do {
		if ((rc = parse_gexpr(p, q, mask)))
			return rc;
	} while (paren && sl_cur_accept_op(p->c, ","));
	return paren ? sl_cur_expect_op(p->c, ")", "',' or ')' in a grouping set") : 0;
}

/* Appends set m to sets[*n]. */
static int gset_add(struct parser *p, uint64_t *sets, uint32_t *n, uint64_t m)
{
	if (*n == SL_MAX_GSETS)
		return sl_cur_fail_at(p->c, p->c->tok.line, p->c->tok.col,
				      "GROUP BY: more than %d grouping sets", SL_MAX_GSETS);
	sets[(*n)++] = m;
	return 0;
}

/* One GROUP BY element into its sets: e | ROLLUP (e, ...) | CUBE (e, ...) | GROUPING SETS
 * (set, ...). *grouping is set for the last three. 0 or -errno. */
static int parse_gelem(struct parser *p, struct sl_query *q, uint64_t *sets, uint32_t *n,
		       bool *grouping)
{
	struct sl_tok at = p->c->tok;
	uint64_t cols[SL_MAX_GSETS];
	uint32_t ncols = 0;
	bool rollup = sl_cur_is_kw(p->c, "ROLLUP"), cube = sl_cur_is_kw(p->c, "CUBE");
	int rc;

	*n = 0;
	if (sl_cur_is_kw(p->c, "GROUPING") && (sl_cur_advance(p->c), true) &&
	    sl_cur_accept_kw(p->c, "SETS")) {
		*grouping = true;
		if ((rc = sl_cur_expect_op(p->c, "(", "'(' after GROUPING SETS")))
			return rc;
		do {
			uint64_t m;

			if ((rc = parse_gset(p, q, &m)) || (rc = gset_add(p, sets, n, m)))
				return rc;
		} while (sl_cur_accept_op(p->c, ","));
		return sl_cur_expect_op(p->c, ")", "',' or ')' in GROUPING SETS");
	}
	if (at.kind == SL_TOK_IDENT && sl_tok_is_kw(&at, "GROUPING"))
		return sl_cur_expected(p->c, "SETS after GROUPING");
	if (!rollup && !cube) { /* a plain expression, parenthesized or not */
		uint64_t m = 0;

		return (rc = parse_gexpr(p, q, &m)) ? rc : gset_add(p, sets, n, m);
	}
	*grouping = true;
	sl_cur_advance(p->c);
	if ((rc = sl_cur_expect_op(p->c, "(", rollup ? "'(' after ROLLUP" : "'(' after CUBE")))
		return rc;
	do {
		if (ncols == (cube ? 6u : 63u))
			return sl_cur_fail_at(p->c, at.line, at.col, "%s of more than %d elements",
					      cube ? "CUBE" : "ROLLUP", cube ? 6 : 63);
		if ((rc = parse_gset(p, q, &cols[ncols++])))
			return rc;
	} while (sl_cur_accept_op(p->c, ","));
	if ((rc = sl_cur_expect_op(p->c, ")", "',' or ')'")))
		return rc;
	if (rollup) { /* (a, b, c), (a, b), (a), () */
		for (uint32_t k = ncols + 1; k-- > 0;) {
			uint64_t m = 0;

			for (uint32_t i = 0; i < k; i++)
				m |= cols[i];
			if ((rc = gset_add(p, sets, n, m)))
				return rc;
		}
		return 0;
	}
	for (uint32_t bits = (1u << ncols); bits-- > 0;) { /* every subset, largest first */
		uint64_t m = 0;

		for (uint32_t i = 0; i < ncols; i++)
			if (bits & (1u << i))
				m |= cols[i];
		if ((rc = gset_add(p, sets, n, m)))
			return rc;
	}
	return 0;
}

/* GROUP BY's elements, with cur after BY: a plain list, or the cross product of the
 * elements' grouping sets into q->gsets. 0 or -errno. */
static int parse_group_by(struct parser *p, struct sl_query *q)
{
	uint64_t acc[SL_MAX_GSETS] = { 0 }, el[SL_MAX_GSETS], next[SL_MAX_GSETS];
	uint32_t nacc = 1, nel;
	bool grouping = false;
	int rc;

	do {
		uint32_t nn = 0;

		if ((rc = parse_gelem(p, q, el, &nel, &grouping)))
			return rc;
		for (uint32_t a = 0; a < nacc; a++)
			for (uint32_t b = 0; b < nel; b++)
				if ((rc = gset_add(p, next, &nn, acc[a] | el[b])))
					return rc;
		memcpy(acc, next, nn * sizeof(*acc));
		nacc = nn;
	} while (sl_cur_accept_op(p->c, ","));
	if (!grouping)
		return 0;
	q->gsets = malloc(nacc * sizeof(*q->gsets));
	if (!q->gsets)
		return sl_cur_nomem(p->c);
	memcpy(q->gsets, acc, nacc * sizeof(*acc));
	q->ngsets = nacc;
	return 0;
}

/* WINDOW name AS (spec) [, ...], with cur after WINDOW. 0 or -errno. */
static int parse_window_defs(struct parser *p, struct sl_query *q)
{
	do {
		struct sl_tok at = p->c->tok;
		struct sl_window_def *w;
		int rc;

		if (at.kind != SL_TOK_IDENT || is_reserved(&at))
			return sl_cur_expected(p->c, "a window name after WINDOW");
		w = realloc(q->windows, (q->nwindows + 1) * sizeof(*w));
		if (!w)
			return sl_cur_nomem(p->c);
		q->windows = w;
		w = &q->windows[q->nwindows];
		w->name = sl_cur_ident_dup(p->c, &at);
		w->spec = w->name ? sl_expr_new(p->c, SL_EXPR_CALL, &at) : NULL;
		if (!w->spec) {
			free(w->name);
			return -ENOMEM;
		}
		q->nwindows++;
		sl_cur_advance(p->c);
		if ((rc = sl_cur_expect_kw(p->c, "AS", "AS after the window name")) ||
		    (rc = sl_expr_parse_window_spec(p->c, w->spec)))
			return rc;
	} while (sl_cur_accept_op(p->c, ","));
	return 0;
}

/* Points every OVER name call under e at the query's WINDOW of that name. 0 or -errno. */
static int bind_windows(struct parser *p, const struct sl_query *q, struct sl_expr *e)
{
	if (!e)
		return 0;
	if (e->kind == SL_EXPR_CALL && e->over && e->over_name && !e->over_borrowed) {
		const struct sl_expr *w = NULL;

		for (uint32_t i = 0; i < q->nwindows && !w; i++)
			if (!strcasecmp(q->windows[i].name, e->over_name))
				w = q->windows[i].spec;
		if (!w)
			return sl_cur_fail_at(p->c, e->line, e->col,
					      "unknown window '%s': define it with WINDOW %s AS "
					      "(...)",
					      e->over_name, e->over_name);
		e->partition = w->partition;
		e->npartition = w->npartition;
		e->order = w->order;
		e->norder = w->norder;
		e->frame = w->frame;
		e->frame_lo = w->frame_lo;
		e->over_borrowed = true;
	}
	for (uint32_t i = 0; i < e->nargs; i++)
		if (bind_windows(p, q, e->args[i]))
			return -EINVAL;
	if (bind_windows(p, q, e->case_operand) || bind_windows(p, q, e->case_else))
		return -EINVAL;
	return 0;
}

/* SELECT [DISTINCT|ALL] items [FROM ...] [WHERE e] [GROUP BY ...] [HAVING e] [WINDOW ...]. */
/* A UID('name') hint after SELECT: the name of the statement's operators (hint.h). */
static int parse_select_hint(struct parser *p, struct sl_query *q)
{
	const struct sl_tok *t = &p->c->tok;
	char uid[256], err[128];
	int rc = sl_hint_uid(t->hint, t->hint_len, uid, sizeof uid, err, sizeof err);

	if (rc < 0)
		return sl_cur_fail_at(p->c, t->hint_line, t->hint_col, "%s", err);
	if (rc == 0)
		return 0;
	q->uid = strdup(uid);
	q->uid_line = t->hint_line;
	q->uid_col = t->hint_col;
	return q->uid ? 0 : sl_cur_nomem(p->c);
}

static int parse_select(struct parser *p, struct sl_query **out)
{
	struct sl_query *q = new_query(p, p->c->tok.line, p->c->tok.col);
	int rc;

	if (!q)
		return -ENOMEM;
	*out = q;
	sl_cur_advance(p->c);
	if (p->c->tok.hint && (rc = parse_select_hint(p, q)))
		return rc;
	if (sl_cur_accept_kw(p->c, "DISTINCT"))
		q->distinct = true;
	else
		sl_cur_accept_kw(p->c, "ALL");
	if ((rc = parse_items(p, q)))
		return rc;
	p->follow = "an operator, ',', FROM";
	if (sl_cur_accept_kw(p->c, "FROM")) {
		if ((rc = parse_from_list(p, &q->from)))
			return rc;
		p->follow = "',', JOIN, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT, UNION";
	}
	if (sl_cur_accept_kw(p->c, "WHERE")) {
		if ((rc = parse_expr(p, &q->where)))
			return rc;
		p->follow = "an operator, GROUP BY, HAVING, ORDER BY, LIMIT, UNION";
	}
	if (sl_cur_accept_kw(p->c, "GROUP")) {
		if ((rc = sl_cur_expect_kw(p->c, "BY", "BY after GROUP")) ||
		    (rc = parse_group_by(p, q)))
			return rc;
		p->follow = "an operator, ',', HAVING, ORDER BY, LIMIT, UNION";
	}
	if (sl_cur_accept_kw(p->c, "HAVING")) {
		if ((rc = parse_expr(p, &q->having)))
			return rc;
		p->follow = "an operator, WINDOW, ORDER BY, LIMIT, UNION";
	}
	if (sl_cur_accept_kw(p->c, "WINDOW")) {
		if ((rc = parse_window_defs(p, q)))
			return rc;
		p->follow = "',', ORDER BY, LIMIT, UNION";
	}
	for (uint32_t i = 0; i < q->nitems; i++)
		if ((rc = bind_windows(p, q, q->items[i].expr)))
			return rc;
	return 0;
}

/*
 * VALUES row {, row}, cur on VALUES; a row is (e, ...), ROW(e, ...) or one expression, as
 * Flink takes them. Rows of another arity are refused here, at the row.
 */
static int parse_values(struct parser *p, struct sl_query **out)
{
	struct sl_query *q = new_query(p, p->c->tok.line, p->c->tok.col);
	int rc;

	if (!q)
		return -ENOMEM;
	*out = q;
	sl_cur_advance(p->c);
	for (;;) {
		struct sl_values_row *r =
			sl_cur_append(p->c, (void **)&q->values, &q->nvalues, sizeof *r);
		struct sl_tok open, next = sl_cur_peek(p->c);
		bool paren;

		if (!r)
			return -ENOMEM;
		r->line = p->c->tok.line;
		r->col = p->c->tok.col;
		if (sl_cur_is_kw(p->c, "ROW") && sl_tok_is_op(&next, "("))
			sl_cur_advance(p->c);
		open = p->c->tok;
		paren = sl_cur_accept_op(p->c, "(");
		for (;;) {
			struct sl_expr **v =
				sl_cur_append(p->c, (void **)&r->vals, &r->nvals, sizeof *v);

			if (!v)
				return -ENOMEM;
			if ((rc = parse_expr(p, v)))
				return rc;
			if (!paren || !sl_cur_accept_op(p->c, ","))
				break;
		}
		if (paren && (rc = expect_close(p, &open)))
			return rc;
		if (r->nvals != q->values[0].nvals)
			return sl_cur_fail_at(
				p->c, r->line, r->col,
				"VALUES row %u has %u value%s but row 1 has %u: every "
				"row needs the same number",
				q->nvalues, r->nvals, r->nvals == 1 ? "" : "s", q->values[0].nvals);
		p->follow = "',', UNION";
		if (!sl_cur_accept_op(p->c, ","))
			return 0;
	}
}

/* SELECT ..., VALUES ... or ( query ). */
static int parse_term(struct parser *p, struct sl_query **out)
{
	struct sl_tok at = p->c->tok;
	int rc;

	if (sl_cur_is_kw(p->c, "SELECT"))
		return parse_select(p, out);
	if (sl_cur_is_kw(p->c, "VALUES"))
		return parse_values(p, out);
	if (!sl_cur_accept_op(p->c, "("))
		return sl_cur_expected(p->c, "a query (SELECT or '(')");
	if ((rc = parse_query(p, out)) || (rc = expect_close(p, &at)))
		return rc;
	p->follow = "UNION, ORDER BY, LIMIT";
	return 0;
}

/* ORDER BY e [ASC|DESC], ... and LIMIT n of a whole query q. */
static int parse_order_limit(struct parser *p, struct sl_query *q)
{
	struct sl_tok at = p->c->tok;
	int rc;

	if (!sl_cur_is_kw(p->c, "ORDER") && !sl_cur_is_kw(p->c, "LIMIT"))
		return 0;
	/* a parenthesised query brought its own: a second would overwrite it */
	if (q->norder_by || q->limit >= 0)
		return sl_cur_fail_at(p->c, at.line, at.col,
				      "ORDER BY or LIMIT after a parenthesised "
				      "query that has its own");
	if (sl_cur_accept_kw(p->c, "ORDER")) {
		if ((rc = sl_cur_expect_kw(p->c, "BY", "BY after ORDER")))
			return rc;
		for (;;) {
			struct sl_order_item *o = sl_cur_append(p->c, (void **)&q->order_by,
								&q->norder_by, sizeof *o);

			if (!o)
				return -ENOMEM;
			if ((rc = parse_expr(p, &o->expr)))
				return rc;
			if (sl_cur_is_kw(p->c, "ASC") || sl_cur_is_kw(p->c, "DESC")) {
				o->desc = sl_cur_is_kw(p->c, "DESC");
				sl_cur_advance(p->c);
			}
			if (!sl_cur_accept_op(p->c, ","))
				break;
		}
		p->follow = "an operator, ',', ASC, DESC, LIMIT";
	}
	if (sl_cur_accept_kw(p->c, "LIMIT")) {
		if (p->c->tok.kind != SL_TOK_INTEGER)
			return sl_cur_expected(p->c, "a row count after LIMIT");
		if (p->c->tok.len > 18)
			return sl_cur_fail_at(p->c, p->c->tok.line, p->c->tok.col,
					      "LIMIT %.*s is too large", (int)p->c->tok.len,
					      p->c->tok.text);
		/* the token is not NUL-terminated: digits by hand, not strtoll */
		q->limit = 0;
		for (uint32_t i = 0; i < p->c->tok.len; i++)
			q->limit = q->limit * 10 + (p->c->tok.text[i] - '0');
		sl_cur_advance(p->c);
		p->follow = NULL;
	}
	return 0;
}

static void ctes_destroy(struct sl_cte *ctes, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		free(ctes[i].name);
		for (uint32_t k = 0; k < ctes[i].ncols; k++)
			free(ctes[i].cols[k]);
		free(ctes[i].cols);
		sl_query_destroy(ctes[i].query);
	}
	free(ctes);
}

/* WITH name [(cols)] AS (query) {, ...}, cur on WITH, into *ctes (which the caller frees,
 * also on failure). A name written twice is not refused: Flink (Calcite) lets the later
 * one shadow the earlier, and the planner's innermost-first look-up does the same. */
static int parse_with(struct parser *p, struct sl_cte **ctes, uint32_t *n)
{
	int rc;

	sl_cur_advance(p->c);
	for (;;) {
		struct sl_cte *e = sl_cur_append(p->c, (void **)ctes, n, sizeof *e);
		struct sl_tok open;

		if (!e)
			return -ENOMEM;
		e->line = p->c->tok.line;
		e->col = p->c->tok.col;
		if (!is_name(&p->c->tok))
			return sl_cur_expected(p->c, "a name for the WITH query");
		if (!(e->name = sl_cur_ident_dup(p->c, &p->c->tok)))
			return -ENOMEM;
		sl_cur_advance(p->c);
		if (sl_cur_is_op(p->c, "(") &&
		    (rc = parse_name_list(p, &e->cols, &e->ncols, "a column name")))
			return rc;
		if ((rc = sl_cur_expect_kw(p->c, "AS", "AS and the WITH query in '(...)'")))
			return rc;
		open = p->c->tok;
		if ((rc = sl_cur_expect_op(p->c, "(", "'(' and the WITH query after AS")) ||
		    (rc = parse_query(p, &e->query)) || (rc = expect_close(p, &open)))
			return rc;
		if (!sl_cur_accept_op(p->c, ","))
			return 0;
	}
}

/* [WITH ...] term { UNION [ALL|DISTINCT] term } [ORDER BY ...] [LIMIT n], unions
 * left-associative; the WITH belongs to the whole query. */
static int parse_query(struct parser *p, struct sl_query **out)
{
	struct sl_cte *ctes = NULL;
	uint32_t nctes = 0;
	int rc = 0;

	if (p->depth >= MAX_DEPTH)
		return sl_cur_fail_at(p->c, p->c->tok.line, p->c->tok.col,
				      "queries nested more than %d deep", MAX_DEPTH);
	p->depth++;
	if (sl_cur_is_kw(p->c, "WITH") && (rc = parse_with(p, &ctes, &nctes))) {
		ctes_destroy(ctes, nctes);
		p->depth--;
		return rc;
	}
	rc = parse_term(p, out);
	while (!rc && sl_cur_is_kw(p->c, "UNION")) {
		struct sl_query *u = new_query(p, (*out)->line, (*out)->col);

		if (!u) {
			rc = -ENOMEM;
			break;
		}
		u->left = *out;
		*out = u;
		sl_cur_advance(p->c);
		u->set_op = sl_cur_is_kw(p->c, "ALL") ? SL_SET_UNION_ALL : SL_SET_UNION;
		if (sl_cur_is_kw(p->c, "ALL") || sl_cur_is_kw(p->c, "DISTINCT"))
			sl_cur_advance(p->c);
		rc = parse_term(p, &u->right);
	}
	if (!rc)
		rc = parse_order_limit(p, *out);
	if (ctes && *out && (*out)->ctes) {
		/* `WITH a ... (WITH b ... SELECT ...)`: b's scope nests in a's, which is one
		 * list a, b (a later name shadows, a later body sees the earlier ones) */
		struct sl_cte *all = realloc(ctes, sizeof(*all) * (nctes + (*out)->nctes));

		if (!all) {
			rc = sl_cur_nomem(p->c);
		} else {
			ctes = all;
			memcpy(ctes + nctes, (*out)->ctes, sizeof(*all) * (*out)->nctes);
			nctes += (*out)->nctes;
			free((*out)->ctes);
			(*out)->ctes = NULL;
		}
	}
	if (ctes && *out && !(*out)->ctes) {
		(*out)->ctes = ctes;
		(*out)->nctes = nctes;
	} else {
		ctes_destroy(ctes, nctes);
	}
	p->depth--;
	return rc;
}

/* The cursor's subquery hook (cursor.h): the query of IN (SELECT ...) or EXISTS (SELECT
 * ...), tok at SELECT, up to its ')'. */
static struct sl_query *expr_subquery(struct sl_cur *c, void *arg)
{
	struct parser *p = arg;
	const char *follow = p->follow;
	struct sl_query *q = NULL;
	int rc;

	if (p->nsubq >= MAX_EXPR_SUBQUERIES) {
		sl_cur_fail_at(c, c->tok.line, c->tok.col,
			       "subqueries in expressions nested more than %d deep",
			       MAX_EXPR_SUBQUERIES);
		return NULL;
	}
	p->nsubq++;
	rc = parse_query(p, &q);
	p->nsubq--;
	p->follow = follow;
	if (rc) {
		sl_query_destroy(q);
		return NULL;
	}
	return q;
}

static struct sl_stmt *new_stmt(struct parser *p, enum sl_stmt_kind kind)
{
	struct sl_stmt *s = calloc(1, sizeof *s);

	if (!s) {
		sl_cur_nomem(p->c);
		return NULL;
	}
	s->kind = kind;
	s->line = p->c->tok.line;
	s->col = p->c->tok.col;
	return s;
}

/* INSERT {INTO|OVERWRITE} t [(cols)] query, cur on INSERT. */
static int parse_insert(struct parser *p, struct sl_stmt *s)
{
	int rc;

	sl_cur_advance(p->c);
	if (sl_cur_is_kw(p->c, "OVERWRITE"))
		s->overwrite = true;
	else if (!sl_cur_is_kw(p->c, "INTO"))
		return sl_cur_expected(p->c, "INTO or OVERWRITE after INSERT");
	sl_cur_advance(p->c);
	if ((rc = take_dotted(p, &s->target, "the table name to insert into")))
		return rc;
	if (sl_cur_is_op(p->c, "(") && !at_query_paren(p) &&
	    (rc = parse_name_list(p, &s->cols, &s->ncols, "a column name")))
		return rc;
	return parse_query(p, &s->query);
}

/* CREATE [TEMPORARY] VIEW [IF NOT EXISTS] v [(cols)] AS query [WATERMARK FOR e AS e]. */
static int parse_view(struct parser *p, struct sl_stmt *s)
{
	int rc;

	sl_cur_advance(p->c);
	if (sl_cur_is_kw(p->c, "TEMPORARY")) {
		s->temporary = true;
		sl_cur_advance(p->c);
	}
	if ((rc = sl_cur_expect_kw(p->c, "VIEW", "VIEW after CREATE")))
		return rc;
	if (sl_cur_accept_kw(p->c, "IF")) {
		if ((rc = sl_cur_expect_kw(p->c, "NOT", "NOT EXISTS after IF")) ||
		    (rc = sl_cur_expect_kw(p->c, "EXISTS", "EXISTS after IF NOT")))
			return rc;
		s->if_not_exists = true;
	}
	if ((rc = take_dotted(p, &s->target, "a view name")))
		return rc;
	if (sl_cur_is_op(p->c, "(") &&
	    (rc = parse_name_list(p, &s->cols, &s->ncols, "a column name")))
		return rc;
	if ((rc = sl_cur_expect_kw(p->c, "AS", "AS and the view's query")))
		return rc;
	p->view = s;
	p->view_depth = p->depth;
	rc = parse_query(p, &s->query);
	p->view = NULL;
	if (rc)
		return rc;
	if (!at_watermark_for(p))
		return 0;
	rc = parse_view_watermark(p, s);
	p->follow = "an operator";
	return rc;
}

/* INSERT; INSERT; ... END of a statement set, cur after its BEGIN. */
static int parse_set_body(struct parser *p, struct sl_stmt *s)
{
	struct sl_tok at = p->c->tok;
	int rc;

	s->kind = SL_STMT_STATEMENT_SET;
	for (;;) {
		struct sl_stmt **slot;

		while (sl_cur_is_op(p->c, ";"))
			sl_cur_advance(p->c);
		if (sl_cur_is_kw(p->c, "END"))
			break;
		if (!sl_cur_is_kw(p->c, "INSERT"))
			return sl_cur_expected(p->c, s->nsub ? "INSERT or END in the statement set"
							     : "INSERT in the statement set");
		slot = sl_cur_append(p->c, (void **)&s->sub, &s->nsub, sizeof *slot);
		if (!slot)
			return -ENOMEM;
		*slot = new_stmt(p, SL_STMT_INSERT);
		if (!*slot)
			return -ENOMEM;
		if ((rc = parse_insert(p, *slot)))
			return rc;
		if (!sl_cur_is_op(p->c, ";") && !sl_cur_is_kw(p->c, "END"))
			return expected_after(p, "';'");
	}
	if (!s->nsub)
		return sl_cur_fail_at(p->c, at.line, at.col,
				      "a statement set needs at least one INSERT");
	sl_cur_advance(p->c);
	p->follow = NULL;
	return 0;
}

static int parse_stmt(struct parser *p, struct sl_stmt **out, bool in_explain)
{
	struct sl_stmt *s = new_stmt(p, SL_STMT_SELECT);
	int rc;

	if (!s)
		return -ENOMEM;
	*out = s;
	if (sl_cur_is_kw(p->c, "SELECT") || sl_cur_is_kw(p->c, "WITH") ||
	    sl_cur_is_kw(p->c, "VALUES") || sl_cur_is_op(p->c, "("))
		return parse_query(p, &s->query);
	if (sl_cur_is_kw(p->c, "INSERT")) {
		s->kind = SL_STMT_INSERT;
		return parse_insert(p, s);
	}
	if (sl_cur_is_kw(p->c, "EXECUTE") || (in_explain && sl_cur_is_kw(p->c, "STATEMENT"))) {
		sl_cur_accept_kw(p->c, "EXECUTE");
		if ((rc = sl_cur_expect_kw(p->c, "STATEMENT", "STATEMENT SET after EXECUTE")) ||
		    (rc = sl_cur_expect_kw(p->c, "SET", "SET after STATEMENT")) ||
		    (rc = sl_cur_expect_kw(p->c, "BEGIN", "BEGIN after STATEMENT SET")))
			return rc;
		return parse_set_body(p, s);
	}
	if (in_explain)
		return sl_cur_expected(p->c, "a query, INSERT or STATEMENT SET after EXPLAIN");
	if (sl_cur_is_kw(p->c, "CREATE")) {
		s->kind = SL_STMT_CREATE_VIEW;
		return parse_view(p, s);
	}
	if (sl_cur_is_kw(p->c, "EXPLAIN")) {
		s->kind = SL_STMT_EXPLAIN;
		sl_cur_advance(p->c);
		/* sluice's EXPLAIN WATERMARK FOR t: where t's watermark is in the job that ran
		 * (or runs) last with it, and what holds it back */
		if (sl_cur_accept_kw(p->c, "WATERMARK")) {
			s->kind = SL_STMT_EXPLAIN_WATERMARK;
			if ((rc = sl_cur_expect_kw(p->c, "FOR", "FOR after EXPLAIN WATERMARK")))
				return rc;
			return take_dotted(p, &s->target, "a table or view name");
		}
		if (sl_cur_accept_kw(p->c, "PLAN")) {
			if ((rc = sl_cur_expect_kw(p->c, "FOR", "FOR after EXPLAIN PLAN")))
				return rc;
		}
		return parse_stmt(p, &s->inner, true);
	}
	if (sl_cur_is_kw(p->c, "BEGIN")) {
		s->kind = SL_STMT_BEGIN_SET;
		sl_cur_advance(p->c);
		if ((rc = sl_cur_expect_kw(p->c, "STATEMENT", "STATEMENT SET after BEGIN")) ||
		    (rc = sl_cur_expect_kw(p->c, "SET", "SET after BEGIN STATEMENT")))
			return rc;
		/* sl_ddl_parse keeps BEGIN STATEMENT SET; ...; END as one span: a whole set */
		if (!sl_cur_accept_op(p->c, ";"))
			return 0;
		return parse_set_body(p, s);
	}
	if (sl_cur_is_kw(p->c, "END")) {
		s->kind = SL_STMT_END;
		sl_cur_advance(p->c);
		return 0;
	}
	return sl_cur_expected(p->c, "a statement (SELECT, INSERT, CREATE VIEW, EXPLAIN or a "
				     "STATEMENT SET)");
}

struct sl_stmt *sl_stmt_parse(const char *src, size_t len, uint32_t line, uint32_t col, char *err,
			      size_t errcap)
{
	struct sl_cur cur;
	struct parser p = { .c = &cur };
	struct sl_stmt *s = NULL;

	sl_cur_init(&cur, src, len, line, col, err, errcap);
	cur.subquery = expr_subquery;
	cur.subquery_arg = &p;
	if (parse_stmt(&p, &s, false))
		goto out_destroy;
	sl_cur_accept_op(&cur, ";"); /* a span given with its ';' */
	if (cur.tok.kind != SL_TOK_EOF) {
		expected_after(&p, "end of statement");
		goto out_destroy;
	}
	return s;

out_destroy:
	sl_stmt_destroy(s);
	return NULL;
}

/* Left-deep chains (a JOIN b JOIN c ..., a, b, c, ...) are freed by a loop down the left
 * spine; the right side is one item, nested at most MAX_DEPTH deep. */
static void from_destroy(struct sl_from *f)
{
	while (f) {
		struct sl_from *left = f->left;

		free(f->alias);
		for (uint32_t i = 0; i < f->nalias_cols; i++)
			free(f->alias_cols[i]);
		free(f->alias_cols);
		free(f->name);
		sl_expr_destroy(f->system_time);
		sl_query_destroy(f->sub);
		for (uint32_t i = 0; f->arg_names && i < f->call->nargs; i++)
			free(f->arg_names[i]);
		free(f->arg_names);
		sl_expr_destroy(f->call);
		from_destroy(f->right);
		sl_expr_destroy(f->on);
		free(f);
		f = left;
	}
}

void sl_query_destroy(struct sl_query *q)
{
	while (q) {
		struct sl_query *left = q->left;

		sl_query_destroy(q->right);
		free(q->uid);
		for (uint32_t i = 0; i < q->nitems; i++) {
			sl_expr_destroy(q->items[i].expr);
			free(q->items[i].alias);
			free(q->items[i].star_qual);
		}
		free(q->items);
		from_destroy(q->from);
		sl_expr_destroy(q->where);
		for (uint32_t i = 0; i < q->ngroup_by; i++)
			sl_expr_destroy(q->group_by[i]);
		free(q->group_by);
		free(q->gsets);
		sl_expr_destroy(q->having);
		for (uint32_t i = 0; i < q->nwindows; i++) {
			free(q->windows[i].name);
			sl_expr_destroy(q->windows[i].spec);
		}
		free(q->windows);
		for (uint32_t i = 0; i < q->norder_by; i++)
			sl_expr_destroy(q->order_by[i].expr);
		free(q->order_by);
		ctes_destroy(q->ctes, q->nctes);
		for (uint32_t i = 0; i < q->nvalues; i++) {
			for (uint32_t k = 0; k < q->values[i].nvals; k++)
				sl_expr_destroy(q->values[i].vals[k]);
			free(q->values[i].vals);
		}
		free(q->values);
		free(q);
		q = left;
	}
}

void sl_stmt_destroy(struct sl_stmt *s)
{
	if (!s)
		return;
	sl_query_destroy(s->query);
	free(s->target);
	for (uint32_t i = 0; i < s->ncols; i++)
		free(s->cols[i]);
	free(s->cols);
	sl_expr_destroy(s->wm_for);
	sl_expr_destroy(s->wm_expr);
	sl_stmt_destroy(s->inner);
	for (uint32_t i = 0; i < s->nsub; i++)
		sl_stmt_destroy(s->sub[i]);
	free(s->sub);
	free(s);
}
