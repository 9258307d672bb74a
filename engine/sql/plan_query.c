/*
 * plan_query.c - SELECT blocks to streams: FROM (tables, views, subqueries, window TVFs,
 * temporal joins; regular joins are plan_join.c), WHERE, projection, UNION ALL,
 * deduplication, and the sinks of INSERT and bare SELECT. Aggregation is in plan_agg.c.
 *
 * A relation (struct sl_sql_plan_rel) is a stream plus the columns visible on it. Columns keep the
 * event-time attribute only through plain references, as in Flink: `SELECT ts` keeps ts a
 * rowtime, `SELECT ts + INTERVAL '1' SECOND` does not. Names starting with '$' are hidden
 * columns the planner added (a view's rowtime expression); `*` does not expand to them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"
#include "sql_options.h"
#include "dedup.h"
#include "temporal_join.h"
#include "topn.h"
#include "plan_int.h"
#include "window_assign.h"

static void free_tjoin(void *fn)
{
	sl_temporal_join_free(fn);
	free(fn);
}

static void free_dedup(void *fn)
{
	sl_dedup_free(fn);
	free(fn);
}

/* ---- column resolution ---------------------------------------------------------------- */

/* The column `e` is a plain reference to (by name or by a `match` expression), or -1. */
int sl_sql_plan_resolve_plain(const struct sl_sql_plan_rel *rel, const struct sl_expr *e)
{
	if (e->kind == SL_EXPR_COLUMN) {
		char name[512];
		int found = -1;

		/* try `qual.rest` first, then the whole path as a flattened name */
		for (int skip = 0; skip <= 1 && skip < (int)e->npath; skip++) {
			size_t n = 0;

			name[0] = 0;
			for (uint32_t i = (uint32_t)skip; i < e->npath; i++)
				n += (size_t)snprintf(name + n,
						      n < sizeof name ? sizeof name - n : 0, "%s%s",
						      i > (uint32_t)skip ? "." : "", e->path[i]);
			if (n >= sizeof name)
				return -1;
			for (int i = 0; i < rel->ncols; i++) {
				const struct sl_sql_col *c = &rel->cols[i];

				if (!c->name || strcasecmp(c->name, name))
					continue;
				if (skip && (!c->qual || strcasecmp(c->qual, e->path[0])))
					continue;
				if (found >= 0 && found != i)
					return -1; /* ambiguous: the compiler says so */
				found = i;
			}
			if (found >= 0)
				return found;
		}
		return -1;
	}
	for (int i = 0; i < rel->ncols; i++)
		if (rel->cols[i].match && sl_sql_plan_expr_equal(rel->cols[i].match, e))
			return i;
	return -1;
}

/* The name a select item gets: its alias, the last part of a column path, or EXPR$i. */
static const char *item_name(struct sl_sql_plan_ctx *c, const struct sl_select_item *it, int i)
{
	char buf[32];

	if (it->alias)
		return it->alias;
	if (it->expr->kind == SL_EXPR_COLUMN)
		return it->expr->path[it->expr->npath - 1];
	snprintf(buf, sizeof buf, "EXPR$%d", i);
	return sl_sql_plan_strdup(c, buf);
}

int sl_sql_plan_schema_put(struct sl_schema *s, const char *name, const struct sl_sql_type *t)
{
	if (t->type == SL_TYPE_DECIMAL)
		return sl_schema_add_decimal(s, name, t->prec, t->scale);
	if (t->type == SL_TYPE_TIMESTAMP || t->type == SL_TYPE_TIMESTAMP_LTZ)
		return sl_schema_add_timestamp(s, name, t->type, t->prec);
	return sl_schema_add(s, name, t->type);
}

/* Adds a field to schema s for a column of type t, renaming it name0, name1... when the name
 * is taken (Flink's rule for duplicate output names). Returns the field or -errno. */
int sl_sql_plan_schema_add(struct sl_sql_plan_ctx *c, struct sl_schema *s, const char *name,
			   const struct sl_sql_type *t, const char **final)
{
	char buf[256];
	const char *use = name;
	int rc;

	for (int k = 0; sl_schema_find(s, use) >= 0; k++) {
		snprintf(buf, sizeof buf, "%s%d", name, k);
		use = buf;
	}
	rc = sl_sql_plan_schema_put(s, use, t);
	if (rc < 0)
		return sl_sql_plan_fail(c, 0, 0,
					"cannot add column '%s': too many columns (at most %d)",
					use, SL_SCHEMA_MAX_FIELDS);
	if (final)
		*final = use == name ? name : sl_sql_plan_strdup(c, use);
	return rc;
}

struct sl_schema *sl_sql_plan_new_schema(struct sl_sql_plan_ctx *c)
{
	return sl_sql_plan_own(c, sl_schema_create(), (void (*)(void *))sl_schema_destroy);
}

/*
 * Projects rel through exprs[0..n) named names[i] into a new relation via one calc (with
 * `pred` as its WHERE when not NULL). Plain references keep their rowtime flag and window
 * property; `keep_qual` keeps the qualifier of plain references (for joins), else the output
 * is unqualified.
 */
int sl_sql_plan_project(struct sl_sql_plan_ctx *c, struct sl_sql_plan_rel *rel,
			const struct sl_expr *const *exprs, const char *const *names, int n,
			const struct sl_expr *pred, const char *opname, struct sl_sql_plan_rel *out)
{
	struct sl_calc *calc = sl_sql_plan_own(c, sl_calc_create(n, c->nshards), sl_calc_destroy);
	struct sl_schema *s = sl_sql_plan_new_schema(c);
	struct sl_sql_plan_rel r = { .changelog = rel->changelog };

	if (!calc || !s)
		return -ENOMEM;
	if (n > SL_PLAN_MAX_COLS)
		return sl_sql_plan_fail(c, exprs[0]->line, exprs[0]->col, "more than %d columns",
					SL_PLAN_MAX_COLS);
	if (pred) {
		struct sl_sql_type pt;
		struct sl_prog *p = sl_sql_plan_compile(c, pred, rel, &pt);

		if (!p)
			return -EINVAL;
		sl_calc_set_pred(calc, p);
		if (pt.type != SL_TYPE_BOOL && !pt.null_type) {
			sl_prog_destroy(p);
			sl_calc_set_pred(calc, NULL);
			return sl_sql_plan_fail(c, pred->line, pred->col,
						"WHERE needs a BOOLEAN condition, not %s",
						sl_type_name(pt.type));
		}
	}
	for (int i = 0; i < n; i++) {
		struct sl_sql_col *col = &r.cols[i];
		struct sl_sql_type t;
		struct sl_prog *p = sl_sql_plan_compile(c, exprs[i], rel, &t);
		int plain = sl_sql_plan_resolve_plain(rel, exprs[i]);

		if (!p)
			return -EINVAL;
		if (t.null_type) {
			sl_prog_destroy(p);
			return sl_sql_plan_fail(
				c, exprs[i]->line, exprs[i]->col,
				"a bare NULL has no type: write CAST(NULL AS type)");
		}
		sl_calc_set_out(calc, i, p, &t);
		if (plain >= 0 && rel->cols[plain].type.type == t.type &&
		    rel->cols[plain].type.scale == t.scale)
			sl_calc_set_copy(calc, i, rel->cols[plain].field);
		col->type = t;
		col->field = i;
		if (sl_sql_plan_schema_add(c, s, names[i], &t, &col->name) < 0)
			return -EINVAL;
		if (plain >= 0) {
			col->rowtime = rel->cols[plain].rowtime;
			col->proctime = rel->cols[plain].proctime;
			col->win_prop = rel->cols[plain].win_prop;
			col->win = rel->cols[plain].win;
		}
		/* PROCTIME() selected is a processing-time attribute, as in Flink */
		if (exprs[i]->kind == SL_EXPR_CALL && exprs[i]->nargs == 0 && !exprs[i]->over &&
		    !strcasecmp(exprs[i]->text, "PROCTIME"))
			col->proctime = true;
	}
	r.ncols = n;
	r.s = sl_calc_stream(rel->s, opname, calc, s);
	if (!r.s)
		return sl_sql_plan_fail(c, exprs[0]->line, exprs[0]->col,
					"cannot add operator '%s'", opname);
	*out = r;
	return 0;
}

int sl_sql_plan_filter(struct sl_sql_plan_ctx *c, struct sl_sql_plan_rel *rel,
		       const struct sl_expr *pred)
{
	struct sl_calc *calc = sl_sql_plan_own(c, sl_calc_create(-1, c->nshards), sl_calc_destroy);
	struct sl_sql_type pt;
	struct sl_prog *p;

	if (!calc)
		return -ENOMEM;
	p = sl_sql_plan_compile(c, pred, rel, &pt);
	if (!p)
		return -EINVAL;
	sl_calc_set_pred(calc, p);
	if (pt.type != SL_TYPE_BOOL && !pt.null_type)
		return sl_sql_plan_fail(c, pred->line, pred->col,
					"the condition must be BOOLEAN, not %s",
					sl_type_name(pt.type));
	rel->s = sl_calc_stream(rel->s, "where", calc, sl_stream_schema(rel->s));
	return rel->s ? 0 : sl_sql_plan_fail(c, pred->line, pred->col, "cannot add the filter");
}

/* ---- FROM ----------------------------------------------------------------------------- */

static void requalify(struct sl_sql_plan_rel *r, const char *qual)
{
	for (int i = 0; i < r->ncols; i++)
		r->cols[i].qual = qual;
}

#define MAX_VIEW_DEPTH 64

static int plan_view(struct sl_sql_plan_ctx *c, struct sl_job *job, struct sl_sql_plan_view *v,
		     const char *qual, struct sl_sql_plan_rel *out)
{
	const struct sl_stmt *st = v->stmt;

	if (v->expanding)
		return sl_sql_plan_fail(c, st->line, st->col, "view '%s' refers to itself",
					v->name);
	/* each view read is a frame of the planner's recursion */
	if (c->view_depth >= MAX_VIEW_DEPTH)
		return sl_sql_plan_fail(c, st->line, st->col,
					"views nested more than %d deep (view '%s' reads a view "
					"that reads a view ...): read fewer views in a chain",
					MAX_VIEW_DEPTH, v->name);
	c->view_depth++;
	v->expanding = true;
	if (st->wm_for) {
		/* the sluice extension: the watermark goes to the table under the view */
		if (!st->query->from || st->query->from->kind != SL_FROM_TABLE ||
		    !sl_sql_plan_find_table(c, st->query->from->name)) {
			c->view_depth--;
			v->expanding = false;
			return sl_sql_plan_fail(c, st->wm_line, st->wm_col,
						"a view's WATERMARK needs the "
						"view to read one table directly");
		}
		c->pending_time = st->wm_for;
		c->pending_wm = st->wm_expr;
	}
	if (sl_sql_plan_query(c, job, st->query, out)) {
		c->view_depth--;
		v->expanding = false;
		return -EINVAL;
	}
	c->view_depth--;
	v->expanding = false;
	if (st->ncols) {
		if ((int)st->ncols != out->ncols)
			return sl_sql_plan_fail(c, st->line, st->col,
						"view '%s' names %u columns but its "
						"query has %d",
						v->name, st->ncols, out->ncols);
		for (uint32_t i = 0; i < st->ncols; i++)
			out->cols[i].name = st->cols[i];
	}
	requalify(out, qual);
	return 0;
}

/* The WITH query named `name` in scope, innermost first, or NULL. */
static const struct sl_sql_plan_cte *find_cte(const struct sl_sql_plan_ctx *c, const char *name)
{
	for (const struct sl_sql_plan_cte *e = c->ctes; e; e = e->outer)
		if (!strcasecmp(e->def->name, name))
			return e;
	return NULL;
}

int sl_sql_plan_with_begin(struct sl_sql_plan_ctx *c, const struct sl_query *q,
			   struct sl_sql_plan_with *w)
{
	w->saved = c->ctes;
	w->ctes = NULL;
	if (!q->nctes)
		return 0;
	w->ctes = calloc(q->nctes, sizeof(*w->ctes));
	if (!w->ctes)
		return sl_sql_plan_fail(c, q->line, q->col, "out of memory");
	for (uint32_t i = 0; i < q->nctes; i++) {
		w->ctes[i].def = &q->ctes[i];
		w->ctes[i].outer = i ? &w->ctes[i - 1] : c->ctes;
	}
	c->ctes = &w->ctes[q->nctes - 1];
	return 0;
}

void sl_sql_plan_with_end(struct sl_sql_plan_ctx *c, struct sl_sql_plan_with *w)
{
	c->ctes = w->saved;
	free(w->ctes);
	w->ctes = NULL;
}

/* A read of WITH query e: planned anew at each read, as a view is, in the scope e was
 * written in (so a name in its body is an earlier CTE, a table or a view, never e). */
static int plan_cte(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_sql_plan_cte *e,
		    const char *qual, struct sl_sql_plan_rel *out)
{
	const struct sl_cte *d = e->def;
	const struct sl_sql_plan_cte *scope = c->ctes;
	int rc;

	/* each read is a frame of the planner's recursion, as a view's */
	if (c->view_depth >= MAX_VIEW_DEPTH)
		return sl_sql_plan_fail(c, d->line, d->col,
					"views and WITH queries nested more than %d deep",
					MAX_VIEW_DEPTH);
	c->view_depth++;
	c->ctes = e->outer;
	rc = sl_sql_plan_query(c, job, d->query, out);
	c->ctes = scope;
	c->view_depth--;
	if (rc)
		return -EINVAL;
	if (d->ncols) {
		if ((int)d->ncols != out->ncols)
			return sl_sql_plan_fail(c, d->line, d->col,
						"WITH query '%s' names %u columns but its query "
						"has %d",
						d->name, d->ncols, out->ncols);
		for (uint32_t i = 0; i < d->ncols; i++)
			out->cols[i].name = d->cols[i];
	}
	requalify(out, qual);
	return 0;
}

static int interval_arg(struct sl_sql_plan_ctx *c, const struct sl_expr *e, const char *what,
			sl_ts_t *ms)
{
	if (e->kind != SL_EXPR_INTERVAL || e->ival <= 0)
		return sl_sql_plan_fail(c, e->line, e->col,
					"%s must be a positive INTERVAL literal", what);
	*ms = e->ival;
	return 0;
}

/* TABLE(TUMBLE|HOP|CUMULATE|SESSION(TABLE t, DESCRIPTOR(ts), ...)) */
static int plan_tvf(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_from *f,
		    struct sl_sql_plan_rel *out)
{
	const struct sl_expr *call = f->call;
	const struct sl_expr *data = NULL, *timecol = NULL, *size = NULL, *slide = NULL;
	const struct sl_expr *offset = NULL, *gap = NULL, *step = NULL;
	const char *fn = call->text;
	struct sl_from tf = { .kind = SL_FROM_TABLE };
	int tcol;

	for (uint32_t i = 0; i < call->nargs; i++) {
		const char *nm = f->arg_names ? f->arg_names[i] : NULL;
		const struct sl_expr *a = call->args[i];

		if (nm) {
			if (!strcasecmp(nm, "DATA"))
				data = a;
			else if (!strcasecmp(nm, "TIMECOL"))
				timecol = a;
			else if (!strcasecmp(nm, "SIZE") || !strcasecmp(nm, "MAX_SIZE"))
				size = a;
			else if (!strcasecmp(nm, "SLIDE"))
				slide = a;
			else if (!strcasecmp(nm, "OFFSET"))
				offset = a;
			else if (!strcasecmp(nm, "GAP"))
				gap = a;
			else if (!strcasecmp(nm, "STEP"))
				step = a;
			else
				return sl_sql_plan_fail(c, a->line, a->col,
							"unknown argument name '%s' of %s", nm, fn);
			continue;
		}
		if (i == 0)
			data = a;
		else if (i == 1)
			timecol = a;
		else if (!strcasecmp(fn, "TUMBLE")) {
			if (i == 2)
				size = a;
			else
				offset = a;
		} else if (!strcasecmp(fn, "HOP")) {
			if (i == 2)
				slide = a;
			else if (i == 3)
				size = a;
			else
				offset = a;
		} else if (!strcasecmp(fn, "CUMULATE")) {
			if (i == 2)
				step = a;
			else if (i == 3)
				size = a;
			else
				offset = a;
		} else if (!strcasecmp(fn, "SESSION")) {
			gap = a;
		}
	}
	if (strcasecmp(fn, "TUMBLE") && strcasecmp(fn, "HOP") && strcasecmp(fn, "CUMULATE") &&
	    strcasecmp(fn, "SESSION"))
		return sl_sql_plan_fail(c, call->line, call->col,
					"unknown table function '%s' (window "
					"functions: TUMBLE, HOP, CUMULATE, SESSION)",
					fn);
	if (data && data->kind == SL_EXPR_TABLE && data->npartition && strcasecmp(fn, "SESSION"))
		return sl_sql_plan_fail(c, data->partition[0]->line, data->partition[0]->col,
					"PARTITION BY is for SESSION windows only");
	if (data && data->kind == SL_EXPR_TABLE && data->npartition >= SL_MAX_KEY_FIELDS)
		return sl_sql_plan_fail(c, data->line, data->col, "at most %d PARTITION BY keys",
					SL_MAX_KEY_FIELDS - 1);
	if (!data || data->kind != SL_EXPR_TABLE || !timecol ||
	    timecol->kind != SL_EXPR_DESCRIPTOR || timecol->nargs != 1)
		return sl_sql_plan_fail(c, call->line, call->col,
					"%s needs (TABLE t, DESCRIPTOR(time_col), "
					"...)",
					fn);
	/* the data argument: a table or view by name */
	{
		char name[512];
		size_t n = 0;

		for (uint32_t i = 0; i < data->npath; i++)
			n += (size_t)snprintf(name + n, n < sizeof name ? sizeof name - n : 0,
					      "%s%s", i ? "." : "", data->path[i]);
		tf.name = name;
		tf.line = data->line;
		tf.col = data->col;
		if (sl_sql_plan_from(c, job, &tf, out))
			return -EINVAL;
		requalify(out, f->alias ? f->alias : NULL);
	}
	tcol = sl_sql_plan_resolve_plain(out, timecol->args[0]);
	if (tcol < 0)
		return sl_sql_plan_fail(c, timecol->args[0]->line, timecol->args[0]->col,
					"DESCRIPTOR names no column of the table");
	if (!out->cols[tcol].rowtime && !out->cols[tcol].proctime)
		return sl_sql_plan_fail(c, timecol->args[0]->line, timecol->args[0]->col,
					"the window's time column must be a time attribute: a "
					"rowtime (declared with WATERMARK FOR) or PROCTIME()");
	/* SESSION's PARTITION BY: sessions per key; sl_sql_plan_agg checks them against GROUP BY */
	out->tvf_partitioned = data->npartition > 0;
	out->ntvf_part = 0;
	for (uint32_t i = 0; i < data->npartition; i++) {
		int col = sl_sql_plan_resolve_plain(out, data->partition[i]);

		if (col < 0)
			return sl_sql_plan_fail(c, data->partition[i]->line,
						data->partition[i]->col,
						"PARTITION BY names no column of the table");
		out->tvf_part[out->ntvf_part++] = col;
	}
	out->tvf = true;
	out->tvf_time_col = tcol;
	memset(&out->tvf_win, 0, sizeof(out->tvf_win));
	out->tvf_win.proctime = out->cols[tcol].proctime;
	if (!strcasecmp(fn, "TUMBLE")) {
		out->tvf_win.kind = SL_WIN_TUMBLE;
		if (!size || interval_arg(c, size, "the window size", &out->tvf_win.size_ms))
			return c->failed ? -EINVAL
					 : sl_sql_plan_fail(c, call->line, call->col,
							    "TUMBLE needs a size");
	} else if (!strcasecmp(fn, "HOP")) {
		out->tvf_win.kind = SL_WIN_HOP;
		if (!size || !slide ||
		    interval_arg(c, size, "the window size", &out->tvf_win.size_ms) ||
		    interval_arg(c, slide, "the slide", &out->tvf_win.slide_ms))
			return c->failed ? -EINVAL
					 : sl_sql_plan_fail(c, call->line, call->col,
							    "HOP needs a slide and a size");
	} else if (!strcasecmp(fn, "SESSION")) {
		out->tvf_win.kind = SL_WIN_SESSION;
		if (!gap || interval_arg(c, gap, "the gap", &out->tvf_win.gap_ms))
			return c->failed ? -EINVAL
					 : sl_sql_plan_fail(c, call->line, call->col,
							    "SESSION needs a gap");
	} else {
		out->tvf_win.kind = SL_WIN_CUMULATE;
		if (!size || !step || interval_arg(c, step, "the step", &out->tvf_win.slide_ms) ||
		    interval_arg(c, size, "the max size", &out->tvf_win.size_ms))
			return c->failed ? -EINVAL
					 : sl_sql_plan_fail(c, call->line, call->col,
							    "CUMULATE needs a step and a max size");
		if (out->tvf_win.size_ms % out->tvf_win.slide_ms)
			return sl_sql_plan_fail(c, size->line, size->col,
						"CUMULATE's max size must be a "
						"multiple of its step");
	}
	/* any offset, negative ones too: window starts are offset + k * slide (Flink's
	 * getWindowStartWithOffset takes the offset modulo the step) */
	if (offset && offset->kind != SL_EXPR_INTERVAL)
		return sl_sql_plan_fail(c, offset->line, offset->col,
					"the offset must be an INTERVAL literal");
	if (offset)
		out->tvf_win.offset_ms = offset->ival;
	return 0;
}

/* a = b conjuncts of a join condition, split into left and right column pairs */
struct eq_pairs {
	int l[SL_MAX_KEY_FIELDS], r[SL_MAX_KEY_FIELDS];
	int n;
};

static int split_equi(struct sl_sql_plan_ctx *c, const struct sl_expr *on,
		      const struct sl_sql_plan_rel *L, const struct sl_sql_plan_rel *R,
		      struct eq_pairs *eq)
{
	if (on->kind == SL_EXPR_BINARY && on->op == SL_EXPR_OP_AND)
		return split_equi(c, on->args[0], L, R, eq) || split_equi(c, on->args[1], L, R, eq)
			       ? -EINVAL
			       : 0;
	if (on->kind == SL_EXPR_BINARY && on->op == SL_EXPR_OP_EQ) {
		int a = sl_sql_plan_resolve_plain(L, on->args[0]),
		    b = sl_sql_plan_resolve_plain(R, on->args[1]);

		if (a < 0 || b < 0) {
			a = sl_sql_plan_resolve_plain(L, on->args[1]);
			b = sl_sql_plan_resolve_plain(R, on->args[0]);
		}
		if (a >= 0 && b >= 0) {
			if (eq->n == SL_MAX_KEY_FIELDS)
				return sl_sql_plan_fail(c, on->line, on->col, "too many join keys");
			eq->l[eq->n] = a;
			eq->r[eq->n++] = b;
			return 0;
		}
	}
	return sl_sql_plan_fail(c, on->line, on->col,
				"a temporal join condition must be equalities "
				"between columns of the two sides joined with AND");
}

const struct sl_expr *sl_sql_plan_col_expr(struct sl_sql_plan_ctx *c, const struct sl_sql_col *col)
{
	struct sl_expr *e = sl_sql_plan_own(c, calloc(1, sizeof(*e)), free);
	char **path = e ? sl_sql_plan_own(c, calloc(2, sizeof(char *)), free) : NULL;

	if (!path)
		return NULL;
	e->kind = SL_EXPR_COLUMN;
	if (col->qual) {
		path[0] = (char *)col->qual;
		path[1] = (char *)col->name;
		e->npath = 2;
	} else {
		path[0] = (char *)col->name;
		e->npath = 1;
	}
	e->path = path;
	return e;
}

/* CAST(v AS BIGINT) for v in 0..9: the side marker of a join's union row */
const struct sl_expr *sl_sql_plan_side_expr(struct sl_sql_plan_ctx *c, int v)
{
	static const char *const digits[] = { "0", "1", "2", "3", "4", "5", "6", "7", "8", "9" };
	struct sl_expr *e = sl_sql_plan_own(c, calloc(1, sizeof(*e)), free);
	struct sl_expr *n = e ? sl_sql_plan_own(c, calloc(1, sizeof(*n)), free) : NULL;
	struct sl_expr **args = n ? sl_sql_plan_own(c, calloc(1, sizeof(*args)), free) : NULL;

	if (!args)
		return NULL;
	n->kind = SL_EXPR_INT;
	n->ival = v;
	n->text = (char *)digits[v];
	e->kind = SL_EXPR_CAST;
	e->type.kind = SL_DDL_BIGINT;
	args[0] = n;
	e->args = args;
	e->nargs = 1;
	return e;
}

/* CAST(NULL AS type of col) */
const struct sl_expr *sl_sql_plan_null_of(struct sl_sql_plan_ctx *c, const struct sl_sql_type *t)
{
	struct sl_expr *e = sl_sql_plan_own(c, calloc(1, sizeof(*e)), free);
	struct sl_expr *n = e ? sl_sql_plan_own(c, calloc(1, sizeof(*n)), free) : NULL;
	struct sl_expr **args = n ? sl_sql_plan_own(c, calloc(1, sizeof(*args)), free) : NULL;

	if (!args)
		return NULL;
	n->kind = SL_EXPR_NULL;
	e->kind = SL_EXPR_CAST;
	args[0] = n;
	e->args = args;
	e->nargs = 1;
	switch (t->type) {
	case SL_TYPE_BOOL:
		e->type.kind = SL_DDL_BOOLEAN;
		break;
	case SL_TYPE_INT:
		e->type.kind = SL_DDL_INT;
		break;
	case SL_TYPE_BIGINT:
		e->type.kind = SL_DDL_BIGINT;
		break;
	case SL_TYPE_FLOAT:
		e->type.kind = SL_DDL_FLOAT;
		break;
	case SL_TYPE_DOUBLE:
		e->type.kind = SL_DDL_DOUBLE;
		break;
	case SL_TYPE_STRING:
		e->type.kind = SL_DDL_STRING;
		break;
	case SL_TYPE_TIMESTAMP:
		e->type.kind = SL_DDL_TIMESTAMP;
		e->type.precision = 3;
		break;
	case SL_TYPE_TIMESTAMP_LTZ:
		e->type.kind = SL_DDL_TIMESTAMP_LTZ;
		e->type.precision = 3;
		break;
	case SL_TYPE_DATE:
		e->type.kind = SL_DDL_DATE;
		break;
	case SL_TYPE_DECIMAL:
		e->type.kind = SL_DDL_DECIMAL;
		e->type.precision = (uint32_t)t->prec;
		e->type.scale = (uint32_t)t->scale;
		break;
	}
	return e;
}

/*
 * L JOIN R FOR SYSTEM_TIME AS OF L.rowtime ON keys: both sides are projected onto one union
 * row [__side, left columns, right columns, key columns] (the other side NULL), keyed by the
 * trailing key columns, and joined by the temporal join operator.
 */
static int plan_temporal_join(struct sl_sql_plan_ctx *c, struct sl_job *job,
			      const struct sl_from *f, struct sl_sql_plan_rel *out)
{
	struct sl_sql_plan_rel L, R, LU, RU;
	struct eq_pairs eq = { .n = 0 };
	const struct sl_expr *le[SL_PLAN_MAX_COLS], *re[SL_PLAN_MAX_COLS];
	const char *names[SL_PLAN_MAX_COLS];
	int n, ltime, rtime, keys[SL_MAX_KEY_FIELDS];
	const struct sl_sql_plan_table *rt;
	struct sl_stream *ins[2];
	struct sl_temporal_join_cfg jc;
	struct sl_process_fn *pfn;
	struct sl_schema *os;
	char msg[256];

	if (f->join != SL_JOIN_INNER && f->join != SL_JOIN_LEFT)
		return sl_sql_plan_fail(c, f->line, f->col, "a temporal join is INNER or LEFT");
	if (f->right->kind != SL_FROM_TABLE)
		return sl_sql_plan_fail(c, f->right->line, f->right->col,
					"FOR SYSTEM_TIME AS OF needs a table on the right");
	rt = sl_sql_plan_find_table(c, f->right->name);
	if (!rt)
		return sl_sql_plan_fail(
			c, f->right->line, f->right->col,
			"unknown table '%s' (a versioned "
			"table needs CREATE TABLE with a PRIMARY KEY and a WATERMARK)",
			f->right->name);
	if (sl_sql_plan_from(c, job, f->left, &L))
		return -EINVAL;
	ltime = sl_sql_plan_resolve_plain(&L, f->right->system_time);
	/* AS OF the left's processing time: a lookup join into the table as it is */
	if (ltime >= 0 && L.cols[ltime].proctime)
		return sl_sql_plan_lookup_join(c, job, f, &L, out);
	if (!rt->ddl->npk || !rt->wm_col)
		return sl_sql_plan_fail(c, f->right->line, f->right->col,
					"table '%s' is not a versioned "
					"table: it needs a PRIMARY KEY and a WATERMARK",
					rt->ddl->name);
	if (sl_sql_plan_from(c, job, f->right, &R))
		return -EINVAL;
	if (ltime < 0 || !L.cols[ltime].rowtime)
		return sl_sql_plan_fail(
			c, f->right->system_time->line, f->right->system_time->col,
			"FOR SYSTEM_TIME AS OF must name the left side's rowtime or "
			"processing-time column");
	rtime = -1;
	for (int i = 0; i < R.ncols; i++)
		if (R.cols[i].rowtime)
			rtime = i;
	if (!f->on)
		return sl_sql_plan_fail(c, f->line, f->col, "a temporal join needs ON");
	if (split_equi(c, f->on, &L, &R, &eq))
		return -EINVAL;
	if (L.ncols + R.ncols + eq.n + 1 > SL_PLAN_MAX_COLS)
		return sl_sql_plan_fail(c, f->line, f->col, "the join has more than %d columns",
					SL_PLAN_MAX_COLS);
	/* union row for each side */
	n = 0;
	le[n] = sl_sql_plan_side_expr(c, 0);
	re[n] = sl_sql_plan_side_expr(c, 1);
	names[n++] = "__side";
	for (int i = 0; i < L.ncols; i++, n++) {
		le[n] = sl_sql_plan_col_expr(c, &L.cols[i]);
		re[n] = sl_sql_plan_null_of(c, &L.cols[i].type);
		names[n] = sl_sql_plan_strdup(c, L.cols[i].name);
	}
	for (int i = 0; i < R.ncols; i++, n++) {
		le[n] = sl_sql_plan_null_of(c, &R.cols[i].type);
		re[n] = sl_sql_plan_col_expr(c, &R.cols[i]);
		names[n] = sl_sql_plan_strdup(c, R.cols[i].name);
	}
	for (int k = 0; k < eq.n; k++, n++) {
		char kn[32];

		snprintf(kn, sizeof kn, "__key%d", k);
		le[n] = sl_sql_plan_col_expr(c, &L.cols[eq.l[k]]);
		/* the right key is cast to the left key's type so both encode alike */
		re[n] = sl_sql_plan_col_expr(c, &R.cols[eq.r[k]]);
		names[n] = sl_sql_plan_strdup(c, kn);
		keys[k] = n;
		if (L.cols[eq.l[k]].type.type != R.cols[eq.r[k]].type.type)
			return sl_sql_plan_fail(c, f->on->line, f->on->col,
						"join keys '%s' and '%s' have "
						"different types",
						L.cols[eq.l[k]].name, R.cols[eq.r[k]].name);
	}
	for (int i = 0; i < n; i++)
		if (!le[i] || !re[i] || !names[i])
			return -ENOMEM;
	if (sl_sql_plan_project(c, &L, le, names, n, NULL, "temporal join: probe side", &LU) ||
	    sl_sql_plan_project(c, &R, re, names, n, NULL, "temporal join: versions", &RU))
		return -EINVAL;
	ins[0] = LU.s;
	ins[1] = RU.s;
	LU.s = sl_stream_union_key_by(ins, 2, keys, eq.n);
	if (!LU.s)
		return sl_sql_plan_fail(c, f->line, f->col, "%s", sl_job_error(job)->msg);
	memset(&jc, 0, sizeof(jc));
	jc.in_schema = sl_stream_schema(LU.s);
	jc.nleft = L.ncols;
	jc.nright = R.ncols;
	jc.left_time = 1 + ltime;
	jc.right_time = 1 + L.ncols + rtime;
	jc.left_outer = f->join == SL_JOIN_LEFT;
	jc.ttl_ms = c->state_ttl;
	/* a left row whose key is NULL matches nothing (Flink filters NULL join keys) */
	jc.nkey = eq.n;
	for (int k = 0; k < eq.n; k++)
		jc.left_key[k] = 1 + eq.l[k];
	os = sl_sql_plan_new_schema(c);
	if (!os)
		return -ENOMEM;
	for (int i = 1; i <= L.ncols + R.ncols; i++)
		if (sl_sql_plan_schema_add(c, os, sl_schema_name(jc.in_schema, i),
					   i <= L.ncols ? &L.cols[i - 1].type
							: &R.cols[i - 1 - L.ncols].type,
					   NULL) < 0)
			return -EINVAL;
	pfn = sl_sql_plan_own(c, calloc(1, sizeof(*pfn)), free_tjoin);
	if (!pfn)
		return -ENOMEM;
	if (sl_temporal_join_build(&jc, pfn, msg, sizeof msg) < 0)
		return sl_sql_plan_fail(c, f->line, f->col, "%s", msg);
	out->s = sl_stream_process(LU.s, "temporal join", pfn, os);
	if (!out->s)
		return sl_sql_plan_fail(c, f->line, f->col, "%s", sl_job_error(job)->msg);
	out->changelog = false;
	out->ncols = L.ncols + R.ncols;
	for (int i = 0; i < L.ncols; i++) {
		out->cols[i] = L.cols[i];
		out->cols[i].field = i;
		out->cols[i].match = NULL;
	}
	for (int i = 0; i < R.ncols; i++) {
		out->cols[L.ncols + i] = R.cols[i];
		out->cols[L.ncols + i].field = L.ncols + i;
		out->cols[L.ncols + i].rowtime = false;
		out->cols[L.ncols + i].match = NULL;
		if (f->join == SL_JOIN_LEFT)
			out->cols[L.ncols + i].type.nullable = true;
	}
	return 0;
}

static int plan_from_item(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_from *f,
			  struct sl_sql_plan_rel *out);

/* `AS t (c1, c2, ...)`: the item's visible columns renamed in order (hidden ones, named
 * with '$', keep theirs). */
static int rename_cols(struct sl_sql_plan_ctx *c, const struct sl_from *f,
		       struct sl_sql_plan_rel *out)
{
	uint32_t k = 0;

	for (int i = 0; i < out->ncols; i++)
		if (out->cols[i].name && out->cols[i].name[0] != '$')
			k++;
	if (k != f->nalias_cols)
		return sl_sql_plan_fail(c, f->line, f->col,
					"'%s' names %u column%s but the FROM item has %u", f->alias,
					f->nalias_cols, f->nalias_cols == 1 ? "" : "s", k);
	k = 0;
	for (int i = 0; i < out->ncols; i++)
		if (out->cols[i].name && out->cols[i].name[0] != '$')
			out->cols[i].name = f->alias_cols[k++];
	return 0;
}

int sl_sql_plan_from(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_from *f,
		     struct sl_sql_plan_rel *out)
{
	if (plan_from_item(c, job, f, out))
		return -EINVAL;
	return f->nalias_cols ? rename_cols(c, f, out) : 0;
}

static int plan_from_item(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_from *f,
			  struct sl_sql_plan_rel *out)
{
	memset(out, 0, sizeof(*out));
	switch (f->kind) {
	case SL_FROM_TABLE: {
		struct sl_sql_plan_table *t = sl_sql_plan_find_table(c, f->name);
		const struct sl_sql_plan_cte *e = find_cte(c, f->name);
		struct sl_sql_plan_view *v;
		const char *qual = f->alias ? f->alias : f->name;

		/* a WITH name shadows a table or view of the same name, as in Flink */
		if (e)
			return plan_cte(c, job, e, qual, out);
		if (t) {
			const struct sl_expr *pt = c->pending_time, *pw = c->pending_wm;

			c->pending_time = c->pending_wm = NULL;
			return sl_sql_plan_scan_table(c, job, t, qual, pt, pw, out);
		}
		v = sl_sql_plan_find_view(c, f->name);
		if (v)
			return plan_view(c, job, v, qual, out);
		return sl_sql_plan_fail(c, f->line, f->col, "unknown table or view '%s'", f->name);
	}
	case SL_FROM_SUBQUERY:
		if (sl_sql_plan_query(c, job, f->sub, out))
			return -EINVAL;
		requalify(out, f->alias);
		return 0;
	case SL_FROM_TVF:
		return plan_tvf(c, job, f, out);
	case SL_FROM_JOIN:
		if (f->right->kind == SL_FROM_TABLE && f->right->system_time)
			return plan_temporal_join(c, job, f, out);
		return sl_sql_plan_join(c, job, f, out);
	}
	return sl_sql_plan_fail(c, f->line, f->col, "unsupported FROM item");
}

/* ---- deduplication -------------------------------------------------------------------- */

/* WHERE rn = 1 (or rn <= 1, rn < 2) over a relation carrying a pending ROW_NUMBER(). */
static bool is_rownum_one(const struct sl_sql_plan_rel *rel, const struct sl_expr *w)
{
	const struct sl_expr *col, *lit;

	if (!w || w->kind != SL_EXPR_BINARY)
		return false;
	col = w->args[0];
	lit = w->args[1];
	if (col->kind != SL_EXPR_COLUMN || lit->kind != SL_EXPR_INT)
		return false;
	if (strcasecmp(col->path[col->npath - 1], rel->rownum_name))
		return false;
	return (w->op == SL_EXPR_OP_EQ && lit->ival == 1) ||
	       (w->op == SL_EXPR_OP_LE && lit->ival == 1) ||
	       (w->op == SL_EXPR_OP_LT && lit->ival == 2);
}

static int plan_dedup(struct sl_sql_plan_ctx *c, struct sl_job *job, struct sl_sql_plan_rel *rel,
		      const struct sl_expr *where)
{
	struct sl_dedup_cfg dc;
	struct sl_process_fn *pfn;
	int keys[SL_MAX_KEY_FIELDS];
	char msg[256];
	struct sl_stream *k;

	if (rel->changelog)
		return sl_sql_plan_fail(c, rel->rownum_line, rel->rownum_col,
					"deduplication needs an "
					"insert-only input, but this input is a changelog");
	for (int i = 0; i < rel->nrownum_part; i++)
		keys[i] = rel->cols[rel->rownum_part[i]].field;
	k = sl_stream_key_by(rel->s, keys, rel->nrownum_part);
	if (!k)
		return sl_sql_plan_fail(c, rel->rownum_line, rel->rownum_col, "%s",
					sl_job_error(job)->msg);
	memset(&dc, 0, sizeof(dc));
	dc.schema = sl_stream_schema(rel->s);
	dc.order_field = rel->rownum_order >= 0 ? rel->cols[rel->rownum_order].field : -1;
	dc.keep_last = rel->rownum_desc;
	dc.emit_update_before = true;
	dc.ttl_ms = c->state_ttl;
	dc.input_insert_only = true;
	pfn = sl_sql_plan_own(c, calloc(1, sizeof(*pfn)), free_dedup);
	if (!pfn)
		return -ENOMEM;
	if (sl_dedup_build(&dc, pfn, msg, sizeof msg) < 0)
		return sl_sql_plan_fail(c, rel->rownum_line, rel->rownum_col, "deduplication: %s",
					msg);
	rel->s = sl_stream_process(k, "deduplicate", pfn, dc.schema);
	if (!rel->s)
		return sl_sql_plan_fail(c, rel->rownum_line, rel->rownum_col, "%s",
					sl_job_error(job)->msg);
	/* keep-first on event time and keep-last both update earlier results */
	rel->changelog = rel->rownum_desc || rel->rownum_order >= 0;
	rel->rownum = false;
	return 0;
}

/* ---- SELECT --------------------------------------------------------------------------- */

/* The output column of a subquery that e (a PARTITION BY or ORDER BY item) names: by name
 * on the output, else as a column of the input the subquery selected (under another
 * name). -1 when it selected none. */
static int selected_col(const struct sl_sql_plan_rel *out, const struct sl_sql_plan_rel *in,
			const struct sl_expr *const *exprs, int n, const struct sl_expr *e)
{
	int col = sl_sql_plan_resolve_plain(out, e);

	if (col >= 0)
		return col;
	col = sl_sql_plan_resolve_plain(in, e);
	for (int j = 0; col >= 0 && j < n; j++)
		if (sl_sql_plan_resolve_plain(in, exprs[j]) == col)
			return j;
	return -1;
}

static bool is_agg_name(const char *n)
{
	static const char *const aggs[] = { "COUNT",	   "SUM",	 "AVG",	    "MIN", "MAX",
					    "FIRST_VALUE", "LAST_VALUE", "LISTAGG", NULL };

	for (int i = 0; aggs[i]; i++)
		if (!strcasecmp(n, aggs[i]))
			return true;
	return !strcmp(n, SL_SQL_PLAN_M2) || sl_sql_plan_is_reduced_agg(n);
}

bool sl_sql_plan_has_agg(const struct sl_expr *e)
{
	if (!e)
		return false;
	if (e->kind == SL_EXPR_CALL && !e->over && is_agg_name(e->text))
		return true;
	for (uint32_t i = 0; i < e->nargs; i++)
		if (sl_sql_plan_has_agg(e->args[i]))
			return true;
	return sl_sql_plan_has_agg(e->case_operand) || sl_sql_plan_has_agg(e->case_else);
}

/*
 * A window TVF's aggregation keeps its window: the output columns that select window_start,
 * window_end or window_time (under any alias) are that window's properties, so a ranking
 * over them is a window Top-N and a join on them a window join (Flink's window properties
 * of a window aggregate).
 */
static int mark_window_props(struct sl_sql_plan_ctx *c, const struct sl_query *q,
			     const struct sl_window_spec *win, struct sl_sql_plan_rel *out)
{
	static const char *const names[] = { "window_start", "window_end", "window_time" };
	struct sl_window_spec *w = NULL;

	for (uint32_t i = 0; i < q->nitems; i++)
		if (q->items[i].star)
			return 0; /* the columns are not the items one for one */
	for (uint32_t i = 0; i < q->nitems && (int)i < out->ncols; i++) {
		const struct sl_expr *e = q->items[i].expr;

		if (e->kind != SL_EXPR_COLUMN)
			continue;
		for (int k = 0; k < 3; k++) {
			if (strcasecmp(e->path[e->npath - 1], names[k]))
				continue;
			if (!w) {
				w = sl_sql_plan_own(c, malloc(sizeof(*w)), free);
				if (!w)
					return -ENOMEM;
				*w = *win;
			}
			out->cols[i].win_prop = SL_SQL_WIN_START + k;
			out->cols[i].win = w;
		}
	}
	return 0;
}

static int plan_select(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		       struct sl_sql_plan_rel *out);

int sl_sql_plan_query(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		      struct sl_sql_plan_rel *out)
{
	struct sl_sql_plan_with w;
	int rc;

	if (!q->nctes)
		return plan_select(c, job, q, out);
	if (sl_sql_plan_with_begin(c, q, &w))
		return -EINVAL;
	rc = plan_select(c, job, q, out);
	sl_sql_plan_with_end(c, &w);
	return rc;
}

/* One query (a union of blocks, or a SELECT block) in the scope of its WITH. */
static int plan_select(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		       struct sl_sql_plan_rel *out)
{
	struct sl_sql_plan_rel rel;
	const struct sl_expr *exprs[SL_PLAN_MAX_COLS];
	const char *names[SL_PLAN_MAX_COLS];
	const struct sl_expr *where;
	const struct sl_from *from;
	const struct sl_select_item *rn_item = NULL;
	bool agg = q->ngroup_by > 0 || q->having || q->ngsets > 0;
	int n = 0;

	if (q->uid && q != c->uid_query)
		return sl_sql_plan_fail(c, q->uid_line, q->uid_col,
					"a UID hint names a statement's operators: write it "
					"after the statement's outer SELECT");
	if (q->set_op != SL_SET_NONE)
		return sl_sql_plan_union(c, job, q, out);
	if (q->norder_by || q->limit >= 0)
		return sl_sql_plan_fail(c, q->line, q->col,
					"ORDER BY and LIMIT are not supported on "
					"unbounded streams");
	if (q->values)
		return sl_sql_plan_values(c, job, q, out);
	if (q->distinct) {
		/* SELECT DISTINCT items = SELECT items GROUP BY items */
		struct sl_query *dq = sl_sql_plan_own(c, malloc(sizeof(*dq)), free);
		struct sl_expr **g = sl_sql_plan_own(c, calloc(q->nitems + 1, sizeof(*g)), free);

		if (!dq || !g)
			return -ENOMEM;
		if (q->ngroup_by || q->having)
			return sl_sql_plan_fail(c, q->line, q->col,
						"SELECT DISTINCT with GROUP BY: drop "
						"DISTINCT or the GROUP BY");
		*dq = *q;
		dq->distinct = false;
		if (q == c->uid_query)
			c->uid_query = dq;
		dq->ctes = NULL; /* in scope already */
		dq->nctes = 0;
		for (uint32_t i = 0; i < q->nitems; i++) {
			if (q->items[i].star || sl_sql_plan_has_agg(q->items[i].expr))
				return sl_sql_plan_fail(c, q->items[i].line, q->items[i].col,
							"SELECT DISTINCT "
							"takes named columns or expressions");
			g[i] = q->items[i].expr;
		}
		dq->group_by = g;
		dq->ngroup_by = q->nitems;
		return sl_sql_plan_query(c, job, dq, out);
	}
	from = q->from;
	where = q->where;
	/*
	 * FROM a, b WHERE p is FROM a JOIN b ON p, as Flink's planner pushes the filter into
	 * the join: the WHERE's equalities become the join's key (plan_comma.c, each conjunct
	 * on the lowest comma join it names). Without it every pair would be made under one
	 * key, on one shard, and filtered after: quadratic in the input (Nexmark q4, 50,000
	 * events: 89 s). Not with a subquery in the WHERE (a semi or anti join of its own,
	 * below).
	 */
	if (sl_sql_plan_comma_joins(c, &from, &where))
		return -ENOMEM;
	if (from ? sl_sql_plan_from(c, job, from, &rel)
		 : sl_sql_plan_values_one(c, job, q->line, q->col, &rel))
		return -EINVAL;
	/* [NOT] IN / EXISTS (SELECT ...): window semi and anti joins onto rel */
	if (sl_sql_plan_has_subquery(where) && sl_sql_plan_subquery_joins(c, job, &rel, &where))
		return -EINVAL;
	if (rel.rownum) {
		/* ROW_NUMBER() over a time attribute kept at 1 is deduplication (Flink's
		 * rule); anything else ranked is Top-N, and partitioned by a window either is
		 * the window's (plan_topn.c) */
		if (rel.rownum_time && is_rownum_one(&rel, where) &&
		    !sl_sql_plan_topn_windowed(&rel)) {
			if (plan_dedup(c, job, &rel, where))
				return -EINVAL;
			where = NULL;
		} else if (sl_sql_plan_topn(c, job, q, &rel, &where)) {
			return -EINVAL;
		}
	}
	if (sl_sql_plan_query_has_over(q)) {
		/* OVER aggregates see the rows the WHERE keeps; their results are columns */
		if (where && sl_sql_plan_filter(c, &rel, where))
			return -EINVAL;
		where = NULL;
		if (sl_sql_plan_over(c, job, q, &rel))
			return -EINVAL;
	}
	for (uint32_t i = 0; i < q->nitems; i++)
		if (q->items[i].expr && sl_sql_plan_has_agg(q->items[i].expr))
			agg = true;
	if (agg) {
		bool tvf = rel.tvf;
		struct sl_window_spec win = rel.tvf_win;

		if (where && sl_sql_plan_filter(c, &rel, where))
			return -EINVAL;
		if (q->ngsets ? sl_sql_plan_grouping_sets(c, job, q, &rel, out)
			      : sl_sql_plan_agg(c, job, q, &rel, out))
			return -EINVAL;
		/* grouping sets without the window in each set drop the TVF (rel.tvf false) */
		return tvf && rel.tvf ? mark_window_props(c, q, &win, out) : 0;
	}
	if (rel.tvf && sl_sql_plan_window_assign(c, &rel, q->line, q->col))
		return -EINVAL;
	for (uint32_t i = 0; i < q->nitems; i++) {
		const struct sl_select_item *it = &q->items[i];

		if (it->star) {
			for (int k = 0; k < rel.ncols; k++) {
				const struct sl_sql_col *col = &rel.cols[k];

				if (!col->name || col->name[0] == '$')
					continue;
				if (it->star_qual &&
				    (!col->qual || strcasecmp(col->qual, it->star_qual)))
					continue;
				if (n == SL_PLAN_MAX_COLS)
					return sl_sql_plan_fail(c, it->line, it->col,
								"too many columns");
				exprs[n] = sl_sql_plan_col_expr(c, col);
				/* a flattened ROW leaf keeps its full path as its name */
				names[n++] = col->name;
			}
			continue;
		}
		if (it->expr->kind == SL_EXPR_CALL && it->expr->over &&
		    !sl_sql_plan_is_over_agg(it->expr)) {
			if (strcasecmp(it->expr->text, "ROW_NUMBER") &&
			    strcasecmp(it->expr->text, "RANK") &&
			    strcasecmp(it->expr->text, "DENSE_RANK"))
				return sl_sql_plan_fail(
					c, it->expr->line, it->expr->col,
					"OVER windows other than ROW_NUMBER(), RANK() and "
					"DENSE_RANK() (deduplication and Top-N) are not "
					"supported");
			if (rn_item)
				return sl_sql_plan_fail(c, it->expr->line, it->expr->col,
							"one ranking function per SELECT");
			rn_item = it;
			continue;
		}
		if (n == SL_PLAN_MAX_COLS)
			return sl_sql_plan_fail(c, it->line, it->col, "too many columns");
		exprs[n] = it->expr;
		names[n++] = item_name(c, it, (int)i);
	}
	if (n == 0)
		return sl_sql_plan_fail(c, q->line, q->col, "the query selects no column");
	if (sl_sql_plan_project(c, &rel, exprs, names, n, where, "select", out))
		return -EINVAL;
	if (rn_item) {
		const struct sl_expr *e = rn_item->expr;

		if (!rn_item->alias)
			return sl_sql_plan_fail(c, e->line, e->col,
						"name the %s() column (AS rn) and filter on it "
						"outside: WHERE rn = 1 or WHERE rn <= N",
						e->text);
		if (e->norder == 0 || e->norder > SL_PLAN_MAX_ORDER ||
		    e->npartition >= SL_MAX_KEY_FIELDS)
			return sl_sql_plan_fail(c, e->line, e->col,
						"%s() needs OVER ([PARTITION BY keys] ORDER BY "
						"columns [ASC|DESC]), "
						"at most %d keys and %d columns",
						e->text, SL_MAX_KEY_FIELDS - 1, SL_PLAN_MAX_ORDER);
		out->rownum = true;
		out->rownum_name = rn_item->alias;
		out->rownum_line = e->line;
		out->rownum_col = e->col;
		out->rownum_desc = e->order[0].desc;
		out->rownum_fn = !strcasecmp(e->text, "RANK")	      ? SL_TOPN_RANK
				 : !strcasecmp(e->text, "DENSE_RANK") ? SL_TOPN_DENSE_RANK
								      : SL_TOPN_ROW_NUMBER;
		for (uint32_t k = 0; k < e->npartition; k++) {
			int col = selected_col(out, &rel, exprs, n, e->partition[k]);

			if (col < 0)
				return sl_sql_plan_fail(c, e->partition[k]->line,
							e->partition[k]->col,
							"PARTITION BY must name selected columns");
			out->rownum_part[out->nrownum_part++] = col;
		}
		for (uint32_t k = 0; k < e->norder; k++) {
			int col = selected_col(out, &rel, exprs, n, e->order[k].expr);

			if (col < 0)
				return sl_sql_plan_fail(
					c, e->order[k].expr->line, e->order[k].expr->col,
					"ORDER BY of %s() must name selected columns", e->text);
			out->rownum_orders[k] = col;
			out->rownum_descs[k] = e->order[k].desc;
		}
		out->nrownum_order = (int)e->norder;
		{
			int oc = out->rownum_orders[0];

			out->rownum_time = out->rownum_fn == SL_TOPN_ROW_NUMBER && e->norder == 1 &&
					   (out->cols[oc].proctime || out->cols[oc].rowtime);
			out->rownum_order = out->cols[oc].proctime ? -1 : oc;
		}
	}
	return 0;
}

/* ---- sinks ---------------------------------------------------------------------------- */

int sl_sql_plan_select_print(struct sl_sql_plan_ctx *c, struct sl_job *job,
			     const struct sl_stmt *st)
{
	struct sl_sql_plan_rel rel;
	struct sl_print_sink_cfg *pc;

	if (sl_sql_plan_query(c, job, st->query, &rel))
		return -EINVAL;
	if (rel.rownum)
		return sl_sql_plan_fail(c, rel.rownum_line, rel.rownum_col,
					"a ranking function must be "
					"filtered by an outer WHERE %s = 1 or WHERE %s <= N",
					rel.rownum_name, rel.rownum_name);
	pc = sl_sql_plan_own(c, calloc(1, sizeof(*pc)), free);
	if (!pc)
		return -ENOMEM;
	pc->fd = c->opts.out_fd > 0 ? c->opts.out_fd : 1;
	pc->subtask_prefix = false;
	if (sl_stream_sink(rel.s, "print", &sl_print_sink_ops, pc))
		return sl_sql_plan_fail(c, st->line, st->col, "%s", sl_job_error(job)->msg);
	return 0;
}

/* Whether a value of type a is stored in a row exactly as type b stores it, so that the
 * conversion of a column from a to b is a copy (sl_prog_eval_into converts only when type,
 * precision or scale differ). */
static bool same_type(const struct sl_sql_type *a, const struct sl_sql_type *b)
{
	return a->type == b->type && a->prec == b->prec && a->scale == b->scale && !a->null_type &&
	       !b->null_type;
}

/* Whether writing rel's stream into table t is a rename: every column of t is the stream's
 * field of the same index, of the same type. */
static bool renames_only(const struct sl_sql_plan_rel *rel, const int *from,
			 const struct sl_sql_plan_table *t, const struct sl_schema *schema)
{
	const struct sl_schema *in = sl_stream_schema(rel->s);

	if (!in || sl_schema_nfields(in) != t->nphys || sl_schema_nfields(schema) != t->nphys)
		return false;
	for (int i = 0; i < t->nphys; i++)
		if (from[i] < 0 || rel->cols[from[i]].field != i ||
		    !same_type(&rel->cols[from[i]].type, &t->phys_type[i]) ||
		    sl_schema_type(in, i) != sl_schema_type(schema, i) ||
		    sl_schema_precision(in, i) != sl_schema_precision(schema, i) ||
		    sl_schema_scale(in, i) != sl_schema_scale(schema, i))
			return false;
	return true;
}

int sl_sql_plan_insert(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_stmt *st)
{
	struct sl_sql_plan_table *t = sl_sql_plan_find_table(c, st->target);
	struct sl_sql_plan_rel rel, cast;
	struct sl_schema *schema;
	struct sl_sql_conn *k;
	const struct sl_expr *exprs[SL_PLAN_MAX_COLS];
	const char *names[SL_PLAN_MAX_COLS];
	bool same = true;

	if (!t)
		return sl_sql_plan_fail(
			c, st->line, st->col, "INSERT INTO '%s': no such table%s", st->target,
			sl_sql_plan_find_view(c, st->target) ? " (it is a view)" : "");
	schema = sl_sql_plan_table_schema(c, t);
	if (!schema)
		return -EINVAL;
	k = sl_sql_plan_connector(c, t->ddl, schema, true);
	if (!k)
		return -EINVAL;
	if (!k->sink_ops)
		return sl_sql_plan_fail(c, st->line, st->col,
					"table '%s' cannot be written: its connector "
					"is a source only",
					st->target);
	if (sl_sql_plan_query(c, job, st->query, &rel))
		return -EINVAL;
	if (st->ncols ? rel.ncols != (int)st->ncols : rel.ncols != t->nphys)
		return sl_sql_plan_fail(c, st->line, st->col,
					"INSERT INTO '%s': the query has %d columns, "
					"the %s %d",
					st->target, rel.ncols, st->ncols ? "column list" : "table",
					st->ncols ? (int)st->ncols : t->nphys);
	if (rel.changelog && !k->changelog)
		return sl_sql_plan_fail(
			c, st->line, st->col,
			"table '%s' takes only inserts, but the query "
			"produces updates (-U/+U/-D); write it to a print or upsert sink",
			st->target);
	/* INSERT INTO t (c1, c2) SELECT ...: the listed columns get the query's, in that
	 * order; the others are NULL, as Flink fills them */
	int from[SL_PLAN_MAX_COLS];

	for (int i = 0; i < t->nphys; i++)
		from[i] = st->ncols ? -1 : i;
	for (uint32_t j = 0; j < st->ncols; j++) {
		int found = -1;

		for (int i = 0; i < t->nphys; i++)
			if (!strcasecmp(t->phys_name[i], st->cols[j]))
				found = i;
		if (found < 0)
			return sl_sql_plan_fail(c, st->line, st->col,
						"INSERT INTO '%s': no column '%s'", st->target,
						st->cols[j]);
		if (from[found] >= 0)
			return sl_sql_plan_fail(c, st->line, st->col,
						"INSERT INTO '%s': column '%s' is "
						"listed twice",
						st->target, st->cols[j]);
		from[found] = (int)j;
	}
	same = !st->ncols;
	for (int i = 0; i < t->nphys; i++) {
		const struct sl_sql_type *b = &t->phys_type[i];

		if (from[i] < 0) {
			exprs[i] = sl_sql_plan_null_of(c, b);
		} else {
			const struct sl_sql_type *a = &rel.cols[from[i]].type;

			same &= a->type == b->type &&
				(a->type != SL_TYPE_DECIMAL || a->scale == b->scale);
			/* sinks name fields (JSON keys) by the table's columns, not the query's */
			same &= !strcmp(
				sl_schema_name(sl_stream_schema(rel.s), rel.cols[from[i]].field),
				t->phys_name[i]);
			exprs[i] = sl_sql_plan_col_expr(c, &rel.cols[from[i]]);
		}
		names[i] = t->phys_name[i];
		if (!exprs[i])
			return -ENOMEM;
	}
	if (!same && renames_only(&rel, from, t, schema)) {
		/* only the names differ: the sink is told the table's, no operator copies rows */
		if (sl_stream_sink_as(rel.s, t->ddl->name, k->sink_ops, k->cfg, schema))
			return sl_sql_plan_fail(c, st->line, st->col, "%s", sl_job_error(job)->msg);
		return 0;
	}
	if (!same) {
		/* convert to the table's names and types (widening, DECIMAL rescale) */
		struct sl_calc *calc =
			sl_sql_plan_own(c, sl_calc_create(t->nphys, c->nshards), sl_calc_destroy);

		if (!calc)
			return -ENOMEM;
		for (int i = 0; i < t->nphys; i++) {
			struct sl_sql_type ty;
			struct sl_prog *p = sl_sql_plan_compile(c, exprs[i], &rel, &ty);

			if (!p)
				return -EINVAL;
			sl_calc_set_out(calc, i, p, &t->phys_type[i]);
			/* a column that only changes its name (the usual case: the sink's names
			 * differ from the query's) is copied slot for slot, not interpreted */
			if (from[i] >= 0 && same_type(&rel.cols[from[i]].type, &t->phys_type[i]))
				sl_calc_set_copy(calc, i, rel.cols[from[i]].field);
		}
		cast.s = sl_calc_stream(rel.s, "cast to sink", calc, schema);
		rel.s = cast.s;
	}
	(void)names;
	if (!rel.s || sl_stream_sink(rel.s, t->ddl->name, k->sink_ops, k->cfg))
		return sl_sql_plan_fail(c, st->line, st->col, "%s", sl_job_error(job)->msg);
	return 0;
}
