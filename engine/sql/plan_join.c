/*
 * plan_join.c - regular joins in SQL: `L [INNER | LEFT | RIGHT | FULL [OUTER]] JOIN R ON ...`
 * (no FOR SYSTEM_TIME AS OF) to the join operator (engine/ops/join.h), Flink's unbounded
 * streaming join
 * (https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/table/sql/queries/joins/#regular-joins).
 *
 * The ON condition is cut at its ANDs: each `l = r` between a column of each side is a join
 * key (the rows are hash-partitioned on the keys across shards), everything else is a
 * condition the operator evaluates on the joined row, so an outer join keeps a row that
 * fails it NULL-padded, as SQL says. A join without such an equality (CROSS JOIN, `a, b`,
 * ON a.x < b.y) keys every row alike: one shard holds it all, as Flink gives such a join a
 * parallelism of 1. Both sides are projected onto one union row
 * [__side, left columns, right columns, key columns] (the other side NULL) and keyed by the
 * trailing key columns, as the temporal join is (plan_query.c). A join of joins is planned
 * left-deep, each join's output columns keeping their table qualifiers, so `a JOIN b ON ...
 * JOIN c ON c.x = a.x` finds a.x.
 *
 * When ON also bounds the two sides' rowtimes against each other from below and above
 * (l.ts BETWEEN r.ts - INTERVAL a AND r.ts + INTERVAL b, or two comparisons) and both
 * inputs are insert-only, it is Flink's interval join: the same operator cleans its state
 * at the watermark and pads an outer side's unmatched rows only when they expire, so the
 * output is insert-only
 * (https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/table/sql/queries/joins/#interval-joins).
 *
 * When ON pairs window_start with window_start and window_end with window_end of the same
 * window TVF (or window aggregation) on both sides, it is Flink's window join: the same
 * operator joins each window's rows once when the watermark passes its end, so the output
 * is insert-only and keeps the window_time of a side that is never NULL-padded as its time
 * attribute; a row arriving after its window fired is late and goes to the late-data table
 * (https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/table/sql/queries/window-join/).
 * A window TVF can be joined as it is (FROM TABLE(TUMBLE(...)) L JOIN ...). The same
 * window join's semi and anti forms serve WHERE's [NOT] IN / EXISTS (SELECT ...), which
 * plan_semi.c turns into a sl_sql_join_spec for sl_sql_plan_join_rels().
 *
 * Otherwise the output is an updating stream (changelog) when either input is one or the
 * join is outer; its columns are no time attributes (Flink turns rowtime columns of a regular
 * join's output into plain timestamps).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "join.h"
#include "late_rows.h"
#include "plan_int.h"
#include "window_assign.h"

#define MAX_CONDS 32 /* non-equi conjuncts of one ON */

/* The non-equi part of ON, compiled against the joined row (left ++ right). */
struct join_cond {
	struct sl_prog *prog[MAX_CONDS];
	int n;
};

static void cond_free(void *p)
{
	struct join_cond *jc = p;

	for (int i = 0; jc && i < jc->n; i++)
		sl_prog_destroy(jc->prog[i]);
	free(jc);
}

static void free_join(void *fn)
{
	sl_join_free(fn);
	free(fn);
}

/* Runs on the shard thread, per candidate pair: the scratch is per thread, so shards never
 * share it. */
static bool eval_cond(struct sl_ctx *ctx, const struct sl_row *joined, void *arg)
{
	static _Thread_local char scratch[SL_EVAL_SCRATCH];
	const struct join_cond *jc = arg;
	struct sl_eval_ctx ec = { .scratch = scratch,
				  .scratch_cap = sizeof scratch,
				  .proctime_ms = sl_ctx_proctime(ctx),
				  .watermark = sl_ctx_watermark(ctx),
				  .has_watermark = sl_ctx_watermark(ctx) != SL_TS_MIN };

	for (int i = 0; i < jc->n; i++)
		if (!sl_prog_eval_pred(jc->prog[i], joined, &ec))
			return false;
	return true;
}

/* ON's conjuncts: equalities between the two sides, and the rest. */
struct on_parts {
	int l[SL_MAX_KEY_FIELDS], r[SL_MAX_KEY_FIELDS];
	int neq;
	const struct sl_expr *rest[MAX_CONDS];
	int nrest;
};

static int split_on(struct sl_sql_plan_ctx *c, const struct sl_expr *on,
		    const struct sl_sql_plan_rel *L, const struct sl_sql_plan_rel *R,
		    struct on_parts *p)
{
	if (on->kind == SL_EXPR_BINARY && on->op == SL_EXPR_OP_AND)
		return split_on(c, on->args[0], L, R, p) || split_on(c, on->args[1], L, R, p)
			       ? -EINVAL
			       : 0;
	if (on->kind == SL_EXPR_BINARY && on->op == SL_EXPR_OP_EQ) {
		int a = sl_sql_plan_resolve_plain(L, on->args[0]),
		    b = sl_sql_plan_resolve_plain(R, on->args[1]);

		if (a < 0 || b < 0) {
			a = sl_sql_plan_resolve_plain(L, on->args[1]);
			b = sl_sql_plan_resolve_plain(R, on->args[0]);
		}
		if (a >= 0 && b >= 0 && p->neq < SL_MAX_KEY_FIELDS) {
			p->l[p->neq] = a;
			p->r[p->neq++] = b;
			return 0;
		}
	}
	if (p->nrest == MAX_CONDS)
		return sl_sql_plan_fail(c, on->line, on->col,
					"more than %d conditions besides the equalities in ON",
					MAX_CONDS);
	p->rest[p->nrest++] = on;
	return 0;
}

/* ---- interval joins: time bounds between the two sides' rowtimes in ON ---------------- */

struct time_bounds {
	int l, r; /* the rowtime columns, -1 until a bound names them */
	sl_ts_t lower, upper;
	bool has_lower, has_upper;
};

/* `col [+|- INTERVAL]` where col is a rowtime column of rel: its index and the offset, or
 * -1. */
static int time_term(const struct sl_sql_plan_rel *rel, const struct sl_expr *e, sl_ts_t *off)
{
	int col;

	*off = 0;
	if (e->kind == SL_EXPR_BINARY && (e->op == SL_EXPR_OP_ADD || e->op == SL_EXPR_OP_SUB) &&
	    e->args[1]->kind == SL_EXPR_INTERVAL) {
		*off = e->op == SL_EXPR_OP_ADD ? e->args[1]->ival : -e->args[1]->ival;
		e = e->args[0];
	}
	col = sl_sql_plan_resolve_plain(rel, e);
	return col >= 0 && rel->cols[col].rowtime ? col : -1;
}

/* Narrows the bounds of d = l.time - r.time by `d op x`. */
static void narrow(struct time_bounds *b, enum sl_expr_op op, sl_ts_t x)
{
	if (op == SL_EXPR_OP_GE || op == SL_EXPR_OP_GT || op == SL_EXPR_OP_EQ) {
		sl_ts_t lo = op == SL_EXPR_OP_GT ? x + 1 : x;

		b->lower = b->has_lower && b->lower > lo ? b->lower : lo;
		b->has_lower = true;
	}
	if (op == SL_EXPR_OP_LE || op == SL_EXPR_OP_LT || op == SL_EXPR_OP_EQ) {
		sl_ts_t hi = op == SL_EXPR_OP_LT ? x - 1 : x;

		b->upper = b->has_upper && b->upper < hi ? b->upper : hi;
		b->has_upper = true;
	}
}

static enum sl_expr_op flip(enum sl_expr_op op)
{
	return op == SL_EXPR_OP_LT   ? SL_EXPR_OP_GT
	       : op == SL_EXPR_OP_LE ? SL_EXPR_OP_GE
	       : op == SL_EXPR_OP_GT ? SL_EXPR_OP_LT
	       : op == SL_EXPR_OP_GE ? SL_EXPR_OP_LE
				     : op;
}

/* `a op b` with a and b time terms of different sides: a bound on l.time - r.time. */
static bool time_cmp(const struct sl_sql_plan_rel *L, const struct sl_sql_plan_rel *R,
		     const struct sl_expr *a, enum sl_expr_op op, const struct sl_expr *b,
		     struct time_bounds *tb)
{
	sl_ts_t oa, ob;
	int la = time_term(L, a, &oa), rb = time_term(R, b, &ob);

	if (la < 0 || rb < 0) {
		/* r.time op l.time: l.time flip(op) r.time */
		int ra = time_term(R, a, &oa), lb = time_term(L, b, &ob);

		if (ra < 0 || lb < 0)
			return false;
		/* r + oa op l + ob  <=>  l - r flip(op) oa - ob */
		if ((tb->l >= 0 && tb->l != lb) || (tb->r >= 0 && tb->r != ra))
			return false;
		tb->l = lb;
		tb->r = ra;
		narrow(tb, flip(op), oa - ob);
		return true;
	}
	/* l + oa op r + ob  <=>  l - r op ob - oa */
	if ((tb->l >= 0 && tb->l != la) || (tb->r >= 0 && tb->r != rb))
		return false;
	tb->l = la;
	tb->r = rb;
	narrow(tb, op, ob - oa);
	return true;
}

/* Reads the conditions that bound the two rowtimes against each other (they stay among the
 * conditions the operator evaluates). True when both a lower and an upper bound are there:
 * an interval join. */
static bool find_time_bounds(const struct on_parts *p, const struct sl_sql_plan_rel *L,
			     const struct sl_sql_plan_rel *R, struct time_bounds *tb)
{
	*tb = (struct time_bounds){ .l = -1, .r = -1 };
	for (int i = 0; i < p->nrest; i++) {
		const struct sl_expr *e = p->rest[i];

		if (e->kind == SL_EXPR_BINARY &&
		    (e->op == SL_EXPR_OP_LT || e->op == SL_EXPR_OP_LE || e->op == SL_EXPR_OP_GT ||
		     e->op == SL_EXPR_OP_GE || e->op == SL_EXPR_OP_EQ)) {
			time_cmp(L, R, e->args[0], e->op, e->args[1], tb);
		} else if (e->kind == SL_EXPR_BETWEEN && !e->negated) {
			time_cmp(L, R, e->args[0], SL_EXPR_OP_GE, e->args[1], tb);
			time_cmp(L, R, e->args[0], SL_EXPR_OP_LE, e->args[2], tb);
		}
	}
	return tb->has_lower && tb->has_upper;
}

/* ---- window joins: ON pairs the two sides' window_start and window_end ----------------- */

/* The window bounds a window join pairs: columns of L and of R. */
struct window_pair {
	int lstart, lend, rstart, rend;
};

/* True when ON's equalities pair window_start with window_start and window_end with
 * window_end of the same window TVF on both sides (Flink's condition for a window join; with
 * only one of them, or two different windows, Flink joins the rows as a regular join). */
static bool find_window_pair(const struct on_parts *p, const struct sl_sql_plan_rel *L,
			     const struct sl_sql_plan_rel *R, struct window_pair *wp)
{
	*wp = (struct window_pair){ -1, -1, -1, -1 };
	for (int k = 0; k < p->neq; k++) {
		const struct sl_sql_col *lc = &L->cols[p->l[k]], *rc = &R->cols[p->r[k]];

		if (lc->win_prop != rc->win_prop || !sl_sql_plan_same_window(lc->win, rc->win))
			continue;
		if (lc->win_prop == SL_SQL_WIN_START) {
			wp->lstart = p->l[k];
			wp->rstart = p->r[k];
		} else if (lc->win_prop == SL_SQL_WIN_END) {
			wp->lend = p->l[k];
			wp->rend = p->r[k];
		}
	}
	return wp->lstart >= 0 && wp->lend >= 0 &&
	       sl_sql_plan_same_window(L->cols[wp->lstart].win, L->cols[wp->lend].win);
}

/* The window TVF's time column of a side (-1: none), for the late rows' event time. */
static int timecol_of(const struct sl_sql_plan_rel *r)
{
	for (int i = 0; i < r->ncols; i++)
		if (r->cols[i].win_prop == SL_SQL_WIN_TIMECOL)
			return i;
	return -1;
}

/* A window join's late rows of side `side` (tag 1 left, 2 right: the side's own columns)
 * to the late-data table. */
static int late_side(struct sl_sql_plan_ctx *c, struct sl_job *job, struct sl_stream *op,
		     const char *name, const struct sl_sql_plan_rel *r, int tag, int start, int end)
{
	struct sl_schema *s = sl_sql_plan_new_schema(c);

	if (!s)
		return -ENOMEM;
	for (int i = 0; i < r->ncols; i++)
		if (sl_sql_plan_schema_add(c, s, r->cols[i].name ? r->cols[i].name : "EXPR",
					   &r->cols[i].type, NULL) < 0)
			return -EINVAL;
	return sl_sql_plan_late_rows_of(c, job, op, name, s, tag, start, end, timecol_of(r));
}

static bool is_integer(enum sl_type t)
{
	return t == SL_TYPE_INT || t == SL_TYPE_BIGINT;
}

/* True when columns of these types can be one join key (key_exprs() makes them one). */
static bool key_types_meet(const struct sl_sql_type *a, const struct sl_sql_type *b)
{
	return (a->type == b->type && (a->type != SL_TYPE_DECIMAL || a->scale == b->scale)) ||
	       (is_integer(a->type) && is_integer(b->type));
}

/* CAST(e AS BIGINT): INT and BIGINT keys must encode alike to meet in one key group. */
static const struct sl_expr *to_bigint(struct sl_sql_plan_ctx *c, const struct sl_expr *e)
{
	struct sl_expr *x = sl_sql_plan_own(c, calloc(1, sizeof(*x)), free);
	struct sl_expr **args = x ? sl_sql_plan_own(c, calloc(1, sizeof(*args)), free) : NULL;

	if (!args || !e)
		return NULL;
	x->kind = SL_EXPR_CAST;
	x->type.kind = SL_DDL_BIGINT;
	args[0] = (struct sl_expr *)e;
	x->args = args;
	x->nargs = 1;
	return x;
}

/* The key column k of both union rows: the two sides' columns, of one type. */
static int key_exprs(struct sl_sql_plan_ctx *c, const struct sl_sql_join_spec *js,
		     const struct sl_sql_plan_rel *L, const struct sl_sql_plan_rel *R,
		     const struct on_parts *p, int k, const struct sl_expr **le,
		     const struct sl_expr **re)
{
	const struct sl_sql_col *lc = &L->cols[p->l[k]], *rc = &R->cols[p->r[k]];

	*le = sl_sql_plan_col_expr(c, lc);
	*re = sl_sql_plan_col_expr(c, rc);
	if (lc->type.type == rc->type.type &&
	    (lc->type.type != SL_TYPE_DECIMAL || lc->type.scale == rc->type.scale))
		return 0;
	if (is_integer(lc->type.type) && is_integer(rc->type.type)) {
		*le = to_bigint(c, *le);
		*re = to_bigint(c, *re);
		return 0;
	}
	return sl_sql_plan_fail(c, js->on_line, js->on_col,
				"join keys '%s' (%s) and '%s' (%s) have different types; CAST "
				"one of them",
				lc->name, sl_type_name(lc->type.type), rc->name,
				sl_type_name(rc->type.type));
}

static const char *join_name(const struct sl_sql_join_spec *js, bool window)
{
	if (js->semi)
		return "window semi join";
	if (js->anti)
		return "window anti join";
	switch (js->kind) {
	case SL_JOIN_LEFT:
		return window ? "window left outer join" : "left outer join";
	case SL_JOIN_RIGHT:
		return window ? "window right outer join" : "right outer join";
	case SL_JOIN_FULL:
		return window ? "window full outer join" : "full outer join";
	default:
		return window ? "window inner join" : "inner join";
	}
}

/* A side as a join takes it (plan_int.h): a window TVF joined as it is (FROM
 * TABLE(TUMBLE(...)) L JOIN ...) gets its window columns, as Flink materializes it. */
int sl_sql_plan_join_side(struct sl_sql_plan_ctx *c, struct sl_sql_plan_rel *r, uint32_t line,
			  uint32_t col)
{
	if (r->tvf && sl_sql_plan_window_assign(c, r, line, col))
		return -EINVAL;
	if (r->rownum)
		return sl_sql_plan_fail(c, r->rownum_line, r->rownum_col,
					"ROW_NUMBER() must be filtered by WHERE %s = 1 inside the "
					"subquery before it is joined",
					r->rownum_name);
	return 0;
}

/* The joined row's columns, as ON's conditions and the query above see them. A window
 * join's results come out at window_end - 1, the time window_time says: the window_time
 * and window properties of a side that is never NULL-padded stay (Flink keeps them). */
static void joined_cols(const struct sl_sql_plan_rel *L, const struct sl_sql_plan_rel *R,
			enum sl_join_kind kind, bool window, struct sl_sql_plan_rel *out)
{
	out->ncols = L->ncols + R->ncols;
	for (int i = 0; i < out->ncols; i++) {
		bool left = i < L->ncols;
		bool padded = (left && (kind == SL_JOIN_RIGHT || kind == SL_JOIN_FULL)) ||
			      (!left && (kind == SL_JOIN_LEFT || kind == SL_JOIN_FULL));
		struct sl_sql_col *col = &out->cols[i];

		*col = left ? L->cols[i] : R->cols[i - L->ncols];
		col->field = i;
		col->match = NULL;
		col->proctime = false;
		if (!window || padded) {
			col->rowtime = false;
			col->win_prop = SL_SQL_WIN_NONE;
			col->win = NULL;
		}
		if (padded)
			col->type.nullable = true;
	}
}

/* ON's non-equi conjuncts compiled against the joined row; NULL jc when there are none. */
static int compile_conds(struct sl_sql_plan_ctx *c, const struct on_parts *p,
			 const struct sl_sql_plan_rel *J, struct join_cond **out)
{
	struct join_cond *jc;

	*out = NULL;
	if (!p->nrest)
		return 0;
	jc = sl_sql_plan_own(c, calloc(1, sizeof(*jc)), cond_free);
	if (!jc)
		return -ENOMEM;
	for (int i = 0; i < p->nrest; i++) {
		struct sl_sql_type t;
		struct sl_prog *prog = sl_sql_plan_compile(c, p->rest[i], J, &t);

		if (!prog)
			return -EINVAL;
		jc->prog[jc->n++] = prog;
		if (t.type != SL_TYPE_BOOL && !t.null_type)
			return sl_sql_plan_fail(c, p->rest[i]->line, p->rest[i]->col,
						"a join condition must be BOOLEAN, not %s",
						sl_type_name(t.type));
	}
	*out = jc;
	return 0;
}

/* `a = b`, or for NOT IN `(a = b) IS NOT FALSE` (a NULL on either side is a match: Flink's
 * null-aware anti join), over columns of the joined row. */
static const struct sl_expr *in_cond(struct sl_sql_plan_ctx *c, const struct sl_sql_col *a,
				     const struct sl_sql_col *b, bool null_aware, uint32_t line,
				     uint32_t col)
{
	struct sl_expr *eq = sl_sql_plan_own(c, calloc(1, sizeof(*eq)), free);
	struct sl_expr **args = eq ? sl_sql_plan_own(c, calloc(2, sizeof(*args)), free) : NULL;
	struct sl_expr *is =
		args && null_aware ? sl_sql_plan_own(c, calloc(1, sizeof(*is)), free) : NULL;
	struct sl_expr **isargs = is ? sl_sql_plan_own(c, calloc(1, sizeof(*isargs)), free) : NULL;

	if (!args || (null_aware && !isargs))
		return NULL;
	args[0] = (struct sl_expr *)sl_sql_plan_col_expr(c, a);
	args[1] = (struct sl_expr *)sl_sql_plan_col_expr(c, b);
	if (!args[0] || !args[1])
		return NULL;
	eq->kind = SL_EXPR_BINARY;
	eq->op = SL_EXPR_OP_EQ;
	eq->args = args;
	eq->nargs = 2;
	eq->line = line;
	eq->col = col;
	if (!null_aware)
		return eq;
	is->kind = SL_EXPR_IS;
	is->is_what = SL_EXPR_IS_FALSE;
	is->negated = true;
	isargs[0] = eq;
	is->args = isargs;
	is->nargs = 1;
	is->line = line;
	is->col = col;
	return is;
}

/* The join's one input: both sides projected onto the union row [__side, left columns,
 * right columns, key columns] (the other side's NULL), keyed by the key columns (keys[]:
 * their indices). NULL with the error set. */
static struct sl_stream *union_input(struct sl_sql_plan_ctx *c, struct sl_job *job,
				     struct sl_sql_plan_rel *L, struct sl_sql_plan_rel *R,
				     const struct on_parts *parts,
				     const struct sl_sql_join_spec *js, int *keys)
{
	const struct sl_expr *le[SL_PLAN_MAX_COLS], *re[SL_PLAN_MAX_COLS];
	const char *names[SL_PLAN_MAX_COLS];
	struct sl_sql_plan_rel LU, RU;
	struct sl_stream *ins[2], *s;
	int n;

	n = 0;
	le[n] = sl_sql_plan_side_expr(c, 0);
	re[n] = sl_sql_plan_side_expr(c, 1);
	names[n++] = "__side";
	for (int i = 0; i < L->ncols; i++, n++) {
		le[n] = sl_sql_plan_col_expr(c, &L->cols[i]);
		re[n] = sl_sql_plan_null_of(c, &L->cols[i].type);
		names[n] = L->cols[i].name ? L->cols[i].name : "EXPR";
	}
	for (int i = 0; i < R->ncols; i++, n++) {
		le[n] = sl_sql_plan_null_of(c, &R->cols[i].type);
		re[n] = sl_sql_plan_col_expr(c, &R->cols[i]);
		names[n] = R->cols[i].name ? R->cols[i].name : "EXPR";
	}
	for (int k = 0; k < parts->neq; k++, n++) {
		char kn[32];

		snprintf(kn, sizeof kn, "__key%d", k);
		if (key_exprs(c, js, L, R, parts, k, &le[n], &re[n]))
			return NULL;
		names[n] = sl_sql_plan_strdup(c, kn);
		keys[k] = n;
	}
	if (!parts->neq) {
		/* no equality to partition on: every row under one key, on one shard, as Flink
		 * runs such a join with parallelism 1; the name says so in `sluice explain` */
		le[n] = re[n] = sl_sql_plan_side_expr(c, 0);
		names[n] = "__no_equality_one_key";
		keys[0] = n++;
	}
	for (int i = 0; i < n; i++)
		if (!le[i] || !re[i] || !names[i])
			return NULL; /* out of memory: sl_sql_plan_own() said so */
	if (sl_sql_plan_project(c, L, le, names, n, NULL, "join: left side", &LU) ||
	    sl_sql_plan_project(c, R, re, names, n, NULL, "join: right side", &RU))
		return NULL;
	ins[0] = LU.s;
	ins[1] = RU.s;
	s = sl_stream_union_key_by(ins, 2, keys, parts->neq ? parts->neq : 1);
	if (!s)
		sl_sql_plan_fail(c, js->line, js->col, "%s", sl_job_error(job)->msg);
	return s;
}

/* A semi or anti join's output: the left rows alone, as they came (never NULL-padded, so
 * time attribute and window properties stay). */
static void left_cols(const struct sl_sql_plan_rel *L, struct sl_sql_plan_rel *out)
{
	out->ncols = L->ncols;
	for (int i = 0; i < L->ncols; i++) {
		out->cols[i] = L->cols[i];
		out->cols[i].field = i;
		out->cols[i].match = NULL;
		out->cols[i].proctime = false;
	}
}

int sl_sql_plan_join(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_from *f,
		     struct sl_sql_plan_rel *out)
{
	struct sl_sql_plan_rel L, R;
	struct sl_sql_join_spec js = {
		.kind = f->join,
		.on = f->on,
		.in_left = -1,
		.in_right = -1,
		.line = f->line,
		.col = f->col,
		.on_line = f->on ? f->on->line : f->line,
		.on_col = f->on ? f->on->col : f->col,
	};

	if (sl_sql_plan_from(c, job, f->left, &L) ||
	    sl_sql_plan_join_side(c, &L, f->left->line, f->left->col) ||
	    sl_sql_plan_from(c, job, f->right, &R) ||
	    sl_sql_plan_join_side(c, &R, f->right->line, f->right->col))
		return -EINVAL;
	return sl_sql_plan_join_rels(c, job, &L, &R, &js, out);
}

int sl_sql_plan_join_rels(struct sl_sql_plan_ctx *c, struct sl_job *job, struct sl_sql_plan_rel *L,
			  struct sl_sql_plan_rel *R, const struct sl_sql_join_spec *js,
			  struct sl_sql_plan_rel *out)
{
	/* J: the joined row ON's conditions are compiled against; out for a FROM's join, the
	 * left side's columns then the right's for a subquery (whose result is the left's) */
	struct sl_sql_plan_rel J;
	const struct sl_sql_plan_rel *Ls = js->on_left ? js->on_left : L;
	bool sub = js->semi || js->anti;
	const struct sl_sql_plan_rel *Jc = sub ? &J : out;
	struct on_parts parts = { .neq = 0 };
	int keys[SL_MAX_KEY_FIELDS];
	struct sl_stream *stream;
	struct sl_join_cfg jc;
	struct join_cond *cond;
	struct time_bounds tb;
	struct window_pair wp;
	bool window, in_key = false;
	const char *name;
	struct sl_process_fn *pfn;
	struct sl_schema *os;
	char msg[256];

	/* CROSS JOIN and `a, b` have no condition: a WHERE above filters the pairs */
	if (js->on && split_on(c, js->on, Ls, R, &parts))
		return -EINVAL;
	/* IN's comparison: a join key when the two columns can be one (a NULL meets nothing, as
	 * IN wants), else a condition, and for NOT IN always one (a NULL meets everything) */
	if (js->in_left >= 0 && !js->null_aware && parts.neq < SL_MAX_KEY_FIELDS &&
	    key_types_meet(&L->cols[js->in_left].type, &R->cols[js->in_right].type)) {
		parts.l[parts.neq] = js->in_left;
		parts.r[parts.neq++] = js->in_right;
		in_key = true;
	}
	if (L->ncols + R->ncols + parts.neq + 1 + !parts.neq > SL_PLAN_MAX_COLS)
		return sl_sql_plan_fail(c, js->line, js->col, "the join has more than %d columns",
					SL_PLAN_MAX_COLS);
	/* ON pairing both sides' window_start and window_end: Flink's window join */
	window = find_window_pair(&parts, L, R, &wp);
	if (sub && !window)
		return sl_sql_plan_fail(c, js->line, js->col,
					"%s is supported as a window semi or anti join only: the "
					"subquery's WHERE must pair window_start and window_end of "
					"the same window on both sides (L.window_start = "
					"R.window_start AND L.window_end = R.window_end)",
					js->what);
	if (window && (L->changelog || R->changelog))
		return sl_sql_plan_fail(c, js->line, js->col,
					"a window join needs insert-only inputs, but its %s side "
					"is a changelog",
					L->changelog ? "left" : "right");
	/* the conditions first: their errors name the ON the user wrote */
	memset(out, 0, sizeof(*out));
	if (sub) {
		/* conditions see both sides, ON's names as Ls has them */
		joined_cols(Ls, R, SL_JOIN_INNER, true, &J);
		left_cols(L, out);
	} else {
		joined_cols(L, R, js->kind, window, out);
	}
	if (js->in_left >= 0 && !in_key) {
		if (parts.nrest == MAX_CONDS)
			return sl_sql_plan_fail(c, js->line, js->col,
						"more than %d conditions besides the equalities",
						MAX_CONDS);
		parts.rest[parts.nrest] =
			in_cond(c, &Jc->cols[js->in_left], &Jc->cols[L->ncols + js->in_right],
				js->null_aware, js->on_line, js->on_col);
		if (!parts.rest[parts.nrest++])
			return -ENOMEM;
	}
	if (compile_conds(c, &parts, Jc, &cond))
		return -EINVAL;

	stream = union_input(c, job, L, R, &parts, js, keys);
	if (!stream)
		return -EINVAL;

	memset(&jc, 0, sizeof(jc));
	jc.in_schema = sl_stream_schema(stream);
	jc.nleft = L->ncols;
	jc.nright = R->ncols;
	jc.left_outer = !sub && (js->kind == SL_JOIN_LEFT || js->kind == SL_JOIN_FULL);
	jc.right_outer = !sub && (js->kind == SL_JOIN_RIGHT || js->kind == SL_JOIN_FULL);
	jc.semi = js->semi;
	jc.anti = js->anti;
	jc.nkey = parts.neq;
	memcpy(jc.key, keys, sizeof(int) * (size_t)parts.neq);
	jc.ttl_ms = c->state_ttl;
	if (cond) {
		jc.cond = eval_cond;
		jc.cond_arg = cond;
	}
	/* both rowtimes bounded against each other over insert-only inputs: Flink's interval
	 * join, whose state the watermark cleans and whose output is insert-only */
	if (window) {
		/* Flink's WindowJoinOperator: each window joined once when the watermark passes
		 * its end; the window's timer cleans the state, so no TTL */
		jc.window = true;
		jc.window_end[0] = 1 + wp.lend;
		jc.window_end[1] = 1 + L->ncols + wp.rend;
		jc.ttl_ms = 0;
		jc.late_tag[0] = c->late_table ? 1 : 0;
		jc.late_tag[1] = c->late_table ? 2 : 0;
	} else if (!L->changelog && !R->changelog && find_time_bounds(&parts, L, R, &tb)) {
		jc.interval = true;
		jc.left_time = 1 + tb.l;
		jc.right_time = 1 + L->ncols + tb.r;
		jc.lower = tb.lower;
		jc.upper = tb.upper;
		if (tb.lower > tb.upper)
			return sl_sql_plan_fail(c, js->on_line, js->on_col,
						"the join's time bounds leave no interval: %lld ms "
						"to %lld ms",
						(long long)tb.lower, (long long)tb.upper);
	}
	os = sl_sql_plan_new_schema(c);
	if (!os)
		return -ENOMEM;
	for (int i = 0; i < out->ncols; i++)
		if (sl_sql_plan_schema_add(c, os, sl_schema_name(jc.in_schema, 1 + i),
					   &out->cols[i].type, NULL) < 0)
			return -EINVAL;
	pfn = sl_sql_plan_own(c, calloc(1, sizeof(*pfn)), free_join);
	if (!pfn)
		return -ENOMEM;
	if (sl_join_build(&jc, pfn, msg, sizeof msg) < 0)
		return sl_sql_plan_fail(c, js->line, js->col, "%s", msg);
	name = jc.interval ? "interval join" : join_name(js, window);
	out->s = sl_stream_process(stream, name, pfn, os);
	if (!out->s)
		return sl_sql_plan_fail(c, js->line, js->col, "%s", sl_job_error(job)->msg);
	if (window && c->late_table &&
	    (late_side(c, job, out->s, name, L, 1, wp.lstart, wp.lend) ||
	     late_side(c, job, out->s, name, R, 2, wp.rstart, wp.rend)))
		return -EINVAL;
	out->changelog = !jc.interval && !window &&
			 (L->changelog || R->changelog || jc.left_outer || jc.right_outer);
	return 0;
}
