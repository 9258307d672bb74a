/*
 * plan_agg.c - GROUP BY: window aggregations (legacy GROUP BY TUMBLE/HOP/SESSION(...) and
 * the window TVFs grouped by window_start, window_end) and the updating GROUP BY.
 *
 * sl_sql_plan_agg() reads the GROUP BY (read_group_by) and the aggregate calls of the query
 * (collect_query_aggs), then builds the same four steps every time:
 *   1. plan_agg_input: a calc computes the group keys and every aggregate's argument into
 *      one row (none when they are all plain columns);
 *   2. key_by the group keys (a constant key when there is none: a global aggregate);
 *   3. add_window_agg or add_group_agg: the window operator or the group aggregate process
 *      function;
 *   4. agg_output_columns (and add_window_time for window_time / *_ROWTIME), then
 *      plan_having_select: HAVING and the SELECT list are compiled over the aggregate's
 *      output, where a group expression, an aggregate call or a window property
 *      (TUMBLE_START(ts, ...), window_end) is a column through struct sl_sql_col.match, so
 *      `CAST(AVG(x) AS INT)` or `TUMBLE_END(ts, INTERVAL '5' SECOND)` compile like any
 *      column expression.
 * Equal aggregate calls are computed once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"
#include "late_rows.h"
#include "group_agg.h"
#include "plan_int.h"

struct agg_call {
	const struct sl_expr *call;
	enum sl_agg_kind kind;
	int arg_col;		   /* column of the pre-aggregation row, -1 for COUNT(*) */
	const struct sl_expr *arg; /* the argument computed before aggregating */
	const char *sep;	   /* LISTAGG: its separator literal, NULL: ',' */
	bool distinct;		   /* SUM(DISTINCT x), AVG(DISTINCT x) */
};

/* One GROUP BY as sl_sql_plan_agg() builds it, each part filled by the step named. */
struct agg_plan {
	/* read_group_by(), collect_query_aggs() */
	const struct sl_expr *keys[SL_MAX_KEY_FIELDS];
	int nkeys;
	/* legacy group window */
	const struct sl_expr *wcall; /* TUMBLE(ts, size) in GROUP BY, or NULL */
	bool windowed;
	bool tvf_time; /* a window TVF's GROUP BY names window_time */
	struct sl_window_spec win;
	struct agg_call aggs[SL_PLAN_MAX_COLS];
	int naggs;
	/* 1. plan_agg_input(): the row the aggregate reads */
	struct sl_sql_plan_rel pr;
	int key_fields[SL_MAX_KEY_FIELDS]; /* of pr's stream */
	int nk;				   /* nkeys, or 1: the constant key of a global aggregate */
	bool const_key;
	/* 3. add_window_agg() / add_group_agg(): the aggregate's output stream */
	struct sl_stream *aggd;
	char *agg_names[SL_PLAN_MAX_COLS]; /* its field of aggregate i */
	int wstart, wend;		   /* its window_start / window_end fields; -1: none */
	/* 4. agg_output_columns(), add_window_time(): what HAVING and SELECT see */
	struct sl_sql_plan_rel post;
};

void sl_sql_plan_free_group_agg(void *fn)
{
	sl_group_agg_free(fn);
	free(fn);
}

enum sl_agg_kind sl_sql_plan_agg_kind(const char *name)
{
	static const struct {
		const char *name;
		enum sl_agg_kind kind;
	} names[] = {
		{ "COUNT", SL_AGG_COUNT },
		{ "SUM", SL_AGG_SUM },
		{ "AVG", SL_AGG_AVG },
		{ "MIN", SL_AGG_MIN },
		{ "MAX", SL_AGG_MAX },
		{ "FIRST_VALUE", SL_AGG_FIRST_VALUE },
		{ "LAST_VALUE", SL_AGG_LAST_VALUE },
		{ "LISTAGG", SL_AGG_LISTAGG },
		{ SL_SQL_PLAN_M2, SL_AGG_M2 },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(name, names[i].name))
			return names[i].kind;
	return 0;
}

static int find_or_add_agg(struct sl_sql_plan_ctx *c, struct agg_plan *ap, const struct sl_expr *e)
{
	enum sl_agg_kind kind = sl_sql_plan_agg_kind(e->text);

	for (int i = 0; i < ap->naggs; i++)
		if (sl_sql_plan_expr_equal(ap->aggs[i].call, e))
			return 0;
	if (kind == SL_AGG_COUNT &&
	    (e->nargs == 0 || (e->nargs == 1 && e->args[0]->kind == SL_EXPR_STAR)))
		kind = SL_AGG_COUNT_STAR;
	else if (kind == SL_AGG_LISTAGG && e->nargs == 2 && e->args[1]->kind != SL_EXPR_STRING)
		return sl_sql_plan_fail(c, e->args[1]->line, e->args[1]->col,
					"the separator of LISTAGG must be a string literal, "
					"as in Flink");
	else if (kind == SL_AGG_LISTAGG ? e->nargs < 1 || e->nargs > 2 : e->nargs != 1)
		return sl_sql_plan_fail(c, e->line, e->col, "%s takes %s", e->text,
					kind == SL_AGG_LISTAGG ? "a value and an optional separator"
							       : "one argument");
	else if (e->args[0]->kind == SL_EXPR_STAR)
		return sl_sql_plan_fail(c, e->line, e->col, "%s takes one argument", e->text);
	/* MIN and MAX of the distinct values are MIN and MAX */
	if (e->distinct) {
		if (kind == SL_AGG_COUNT)
			kind = SL_AGG_COUNT_DISTINCT;
		else if (kind != SL_AGG_MIN && kind != SL_AGG_MAX && kind != SL_AGG_SUM &&
			 kind != SL_AGG_AVG)
			return sl_sql_plan_fail(c, e->line, e->col,
						"%s(DISTINCT ...) is not supported; DISTINCT is "
						"taken by COUNT, SUM, AVG, MIN and MAX",
						e->text);
	}
	for (uint32_t i = 0; i < e->nargs; i++)
		if (sl_sql_plan_has_agg(e->args[i]))
			return sl_sql_plan_fail(c, e->args[i]->line, e->args[i]->col,
						"aggregate calls cannot be nested");
	if (ap->naggs == SL_PLAN_MAX_COLS)
		return sl_sql_plan_fail(c, e->line, e->col, "too many aggregates");
	ap->aggs[ap->naggs].call = e;
	ap->aggs[ap->naggs].kind = kind;
	ap->aggs[ap->naggs].arg_col = -1;
	ap->aggs[ap->naggs].arg = kind == SL_AGG_COUNT_STAR ? NULL : e->args[0];
	ap->aggs[ap->naggs].sep = NULL;
	ap->aggs[ap->naggs].distinct = e->distinct && (kind == SL_AGG_SUM || kind == SL_AGG_AVG);
	/* the operators borrow it while the job runs, longer than the statement's tree lives */
	if (kind == SL_AGG_LISTAGG && e->nargs == 2 &&
	    !(ap->aggs[ap->naggs].sep = sl_sql_plan_strdup(c, e->args[1]->text)))
		return -ENOMEM;
	if (e->filter) {
		/*
		 * agg(x) FILTER (WHERE cond) is agg(CASE WHEN cond THEN x END): every aggregate
		 * skips NULLs, so rows failing cond count for nothing. COUNT(*) counts a 1.
		 */
		static const struct sl_expr one = { .kind = SL_EXPR_INT, .ival = 1, .text = "1" };
		struct sl_expr *cs = sl_sql_plan_own(c, calloc(1, sizeof(*cs)), free);
		struct sl_expr **args =
			cs ? sl_sql_plan_own(c, calloc(2, sizeof(*args)), free) : NULL;

		if (!args)
			return -ENOMEM;
		cs->kind = SL_EXPR_CASE;
		cs->line = e->filter->line;
		cs->col = e->filter->col;
		args[0] = e->filter;
		args[1] = kind == SL_AGG_COUNT_STAR ? (struct sl_expr *)&one : e->args[0];
		cs->args = args;
		cs->nargs = 2;
		if (kind == SL_AGG_COUNT_STAR)
			ap->aggs[ap->naggs].kind = SL_AGG_COUNT;
		ap->aggs[ap->naggs].arg = cs;
	}
	ap->naggs++;
	return 0;
}

static int collect_aggs(struct sl_sql_plan_ctx *c, struct agg_plan *ap, const struct sl_expr *e)
{
	if (!e)
		return 0;
	if (e->kind == SL_EXPR_CALL && !e->over && sl_sql_plan_has_agg(e) && e->text &&
	    (e->nargs == 0 || !sl_sql_plan_has_agg(e->args[0]) || e->kind == SL_EXPR_CALL)) {
		/* the outermost aggregate call of this branch */
		static const char *const aggs[] = { "COUNT",	  "SUM",     "AVG",
						    "MIN",	  "MAX",     "FIRST_VALUE",
						    "LAST_VALUE", "LISTAGG", SL_SQL_PLAN_M2,
						    NULL };

		for (int i = 0; aggs[i]; i++)
			if (!strcasecmp(e->text, aggs[i]))
				return find_or_add_agg(c, ap, e);
	}
	for (uint32_t i = 0; i < e->nargs; i++)
		if (collect_aggs(c, ap, e->args[i]))
			return -EINVAL;
	if (collect_aggs(c, ap, e->case_operand) || collect_aggs(c, ap, e->case_else))
		return -EINVAL;
	return 0;
}

static bool is_call(const struct sl_expr *e, const char *name)
{
	return e->kind == SL_EXPR_CALL && !e->over && !strcasecmp(e->text, name);
}

static int interval_of(struct sl_sql_plan_ctx *c, const struct sl_expr *e, const char *what,
		       sl_ts_t *ms)
{
	if (e->kind != SL_EXPR_INTERVAL || e->ival <= 0)
		return sl_sql_plan_fail(c, e->line, e->col,
					"%s must be a positive INTERVAL literal", what);
	*ms = e->ival;
	return 0;
}

/* GROUP BY TUMBLE(ts, size) / HOP(ts, slide, size) / SESSION(ts, gap) */
static int legacy_window(struct sl_sql_plan_ctx *c, struct agg_plan *ap,
			 const struct sl_sql_plan_rel *rel, const struct sl_expr *g)
{
	int tcol;

	if (ap->wcall)
		return sl_sql_plan_fail(c, g->line, g->col, "only one group window per GROUP BY");
	if (g->nargs < 2)
		return sl_sql_plan_fail(c, g->line, g->col,
					"%s needs a time attribute and an interval", g->text);
	tcol = sl_sql_plan_resolve_plain(rel, g->args[0]);
	if (tcol < 0 || (!rel->cols[tcol].rowtime && !rel->cols[tcol].proctime))
		return sl_sql_plan_fail(c, g->args[0]->line, g->args[0]->col,
					"the first argument of %s must be a time attribute: a "
					"rowtime (a column with WATERMARK FOR) or PROCTIME()",
					g->text);
	memset(&ap->win, 0, sizeof(ap->win));
	ap->win.proctime = rel->cols[tcol].proctime;
	if (is_call(g, "TUMBLE")) {
		ap->win.kind = SL_WIN_TUMBLE;
		if (g->nargs > 3 || interval_of(c, g->args[1], "the window size", &ap->win.size_ms))
			return c->failed ? -EINVAL
					 : sl_sql_plan_fail(c, g->line, g->col, "TUMBLE(ts, size)");
		if (g->nargs == 3 && interval_of(c, g->args[2], "the offset", &ap->win.offset_ms))
			return -EINVAL;
	} else if (is_call(g, "HOP")) {
		ap->win.kind = SL_WIN_HOP;
		if (g->nargs != 3 || interval_of(c, g->args[1], "the slide", &ap->win.slide_ms) ||
		    interval_of(c, g->args[2], "the window size", &ap->win.size_ms))
			return c->failed ? -EINVAL
					 : sl_sql_plan_fail(c, g->line, g->col,
							    "HOP(ts, slide, size)");
	} else {
		ap->win.kind = SL_WIN_SESSION;
		if (g->nargs != 2 || interval_of(c, g->args[1], "the gap", &ap->win.gap_ms))
			return c->failed ? -EINVAL
					 : sl_sql_plan_fail(c, g->line, g->col, "SESSION(ts, gap)");
	}
	ap->wcall = g;
	ap->windowed = true;
	return 0;
}

/* A CALL node named `name` with the window call's arguments: TUMBLE_START(ts, size). */
static const struct sl_expr *prop_call(struct sl_sql_plan_ctx *c, const struct sl_expr *wcall,
				       const char *suffix)
{
	struct sl_expr *e = sl_sql_plan_own(c, calloc(1, sizeof(*e)), free);
	char name[64];

	if (!e)
		return NULL;
	snprintf(name, sizeof name, "%s_%s", wcall->text, suffix);
	e->kind = SL_EXPR_CALL;
	e->text = sl_sql_plan_strdup(c, name);
	e->args = wcall->args;
	e->nargs = wcall->nargs;
	e->line = wcall->line;
	e->col = wcall->col;
	return e->text ? e : NULL;
}

/* The first column named `name` that e reads outside aggregate calls, or NULL. */
static const struct sl_expr *find_column(const struct sl_expr *e, const char *name)
{
	const struct sl_expr *hit;

	if (!e || (e->kind == SL_EXPR_CALL && !e->over && sl_sql_plan_agg_kind(e->text)))
		return NULL;
	if (e->kind == SL_EXPR_COLUMN)
		return !strcasecmp(e->path[e->npath - 1], name) ? e : NULL;
	for (uint32_t i = 0; i < e->nargs; i++)
		if ((hit = find_column(e->args[i], name)))
			return hit;
	if ((hit = find_column(e->case_operand, name)))
		return hit;
	return find_column(e->case_else, name);
}

/*
 * A window TVF's window_time in the SELECT list or HAVING when GROUP BY names only the
 * bounds: Flink refuses it as not grouped (it is a column of the TVF's rows, one value per
 * window only once grouped), and so does sluice. 0 or -EINVAL (said).
 */
static int check_window_time_grouped(struct sl_sql_plan_ctx *c, const struct agg_plan *ap,
				     const struct sl_query *q)
{
	const struct sl_expr *e = NULL;

	if (!ap->windowed || ap->wcall || ap->tvf_time)
		return 0;
	for (uint32_t i = 0; i < q->nitems && !e; i++)
		e = find_column(q->items[i].expr, "window_time");
	if (!e)
		e = find_column(q->having, "window_time");
	if (!e)
		return 0;
	return sl_sql_plan_fail(c, e->line, e->col,
				"column 'window_time' is not being grouped: add it to GROUP BY "
				"beside window_start and window_end, as Flink requires");
}

static bool mentions(const struct sl_query *q, struct sl_sql_plan_ctx *c, const char *word)
{
	char buf[4096];

	for (uint32_t i = 0; i < q->nitems; i++) {
		if (!q->items[i].expr)
			continue;
		sl_expr_print(q->items[i].expr, buf, sizeof buf);
		if (strcasestr(buf, word))
			return true;
	}
	if (q->having) {
		sl_expr_print(q->having, buf, sizeof buf);
		if (strcasestr(buf, word))
			return true;
	}
	(void)c;
	return false;
}

/* True when every key and aggregate argument is a plain column of rel (no expression). */
static bool direct_input(const struct sl_sql_plan_rel *rel, const struct sl_expr *const *pre,
			 int npre, bool const_key)
{
	if (const_key)
		return false;
	for (int i = 0; i < npre; i++)
		if (sl_sql_plan_resolve_plain(rel, pre[i]) < 0)
			return false;
	return true;
}

/*
 * A SESSION window TVF makes sessions per PARTITION BY key, and over all rows without one
 * (Flink then aggregates its windows per GROUP BY key as an updating, non-window GROUP BY).
 * The window operator here keys sessions by the GROUP BY keys, so those must be the
 * PARTITION BY keys; anything else is refused rather than answered differently.
 */
static int session_keys(struct sl_sql_plan_ctx *c, const struct agg_plan *ap,
			const struct sl_sql_plan_rel *rel, const struct sl_query *q)
{
	bool seen[SL_MAX_KEY_FIELDS] = { false };

	if (!rel->tvf_partitioned && ap->nkeys)
		return sl_sql_plan_fail(
			c, ap->keys[0]->line, ap->keys[0]->col,
			"a SESSION window TVF "
			"without PARTITION BY makes one session stream over all rows; for "
			"sessions per key write SESSION(TABLE t PARTITION BY key, ...)");
	for (int k = 0; k < ap->nkeys; k++) {
		int col = sl_sql_plan_resolve_plain(rel, ap->keys[k]), j;

		for (j = 0; j < rel->ntvf_part && rel->tvf_part[j] != col; j++)
			;
		if (col < 0 || j == rel->ntvf_part)
			return sl_sql_plan_fail(c, ap->keys[k]->line, ap->keys[k]->col,
						"GROUP BY keys of a "
						"SESSION window TVF must be its PARTITION BY keys");
		seen[j] = true;
	}
	for (int j = 0; j < rel->ntvf_part; j++)
		if (!seen[j])
			return sl_sql_plan_fail(c, q->line, q->col,
						"GROUP BY the SESSION's PARTITION BY "
						"keys, with window_start, window_end");
	return 0;
}

/* GROUP BY's expressions: a legacy group window, the window TVF's window_start and
 * window_end, and the keys. */
static int read_group_by(struct sl_sql_plan_ctx *c, struct agg_plan *ap, const struct sl_query *q,
			 const struct sl_sql_plan_rel *rel)
{
	bool tvf_start = false, tvf_end = false;

	for (uint32_t i = 0; i < q->ngroup_by; i++) {
		const struct sl_expr *g = q->group_by[i];

		if (is_call(g, "TUMBLE") || is_call(g, "HOP") || is_call(g, "SESSION")) {
			if (legacy_window(c, ap, rel, g))
				return -EINVAL;
			continue;
		}
		if (is_call(g, "CUMULATE"))
			return sl_sql_plan_fail(c, g->line, g->col,
						"CUMULATE is a window TVF: use "
						"TABLE(CUMULATE(...))");
		if (rel->tvf) {
			int col = sl_sql_plan_resolve_plain(rel, g);

			if (col < 0 && g->kind == SL_EXPR_COLUMN) {
				const char *n = g->path[g->npath - 1];

				if (!strcasecmp(n, "window_start")) {
					tvf_start = true;
					continue;
				}
				if (!strcasecmp(n, "window_end")) {
					tvf_end = true;
					continue;
				}
				/* Flink groups by it beside the bounds: one value per window
				 * (window_end - 1 ms), so it adds no key */
				if (!strcasecmp(n, "window_time")) {
					ap->tvf_time = true;
					continue;
				}
			}
		}
		if (sl_sql_plan_has_agg(g))
			return sl_sql_plan_fail(c, g->line, g->col,
						"aggregates are not allowed in GROUP BY");
		if (ap->nkeys == SL_MAX_KEY_FIELDS - 1)
			return sl_sql_plan_fail(c, g->line, g->col, "at most %d GROUP BY keys",
						SL_MAX_KEY_FIELDS - 1);
		ap->keys[ap->nkeys++] = g;
	}
	if (rel->tvf) {
		if (!tvf_start || !tvf_end)
			return sl_sql_plan_fail(c, q->line, q->col,
						"a window TVF query must GROUP BY "
						"window_start, window_end");
		if (ap->wcall)
			return sl_sql_plan_fail(c, q->line, q->col,
						"a group window on a window TVF");
		ap->windowed = true;
		ap->win = rel->tvf_win;
		if (ap->win.kind == SL_WIN_SESSION && session_keys(c, ap, rel, q))
			return -EINVAL;
	}
	return 0;
}

/* The aggregate calls of the SELECT list and HAVING, each distinct call once. */
static int collect_query_aggs(struct sl_sql_plan_ctx *c, struct agg_plan *ap,
			      const struct sl_query *q)
{
	for (uint32_t i = 0; i < q->nitems; i++) {
		if (q->items[i].star)
			return sl_sql_plan_fail(c, q->items[i].line, q->items[i].col,
						"SELECT * with GROUP BY: name the columns");
		if (collect_aggs(c, ap, q->items[i].expr))
			return -EINVAL;
	}
	if (collect_aggs(c, ap, q->having))
		return -EINVAL;
	if (ap->naggs == 0 && !ap->windowed && ap->nkeys == 0)
		return sl_sql_plan_fail(c, q->line, q->col, "nothing to aggregate");
	if (ap->naggs == 0 && !ap->windowed) {
		/*
		 * GROUP BY without aggregates (SELECT DISTINCT): the group operator still needs
		 * one aggregate. MAX(0) never changes, so a group emits +I once and -D when its
		 * last row is retracted, as Flink's distinct does.
		 */
		static struct sl_expr zero = { .kind = SL_EXPR_INT, .ival = 0, .text = "0" };
		static struct sl_expr *zero_args[1] = { &zero };
		static const struct sl_expr hidden_max = {
			.kind = SL_EXPR_CALL, .text = "MAX", .args = zero_args, .nargs = 1
		};

		if (find_or_add_agg(c, ap, &hidden_max))
			return -EINVAL;
	}
	return 0;
}

/* 1. The pre-aggregation row: keys, then aggregate arguments, into ap->pr. */
static int plan_agg_input(struct sl_sql_plan_ctx *c, struct agg_plan *ap, const struct sl_query *q,
			  struct sl_sql_plan_rel *rel)
{
	const struct sl_expr *pre[SL_PLAN_MAX_COLS];
	const char *pre_names[SL_PLAN_MAX_COLS];
	int npre = 0;

	for (int i = 0; i < ap->nkeys; i++) {
		int plain = sl_sql_plan_resolve_plain(rel, ap->keys[i]);
		char n[32];

		snprintf(n, sizeof n, "key%d", i);
		pre[npre] = ap->keys[i];
		pre_names[npre++] = plain >= 0 ? rel->cols[plain].name : sl_sql_plan_strdup(c, n);
	}
	if (ap->nkeys == 0) {
		/* a global aggregate: one constant key sends every row to one shard */
		static const struct sl_expr zero = { .kind = SL_EXPR_INT, .ival = 0, .text = "0" };

		pre[npre] = &zero;
		pre_names[npre++] = "$k";
		ap->const_key = true;
	}
	for (int i = 0; i < ap->naggs; i++) {
		char n[32];

		if (!ap->aggs[i].arg)
			continue;
		snprintf(n, sizeof n, "arg%d", i);
		ap->aggs[i].arg_col = npre;
		pre[npre] = ap->aggs[i].arg;
		pre_names[npre++] = sl_sql_plan_strdup(c, n);
		if (npre >= SL_PLAN_MAX_COLS - 4)
			return sl_sql_plan_fail(c, q->line, q->col,
						"too many group keys and aggregates");
	}
	for (int i = 0; i < npre; i++)
		if (!pre_names[i])
			return -ENOMEM;
	ap->nk = ap->nkeys ? ap->nkeys : 1;
	if (direct_input(rel, pre, npre, ap->const_key)) {
		/*
		 * Keys and arguments are all plain columns: the window or group operator reads
		 * them where they are, with no projection in between (the common case, and the
		 * hot path of a keyed window job).
		 */
		ap->pr = *rel;
		ap->pr.ncols = npre;
		for (int i = 0; i < npre; i++) {
			ap->pr.cols[i] = rel->cols[sl_sql_plan_resolve_plain(rel, pre[i])];
			if (i < ap->nk)
				ap->key_fields[i] = ap->pr.cols[i].field;
		}
		for (int i = 0; i < ap->naggs; i++)
			if (ap->aggs[i].arg_col >= 0)
				ap->aggs[i].arg_col = ap->pr.cols[ap->aggs[i].arg_col].field;
	} else {
		if (sl_sql_plan_project(c, rel, pre, pre_names, npre, NULL, "aggregate input",
					&ap->pr))
			return -EINVAL;
		for (int i = 0; i < ap->nk; i++)
			ap->key_fields[i] = i;
	}
	return 0;
}

/* 3. The aggregate specs of the operator, each writing its field ap->agg_names[i]. */
static int agg_specs(struct sl_sql_plan_ctx *c, struct agg_plan *ap, struct sl_agg_spec *specs)
{
	for (int i = 0; i < ap->naggs; i++) {
		char n[32];

		snprintf(n, sizeof n, "$agg%d", i);
		ap->agg_names[i] = sl_sql_plan_strdup(c, n);
		if (!ap->agg_names[i])
			return -ENOMEM;
		memset(&specs[i], 0, sizeof(specs[i]));
		specs[i].kind = ap->aggs[i].kind;
		specs[i].field = ap->aggs[i].arg_col;
		specs[i].name = ap->agg_names[i];
		specs[i].sql_types = true;
		specs[i].sep = ap->aggs[i].sep;
		specs[i].distinct = ap->aggs[i].distinct;
		if (ap->aggs[i].kind == SL_AGG_LISTAGG &&
		    sl_schema_type(sl_stream_schema(ap->pr.s), ap->aggs[i].arg_col) !=
			    SL_TYPE_STRING) {
			const struct sl_expr *a = ap->aggs[i].call->args[0];

			return sl_sql_plan_fail(
				c, a->line, a->col,
				"LISTAGG takes a string (CHAR, VARCHAR, STRING), "
				"not %s; CAST it",
				sl_type_name(sl_schema_type(sl_stream_schema(ap->pr.s),
							    ap->aggs[i].arg_col)));
		}
	}
	return 0;
}

/* 3. A window aggregation of the keyed stream (late rows to the late-data table). */
static int add_window_agg(struct sl_sql_plan_ctx *c, struct sl_job *job, struct agg_plan *ap,
			  const struct sl_query *q, struct sl_stream *keyed,
			  const struct sl_agg_spec *specs)
{
	const char *wname = ap->win.kind == SL_WIN_TUMBLE     ? "tumble window"
			    : ap->win.kind == SL_WIN_HOP      ? "hop window"
			    : ap->win.kind == SL_WIN_CUMULATE ? "cumulate window"
							      : "session window";

	/* processing time: nothing is late, so neither lateness nor late rows */
	ap->win.allowed_lateness_ms = ap->win.proctime ? 0 : c->allow_lateness;
	ap->win.late_tag = c->late_table && !ap->win.proctime ? 1 : 0;
	ap->win.agg_phase = c->agg_phase;
	ap->aggd = sl_stream_window(keyed, wname, &ap->win, specs, ap->naggs);
	if (!ap->aggd)
		return sl_sql_plan_fail(c, q->line, q->col, "%s", sl_job_error(job)->msg);
	if (ap->win.late_tag &&
	    sl_sql_plan_late_rows(c, job, ap->aggd, wname, &ap->win, sl_stream_schema(ap->pr.s), 1))
		return -EINVAL;
	ap->wstart = ap->nk;
	ap->wend = ap->nk + 1;
	ap->post.changelog = ap->win.allowed_lateness_ms > 0;
	return 0;
}

/* 3. The updating GROUP BY: a group aggregate process function over the keyed stream. */
static int add_group_agg(struct sl_sql_plan_ctx *c, struct sl_job *job, struct agg_plan *ap,
			 const struct sl_query *q, const struct sl_sql_plan_rel *rel,
			 struct sl_stream *keyed, struct sl_agg_spec *specs)
{
	struct sl_group_agg_cfg gc = {
		.in = sl_stream_schema(ap->pr.s),
		.key_fields = ap->key_fields,
		.nkey = ap->nk,
		.aggs = specs,
		.naggs = ap->naggs,
		.state_ttl_ms = c->state_ttl,
		.insert_only = !rel->changelog,
		.agg_phase = c->agg_phase,
		.mini_batch_latency_ms = c->mini_batch ? c->mini_batch_latency : 0,
		.mini_batch_size = c->mini_batch_size,
	};
	struct sl_process_fn *pf = calloc(1, sizeof(*pf));
	struct sl_schema *gs = NULL;
	char msg[256];

	if (!sl_sql_plan_own(c, pf, sl_sql_plan_free_group_agg))
		return -ENOMEM;
	if (ap->naggs == 0)
		return sl_sql_plan_fail(c, q->line, q->col,
					"GROUP BY without aggregates is not "
					"supported yet (it is SELECT DISTINCT)");
	if (sl_group_agg_build(&gc, pf, &gs, msg, sizeof msg) < 0)
		return sl_sql_plan_fail(c, q->line, q->col, "GROUP BY: %s", msg);
	if (!sl_sql_plan_own(c, gs, (void (*)(void *))sl_schema_destroy))
		return -ENOMEM;
	ap->aggd = sl_stream_process(keyed, "group aggregate", pf, gs);
	if (!ap->aggd)
		return sl_sql_plan_fail(c, q->line, q->col, "%s", sl_job_error(job)->msg);
	ap->post.changelog = true;
	return 0;
}

/* 4. The columns of the aggregate's output: keys, window bounds, aggregates. */
static int agg_output_columns(struct sl_sql_plan_ctx *c, struct agg_plan *ap,
			      const struct sl_query *q, const struct sl_sql_plan_rel *rel)
{
	const struct sl_schema *os = sl_stream_schema(ap->aggd);
	struct sl_sql_plan_rel *post = &ap->post;

	post->s = ap->aggd;
	for (int i = 0; i < ap->nkeys; i++) {
		struct sl_sql_col *col = &post->cols[post->ncols++];
		int plain = sl_sql_plan_resolve_plain(rel, ap->keys[i]);

		*col = (struct sl_sql_col){ .field = i, .match = ap->keys[i] };
		col->type = ap->pr.cols[i].type;
		if (plain >= 0) {
			/* a plain key column stays visible by its name */
			col->qual = rel->cols[plain].qual;
			col->name = rel->cols[plain].name;
		}
	}
	if (ap->windowed) {
		struct sl_sql_type ts = { .type = SL_TYPE_TIMESTAMP,
					  .prec = SL_TS_PREC_DEFAULT,
					  .nullable = false };
		const char *props[2] = { "START", "END" };
		int fields[2] = { ap->wstart, ap->wend };

		for (int k = 0; k < 2; k++) {
			struct sl_sql_col *col = &post->cols[post->ncols++];

			*col = (struct sl_sql_col){ .field = fields[k], .type = ts };
			if (ap->wcall) {
				col->match = prop_call(c, ap->wcall, props[k]);
				if (!col->match)
					return -ENOMEM;
			} else {
				col->name = k ? "window_end" : "window_start";
			}
		}
	}
	for (int i = 0; i < ap->naggs; i++) {
		struct sl_sql_col *col = &post->cols[post->ncols++];
		int f = sl_schema_find(os, ap->agg_names[i]);

		if (f < 0)
			return sl_sql_plan_fail(c, q->line, q->col,
						"internal: aggregate column missing");
		*col = (struct sl_sql_col){ .field = f, .match = ap->aggs[i].call };
		col->type.type = sl_schema_type(os, f);
		col->type.prec = sl_schema_precision(os, f);
		col->type.scale = sl_schema_scale(os, f);
		col->type.nullable = ap->aggs[i].kind != SL_AGG_COUNT_STAR &&
				     ap->aggs[i].kind != SL_AGG_COUNT &&
				     ap->aggs[i].kind != SL_AGG_COUNT_DISTINCT;
	}
	return 0;
}

/*
 * 4. window_time / *_ROWTIME, when the query names them: the window's last millisecond, a
 * rowtime for cascaded windows, appended by a projection of every output field.
 */
static int add_window_time(struct sl_sql_plan_ctx *c, struct agg_plan *ap)
{
	const struct sl_schema *os = sl_stream_schema(ap->aggd);
	const struct sl_expr *ex[SL_PLAN_MAX_COLS];
	const char *nm[SL_PLAN_MAX_COLS];
	struct sl_sql_plan_rel wt, raw = { .s = ap->aggd, .ncols = 0 };
	struct sl_expr *sub, *iv, **args;
	struct sl_sql_col *col;
	int n = 0;

	for (int i = 0; i < sl_schema_nfields(os); i++) {
		struct sl_expr *e = sl_sql_plan_own(c, calloc(1, sizeof(*e)), free);
		char **path = e ? sl_sql_plan_own(c, calloc(1, sizeof(char *)), free) : NULL;

		if (!path)
			return -ENOMEM;
		e->kind = SL_EXPR_COLUMN;
		path[0] = (char *)sl_schema_name(os, i);
		e->path = path;
		e->npath = 1;
		ex[n] = e;
		nm[n++] = sl_schema_name(os, i);
	}
	/* window_end - INTERVAL '0.001' SECOND */
	sub = sl_sql_plan_own(c, calloc(1, sizeof(*sub)), free);
	iv = sl_sql_plan_own(c, calloc(1, sizeof(*iv)), free);
	args = sl_sql_plan_own(c, calloc(2, sizeof(*args)), free);
	if (!sub || !iv || !args)
		return -ENOMEM;
	iv->kind = SL_EXPR_INTERVAL;
	iv->ival = 1;
	iv->unit = SL_EXPR_UNIT_SECOND;
	iv->text = "0.001";
	sub->kind = SL_EXPR_BINARY;
	sub->op = SL_EXPR_OP_SUB;
	args[0] = (struct sl_expr *)ex[ap->wend];
	args[1] = iv;
	sub->args = args;
	sub->nargs = 2;
	ex[n] = sub;
	nm[n++] = "$window_time";
	for (int i = 0; i < sl_schema_nfields(os); i++) {
		struct sl_sql_col *field = &raw.cols[raw.ncols++];

		*field = (struct sl_sql_col){ .field = i };
		field->name = sl_schema_name(os, i);
		field->type.type = sl_schema_type(os, i);
		field->type.prec = sl_schema_precision(os, i);
		field->type.scale = sl_schema_scale(os, i);
		field->type.nullable = true;
	}
	if (sl_sql_plan_project(c, &raw, ex, nm, n, NULL, "window time", &wt))
		return -EINVAL;
	ap->post.s = wt.s;
	col = &ap->post.cols[ap->post.ncols++];
	/* a processing-time window's window_time is a processing-time attribute, as in Flink */
	*col = (struct sl_sql_col){ .field = n - 1,
				    .rowtime = !ap->win.proctime,
				    .proctime = ap->win.proctime };
	col->type.type = SL_TYPE_TIMESTAMP;
	col->type.prec = SL_TS_PREC_DEFAULT;
	if (ap->wcall) {
		col->match = prop_call(c, ap->wcall, "ROWTIME");
		if (!col->match)
			return -ENOMEM;
	} else {
		col->name = "window_time";
	}
	return 0;
}

/* HAVING, then the SELECT list, compiled over the aggregate's output `post`. */
/*
 * Refuses a column of the input that e uses outside every aggregate call and every
 * grouping expression: after GROUP BY it has no single value per group. Said as Flink
 * says it ("not being grouped") rather than the compiler's "unknown column", which is
 * true of the aggregation's output but misleading. 0 or -EINVAL (said).
 */
static int check_grouped(struct sl_sql_plan_ctx *c, const struct sl_sql_plan_rel *post,
			 const struct sl_sql_plan_rel *in, const struct sl_expr *e)
{
	if (!e)
		return 0;
	for (int i = 0; i < post->ncols; i++)
		if (post->cols[i].match && sl_sql_plan_expr_equal(post->cols[i].match, e))
			return 0;
	if (e->kind == SL_EXPR_CALL && !e->over && sl_sql_plan_agg_kind(e->text))
		return 0;
	if (e->kind == SL_EXPR_COLUMN) {
		if (sl_sql_plan_resolve_plain(post, e) < 0 && sl_sql_plan_resolve_plain(in, e) >= 0)
			return sl_sql_plan_fail(c, e->line, e->col,
						"column '%s' is not being grouped: add it to GROUP "
						"BY or aggregate it (MIN, MAX, FIRST_VALUE, ...)",
						e->path[e->npath - 1]);
		return 0;
	}
	for (uint32_t i = 0; i < e->nargs; i++)
		if (check_grouped(c, post, in, e->args[i]))
			return -EINVAL;
	if (check_grouped(c, post, in, e->case_operand) || check_grouped(c, post, in, e->case_else))
		return -EINVAL;
	return 0;
}

static int plan_having_select(struct sl_sql_plan_ctx *c, const struct sl_query *q,
			      const struct sl_sql_plan_rel *in, struct sl_sql_plan_rel *post,
			      struct sl_sql_plan_rel *out)
{
	const struct sl_expr *ex[SL_PLAN_MAX_COLS];
	const char *nm[SL_PLAN_MAX_COLS];
	int n = 0;

	if (check_grouped(c, post, in, q->having))
		return -EINVAL;
	for (uint32_t i = 0; i < q->nitems; i++)
		if (check_grouped(c, post, in, q->items[i].expr))
			return -EINVAL;
	if (q->having) {
		struct sl_calc *calc =
			sl_sql_plan_own(c, sl_calc_create(-1, c->nshards), sl_calc_destroy);
		struct sl_sql_type t;
		struct sl_prog *p;

		if (!calc)
			return -ENOMEM;
		p = sl_sql_plan_compile(c, q->having, post, &t);
		if (!p)
			return -EINVAL;
		sl_calc_set_pred(calc, p);
		post->s = sl_calc_stream(post->s, "having", calc, sl_stream_schema(post->s));
		if (!post->s)
			return sl_sql_plan_fail(c, q->having->line, q->having->col,
						"cannot add HAVING");
	}
	for (uint32_t i = 0; i < q->nitems; i++) {
		const struct sl_select_item *it = &q->items[i];
		char buf[32];

		ex[n] = it->expr;
		if (it->alias) {
			nm[n] = it->alias;
		} else if (it->expr->kind == SL_EXPR_COLUMN) {
			nm[n] = it->expr->path[it->expr->npath - 1];
		} else {
			snprintf(buf, sizeof buf, "EXPR$%u", i);
			nm[n] = sl_sql_plan_strdup(c, buf);
			if (!nm[n])
				return -ENOMEM;
		}
		n++;
	}
	if (sl_sql_plan_project(c, post, ex, nm, n, NULL, "select", out))
		return -EINVAL;
	out->changelog = post->changelog;
	return 0;
}

int sl_sql_plan_agg(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q0,
		    struct sl_sql_plan_rel *rel, struct sl_sql_plan_rel *out)
{
	struct agg_plan ap = { .wstart = -1, .wend = -1 };
	struct sl_agg_spec specs[SL_PLAN_MAX_COLS];
	struct sl_stream *keyed;
	struct sl_query reduced;
	const struct sl_query *q = &reduced;
	int rc;

	/* STDDEV/VAR become SUM and COUNT first (plan_agg_reduce.c) */
	if ((rc = sl_sql_plan_reduce_aggs(c, q0, rel, &reduced)) ||
	    (rc = read_group_by(c, &ap, q, rel)) || (rc = check_window_time_grouped(c, &ap, q)) ||
	    (rc = collect_query_aggs(c, &ap, q)) || (rc = plan_agg_input(c, &ap, q, rel)))
		return rc;
	/* 2. keyed by the group keys */
	keyed = sl_stream_key_by(ap.pr.s, ap.key_fields, ap.nk);
	if (!keyed)
		return sl_sql_plan_fail(c, q->line, q->col, "%s", sl_job_error(job)->msg);
	if ((rc = agg_specs(c, &ap, specs)))
		return rc;
	rc = ap.windowed ? add_window_agg(c, job, &ap, q, keyed, specs)
			 : add_group_agg(c, job, &ap, q, rel, keyed, specs);
	if (rc || (rc = agg_output_columns(c, &ap, q, rel)))
		return rc;
	if (ap.windowed && (mentions(q, c, "ROWTIME") || mentions(q, c, "window_time")) &&
	    (rc = add_window_time(c, &ap)))
		return rc;
	return plan_having_select(c, q, rel, &ap.post, out);
}
