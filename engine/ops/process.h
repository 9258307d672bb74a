/*
 * process.h - the keyed process function operator (Flink's KeyedProcessFunction): user
 * callbacks with keyed value/map state and event- or processing-time timers.
 *
 * The planner puts the job's `const struct sl_process_fn *` in op_def->cfg (borrowed for the
 * job's life) and makes the def keyed (nkey, key_fields). Every shard's instance owns its
 * state and timers; see process.c.
 */
#ifndef SL_OPS_PROCESS_H
#define SL_OPS_PROCESS_H

#include "op.h"

extern const struct sl_op_ops sl_process_ops;

#endif
