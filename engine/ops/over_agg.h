/*
 * over_agg.h - OVER aggregations as a keyed process function:
 *
 *     SELECT ..., agg(x) OVER (PARTITION BY p ORDER BY rowtime
 *                              {ROWS BETWEEN n | RANGE BETWEEN INTERVAL 'd' unit}
 *                              PRECEDING AND CURRENT ROW), ... FROM t
 *
 * built for sl_stream_process() on the input keyed by the partition columns (Flink's
 * RowTimeRowsBoundedPrecedingFunction, RowTimeRangeBoundedPrecedingFunction and their
 * unbounded variants, flink-table-runtime operators/over).
 *
 * Semantics, as Flink's:
 *  - the input is insert-only; the output has one row per input row: the input's fields,
 *    then one field per aggregate, +I, with the input row's event time;
 *  - rows are taken in event-time order: a row waits in state until the watermark reaches
 *    its rowtime (an event timer at it), then the rows of that time are processed in
 *    arrival order. A row whose rowtime is at or below the watermark when it arrives is
 *    late: counted (sl_ctx_count_late) and dropped, as Flink drops it;
 *  - ROWS n PRECEDING: the frame is the row and the n rows before it in that order;
 *    RANGE d PRECEDING: every row whose rowtime is in [rowtime - d, rowtime], so rows of
 *    equal rowtime (peers) share one result; UNBOUNDED PRECEDING: every row so far (RANGE
 *    with peers, ROWS without). A NULL rowtime is late by definition (never fires).
 *
 * Ordered by processing time (cfg.proctime; Flink's ProcTime*PrecedingFunction), rows are
 * taken in arrival order, none is late: UNBOUNDED (ROWS or RANGE alike, as in Flink) and
 * ROWS n emit each row at once; RANGE d emits the rows that arrived in millisecond t when
 * it is over (a processing timer at t + 1), each with the aggregates over the partition's
 * rows that arrived in [t - d, t]. Details in over_agg.c.
 *
 * State (per partition key, namespace 0): 0 "over-rows", the rows waiting or still inside
 * some future row's frame (rowset.h; value {copies, arrival number}); 1 "over-meta" the
 * next arrival number and the rowtime up to which rows were processed; 2 "over-acc", for
 * an unbounded frame, the accumulators of every processed row (so processed rows are not
 * kept). Bounded frames keep the last n rows (ROWS) or the rows newer than the watermark
 * minus d (RANGE) and aggregate the frame afresh for each row: O(frame) per output row,
 * which needs no retraction and so takes every aggregate, MIN and MAX included.
 */
#ifndef SL_OPS_OVER_AGG_H
#define SL_OPS_OVER_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/job.h>
#include <sluice/operator.h>

enum sl_over_frame { SL_OVER_ROWS = 1, SL_OVER_RANGE };

#define SL_OVER_MAX_AGGS 32

struct sl_over_cfg {
	const struct sl_schema *in_schema; /* borrowed during build */
	int rowtime;			   /* the ORDER BY field: a TIMESTAMP rowtime */
	bool proctime; /* ORDER BY a processing-time attribute: rowtime unused (over_agg.c) */
	enum sl_over_frame frame;
	int64_t preceding; /* rows (ROWS) or ms (RANGE) before the current row; -1: unbounded */
	int naggs;
	struct sl_agg_spec aggs[SL_OVER_MAX_AGGS]; /* .name: for messages */
	const struct sl_schema *out_schema;	   /* in_schema's fields, then the aggregates' */
};

/* Fills *out with the OVER process function for cfg. Returns 0, or -EINVAL with a one-line
 * reason in err, or -ENOMEM. The caller owns *out and frees it with sl_over_free() after
 * the job that uses it is destroyed. Plan time. */
int sl_over_build(const struct sl_over_cfg *cfg, struct sl_process_fn *out, char *err,
		  size_t errcap);
void sl_over_free(struct sl_process_fn *fn);
/* The result type of aggregate i of cfg as sl_over_build binds it (for the planner's
 * output schema), or 0 with err filled when it cannot be bound. */
enum sl_type sl_over_agg_type(const struct sl_over_cfg *cfg, int i, int *prec, int *scale,
			      char *err, size_t errcap);

#endif
