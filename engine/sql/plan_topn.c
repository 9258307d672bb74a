/*
 * plan_topn.c - Top-N in SQL: a subquery ranking its rows with ROW_NUMBER(), RANK() or
 * DENSE_RANK() OVER ([PARTITION BY ...] ORDER BY ...) AS rn, filtered outside by
 * WHERE rn <= N (or rn < N, rn = N, rn BETWEEN a AND b, rn >= a AND rn <= b), to the Top-N
 * operator (engine/ops/topn.h), Flink's
 * (https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/table/sql/queries/topn/).
 *
 * The subquery (plan_query.c) leaves the ranking pending on its relation; the outer WHERE's
 * conditions on rn give the rank range, its other conjuncts filter the result afterwards.
 * The rank is a column of the output only when the outer query names rn (or selects *):
 * otherwise Flink's "no rank number" form, whose changelog is a row entering (+I) or
 * leaving (-D) the result. Without PARTITION BY every row goes under one constant key, on
 * one shard, as Flink runs a global Top-N with parallelism 1. ROW_NUMBER() over one time
 * attribute kept at 1 is deduplication instead (plan_query.c).
 *
 * Partitioned by the window_start and window_end of one window TVF or window aggregation
 * (struct sl_sql_col.win_prop), it is Flink's window Top-N
 * (https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/table/sql/queries/window-topn/):
 * the same operator emits each window's result once, insert-only, when the watermark passes
 * the window's end, and a row arriving after that is late (counted, and sent to the
 * late-data table). ROW_NUMBER() ordered by one time attribute and kept at 1 is window
 * deduplication
 * (https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/table/sql/queries/window-deduplication/):
 * the first row of each window, or with DESC the last one (the last to arrive among those
 * that tie).
 *
 * Flink 2.3 refuses RANK() and DENSE_RANK() on streams ("not supported currently", and "only
 * ROW_NUMBER() is supported" on window Top-N); sluice ranks them by the SQL definitions.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "late_rows.h"
#include "plan_int.h"
#include "topn.h"

#define MAX_REST 32 /* conjuncts of the outer WHERE besides the rank's */

static void free_topn(void *fn)
{
	sl_topn_free(fn);
	free(fn);
}

static bool is_rn(const struct sl_sql_plan_rel *rel, const struct sl_expr *e)
{
	return e->kind == SL_EXPR_COLUMN && !strcasecmp(e->path[e->npath - 1], rel->rownum_name);
}

/* True when e names the rank column anywhere. */
static bool refs_rn(const struct sl_sql_plan_rel *rel, const struct sl_expr *e)
{
	if (!e)
		return false;
	if (is_rn(rel, e))
		return true;
	for (uint32_t i = 0; i < e->nargs; i++)
		if (refs_rn(rel, e->args[i]))
			return true;
	return refs_rn(rel, e->case_operand) || refs_rn(rel, e->case_else) ||
	       refs_rn(rel, e->filter);
}

struct where_parts {
	int64_t lo, hi;
	bool has_hi;
	const struct sl_expr *rest[MAX_REST];
	int nrest;
};

/* Narrows [lo, hi] by `rn op k`. */
static void bound(struct where_parts *w, enum sl_expr_op op, int64_t k)
{
	int64_t lo = op == SL_EXPR_OP_GE || op == SL_EXPR_OP_EQ ? k
		     : op == SL_EXPR_OP_GT			? k + 1
								: INT64_MIN;
	int64_t hi = op == SL_EXPR_OP_LE || op == SL_EXPR_OP_EQ ? k
		     : op == SL_EXPR_OP_LT			? k - 1
								: INT64_MAX;

	if (lo > w->lo)
		w->lo = lo;
	if (hi < w->hi)
		w->hi = hi;
	w->has_hi |= hi != INT64_MAX;
}

static enum sl_expr_op mirror(enum sl_expr_op op)
{
	switch (op) {
	case SL_EXPR_OP_LT:
		return SL_EXPR_OP_GT;
	case SL_EXPR_OP_LE:
		return SL_EXPR_OP_GE;
	case SL_EXPR_OP_GT:
		return SL_EXPR_OP_LT;
	case SL_EXPR_OP_GE:
		return SL_EXPR_OP_LE;
	default:
		return op;
	}
}

static bool is_cmp(enum sl_expr_op op)
{
	return op == SL_EXPR_OP_EQ || op == SL_EXPR_OP_LT || op == SL_EXPR_OP_LE ||
	       op == SL_EXPR_OP_GT || op == SL_EXPR_OP_GE;
}

static int split_where(struct sl_sql_plan_ctx *c, const struct sl_sql_plan_rel *rel,
		       const struct sl_expr *e, struct where_parts *w)
{
	if (e->kind == SL_EXPR_BINARY && e->op == SL_EXPR_OP_AND)
		return split_where(c, rel, e->args[0], w) || split_where(c, rel, e->args[1], w)
			       ? -EINVAL
			       : 0;
	if (e->kind == SL_EXPR_BINARY && is_cmp(e->op)) {
		const struct sl_expr *a = e->args[0], *b = e->args[1];

		if (is_rn(rel, a) && b->kind == SL_EXPR_INT) {
			bound(w, e->op, b->ival);
			return 0;
		}
		if (is_rn(rel, b) && a->kind == SL_EXPR_INT) {
			bound(w, mirror(e->op), a->ival);
			return 0;
		}
	}
	if (e->kind == SL_EXPR_BETWEEN && !e->negated && is_rn(rel, e->args[0]) &&
	    e->args[1]->kind == SL_EXPR_INT && e->args[2]->kind == SL_EXPR_INT) {
		bound(w, SL_EXPR_OP_GE, e->args[1]->ival);
		bound(w, SL_EXPR_OP_LE, e->args[2]->ival);
		return 0;
	}
	if (w->nrest == MAX_REST)
		return sl_sql_plan_fail(c, e->line, e->col, "more than %d conditions in WHERE",
					MAX_REST);
	w->rest[w->nrest++] = e;
	return 0;
}

/* The conjuncts left, joined with AND again (owned by the script); NULL for none. */
static const struct sl_expr *rejoin(struct sl_sql_plan_ctx *c, const struct where_parts *w)
{
	return sl_sql_plan_and(c, w->rest, w->nrest);
}

/* True when the outer query shows the rank: it names rn or selects *. */
static bool shows_rank(const struct sl_query *q, const struct sl_sql_plan_rel *rel,
		       const struct where_parts *w)
{
	for (uint32_t i = 0; i < q->nitems; i++)
		if (q->items[i].star || refs_rn(rel, q->items[i].expr))
			return true;
	for (int i = 0; i < w->nrest; i++)
		if (refs_rn(rel, w->rest[i]))
			return true;
	for (uint32_t i = 0; i < q->ngroup_by; i++)
		if (refs_rn(rel, q->group_by[i]))
			return true;
	return refs_rn(rel, q->having);
}

/* The window a ranking is partitioned by (PARTITION BY window_start, window_end of one
 * window TVF or window aggregation, and maybe more keys), with the columns of its bounds; NULL
 * when it is no window Top-N. */
static const struct sl_window_spec *part_window(const struct sl_sql_plan_rel *rel, int *start,
						int *end)
{
	const struct sl_window_spec *ws = NULL, *we = NULL;

	for (int i = 0; i < rel->nrownum_part; i++) {
		const struct sl_sql_col *col = &rel->cols[rel->rownum_part[i]];

		if (col->win_prop == SL_SQL_WIN_START) {
			ws = col->win;
			*start = rel->rownum_part[i];
		} else if (col->win_prop == SL_SQL_WIN_END) {
			we = col->win;
			*end = rel->rownum_part[i];
		}
	}
	return sl_sql_plan_same_window(ws, we) ? we : NULL;
}

/* The field of the window TVF's time column among the first n columns, or -1. */
static int timecol_field(const struct sl_sql_plan_rel *rel, int n)
{
	for (int i = 0; i < n; i++)
		if (rel->cols[i].win_prop == SL_SQL_WIN_TIMECOL)
			return rel->cols[i].field;
	return -1;
}

bool sl_sql_plan_topn_windowed(const struct sl_sql_plan_rel *rel)
{
	int s, e;

	return part_window(rel, &s, &e) != NULL;
}

/* Flink's window deduplication: ROW_NUMBER() ORDER BY one time attribute, kept at rank 1
 * (shown or not: Flink's rule makes a shown rank the constant 1). Keeping the last row, the
 * last of those that tie wins. */
static bool window_dedup(const struct sl_sql_plan_rel *rel, const struct sl_topn_cfg *tc)
{
	const struct sl_sql_col *o = &rel->cols[rel->rownum_orders[0]];

	return tc->fn == SL_TOPN_ROW_NUMBER && tc->rank_lo == 1 && tc->rank_hi == 1 &&
	       tc->norder == 1 &&
	       (o->rowtime || o->win_prop == SL_SQL_WIN_TIME || o->win_prop == SL_SQL_WIN_TIMECOL);
}

/* Adds a constant key column (every row under one key) after the relation's columns. */
static int constant_key(struct sl_sql_plan_ctx *c, struct sl_sql_plan_rel *rel)
{
	const struct sl_expr *exprs[SL_PLAN_MAX_COLS];
	const char *names[SL_PLAN_MAX_COLS];
	struct sl_sql_plan_rel keyed;
	int n = rel->ncols;

	if (n + 1 > SL_PLAN_MAX_COLS)
		return sl_sql_plan_fail(c, rel->rownum_line, rel->rownum_col, "too many columns");
	for (int i = 0; i < n; i++) {
		exprs[i] = sl_sql_plan_col_expr(c, &rel->cols[i]);
		names[i] = rel->cols[i].name ? rel->cols[i].name : "EXPR";
		if (!exprs[i])
			return -ENOMEM;
	}
	exprs[n] = sl_sql_plan_side_expr(c, 0);
	names[n] = "__key0";
	if (!exprs[n])
		return -ENOMEM;
	if (sl_sql_plan_project(c, rel, exprs, names, n + 1, NULL, "top-n: one partition", &keyed))
		return -EINVAL;
	keyed.rownum = rel->rownum;
	keyed.rownum_name = rel->rownum_name;
	keyed.rownum_line = rel->rownum_line;
	keyed.rownum_col = rel->rownum_col;
	keyed.rownum_fn = rel->rownum_fn;
	keyed.nrownum_order = rel->nrownum_order;
	memcpy(keyed.rownum_orders, rel->rownum_orders, sizeof(keyed.rownum_orders));
	memcpy(keyed.rownum_descs, rel->rownum_descs, sizeof(keyed.rownum_descs));
	for (int i = 0; i < n; i++)
		keyed.cols[i].qual = rel->cols[i].qual;
	*rel = keyed;
	rel->nrownum_part = 1;
	rel->rownum_part[0] = n;
	return 0;
}

int sl_sql_plan_topn(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		     struct sl_sql_plan_rel *rel, const struct sl_expr **where)
{
	struct where_parts w = { .lo = 1, .hi = INT64_MAX };
	struct sl_topn_cfg tc;
	struct sl_process_fn *pfn;
	const struct sl_schema *in;
	struct sl_schema *os;
	struct sl_stream *k;
	int keys[SL_MAX_KEY_FIELDS];
	bool global = rel->nrownum_part == 0;
	int nout = rel->ncols, wstart = -1, wend = -1;
	const struct sl_window_spec *win = part_window(rel, &wstart, &wend);
	const char *name = "top-n";
	char msg[256];

	if (*where && split_where(c, rel, *where, &w))
		return -EINVAL;
	if (!w.has_hi)
		return sl_sql_plan_fail(c, *where ? (*where)->line : rel->rownum_line,
					*where ? (*where)->col : rel->rownum_col,
					"a ranking function needs an upper bound outside: WHERE "
					"%s <= N (Top-N) or WHERE %s = 1 (deduplication)",
					rel->rownum_name, rel->rownum_name);
	if (w.lo < 1)
		w.lo = 1;
	if (w.lo > w.hi)
		return sl_sql_plan_fail(c, (*where)->line, (*where)->col,
					"WHERE leaves no rank of %s: [%lld, %lld]",
					rel->rownum_name, (long long)w.lo, (long long)w.hi);
	if (win && rel->changelog)
		return sl_sql_plan_fail(c, rel->rownum_line, rel->rownum_col,
					"a window Top-N (%s partitioned by window_start, "
					"window_end) needs an insert-only input, but this input is "
					"a changelog",
					rel->rownum_name);
	memset(&tc, 0, sizeof(tc));
	tc.emit_rank = shows_rank(q, rel, &w);
	tc.input_insert_only = !rel->changelog;
	if (global && constant_key(c, rel))
		return -EINVAL;
	for (int i = 0; i < rel->nrownum_part; i++)
		keys[i] = rel->cols[rel->rownum_part[i]].field;
	k = sl_stream_key_by(rel->s, keys, rel->nrownum_part);
	if (!k)
		return sl_sql_plan_fail(c, rel->rownum_line, rel->rownum_col, "%s",
					sl_job_error(job)->msg);
	/* the operator outputs the leading fields in order: the relation's columns must be
	 * them (a projection made them so) */
	for (int i = 0; i < nout; i++)
		if (rel->cols[i].field != i)
			return sl_sql_plan_fail(c, rel->rownum_line, rel->rownum_col,
						"top-n: column %d is field %d", i,
						rel->cols[i].field);
	in = sl_stream_schema(rel->s);
	tc.in_schema = in;
	tc.nout = nout;
	tc.fn = (enum sl_topn_fn)rel->rownum_fn;
	tc.norder = rel->nrownum_order;
	for (int i = 0; i < tc.norder; i++) {
		tc.order[i] = rel->cols[rel->rownum_orders[i]].field;
		tc.desc[i] = rel->rownum_descs[i];
	}
	tc.rank_lo = w.lo;
	tc.rank_hi = w.hi;
	tc.ttl_ms = c->state_ttl;
	if (win) {
		/* Flink's WindowRankOperator: one result per window when the watermark passes
		 * its end; the window's timer cleans the state, so no TTL */
		tc.window = true;
		tc.window_end = rel->cols[wend].field;
		tc.ttl_ms = 0;
		tc.late_tag = c->late_table ? 1 : 0;
		tc.ties_last = window_dedup(rel, &tc) && tc.desc[0];
		name = window_dedup(rel, &tc) ? "window deduplicate" : "window top-n";
	}
	os = sl_sql_plan_new_schema(c);
	if (!os)
		return -ENOMEM;
	for (int i = 0; i < nout; i++) {
		struct sl_sql_type t = { .type = sl_schema_type(in, i),
					 .prec = sl_schema_precision(in, i),
					 .scale = sl_schema_scale(in, i) };

		if (sl_sql_plan_schema_add(c, os, sl_schema_name(in, i), &t, NULL) < 0)
			return -EINVAL;
	}
	if (tc.emit_rank) {
		struct sl_sql_type t = { .type = SL_TYPE_BIGINT };
		struct sl_sql_col *rc = &rel->cols[nout];
		int f = sl_sql_plan_schema_add(c, os, rel->rownum_name, &t, NULL);

		if (f < 0)
			return -EINVAL;
		*rc = (struct sl_sql_col){ .name = rel->rownum_name, .type = t, .field = f };
	}
	pfn = sl_sql_plan_own(c, calloc(1, sizeof(*pfn)), free_topn);
	if (!pfn)
		return -ENOMEM;
	if (sl_topn_build(&tc, pfn, msg, sizeof msg) < 0)
		return sl_sql_plan_fail(c, rel->rownum_line, rel->rownum_col, "%s", msg);
	rel->s = sl_stream_process(k, name, pfn, os);
	if (!rel->s)
		return sl_sql_plan_fail(c, rel->rownum_line, rel->rownum_col, "%s",
					sl_job_error(job)->msg);
	if (tc.late_tag &&
	    sl_sql_plan_late_rows_of(c, job, rel->s, name, in, tc.late_tag, rel->cols[wstart].field,
				     rel->cols[wend].field, timecol_field(rel, nout)))
		return -EINVAL;
	rel->ncols = nout + tc.emit_rank;
	for (int i = 0; i < rel->ncols; i++) {
		/* a window Top-N emits each row at its window's end, the time window_time
		 * says: the time attributes and window properties stay */
		if (!win) {
			rel->cols[i].rowtime = false;
			rel->cols[i].win_prop = SL_SQL_WIN_NONE;
			rel->cols[i].win = NULL;
		}
		rel->cols[i].match = NULL;
	}
	rel->changelog = !win;
	rel->rownum = false;
	*where = rejoin(c, &w);
	return w.nrest && !*where ? -ENOMEM : 0;
}
