/*
 * window.h - the keyed event-time window operator (tumbling, hopping, session) with
 * aggregates (DESIGN §4-§5). Semantics follow Flink; see window.c for the lifecycle.
 *
 * The planner builds one struct sl_window_cfg per window node (plan time, any thread, before
 * the job runs) and hands it to every shard's instance as op_def->cfg, read-only.
 */
#ifndef SL_OPS_WINDOW_WINDOW_H
#define SL_OPS_WINDOW_WINDOW_H

#include <sluice/job.h>

#include "op.h"

extern const struct sl_op_ops sl_window_ops;

/* Plan-time configuration; opaque outside engine/ops/window. */
struct sl_window_cfg;

/*
 * Validates a window aggregation and builds its configuration. `in` is the input schema,
 * `key_fields` the nkey key columns (indices into `in`); event time is the record's own
 * timestamp, not a column. On success returns the config (caller frees with
 * sl_window_cfg_destroy) and stores in *out_schema a new schema (caller frees): the key
 * fields, window_start and window_end (TIMESTAMP), then one column per aggregate. On error
 * returns NULL with err->code (-EINVAL, -ENOMEM) and a one-line err->msg.
 * Specs and schemas are copied; user aggregate `arg`s are borrowed for the config's life.
 */
struct sl_window_cfg *sl_window_cfg_create(const struct sl_window_spec *spec,
					   const struct sl_agg_spec *aggs, int naggs,
					   const struct sl_schema *in, const int *key_fields,
					   int nkey, struct sl_schema **out_schema,
					   struct sl_error *err);
void sl_window_cfg_destroy(struct sl_window_cfg *cfg);

/* Why the last restore of this instance (ctx of an open window operator) failed: a one-line
 * message naming the window and the cause, "" when none did. Shard thread. */
const char *sl_window_restore_error(const struct sl_ctx *ctx);

#endif
