/*
 * group_agg.h - the non-windowed GROUP BY (Flink's updating GroupAggFunction) as a keyed
 * process function, for sl_stream_process() after sl_stream_key_by(group keys).
 *
 * Input rows may be a changelog: +I and +U accumulate, -U and -D retract (a Debezium source,
 * or another updating operator). Output, per group key, is Flink's changelog:
 *
 *   first row of a key                  +I[key, aggs]
 *   a change of the key's result        -U[key, old aggs]  +U[key, new aggs]
 *   a change that leaves it equal       nothing (only when state TTL is off: with a TTL
 *                                       Flink re-emits so downstream state stays fresh)
 *   the key's row count reaches 0       -D[key, old aggs], and the key's state is cleared
 *   a retraction for a key with no state ignored (as Flink: a row that was never counted,
 *                                       or state that expired)
 *
 * State TTL (table.exec.state.ttl): a key untouched for ttl ms of processing time is
 * forgotten; its next row starts a new group (+I, no -D for the old one), as in Flink.
 *
 * Aggregates: every built-in kind (agg.h; no SL_AGG_USER). COUNT/SUM/AVG retract in their
 * accumulator. MIN/MAX/FIRST_VALUE/LAST_VALUE keep the multiset of their inputs in map state
 * so a retraction of the current extreme can find the next one; COUNT(DISTINCT) keeps its
 * value -> count map in any case. With insert_only (the planner knows the input has no
 * retractions) MIN/MAX/FIRST/LAST keep only the current value, as Flink picks its
 * non-retracting functions for append-only input.
 *
 * Limits: a STRING value held in map state (COUNT(DISTINCT), MIN/MAX, FIRST/LAST_VALUE of a
 * string column) may be at most SL_GROUP_AGG_STR_MAX bytes: map keys are at most SL_KEY_MAX
 * (1024) bytes (state.c; the kvtab itself takes SL_KVTAB_KEY_MAX = 1040, the extra 16 being
 * the timer service's suffix), less an 8-byte arrival number. A longer one fails the job
 * with a message naming the aggregate. FIRST/LAST_VALUE order rows by a per-key arrival
 * number where Flink uses the wall clock in ms (same order, without same-ms ties); a
 * retraction removes the earliest matching occurrence, as Flink does.
 */
#ifndef SL_OPS_GROUP_AGG_H
#define SL_OPS_GROUP_AGG_H

#include <stdbool.h>
#include <stddef.h>

#include <sluice/job.h>
#include <sluice/operator.h>
struct sl_agg_bound;
struct sl_combiner_ops;

#define SL_GROUP_AGG_STR_MAX 1016

struct sl_group_agg_cfg {
	const struct sl_schema *in;	/* input schema */
	const int *key_fields;		/* the group keys = the key_by fields, in that order */
	int nkey;			/* 0..SL_MAX_KEY_FIELDS (8); 0 only behind a constant key */
	const struct sl_agg_spec *aggs; /* built-in aggregates, output in this order */
	int naggs;			/* 1.. ; nkey + naggs <= SL_SCHEMA_MAX_FIELDS */
	sl_ts_t state_ttl_ms;		/* idle state retention, processing time; 0 = never */
	bool insert_only;		/* input is +I only: no multisets for MIN/MAX/... */
	/*
	 * Two-stage aggregation (Flink's local-global aggregation, which Flink applies to a
	 * GROUP BY only with mini-batch on): with agg_phase not ONE, mini_batch_latency_ms > 0,
	 * an insert-only input and aggregates that merge (COUNT, SUM, AVG, numeric MIN/MAX;
	 * under AUTO not SUM/AVG of FLOAT/DOUBLE), each sending shard combines rows per key
	 * for up to mini_batch_latency_ms or mini_batch_size keys (0: SL_PARTIALS_CAP) and the
	 * owner merges the partials: one -U/+U per partial instead of per row, the final
	 * results the same.
	 */
	enum sl_agg_phase agg_phase;
	sl_ts_t mini_batch_latency_ms;
	uint32_t mini_batch_size;
};

/* What the GROUP BY's local stage (group_agg_local.c) works from: partials have the
 * state block's layout (`block` bytes; only the aggregates' parts, at their bound offsets,
 * are written), at most `cap` keys wait at most delay_ms. Part of the built function. */
struct sl_ga_local {
	uint32_t block;
	uint32_t cap;
	sl_ts_t delay_ms;
	int naggs;
	const struct sl_agg_bound *agg[SL_SCHEMA_MAX_FIELDS];
};

extern const struct sl_combiner_ops sl_group_agg_combiner; /* group_agg_local.c */

/*
 * Builds the process function of a GROUP BY. Plan time, any thread. On success returns 0,
 * fills *out (states, callbacks and an arg that the function owns) and stores in
 * *out_schema a new schema: the key fields (names, types, DECIMAL precision of `in`), then
 * one column per aggregate named by its spec (caller frees with sl_schema_destroy; the job
 * copies it in sl_stream_process). cfg and everything it points to is copied or only read
 * during the call. On error returns -EINVAL or -ENOMEM with a one-line reason in err
 * (errcap bytes), *out zeroed and *out_schema NULL.
 * The function must outlive every job it was passed to: free it with sl_group_agg_free()
 * after sl_job_destroy().
 */
int sl_group_agg_build(const struct sl_group_agg_cfg *cfg, struct sl_process_fn *out,
		       struct sl_schema **out_schema, char *err, size_t errcap);

/* Frees what sl_group_agg_build() put in *fn and zeroes it. Accepts a zeroed fn. */
void sl_group_agg_free(struct sl_process_fn *fn);

#endif
