/*
 * late_rows.h - routing a window operator's late rows to the table named by
 * SET 'sluice.late-data.table' (see late_rows.c for the columns it fills).
 */
#ifndef SL_SQL_LATE_ROWS_H
#define SL_SQL_LATE_ROWS_H

#include <sluice/job.h>

struct sl_sql_plan_ctx;

/* Connects side output `tag` of `window` (its late rows, schema `in`) to the late-data
 * table's sink. Returns 0 or -errno with the planner's error set. */
int sl_sql_plan_late_rows(struct sl_sql_plan_ctx *c, struct sl_job *job, struct sl_stream *window,
			  const char *op_name, const struct sl_window_spec *win,
			  const struct sl_schema *in, int tag);
/* The same for an operator whose rows carry their window (window Top-N, window joins):
 * fields wstart and wend of `in` are its bounds, field etime the row's own rowtime (the
 * window TVF's time column; -1: the row's event time, window_time). */
int sl_sql_plan_late_rows_of(struct sl_sql_plan_ctx *c, struct sl_job *job, struct sl_stream *op,
			     const char *op_name, const struct sl_schema *in, int tag, int wstart,
			     int wend, int etime);

#endif
