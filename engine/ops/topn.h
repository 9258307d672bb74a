/*
 * topn.h - Top-N as a keyed process function:
 *
 *     SELECT * FROM (SELECT ..., ROW_NUMBER() | RANK() | DENSE_RANK()
 *                      OVER (PARTITION BY p ORDER BY o1 [DESC], ...) AS rn FROM t)
 *     WHERE rn <= N            (or rn < N, rn = N, rn BETWEEN a AND b)
 *
 * built for sl_stream_process() on the input keyed by the partition columns (Flink's
 * AppendOnlyTopNFunction and RetractableTopNFunction, flink-table-runtime operators/rank).
 * Input: any schema; its first `nout` fields are the row (the planner may add a constant key
 * column after them for a Top-N without PARTITION BY). Output: those fields, then, with
 * emit_rank, the rank as BIGINT.
 *
 * Semantics:
 *  - rows are ordered by the ORDER BY fields (NULL sorts first ascending, last descending, as
 *    Flink's default null ordering), rows that tie in every field by arrival: a later row
 *    goes after the earlier ones, so ROW_NUMBER gives it the higher number;
 *  - ROW_NUMBER numbers every row (a row present twice takes two numbers); RANK gives tied
 *    rows the same rank and skips the ranks they fill; DENSE_RANK gives tied rows the same
 *    rank and skips none. The rows whose rank is in [rank_lo, rank_hi] are the result;
 *  - +I / +U of a row adds it, -U / -D takes one copy back; after each record the result
 *    before and after are compared and the difference emitted. With the rank in the output,
 *    position by position as Flink does: a position whose row or rank changed gives
 *    -U[old, rank] +U[new, rank], a new position +I, a lost one -D. Without it: -D for each
 *    row that left the result, +I for each that entered (Flink's "no rank number" variant);
 *  - input_insert_only: no row can come back once it ranks below rank_hi, so such rows are
 *    dropped from state at once (Flink's append-only variant keeps the top N only);
 *    otherwise every row is kept, so that one from below moves up when a top row goes;
 *  - output rows carry the input record's event time; state expires with ttl_ms
 *    ('table.exec.state.ttl', per row written, OnCreateAndWrite).
 *
 * Window Top-N (cfg.window; Flink's WindowRankOperator, which also runs window
 * deduplication): the partition key holds the window (window_start, window_end), so a
 * partition is one window's rows. Nothing is emitted while the window is open: the rows
 * ranked in range are kept (the input must be insert-only), and when the watermark reaches
 * window_end - 1 they come out once, as +I in rank order, each with event time window_end -
 * 1, and the partition's state is cleared. A row that arrives after its window fired is
 * late, as the window operator's are: counted (sl_ctx_count_late) and, with late_tag > 0,
 * sent whole to that side output, never silently lost. ties_last makes rows that tie go
 * latest first: deduplication keeping the last row (ORDER BY rowtime DESC) keeps the last
 * of the rows that share the greatest rowtime, as Flink's does.
 *
 * State (per partition key, namespace 0): 0 "topn-rows", the partition's rows (rowset.h:
 * value {count, arrival number}), 1 "topn-seq" the next arrival number; a window Top-N also
 * has one event timer per partition, at window_end - 1. Cost per record: O(m log m) for the
 * m rows the partition keeps (for an insert-only input, about N).
 */
#ifndef SL_OPS_TOPN_H
#define SL_OPS_TOPN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/operator.h>

#define SL_TOPN_MAX_ORDER 16

enum sl_topn_fn { SL_TOPN_ROW_NUMBER = 0, SL_TOPN_RANK, SL_TOPN_DENSE_RANK };

struct sl_topn_cfg {
	const struct sl_schema *in_schema; /* borrowed during build */
	int nout;			   /* leading input fields that are the row (>= 1) */
	enum sl_topn_fn fn;
	int norder; /* ORDER BY fields (>= 1), in_schema indices < nout */
	int order[SL_TOPN_MAX_ORDER];
	bool desc[SL_TOPN_MAX_ORDER];
	int64_t rank_lo, rank_hi; /* 1 <= rank_lo <= rank_hi */
	bool emit_rank;		  /* the rank is the output's last field */
	bool input_insert_only;	  /* no -U/+U/-D: rows below the top can be forgotten */
	sl_ts_t ttl_ms;		  /* state retention, 0 = forever */
	bool window;		  /* window Top-N, below */
	int window_end;		  /* window Top-N: the window_end field (TIMESTAMP, < nout) */
	int late_tag;	/* window Top-N: side output of late rows (> 0), 0: counted only */
	bool ties_last; /* rows that tie in ORDER BY go latest first (window keep-last) */
};

/* Fills *out with the Top-N process function for cfg. Returns 0, or -EINVAL with a one-line
 * reason in err, or -ENOMEM. The caller owns *out and frees it with sl_topn_free() after
 * the job that uses it is destroyed. Any thread; plan time. */
int sl_topn_build(const struct sl_topn_cfg *cfg, struct sl_process_fn *out, char *err,
		  size_t errcap);
/* Frees what sl_topn_build() allocated; accepts a zeroed or already freed fn. */
void sl_topn_free(struct sl_process_fn *fn);

#endif
