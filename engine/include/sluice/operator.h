/*
 * sluice/operator.h - what user code sees while it runs on a shard: the operator context,
 * emission to the main and side outputs, keyed state and timers.
 *
 * Every function here is called from the shard thread that runs the operator instance,
 * inside one of its callbacks; they are on the per-record path (no allocation except the
 * first insertion of a key into state, no locks, no syscalls).
 */
#ifndef SLUICE_OPERATOR_H
#define SLUICE_OPERATOR_H

#include <sluice/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The context of one operator instance on one shard. Owned by the runtime. */
struct sl_ctx;

/* Sends `row` with event time `ts` to the main output. The row is copied or consumed
 * before this returns, so the caller may reuse its buffer. */
void sl_emit(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row);
/* Sends `row` to side output `tag` (> 0). Unconnected tags are counted and dropped. */
void sl_emit_side(struct sl_ctx *ctx, int tag, sl_ts_t ts, const struct sl_row *row);
/* A builder over the context's output scratch buffer, initialised for the output schema. The
 * row it builds stays valid until the next call of sl_ctx_out(). */
struct sl_row_builder *sl_ctx_out(struct sl_ctx *ctx);

/* The operator's current event-time watermark (SL_TS_MIN before the first). */
sl_ts_t sl_ctx_watermark(const struct sl_ctx *ctx);
/* Processing time in ms, read once per loop turn. */
sl_ts_t sl_ctx_proctime(const struct sl_ctx *ctx);
/* Index of the shard running this instance, and the number of shards. */
int sl_ctx_shard(const struct sl_ctx *ctx);
int sl_ctx_nshards(const struct sl_ctx *ctx);
/* Counts one record dropped for lateness in this operator's metrics. */
void sl_ctx_count_late(struct sl_ctx *ctx);
/* Counts n values this operator made NULL because they did not fit their DECIMAL type. */
void sl_ctx_count_overflow(struct sl_ctx *ctx, uint64_t n);

/* ---- keyed state ------------------------------------------------------------------------
 * State is scoped to the current key (the key of the record or timer being processed) and a
 * namespace (0 for process functions; windows use the window). Descriptors are declared in
 * the process function's `states` table; `id` is the index into it.
 */
enum sl_state_kind { SL_STATE_VALUE = 1, SL_STATE_MAP };

struct sl_state_desc {
	const char *name;
	enum sl_state_kind kind;
	uint32_t value_size; /* bytes of each value (fixed) */
	sl_ts_t ttl_ms;	     /* 0: no TTL; expired values are never returned */
};

/* Returns the value for the current key, or NULL if none. Valid until the next state call. */
void *sl_value_get(struct sl_ctx *ctx, int id);
/* Returns storage for the current key's value (zeroed when new), or NULL on ENOMEM. */
void *sl_value_put(struct sl_ctx *ctx, int id);
void sl_value_clear(struct sl_ctx *ctx, int id);

void *sl_map_get(struct sl_ctx *ctx, int id, const void *mkey, uint32_t mklen);
void *sl_map_put(struct sl_ctx *ctx, int id, const void *mkey, uint32_t mklen);
void sl_map_remove(struct sl_ctx *ctx, int id, const void *mkey, uint32_t mklen);
/* Calls fn for every entry of the current key's map; stop early by returning false. */
void sl_map_foreach(struct sl_ctx *ctx, int id,
		    bool (*fn)(const void *mkey, uint32_t mklen, void *value, void *arg),
		    void *arg);
void sl_map_clear(struct sl_ctx *ctx, int id);

/* ---- timers -----------------------------------------------------------------------------
 * Timers belong to the current key. Registering the same (key, time) twice fires once.
 * Event-time timers fire when the watermark reaches their time; processing-time timers when
 * the shard clock does. Firing order is by time, then key hash: deterministic.
 */
int sl_timer_event(struct sl_ctx *ctx, sl_ts_t at);
int sl_timer_proc(struct sl_ctx *ctx, sl_ts_t at);
void sl_timer_event_delete(struct sl_ctx *ctx, sl_ts_t at);
void sl_timer_proc_delete(struct sl_ctx *ctx, sl_ts_t at);

/* ---- keyed process function --------------------------------------------------------------- */

enum sl_time_domain { SL_TIME_EVENT = 0, SL_TIME_PROC = 1 };

struct sl_combiner_ops;

struct sl_process_fn {
	const struct sl_state_desc *states;
	int nstates;
	/* Optional per-instance setup; returns 0 or -errno. */
	int (*open)(struct sl_ctx *ctx, void *arg);
	void (*process)(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg);
	void (*on_timer)(struct sl_ctx *ctx, sl_ts_t at, enum sl_time_domain domain, void *arg);
	void (*close)(struct sl_ctx *ctx, void *arg);
	void *arg;
	/* Engine-internal (NULL in user functions): the local stage of a two-stage
	 * aggregation the function accepts on its exchange's senders, the config that stage is
	 * created from, and the merge of one of its partials for the current key (the updating
	 * GROUP BY, engine/runtime/op.h). */
	const struct sl_combiner_ops *combiner;
	const void *combiner_cfg;
	void (*merge_partial)(struct sl_ctx *ctx, sl_ts_t ts, const void *acc, uint32_t acc_len,
			      uint32_t nrows, void *arg);
};

/* The key of the record or timer being processed, as encoded bytes (see sl_key_field). */
const void *sl_ctx_key(const struct sl_ctx *ctx, uint32_t *len);
/* Decodes key field `i` (in key_by order) of the current key into `out` field `field`. */
void sl_ctx_key_copy(const struct sl_ctx *ctx, int i, struct sl_row_builder *out, int field);

#ifdef __cplusplus
}
#endif
#endif
