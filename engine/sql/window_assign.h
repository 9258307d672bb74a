/*
 * window_assign.h - materializes a window TVF that is read without aggregation.
 */
#ifndef SL_SQL_WINDOW_ASSIGN_H
#define SL_SQL_WINDOW_ASSIGN_H

#include <stdint.h>

struct sl_sql_plan_ctx;
struct sl_sql_plan_rel;

/* Appends window_start, window_end and window_time to rel (one row per window of each input
 * row). Returns 0 or -errno with the planner's error set (line:col of the query). */
int sl_sql_plan_window_assign(struct sl_sql_plan_ctx *c, struct sl_sql_plan_rel *rel, uint32_t line,
			      uint32_t col);

#endif
