/*
 * plan_scan.c - a table reference becomes a source: connector from the WITH options, the
 * watermark strategy from WATERMARK FOR, and a calc for computed columns.
 *
 * Watermarks are generated at the source, per split, from the rowtime of each record (DESIGN
 * §4). When the rowtime is a computed column (`ts AS TO_TIMESTAMP(s)`), the source evaluates
 * that expression to time-stamp the record; the calc after the source computes it again as
 * a column, which costs one more evaluation but keeps rows and timestamps independent.
 *
 * Supported watermark expressions: `rowtime` (monotonous: watermark = max rowtime) and
 * `rowtime - INTERVAL ...` (bounded: max rowtime - delay), which is what Flink users write;
 * anything else is refused at plan time with the place named.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"
#include "sql_options.h"
#include "plan_int.h"

struct rowtime_prog {
	struct sl_prog *prog;
};

static void rowtime_free(void *p)
{
	struct rowtime_prog *r = p;

	sl_prog_destroy(r->prog);
	free(r);
}

/*
 * Runs on source threads, per record, and the runtime's assigner has no context argument:
 * the evaluation scratch is per thread so shards never share it.
 */
static sl_ts_t assign_rowtime(const struct sl_row *row, void *arg)
{
	static _Thread_local char scratch[4096];
	const struct rowtime_prog *r = arg;
	struct sl_eval_ctx ec = { .scratch = scratch, .scratch_cap = sizeof scratch };
	struct sl_val v;

	sl_prog_eval(r->prog, row, &ec, &v);
	/* a NULL rowtime cannot be placed in time: it sorts before everything (late) */
	return v.null ? SL_TS_MIN : v.i;
}

/* True when a and b print the same (structural equality of expression trees). */
bool sl_sql_plan_expr_equal(const struct sl_expr *a, const struct sl_expr *b)
{
	char x[1024], y[1024];
	size_t n = sl_expr_print(a, x, sizeof x), m = sl_expr_print(b, y, sizeof y);

	return n < sizeof x && m < sizeof y && n == m && strcasecmp(x, y) == 0;
}

/* Delay of `wm` (`t` or `t - INTERVAL ...` where t is equal to `time`): 0 or ms, -1 if
 * the expression has another shape. */
static sl_ts_t wm_delay(const struct sl_expr *wm, const struct sl_expr *time)
{
	if (sl_sql_plan_expr_equal(wm, time))
		return 0;
	if (wm->kind == SL_EXPR_BINARY && wm->op == SL_EXPR_OP_SUB &&
	    wm->args[1]->kind == SL_EXPR_INTERVAL && sl_sql_plan_expr_equal(wm->args[0], time) &&
	    wm->args[1]->ival >= 0)
		return wm->args[1]->ival;
	return -1;
}

static struct sl_expr *parse_span(struct sl_sql_plan_ctx *c, const struct sl_ddl_span *sp)
{
	char msg[512];
	struct sl_expr *e;

	e = sl_expr_parse_str(c->src + sp->start, sp->end - sp->start, msg, sizeof msg);
	if (!e) {
		/* the expression parser counts from the span's start: rebase to the file */
		uint32_t line = 0, col = 0;
		const char *rest = msg;

		if (sscanf(msg, "%u:%u:", &line, &col) == 2) {
			rest = strchr(strchr(msg, ':') + 1, ':') + 1;
			col = line == 1 ? sp->col + col - 1 : col;
			line = sp->line + line - 1;
			while (*rest == ' ')
				rest++;
		}
		sl_sql_plan_fail(c, line, col, "%s", rest);
		return NULL;
	}
	return sl_sql_plan_own(c, e, (void (*)(void *))sl_expr_destroy);
}

/* Shifts every node's position of a tree parsed from a span to file positions. */
static void rebase(struct sl_expr *e, const struct sl_ddl_span *sp)
{
	if (!e)
		return;
	if (e->line == 1)
		e->col += sp->col - 1;
	e->line += sp->line - 1;
	for (uint32_t i = 0; i < e->nargs; i++)
		rebase(e->args[i], sp);
	rebase(e->case_operand, sp);
	rebase(e->case_else, sp);
	rebase(e->filter, sp);
	for (uint32_t i = 0; i < e->npartition; i++)
		rebase(e->partition[i], sp);
	for (uint32_t i = 0; i < e->norder; i++)
		rebase(e->order[i].expr, sp);
}

struct sl_expr *sl_sql_plan_parse_span(struct sl_sql_plan_ctx *c, const struct sl_ddl_span *sp)
{
	struct sl_expr *e = parse_span(c, sp);

	if (e)
		rebase(e, sp);
	return e;
}

struct sl_prog *sl_sql_plan_compile(struct sl_sql_plan_ctx *c, const struct sl_expr *e,
				    const struct sl_sql_plan_rel *rel, struct sl_sql_type *type)
{
	struct sl_scope sc = { rel->cols, rel->ncols };
	struct sl_prog *p;
	char msg[512];

	msg[0] = 0;
	p = sl_prog_compile(e, &sc, &c->env, type, msg, sizeof msg);
	if (!p) {
		if (!c->failed) {
			c->failed = true;
			snprintf(c->err, c->errcap, "%s",
				 msg[0] ? msg : "cannot compile expression");
		}
		return NULL;
	}
	return p;
}

static bool is_proctime_call(const struct sl_expr *e)
{
	return e->kind == SL_EXPR_CALL && !strcasecmp(e->text, "PROCTIME") && e->nargs == 0;
}

/* A table scan as sl_sql_plan_scan_table() builds it, each part filled by the step named. */
struct scan {
	struct sl_sql_plan_rel
		phys; /* scan_physical(): the source's columns, what computed ones read */
	/* scan_computed(): the computed columns in declaration order, then (scan_rowtime())
	 * the hidden one holding a view's rowtime expression, whose ccol is NULL */
	struct sl_expr *computed[SL_PLAN_MAX_COLS];
	const struct sl_ddl_column *ccol[SL_PLAN_MAX_COLS];
	int ncomputed;
	/* scan_rowtime(): the watermark strategy and the rowtime's column (-1: none) */
	struct sl_wm_strategy wm;
	int rowtime_col;
};

/* The physical columns (the schema's fields) as the scan's first columns. */
static void scan_physical(struct scan *s, const struct sl_sql_plan_table *t, const char *qual)
{
	for (int i = 0; i < t->nphys; i++) {
		struct sl_sql_col *col = &s->phys.cols[s->phys.ncols++];

		col->qual = qual;
		col->name = t->phys_name[i];
		col->type = t->phys_type[i];
		col->field = i;
	}
}

/* The computed columns' expressions, in declaration order (compiled later over phys). */
static int scan_computed(struct sl_sql_plan_ctx *c, struct scan *s,
			 const struct sl_sql_plan_table *t)
{
	const struct sl_ddl_table *d = t->ddl;

	for (uint32_t i = 0; i < d->ncols; i++) {
		if (!d->cols[i].computed)
			continue;
		if (t->nphys + s->ncomputed + 1 >= SL_PLAN_MAX_COLS)
			return sl_sql_plan_fail(c, d->cols[i].line, d->cols[i].col,
						"table '%s' has too many columns", d->name);
		s->computed[s->ncomputed] = sl_sql_plan_parse_span(c, &d->cols[i].expr);
		if (!s->computed[s->ncomputed])
			return -EINVAL;
		s->ccol[s->ncomputed++] = &d->cols[i];
	}
	return 0;
}

/*
 * The rowtime and its watermark strategy: a table's WATERMARK FOR, or a view's (sluice
 * extension: view_time, view_wm). A physical rowtime is stamped from its field; a computed
 * one (or a view's expression, added as a hidden computed column) by evaluating it at the
 * source per record.
 */
static int scan_rowtime(struct sl_sql_plan_ctx *c, struct scan *s,
			const struct sl_sql_plan_table *t, const struct sl_expr *view_time,
			const struct sl_expr *view_wm)
{
	const struct sl_ddl_table *d = t->ddl;
	const struct sl_expr *time_expr = view_time;
	struct sl_expr *wm_expr = (struct sl_expr *)view_wm;
	struct sl_expr colref = { .kind = SL_EXPR_COLUMN };
	char *path[1];
	sl_ts_t delay;
	uint32_t line = d->wm_col.line, col = d->wm_col.col;

	if (!view_time && !t->wm_col)
		return 0;
	if (!view_time) {
		wm_expr = sl_sql_plan_parse_span(c, &d->wm_expr);
		if (!wm_expr)
			return -EINVAL;
		path[0] = (char *)t->wm_col;
		colref.path = path;
		colref.npath = 1;
		time_expr = &colref;
		for (int i = 0; i < t->nphys; i++)
			if (!strcmp(t->phys_name[i], t->wm_col))
				s->rowtime_col = i;
		for (int i = 0; i < s->ncomputed; i++)
			if (!strcmp(s->ccol[i]->name, t->wm_col))
				s->rowtime_col = t->nphys + i;
	} else {
		line = view_wm->line;
		col = view_wm->col;
	}
	delay = wm_delay(wm_expr, time_expr);
	if (delay < 0)
		return sl_sql_plan_fail(c, wm_expr->line, wm_expr->col,
					"unsupported watermark expression: write `%s` or `%s - "
					"INTERVAL 'n' SECOND`",
					view_time ? "expr" : t->wm_col,
					view_time ? "expr" : t->wm_col);
	s->wm.kind = delay ? SL_WM_BOUNDED : SL_WM_MONOTONOUS;
	s->wm.max_delay_ms = delay;
	s->wm.interval_ms = t->on_event ? 0 : c->wm_interval;
	s->wm.idle_timeout_ms = t->idle_timeout;
	s->wm.ts_column = view_time ? "rowtime" : t->wm_col; /* EXPLAIN WATERMARK FOR */
	if (view_time) {
		/* a hidden computed column holds the view's rowtime expression */
		s->computed[s->ncomputed] = (struct sl_expr *)view_time;
		s->ccol[s->ncomputed] = NULL;
		s->rowtime_col = t->nphys + s->ncomputed++;
	}
	if (s->rowtime_col < 0)
		return sl_sql_plan_fail(c, line, col, "no rowtime column '%s'", t->wm_col);
	if (s->rowtime_col < t->nphys) {
		enum sl_type ty = t->phys_type[s->rowtime_col].type;

		if (ty != SL_TYPE_TIMESTAMP && ty != SL_TYPE_TIMESTAMP_LTZ)
			return sl_sql_plan_fail(c, line, col,
						"the rowtime column '%s' must be "
						"TIMESTAMP(3) or TIMESTAMP_LTZ(3), not %s",
						t->wm_col, sl_type_name(ty));
		s->wm.ts_field = s->rowtime_col;
	} else {
		struct rowtime_prog *r = calloc(1, sizeof(*r));
		struct sl_sql_type ty;

		if (!sl_sql_plan_own(c, r, rowtime_free))
			return -ENOMEM;
		r->prog = sl_sql_plan_compile(c, s->computed[s->rowtime_col - t->nphys], &s->phys,
					      &ty);
		if (!r->prog)
			return -EINVAL;
		if (ty.type != SL_TYPE_TIMESTAMP && ty.type != SL_TYPE_TIMESTAMP_LTZ)
			return sl_sql_plan_fail(c, line, col,
						"the rowtime must be TIMESTAMP(3) or "
						"TIMESTAMP_LTZ(3), not %s",
						sl_type_name(ty.type));
		s->wm.assign = assign_rowtime;
		s->wm.assign_arg = r;
	}
	return 0;
}

/*
 * A calc after the source that copies the physical columns and appends the computed ones
 * (the rowtime's marked as the record's time), making out's stream and columns.
 */
static int scan_calc(struct sl_sql_plan_ctx *c, struct sl_job *job, struct scan *s,
		     const struct sl_sql_plan_table *t, const char *qual,
		     const struct sl_schema *schema, struct sl_sql_plan_rel *out)
{
	int nout = t->nphys + s->ncomputed;
	struct sl_calc *calc =
		sl_sql_plan_own(c, sl_calc_create(nout, c->nshards), sl_calc_destroy);
	struct sl_schema *os = sl_schema_clone(schema);

	if (!calc || !sl_sql_plan_own(c, os, (void (*)(void *))sl_schema_destroy))
		return -ENOMEM;
	for (int i = 0; i < t->nphys; i++) {
		struct sl_expr ref = { .kind = SL_EXPR_COLUMN };
		char *path[1] = { t->phys_name[i] };
		struct sl_sql_type ty;
		struct sl_prog *p;

		/* a plain copy; the compiler turns it into one load */
		ref.path = path;
		ref.npath = 1;
		p = sl_sql_plan_compile(c, &ref, &s->phys, &ty);
		if (!p)
			return -EINVAL;
		sl_calc_set_out(calc, i, p, &t->phys_type[i]);
		sl_calc_set_copy(calc, i, i);
	}
	for (int i = 0; i < s->ncomputed; i++) {
		struct sl_sql_col *col = &out->cols[out->ncols];
		struct sl_sql_type ty;
		struct sl_prog *p = sl_sql_plan_compile(c, s->computed[i], &s->phys, &ty);
		const struct sl_ddl_column *cc = s->ccol[i];
		char hidden[32];
		int rc;

		if (!p)
			return -EINVAL;
		sl_calc_set_out(calc, t->nphys + i, p, &ty);
		if (t->nphys + i == s->rowtime_col)
			/* the source time-stamped the record with this very expression */
			sl_calc_set_ts(calc, t->nphys + i);
		snprintf(hidden, sizeof hidden, "$rowtime%d", i);
		col->qual = qual;
		col->name = cc ? cc->name : sl_sql_plan_strdup(c, hidden);
		col->type = ty;
		col->field = t->nphys + i;
		col->proctime = is_proctime_call(s->computed[i]);
		if (!cc) /* the view's rowtime: found by its expression */
			col->match = s->computed[i];
		rc = sl_sql_plan_schema_put(os, col->name, &ty);
		if (rc < 0)
			return sl_sql_plan_fail(c, cc ? cc->line : 0, cc ? cc->col : 0,
						"computed column '%s' clashes with another column",
						col->name);
		out->ncols++;
	}
	if (s->rowtime_col >= 0)
		out->cols[s->rowtime_col].rowtime = true;
	out->s = sl_calc_stream(out->s, "computed columns", calc, os);
	if (!out->s)
		return sl_sql_plan_fail(c, 0, 0, "%s", sl_job_error(job)->msg);
	return 0;
}

int sl_sql_plan_scan_table(struct sl_sql_plan_ctx *c, struct sl_job *job,
			   struct sl_sql_plan_table *t, const char *qual,
			   const struct sl_expr *view_time, const struct sl_expr *view_wm,
			   struct sl_sql_plan_rel *out)
{
	const struct sl_ddl_table *d = t->ddl;
	struct sl_schema *schema = sl_sql_plan_table_schema(c, t);
	struct scan s = { .wm = { .kind = SL_WM_NONE, .ts_field = -1 }, .rowtime_col = -1 };
	struct sl_sql_conn *k;
	int rc;

	if (!schema)
		return -EINVAL;
	k = sl_sql_plan_connector(c, d, schema, false);
	if (!k)
		return -EINVAL;
	if (!k->src_ops)
		return sl_sql_plan_fail(
			c, d->opts ? d->opts[0].line : 0, d->opts ? d->opts[0].col : 0,
			"table '%s' cannot be read: its connector is a sink only", d->name);
	memset(out, 0, sizeof(*out));
	scan_physical(&s, t, qual);
	if ((rc = scan_computed(c, &s, t)) || (rc = scan_rowtime(c, &s, t, view_time, view_wm)))
		return rc;
	out->s = sl_job_source(job, d->name, k->src_ops, k->cfg, schema, &s.wm);
	if (!out->s)
		return sl_sql_plan_fail(c, 0, 0, "table '%s': %s", d->name, sl_job_error(job)->msg);
	*out = (struct sl_sql_plan_rel){ .s = out->s, .changelog = k->changelog };
	memcpy(out->cols, s.phys.cols, sizeof(s.phys.cols[0]) * (size_t)s.phys.ncols);
	out->ncols = s.phys.ncols;
	if (s.ncomputed == 0) {
		if (s.rowtime_col >= 0)
			out->cols[s.rowtime_col].rowtime = true;
		return 0;
	}
	return scan_calc(c, job, &s, t, qual, schema, out);
}
