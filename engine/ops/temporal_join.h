/*
 * temporal_join.h - the event-time temporal join as a keyed process function:
 *
 *     SELECT ... FROM L [LEFT] JOIN R FOR SYSTEM_TIME AS OF L.rowtime AS r ON L.k = r.k
 *
 * built for sl_stream_process() on ONE keyed stream carrying both sides (the runtime's keyed
 * union, keyed by L.k on left rows and r.k on right rows). Input schema:
 *
 *     field 0 `__side` BIGINT (0 = probe / left, 1 = build / right, the versioned table),
 *     fields 1 .. nleft the left table's, then nright fields of the right table;
 *     a row fills its own side's fields (the other side's are NULL).
 *
 * Output schema: the left fields then the right fields (input fields 1 .. nleft + nright).
 *
 * Mirrors Flink's TemporalRowTimeJoinOperator (flink-table-runtime, operators/join/temporal):
 *  - a left row is buffered until the watermark reaches its time; then it joins the right
 *    version with the greatest time <= its time (inclusive), and is dropped from state;
 *  - right rows are versions keyed by their time: +I / +U add one valid from its time; a
 *    second row with the same time replaces the first (Flink's MapState<time, row>); -D is
 *    kept as a version too and ends validity: a left row that finds it does not match;
 *    -U is ignored (Flink's planner drops update-befores of the versioned side,
 *    DropUpdateBefore, before they reach the join);
 *  - no match (or `cond` false, or a NULL left key): inner join emits nothing, left outer emits the
 * left row with NULL right fields;
 *  - one event-time timer per key, at the smallest pending time (registerSmallestTimer);
 *    when it fires, every buffered left row with time <= watermark is joined, in arrival
 *    order (Flink keeps the output in the left input's arrival order), then versions no
 *    longer needed are removed: all older than the latest one <= watermark. The latest one
 *    always stays (so a key's versions never drop to zero once it has one);
 *    the timer is re-registered at the smallest time still buffered, if any;
 *  - output rows keep the left row's kind (the left input may be a changelog) and carry the
 *    left row's time as event time;
 *  - late left rows (behind the watermark on arrival) are not dropped: they are joined on
 *    the next watermark, as in Flink.
 *  - idle-state retention (ttl_ms, 'table.exec.state.ttl'; Flink's
 *    BaseTwoInputStreamOperatorWithStateRetention): a key untouched for between ttl_ms and
 *    1.5 ttl_ms of processing time loses all its state, buffered left rows included (they
 *    are never emitted). Touched = a row of either side arrives, or its timer fires and
 *    leaves state behind.
 *
 * State (per key, namespace 0):
 *   0 "tj-left"  map: buffered left rows, 1 "tj-right" map: versions. A row is stored as
 *                map KEYS [u64 seq][u16 chunk][<= SL_TJOIN_CHUNK row bytes] with an 8-byte
 *                value holding the row's time: map keys are the only variable-length state
 *                (up to SL_KEY_MAX = 1024 bytes), so a row of n bytes takes
 *                ceil(n / 1014) entries and rows up to SL_ROW_SCRATCH bytes are kept whole.
 *                seq (arrival number per key) orders left rows and same-time versions.
 *   2 "tj-meta"  value {next seq, event timer, cleanup timer}; dropped when both maps are
 *                empty.
 * Per shard, a scratch area (entries being joined, two row buffers) shared by the
 * instances on that shard and freed by the last one to close.
 */
#ifndef SL_OPS_TEMPORAL_JOIN_H
#define SL_OPS_TEMPORAL_JOIN_H

#include <stdbool.h>
#include <stddef.h>

#include <sluice/operator.h>

/* Bytes of row per state entry (SL_KEY_MAX minus seq and chunk index). */
#define SL_TJOIN_CHUNK	  1014u
#define SL_TJOIN_MAX_KEYS 8 /* SL_MAX_KEY_FIELDS */

struct sl_temporal_join_cfg {
	const struct sl_schema *in_schema; /* the union schema above; borrowed during build */
	int nleft;			   /* fields of the left table (>= 1) */
	int nright;			   /* fields of the right table (>= 1) */
	int left_time;			   /* left row time, index in in_schema (1..nleft) */
	int right_time;			   /* version time, index in in_schema (after left) */
	bool left_outer;		   /* LEFT JOIN; else inner */
	/* The left side's fields of the ON equality (in_schema indices). A left row with a NULL
	 * among them matches no version (SQL: NULL = x is not true), although the keyed union
	 * groups it with right rows whose key is NULL too. nkey 0: no such check. */
	int nkey;
	int left_key[SL_TJOIN_MAX_KEYS];
	sl_ts_t ttl_ms; /* idle-state retention, 0 = none (> 1 enables) */
	/* Optional extra (non-equi) join condition on the joined output row; false makes the
	 * pair not match. Called on the shard thread; must not emit or touch state. */
	bool (*cond)(const struct sl_row *joined, void *arg);
	void *cond_arg; /* borrowed for the job's life */
};

/* Fills *out with the temporal join process function for cfg. Returns 0, or -EINVAL with a
 * one-line reason in err (schema shape, time fields not TIMESTAMP), or -ENOMEM. On success
 * the caller owns *out and frees it with sl_temporal_join_free() after the job that uses it
 * is destroyed. Any thread; plan time. */
int sl_temporal_join_build(const struct sl_temporal_join_cfg *cfg, struct sl_process_fn *out,
			   char *err, size_t errcap);
/* Frees what sl_temporal_join_build() allocated; accepts a zeroed or already freed fn. */
void sl_temporal_join_free(struct sl_process_fn *fn);

#endif
