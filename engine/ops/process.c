/*
 * process.c - the keyed process function operator.
 *
 * An instance owns the keyed state of its descriptors (state/state.h) and two timer services
 * (event and processing time). Records go straight to fn->process with the key the runtime
 * set in ctx. Timers fire in the timer service's deterministic order:
 *
 *   on_watermark(wm)  : every event timer with at <= wm, before the watermark is forwarded,
 *                       so rows emitted by on_timer precede it (as in Flink);
 *   on_proctime(now)  : every processing timer with at <= now (once per loop turn);
 *   end of input      : the final +inf watermark fires all event timers; processing timers
 *                       still pending do not fire (Flink quiesces processing time too).
 *
 * While a timer fires, ctx->key/klen/hash are the timer's key (copied into the instance,
 * because on_timer may add and delete timers) so state and new timers address that key; the
 * record key is restored afterwards. A timer registered by on_timer at or before the
 * current time fires in the same pass.
 *
 * Hot path: process() adds nothing to the user's work but a counter store.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap.h"
#include "hash.h"
#include "process.h"
#include "backend.h"
#include "kvtab.h"
#include "state.h"
#include "timer.h"

struct proc {
	const struct sl_process_fn *fn;
	uint32_t max_par;	       /* key groups of state and timers */
	uint32_t restored;	       /* snapshots restored into this instance */
	bool own_out;		       /* ctx->out_buf was allocated here */
	uint8_t key[SL_KVTAB_KEY_MAX]; /* the firing timer's key */
};

static void fail(struct sl_ctx *ctx, int code, const char *what)
{
	/* unit tests drive instances without a shard; the job path always has one */
	if (ctx->shard)
		sl_shard_fail(ctx->shard, code, "process '%s': %s", ctx->def->name, what);
}

/* Frees what open set up, in reverse order; accepts a half-open instance. */
static void release(struct sl_ctx *ctx, struct proc *p)
{
	if (p && p->own_out) {
		free(ctx->out_buf);
		ctx->out_buf = NULL;
	}
	sl_timers_destroy(ctx->proc_timers);
	sl_timers_destroy(ctx->event_timers);
	sl_kstate_destroy(ctx->kstate);
	ctx->proc_timers = NULL;
	ctx->event_timers = NULL;
	ctx->kstate = NULL;
	free(p);
	ctx->self = NULL;
}

static void process_close(struct sl_ctx *ctx)
{
	struct proc *p = ctx->self;

	if (p && p->fn->close)
		p->fn->close(ctx, p->fn->arg);
	release(ctx, p);
}

static int process_open(struct sl_ctx *ctx)
{
	const struct sl_process_fn *fn = ctx->def->cfg;
	uint32_t max_par = ctx->shard ? sl_shard_max_par(ctx->shard) : 128;
	const char *what = "out of memory";
	struct proc *p;
	int rc = -ENOMEM;

	if (!fn || !fn->process || (fn->nstates > 0 && !fn->states) || ctx->def->nkey <= 0) {
		fail(ctx, -EINVAL, "needs a keyed input and a process callback");
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		goto out_fail;
	p->fn = fn;
	p->max_par = max_par;
	if (!ctx->out_buf) {
		/* the operator's own output scratch for sl_ctx_out(), as every operator's */
		ctx->out_buf = aligned_alloc(8, SL_ROW_SCRATCH);
		if (!ctx->out_buf)
			goto out_release;
		p->own_out = true;
	}
	/* the job's backend: this instance's RocksDB, or the heap when it has none */
	ctx->kstate =
		sl_kstate_create_in(sl_shard_state_db(ctx->shard, ctx->def->id), ctx->def->state_id,
				    fn->states, fn->nstates, max_par, &rc);
	if (!ctx->kstate) {
		what = rc == -EINVAL ? "bad state descriptor" : what;
		goto out_release;
	}
	rc = -ENOMEM;
	ctx->event_timers = sl_timers_create();
	ctx->proc_timers = sl_timers_create();
	if (!ctx->event_timers || !ctx->proc_timers)
		goto out_release;
	/* processing-time timers may be registered by any callback */
	ctx->wants_proctime = true;
	if (fn->open) {
		rc = fn->open(ctx, fn->arg);
		if (rc) {
			what = "open callback failed";
			goto out_release;
		}
	}
	ctx->self = p;
	return 0;

out_release:
	release(ctx, p); /* fn->close is not called: open did not succeed */
out_fail:
	fail(ctx, rc, what);
	return rc;
}

/* Hot path. */
static void process_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	struct proc *p = ctx->self;

	p->fn->process(ctx, ts, row, p->fn->arg);
	ctx->m.state_entries = sl_kstate_entries(ctx->kstate);
}

/* Two-stage aggregation: the function's own local stage, if it has one (op.h). */
static const struct sl_combiner_ops *process_combiner_of(const void *cfg, const void **local_cfg)
{
	const struct sl_process_fn *fn = cfg;

	*local_cfg = fn->combiner_cfg;
	return fn->merge_partial ? fn->combiner : NULL;
}

static void process_merge_partial(struct sl_ctx *ctx, sl_ts_t ts, const void *acc, uint32_t acc_len,
				  uint32_t nrows)
{
	struct proc *p = ctx->self;

	p->fn->merge_partial(ctx, ts, acc, acc_len, nrows, p->fn->arg);
	ctx->m.state_entries = sl_kstate_entries(ctx->kstate);
}

static void fire(struct sl_ctx *ctx, struct sl_timers *tm, sl_ts_t until,
		 enum sl_time_domain domain)
{
	struct proc *p = ctx->self;
	const uint8_t *key = ctx->key;
	uint32_t klen = ctx->klen;
	uint64_t hash = ctx->hash;
	struct sl_timer t;

	if (sl_timers_next(tm) > until)
		return;
	while (sl_timers_pop(tm, until, &t)) {
		if (!p->fn->on_timer)
			continue; /* nobody listens: due timers are just dropped */
		memcpy(p->key, t.key, t.klen);
		ctx->key = p->key;
		ctx->klen = t.klen;
		ctx->hash = t.hash;
		p->fn->on_timer(ctx, t.at, domain, p->fn->arg);
	}
	ctx->key = key;
	ctx->klen = klen;
	ctx->hash = hash;
	ctx->m.state_entries = sl_kstate_entries(ctx->kstate);
}

static void process_on_watermark(struct sl_ctx *ctx, sl_ts_t wm)
{
	fire(ctx, ctx->event_timers, wm, SL_TIME_EVENT);
}

static void process_on_proctime(struct sl_ctx *ctx, sl_ts_t now)
{
	fire(ctx, ctx->proc_timers, now, SL_TIME_PROC);
}

/* ---- checkpoints -------------------------------------------------------------------------
 *
 * A snapshot is four sections (state/state.h framing): "SLPR" {i64 watermark}, the event
 * timers, the processing timers, then the keyed state (version 2; version 1 had the keyed
 * state before the timers, and is still read). The timers are the whole of the pending
 * work: a restored instance fires exactly the timers the old one had, in the same order.
 * The user's process function keeps everything else it needs in state (dedup, temporal join
 * and GROUP BY do); its `arg` is plan-time configuration, not snapshotted.
 *
 * The keyed state comes last because it is taken copy-on-write (state.h): the barrier only
 * writes the header, the timers and the state's layout, and process_snapshot_step appends
 * the rest between record batches while the instance goes on processing records.
 */
#define PR_MAGIC   0x52504c53u /* "SLPR" */
#define PR_VERSION 2u

/* This instance's key groups: a contiguous range (hash.h). */
static void kg_range(const struct sl_ctx *ctx, uint32_t *lo, uint32_t *hi)
{
	sl_key_group_range(sl_shard_max_par(ctx->shard), (uint32_t)sl_shard_count(ctx->shard),
			   (uint32_t)sl_shard_index(ctx->shard), lo, hi);
}

/*
 * The keyed state at the barrier. With RocksDB, and unless the checkpoint is also a
 * savepoint, a native checkpoint: this instance's db is flushed and hard-linked into
 * chk-<n>/op<id>-s<shard>/ (the SSTs unchanged since the last checkpoint are shared, so
 * the cost is the memtable flush and the links), and the snapshot keeps only the layout.
 * Otherwise the logical section (heap; savepoints, portable between backends), taken
 * copy-on-write on the heap: returns 1 while it goes on (process_snapshot_step), 0 when
 * complete, -errno on failure. A failed native checkpoint fails the checkpoint, not the job
 * (a state failure is sticky in the db and fails the job through the state calls).
 */
static int snapshot_state(struct sl_ctx *ctx, uint64_t ckpt, sl_ts_t now, struct sl_snap_buf *out)
{
	struct sl_rocks_db *db = sl_shard_state_db(ctx->shard, ctx->def->id);
	uint32_t lo, hi;
	char dir[4096];
	int rc = db ? sl_shard_native_ckpt_dir(ctx->shard, ckpt, ctx->def->id, dir, sizeof dir) : 0;

	if (rc == 0)
		return sl_kstate_snapshot_begin(ctx->kstate, now, out);
	if (rc > 0)
		rc = sl_rocks_db_checkpoint(db, dir, NULL);
	if (rc) {
		fprintf(stderr,
			"sluice: checkpoint %llu: process '%s': native state checkpoint "
			"failed: %s\n",
			(unsigned long long)ckpt, ctx->def->name,
			sl_rocks_db_error(db)[0] ? sl_rocks_db_error(db) : strerror(-rc));
		if (!out->error)
			out->error = rc;
		return rc;
	}
	kg_range(ctx, &lo, &hi);
	sl_kstate_snapshot_native(ctx->kstate, lo, hi, out);
	return out->error;
}

static int process_snapshot(struct sl_ctx *ctx, uint64_t ckpt, struct sl_snap_buf *out)
{
	struct proc *p = ctx->self;
	sl_ts_t now = sl_kstate_has_ttl(ctx->kstate) ? sl_ctx_proctime(ctx) : 0;
	size_t sec = sl_snap_sec_begin(out, PR_MAGIC, PR_VERSION);
	int rc;

	sl_snap_put_u64(out, (uint64_t)ctx->watermark);
	sl_snap_sec_end(out, sec);
	sl_timers_snapshot(ctx->event_timers, p->max_par, out);
	sl_timers_snapshot(ctx->proc_timers, p->max_par, out);
	/* the state's size is measured here and at the end (wire.c), not per record: a map
	 * descriptor's size is a walk over its keys */
	ctx->m.state_bytes = sl_kstate_bytes(ctx->kstate);
	rc = out->error ? out->error : snapshot_state(ctx, ckpt, now, out);
	if (rc == -ENOMEM)
		fail(ctx, rc, "out of memory writing a snapshot");
	return rc;
}

static int process_snapshot_step(struct sl_ctx *ctx, size_t budget)
{
	int rc = sl_kstate_snapshot_step(ctx->kstate, budget);

	if (rc < 0)
		fail(ctx, rc, "out of memory writing a snapshot");
	return rc;
}

static int restore_timers(struct sl_ctx *ctx, struct sl_snap_reader *r, uint32_t kg_lo,
			  uint32_t kg_hi, const char **what)
{
	struct proc *p = ctx->self;
	int rc;

	*what = "event timers";
	rc = sl_timers_restore(ctx->event_timers, r, p->max_par, kg_lo, kg_hi);
	if (!rc) {
		*what = "processing timers";
		rc = sl_timers_restore(ctx->proc_timers, r, p->max_par, kg_lo, kg_hi);
	}
	return rc;
}

/* One old instance's snapshot, into an opened instance that has seen no record yet (the
 * state and timers must be the ones open made). With rescaling the new instance takes the smallest
 * of the old instances' watermarks: each of them had seen at least that much of its input. */
static int process_restore(struct sl_ctx *ctx, struct sl_snap_reader *r, uint32_t kg_lo,
			   uint32_t kg_hi)
{
	struct proc *p = ctx->self;
	struct sl_snap_reader b;
	char msg[320], why[96];
	const char *what;
	uint32_t ver;
	uint64_t wm;
	int rc;

	if (!p) {
		fail(ctx, -EINVAL, "restore before open");
		return -EINVAL;
	}
	rc = sl_snap_sec_open(r, PR_MAGIC, PR_VERSION, &b, &ver);
	if (!rc && (sl_snap_get_u64(&b, &wm) || b.pos != b.len))
		rc = r->error = -EINVAL;
	if (rc) {
		what = rc == -EPROTO ? "snapshot format version is newer than this build's"
				     : "snapshot is corrupt (no process header)";
		goto out_fail;
	}
	if (ver >= 2 && (rc = restore_timers(ctx, r, kg_lo, kg_hi, &what)))
		goto out_timers;
	rc = sl_kstate_restore(ctx->kstate, r, kg_lo, kg_hi);
	if (rc) {
		what = sl_kstate_error(ctx->kstate);
		goto out_fail;
	}
	if (ver == 1 && (rc = restore_timers(ctx, r, kg_lo, kg_hi, &what)))
		goto out_timers;
	if (!p->restored++ || (sl_ts_t)wm < ctx->watermark)
		ctx->watermark = (sl_ts_t)wm;
	ctx->m.state_entries = sl_kstate_entries(ctx->kstate);
	ctx->m.state_bytes = sl_kstate_bytes(ctx->kstate);
	return 0;

out_timers:
	snprintf(why, sizeof(why), "%s: %s", what,
		 rc == -EPROTO	 ? "snapshot has another max parallelism or a newer format"
		 : rc == -ENOMEM ? "out of memory"
				 : "snapshot is corrupt");
	what = why;
out_fail:
	snprintf(msg, sizeof(msg), "restore: %s", what);
	fail(ctx, rc, msg);
	return rc;
}

static void process_explain(const void *cfg, FILE *f)
{
	const struct sl_process_fn *fn = cfg;

	fprintf(f, "state:");
	for (int i = 0; i < fn->nstates; i++)
		fprintf(f, "%s %s %s%s", i ? "," : "", fn->states[i].name,
			fn->states[i].kind == SL_STATE_MAP ? "(map)" : "(value)",
			fn->states[i].ttl_ms ? " with TTL" : "");
	if (fn->nstates == 0)
		fprintf(f, " none");
}

const struct sl_op_ops sl_process_ops = {
	.name = "keyed process",
	.open = process_open,
	.process = process_process,
	.on_watermark = process_on_watermark,
	.on_proctime = process_on_proctime,
	.close = process_close,
	.snapshot = process_snapshot,
	.snapshot_step = process_snapshot_step,
	.restore = process_restore,
	.keyed_state = true,
	.explain = process_explain,
	.combiner_of = process_combiner_of,
	.merge_partial = process_merge_partial,
};
