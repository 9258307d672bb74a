/*
 * op.h - the operator contract inside the engine.
 *
 * An operator is a const table of hooks (nginx's module pattern). At plan time every logical
 * node becomes a `struct sl_op_def` (shared, read-only); on every shard each def gets an
 * instance, `struct sl_ctx`, which is also the context user callbacks receive. Operators in a
 * stage are chained: emitting calls the next operator's process hook directly. The stage's
 * last hop is either a sink operator or an exchange-out operator that writes rings.
 *
 * Lifecycle of an instance (all calls on its shard's thread):
 *
 *   open -> { process | on_watermark | on_proctime | on_idle }* -> on_end -> close
 *
 * on_watermark is called once per watermark advance, after ctx->watermark is updated and
 * before the watermark is forwarded downstream, so rows emitted by it (fired windows)
 * precede the watermark, as Flink orders them.
 */
#ifndef SL_RUNTIME_OP_H
#define SL_RUNTIME_OP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sluice/job.h>
#include <sluice/operator.h>

#include "snap.h"
#include "key.h"

struct sl_shard;
struct sl_ctx;
struct sl_snap_buf;
struct sl_snap_reader;
struct sl_kstate;
struct sl_timers;
struct sl_combiner_ops;

struct sl_op_ops {
	const char *name;
	/* Sets up ctx->self. Returns 0 or -errno (message in ctx->shard's error). */
	int (*open)(struct sl_ctx *ctx);
	/* One input record. Hot path. For keyed operators ctx->key/klen/hash are set. */
	void (*process)(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row);
	/* The input watermark advanced to ctx->watermark. Optional. */
	void (*on_watermark)(struct sl_ctx *ctx, sl_ts_t wm);
	/* Called once per loop turn with the shard clock, if ctx->wants_proctime. Optional. */
	void (*on_proctime)(struct sl_ctx *ctx, sl_ts_t now);
	/* All input has ended (after the final +inf watermark). Flush. Optional. */
	void (*on_end)(struct sl_ctx *ctx);
	void (*close)(struct sl_ctx *ctx);
	/* A record with this key hash and event time is a few frames away: start the cache
	 * misses of its state lookup now. stage 0 is far ahead (fetch the table slot), stage 1
	 * nearer (the slot has arrived: fetch the entry). Optional; keyed operators only. Hot. */
	void (*prefetch)(struct sl_ctx *ctx, uint64_t hash, sl_ts_t ts, int stage);
	/*
	 * Checkpoints (DESIGN §7), both optional (an operator without them is stateless).
	 * snapshot: the barrier of checkpoint `ckpt` reached this instance after all its input
	 * channels delivered it; append everything needed to resume (keyed state, timers,
	 * buffered rows, the watermark) to `out`, on the shard thread, and return 0 or -errno.
	 * The bytes are written out asynchronously; the instance goes on processing at once.
	 * restore: before any record, rebuild from a snapshot's bytes. With rescaling the
	 * reader holds the snapshots of several old instances one after another (restore is
	 * called once per old instance); keep only key groups in [kg_lo, kg_hi), the ones this
	 * instance owns now. Returns 0, -EINVAL for corrupt bytes (r->error says so), or
	 * -EPROTO when the snapshot is intact but of another state layout (another window,
	 * other aggregates or state descriptors): then the job must stop, not fall back.
	 */
	int (*snapshot)(struct sl_ctx *ctx, uint64_t ckpt, struct sl_snap_buf *out);
	/*
	 * Optional, for snapshots taken copy-on-write: snapshot may return 1 to say it goes on
	 * (it has written a part and borrowed `out`); the shard then calls snapshot_step
	 * between record batches, each appending about `budget` bytes, until it returns 0
	 * (complete) or -errno. Meanwhile the instance processes records as usual.
	 */
	int (*snapshot_step)(struct sl_ctx *ctx, size_t budget);
	int (*restore)(struct sl_ctx *ctx, struct sl_snap_reader *r, uint32_t kg_lo,
		       uint32_t kg_hi);
	/* Forwards watermarks/idle/end itself instead of the default (exchange-out). */
	void (*forward_wm)(struct sl_ctx *ctx, sl_ts_t wm);
	void (*forward_idle)(struct sl_ctx *ctx, bool idle);
	void (*forward_end)(struct sl_ctx *ctx);
	void (*forward_barrier)(struct sl_ctx *ctx, uint64_t ckpt);
	/* Plan-time facts the runtime and EXPLAIN read instead of knowing operators:
	 * keyed_state: its instances keep keyed state through state/state.h (on the RocksDB
	 * backend each instance then gets a database of its own);
	 * explain: prints what state the operator keeps for EXPLAIN ("state: ..."), from its
	 * def's cfg. Optional: none means stateless. */
	bool keyed_state;
	void (*explain)(const void *cfg, FILE *f);
	/* For observers ("why has my window not fired?", engine/runtime/observe.c): the
	 * earliest event time at which this instance will emit on its own (the end - 1 of its
	 * earliest open window, its earliest event-time timer) into *at, and how many windows
	 * or timers wait into *n; SL_TS_MAX and 0 when none. On the shard thread, only when an
	 * observer asks; may walk the operator's index (O(open windows)), never its entries.
	 * Optional: without it, the instance's event-time timers are shown. */
	void (*pending)(struct sl_ctx *ctx, sl_ts_t *at, uint64_t *n);
	/*
	 * Two-stage aggregation (DESIGN §5), both optional. combiner_of: the local stage this
	 * operator config accepts on the sending side of its keyed exchange (see below) and
	 * the config that stage is created from, or NULL when it is not split (its aggregates
	 * cannot merge, or its agg-phase strategy says one phase). Plan time. merge_partial: a
	 * partial the local stage built, for the current key (ctx->key/klen/hash set) and, for
	 * a timed stage, the slice holding event time ts: `acc` is its block of accumulators
	 * (the combiner's layout, acc_len bytes), standing for `nrows` input rows. Hot path of
	 * the owner shard.
	 */
	const struct sl_combiner_ops *(*combiner_of)(const void *op_cfg, const void **local_cfg);
	void (*merge_partial)(struct sl_ctx *ctx, sl_ts_t ts, const void *acc, uint32_t acc_len,
			      uint32_t nrows);
};

/* Where a combiner's flush hands a partial: the exchange writes it to the key's owner. */
typedef void (*sl_partial_emit_fn)(void *arg, uint64_t hash, const uint8_t *key, uint32_t klen,
				   sl_ts_t ts, const void *acc, uint32_t acc_len, uint32_t nrows);

/*
 * The local half of a two-stage aggregation, run by the exchange's sender on every shard
 * (engine/runtime/exchange.c) for the one keyed operator its exchange feeds. Its rows are
 * combined into partial accumulators per (key, slice) in a bounded table, and the partials
 * travel to the key's owner as SL_FRAME_PARTIAL frames instead of the rows.
 *
 * A timed stage (windows) keeps one rule for exactness: a partial is flushed before the
 * sender forwards a watermark at which any window of its slice could fire, and before a
 * barrier, an idle marker and end of input. So a partial reaches its owner while every
 * window it feeds is still open there; rows that are late at the sender (or could be at the
 * owner) go through raw, which keeps the late-row ledger and allowed-lateness re-fires
 * exact. An untimed stage (the updating GROUP BY) has no event time to respect: it is
 * flushed when full, after max_delay of processing time, and before a barrier and end of
 * input. Checkpoints hold no partials: none is in flight at a barrier.
 */
struct sl_combiner_ops {
	bool timed; /* partials belong to event-time slices (see above) */
	/* A local stage for local_cfg (from combiner_of), or NULL (out of memory). */
	void *(*create)(const void *local_cfg);
	void (*destroy)(void *local);
	/* Combines `row` (key already encoded, its hash) into its partial when its slice has
	 * no window that can fire at sender watermark `wm`: returns 1. Returns 0 when the row
	 * must go raw (some window of its slice may have fired), -ENOSPC when the table is
	 * full (flush, then offer it again), -ENOMEM when an allocation failed; the row was
	 * not combined in those cases. Hot path. */
	int (*add)(void *local, uint64_t hash, const uint8_t *key, uint32_t klen, sl_ts_t ts,
		   const struct sl_row *row, sl_ts_t wm);
	/* Timed: the earliest watermark at which a window of some held partial could fire
	 * (the smallest end - 1), SL_TS_MAX when none is held: the sender flushes when the
	 * watermark it forwards reaches it. Untimed: SL_TS_MAX while nothing is held, else any
	 * other value. */
	sl_ts_t (*next_flush)(const void *local);
	/* Untimed, optional: the longest a partial may wait on the sender, in milliseconds of
	 * processing time (the mini-batch latency); 0 or NULL: until full. */
	sl_ts_t (*max_delay)(const void *local_cfg);
	/* Hands every held partial to emit and empties the table. */
	void (*flush)(void *local, sl_partial_emit_fn emit, void *arg);
};

/* Plan-time description of one operator; shared read-only by all shards. */
struct sl_op_def {
	const struct sl_op_ops *ops;
	const char *name;
	const void *cfg; /* operator-specific, owned by the job */
	const struct sl_schema *in_schema;
	const struct sl_schema *out_schema;
	int nkey; /* keyed operators: key fields of in_schema */
	int key_fields[SL_MAX_KEY_FIELDS];
	enum sl_type key_types[SL_MAX_KEY_FIELDS];
	int id; /* index in the job's operator list */
	/* names the operator inside its state (RocksDB keys): a hash of its uid token
	 * (graph.h), so state restored into a plan where it sits elsewhere still reads back */
	uint32_t state_id;
	/* exchange-out: the local stage of the keyed operator it feeds and that operator's
	 * config (two-stage aggregation), NULL when rows go raw (plan.c decides). */
	const struct sl_combiner_ops *combine;
	const void *combine_cfg;
};

/* Metrics of one instance; written by its shard only, summed by readers after the run or
 * read racily (relaxed, monotonic) while it runs. */
struct sl_op_metrics {
	uint64_t in;
	uint64_t out;
	uint64_t late;
	uint64_t overflow; /* DECIMAL values made NULL: they did not fit their type */
	uint64_t state_entries;
	uint64_t state_bytes; /* keyed state held, approximate (process functions) */
	uint64_t ckpt_bytes;  /* size of its last checkpoint snapshot */
	/* key_by (its exchange-out): rows its local stage combined, partials it sent */
	uint64_t combined;
	uint64_t partials;
};

#define SL_MAX_OUT   4 /* targets per port */
#define SL_MAX_PORTS 4 /* port 0 = main, 1.. = side output tags */

struct sl_port {
	int n;
	struct sl_ctx *to[SL_MAX_OUT];
};

struct sl_ctx {
	const struct sl_op_def *def;
	struct sl_shard *shard;
	void *self; /* the operator's instance state */
	struct sl_port port[SL_MAX_PORTS];
	int port_tag[SL_MAX_PORTS]; /* side-output tag of port i (port 0: 0) */
	int nports;
	sl_ts_t watermark; /* input watermark, SL_TS_MIN before the first */
	bool idle;
	bool wants_proctime;
	/* The current key (keyed operators): encoded bytes, their hash, key group. */
	const uint8_t *key;
	uint32_t klen;
	uint64_t hash;
	struct sl_op_metrics m;
	/* Keyed state and timers of keyed operators (state/state.h, time/timer.h); NULL else. */
	struct sl_kstate *kstate;
	struct sl_timers *event_timers;
	struct sl_timers *proc_timers;
	struct sl_row_builder out;    /* see sl_ctx_out() */
	uint8_t *out_buf;	      /* SL_ROW_SCRATCH bytes, this instance's own */
	struct sl_ctx *next_in_shard; /* all instances of a shard, for on_proctime */
	/* The last checkpoint's snapshot of this instance (operators with a snapshot hook):
	 * written at the barrier on the shard thread, read by the coordinator after the
	 * shard acknowledged the checkpoint and before it starts the next one. */
	struct sl_snap_buf snap;
	uint64_t snap_ckpt; /* checkpoint the bytes in snap belong to */
	int snap_rc;	    /* 0, or why the snapshot failed (-errno) */
	bool snap_pending;  /* snapshot_step still has to complete snap */
};

/* Hands a watermark / idle / end to an instance: runs its hook, then forwards downstream.
 * Used by stage inputs and by operators that forward. */
void sl_op_watermark(struct sl_ctx *ctx, sl_ts_t wm);
void sl_op_idle(struct sl_ctx *ctx, bool idle);
void sl_op_end(struct sl_ctx *ctx);
/* The barrier of checkpoint `ckpt` reached this instance (aligned over its inputs): runs its
 * snapshot hook into ctx->snap, then forwards the barrier downstream. */
void sl_op_barrier(struct sl_ctx *ctx, uint64_t ckpt);
/* Runs only the snapshot hook (if any) of this instance for checkpoint `ckpt`: the final
 * checkpoint of a shard whose input has ended, where nothing moves any more. */
void sl_op_snapshot(struct sl_ctx *ctx, uint64_t ckpt);
/* The same for ctx and the operators it feeds within its stage. */
void sl_op_snapshot_chain(struct sl_ctx *ctx, uint64_t ckpt);
/* Moves a copy-on-write snapshot of ctx on by about `budget` bytes (SIZE_MAX: to its end).
 * Returns true while it is still pending. */
bool sl_op_snapshot_step(struct sl_ctx *ctx, size_t budget);

/* The shard-wide services operators use. */
sl_ts_t sl_shard_now(const struct sl_shard *sh);
int sl_shard_index(const struct sl_shard *sh);
int sl_shard_count(const struct sl_shard *sh);
uint32_t sl_shard_max_par(const struct sl_shard *sh);
/* True when a final checkpoint follows the end of input (a checkpoint directory is set):
 * an exactly-once sink then publishes its last rows through that checkpoint's commit,
 * not by flushing at end of input. */
bool sl_shard_final_checkpoint(const struct sl_shard *sh);
/* The RocksDB holding keyed state of operator instance `op_id` on this shard
 * (state/backend.h), or NULL: the heap backend (or no shard). */
struct sl_rocks_db *sl_shard_state_db(const struct sl_shard *sh, int op_id);
/*
 * Where operator instance op_id puts its native state (a RocksDB checkpoint of its db) for
 * checkpoint `ckpt`: returns 1 with the directory (chk-<n>/op<id>-s<shard>, not created yet)
 * in buf; 0 when this checkpoint needs the logical snapshot instead (no checkpoint
 * directory, or the checkpoint is also a savepoint, which must be self-contained and
 * portable between backends); -ENAMETOOLONG. Shard thread, at the barrier.
 */
int sl_shard_native_ckpt_dir(const struct sl_shard *sh, uint64_t ckpt, int op_id, char *buf,
			     size_t cap);
/* Records a fatal operator error; the job stops with it. */
void sl_shard_fail(struct sl_shard *sh, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
