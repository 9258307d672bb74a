/*
 * window_assign.h - materializes a window TVF that is read without aggregation.
 */
#ifndef SL_SQL_WINDOW_ASSIGN_H
#define SL_SQL_WINDOW_ASSIGN_H

#include <stdint.h>

struct pl_ctx;
struct pl_rel;

/* Appends window_start, window_end and window_time to rel (one row per window of each input
 * row). Returns 0 or -errno with the planner's error set (line:col of the query). */
int pl_window_assign(struct pl_ctx *c, struct pl_rel *rel, uint32_t line, uint32_t col);

#endif
