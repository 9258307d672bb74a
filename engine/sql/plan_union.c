/*
 * plan_union.c - UNION ALL: the branches of a tree of UNION ALLs collected without
 * recursion, each planned as a query, their streams unioned (keyed when the branches are
 * windowed alike). Split out of plan_query.c, which plans the SELECT blocks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

/*
 * UNION ALL branches one keyed union takes at most: each branch is one input lane of the
 * exchange, N x N rings of the ring size each (1 MiB by default), so the memory of a union
 * grows with branches x shards^2; 64 branches on 8 shards are 4 GiB of rings already.
 */
#define MAX_UNION_BRANCHES 64

/*
 * Collects the branches of a tree of UNION ALLs (the parser builds a left-deep chain, and
 * parentheses nest more) into br[] in their order, without recursion: a chain of
 * thousands of branches must not take a stack frame each. Returns the count, or
 * -E2BIG past `cap`, or -EINVAL at a UNION (distinct), with *bad set to it. q's own WITH
 * is in scope already (sl_sql_plan_query).
 */
static int union_branches(const struct sl_query *q, const struct sl_query **br, int cap,
			  const struct sl_query **bad)
{
	const struct sl_query *stack[MAX_UNION_BRANCHES + 1];
	int sp = 0, n = 0;

	stack[sp++] = q;
	while (sp) {
		const struct sl_query *x = stack[--sp];

		/* a nested union with its own WITH is a branch: its names are its own */
		while (x->set_op != SL_SET_NONE && (x == q || !x->nctes)) {
			if (x->set_op != SL_SET_UNION_ALL) {
				*bad = x;
				return -EINVAL;
			}
			/* the right one waits; the left one is visited first */
			if (sp == MAX_UNION_BRANCHES)
				return -E2BIG;
			stack[sp++] = x->right;
			x = x->left;
		}
		if (n == cap)
			return -E2BIG;
		br[n++] = x;
	}
	return n;
}

int sl_sql_plan_union(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		      struct sl_sql_plan_rel *out)
{
	const struct sl_query *br[MAX_UNION_BRANCHES], *bad = q;
	struct sl_stream *ins[MAX_UNION_BRANCHES];
	struct sl_sql_plan_rel l, r;
	bool changelog, rowtime[SL_PLAN_MAX_COLS], winprop[SL_PLAN_MAX_COLS];
	int key[1] = { 0 }, n;

	n = union_branches(q, br, MAX_UNION_BRANCHES, &bad);
	if (n == -EINVAL)
		return sl_sql_plan_fail(c, bad->line, bad->col,
					"UNION (distinct) is not supported; use UNION "
					"ALL");
	if (n < 0)
		return sl_sql_plan_fail(c, q->line, q->col,
					"UNION ALL of more than %d branches: one exchange "
					"takes at most %d inputs (each a ring per pair of "
					"shards); union fewer tables, or union the results "
					"of views",
					MAX_UNION_BRANCHES, MAX_UNION_BRANCHES);
	if (sl_sql_plan_query(c, job, br[0], &l))
		return -EINVAL;
	ins[0] = l.s;
	changelog = l.changelog;
	for (int i = 0; i < l.ncols; i++) {
		rowtime[i] = l.cols[i].rowtime;
		winprop[i] = l.cols[i].win_prop != SL_SQL_WIN_NONE;
	}
	for (int b = 1; b < n; b++) {
		if (sl_sql_plan_query(c, job, br[b], &r))
			return -EINVAL;
		if (l.ncols != r.ncols)
			return sl_sql_plan_fail(c, br[b]->line, br[b]->col,
						"UNION ALL of %d and %d columns", l.ncols, r.ncols);
		for (int i = 0; i < l.ncols; i++) {
			if (l.cols[i].type.type != r.cols[i].type.type ||
			    l.cols[i].type.scale != r.cols[i].type.scale)
				return sl_sql_plan_fail(c, br[b]->line, br[b]->col,
							"UNION ALL: column %d is %s on the left "
							"and %s on the right; CAST one side",
							i + 1, sl_type_name(l.cols[i].type.type),
							sl_type_name(r.cols[i].type.type));
			rowtime[i] &= r.cols[i].rowtime;
			/* a window property only where every branch has the same one */
			winprop[i] &= r.cols[i].win_prop == l.cols[i].win_prop &&
				      sl_sql_plan_same_window(r.cols[i].win, l.cols[i].win);
		}
		ins[b] = r.s;
		changelog |= r.changelog;
	}
	/* any key spreads the rows; the first column is as good as any */
	out->s = sl_stream_union_key_by(ins, n, key, 1);
	if (!out->s)
		return sl_sql_plan_fail(c, q->line, q->col, "%s", sl_job_error(job)->msg);
	*out = (struct sl_sql_plan_rel){ .s = out->s, .changelog = changelog };
	out->ncols = l.ncols;
	for (int i = 0; i < l.ncols; i++) {
		out->cols[i] = l.cols[i];
		out->cols[i].qual = NULL;
		out->cols[i].match = NULL;
		out->cols[i].rowtime = rowtime[i];
		if (!winprop[i]) {
			out->cols[i].win_prop = SL_SQL_WIN_NONE;
			out->cols[i].win = NULL;
		}
	}
	return 0;
}
