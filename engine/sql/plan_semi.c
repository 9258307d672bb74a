/*
 * plan_semi.c - subqueries in WHERE: [NOT] IN (SELECT ...) and [NOT] EXISTS (SELECT ...)
 * correlated on the bounds of a window, Flink's window semi and anti joins
 * (https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/table/sql/queries/window-join/#semi-window-joins):
 *
 *     SELECT ... FROM L WHERE L.k [NOT] IN (SELECT k FROM R WHERE L.window_start =
 *         R.window_start AND L.window_end = R.window_end [AND ...])
 *     SELECT ... FROM L WHERE [NOT] EXISTS (SELECT ... FROM R WHERE ... the same ...)
 *
 * Each such conjunct of WHERE joins the relation so far (the left side) with the subquery's
 * FROM (the right side) on the subquery's WHERE, and for IN on the comparison, with the join
 * operator's window form (plan_join.c, engine/ops/join.h): when the watermark passes a
 * window's end, each of its left rows comes out once per copy if it met a right row (semi)
 * or met none (anti). NOT IN is null-aware, as SQL and Flink say: a NULL on either side of
 * the comparison meets every row, so a window whose right side holds a NULL key lets no
 * left row through, and a left row with a NULL key passes only a window with no right row.
 * The other conjuncts of WHERE filter the left rows first (Flink pushes them down too).
 *
 * A subquery's WHERE sees the outer columns its own FROM does not hide: a column name or a
 * qualifier that the subquery's FROM has is the subquery's, as SQL scopes it.
 *
 * Anything else holding a subquery is refused, naming its place: a subquery under OR or
 * inside another expression, in SELECT, ON, GROUP BY or HAVING (the expression compiler's
 * error), a subquery with GROUP BY, DISTINCT, UNION, ORDER BY or aggregates, an IN whose
 * two sides are not columns, and one not correlated on window_start and window_end (a
 * regular semi join, which sluice does not run).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan_int.h"
#include "query.h"

#define MAX_CONJ 64 /* conjuncts of one WHERE */

const struct sl_expr *sl_sql_plan_has_subquery(const struct sl_expr *e)
{
	const struct sl_expr *s = NULL;

	if (!e)
		return NULL;
	if ((e->kind == SL_EXPR_IN && e->sub) || e->kind == SL_EXPR_EXISTS)
		return e;
	for (uint32_t i = 0; i < e->nargs && !s; i++)
		s = sl_sql_plan_has_subquery(e->args[i]);
	for (uint32_t i = 0; i < e->npartition && !s; i++)
		s = sl_sql_plan_has_subquery(e->partition[i]);
	for (uint32_t i = 0; i < e->norder && !s; i++)
		s = sl_sql_plan_has_subquery(e->order[i].expr);
	if (!s)
		s = sl_sql_plan_has_subquery(e->case_operand);
	if (!s)
		s = sl_sql_plan_has_subquery(e->case_else);
	if (!s)
		s = sl_sql_plan_has_subquery(e->filter);
	return s;
}

static int conjuncts(struct sl_sql_plan_ctx *c, const struct sl_expr *e, const struct sl_expr **v,
		     int *n)
{
	if (e->kind == SL_EXPR_BINARY && e->op == SL_EXPR_OP_AND)
		return conjuncts(c, e->args[0], v, n) || conjuncts(c, e->args[1], v, n) ? -EINVAL
											: 0;
	if (*n == MAX_CONJ)
		return sl_sql_plan_fail(c, e->line, e->col,
					"WHERE has more than %d conditions joined with AND",
					MAX_CONJ);
	v[(*n)++] = e;
	return 0;
}

/* The IN or EXISTS node a conjunct is, under any NOTs (*anti: an odd number of them, a NOT
 * IN counting as one), or NULL. */
static const struct sl_expr *subquery_of(const struct sl_expr *e, bool *anti)
{
	bool neg = false;

	while (e->kind == SL_EXPR_UNARY && e->op == SL_EXPR_OP_NOT) {
		neg = !neg;
		e = e->args[0];
	}
	if (e->kind == SL_EXPR_IN && e->sub) {
		*anti = neg != e->negated;
		return e;
	}
	if (e->kind == SL_EXPR_EXISTS) {
		*anti = neg;
		return e;
	}
	return NULL;
}

static const char *what_of(const struct sl_expr *e, bool anti)
{
	if (e->kind == SL_EXPR_IN)
		return anti ? "NOT IN (SELECT ...)" : "IN (SELECT ...)";
	return anti ? "NOT EXISTS (SELECT ...)" : "EXISTS (SELECT ...)";
}

/* The subquery's shape a window semi / anti join takes: one SELECT block over a FROM, no
 * grouping, and for IN one selected expression. */
static int check_shape(struct sl_sql_plan_ctx *c, const struct sl_expr *e, const char *what)
{
	const struct sl_query *q = e->sub;

	if (q->set_op != SL_SET_NONE)
		return sl_sql_plan_fail(c, q->line, q->col,
					"the subquery of %s cannot be a UNION: a window semi or "
					"anti join takes one SELECT",
					what);
	if (!q->from)
		return sl_sql_plan_fail(c, q->line, q->col, "the subquery of %s has no FROM", what);
	if (q->distinct || q->ngroup_by || q->having)
		return sl_sql_plan_fail(c, q->line, q->col,
					"the subquery of %s cannot have DISTINCT, GROUP BY or "
					"HAVING: a window semi or anti join matches its rows as "
					"they are",
					what);
	if (q->norder_by || q->limit >= 0)
		return sl_sql_plan_fail(c, q->line, q->col,
					"the subquery of %s cannot have ORDER BY or LIMIT", what);
	for (uint32_t i = 0; i < q->nitems; i++)
		if (q->items[i].expr && sl_sql_plan_has_agg(q->items[i].expr))
			return sl_sql_plan_fail(c, q->items[i].line, q->items[i].col,
						"the subquery of %s cannot aggregate: a window "
						"semi or anti join matches its rows as they are",
						what);
	if (e->kind == SL_EXPR_IN && (q->nitems != 1 || q->items[0].star))
		return sl_sql_plan_fail(c, q->line, q->col,
					"the subquery of %s must select exactly one column", what);
	return 0;
}

static bool has_name(const struct sl_sql_plan_rel *r, const char *name, bool qual)
{
	for (int i = 0; i < r->ncols; i++) {
		const char *s = qual ? r->cols[i].qual : r->cols[i].name;

		if (s && !strcasecmp(s, name))
			return true;
	}
	return false;
}

/* L's columns as the subquery's WHERE sees them (*out, same indices): a column whose name
 * R has answers only to its qualified name, and one whose qualifier R has (or that has no
 * qualifier to be told apart by) to no name anyone can write. */
static int shadow(struct sl_sql_plan_ctx *c, const struct sl_sql_plan_rel *L,
		  const struct sl_sql_plan_rel *R, struct sl_sql_plan_rel *out)
{
	*out = *L;
	for (int i = 0; i < L->ncols; i++) {
		struct sl_sql_col *col = &out->cols[i];
		bool qual_hidden = col->qual && has_name(R, col->qual, true);
		char buf[512];

		if (!col->name || (!qual_hidden && !has_name(R, col->name, false)))
			continue;
		if (col->qual && !qual_hidden)
			snprintf(buf, sizeof buf, "%s.%s", col->qual, col->name);
		else
			snprintf(buf, sizeof buf, "$outer%d", i); /* '$': out of every star */
		col->name = sl_sql_plan_strdup(c, buf);
		col->qual = NULL;
		if (!col->name)
			return -ENOMEM;
	}
	return 0;
}

/* Checks that the subquery's selected expressions name columns that exist (EXISTS ignores
 * their values, but a wrong name is still an error, as Flink's). */
static int check_items(struct sl_sql_plan_ctx *c, const struct sl_query *q,
		       const struct sl_sql_plan_rel *Ls, const struct sl_sql_plan_rel *R)
{
	struct sl_sql_plan_rel *both = malloc(sizeof(*both));
	int rc = 0;

	if (!both)
		return sl_sql_plan_fail(c, q->line, q->col, "out of memory");
	*both = *Ls;
	for (int i = 0; i < R->ncols && both->ncols < SL_PLAN_MAX_COLS; i++)
		both->cols[both->ncols++] = R->cols[i];
	for (int i = 0; i < both->ncols; i++)
		both->cols[i].field = i;
	for (uint32_t i = 0; i < q->nitems && !rc; i++) {
		struct sl_sql_type t;
		struct sl_prog *p;

		if (!q->items[i].expr)
			continue;
		p = sl_sql_plan_compile(c, q->items[i].expr, both, &t);
		if (!p)
			rc = -EINVAL;
		sl_prog_destroy(p);
	}
	free(both);
	return rc;
}

/* IN's two columns: lhs of the outer FROM (L), the subquery's item of its own (R). */
static int in_columns(struct sl_sql_plan_ctx *c, const struct sl_expr *e, const char *what,
		      const struct sl_sql_plan_rel *L, const struct sl_sql_plan_rel *R,
		      struct sl_sql_join_spec *js)
{
	const struct sl_select_item *it = &e->sub->items[0];
	struct sl_sql_type t;
	struct sl_prog *p;

	js->in_left = sl_sql_plan_resolve_plain(L, e->args[0]);
	js->in_right = sl_sql_plan_resolve_plain(R, it->expr);
	if (js->in_left >= 0 && js->in_right >= 0)
		return 0;
	/* the compiler's message for a wrong name, else the limit */
	if (js->in_left < 0) {
		p = sl_sql_plan_compile(c, e->args[0], L, &t);
		sl_prog_destroy(p);
		if (!p)
			return -EINVAL;
		return sl_sql_plan_fail(c, e->args[0]->line, e->args[0]->col,
					"the left side of %s must be a column of the outer FROM "
					"(an expression is not supported)",
					what);
	}
	p = sl_sql_plan_compile(c, it->expr, R, &t);
	sl_prog_destroy(p);
	if (!p)
		return -EINVAL;
	return sl_sql_plan_fail(c, it->line, it->col,
				"the subquery of %s must select a column of its own FROM (an "
				"expression is not supported)",
				what);
}

/* rel := rel's rows that do (semi) or do not (anti) meet the subquery of e. */
static int semi_join(struct sl_sql_plan_ctx *c, struct sl_job *job, struct sl_sql_plan_rel *rel,
		     const struct sl_expr *e, bool anti)
{
	const struct sl_query *q = e->sub;
	const char *what = what_of(e, anti);
	struct sl_sql_join_spec js = {
		.kind = SL_JOIN_INNER,
		.semi = !anti,
		.anti = anti,
		.what = what,
		.on = q->where,
		.in_left = -1,
		.in_right = -1,
		.null_aware = anti && e->kind == SL_EXPR_IN,
		.line = e->line,
		.col = e->col,
		.on_line = q->where ? q->where->line : e->line,
		.on_col = q->where ? q->where->col : e->col,
	};
	/* three relations of 64 columns: off the stack, which the planner's recursion uses */
	struct sl_sql_plan_rel *R = malloc(3 * sizeof(*R)), *Ls = R + 1, *out = R + 2;
	struct sl_sql_plan_with w;
	int rc;

	if (!R)
		return sl_sql_plan_fail(c, e->line, e->col, "out of memory");
	rc = check_shape(c, e, what);
	/* the subquery's own WITH names are in scope for its FROM only */
	if (!rc && !(rc = sl_sql_plan_with_begin(c, q, &w))) {
		rc = sl_sql_plan_from(c, job, q->from, R) ||
				     sl_sql_plan_join_side(c, R, q->from->line, q->from->col)
			     ? -EINVAL
			     : 0;
		sl_sql_plan_with_end(c, &w);
	}
	if (!rc)
		rc = shadow(c, rel, R, Ls);
	if (!rc)
		rc = check_items(c, q, Ls, R);
	if (!rc && e->kind == SL_EXPR_IN)
		rc = in_columns(c, e, what, rel, R, &js);
	js.on_left = Ls;
	if (!rc)
		rc = sl_sql_plan_join_rels(c, job, rel, R, &js, out);
	if (!rc)
		*rel = *out;
	free(R);
	return rc;
}

int sl_sql_plan_subquery_joins(struct sl_sql_plan_ctx *c, struct sl_job *job,
			       struct sl_sql_plan_rel *rel, const struct sl_expr **where)
{
	const struct sl_expr *conj[MAX_CONJ], *rest[MAX_CONJ], *subs[MAX_CONJ];
	bool anti[MAX_CONJ];
	int n = 0, nrest = 0, nsub = 0;
	const struct sl_expr *filter;

	if (conjuncts(c, *where, conj, &n))
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		const struct sl_expr *s = subquery_of(conj[i], &anti[nsub]), *inner;

		if (s) {
			/* IN's left side, too, is an expression of the outer query */
			inner = s->kind == SL_EXPR_IN ? sl_sql_plan_has_subquery(s->args[0]) : NULL;
			if (!inner) {
				subs[nsub++] = s;
				continue;
			}
		} else {
			inner = sl_sql_plan_has_subquery(conj[i]);
		}
		if (inner)
			return sl_sql_plan_fail(c, inner->line, inner->col,
						"%s is supported as a window semi or anti join "
						"only: a condition of WHERE on its own (joined to "
						"the others with AND), correlated on window_start "
						"and window_end",
						inner->kind == SL_EXPR_IN ? "IN (SELECT ...)"
									  : "EXISTS (SELECT ...)");
		rest[nrest++] = conj[i];
	}
	if (sl_sql_plan_join_side(c, rel, (*where)->line, (*where)->col))
		return -EINVAL;
	filter = sl_sql_plan_and(c, rest, nrest);
	if (nrest && !filter)
		return -ENOMEM;
	if (filter && sl_sql_plan_filter(c, rel, filter))
		return -EINVAL;
	for (int i = 0; i < nsub; i++)
		if (semi_join(c, job, rel, subs[i], anti[i]))
			return -EINVAL;
	*where = NULL;
	return 0;
}
