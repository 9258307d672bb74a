/*
 * source_rt.c - running a source on a shard: its splits, their event time and watermarks
 * (DESIGN §4).
 *
 * Split k of a source belongs to shard k mod N; a source whose splits are pieces of one
 * stream (splits_in_order: a file's byte ranges) has them read one after another, the others
 * all at once. Each split tracks the greatest event time it
 * has produced; the instance's watermark is the minimum over its splits that are neither idle
 * nor finished, and only moves forward. A split that produced nothing for idle_timeout is
 * idle and left out of the minimum; when every live split is idle the instance tells
 * downstream it is idle, so one silent split does not stall the job. An instance with no
 * split at all ends at once, so it never holds a watermark back, unless its source's splits
 * may grow (splits_grow): then it stays, idle, and opens the splits k mod N that the
 * coordinator's discovery publishes (grow), which join the minimum like the others. At the
 * end of bounded input the instance sends a watermark of +inf (firing every window), then
 * end-of-input.
 *
 * Watermarks are emitted periodically (strategy interval) or, with interval 0, after every
 * record that advances them ('scan.watermark.emit.strategy' = 'on-event').
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "directory.h"
#include "runtime.h"
#include "watermark.h"

#define SRC_POLL_BATCH 64

/* Recomputes the instance watermark and idleness (watermark.h) and hands changes to the
 * chain. */
static void update_wm(struct sl_stage_inst *si)
{
	bool in_order = si->st->input->src_ops->splits_in_order;
	struct sl_wm_min m;

	sl_wm_min_init(&m);
	for (int i = 0; i < si->nsplits; i++) {
		const struct sl_split_inst *sp = &si->splits[i];

		sl_wm_min_add(&m, sl_wm_of_split(si->wm, sp->max_ts, sp->custom_wm), sp->idle,
			      sp->ended);
		/* in order: the splits after the one being read have not started */
		if (in_order && !sp->ended)
			break;
	}
	/* no live split yet, but one may come: idle, so the others' watermark moves */
	if (!m.active && si->grows)
		m.idle = true;
	sl_stage_input_time(si, &m);
}

static void dead_letter(struct sl_src_ctx *c, const char *where, const char *why, const char *raw,
			size_t rawlen);

/* Per record: event time, split bookkeeping, then the chain. Hot path. */
static int split_emit(struct sl_src_ctx *c, const struct sl_row *row)
{
	struct sl_split_inst *sp = (struct sl_split_inst *)c;
	struct sl_stage_inst *si = sp->si;
	const struct sl_wm_strategy *wm = si->wm;
	sl_ts_t ts;

	if (wm->ts_field >= 0) {
		if (sl_row_is_null(row, wm->ts_field)) {
			dead_letter(c, si->st->input->name, "NULL event time", NULL, 0);
			return 0;
		}
		ts = sl_row_i64(row, wm->ts_field);
	} else if (wm->assign) {
		ts = wm->assign(row, wm->assign_arg);
	} else {
		ts = si->sh->now; /* no event time: stamp with the ingestion time */
	}
	sp->last_active = si->sh->now;
	if (ts > sp->max_ts)
		sp->max_ts = ts;
	if (wm->kind == SL_WM_CUSTOM && wm->custom.on_event)
		wm->custom.on_event(sp->custom_state, ts, row, wm->custom.arg);
	si->root->m.in++;
	si->root->def->ops->process(si->root, ts, row);
	if (sp->idle) {
		sp->idle = false;
		update_wm(si);
	} else if (wm->interval_ms == 0 && wm->kind != SL_WM_NONE && wm->kind != SL_WM_CUSTOM) {
		if (si->nsplits == 1) {
			sl_ts_t w = sl_wm_of_split(wm, sp->max_ts, sp->custom_wm);

			if (w > si->wm_out) {
				si->wm_out = w;
				sl_op_watermark(si->root, w);
			}
		} else {
			update_wm(si);
		}
	}
	return 0;
}

static void dead_letter(struct sl_src_ctx *c, const char *where, const char *why, const char *raw,
			size_t rawlen)
{
	struct sl_split_inst *sp = (struct sl_split_inst *)c;

	sl_dead_letter_write(sp->si->sh, where, why, raw, rawlen);
}

/* Opens split k on this shard as si->splits[si->nsplits] (room must exist) and, on
 * restore, seeks it to its checkpointed position. 0 or -errno with the shard failed. */
static int open_split(struct sl_stage_inst *si, int k)
{
	struct sl_shard *sh = si->sh;
	const struct sl_stream *src = si->st->input;
	struct sl_split_inst *sp = &si->splits[si->nsplits];
	struct sl_error err = { 0 };
	const void *pos;
	size_t len;
	int64_t max_ts;
	int rc;

	memset(sp, 0, sizeof(*sp));
	sp->si = si;
	sp->sctx.emit = split_emit;
	sp->sctx.dead_letter = dead_letter;
	sp->sctx.scratch = sh->src_scratch;
	sp->sctx.overflows = &si->root->m.overflow;
	sp->sctx.owner = sh;
	sp->sctx.split = k;
	sp->max_ts = SL_TS_MIN;
	sp->custom_wm = SL_TS_MIN;
	sp->last_active = sh->now;
	if (si->wm->kind == SL_WM_CUSTOM && si->wm->custom.state_size) {
		sp->custom_state = calloc(1, si->wm->custom.state_size);
		if (!sp->custom_state)
			return -ENOMEM;
	}
	si->nsplits++;
	sp->state = src->src_ops->open(src->cfg, k, &err);
	if (!sp->state) {
		sl_shard_fail(sh, err.code ? err.code : -EIO, "source '%s': %s", src->name,
			      err.msg[0] ? err.msg : "cannot open split");
		return err.code ? err.code : -EIO;
	}
	/* restarting from a checkpoint: continue where the split was */
	rc = sl_ckpt_restore_split(sh->rt, src->id, k, &max_ts, &pos, &len);
	if (rc > 0) {
		sp->max_ts = max_ts;
		rc = src->src_ops->seek ? src->src_ops->seek(sp->state, pos, len) : -ENOTSUP;
	}
	if (rc < 0) {
		sl_shard_fail(sh, rc,
			      "source '%s' split %d: cannot resume from the "
			      "checkpoint: %s",
			      src->name, k, strerror(-rc));
		return rc;
	}
	return 0;
}

int sl_source_stage_open(struct sl_stage_inst *si)
{
	struct sl_shard *sh = si->sh;
	const struct sl_stream *src = si->st->input;
	int total = sh->rt->src_nsplits[src->id];
	int n = 0, rc;

	si->wm = &src->wm;
	si->wm_out = SL_TS_MIN;
	si->grows = src->src_ops->splits_grow && src->src_ops->discover &&
		    src->src_ops->splits_grow(src->cfg);
	si->total_splits = total;
	for (int k = sh->index; k < total; k += sh->rt->nshards)
		n++;
	si->splits = calloc((size_t)(n ? n : 1), sizeof(*si->splits));
	if (!si->splits)
		return -ENOMEM;
	for (int k = sh->index; k < total; k += sh->rt->nshards)
		if ((rc = open_split(si, k)) < 0)
			return rc;
	si->next_wm_at = sh->now + si->wm->interval_ms;
	return 0;
}

/*
 * Splits found while the job runs (the coordinator's sl_source_discover published more):
 * opens those of this shard, k mod N as at the start, and lets them join the watermark. Not
 * while the coordinator may still be reading this shard's positions for a checkpoint this
 * shard acknowledged (sl_ckpt_ctl_complete walks si->splits from its thread): only once it
 * is done with every checkpoint this shard has seen, so the array never moves under it.
 * Opening a split costs a client (threads, sockets): rare, never per record.
 */
static void grow(struct sl_stage_inst *si)
{
	struct sl_shard *sh = si->sh;
	struct sl_runtime *rt = sh->rt;
	const struct sl_stream *src = si->st->input;
	/* acquire src_splits: pairs with the coordinator's release of it (sl_source_discover) */
	int total = atomic_load_explicit(&rt->src_splits[src->id], memory_order_acquire);
	struct sl_split_inst *v;
	int n = si->nsplits, opened = 0;

	if (total <= si->total_splits)
		return;
	/* acquire ckpt_consumed: pairs with the coordinator's release of it (coordinator.c) */
	if (atomic_load_explicit(&rt->ckpt_consumed, memory_order_acquire) < sh->ckpt_seen)
		return;
	for (int k = si->total_splits; k < total; k++)
		n += k % rt->nshards == sh->index;
	v = realloc(si->splits, (size_t)(n ? n : 1) * sizeof(*v));
	if (!v) {
		sl_shard_fail(sh, -ENOMEM, "source '%s': out of memory for new splits", src->name);
		return;
	}
	si->splits = v;
	for (int i = 0; i < si->nsplits; i++)
		si->splits[i].si = si;
	for (int k = si->total_splits; k < total; k++) {
		if (k % rt->nshards != sh->index)
			continue;
		if (open_split(si, k) < 0)
			return;
		opened++;
		fprintf(stderr, "sluice: source '%s': new split %d on shard %d\n", src->name, k,
			sh->index);
	}
	si->total_splits = total;
	if (opened)
		update_wm(si);
}

bool sl_source_discover(struct sl_runtime *rt, int64_t now_ms)
{
	struct sl_job *job = rt->job;
	bool any = false;

	for (int i = 0; i < job->nnodes; i++) {
		const struct sl_stream *src = job->node[i];
		int n;

		if (src->kind != SL_NODE_SOURCE || !src->src_ops->discover ||
		    !src->src_ops->splits_grow || !src->src_ops->splits_grow(src->cfg))
			continue;
		any = true;
		n = src->src_ops->discover(src->cfg, now_ms);
		if (n < 0) {
			fprintf(stderr, "sluice: source '%s': finding new splits: %s (retried)\n",
				src->name, strerror(-n));
			continue;
		}
		if (n > atomic_load_explicit(&rt->src_splits[i], memory_order_relaxed))
			/* release src_splits: pairs with the shards' acquire of it
			 * (sl_source_stage_tick via grow): the source's new split count */
			atomic_store_explicit(&rt->src_splits[i], n, memory_order_release);
	}
	return any;
}

static void finish(struct sl_stage_inst *si, bool fire)
{
	if (si->ended)
		return;
	si->ended = true;
	if (fire)
		sl_op_watermark(si->root, SL_TS_MAX);
	sl_op_end(si->root);
}

int sl_source_stage_poll(struct sl_stage_inst *si)
{
	const struct sl_stream *src = si->st->input;
	bool in_order = src->src_ops->splits_in_order;
	int work = 0, live = 0;

	for (int i = 0; i < si->nsplits && !si->pending; i++) {
		struct sl_split_inst *sp = &si->splits[i];
		int rc;

		if (sp->ended)
			continue;
		rc = src->src_ops->poll(sp->state, &sp->sctx, SRC_POLL_BATCH);
		if (rc == SL_SRC_EOF) {
			sp->ended = true;
			update_wm(si);
			continue;
		}
		live++;
		if (rc < 0) {
			sl_shard_fail(si->sh, rc, "source '%s' split %d: %s", src->name,
				      sp->sctx.split, strerror(-rc));
			return work;
		}
		work += rc;
		if (in_order)
			break; /* the next split starts when this one has ended */
	}
	if (!live && !si->pending && !si->grows) {
		bool all_ended = true;

		for (int i = 0; i < si->nsplits; i++)
			all_ended &= si->splits[i].ended;
		if (all_ended)
			finish(si, true);
	}
	return work;
}

void sl_source_stage_tick(struct sl_stage_inst *si)
{
	const struct sl_wm_strategy *wm = si->wm;
	sl_ts_t now = si->sh->now;

	if (si->ended || si->pending)
		return;
	if (si->grows)
		grow(si);
	if (wm->idle_timeout_ms > 0) {
		for (int i = 0; i < si->nsplits; i++) {
			struct sl_split_inst *sp = &si->splits[i];

			if (!sp->ended && !sp->idle &&
			    sl_wm_split_goes_idle(wm, now, sp->last_active))
				sp->idle = true;
		}
	}
	if (now < si->next_wm_at && wm->interval_ms > 0)
		return;
	si->next_wm_at = now + wm->interval_ms;
	if (wm->kind == SL_WM_CUSTOM) {
		for (int i = 0; i < si->nsplits; i++) {
			struct sl_split_inst *sp = &si->splits[i];
			sl_ts_t w = wm->custom.on_periodic(sp->custom_state, wm->custom.arg);

			if (w > sp->custom_wm)
				sp->custom_wm = w;
		}
	}
	update_wm(si);
}

/*
 * Checkpoint n starts at this source instance, between two polls: each split records its
 * position (the greatest event time so far, then the connector's position bytes), and the
 * barrier enters the chain behind every record emitted so far. An instance that has ended
 * sent its end-of-input already, so it only records its splits' final positions (a restore
 * must not read them again): downstream counts its channels as aligned.
 */
#define POS_MAX 4096

void sl_source_stage_barrier(struct sl_stage_inst *si, uint64_t ckpt)
{
	const struct sl_stream *src = si->st->input;

	for (int i = 0; i < si->nsplits; i++) {
		struct sl_split_inst *sp = &si->splits[i];
		size_t len = 0;
		void *p;

		sl_snap_reset(&sp->pos);
		sl_snap_put_u64(&sp->pos, (uint64_t)sp->max_ts);
		if (src->src_ops->position && (p = sl_snap_reserve(&sp->pos, POS_MAX))) {
			int rc = src->src_ops->position(sp->state, p, POS_MAX, &len);

			if (rc < 0)
				sp->pos.error = rc;
			else
				sp->pos.len += len;
		}
		sp->pos_ckpt = ckpt;
	}
	if (si->ended)
		return;
	si->ckpt_done = ckpt;
	sl_op_barrier(si->root, ckpt);
}

void sl_source_stage_complete(struct sl_stage_inst *si, uint64_t ckpt)
{
	const struct sl_stream *src = si->st->input;

	if (!src->src_ops->checkpoint_complete)
		return;
	for (int i = 0; i < si->nsplits; i++) {
		struct sl_split_inst *sp = &si->splits[i];

		/* only a split whose last position is this checkpoint's: a newer position is
		 * announced with its own checkpoint */
		if (sp->state && sp->pos_ckpt == ckpt)
			src->src_ops->checkpoint_complete(sp->state, ckpt);
	}
}

void sl_source_stage_stop(struct sl_stage_inst *si)
{
	finish(si, false);
}

void sl_source_stage_close(struct sl_stage_inst *si)
{
	const struct sl_stream *src = si->st->input;

	for (int i = 0; i < si->nsplits; i++) {
		if (si->splits[i].state && src->src_ops->close)
			src->src_ops->close(si->splits[i].state);
		free(si->splits[i].custom_state);
		sl_snap_free(&si->splits[i].pos);
	}
	free(si->splits);
	si->splits = NULL;
	si->nsplits = 0;
}
