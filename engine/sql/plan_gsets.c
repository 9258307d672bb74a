/*
 * plan_gsets.c - GROUP BY GROUPING SETS / ROLLUP / CUBE, planned as Flink plans them
 * (Calcite's Expand, then one aggregation):
 *
 *   rel --project--> rel's columns + $v0..$vk (each grouping expression's value)
 *       --expand---> once per grouping set, the $v not in the set NULL, + $e (set number)
 *       --GROUP BY $v0..$vk, $e--> the query's aggregates and SELECT list
 *
 * The query is rewritten for that last step: outside aggregate calls each grouping
 * expression is its $v column (so a column not in a row's set reads NULL there), and
 * GROUPING(e, ...) / GROUPING_ID(e, ...) is CASE $e WHEN n THEN <bits> ... END, a bit per
 * argument, 1 where the argument is not in set n (Flink's and the standard's meaning).
 * Aggregate arguments keep reading the original columns, so COUNT(a) counts a's values
 * even in the rows of a set without a (Flink duplicates such fields for the same reason).
 * Each set's groups are therefore exactly those of a GROUP BY of that set alone.
 *
 * Over a window TVF (`GROUP BY window_start, window_end, GROUPING SETS ((a), ())`) the
 * Expand runs before the window aggregation, as Flink expands its window aggregate per
 * set: window_start and window_end are in every set, get no $v and stay the window's
 * keys, so each window fires one row per group of each set. A set without them makes it,
 * as in Flink, an updating GROUP BY over the TVF's rows with their window columns assigned
 * (window_assign.c). The projection and the Expand keep the TVF's columns in place and
 * each row's timestamp, so the window operator assigns windows as without grouping sets.
 * SESSION is refused: its sessions are keyed by the GROUP BY keys, which differ per set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval_cc.h"
#include "expand.h"
#include "plan_int.h"
#include "window_assign.h"

/* True for window_start / window_end of the window TVF rel: virtual until aggregated. */
static bool is_window_key(const struct sl_sql_plan_rel *rel, const struct sl_expr *g)
{
	const char *n;

	if (!rel->tvf || g->kind != SL_EXPR_COLUMN || sl_sql_plan_resolve_plain(rel, g) >= 0)
		return false;
	n = g->path[g->npath - 1];
	return !strcasecmp(n, "window_start") || !strcasecmp(n, "window_end");
}

/* True when window_start and window_end are in every grouping set of q over rel. */
static bool window_in_every_set(const struct sl_sql_plan_rel *rel, const struct sl_query *q)
{
	uint64_t both = 0;
	int nwin = 0;

	for (uint32_t k = 0; k < q->ngroup_by && k < 64; k++)
		if (is_window_key(rel, q->group_by[k])) {
			both |= 1ull << k;
			nwin++;
		}
	if (nwin < 2)
		return false;
	for (uint32_t s = 0; s < q->ngsets; s++)
		if ((q->gsets[s] & both) != both)
			return false;
	return true;
}

static bool is_grouping_call(const struct sl_expr *e)
{
	return e->kind == SL_EXPR_CALL && !e->over &&
	       (!strcasecmp(e->text, "GROUPING") || !strcasecmp(e->text, "GROUPING_ID"));
}

static struct sl_expr *new_node(struct sl_sql_plan_ctx *c, const struct sl_expr *like)
{
	struct sl_expr *e = sl_sql_plan_own(c, calloc(1, sizeof(*e)), free);

	if (e && like)
		*e = *like;
	return e;
}

static struct sl_expr *int_lit(struct sl_sql_plan_ctx *c, int64_t v)
{
	struct sl_expr *e = new_node(c, NULL);
	char buf[24];

	if (!e)
		return NULL;
	snprintf(buf, sizeof buf, "%lld", (long long)v);
	e->kind = SL_EXPR_INT;
	e->ival = v;
	e->text = sl_sql_plan_strdup(c, buf);
	return e->text ? e : NULL;
}

struct rewrite {
	struct sl_sql_plan_ctx *c;
	const struct sl_query *q;
	const struct sl_expr *v[64]; /* column refs of $v0.. */
	const struct sl_expr *e;     /* column ref of $e */
	int bad;		     /* -errno once failed (said) */
};

/* CASE $e WHEN n THEN bits(n) ... END for a GROUPING call over grouping expressions. */
static const struct sl_expr *grouping_case(struct rewrite *rw, const struct sl_expr *call)
{
	struct sl_sql_plan_ctx *c = rw->c;
	const struct sl_query *q = rw->q;
	struct sl_expr *cs = new_node(c, NULL);
	struct sl_expr **args =
		cs ? sl_sql_plan_own(c, calloc(2 * q->ngsets, sizeof(*args)), free) : NULL;
	int idx[64];

	if (!args)
		return NULL;
	if (call->nargs == 0 || call->nargs > 63) {
		rw->bad = sl_sql_plan_fail(c, call->line, call->col, "%s takes 1 to 63 arguments",
					   call->text);
		return NULL;
	}
	for (uint32_t a = 0; a < call->nargs; a++) {
		idx[a] = -1;
		for (uint32_t k = 0; k < q->ngroup_by; k++)
			if (sl_compiler_expr_equal(q->group_by[k], call->args[a]))
				idx[a] = (int)k;
		if (idx[a] < 0) {
			rw->bad = sl_sql_plan_fail(c, call->args[a]->line, call->args[a]->col,
						   "the arguments of %s must be grouping "
						   "expressions of the GROUP BY",
						   call->text);
			return NULL;
		}
	}
	for (uint32_t s = 0; s < q->ngsets; s++) {
		int64_t bits = 0;

		for (uint32_t a = 0; a < call->nargs; a++)
			bits = bits << 1 | !(q->gsets[s] >> idx[a] & 1);
		if (!(args[2 * s] = int_lit(c, s)) || !(args[2 * s + 1] = int_lit(c, bits)))
			return NULL;
	}
	cs->kind = SL_EXPR_CASE;
	cs->line = call->line;
	cs->col = call->col;
	cs->case_operand = (struct sl_expr *)rw->e;
	cs->args = args;
	cs->nargs = 2 * q->ngsets;
	return cs;
}

/* e with its grouping expressions (outside aggregate calls) made $v columns and its
 * GROUPING calls CASEs over $e; e itself where nothing changes. NULL on failure. */
static const struct sl_expr *rewrite(struct rewrite *rw, const struct sl_expr *e)
{
	struct sl_expr *copy;
	bool changed = false;
	const struct sl_expr **args;

	if (!e || rw->bad)
		return e;
	for (uint32_t k = 0; k < rw->q->ngroup_by; k++)
		if (sl_compiler_expr_equal(rw->q->group_by[k], e))
			return rw->v[k];
	if (is_grouping_call(e))
		return grouping_case(rw, e);
	if (e->kind == SL_EXPR_CALL && !e->over && sl_sql_plan_agg_kind(e->text))
		return e; /* an aggregate reads the original columns */
	args = e->nargs ? sl_sql_plan_own(rw->c, calloc(e->nargs, sizeof(*args)), free) : NULL;
	if (e->nargs && !args)
		return NULL;
	for (uint32_t i = 0; i < e->nargs; i++) {
		args[i] = rewrite(rw, e->args[i]);
		if (!args[i])
			return NULL;
		changed |= args[i] != e->args[i];
	}
	const struct sl_expr *op = rewrite(rw, e->case_operand), *el = rewrite(rw, e->case_else);

	if ((e->case_operand && !op) || (e->case_else && !el))
		return NULL;
	if (!changed && op == e->case_operand && el == e->case_else)
		return e;
	copy = new_node(rw->c, e);
	if (!copy)
		return NULL;
	copy->args = (struct sl_expr **)args;
	copy->case_operand = (struct sl_expr *)op;
	copy->case_else = (struct sl_expr *)el;
	return copy;
}

/* The window TVF of rel carried over to p, whose first columns are rel's in order (so the
 * TVF's column indices hold). */
static void keep_tvf(struct sl_sql_plan_rel *p, const struct sl_sql_plan_rel *rel)
{
	p->tvf = true;
	p->tvf_win = rel->tvf_win;
	p->tvf_kind = rel->tvf_kind;
	p->tvf_max_size = rel->tvf_max_size;
	p->tvf_time_col = rel->tvf_time_col;
	p->tvf_partitioned = rel->tvf_partitioned;
	p->ntvf_part = rel->ntvf_part;
	memcpy(p->tvf_part, rel->tvf_part, sizeof(p->tvf_part));
}

int sl_sql_plan_grouping_sets(struct sl_sql_plan_ctx *c, struct sl_job *job,
			      const struct sl_query *q, struct sl_sql_plan_rel *rel,
			      struct sl_sql_plan_rel *out)
{
	const struct sl_expr *exprs[SL_PLAN_MAX_COLS];
	const char *names[SL_PLAN_MAX_COLS];
	struct sl_sql_plan_rel p0, x;
	struct rewrite rw = { .c = c, .q = q };
	struct sl_query *q2;
	struct sl_select_item *items;
	struct sl_expr **gb;
	struct sl_expand *ex;
	struct sl_schema *xs;
	uint64_t masks[64];
	int n = 0, ef, vcol[64];
	char name[16];

	if (rel->tvf && !window_in_every_set(rel, q) &&
	    sl_sql_plan_window_assign(c, rel, q->line, q->col))
		return -EINVAL;
	if (rel->tvf && rel->tvf_win.kind == SL_WIN_SESSION)
		return sl_sql_plan_fail(c, q->line, q->col,
					"GROUPING SETS, ROLLUP and CUBE over a SESSION window TVF "
					"are not supported: its sessions are keyed by the GROUP BY "
					"keys, which differ per set; use TUMBLE, HOP or CUMULATE");
	if (q->ngroup_by > 64 || rel->ncols + (int)q->ngroup_by + 1 > SL_PLAN_MAX_COLS)
		return sl_sql_plan_fail(c, q->line, q->col, "too many columns");
	/* 1. the input's columns, then each grouping expression's value as $vk */
	for (int i = 0; i < rel->ncols; i++, n++) {
		exprs[n] = sl_sql_plan_col_expr(c, &rel->cols[i]);
		snprintf(name, sizeof name, "$c%d", i);
		names[n] = rel->cols[i].name ? rel->cols[i].name : sl_sql_plan_strdup(c, name);
		if (!exprs[n] || !names[n])
			return -ENOMEM;
	}
	for (uint32_t k = 0; k < q->ngroup_by; k++) {
		vcol[k] = -1;
		if (is_window_key(rel, q->group_by[k]))
			continue; /* the window's own key, in every set */
		vcol[k] = n;
		exprs[n] = q->group_by[k];
		snprintf(name, sizeof name, "$v%u", k);
		if (!(names[n++] = sl_sql_plan_strdup(c, name)))
			return -ENOMEM;
	}
	if (sl_sql_plan_project(c, rel, exprs, names, n, NULL, "grouping sets: values", &p0))
		return -EINVAL;
	for (int i = 0; i < rel->ncols; i++)
		p0.cols[i].qual = rel->cols[i].qual;
	if (rel->tvf)
		keep_tvf(&p0, rel);
	/* 2. the Expand: set s nulls the $v of the expressions it lacks */
	for (uint32_t s = 0; s < q->ngsets; s++) {
		masks[s] = 0;
		for (uint32_t k = 0; k < q->ngroup_by; k++)
			if (vcol[k] >= 0 && !(q->gsets[s] >> k & 1) && vcol[k] < 64)
				masks[s] |= 1ull << vcol[k];
	}
	if (n > 64)
		return sl_sql_plan_fail(
			c, q->line, q->col,
			"GROUPING SETS over more than 64 columns are not supported");
	xs = sl_sql_plan_own(c, sl_schema_clone(sl_stream_schema(p0.s)),
			     (void (*)(void *))sl_schema_destroy);
	ex = sl_sql_plan_own(c, sl_expand_create(sl_stream_schema(p0.s), masks, (int)q->ngsets),
			     sl_expand_destroy);
	if (!xs || !ex)
		return -ENOMEM;
	ef = sl_schema_add(xs, "$e", SL_TYPE_BIGINT);
	if (ef < 0)
		return sl_sql_plan_fail(c, q->line, q->col, "too many columns");
	x = p0;
	x.s = sl_expand_stream(p0.s, "grouping sets: expand", ex, xs);
	if (!x.s)
		return sl_sql_plan_fail(c, q->line, q->col, "%s", sl_job_error(job)->msg);
	for (uint32_t k = 0; k < q->ngroup_by; k++)
		if (vcol[k] >= 0)
			x.cols[vcol[k]].type.nullable = true;
	x.cols[ef] = (struct sl_sql_col){ .name = "$e",
					  .field = ef,
					  .type = { .type = SL_TYPE_BIGINT } };
	x.ncols = ef + 1;
	/* 3. GROUP BY $v.., $e over the rewritten query */
	for (uint32_t k = 0; k < q->ngroup_by; k++)
		if (!(rw.v[k] = vcol[k] < 0 ? q->group_by[k]
					    : sl_sql_plan_col_expr(c, &x.cols[vcol[k]])))
			return -ENOMEM;
	if (!(rw.e = sl_sql_plan_col_expr(c, &x.cols[ef])))
		return -ENOMEM;
	q2 = sl_sql_plan_own(c, malloc(sizeof(*q2)), free);
	items = sl_sql_plan_own(c, calloc(q->nitems + 1, sizeof(*items)), free);
	gb = sl_sql_plan_own(c, calloc(q->ngroup_by + 1, sizeof(*gb)), free);
	if (!q2 || !items || !gb)
		return -ENOMEM;
	*q2 = *q;
	for (uint32_t i = 0; i < q->nitems; i++) {
		const struct sl_expr *e = q->items[i].expr;

		items[i] = q->items[i];
		if (!e)
			continue;
		items[i].expr = (struct sl_expr *)rewrite(&rw, e);
		if (!items[i].expr)
			return rw.bad ? rw.bad : -ENOMEM;
		/* a column keeps its name in the output, not its $v's */
		if (!items[i].alias && e->kind == SL_EXPR_COLUMN && items[i].expr != e)
			items[i].alias = e->path[e->npath - 1];
	}
	if (q->having && !(q2->having = (struct sl_expr *)rewrite(&rw, q->having)))
		return rw.bad ? rw.bad : -ENOMEM;
	for (uint32_t k = 0; k < q->ngroup_by; k++)
		gb[k] = (struct sl_expr *)rw.v[k];
	gb[q->ngroup_by] = (struct sl_expr *)rw.e;
	q2->items = items;
	q2->group_by = gb;
	q2->ngroup_by = q->ngroup_by + 1;
	q2->gsets = NULL;
	q2->ngsets = 0;
	return sl_sql_plan_agg(c, job, q2, &x, out);
}
