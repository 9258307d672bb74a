/*
 * dedup.h - deduplication, the keyed process function behind Flink SQL's
 *
 *     SELECT ... FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY t [DESC]) AS rn
 *                      FROM T) WHERE rn = 1
 *
 * built for sl_stream_process() on a stream keyed by k. Output schema = input schema.
 *
 * Mirrors Flink's deduplicate functions (flink-table-runtime, operators/deduplicate):
 *  - event time (order_field >= 0, RowTimeDeduplicateFunction and the isDuplicate rule of
 *    DeduplicateFunctionHelper): keep last replaces the stored row when its rowtime is >= the
 *    stored one; keep first replaces it when its rowtime is < the stored one (a row that
 *    arrives out of order with an earlier time becomes the first). The first row of a key is
 *    +I; a replacement emits -U old (if emit_update_before) then +U new. No row is dropped
 *    for lateness (Flink does not). Input must be insert-only.
 *  - processing time, keep first (ProcTimeDeduplicateKeepFirstRowFunction): the first row of
 *    a key is emitted as +I, every later one dropped; only a flag is stored.
 *  - processing time, keep last (ProcTimeDeduplicateKeepLastRowFunction): insert-only input
 *    (processLastRowOnProcTime): first row +I, each later row -U old / +U new, nothing when
 *    it equals the stored row field by field and no TTL is set; changelog input
 *    (input_insert_only false, processLastRowOnChangelog): +I/+U as above (stored as +I),
 *    -U/-D of a stored row emit the stored row as -D and clear it.
 *  - generate-insert is always on (Flink's default since 1.12): first rows are +I, not +U.
 *  - ttl_ms: Flink's state retention, OnCreateAndWrite in processing time: a key's stored
 *    row expires ttl_ms after it was last written and the key then starts afresh.
 *  Emitted rows carry the event time of the input record being processed.
 *
 * A non-insert row on an insert-only configuration, or a NULL order field, is a job error
 * (Flink fails the job the same way); the row is dropped.
 *
 * State (per key, namespace 0):
 *   0 "dedup-meta" value {rowtime, row size}: the comparisons read only this.
 *   1 "dedup-row"  map: the stored row's bytes cut into chunks of SL_DEDUP_CHUNK bytes,
 *                  each a map KEY ([u16 chunk index][bytes]) with an 8-byte value (unused),
 *                  because map keys are the only variable-length state (up to SL_KEY_MAX =
 *                  1024 bytes each). A row of n bytes takes ceil(n / 1022) entries, so
 *                  rows up to SL_ROW_SCRATCH bytes are kept whole.
 * Processing-time keep first declares and stores only state 0 (one entry per key).
 */
#ifndef SL_OPS_DEDUP_H
#define SL_OPS_DEDUP_H

#include <stdbool.h>
#include <stddef.h>

#include <sluice/operator.h>

/* Bytes of row per state entry (SL_KEY_MAX minus the 2-byte chunk index). */
#define SL_DEDUP_CHUNK 1022u

struct sl_dedup_cfg {
	const struct sl_schema *schema; /* input = output; borrowed during sl_dedup_build only */
	int order_field;		/* TIMESTAMP / TIMESTAMP_LTZ field; -1: processing time */
	bool keep_last;			/* ORDER BY ... DESC */
	bool emit_update_before;	/* -U before each +U (the planner's choice, as Flink's) */
	bool input_insert_only;		/* false: a changelog (processing-time keep last only) */
	sl_ts_t ttl_ms;			/* state retention, 0 = forever */
};

/* Fills *out with the dedup process function for cfg. Returns 0, or -EINVAL with a one-line
 * reason in err (bad order field, changelog input where Flink refuses it, negative TTL), or
 * -ENOMEM. On success the caller owns *out and frees it with sl_dedup_free() after the job
 * that uses it is destroyed. Any thread; plan time. */
int sl_dedup_build(const struct sl_dedup_cfg *cfg, struct sl_process_fn *out, char *err,
		   size_t errcap);
/* Frees what sl_dedup_build() allocated; accepts a zeroed or already freed fn. */
void sl_dedup_free(struct sl_process_fn *fn);

#endif
