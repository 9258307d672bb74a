/*
 * plan_comma.c - FROM a, b, c WHERE ...: each conjunct of the WHERE becomes the join
 * condition of the lowest comma join whose tables it names, as Flink's planner pushes
 * filters into joins. `FROM a, b, c WHERE a.k = b.k AND b.j = c.j` is then
 * `(a JOIN b ON a.k = b.k) JOIN c ON b.j = c.j`: every join keyed by its equality, where a
 * condition left on the outermost join would make the inner pair a cross join (every pair
 * under one key, on one shard: quadratic in the input).
 *
 * A conjunct moves down only when each column it reads is qualified by the name of a FROM
 * item (its alias, or the table's name when it has none) inside that join; one with an
 * unqualified column, or with no column at all, stays with the outermost comma join, which
 * takes every conjunct left over (so FROM a, b WHERE p is FROM a JOIN b ON p, as before).
 * Only comma joins (CROSS without ON) take conditions: moving a conjunct below an INNER
 * JOIN keeps the rows, below an outer join it would not, so those are left alone.
 *
 * Cost: at planning only, a walk of the WHERE per comma join. The new FROM nodes and
 * conditions are owned by the plan context; the parsed query is not changed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan_int.h"

#define MAX_CONJ 64

struct conj {
	const struct sl_expr *e[MAX_CONJ];
	bool used[MAX_CONJ];
	int n;
};

/* Splits e's top-level ANDs into cj; false when there are more than MAX_CONJ. */
static bool split_and(const struct sl_expr *e, struct conj *cj)
{
	if (e->kind == SL_EXPR_BINARY && e->op == SL_EXPR_OP_AND)
		return split_and(e->args[0], cj) && split_and(e->args[1], cj);
	if (cj->n == MAX_CONJ)
		return false;
	cj->e[cj->n++] = e;
	return true;
}

static bool is_comma(const struct sl_from *f)
{
	return f->kind == SL_FROM_JOIN && f->join == SL_JOIN_CROSS && !f->on;
}

/* The name a FROM item's columns are qualified by, or NULL. */
static const char *item_name(const struct sl_from *f)
{
	const char *dot;

	if (f->alias)
		return f->alias;
	if (f->kind != SL_FROM_TABLE || !f->name)
		return NULL;
	dot = strrchr(f->name, '.');
	return dot ? dot + 1 : f->name;
}

/* Whether a FROM item under f (through joins) is named q. */
static bool names(const struct sl_from *f, const char *q)
{
	const char *n;

	if (f->kind == SL_FROM_JOIN && !f->alias)
		return names(f->left, q) || names(f->right, q);
	n = item_name(f);
	return n && !strcasecmp(n, q);
}

/* Whether every column e reads is qualified by an item under f (and e reads one). */
static bool covered(const struct sl_expr *e, const struct sl_from *f, int *ncols)
{
	if (!e)
		return true;
	if (e->kind == SL_EXPR_COLUMN) {
		++*ncols;
		return e->npath >= 2 && names(f, e->path[0]);
	}
	for (uint32_t i = 0; i < e->nargs; i++)
		if (!covered(e->args[i], f, ncols))
			return false;
	return covered(e->case_operand, f, ncols) && covered(e->case_else, f, ncols);
}

const struct sl_expr *sl_sql_plan_and(struct sl_sql_plan_ctx *c, const struct sl_expr *const *v,
				      int n)
{
	const struct sl_expr *acc = n ? v[0] : NULL;

	for (int i = 1; i < n; i++) {
		struct sl_expr *e = sl_sql_plan_own(c, calloc(1, sizeof(*e)), free);
		struct sl_expr **args =
			e ? sl_sql_plan_own(c, calloc(2, sizeof(*args)), free) : NULL;

		if (!args)
			return NULL;
		e->kind = SL_EXPR_BINARY;
		e->op = SL_EXPR_OP_AND;
		e->line = v[i]->line;
		e->col = v[i]->col;
		args[0] = (struct sl_expr *)acc;
		args[1] = (struct sl_expr *)v[i];
		e->args = args;
		e->nargs = 2;
		acc = e;
	}
	return acc;
}

/*
 * f with the conjuncts not yet used that only name its items as the conditions of its
 * comma joins, lowest first; the outermost (`top`) takes every one left. NULL on ENOMEM.
 */
static const struct sl_from *push(struct sl_sql_plan_ctx *c, const struct sl_from *f,
				  struct conj *cj, bool top)
{
	const struct sl_expr *take[MAX_CONJ];
	struct sl_from *j;
	int n = 0;

	if (!is_comma(f))
		return f;
	j = sl_sql_plan_own(c, malloc(sizeof(*j)), free);
	if (!j)
		return NULL;
	*j = *f;
	if (!(j->left = (struct sl_from *)push(c, f->left, cj, false)) ||
	    !(j->right = (struct sl_from *)push(c, f->right, cj, false)))
		return NULL;
	for (int i = 0; i < cj->n; i++) {
		int ncols = 0;

		if (cj->used[i] || (!top && !(covered(cj->e[i], f, &ncols) && ncols)))
			continue;
		cj->used[i] = true;
		take[n++] = cj->e[i];
	}
	if (n) {
		j->join = SL_JOIN_INNER;
		if (!(j->on = (struct sl_expr *)sl_sql_plan_and(c, take, n)))
			return NULL;
	}
	return j;
}

int sl_sql_plan_comma_joins(struct sl_sql_plan_ctx *c, const struct sl_from **from,
			    const struct sl_expr **where)
{
	struct conj cj = { .n = 0 };
	const struct sl_from *f;

	if (!*from || !is_comma(*from) || !*where || sl_sql_plan_has_subquery(*where))
		return 0;
	if (!split_and(*where, &cj)) { /* too many to place: all on the outermost, as written */
		cj.n = 1;
		cj.e[0] = *where;
	}
	if (!(f = push(c, *from, &cj, true)))
		return -ENOMEM;
	*from = f;
	*where = NULL;
	return 0;
}
