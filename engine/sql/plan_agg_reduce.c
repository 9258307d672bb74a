/*
 * plan_agg_reduce.c - STDDEV_POP, STDDEV_SAMP, STDDEV, VAR_POP, VAR_SAMP and VARIANCE
 * rewritten before a GROUP BY is planned into the Welford M2 aggregate (SL_AGG_M2, the sum of
 * squared deviations from the mean) and COUNT, as Flink 2.3's planner does in its copy of
 * Calcite's AggregateReduceFunctionsRule (reduceStddev over INTERNAL_WELFORD_M2):
 *
 *   VAR_POP(x)    = CAST(M2(x) / COUNT(x) AS type of x)
 *   VAR_SAMP(x)   = CAST(M2(x) / CASE WHEN COUNT(x) = 1 THEN NULL ELSE COUNT(x) - 1 END
 *                        AS type of x)
 *   STDDEV_*(x)   = CAST(POWER(M2(x) / ..., 0.5) AS type of x)
 *
 * M2 is a DOUBLE whatever x is, so STDDEV_POP(INT) is the double result truncated to INT, as
 * in Flink. STDDEV and VARIANCE are the _SAMP ones. M2 and COUNT retract in the updating
 * GROUP BY and merge (HOP slices; two-phase aggregation only when asked for, as for
 * floating-point SUM), and each takes the call's FILTER (WHERE ...).
 *
 * Over DECIMAL Flink computes them in DECIMAL(38, 6), wider than the 18 digits a sluice
 * slot holds, so they are refused there (CAST the argument to DOUBLE).
 *
 * The rewrite is copy-on-write: nodes above a reduced call are copied, everything else
 * (the argument x too, shared by M2 and COUNT) is the query's own tree. New nodes
 * belong to the plan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plan_int.h"

enum reduce_kind { R_NONE, R_VAR_POP, R_VAR_SAMP, R_STDDEV_POP, R_STDDEV_SAMP };

static enum reduce_kind reduce_kind(const struct sl_expr *e)
{
	static const struct {
		const char *name;
		enum reduce_kind kind;
	} names[] = {
		{ "VAR_POP", R_VAR_POP },	  { "VAR_SAMP", R_VAR_SAMP },
		{ "VARIANCE", R_VAR_SAMP },	  { "STDDEV_POP", R_STDDEV_POP },
		{ "STDDEV_SAMP", R_STDDEV_SAMP }, { "STDDEV", R_STDDEV_SAMP },
	};

	if (e->kind != SL_EXPR_CALL || e->over || !e->text)
		return R_NONE;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcasecmp(e->text, names[i].name))
			return names[i].kind;
	return R_NONE;
}

bool sl_sql_plan_is_reduced_agg(const char *name)
{
	struct sl_expr e = { .kind = SL_EXPR_CALL, .text = (char *)name };

	return reduce_kind(&e) != R_NONE;
}

/* A new plan-owned node at `at`'s place. */
static struct sl_expr *node(struct sl_sql_plan_ctx *c, enum sl_expr_kind kind,
			    const struct sl_expr *at)
{
	struct sl_expr *e = sl_sql_plan_own(c, calloc(1, sizeof(*e)), free);

	if (e) {
		e->kind = kind;
		e->line = at->line;
		e->col = at->col;
	}
	return e;
}

static struct sl_expr *with_args(struct sl_sql_plan_ctx *c, struct sl_expr *e, uint32_t n,
				 struct sl_expr *a0, struct sl_expr *a1)
{
	struct sl_expr **args;

	if (!e || !a0 || (n > 1 && !a1))
		return NULL;
	args = sl_sql_plan_own(c, calloc(n, sizeof(*args)), free);
	if (!args)
		return NULL;
	args[0] = a0;
	if (n > 1)
		args[1] = a1;
	e->args = args;
	e->nargs = n;
	return e;
}

static struct sl_expr *binary(struct sl_sql_plan_ctx *c, const struct sl_expr *at,
			      enum sl_expr_op op, struct sl_expr *a, struct sl_expr *b)
{
	struct sl_expr *e = node(c, SL_EXPR_BINARY, at);

	if (e)
		e->op = op;
	return with_args(c, e, 2, a, b);
}

/* M2(x) or COUNT(x), with the reduced call's FILTER. */
static struct sl_expr *agg(struct sl_sql_plan_ctx *c, const struct sl_expr *call, const char *name,
			   struct sl_expr *x)
{
	struct sl_expr *e = node(c, SL_EXPR_CALL, call);

	if (!e)
		return NULL;
	e->text = (char *)name;
	e->filter = call->filter;
	return with_args(c, e, 1, x, NULL);
}

static struct sl_expr *literal(struct sl_sql_plan_ctx *c, const struct sl_expr *at,
			       enum sl_expr_kind kind, const char *text, int64_t v)
{
	struct sl_expr *e = node(c, kind, at);

	if (e) {
		e->text = (char *)text;
		e->ival = v;
	}
	return e;
}

static int ddl_kind_of(const struct sl_sql_type *t, enum sl_ddl_type_kind *k)
{
	switch (t->type) {
	case SL_TYPE_INT:
		*k = SL_DDL_INT;
		return 0;
	case SL_TYPE_BIGINT:
		*k = SL_DDL_BIGINT;
		return 0;
	case SL_TYPE_FLOAT:
		*k = SL_DDL_FLOAT;
		return 0;
	case SL_TYPE_DOUBLE:
		*k = SL_DDL_DOUBLE;
		return 0;
	default:
		return -EINVAL;
	}
}

/* The expansion of one reduced call (see the file comment). */
static struct sl_expr *expand(struct sl_sql_plan_ctx *c, const struct sl_sql_plan_rel *rel,
			      const struct sl_expr *call, enum reduce_kind k)
{
	struct sl_expr *x, *m2, *cnt, *den, *var, *res, *cast;
	struct sl_sql_type t;
	struct sl_prog *p;
	enum sl_ddl_type_kind dk;

	if (call->nargs != 1 || call->args[0]->kind == SL_EXPR_STAR) {
		sl_sql_plan_fail(c, call->line, call->col, "%s takes one argument", call->text);
		return NULL;
	}
	if (call->distinct) {
		sl_sql_plan_fail(c, call->line, call->col,
				 "%s(DISTINCT ...) is not supported; DISTINCT is taken by "
				 "COUNT, SUM, AVG, MIN and MAX",
				 call->text);
		return NULL;
	}
	x = call->args[0];
	if (sl_sql_plan_has_agg(x)) {
		sl_sql_plan_fail(c, x->line, x->col, "aggregate calls cannot be nested");
		return NULL;
	}
	p = sl_sql_plan_compile(c, x, rel, &t);
	if (!p)
		return NULL;
	sl_prog_destroy(p);
	if (t.interval || t.null_type || ddl_kind_of(&t, &dk)) {
		char name[48];

		sl_sql_type_name(&t, name, sizeof name);
		sl_sql_plan_fail(
			c, call->line, call->col,
			t.type == SL_TYPE_DECIMAL && !t.interval && !t.null_type
				? "%s over %s is not supported: Flink computes it in "
				  "DECIMAL(38, 6), wider than sluice's 18 digits (CAST the "
				  "argument to DOUBLE)"
				: "%s needs a numeric argument, not %s",
			call->text, name);
		return NULL;
	}
	m2 = agg(c, call, SL_SQL_PLAN_M2, x);
	cnt = agg(c, call, "COUNT", x);
	if (k == R_VAR_POP || k == R_STDDEV_POP) {
		den = cnt;
	} else {
		/* CASE WHEN COUNT(x) = 1 THEN NULL ELSE COUNT(x) - 1 END */
		struct sl_expr *one = literal(c, call, SL_EXPR_INT, "1", 1);
		struct sl_expr *cs = node(c, SL_EXPR_CASE, call);

		den = with_args(c, cs, 2, binary(c, call, SL_EXPR_OP_EQ, cnt, one),
				literal(c, call, SL_EXPR_NULL, "NULL", 0));
		if (den)
			den->case_else = binary(c, call, SL_EXPR_OP_SUB, cnt, one);
		if (den && !den->case_else)
			den = NULL;
	}
	var = binary(c, call, SL_EXPR_OP_DIV, m2, den);
	res = var;
	if (k == R_STDDEV_POP || k == R_STDDEV_SAMP) {
		struct sl_expr *pw = node(c, SL_EXPR_CALL, call);

		if (pw)
			pw->text = "POWER";
		res = with_args(c, pw, 2, var, literal(c, call, SL_EXPR_DECIMAL, "0.5", 0));
	}
	cast = with_args(c, node(c, SL_EXPR_CAST, call), 1, res, NULL);
	if (!cast) {
		sl_sql_plan_fail(c, call->line, call->col, "out of memory");
		return NULL;
	}
	cast->type.kind = dk;
	cast->type.line = call->line;
	cast->type.col = call->col;
	return cast;
}

/* e with every reduced call replaced (e itself when it has none); NULL on failure. */
static const struct sl_expr *reduce(struct sl_sql_plan_ctx *c, const struct sl_sql_plan_rel *rel,
				    const struct sl_expr *e)
{
	enum reduce_kind k;
	const struct sl_expr *op, *el;
	struct sl_expr *copy;
	bool changed;

	if (!e)
		return NULL;
	k = reduce_kind(e);
	if (k != R_NONE)
		return expand(c, rel, e, k);
	if (e->kind == SL_EXPR_CALL && e->over)
		return e; /* a ranking's OVER (...) holds no aggregate to reduce */
	op = e->case_operand ? reduce(c, rel, e->case_operand) : NULL;
	el = e->case_else ? reduce(c, rel, e->case_else) : NULL;
	if ((e->case_operand && !op) || (e->case_else && !el))
		return NULL;
	changed = op != e->case_operand || el != e->case_else;
	copy = NULL;
	for (uint32_t i = 0; i < e->nargs; i++) {
		const struct sl_expr *a = reduce(c, rel, e->args[i]);

		if (!a)
			return NULL;
		if (a == e->args[i] && !copy)
			continue;
		if (!copy) {
			copy = sl_sql_plan_own(c, malloc(sizeof(*copy)), free);
			struct sl_expr **args =
				copy ? sl_sql_plan_own(c, calloc(e->nargs, sizeof(*args)), free)
				     : NULL;

			if (!args) {
				sl_sql_plan_fail(c, e->line, e->col, "out of memory");
				return NULL;
			}
			*copy = *e;
			memcpy(args, e->args, e->nargs * sizeof(*args));
			copy->args = args;
		}
		copy->args[i] = (struct sl_expr *)a;
	}
	if (!copy && !changed)
		return e;
	if (!copy) {
		copy = sl_sql_plan_own(c, malloc(sizeof(*copy)), free);
		if (!copy) {
			sl_sql_plan_fail(c, e->line, e->col, "out of memory");
			return NULL;
		}
		*copy = *e;
	}
	copy->case_operand = (struct sl_expr *)op;
	copy->case_else = (struct sl_expr *)el;
	return copy;
}

int sl_sql_plan_reduce_aggs(struct sl_sql_plan_ctx *c, const struct sl_query *q,
			    const struct sl_sql_plan_rel *rel, struct sl_query *out)
{
	struct sl_select_item *items;

	*out = *q;
	items = sl_sql_plan_own(c, calloc(q->nitems ? q->nitems : 1, sizeof(*items)), free);
	if (!items)
		return sl_sql_plan_fail(c, q->line, q->col, "out of memory");
	for (uint32_t i = 0; i < q->nitems; i++) {
		items[i] = q->items[i];
		if (!items[i].expr)
			continue;
		items[i].expr = (struct sl_expr *)reduce(c, rel, q->items[i].expr);
		if (!items[i].expr)
			return -EINVAL;
	}
	out->items = items;
	if (q->having) {
		out->having = (struct sl_expr *)reduce(c, rel, q->having);
		if (!out->having)
			return -EINVAL;
	}
	return 0;
}
