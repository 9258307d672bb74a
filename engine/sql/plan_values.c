/*
 * plan_values.c - the relations of VALUES and of a SELECT without FROM.
 *
 * `VALUES (1, 'a'), (2, 'b')` (a query term: in FROM, in a UNION, after INSERT INTO) is a
 * bounded source of its rows. Each column's type is the common type of its values, as
 * Flink derives it (INT and DECIMAL(2, 1) give DECIMAL(11, 1); strings of any lengths a
 * string, printed unpadded as Flink's VARCHAR(max length) is). The values are constants,
 * so they are computed once here, at plan time, into finished rows the source copies out;
 * Flink folds them at plan time too. What cannot be a constant is refused at its place: a
 * bare NULL (no type, as Flink says), a time function, a value that fails to compute.
 *
 * `SELECT 1 + 1` is Flink's one-row VALUES: one empty row, over which the SELECT list is
 * evaluated by the usual projection.
 *
 * Either source has one split on shard 0, no watermark, and ends after its rows; its
 * checkpoint position is how many rows were sent, so a restore never sends one twice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

struct values_cfg {
	int64_t nrows;	     /* rows to emit */
	const char *rows;    /* NULL: empty rows; else the rows back to back (8-byte aligned) */
	const uint32_t *off; /* [nrows] where each row starts in rows */
};

struct values_split {
	const struct values_cfg *cfg;
	int64_t sent;
};

static int values_nsplits(const void *cfg)
{
	(void)cfg;
	return 1;
}

static void *values_open(const void *cfg, int split, struct sl_error *err)
{
	struct values_split *v = calloc(1, sizeof(*v));

	(void)split;
	if (!v) {
		err->code = -ENOMEM;
		snprintf(err->msg, sizeof err->msg, "values: out of memory");
		return NULL;
	}
	v->cfg = cfg;
	return v;
}

static int values_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct values_split *v = state;
	struct sl_row_builder b;
	const struct sl_row *row;
	int n = 0;

	if (v->sent >= v->cfg->nrows)
		return SL_SRC_EOF;
	while (n < max && v->sent < v->cfg->nrows) {
		if (v->cfg->rows) {
			row = (const struct sl_row *)(v->cfg->rows + v->cfg->off[v->sent]);
		} else {
			sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 0);
			row = sl_rowb_finish(&b);
			if (!row)
				return -ENOSPC;
		}
		if (sl_src_emit(c, row))
			return -ENOSPC;
		v->sent++;
		n++;
	}
	return n;
}

static void values_close(void *state)
{
	free(state);
}

static int values_position(void *state, void *buf, size_t cap, size_t *len)
{
	const struct values_split *v = state;

	if (cap < sizeof(v->sent))
		return -ENOSPC;
	memcpy(buf, &v->sent, sizeof(v->sent));
	*len = sizeof(v->sent);
	return 0;
}

static int values_seek(void *state, const void *pos, size_t len)
{
	struct values_split *v = state;
	int64_t sent;

	if (len != sizeof(sent))
		return -EINVAL;
	memcpy(&sent, pos, sizeof(sent));
	if (sent < 0 || sent > v->cfg->nrows)
		return -EINVAL;
	v->sent = sent;
	return 0;
}

static void values_progress(void *state, struct sl_src_progress *p)
{
	const struct values_split *v = state;

	snprintf(p->name, sizeof p->name, "values");
	p->kind = "values";
	p->pos = v->sent;
	p->end = v->cfg->nrows;
}

static const struct sl_source_ops values_ops = {
	.name = "values",
	.nsplits = values_nsplits,
	.open = values_open,
	.poll = values_poll,
	.close = values_close,
	.position = values_position,
	.seek = values_seek,
	.progress = values_progress,
};

int sl_sql_plan_values_one(struct sl_sql_plan_ctx *c, struct sl_job *job, uint32_t line,
			   uint32_t col, struct sl_sql_plan_rel *out)
{
	struct values_cfg *cfg = sl_sql_plan_own(c, calloc(1, sizeof(*cfg)), free);
	struct sl_schema *s = sl_sql_plan_new_schema(c);
	struct sl_wm_strategy wm = { .kind = SL_WM_NONE, .ts_field = -1 };

	if (!cfg || !s)
		return sl_sql_plan_fail(c, line, col, "out of memory");
	cfg->nrows = 1;
	memset(out, 0, sizeof(*out));
	out->s = sl_job_source(job, "values", &values_ops, cfg, s, &wm);
	if (!out->s)
		return sl_sql_plan_fail(c, line, col, "VALUES: %s", sl_job_error(job)->msg);
	return 0;
}

/* Column j's type over every row so far (row r's value of type t), or a refusal at e. */
static int fold_type(struct sl_sql_plan_ctx *c, const struct sl_expr *e, uint32_t r, uint32_t j,
		     const struct sl_sql_type *t, struct sl_sql_type *col)
{
	char a[64], b[64];

	if (t->null_type)
		return sl_sql_plan_fail(c, e->line, e->col,
					"a bare NULL in VALUES has no type: write CAST(NULL AS "
					"type)");
	if (r == 0) {
		*col = *t;
		return 0;
	}
	if (sl_sql_type_common(col, t, col))
		return 0;
	sl_sql_type_name(t, a, sizeof a);
	sl_sql_type_name(col, b, sizeof b);
	return sl_sql_plan_fail(c, e->line, e->col,
				"VALUES column %u: %s in row %u does not go with %s of the rows "
				"before it; CAST one of them",
				j + 1, a, r + 1, b);
}

/* Computes one row of q into b (typed types[]) from its compiled values. 0 or -EINVAL. */
static int eval_row(struct sl_sql_plan_ctx *c, const struct sl_values_row *r,
		    struct sl_prog *const *progs, const struct sl_sql_type *types,
		    struct sl_eval_ctx *ec, const struct sl_row *none, struct sl_row_builder *b)
{
	for (uint32_t j = 0; j < r->nvals; j++) {
		uint64_t errors = ec->errors;

		sl_prog_eval_into(progs[j], none, ec, &types[j], b, (int)j);
		if (ec->errors != errors)
			return sl_sql_plan_fail(c, r->vals[j]->line, r->vals[j]->col,
						"this VALUES value cannot be computed (a CAST "
						"of bad text, a number out of range, a string "
						"too long)");
	}
	return 0;
}

/* The rows of q, computed, back to back into cfg (plan-owned). 0 or -errno (said). */
static int build_rows(struct sl_sql_plan_ctx *c, const struct sl_query *q, struct sl_prog **progs,
		      const struct sl_sql_type *types, struct values_cfg *cfg)
{
	uint32_t ncols = q->values[0].nvals;
	struct sl_eval_ctx ec = { .scratch_cap = SL_EVAL_SCRATCH };
	struct sl_row_builder b;
	const struct sl_row *none, *row;
	char *buf = malloc(SL_ROW_SCRATCH), *rows = NULL;
	uint32_t *off = sl_sql_plan_own(c, calloc(q->nvalues, sizeof(*off)), free);
	size_t used = 0;
	int rc = -ENOMEM;

	ec.scratch = malloc(SL_EVAL_SCRATCH);
	if (!buf || !ec.scratch || !off) {
		sl_sql_plan_fail(c, q->line, q->col, "out of memory");
		goto out_free;
	}
	sl_rowb_init(&b, buf, SL_ROW_SCRATCH, 0);
	none = sl_rowb_finish(&b);
	for (uint32_t r = 0; r < q->nvalues; r++) {
		char *grown;

		/* the empty row `none` stays at the start of buf: build after it */
		sl_rowb_init(&b, buf + 64, SL_ROW_SCRATCH - 64, (int)ncols);
		if ((rc = eval_row(c, &q->values[r], progs + (size_t)r * ncols, types, &ec, none,
				   &b)))
			goto out_free;
		row = sl_rowb_finish(&b);
		rc = -EINVAL;
		if (!row) {
			sl_sql_plan_fail(c, q->values[r].line, q->values[r].col,
					 "this VALUES row is larger than %d bytes", SL_ROW_SCRATCH);
			goto out_free;
		}
		rc = -ENOMEM;
		grown = realloc(rows, used + row->size);
		if (!grown) {
			sl_sql_plan_fail(c, q->line, q->col, "out of memory");
			goto out_free;
		}
		rows = grown;
		memcpy(rows + used, row, row->size);
		off[r] = (uint32_t)used;
		used += row->size;
	}
	if (!rows || !sl_sql_plan_own(c, rows, free)) {
		rows = NULL;
		sl_sql_plan_fail(c, q->line, q->col, "out of memory");
		goto out_free;
	}
	cfg->rows = rows;
	cfg->off = off;
	cfg->nrows = q->nvalues;
	rows = NULL;
	rc = 0;

out_free:
	free(rows);
	free(ec.scratch);
	free(buf);
	return rc;
}

int sl_sql_plan_values(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		       struct sl_sql_plan_rel *out)
{
	uint32_t ncols = q->values[0].nvals;
	struct sl_sql_plan_rel none = { 0 };
	struct sl_sql_type types[SL_PLAN_MAX_COLS];
	struct sl_wm_strategy wm = { .kind = SL_WM_NONE, .ts_field = -1 };
	struct values_cfg *cfg = sl_sql_plan_own(c, calloc(1, sizeof(*cfg)), free);
	struct sl_schema *s = sl_sql_plan_new_schema(c);
	struct sl_prog **progs;
	int rc = -EINVAL;

	if (!cfg || !s)
		return sl_sql_plan_fail(c, q->line, q->col, "out of memory");
	if (ncols > SL_PLAN_MAX_COLS)
		return sl_sql_plan_fail(c, q->line, q->col, "VALUES of more than %d columns",
					SL_PLAN_MAX_COLS);
	progs = calloc((size_t)q->nvalues * ncols, sizeof(*progs));
	if (!progs)
		return sl_sql_plan_fail(c, q->line, q->col, "out of memory");
	for (uint32_t r = 0; r < q->nvalues; r++)
		for (uint32_t j = 0; j < ncols; j++) {
			const struct sl_expr *e = q->values[r].vals[j];
			struct sl_prog **p = &progs[(size_t)r * ncols + j];
			struct sl_sql_type t;

			if (!(*p = sl_sql_plan_compile(c, e, &none, &t)) ||
			    fold_type(c, e, r, j, &t, &types[j]))
				goto out_free;
			if (!sl_prog_is_const(*p)) {
				sl_sql_plan_fail(c, e->line, e->col,
						 "VALUES rows are computed once, when the job is "
						 "planned: a time function is not allowed in them");
				goto out_free;
			}
		}
	if ((rc = build_rows(c, q, progs, types, cfg)))
		goto out_free;
	memset(out, 0, sizeof(*out));
	for (uint32_t j = 0; j < ncols; j++) {
		char name[32];
		int f;

		/* Flink's names for the columns of an unnamed VALUES: EXPR$0, EXPR$1, ... */
		snprintf(name, sizeof name, "EXPR$%u", j);
		rc = -EINVAL;
		if ((f = sl_sql_plan_schema_put(s, name, &types[j])) < 0) {
			sl_sql_plan_fail(c, q->line, q->col, "VALUES: cannot add column %u", j + 1);
			goto out_free;
		}
		if (!(out->cols[j].name = sl_sql_plan_strdup(c, name)))
			goto out_free;
		out->cols[j].type = types[j];
		out->cols[j].field = f;
	}
	out->ncols = (int)ncols;
	out->s = sl_job_source(job, "values", &values_ops, cfg, s, &wm);
	if (!out->s) {
		sl_sql_plan_fail(c, q->line, q->col, "VALUES: %s", sl_job_error(job)->msg);
		goto out_free;
	}
	rc = 0;

out_free:
	for (size_t i = 0; i < (size_t)q->nvalues * ncols; i++)
		sl_prog_destroy(progs[i]);
	free(progs);
	return rc;
}
