/*
 * plan_wm_explain.c - EXPLAIN WATERMARK FOR <table or view>, a sluice extension: the
 * planner's part. The statement plans no job; it names the tables whose watermark the
 * user asks about (a view: the tables it reads, through nested views and joins), and
 * where it stands in the file, so that `sluice run` prints, once the jobs before it have
 * run, what the last of them that read those tables showed of their watermark
 * (engine/obs/explain_wm.c). A running job is asked the same through its control socket
 * (`sluice status --watermark TABLE PID`).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

static int add_table(struct sl_sql_wm_explain *x, const char *name)
{
	for (int k = 0; k < x->ntables; k++)
		if (!strcmp(x->tables[k], name))
			return 0;
	if (x->ntables == SL_SQL_WMX_TABLES)
		return -E2BIG;
	x->tables[x->ntables++] = name;
	return 0;
}

static int from_tables(struct sl_sql_plan_ctx *c, struct sl_sql_wm_explain *x,
		       const struct sl_from *f, int depth);

/* The tables a query reads, views expanded (depth guards a cycle the planner refuses
 * anyway when it plans the view). */
static int query_tables(struct sl_sql_plan_ctx *c, struct sl_sql_wm_explain *x,
			const struct sl_query *q, int depth)
{
	int rc;

	if (!q || depth > 16)
		return 0;
	if (q->set_op != SL_SET_NONE)
		return (rc = query_tables(c, x, q->left, depth + 1))
			       ? rc
			       : query_tables(c, x, q->right, depth + 1);
	return from_tables(c, x, q->from, depth);
}

static int name_tables(struct sl_sql_plan_ctx *c, struct sl_sql_wm_explain *x, const char *name,
		       int depth)
{
	struct sl_sql_plan_view *v;

	if (sl_sql_plan_find_table(c, name))
		return add_table(x, name);
	v = sl_sql_plan_find_view(c, name);
	return v ? query_tables(c, x, v->stmt->query, depth + 1) : 0;
}

static int from_tables(struct sl_sql_plan_ctx *c, struct sl_sql_wm_explain *x,
		       const struct sl_from *f, int depth)
{
	int rc = 0;

	for (; f && !rc; f = f->left) {
		if (f->name)
			rc = name_tables(c, x, f->name, depth);
		if (!rc && f->sub)
			rc = query_tables(c, x, f->sub, depth + 1);
		/* a TVF's TABLE argument: TUMBLE(TABLE t, ...) */
		if (!rc && f->call)
			for (uint32_t a = 0; a < f->call->nargs && !rc; a++) {
				const struct sl_expr *e = f->call->args[a];

				if (e->kind == SL_EXPR_TABLE && e->npath == 1)
					rc = name_tables(c, x, e->path[0], depth);
			}
		if (!rc && f->right)
			rc = from_tables(c, x, f->right, depth);
	}
	return rc;
}

int sl_sql_plan_wm_explain(struct sl_sql_plan_ctx *c, const struct sl_stmt *st)
{
	struct sl_sql_wm_explain *x, **grown;
	int rc;

	if (!sl_sql_plan_find_table(c, st->target) && !sl_sql_plan_find_view(c, st->target))
		return sl_sql_plan_fail(c, st->line, st->col,
					"EXPLAIN WATERMARK FOR %s: no table or view of that name",
					st->target);
	x = sl_sql_plan_own(c, calloc(1, sizeof(*x)), free);
	if (!x)
		return -ENOMEM;
	x->name = sl_sql_plan_strdup(c, st->target);
	if (!x->name)
		return -ENOMEM;
	x->after = c->njobs;
	rc = name_tables(c, x, st->target, 0);
	if (rc == -E2BIG)
		return sl_sql_plan_fail(c, st->line, st->col,
					"EXPLAIN WATERMARK FOR %s: it reads more than %d tables",
					st->target, SL_SQL_WMX_TABLES);
	if (!x->ntables)
		return sl_sql_plan_fail(c, st->line, st->col,
					"EXPLAIN WATERMARK FOR %s: the view reads no table",
					st->target);
	grown = realloc(c->wmx, ((size_t)c->nwmx + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	c->wmx = grown;
	c->wmx[c->nwmx++] = x;
	return 0;
}
