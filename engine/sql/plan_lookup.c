/*
 * plan_lookup.c - the lookup join: `JOIN t FOR SYSTEM_TIME AS OF l.proctime AS r ON l.x = r.k`
 * where l.proctime is a PROCTIME() attribute and t a bounded table (Flink's lookup join,
 * StreamExecLookupJoin, with a full cache).
 *
 * Flink joins each row with the table as it is when the row is processed, through a
 * lookup source (JDBC, HBase, Hive); sluice's bounded tables are files, so it reads the
 * table whole before the job starts, as Flink's full lookup cache does, and the join
 * is then a stateless probe on the row's own shard (engine/sql/lookup.c): no exchange, no
 * state, nothing in checkpoints (a restart reads the table again). The file is read by
 * a job of its own, run here at planning (one shard), so every connector, format, computed
 * column and dead-letter rule of a bounded scan applies to it. Changes to the file after
 * the start are not seen (Flink's cache reloads on a period; sluice does not).
 *
 * ON must be equalities between expressions of the left side and columns of the table (of
 * the same types), ANDed with conditions that an INNER join applies to the joined rows;
 * a LEFT join takes equalities only (a condition on the table's columns would change which
 * rows are padded).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lookup.h"
#include "plan_int.h"

/* The sink of the loading job: every row into the table (one shard). */
static void *collect_open(const void *cfg, const struct sl_schema *schema, int shard, int nshards,
			  struct sl_error *err)
{
	return (void *)cfg;
}

static int collect_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	return sl_lookup_add(state, row);
}

static int collect_flush(void *state)
{
	return 0;
}

static void collect_close(void *state)
{
}

static const struct sl_sink_ops collect_ops = {
	.name = "lookup table",
	.open = collect_open,
	.write = collect_write,
	.flush = collect_flush,
	.close = collect_close,
};

/* Whether every column e reads is the left side's (and none the table's). */
static bool left_only(const struct sl_sql_plan_rel *L, const struct sl_sql_plan_rel *R,
		      const struct sl_expr *e)
{
	if (!e)
		return true;
	if (e->kind == SL_EXPR_COLUMN)
		return sl_sql_plan_resolve_plain(L, e) >= 0 && sl_sql_plan_resolve_plain(R, e) < 0;
	if (e->sub || e->kind == SL_EXPR_STAR)
		return false;
	for (uint32_t i = 0; i < e->nargs; i++)
		if (!left_only(L, R, e->args[i]))
			return false;
	return left_only(L, R, e->case_operand) && left_only(L, R, e->case_else);
}

/* Splits ON into equalities left expression = table column (into lx[], rcol[]) and other
 * conjuncts (rest[]). 0 or -EINVAL (said). */
static int split_on(struct sl_sql_plan_ctx *c, const struct sl_expr *on,
		    const struct sl_sql_plan_rel *L, const struct sl_sql_plan_rel *R,
		    const struct sl_expr **lx, int *rcol, int *n, const struct sl_expr **rest,
		    int *nrest)
{
	if (on->kind == SL_EXPR_BINARY && on->op == SL_EXPR_OP_AND)
		return split_on(c, on->args[0], L, R, lx, rcol, n, rest, nrest) ||
				       split_on(c, on->args[1], L, R, lx, rcol, n, rest, nrest)
			       ? -EINVAL
			       : 0;
	if (on->kind == SL_EXPR_BINARY && on->op == SL_EXPR_OP_EQ) {
		for (int side = 0; side < 2; side++) {
			const struct sl_expr *a = on->args[side], *b = on->args[1 - side];
			int rc = sl_sql_plan_resolve_plain(R, b);
			struct sl_sql_type t;
			struct sl_prog *p;

			/* a column of the table = an expression of the left side alone */
			if (rc < 0 || !left_only(L, R, a))
				continue;
			p = sl_sql_plan_compile(c, a, L, &t);
			if (!p)
				return -EINVAL;
			sl_prog_destroy(p);
			if (*n == SL_LOOKUP_MAX_KEYS)
				return sl_sql_plan_fail(c, on->line, on->col,
							"a lookup join takes at most %d keys",
							SL_LOOKUP_MAX_KEYS);
			if (t.type != R->cols[rc].type.type || t.scale != R->cols[rc].type.scale)
				return sl_sql_plan_fail(c, on->line, on->col,
							"lookup join key %s and column '%s' have "
							"different types: CAST one side",
							sl_type_name(t.type), R->cols[rc].name);
			lx[*n] = a;
			rcol[(*n)++] = rc;
			return 0;
		}
	}
	if (*nrest == SL_PLAN_MAX_COLS)
		return sl_sql_plan_fail(c, on->line, on->col, "too many ON conditions");
	rest[(*nrest)++] = on;
	return 0;
}

/* The table's option `key`, or NULL. */
static const char *table_opt(const struct sl_sql_plan_table *t, const char *key)
{
	for (uint32_t i = 0; i < t->ddl->nopts; i++)
		if (!strcmp(t->ddl->opts[i].key, key))
			return t->ddl->opts[i].value;
	return NULL;
}

/* Whether the table ends: read whole before the job, it must (a file, a bounded datagen). */
static bool is_bounded(const struct sl_sql_plan_table *t)
{
	const char *conn = table_opt(t, "connector");

	if (!conn)
		return false;
	if (!strcmp(conn, "filesystem"))
		return true;
	return !strcmp(conn, "datagen") && table_opt(t, "number-of-rows");
}

int sl_sql_plan_lookup_join(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_from *f,
			    struct sl_sql_plan_rel *L, struct sl_sql_plan_rel *out)
{
	const struct sl_expr *lx[SL_LOOKUP_MAX_KEYS], *rest[SL_PLAN_MAX_COLS];
	const struct sl_expr *exprs[SL_PLAN_MAX_COLS];
	const char *names[SL_PLAN_MAX_COLS];
	int rcol[SL_LOOKUP_MAX_KEYS], lkey[SL_LOOKUP_MAX_KEYS], rkey[SL_LOOKUP_MAX_KEYS];
	int nkey = 0, nrest = 0, n = 0, rc;
	struct sl_sql_plan_rel R, LK;
	struct sl_run_opts ro = { .nshards = 1 };
	struct sl_schema *rs, *os;
	struct sl_lookup *lk;
	const struct sl_sql_plan_table *t;
	struct sl_job *load;
	char name[32];

	if (f->join != SL_JOIN_INNER && f->join != SL_JOIN_LEFT)
		return sl_sql_plan_fail(c, f->line, f->col, "a lookup join is INNER or LEFT");
	if (!f->on)
		return sl_sql_plan_fail(c, f->line, f->col, "a lookup join needs ON");
	t = sl_sql_plan_find_table(c, f->right->name);
	if (!t || !is_bounded(t))
		return sl_sql_plan_fail(c, f->right->line, f->right->col,
					"a lookup join (FOR SYSTEM_TIME AS OF a processing time) "
					"reads '%s' whole before the job starts, so it must be a "
					"bounded table: a file, or datagen with number-of-rows",
					f->right->name);
	load = sl_job_create("lookup table");
	if (!load)
		return -ENOMEM;
	/* the table, planned into the loading job, to learn its columns */
	if (sl_sql_plan_from(c, load, f->right, &R)) {
		sl_job_destroy(load);
		return -EINVAL;
	}
	if ((rc = split_on(c, f->on, L, &R, lx, rcol, &nkey, rest, &nrest)) || !nkey) {
		sl_job_destroy(load);
		return rc ? rc
			  : sl_sql_plan_fail(c, f->on->line, f->on->col,
					     "a lookup join needs an equality between the left "
					     "side and a column of '%s'",
					     f->right->name);
	}
	if (nrest && f->join == SL_JOIN_LEFT) {
		sl_job_destroy(load);
		return sl_sql_plan_fail(c, rest[0]->line, rest[0]->col,
					"a LEFT lookup join takes equalities only in ON: filter "
					"the table in a view");
	}
	/* the left side, with each key expression as a column */
	for (int i = 0; i < L->ncols; i++, n++) {
		exprs[n] = sl_sql_plan_col_expr(c, &L->cols[i]);
		snprintf(name, sizeof name, "$l%d", i);
		names[n] = L->cols[i].name ? L->cols[i].name : sl_sql_plan_strdup(c, name);
	}
	for (int k = 0; k < nkey; k++, n++) {
		exprs[n] = lx[k];
		snprintf(name, sizeof name, "$lk%d", k);
		names[n] = sl_sql_plan_strdup(c, name);
		lkey[k] = n;
		rkey[k] = R.cols[rcol[k]].field;
	}
	for (int i = 0; i < n; i++)
		if (!exprs[i] || !names[i]) {
			sl_job_destroy(load);
			return -ENOMEM;
		}
	if (n + R.ncols > SL_PLAN_MAX_COLS ||
	    sl_sql_plan_project(c, L, exprs, names, n, NULL, "lookup join: keys", &LK)) {
		sl_job_destroy(load);
		return n + R.ncols > SL_PLAN_MAX_COLS
			       ? sl_sql_plan_fail(c, f->line, f->col, "too many columns")
			       : -EINVAL;
	}
	for (int i = 0; i < L->ncols; i++)
		LK.cols[i].qual = L->cols[i].qual;
	rs = sl_sql_plan_own(c, sl_schema_clone(sl_stream_schema(R.s)),
			     (void (*)(void *))sl_schema_destroy);
	lk = rs ? sl_sql_plan_own(c,
				  sl_lookup_create(sl_stream_schema(LK.s), lkey, rs, rkey, nkey,
						   f->join == SL_JOIN_LEFT),
				  sl_lookup_destroy)
		: NULL;
	if (!lk || sl_stream_sink(R.s, "lookup table", &collect_ops, lk)) {
		sl_job_destroy(load);
		return -ENOMEM;
	}
	/* read the table now: a missing file or a bad record is said here, before the job */
	rc = sl_job_run(load, &ro);
	if (rc) {
		rc = sl_sql_plan_fail(c, f->right->line, f->right->col,
				      "reading lookup table '%s': %s", f->right->name,
				      sl_job_error(load)->msg);
		sl_job_destroy(load);
		return rc;
	}
	sl_job_destroy(load);
	if (sl_lookup_freeze(lk))
		return -ENOMEM;
	/* probe rows: the left's fields, the key columns, then the table's */
	os = sl_sql_plan_own(c, sl_schema_clone(sl_stream_schema(LK.s)),
			     (void (*)(void *))sl_schema_destroy);
	if (!os)
		return -ENOMEM;
	for (int i = 0; i < R.ncols; i++)
		if (sl_sql_plan_schema_add(c, os, R.cols[i].name ? R.cols[i].name : "$r",
					   &R.cols[i].type, NULL) < 0)
			return -EINVAL;
	*out = LK;
	out->s = sl_lookup_stream(LK.s, "lookup join", lk, os);
	if (!out->s)
		return sl_sql_plan_fail(c, f->line, f->col, "%s", sl_job_error(job)->msg);
	for (int i = 0; i < R.ncols; i++) {
		struct sl_sql_col *col = &out->cols[n + i];

		*col = R.cols[i];
		col->field = n + i;
		col->rowtime = col->proctime = false;
		col->match = NULL;
		if (f->join == SL_JOIN_LEFT)
			col->type.nullable = true;
	}
	for (int k = 0; k < nkey; k++)
		out->cols[L->ncols + k].name = NULL; /* the key columns: not for SELECT * */
	out->ncols = n + R.ncols;
	/* INNER: the other conditions over the joined rows */
	for (int i = 0; i < nrest; i++)
		if (sl_sql_plan_filter(c, out, rest[i]))
			return -EINVAL;
	return 0;
}
