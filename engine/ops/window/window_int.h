/*
 * window_int.h - internals shared by the window operator's files; never included from
 * outside engine/ops/window.
 *
 *   window_cfg.c   plan-time binding: spec + aggregates -> struct sl_window_cfg, out schema
 *   window_stream.c  sl_stream_window: the operator as a node of a job graph
 *   window.c       the operator hooks: a facade over the kind's table (struct win.kind)
 *   rows.c         accumulator blocks, output rows, late records: shared by both kinds
 *   slice.c        tumbling, hopping and cumulating windows over slices
 *   session.c      merging session windows
 *   snapshot.c     checkpoints: the versioned, checksummed snapshot of an instance
 *   local.c        two-stage aggregation: the local stage the exchange's senders run
 */
#ifndef SL_OPS_WINDOW_INT_H
#define SL_OPS_WINDOW_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "agg.h"
#include "window.h"

struct sl_kvtab;
struct sl_timers;
struct sl_snap_buf;
struct sl_snap_reader;

struct sl_window_cfg {
	struct sl_window_spec spec;
	sl_ts_t slice;	  /* tumble/hop: gcd(size, slide), the state granularity */
	sl_ts_t slide;	  /* tumble: size; cumulate: slice = slide = step */
	sl_ts_t end_off;  /* window ends are end_off + k * slide: starts on offset + k * slide */
	sl_ts_t lateness; /* allowed lateness, >= 0 */
	int naggs;
	int nkey;
	int nout;	   /* output fields: nkey + 2 + naggs */
	uint32_t acc_size; /* bytes of all accumulators, 8-aligned */
	bool has_init;	   /* some aggregate needs init (USER) */
	bool has_dyn;	   /* some accumulator owns memory (kernel destroy hook) */
	bool cum;	   /* cumulate: window e starts at its period's start, not e - size */
	bool two_phase;	   /* split: a local stage on the senders (local.c) */
	struct sl_agg_bound *agg; /* naggs */
};

/* A state entry of a slice as firing sees it: sorted runs order by hash, then key bytes. */
struct fref {
	uint64_t hash;
	void *v; /* the kvtab value (stable) */
};

/*
 * One slice end: its own state table, and its entries in a fire list (kvtab entries never
 * move, so pointers are kept). New entries are appended with their hash; the first firing
 * that needs the slice sorts them, and the following windows sharing the slice find them
 * already in order. The table holds only this slice's entries (namespace = s_end), so a
 * slice is dropped by clearing its table in one sequential pass (sl_kvtab_clear), not by
 * removing each entry.
 */
struct bucket {
	sl_ts_t s_end;	      /* slice end */
	struct sl_kvtab *tab; /* owned: this slice's entries */
	struct fref *run;     /* nrun entries; the first nsorted sorted by (hash, key) */
	uint32_t nrun;
	uint32_t nsorted;
	uint32_t cap;
};

/* A cursor of the k-way merge of a window's slices at fire time. */
struct fcur {
	const struct fref *p, *end;
	const struct sl_kvtab *tab; /* the slice's table: reads the entries' keys */
	uint32_t bi;		    /* bucket index: ties of one key merge in slice order */
};

/* The per-shard instance (ctx->self). */
struct sl_win_kind_ops;

struct win {
	const struct sl_window_cfg *cfg;
	const struct sl_win_kind_ops *kind; /* slices or sessions, chosen at open */
	const struct sl_op_def *def;
	uint32_t max_par;     /* key groups of the job: [0, max_par) */
	uint32_t nrestored;   /* snapshots restored (rescaling: several) */
	sl_ts_t proc_fired;   /* processing-time windows: the clock they last fired at */
	char err[560];	      /* why the last restore failed, for the job's error */
	struct sl_kvtab *tab; /* sessions (slices: one per bucket); value = header + accs */
	uint32_t hdr;	      /* header bytes before the accumulators */
	void *tmp;	      /* scratch accumulator blocks for merging: old result, */
	void *tmp2;	      /* new result */
	void *save;	      /* scratch copy of an accumulator block (late updates) */
	uint8_t *rowbuf;      /* second row buffer: the -U row while +U is built */

	/* tumble / hop / cumulate */
	sl_ts_t c_lo, c_hi; /* cached slice [c_lo, c_hi) of the last record, so that */
	sl_ts_t c_fire;	    /* in-order input skips the divisions: first window end - 1 */
	sl_ts_t c_drop;	    /* and last window end - 1 + lateness of that slice, */
	uint32_t c_bkt;	    /* and its bucket index (SLICE_NONE: no bucket yet) */
	struct bucket *bkt; /* sorted by s_end, distinct */
	uint32_t nbkt, cap_bkt;
	sl_ts_t fired_upto; /* every window ending at or before this has fired */
	struct fcur *heap;  /* merge cursors for one window, one per slice */
	uint32_t cap_heap;
	struct fcur *grp; /* entries of one key hash at fire time (p, bi) */
	uint32_t cap_grp;
	size_t run_bytes;      /* bytes of the buckets' fire lists (their capacity) */
	struct fref *sort_tmp; /* radix sort scratch, grown to the largest bucket */
	uint32_t cap_sort;
	uint32_t *radix_count;	   /* 2^16 digit counters, allocated on first big sort */
	struct sl_kvtab *spare[2]; /* cleared tables of dropped slices, for the next ones */
	uint32_t nspare;

	/* session */
	struct sl_kvtab *dir;	    /* key -> head of its session list */
	struct sl_timers *timers;   /* fire at end - 1, clean up at end - 1 + lateness */
	uint64_t seq;		    /* next session id (the state namespace) */
	uint64_t nsess;		    /* live sessions (in dir entries and in tab) */
	uint8_t keybuf[SL_KEY_MAX]; /* a timer's key, copied out of the timer service */

	uint64_t acct_at; /* state_entries at which state_bytes is measured again */
};

/* Measures the instance's state into ctx->m.state_bytes (window.c; O(open slices)): the
 * tables, the fire lists and scratch, not what accumulators own outside their blocks
 * (LISTAGG text, COUNT(DISTINCT) sets). The runtime holds the sum to the job's limit
 * (memory_guard.c). */
void sl_win_account(struct win *w, struct sl_ctx *ctx);

static inline sl_ts_t floor_mod(sl_ts_t a, sl_ts_t m)
{
	sl_ts_t r = a % m;

	return r < 0 ? r + m : r;
}

/* End of the slice holding event time ts (tumble, hop, cumulate). */
static inline sl_ts_t slice_end_of(const struct sl_window_cfg *c, sl_ts_t ts)
{
	return ts - floor_mod(ts - c->spec.offset_ms, c->slice) + c->slice;
}

/* End of the first window containing the slice ending at s. */
static inline sl_ts_t first_end(const struct sl_window_cfg *c, sl_ts_t s)
{
	return s + floor_mod(c->end_off - s, c->slide);
}

/* a + b clamped to SL_TS_MAX (cleanup times of windows near the end of time). */
static inline sl_ts_t ts_add_sat(sl_ts_t a, sl_ts_t b)
{
	sl_ts_t r;

	return __builtin_add_overflow(a, b, &r) ? SL_TS_MAX : r;
}

static inline void *accs_of(const struct win *w, void *v)
{
	return (uint8_t *)v + w->hdr;
}

/* rows.c */
void sl_win_acc_init(const struct win *w, void *acc);
void sl_win_acc_add(const struct win *w, void *acc, const struct sl_row *row);
void sl_win_acc_merge(const struct win *w, void *acc, const void *other);
/* dst = a copy of src that shares no memory with it (dst holds no live accumulators). */
void sl_win_acc_copy(const struct win *w, void *dst, const void *src);
/* Frees what the block's accumulators own (agg.h); the block is empty afterwards. Every
 * block that is dropped or reused goes through this: purged slices, merged or fired sessions,
 * the scratch blocks after a merge, everything left at close. */
void sl_win_acc_destroy(const struct win *w, void *acc);
/* Builds the output row for the current ctx key into b (over buf) and finishes it. */
const struct sl_row *sl_win_row_build(struct win *w, struct sl_ctx *ctx, void *buf, sl_ts_t start,
				      sl_ts_t end, const void *acc, enum sl_row_kind kind);
/* Emits the row of (ctx key, [start, end)) with `kind`: +I on a first firing, -D for a
 * fired session absorbed by a merge. */
void sl_win_emit(struct win *w, struct sl_ctx *ctx, sl_ts_t start, sl_ts_t end, const void *acc,
		 enum sl_row_kind kind);
/* Emits -U old / +U new, or nothing when the rows are equal (Flink suppresses those). */
void sl_win_emit_update(struct win *w, struct sl_ctx *ctx, sl_ts_t start, sl_ts_t end,
			const void *old_acc, const void *new_acc);
/* Counts a record beyond allowed lateness and sends it to the late side output. */
void sl_win_late(struct win *w, struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row);
void sl_win_fail(struct sl_ctx *ctx, int code, const char *what);

/*
 * What differs between the window kinds, one table each: the slice-based kinds (tumbling,
 * hopping, cumulating: slice.c) and sessions (session.c). window.c and snapshot.c call
 * through w->kind and never test the kind themselves. prefetch is optional.
 */
struct sl_win_kind_ops {
	int (*open)(struct win *w, uint32_t max_par);
	void (*close)(struct win *w);
	void (*process)(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row);
	/* Starts the cache misses of a coming record's lookup (see sl_op_ops.prefetch). */
	void (*prefetch)(const struct win *w, uint64_t hash, sl_ts_t ts, int stage);
	void (*on_watermark)(struct sl_ctx *ctx, sl_ts_t wm);
	int (*snapshot)(struct win *w, struct sl_snap_buf *out);
	int (*restore)(struct win *w, struct sl_snap_reader *r, uint32_t kg_lo, uint32_t kg_hi);
	/* The end - 1 of the earliest window waiting to fire and how many wait (observers;
	 * sl_op_ops.pending). */
	void (*pending)(const struct win *w, sl_ts_t *at, uint64_t *n);
	/* Entries and bytes of the kind's state tables (sl_win_account). */
	void (*measure)(const struct win *w, uint64_t *entries, size_t *bytes);
};

extern const struct sl_win_kind_ops sl_win_slices; /* slice.c */
/* slice.c: a partial of the local stage (local.c) merged into the current key's slice */
void sl_win_slice_merge_partial(struct sl_ctx *ctx, sl_ts_t ts, const void *acc, uint32_t nrows);
/* local.c: the window's local stage, for the senders of its exchange (sl_op_ops.combiner_of) */
extern const struct sl_combiner_ops sl_window_combiner;
const struct sl_combiner_ops *sl_window_combiner_of(const void *op_cfg, const void **local_cfg);
/* window_cfg.c: whether the aggregates of c split into two stages under its strategy */
bool sl_window_cfg_splits(const struct sl_window_cfg *c);
extern const struct sl_win_kind_ops sl_win_sessions; /* session.c */

/* snapshot.c: the pieces slice.c and session.c write their entries with */
int sl_window_snapshot(struct sl_ctx *ctx, uint64_t ckpt, struct sl_snap_buf *out);
int sl_window_restore(struct sl_ctx *ctx, struct sl_snap_reader *r, uint32_t kg_lo, uint32_t kg_hi);
/* Appends a key: key group (u16), length (u16), bytes. */
int sl_win_snap_put_key(struct sl_snap_buf *out, uint32_t kg, const uint8_t *key, uint32_t klen);
/* Reads a key written by sl_win_snap_put_key, borrowing its bytes from r, and its hash; checks
 * that the key group is the one the key hashes to. Returns 0 or -EINVAL. */
int sl_win_snap_get_key(const struct win *w, struct sl_snap_reader *r, uint32_t *kg,
			const uint8_t **key, uint32_t *klen, uint64_t *hash);
/* A timestamp a snapshot may hold: far enough from the ends of time that window arithmetic
 * (start + size, end - 1 + lateness) cannot overflow. */
bool sl_win_snap_ts_ok(sl_ts_t t);
/* Appends / reads one accumulator block (its aggregates one after another). Reading: acc
 * is overwritten with the block; on failure it is empty (nothing to free). */
int sl_win_acc_serialize(const struct win *w, const void *acc, struct sl_snap_buf *out);
int sl_win_acc_deserialize(const struct win *w, void *acc, struct sl_snap_reader *r);

/* EXPLAIN's description of a window operator's state (sl_op_ops.explain; window_cfg.c). */
void sl_window_explain(const void *cfg, FILE *f);

#endif
