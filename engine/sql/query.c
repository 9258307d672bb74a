/*
 * query.c - SELECT, INSERT, CREATE VIEW, EXPLAIN and statement sets to trees (see query.h).
 *
 * Recursive descent over sl_lexer with one current token. Every scalar expression goes to
 * sl_expr_parse(), which shares our lexer and hands back the token it stopped at, so the
 * clause words it does not know (FROM, GROUP, WATERMARK, ...) come back to us. Look-ahead
 * copies the lexer, a plain value.
 *
 * Invariants, as in ddl.c and expr.c: a node is linked into its parent before its children
 * are parsed, and an array grows by one zeroed element before the element is filled, so on
 * any failure destroying the root frees everything exactly once; the first error wins (err
 * holds the message of the token where parsing stopped). Query and FROM nesting is bounded
 * by MAX_DEPTH and left-deep chains (joins, unions) are freed by loops, so hostile input
 * exhausts neither the stack nor the heap's patience.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query.h"

/* Subqueries and parenthesised FROM items nested this deep are refused (hand-written SQL
 * stays below 10; each level costs a few hundred bytes of stack, more under ASan). */
#define MAX_DEPTH 64

struct parser {
	struct sl_lexer lx;
	struct sl_tok cur;
	char *err;
	size_t errcap;
	/* What may follow the clause just parsed ("an operator, GROUP BY, ..."), so the error
	 * at a token that ends nothing names every way to go on; NULL when nothing can. */
	const char *follow;
	/* CREATE VIEW being parsed: its top SELECT list may hold the seeds' WATERMARK item */
	struct sl_stmt *view;
	uint32_t view_depth;
	uint32_t depth;
	bool failed;
};

static int parse_query(struct parser *p, struct sl_query **out);
static int parse_from_list(struct parser *p, struct sl_from **out);

static void advance(struct parser *p)
{
	p->cur = sl_lexer_next(&p->lx);
}

/* The token after cur, without consuming anything. */
static struct sl_tok peek(const struct parser *p)
{
	struct sl_lexer copy = p->lx;

	return sl_lexer_next(&copy);
}

static int fail_at(struct parser *p, uint32_t line, uint32_t col, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->failed)
		return -EINVAL;
	p->failed = true;
	n = snprintf(p->err, p->errcap, "%u:%u: ", line, col);
	if (n >= 0 && (size_t)n < p->errcap) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errcap - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int nomem(struct parser *p)
{
	if (!p->failed) {
		p->failed = true;
		snprintf(p->err, p->errcap, "out of memory");
	}
	return -ENOMEM;
}

/* "expected <what>, found <cur>" at cur, worded as ddl.c and expr.c do; a lexer error
 * reports its own message instead. */
static int expected(struct parser *p, const char *what)
{
	const struct sl_tok *t = &p->cur;
	char found[96];

	if (t->kind == SL_TOK_ERROR)
		return fail_at(p, t->line, t->col, "%s", t->msg);
	sl_tok_describe(t, found, sizeof found);
	return fail_at(p, t->line, t->col, "expected %s, found %s", what, found);
}

/* The error at a token that continues nothing: what the last clause allows, or `end`. */
static int expected_after(struct parser *p, const char *end)
{
	char what[192];

	if (!p->follow)
		return expected(p, end);
	snprintf(what, sizeof what, "%s or %s", p->follow, end);
	return expected(p, what);
}

static bool is_kw(const struct parser *p, const char *kw)
{
	return sl_tok_is_kw(&p->cur, kw);
}

static bool is_op(const struct parser *p, const char *op)
{
	return sl_tok_is_op(&p->cur, op);
}

static int expect_kw(struct parser *p, const char *kw, const char *what)
{
	if (!is_kw(p, kw))
		return expected(p, what);
	advance(p);
	return 0;
}

static int expect_op(struct parser *p, const char *op, const char *what)
{
	if (!is_op(p, op))
		return expected(p, what);
	advance(p);
	return 0;
}

/* Appends one zeroed element to *arr (realloc per element: plan time, lists are short). */
static void *append(struct parser *p, void **arr, uint32_t *n, size_t size)
{
	char *a = realloc(*arr, (*n + 1) * size);

	if (!a) {
		nomem(p);
		return NULL;
	}
	*arr = a;
	memset(a + *n * size, 0, size);
	return a + (*n)++ * size;
}

static char *ident_dup(struct parser *p, const struct sl_tok *t)
{
	char *s = sl_tok_ident_dup(t);

	if (!s)
		nomem(p);
	return s;
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

/* The seeds' `WATERMARK FOR` (view extension) rather than a column or alias `watermark`. */
static bool at_watermark_for(const struct parser *p)
{
	struct sl_tok n;

	if (!is_kw(p, "WATERMARK"))
		return false;
	n = peek(p);
	return sl_tok_is_kw(&n, "FOR");
}

/* '(' that opens a query rather than a column list or a parenthesised join. */
static bool at_query_paren(const struct parser *p)
{
	struct sl_tok n;

	if (!is_op(p, "("))
		return false;
	n = peek(p);
	return sl_tok_is_kw(&n, "SELECT") || sl_tok_is_op(&n, "(");
}

static int parse_expr(struct parser *p, struct sl_expr **out)
{
	*out = sl_expr_parse(&p->lx, &p->cur, p->err, p->errcap);
	if (!*out) {
		/* the expression parser quotes a token whole, even a string with line breaks */
		for (char *c = p->err; p->errcap && *c; c++)
			if (*c == '\n' || *c == '\r')
				*c = ' ';
		p->failed = true;
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

		if (n ? p->cur.kind != SL_TOK_IDENT : !is_name(&p->cur))
			return expected(p, n ? "a name after '.'" : what);
		part = ident_dup(p, &p->cur);
		if (!part)
			return -ENOMEM;
		plen = strlen(part);
		s = realloc(*out, n + plen + 2);
		if (!s) {
			free(part);
			return nomem(p);
		}
		*out = s;
		if (n)
			s[n++] = '.';
		memcpy(s + n, part, plen + 1);
		n += plen;
		free(part);
		advance(p);
		if (!is_op(p, "."))
			return 0;
		next = peek(p);
		if (sl_tok_is_op(&next, "*"))
			return 0;
		advance(p);
	}
}

/* `(a, b, c)`: the column list of INSERT and CREATE VIEW, cur on '('. */
static int parse_name_list(struct parser *p, char ***names, uint32_t *n, const char *what)
{
	int rc;

	advance(p);
	for (;;) {
		char **slot = append(p, (void **)names, n, sizeof *slot);

		if (!slot)
			return -ENOMEM;
		if (!is_name(&p->cur))
			return expected(p, what);
		*slot = ident_dup(p, &p->cur);
		if (!*slot)
			return -ENOMEM;
		advance(p);
		if (is_op(p, ")"))
			break;
		if ((rc = expect_op(p, ",", "',' or ')' in the column list")))
			return rc;
	}
	advance(p);
	return 0;
}

/* `[AS] alias` after a select item or FROM item; nothing when no alias is written. */
static int parse_alias(struct parser *p, char **alias)
{
	if (is_kw(p, "AS")) {
		advance(p);
		if (!is_name(&p->cur))
			return expected(p, "an alias after AS");
	} else if (!is_name(&p->cur) || at_watermark_for(p)) {
		return 0;
	}
	*alias = ident_dup(p, &p->cur);
	if (!*alias)
		return -ENOMEM;
	advance(p);
	return 0;
}

static struct sl_query *new_query(struct parser *p, uint32_t line, uint32_t col)
{
	struct sl_query *q = calloc(1, sizeof *q);

	if (!q) {
		nomem(p);
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
		nomem(p);
		return NULL;
	}
	f->kind = kind;
	f->line = line;
	f->col = col;
	return f;
}

static struct sl_expr *new_expr(struct parser *p, enum sl_expr_kind kind, const struct sl_tok *t)
{
	struct sl_expr *e = calloc(1, sizeof *e);

	if (!e) {
		nomem(p);
		return NULL;
	}
	e->kind = kind;
	e->line = t->line;
	e->col = t->col;
	return e;
}

/* Appends an owned child to e->args; frees it when the array cannot grow. */
static int add_arg(struct parser *p, struct sl_expr *e, struct sl_expr *child)
{
	struct sl_expr **a = realloc(e->args, (e->nargs + 1) * sizeof *a);

	if (!a) {
		sl_expr_destroy(child);
		return nomem(p);
	}
	e->args = a;
	e->args[e->nargs++] = child;
	return 0;
}

static int add_path(struct parser *p, struct sl_expr *e, const struct sl_tok *t)
{
	char **a = realloc(e->path, (e->npath + 1) * sizeof *a);

	if (!a)
		return nomem(p);
	e->path = a;
	e->path[e->npath] = ident_dup(p, t);
	if (!e->path[e->npath])
		return -ENOMEM;
	e->npath++;
	return 0;
}

/* Window TVF data argument: TABLE name [PARTITION BY key | PARTITION BY (key, ...)], the
 * keys (SESSION's, Flink 1.19+) going to e->partition; cur on TABLE. */
static int parse_table_arg(struct parser *p, struct sl_expr **out)
{
	struct sl_expr *e = new_expr(p, SL_EXPR_TABLE, &p->cur);
	bool paren;
	int rc;

	if (!e)
		return -ENOMEM;
	*out = e;
	advance(p);
	for (;;) {
		if (e->npath ? p->cur.kind != SL_TOK_IDENT : !is_name(&p->cur))
			return expected(p,
					e->npath ? "a name after '.'" : "a table name after TABLE");
		if ((rc = add_path(p, e, &p->cur)))
			return rc;
		advance(p);
		if (!is_op(p, "."))
			break;
		advance(p);
	}
	if (!is_kw(p, "PARTITION"))
		return 0;
	advance(p);
	if ((rc = expect_kw(p, "BY", "BY after PARTITION")))
		return rc;
	paren = is_op(p, "(");
	if (paren)
		advance(p);
	for (;;) {
		struct sl_expr **k = append(p, (void **)&e->partition, &e->npartition, sizeof *k);

		if (!k)
			return -ENOMEM;
		if ((rc = parse_expr(p, k)))
			return rc;
		if (!paren || !is_op(p, ","))
			break;
		advance(p);
	}
	return paren ? expect_op(p, ")", "',' or ')' in PARTITION BY") : 0;
}

/* DESCRIPTOR(col, ...), cur on DESCRIPTOR. */
static int parse_descriptor(struct parser *p, struct sl_expr **out)
{
	struct sl_expr *e = new_expr(p, SL_EXPR_DESCRIPTOR, &p->cur);
	int rc;

	if (!e)
		return -ENOMEM;
	*out = e;
	advance(p);
	if ((rc = expect_op(p, "(", "'(' after DESCRIPTOR")))
		return rc;
	for (;;) {
		struct sl_expr *c;

		if (!is_name(&p->cur))
			return expected(p, "a column name in DESCRIPTOR");
		c = new_expr(p, SL_EXPR_COLUMN, &p->cur);
		if (!c)
			return -ENOMEM;
		if ((rc = add_arg(p, e, c)) || (rc = add_path(p, c, &p->cur)))
			return rc;
		advance(p);
		if (!is_op(p, ","))
			break;
		advance(p);
	}
	return expect_op(p, ")", "',' or ')' in DESCRIPTOR");
}

/* `NAME =>` before a TVF argument: '=' and '>' written together (the lexer has no "=>"). */
static bool at_arg_name(const struct parser *p)
{
	struct sl_lexer copy = p->lx;
	struct sl_tok eq, gt;

	if (p->cur.kind != SL_TOK_IDENT)
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

	advance(p);
	if ((rc = expect_op(p, "(", "'(' after TABLE")))
		return rc;
	next = peek(p);
	if (!is_name(&p->cur) || !sl_tok_is_op(&next, "("))
		return expected(p, "a window function such as TUMBLE(...) after TABLE(");
	call = new_expr(p, SL_EXPR_CALL, &p->cur);
	if (!call)
		return -ENOMEM;
	f->call = call;
	call->text = ident_dup(p, &p->cur);
	if (!call->text)
		return -ENOMEM;
	advance(p);
	advance(p);
	while (!is_op(p, ")")) {
		struct sl_expr *arg = NULL;
		char *name = NULL, **names;

		if (at_arg_name(p)) {
			name = ident_dup(p, &p->cur);
			if (!name)
				return -ENOMEM;
			advance(p);
			advance(p);
			advance(p);
			named = true;
		} else if (named) {
			return expected(p, "a named argument (NAME => value) after a named one");
		}
		if (is_kw(p, "TABLE"))
			rc = parse_table_arg(p, &arg);
		else if (is_kw(p, "DESCRIPTOR"))
			rc = parse_descriptor(p, &arg);
		else
			rc = parse_expr(p, &arg);
		/* names and args grow together, so arg_names[i] always matches args[i] */
		names = rc ? NULL : realloc(f->arg_names, (call->nargs + 1) * sizeof *names);
		if (!rc && !names)
			rc = nomem(p);
		if (rc) {
			free(name);
			sl_expr_destroy(arg);
			return rc;
		}
		f->arg_names = names;
		names[call->nargs] = name;
		if ((rc = add_arg(p, call, arg))) {
			free(name);
			return rc;
		}
		if (!is_op(p, ","))
			break;
		advance(p);
	}
	if ((rc = expect_op(p, ")", "',' or ')' in the argument list")) ||
	    (rc = expect_op(p, ")", "')' closing TABLE(")))
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

	if (is_op(p, ")")) {
		advance(p);
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
	struct sl_tok at = p->cur, next = peek(p);
	struct sl_from *f;
	int rc;

	if (is_op(p, "(")) {
		if (p->depth >= MAX_DEPTH)
			return fail_at(p, at.line, at.col, "FROM nested more than %d deep",
				       MAX_DEPTH);
		if (!at_query_paren(p)) {
			advance(p);
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
		advance(p);
		if ((rc = parse_query(p, &f->sub)) || (rc = expect_close(p, &at)))
			return rc;
		return parse_alias(p, &f->alias);
	}
	if (is_kw(p, "TABLE") && sl_tok_is_op(&next, "(")) {
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
	if (is_kw(p, "FOR")) {
		if (!right)
			return fail_at(p, p->cur.line, p->cur.col,
				       "FOR SYSTEM_TIME AS OF belongs "
				       "to the table on the right of a JOIN");
		advance(p);
		if ((rc = expect_kw(p, "SYSTEM_TIME", "SYSTEM_TIME after FOR")) ||
		    (rc = expect_kw(p, "AS", "AS OF after FOR SYSTEM_TIME")) ||
		    (rc = expect_kw(p, "OF", "OF after FOR SYSTEM_TIME AS")) ||
		    (rc = parse_expr(p, &f->system_time)))
			return rc;
	}
	return parse_alias(p, &f->alias);
}

/* Consumes the join keywords at cur into *kind, *found false (nothing taken) if none. */
static int take_join(struct parser *p, enum sl_join_kind *kind, bool *found)
{
	*found = true;
	if (is_kw(p, "JOIN")) {
		*kind = SL_JOIN_INNER;
	} else if (is_kw(p, "INNER")) {
		*kind = SL_JOIN_INNER;
		advance(p);
	} else if (is_kw(p, "CROSS")) {
		*kind = SL_JOIN_CROSS;
		advance(p);
	} else if (is_kw(p, "LEFT") || is_kw(p, "RIGHT") || is_kw(p, "FULL")) {
		*kind = is_kw(p, "LEFT")    ? SL_JOIN_LEFT
			: is_kw(p, "RIGHT") ? SL_JOIN_RIGHT
					    : SL_JOIN_FULL;
		advance(p);
		if (is_kw(p, "OUTER"))
			advance(p);
	} else {
		*found = false;
		return 0;
	}
	return expect_kw(p, "JOIN", "JOIN");
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
		if ((rc = expect_kw(p, "ON", "ON and the join condition")))
			break;
		rc = parse_expr(p, &j->on);
	}
	return rc;
}

/* chain {, chain}: a comma is a CROSS join binding looser than JOIN, as in SQL. */
static int parse_from_list(struct parser *p, struct sl_from **out)
{
	int rc = parse_join_chain(p, out);

	while (!rc && is_op(p, ",")) {
		struct sl_from *j = new_from(p, SL_FROM_JOIN, (*out)->line, (*out)->col);

		if (!j)
			return -ENOMEM;
		j->join = SL_JOIN_CROSS;
		j->left = *out;
		*out = j;
		advance(p);
		rc = parse_join_chain(p, &j->right);
	}
	return rc;
}

/* WATERMARK FOR e AS e of the seeds' views, cur on WATERMARK (FOR checked by the caller). */
static int parse_view_watermark(struct parser *p, struct sl_stmt *s)
{
	int rc;

	if (s->wm_for)
		return fail_at(p, p->cur.line, p->cur.col, "a view has one WATERMARK");
	s->wm_line = p->cur.line;
	s->wm_col = p->cur.col;
	advance(p);
	advance(p);
	if ((rc = parse_expr(p, &s->wm_for)) ||
	    (rc = expect_kw(p, "AS", "AS after the WATERMARK FOR expression")))
		return rc;
	return parse_expr(p, &s->wm_expr);
}

/* `*`, `t.*`, or `expr [[AS] alias]`. */
static int parse_item(struct parser *p, struct sl_select_item *it)
{
	struct sl_lexer scan = p->lx;
	struct sl_tok t = p->cur;
	int rc;

	it->line = t.line;
	it->col = t.col;
	if (is_op(p, "*")) {
		it->star = true;
		advance(p);
		return 0;
	}
	/* t.* and cat.db.t.*: names and dots up to a star, else an expression */
	while (is_name(&p->cur)) {
		struct sl_tok dot = sl_lexer_next(&scan);

		if (!sl_tok_is_op(&dot, "."))
			break;
		t = sl_lexer_next(&scan);
		if (sl_tok_is_op(&t, "*")) {
			it->star = true;
			if ((rc = take_dotted(p, &it->star_qual, "a table name before .*")))
				return rc;
			advance(p);
			advance(p);
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
				append(p, (void **)&q->items, &q->nitems, sizeof *it);

			rc = it ? parse_item(p, it) : -ENOMEM;
		}
		if (rc)
			return rc;
		if (!is_op(p, ","))
			break;
		advance(p);
	}
	if (!q->nitems)
		return fail_at(p, q->line, q->col, "a SELECT needs a column besides WATERMARK");
	return 0;
}

/* e, e, ... into a grown array. */
static int parse_expr_list(struct parser *p, struct sl_expr ***arr, uint32_t *n)
{
	for (;;) {
		struct sl_expr **slot = append(p, (void **)arr, n, sizeof *slot);
		int rc;

		if (!slot)
			return -ENOMEM;
		if ((rc = parse_expr(p, slot)))
			return rc;
		if (!is_op(p, ","))
			return 0;
		advance(p);
	}
}

/* SELECT [DISTINCT|ALL] items [FROM ...] [WHERE e] [GROUP BY ...] [HAVING e]. */
static int parse_select(struct parser *p, struct sl_query **out)
{
	struct sl_query *q = new_query(p, p->cur.line, p->cur.col);
	int rc;

	if (!q)
		return -ENOMEM;
	*out = q;
	advance(p);
	if (is_kw(p, "DISTINCT")) {
		q->distinct = true;
		advance(p);
	} else if (is_kw(p, "ALL")) {
		advance(p);
	}
	if ((rc = parse_items(p, q)))
		return rc;
	p->follow = "an operator, ',', FROM";
	if (is_kw(p, "FROM")) {
		advance(p);
		if ((rc = parse_from_list(p, &q->from)))
			return rc;
		p->follow = "',', JOIN, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT, UNION";
	}
	if (is_kw(p, "WHERE")) {
		advance(p);
		if ((rc = parse_expr(p, &q->where)))
			return rc;
		p->follow = "an operator, GROUP BY, HAVING, ORDER BY, LIMIT, UNION";
	}
	if (is_kw(p, "GROUP")) {
		advance(p);
		if ((rc = expect_kw(p, "BY", "BY after GROUP")) ||
		    (rc = parse_expr_list(p, &q->group_by, &q->ngroup_by)))
			return rc;
		p->follow = "an operator, ',', HAVING, ORDER BY, LIMIT, UNION";
	}
	if (is_kw(p, "HAVING")) {
		advance(p);
		if ((rc = parse_expr(p, &q->having)))
			return rc;
		p->follow = "an operator, ORDER BY, LIMIT, UNION";
	}
	return 0;
}

/* SELECT ... or ( query ). */
static int parse_term(struct parser *p, struct sl_query **out)
{
	struct sl_tok at = p->cur;
	int rc;

	if (is_kw(p, "SELECT"))
		return parse_select(p, out);
	if (!is_op(p, "("))
		return expected(p, "a query (SELECT or '(')");
	advance(p);
	if ((rc = parse_query(p, out)) || (rc = expect_close(p, &at)))
		return rc;
	p->follow = "UNION, ORDER BY, LIMIT";
	return 0;
}

/* ORDER BY e [ASC|DESC], ... and LIMIT n of a whole query q. */
static int parse_order_limit(struct parser *p, struct sl_query *q)
{
	struct sl_tok at = p->cur;
	int rc;

	if (!is_kw(p, "ORDER") && !is_kw(p, "LIMIT"))
		return 0;
	/* a parenthesised query brought its own: a second would overwrite it */
	if (q->norder_by || q->limit >= 0)
		return fail_at(p, at.line, at.col,
			       "ORDER BY or LIMIT after a parenthesised "
			       "query that has its own");
	if (is_kw(p, "ORDER")) {
		advance(p);
		if ((rc = expect_kw(p, "BY", "BY after ORDER")))
			return rc;
		for (;;) {
			struct sl_order_item *o =
				append(p, (void **)&q->order_by, &q->norder_by, sizeof *o);

			if (!o)
				return -ENOMEM;
			if ((rc = parse_expr(p, &o->expr)))
				return rc;
			if (is_kw(p, "ASC") || is_kw(p, "DESC")) {
				o->desc = is_kw(p, "DESC");
				advance(p);
			}
			if (!is_op(p, ","))
				break;
			advance(p);
		}
		p->follow = "an operator, ',', ASC, DESC, LIMIT";
	}
	if (is_kw(p, "LIMIT")) {
		advance(p);
		if (p->cur.kind != SL_TOK_INTEGER)
			return expected(p, "a row count after LIMIT");
		if (p->cur.len > 18)
			return fail_at(p, p->cur.line, p->cur.col, "LIMIT %.*s is too large",
				       (int)p->cur.len, p->cur.text);
		/* the token is not NUL-terminated: digits by hand, not strtoll */
		q->limit = 0;
		for (uint32_t i = 0; i < p->cur.len; i++)
			q->limit = q->limit * 10 + (p->cur.text[i] - '0');
		advance(p);
		p->follow = NULL;
	}
	return 0;
}

/* term { UNION [ALL|DISTINCT] term } [ORDER BY ...] [LIMIT n], unions left-associative. */
static int parse_query(struct parser *p, struct sl_query **out)
{
	int rc;

	if (p->depth >= MAX_DEPTH)
		return fail_at(p, p->cur.line, p->cur.col, "queries nested more than %d deep",
			       MAX_DEPTH);
	p->depth++;
	rc = parse_term(p, out);
	while (!rc && is_kw(p, "UNION")) {
		struct sl_query *u = new_query(p, (*out)->line, (*out)->col);

		if (!u) {
			rc = -ENOMEM;
			break;
		}
		u->left = *out;
		*out = u;
		advance(p);
		u->set_op = is_kw(p, "ALL") ? SL_SET_UNION_ALL : SL_SET_UNION;
		if (is_kw(p, "ALL") || is_kw(p, "DISTINCT"))
			advance(p);
		rc = parse_term(p, &u->right);
	}
	if (!rc)
		rc = parse_order_limit(p, *out);
	p->depth--;
	return rc;
}

static struct sl_stmt *new_stmt(struct parser *p, enum sl_stmt_kind kind)
{
	struct sl_stmt *s = calloc(1, sizeof *s);

	if (!s) {
		nomem(p);
		return NULL;
	}
	s->kind = kind;
	s->line = p->cur.line;
	s->col = p->cur.col;
	return s;
}

/* INSERT {INTO|OVERWRITE} t [(cols)] query, cur on INSERT. */
static int parse_insert(struct parser *p, struct sl_stmt *s)
{
	int rc;

	advance(p);
	if (is_kw(p, "OVERWRITE"))
		s->overwrite = true;
	else if (!is_kw(p, "INTO"))
		return expected(p, "INTO or OVERWRITE after INSERT");
	advance(p);
	if ((rc = take_dotted(p, &s->target, "the table name to insert into")))
		return rc;
	if (is_op(p, "(") && !at_query_paren(p) &&
	    (rc = parse_name_list(p, &s->cols, &s->ncols, "a column name")))
		return rc;
	return parse_query(p, &s->query);
}

/* CREATE [TEMPORARY] VIEW [IF NOT EXISTS] v [(cols)] AS query [WATERMARK FOR e AS e]. */
static int parse_view(struct parser *p, struct sl_stmt *s)
{
	int rc;

	advance(p);
	if (is_kw(p, "TEMPORARY")) {
		s->temporary = true;
		advance(p);
	}
	if ((rc = expect_kw(p, "VIEW", "VIEW after CREATE")))
		return rc;
	if (is_kw(p, "IF")) {
		advance(p);
		if ((rc = expect_kw(p, "NOT", "NOT EXISTS after IF")) ||
		    (rc = expect_kw(p, "EXISTS", "EXISTS after IF NOT")))
			return rc;
		s->if_not_exists = true;
	}
	if ((rc = take_dotted(p, &s->target, "a view name")))
		return rc;
	if (is_op(p, "(") && (rc = parse_name_list(p, &s->cols, &s->ncols, "a column name")))
		return rc;
	if ((rc = expect_kw(p, "AS", "AS and the view's query")))
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
	struct sl_tok at = p->cur;
	int rc;

	s->kind = SL_STMT_STATEMENT_SET;
	for (;;) {
		struct sl_stmt **slot;

		while (is_op(p, ";"))
			advance(p);
		if (is_kw(p, "END"))
			break;
		if (!is_kw(p, "INSERT"))
			return expected(p, s->nsub ? "INSERT or END in the statement set"
						   : "INSERT in the statement set");
		slot = append(p, (void **)&s->sub, &s->nsub, sizeof *slot);
		if (!slot)
			return -ENOMEM;
		*slot = new_stmt(p, SL_STMT_INSERT);
		if (!*slot)
			return -ENOMEM;
		if ((rc = parse_insert(p, *slot)))
			return rc;
		if (!is_op(p, ";") && !is_kw(p, "END"))
			return expected_after(p, "';'");
	}
	if (!s->nsub)
		return fail_at(p, at.line, at.col, "a statement set needs at least one INSERT");
	advance(p);
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
	if (is_kw(p, "SELECT") || is_op(p, "("))
		return parse_query(p, &s->query);
	if (is_kw(p, "INSERT")) {
		s->kind = SL_STMT_INSERT;
		return parse_insert(p, s);
	}
	if (is_kw(p, "EXECUTE") || (in_explain && is_kw(p, "STATEMENT"))) {
		if (is_kw(p, "EXECUTE"))
			advance(p);
		if ((rc = expect_kw(p, "STATEMENT", "STATEMENT SET after EXECUTE")) ||
		    (rc = expect_kw(p, "SET", "SET after STATEMENT")) ||
		    (rc = expect_kw(p, "BEGIN", "BEGIN after STATEMENT SET")))
			return rc;
		return parse_set_body(p, s);
	}
	if (in_explain)
		return expected(p, "a query, INSERT or STATEMENT SET after EXPLAIN");
	if (is_kw(p, "CREATE")) {
		s->kind = SL_STMT_CREATE_VIEW;
		return parse_view(p, s);
	}
	if (is_kw(p, "EXPLAIN")) {
		s->kind = SL_STMT_EXPLAIN;
		advance(p);
		if (is_kw(p, "PLAN")) {
			advance(p);
			if ((rc = expect_kw(p, "FOR", "FOR after EXPLAIN PLAN")))
				return rc;
		}
		return parse_stmt(p, &s->inner, true);
	}
	if (is_kw(p, "BEGIN")) {
		s->kind = SL_STMT_BEGIN_SET;
		advance(p);
		if ((rc = expect_kw(p, "STATEMENT", "STATEMENT SET after BEGIN")) ||
		    (rc = expect_kw(p, "SET", "SET after BEGIN STATEMENT")))
			return rc;
		/* sl_ddl_parse keeps BEGIN STATEMENT SET; ...; END as one span: a whole set */
		if (!is_op(p, ";"))
			return 0;
		advance(p);
		return parse_set_body(p, s);
	}
	if (is_kw(p, "END")) {
		s->kind = SL_STMT_END;
		advance(p);
		return 0;
	}
	return expected(p, "a statement (SELECT, INSERT, CREATE VIEW, EXPLAIN or a "
			   "STATEMENT SET)");
}

struct sl_stmt *sl_stmt_parse(const char *src, size_t len, uint32_t line, uint32_t col, char *err,
			      size_t errcap)
{
	struct parser p = { .err = err, .errcap = errcap };
	struct sl_stmt *s = NULL;

	if (errcap)
		err[0] = 0;
	sl_lexer_init(&p.lx, src, len);
	p.lx.line = line;
	p.lx.col = col;
	advance(&p);
	if (parse_stmt(&p, &s, false))
		goto out_destroy;
	if (is_op(&p, ";")) /* a span given with its ';' */
		advance(&p);
	if (p.cur.kind != SL_TOK_EOF) {
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
		sl_expr_destroy(q->having);
		for (uint32_t i = 0; i < q->norder_by; i++)
			sl_expr_destroy(q->order_by[i].expr);
		free(q->order_by);
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
