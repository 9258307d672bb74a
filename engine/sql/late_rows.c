/*
 * late_rows.c - SET 'sluice.late-data.table' = 't': every row a window operator drops as
 * late goes to table t with the reason, instead of only a counter (Flink SQL keeps only the
 * metric). The same holds for the operators that take the windows of a window TVF (window
 * Top-N and deduplication, window joins), whose rows carry their window in two fields.
 *
 * The window operator sends late rows to its side output; a flat_map right behind it builds
 * the late table's row. The columns of t are chosen by name from:
 *   operator      STRING     the window operator ("tumble window", ...)
 *   event_time    TIMESTAMP  the late row's rowtime (a window TVF's row: its time column's)
 *   watermark     TIMESTAMP  the operator's watermark when the row arrived
 *   window_start  TIMESTAMP  the (last) window the row belonged to, already fired (its
 *                            fields, for a row that carries its window)
 *   window_end    TIMESTAMP
 *   reason        STRING     one sentence with the figures above
 *   row           STRING     the row as the operator saw it (for a window: group keys and
 *                            aggregate arguments), as a JSON object
 * Late rows are rare and off the hot path, so formatting here may use snprintf.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_options.h"
#include "late_rows.h"
#include "plan_int.h"

enum late_col {
	LATE_OPERATOR,
	LATE_EVENT_TIME,
	LATE_WATERMARK,
	LATE_WINDOW_START,
	LATE_WINDOW_END,
	LATE_REASON,
	LATE_ROW,
};

static const struct {
	const char *name;
	enum late_col what;
	bool is_time;
} known[] = {
	{ "operator", LATE_OPERATOR, false },
	{ "event_time", LATE_EVENT_TIME, true },
	{ "watermark", LATE_WATERMARK, true },
	{ "window_start", LATE_WINDOW_START, true },
	{ "window_end", LATE_WINDOW_END, true },
	{ "reason", LATE_REASON, false },
	{ "row", LATE_ROW, false },
};

struct late_rows {
	const char *op_name;
	const struct sl_schema *in; /* the window's input rows */
	struct sl_window_spec win;
	int wstart, wend; /* fields of `in` holding the row's window, or -1: from `win` */
	int etime;	  /* field of `in` holding the row's rowtime, or -1: its event time */
	int ncols;
	enum late_col what[SL_SCHEMA_MAX_FIELDS];
};

static sl_ts_t floor_div(sl_ts_t a, sl_ts_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The window the late row fell into (the latest one for hopping windows). */
static void window_of(const struct sl_window_spec *w, sl_ts_t ts, sl_ts_t *start, sl_ts_t *end)
{
	if (w->kind == SL_WIN_SESSION) {
		*start = ts;
		*end = ts + w->gap_ms;
		return;
	}
	/* tumble and cumulate: the period holding ts (a cumulating window's largest window);
	 * hop: the last window holding ts */
	sl_ts_t step = w->kind == SL_WIN_HOP ? w->slide_ms : w->size_ms;

	*start = floor_div(ts - w->offset_ms, step) * step + w->offset_ms;
	*end = *start + w->size_ms;
}

static void late_row(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *in, void *arg)
{
	const struct late_rows *l = arg;
	struct sl_row_builder *b = sl_ctx_out(ctx);
	sl_ts_t wm = sl_ctx_watermark(ctx), ws, we;
	char buf[4096], t1[40], t2[40], t3[40], t4[40];
	const struct sl_row *row;
	int n;

	if (l->etime >= 0 && !sl_row_is_null(in, l->etime))
		ts = sl_row_i64(in, l->etime);
	if (l->wend >= 0) {
		ws = sl_row_i64(in, l->wstart);
		we = sl_row_i64(in, l->wend);
	} else {
		window_of(&l->win, ts, &ws, &we);
	}
	for (int i = 0; i < l->ncols; i++) {
		switch (l->what[i]) {
		case LATE_OPERATOR:
			sl_rowb_set_str(b, i, l->op_name, (uint32_t)strlen(l->op_name));
			break;
		case LATE_EVENT_TIME:
			sl_rowb_set_i64(b, i, ts);
			break;
		case LATE_WATERMARK:
			if (wm == SL_TS_MIN)
				sl_rowb_set_null(b, i);
			else
				sl_rowb_set_i64(b, i, wm);
			break;
		case LATE_WINDOW_START:
			sl_rowb_set_i64(b, i, ws);
			break;
		case LATE_WINDOW_END:
			sl_rowb_set_i64(b, i, we);
			break;
		case LATE_REASON:
			sl_ts_format(ts, t1, sizeof t1);
			sl_ts_format(ws, t2, sizeof t2);
			sl_ts_format(we, t3, sizeof t3);
			sl_ts_format(wm, t4, sizeof t4);
			n = snprintf(buf, sizeof buf,
				     "%s: row at %s belongs to window [%s, %s), "
				     "which fired when the watermark reached %s",
				     l->op_name, t1, t2, t3, t4);
			sl_rowb_set_str(b, i, buf,
					(uint32_t)(n < (int)sizeof buf ? n : (int)sizeof buf - 1));
			break;
		case LATE_ROW:
			n = sl_json_write_row(in, l->in, buf, sizeof buf);
			if (n <= 0) {
				sl_rowb_set_null(b, i);
				break;
			}
			while (n > 0 && buf[n - 1] == '\n')
				n--;
			sl_rowb_set_str(b, i, buf, (uint32_t)n);
			break;
		}
	}
	row = sl_rowb_finish(b);
	if (row)
		sl_emit(ctx, ts, row);
}

static int route(struct sl_sql_plan_ctx *c, struct sl_job *job, struct sl_stream *window,
		 const char *op_name, const struct sl_window_spec *win, int wstart, int wend,
		 int etime, const struct sl_schema *in, int tag)
{
	struct sl_sql_plan_table *t = sl_sql_plan_find_table(c, c->late_table);
	struct late_rows *l;
	struct sl_stream *side, *rows;
	struct sl_schema *schema;
	struct sl_sql_conn *k;

	if (!t)
		return sl_sql_plan_fail(
			c, 0, 0,
			"'sluice.late-data.table' names '%s', which is not a table "
			"(CREATE TABLE it with columns among operator, event_time, watermark, "
			"window_start, window_end, reason, row)",
			c->late_table);
	l = sl_sql_plan_own(c, calloc(1, sizeof(*l)), free);
	if (!l)
		return -ENOMEM;
	l->op_name = op_name;
	l->in = in;
	if (win)
		l->win = *win;
	l->wstart = wstart;
	l->wend = wend;
	l->etime = etime;
	l->ncols = t->nphys;
	for (int i = 0; i < t->nphys; i++) {
		size_t k2;

		for (k2 = 0; k2 < sizeof(known) / sizeof(known[0]); k2++)
			if (!strcasecmp(known[k2].name, t->phys_name[i]))
				break;
		if (k2 == sizeof(known) / sizeof(known[0]))
			return sl_sql_plan_fail(
				c, t->ddl->cols[0].line, t->ddl->cols[0].col,
				"late-data table '%s': unknown column '%s' (known: operator, "
				"event_time, watermark, window_start, window_end, reason, row)",
				t->ddl->name, t->phys_name[i]);
		if (known[k2].is_time ? t->phys_type[i].type != SL_TYPE_TIMESTAMP &&
						t->phys_type[i].type != SL_TYPE_TIMESTAMP_LTZ
				      : t->phys_type[i].type != SL_TYPE_STRING)
			return sl_sql_plan_fail(c, t->ddl->cols[0].line, t->ddl->cols[0].col,
						"late-data table '%s': column '%s' must be %s",
						t->ddl->name, t->phys_name[i],
						known[k2].is_time ? "TIMESTAMP(3)" : "STRING");
		l->what[i] = known[k2].what;
	}
	schema = sl_sql_plan_table_schema(c, t);
	if (!schema)
		return -EINVAL;
	k = sl_sql_plan_connector(c, t->ddl, schema, true);
	if (!k)
		return -EINVAL;
	if (!k->sink_ops)
		return sl_sql_plan_fail(c, 0, 0, "late-data table '%s' cannot be written",
					t->ddl->name);
	side = sl_stream_side_output(window, tag, in);
	rows = side ? sl_stream_flat_map(side, "late rows", late_row, l, schema) : NULL;
	if (!rows || sl_stream_sink(rows, t->ddl->name, k->sink_ops, k->cfg))
		return sl_sql_plan_fail(c, 0, 0, "late rows: %s", sl_job_error(job)->msg);
	return 0;
}

int sl_sql_plan_late_rows(struct sl_sql_plan_ctx *c, struct sl_job *job, struct sl_stream *window,
			  const char *op_name, const struct sl_window_spec *win,
			  const struct sl_schema *in, int tag)
{
	return route(c, job, window, op_name, win, -1, -1, -1, in, tag);
}

int sl_sql_plan_late_rows_of(struct sl_sql_plan_ctx *c, struct sl_job *job, struct sl_stream *op,
			     const char *op_name, const struct sl_schema *in, int tag, int wstart,
			     int wend, int etime)
{
	return route(c, job, op, op_name, NULL, wstart, wend, etime, in, tag);
}
