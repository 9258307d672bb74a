/*
 * plan_over.c - OVER aggregations: `agg(col) OVER (PARTITION BY p ORDER BY rowtime [frame])`
 * in a SELECT list, planned as Flink plans them (StreamExecOverAggregate): the input keyed
 * by the partition columns into the OVER process function (engine/ops/over_agg.h), whose
 * output is the input's columns and one column per aggregate. The SELECT list is then
 * projected over that as usual: each OVER call is a column whose `match` is the call, so
 * the call may stand anywhere in an expression (`price - AVG(price) OVER w`).
 *
 * Flink's rules, each refused with the reason where it does not hold: every OVER aggregate
 * of one SELECT uses the same window; ORDER BY is one ascending time attribute (event time,
 * or processing time: PROCTIME(), run as Flink's ProcTime*PrecedingFunction); the
 * frame ends at CURRENT ROW (the default, with ORDER BY, is RANGE UNBOUNDED PRECEDING); the
 * input is insert-only; no GROUP BY in the same SELECT.
 *
 * Arguments and partition keys that are expressions (`SUM(price * 2) OVER w`), and the
 * constant key of a window without PARTITION BY, are computed by one projection before the
 * operator, as Flink's planner does (a Calc below the OverAggregate), so the operator reads
 * columns only. The projection is added only when needed: the common plain-column case
 * keeps its direct path. Without PARTITION BY every row has one key, so the whole window
 * runs on one shard (Flink runs it with parallelism 1): correct, but it does not scale, and
 * EXPLAIN says so.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval_cc.h"
#include "over_agg.h"
#include "plan_int.h"

static void free_over(void *fn)
{
	sl_over_free(fn);
	free(fn);
}

/* The aggregate an OVER call names, 0 for the ranking functions and anything else. */
static enum sl_agg_kind over_kind(const struct sl_expr *e)
{
	if (e->kind != SL_EXPR_CALL || !e->over)
		return 0;
	return sl_sql_plan_agg_kind(e->text);
}

bool sl_sql_plan_is_over_agg(const struct sl_expr *e)
{
	return e && over_kind(e) != 0;
}

static bool has_over_agg(const struct sl_expr *e)
{
	if (!e)
		return false;
	if (sl_sql_plan_is_over_agg(e))
		return true;
	for (uint32_t i = 0; i < e->nargs; i++)
		if (has_over_agg(e->args[i]))
			return true;
	return has_over_agg(e->case_operand) || has_over_agg(e->case_else);
}

bool sl_sql_plan_query_has_over(const struct sl_query *q)
{
	for (uint32_t i = 0; i < q->nitems; i++)
		if (has_over_agg(q->items[i].expr))
			return true;
	return false;
}

/* Collects the distinct OVER aggregate calls under e. 0 or -errno (too many). */
static int collect(struct sl_sql_plan_ctx *c, const struct sl_expr *e, const struct sl_expr **calls,
		   int *n)
{
	if (!e)
		return 0;
	if (sl_sql_plan_is_over_agg(e)) {
		for (int i = 0; i < *n; i++)
			if (sl_compiler_expr_equal(calls[i], e))
				return 0;
		if (*n == SL_OVER_MAX_AGGS)
			return sl_sql_plan_fail(c, e->line, e->col,
						"too many OVER aggregates (at most %d)",
						SL_OVER_MAX_AGGS);
		calls[(*n)++] = e;
		return 0;
	}
	for (uint32_t i = 0; i < e->nargs; i++)
		if (collect(c, e->args[i], calls, n))
			return -EINVAL;
	if (collect(c, e->case_operand, calls, n) || collect(c, e->case_else, calls, n))
		return -EINVAL;
	return 0;
}

/* The aggregate spec of one call over rel, whose argument is column arg of rel (-1: none,
 * or not computed: then it must be a plain column). 0 or -EINVAL (said). */
static int call_spec(struct sl_sql_plan_ctx *c, const struct sl_sql_plan_rel *rel,
		     const struct sl_expr *e, int arg, struct sl_agg_spec *spec)
{
	enum sl_agg_kind kind = over_kind(e);
	int col;

	memset(spec, 0, sizeof(*spec));
	spec->sql_types = true;
	if (e->distinct || e->filter)
		return sl_sql_plan_fail(c, e->line, e->col,
					"%s with %s over an OVER window is not supported", e->text,
					e->distinct ? "DISTINCT" : "FILTER");
	if (kind == SL_AGG_LISTAGG)
		return sl_sql_plan_fail(c, e->line, e->col,
					"LISTAGG over an OVER window is not supported; LISTAGG "
					"works in GROUP BY and window aggregations");
	if (kind == SL_AGG_COUNT &&
	    (e->nargs == 0 || (e->nargs == 1 && e->args[0]->kind == SL_EXPR_STAR))) {
		spec->kind = SL_AGG_COUNT_STAR;
		spec->field = -1;
		return 0;
	}
	if (e->nargs != 1 || e->args[0]->kind == SL_EXPR_STAR)
		return sl_sql_plan_fail(c, e->line, e->col, "%s takes one argument", e->text);
	col = arg >= 0 ? arg : sl_sql_plan_resolve_plain(rel, e->args[0]);
	if (col < 0)
		return sl_sql_plan_fail(c, e->args[0]->line, e->args[0]->col,
					"the argument of an OVER aggregate has no column");
	spec->kind = kind;
	spec->field = rel->cols[col].field;
	return 0;
}

/* The argument of call e, NULL for COUNT(*) and for shapes call_spec refuses. */
static const struct sl_expr *call_arg(const struct sl_expr *e)
{
	if (e->nargs != 1 || e->args[0]->kind == SL_EXPR_STAR)
		return NULL;
	return e->args[0];
}

/*
 * Replaces *rel by rel's named columns followed by the computed partition keys ($opK, or
 * the constant key $ok) and arguments ($oaI) the window needs, when any is not a plain
 * column; fills keys[] and args[] with the columns to read (args[i] -1: a plain column or
 * none, resolved by call_spec). 0 or -errno (said). One projection: O(columns) a row.
 */
static int pre_project(struct sl_sql_plan_ctx *c, const struct sl_expr *ref,
		       const struct sl_expr *const *calls, int ncalls, struct sl_sql_plan_rel *rel,
		       int *keys, int *nkeys, int *args)
{
	const struct sl_expr *exprs[SL_PLAN_MAX_COLS];
	const char *names[SL_PLAN_MAX_COLS];
	static const struct sl_expr zero = { .kind = SL_EXPR_INT, .ival = 0, .text = "0" };
	int pkey[SL_MAX_KEY_FIELDS], n = 0;
	bool need = ref->npartition == 0;
	struct sl_sql_plan_rel p;
	char name[32];

	for (int i = 0; i < ncalls; i++) {
		const struct sl_expr *a = call_arg(calls[i]);

		args[i] = -1;
		need |= a && sl_sql_plan_resolve_plain(rel, a) < 0;
	}
	for (uint32_t i = 0; i < ref->npartition; i++)
		need |= sl_sql_plan_resolve_plain(rel, ref->partition[i]) < 0;
	*nkeys = 0;
	if (!need) {
		for (uint32_t i = 0; i < ref->npartition; i++)
			keys[(*nkeys)++] =
				rel->cols[sl_sql_plan_resolve_plain(rel, ref->partition[i])].field;
		return 0;
	}
	if (rel->ncols + (int)ref->npartition + ncalls + 1 > SL_PLAN_MAX_COLS)
		return sl_sql_plan_fail(c, ref->line, ref->col, "too many columns");
	for (int i = 0; i < rel->ncols; i++) {
		if (!rel->cols[i].name)
			continue;
		if (!(exprs[n] = sl_sql_plan_col_expr(c, &rel->cols[i])))
			return -ENOMEM;
		names[n++] = rel->cols[i].name;
	}
	for (uint32_t i = 0; i < ref->npartition; i++) {
		int plain = sl_sql_plan_resolve_plain(rel, ref->partition[i]);

		pkey[i] = n;
		exprs[n] =
			plain >= 0 ? sl_sql_plan_col_expr(c, &rel->cols[plain]) : ref->partition[i];
		snprintf(name, sizeof name, "$op%u", i);
		if (!exprs[n] || !(names[n++] = sl_sql_plan_strdup(c, name)))
			return -ENOMEM;
	}
	if (!ref->npartition) {
		/* no PARTITION BY: one constant key, every row on one shard (Flink: one task) */
		pkey[0] = n;
		exprs[n] = &zero;
		names[n++] = "$ok";
	}
	for (int i = 0; i < ncalls; i++) {
		const struct sl_expr *a = call_arg(calls[i]);

		if (!a || sl_sql_plan_resolve_plain(rel, a) >= 0)
			continue;
		args[i] = n;
		exprs[n] = a;
		snprintf(name, sizeof name, "$oa%d", i);
		if (!(names[n++] = sl_sql_plan_strdup(c, name)))
			return -ENOMEM;
	}
	if (sl_sql_plan_project(c, rel, exprs, names, n, NULL, "over aggregate: input", &p))
		return -EINVAL;
	for (int i = 0, k = 0; i < rel->ncols; i++)
		if (rel->cols[i].name)
			p.cols[k++].qual = rel->cols[i].qual;
	for (int i = 0; i < (ref->npartition ? (int)ref->npartition : 1); i++)
		keys[(*nkeys)++] = p.cols[pkey[i]].field;
	*rel = p;
	return 0;
}

int sl_sql_plan_over(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		     struct sl_sql_plan_rel *rel)
{
	const struct sl_expr *calls[SL_OVER_MAX_AGGS], *ref;
	struct sl_over_cfg oc;
	struct sl_process_fn *pfn;
	struct sl_schema *os;
	struct sl_stream *k;
	int n = 0, keys[SL_MAX_KEY_FIELDS], nkeys = 0, args[SL_OVER_MAX_AGGS], ot, nin;
	char msg[256];

	for (uint32_t i = 0; i < q->nitems; i++)
		if (collect(c, q->items[i].expr, calls, &n))
			return -EINVAL;
	if (!n) /* the caller saw an OVER call: cannot happen */
		return sl_sql_plan_fail(c, q->line, q->col, "no OVER aggregate in the SELECT");
	ref = calls[0];
	if (q->ngroup_by || q->having)
		return sl_sql_plan_fail(c, ref->line, ref->col,
					"OVER aggregates and GROUP BY in one SELECT are not "
					"supported: aggregate in a subquery");
	for (uint32_t i = 0; i < q->nitems; i++)
		if (q->items[i].expr && sl_sql_plan_has_agg(q->items[i].expr))
			return sl_sql_plan_fail(c, q->items[i].line, q->items[i].col,
						"OVER aggregates and other aggregates in one "
						"SELECT are not supported");
	for (int i = 1; i < n; i++)
		if (!sl_compiler_over_equal(ref, calls[i]))
			return sl_sql_plan_fail(c, calls[i]->line, calls[i]->col,
						"all OVER aggregates of one SELECT must use the "
						"same window (as in Flink)");
	if (rel->changelog)
		return sl_sql_plan_fail(c, ref->line, ref->col,
					"OVER aggregation needs an insert-only input, but this "
					"input is a changelog");
	if (rel->tvf)
		return sl_sql_plan_fail(c, ref->line, ref->col,
					"OVER aggregation over a window TVF is not supported");
	if (ref->norder != 1 || ref->order[0].desc)
		return sl_sql_plan_fail(c, ref->line, ref->col,
					"an OVER window needs ORDER BY one time attribute, "
					"ascending");
	ot = sl_sql_plan_resolve_plain(rel, ref->order[0].expr);
	if (ot < 0 || (!rel->cols[ot].rowtime && !rel->cols[ot].proctime))
		return sl_sql_plan_fail(c, ref->order[0].expr->line, ref->order[0].expr->col,
					"an OVER window's ORDER BY must be a time attribute: a "
					"column with a WATERMARK or PROCTIME()");
	if (ref->npartition >= SL_MAX_KEY_FIELDS)
		return sl_sql_plan_fail(c, ref->line, ref->col, "at most %d PARTITION BY columns",
					SL_MAX_KEY_FIELDS - 1);
	if (pre_project(c, ref, calls, n, rel, keys, &nkeys, args))
		return -EINVAL;
	ot = sl_sql_plan_resolve_plain(rel, ref->order[0].expr);
	if (ot < 0)
		return sl_sql_plan_fail(c, ref->order[0].expr->line, ref->order[0].expr->col,
					"an OVER window's ORDER BY column is not in its input");
	memset(&oc, 0, sizeof(oc));
	oc.in_schema = sl_stream_schema(rel->s);
	oc.rowtime = rel->cols[ot].field;
	oc.proctime = rel->cols[ot].proctime;
	oc.frame = ref->frame == SL_FRAME_ROWS ? SL_OVER_ROWS : SL_OVER_RANGE;
	oc.preceding = ref->frame ? ref->frame_lo : -1;
	oc.naggs = n;
	nin = sl_schema_nfields(oc.in_schema);
	os = sl_sql_plan_own(c, sl_schema_clone(oc.in_schema), (void (*)(void *))sl_schema_destroy);
	if (!os)
		return -ENOMEM;
	if (rel->ncols + n > SL_PLAN_MAX_COLS)
		return sl_sql_plan_fail(c, ref->line, ref->col, "too many columns");
	for (int i = 0; i < n; i++) {
		struct sl_sql_col *col = &rel->cols[rel->ncols + i];
		struct sl_sql_type t = { 0 };
		char name[32];

		snprintf(name, sizeof name, "$over%d", i);
		if (call_spec(c, rel, calls[i], args[i], &oc.aggs[i]))
			return -EINVAL;
		if (!(oc.aggs[i].name = sl_sql_plan_strdup(c, name)))
			return -ENOMEM;
		t.type = sl_over_agg_type(&oc, i, &t.prec, &t.scale, msg, sizeof msg);
		if (!t.type)
			return sl_sql_plan_fail(c, calls[i]->line, calls[i]->col, "%s", msg);
		if (sl_sql_plan_schema_add(c, os, name, &t, NULL) != nin + i)
			return -EINVAL;
		t.nullable =
			oc.aggs[i].kind != SL_AGG_COUNT_STAR && oc.aggs[i].kind != SL_AGG_COUNT;
		/* no name: SELECT * does not show it; found through match */
		*col = (struct sl_sql_col){ .field = nin + i, .match = calls[i], .type = t };
	}
	oc.out_schema = os;
	pfn = sl_sql_plan_own(c, calloc(1, sizeof(*pfn)), free_over);
	if (!pfn)
		return -ENOMEM;
	if (sl_over_build(&oc, pfn, msg, sizeof msg) < 0)
		return sl_sql_plan_fail(c, ref->line, ref->col, "OVER aggregation: %s", msg);
	k = sl_stream_key_by(rel->s, keys, nkeys);
	/* the name EXPLAIN prints: a window without PARTITION BY does not scale out */
	rel->s =
		k ? sl_stream_process(k,
				      ref->npartition ? "over aggregate"
						      : "over aggregate (one partition: one shard)",
				      pfn, os)
		  : NULL;
	if (!rel->s)
		return sl_sql_plan_fail(c, ref->line, ref->col, "%s", sl_job_error(job)->msg);
	rel->ncols += n;
	return 0;
}
