/*
 * join.h - the regular (unbounded, updating) join of two streams as a keyed process function:
 *
 *     SELECT ... FROM L [INNER | LEFT | RIGHT | FULL [OUTER]] JOIN R ON L.k = R.k [AND cond]
 *
 * built for sl_stream_process() on ONE keyed stream carrying both sides (the runtime's keyed
 * union, keyed by L.k on left rows and R.k on right rows). Input schema:
 *
 *     field 0 `__side` BIGINT (0 = left, 1 = right), fields 1 .. nleft the left side's, then
 *     nright fields of the right side, then the planner's join key columns (not output); a
 *     row fills its own side's fields (the other side's are NULL).
 *
 * Output schema: the left fields then the right fields (input fields 1 .. nleft + nright);
 * a semi or anti window join: the left fields only.
 *
 * Mirrors Flink's StreamingJoinOperator (flink-table-runtime, operators/join/stream):
 *  - each side keeps, per join key, the multiset of its rows (a row and how many times it is
 *    there); an outer side also keeps, per row, how many rows of the other side it matches
 *    (its associations), so that it knows when its NULL-padded result must appear or go;
 *  - +I / +U of a side: added to its multiset, then joined with every matching row of the
 *    other side (the equi-key and `cond`). Inner join: the results carry the input's kind
 *    (+I or +U). Outer join: results are +I; an other-side row of an outer side that had no
 *    association has its NULL-padded result retracted first (-D[null + other]); an input on
 *    an outer side with no match emits +I[input + null];
 *  - -U / -D of a side: removed from its multiset (nothing happens to state when the row is
 *    not there, as in Flink, though the results are still retracted), then the results with
 *    every match are retracted: -D (outer) or the input's kind (inner, -U or -D); an
 *    other-side row of an outer side that loses its last association gets its NULL-padded
 *    result back (+I[null + other]); an input on an outer side with no match emits
 *    -D[input + null];
 *  - a row whose join key holds a NULL matches nothing (Flink's filterNullKeys), but an outer
 *    side still emits it NULL-padded;
 *  - a matching row present n times gives n results, each in the order Flink emits them;
 *    matches come out ordered by (row hash, row bytes), so the order does not depend on the
 *    state backend (Flink's is its state's iteration order);
 *  - output rows carry the input record's event time (a regular join has no time attribute
 *    in its output: Flink makes rowtime columns plain timestamps);
 *  - an interval join (cfg.interval) is the same join without NULL-padded rows until a row
 *    expires at the watermark, and with no retraction (see the cfg);
 *  - state retention (ttl_ms, 'table.exec.state.ttl'): every stored row expires ttl_ms of
 *    processing time after it was last written (Flink's join state TTL, OnCreateAndWrite:
 *    a row is written when it arrives, when its count changes and when its associations do).
 *
 * A window join (cfg.window) joins the rows of two window TVFs (or window aggregations) on
 * window_start, window_end and the keys: the planner keys by all of them, so a key is one
 * window's rows of both sides. Nothing is emitted while the window is open; when the
 * watermark reaches window_end - 1 (an event timer per key) its rows are joined at once,
 * every pair that meets `cond`, one result per copy of each row, an outer side's rows that
 * met nothing NULL-padded (INNER, LEFT, RIGHT, FULL), or with semi / anti each left row once
 * per copy when it met a right row / met none (output: the left fields only). Results are
 * +I with event time window_end - 1, and the window's state is then cleared: the output is
 * insert-only. A row whose window has fired is late, as the window operator's are: counted
 * and, with late_tag[side] > 0, sent to that side output as its side's own fields. A NULL
 * key matches nothing; an outer (or anti's left) side still emits the row.
 *
 * State (per key, namespace 0): 0 "join-left" and 1 "join-right", each a multiset of its
 * side's rows (rowset.h: a row's bytes chunked into map keys, so every row up to
 * SL_ROW_SCRATCH bytes is kept whole; its value {count, associations}). Per shard, a scratch
 * area (matches being joined, the input's row) shared by the instances on that shard and
 * freed by the last one to close.
 */
#ifndef SL_OPS_JOIN_H
#define SL_OPS_JOIN_H

#include <stdbool.h>
#include <stddef.h>

#include <sluice/operator.h>

#define SL_JOIN_MAX_KEYS 8 /* SL_MAX_KEY_FIELDS */

struct sl_join_cfg {
	const struct sl_schema *in_schema; /* the union schema above; borrowed during build */
	int nleft;			   /* fields of the left side (>= 1) */
	int nright;			   /* fields of the right side (>= 1) */
	bool left_outer;		   /* LEFT or FULL JOIN */
	bool right_outer;		   /* RIGHT or FULL JOIN */
	/* The join key columns (in_schema indices, after the right side's fields): a row with a
	 * NULL among them matches nothing. nkey 0: no such check. */
	int nkey;
	int key[SL_JOIN_MAX_KEYS];
	sl_ts_t ttl_ms; /* state retention, 0 = forever */
	/* Optional extra (non-equi) join condition on the joined output row (left ++ right);
	 * false makes the pair not match. Called on the shard thread; must not emit or touch
	 * state. */
	bool (*cond)(struct sl_ctx *ctx, const struct sl_row *joined, void *arg);
	void *cond_arg; /* borrowed for the job's life */
	/* Interval join (Flink's TimeIntervalJoin, event time, insert-only inputs): `cond`
	 * holds lower <= left time - right time <= upper among its conditions, so a row can
	 * match no row that arrives after the watermark passed its last chance (a left row at
	 * t: t - lower; a right row at t: t + upper). Then it leaves state, and an outer side
	 * emits it NULL-padded if it never matched: never before, so nothing is retracted. */
	bool interval;
	int left_time, right_time; /* in_schema indices of the two time attributes */
	sl_ts_t lower, upper;
	/* Window join (Flink's WindowJoinOperator, insert-only inputs): below. */
	bool window;
	int window_end[2]; /* in_schema indices of each side's window_end (TIMESTAMP) */
	int late_tag[2];   /* side outputs of each side's late rows (> 0), 0: counted only */
	bool semi, anti;   /* window join only: the left rows with (without) a match, alone */
};

/* Fills *out with the join process function for cfg. Returns 0, or -EINVAL with a one-line
 * reason in err (schema shape, key fields), or -ENOMEM. On success the caller owns *out and
 * frees it with sl_join_free() after the job that uses it is destroyed. Any thread; plan
 * time. */
int sl_join_build(const struct sl_join_cfg *cfg, struct sl_process_fn *out, char *err,
		  size_t errcap);
/* Frees what sl_join_build() allocated; accepts a zeroed or already freed fn. */
void sl_join_free(struct sl_process_fn *fn);

#endif
