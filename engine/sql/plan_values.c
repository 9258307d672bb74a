/*
 * plan_values.c - the relation of a SELECT without FROM (`SELECT 1 + 1`): Flink reads it as
 * a one-row VALUES, a bounded source of one empty row, over which the SELECT list (only
 * constants and functions of none, so nothing it could read) is evaluated by the usual
 * projection. The source has one split on shard 0, no watermark, and ends after its row;
 * its checkpoint position is whether the row was sent, so a restore never sends it twice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

struct values_cfg {
	int64_t nrows; /* empty rows to emit */
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
		sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 0);
		row = sl_rowb_finish(&b);
		if (!row)
			return -ENOSPC;
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
