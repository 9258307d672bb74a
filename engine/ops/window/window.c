/*
 * window.c - the keyed event-time window operator's hooks (sl_window_ops): a facade that
 * calls the window kind's table (w->kind: slice.c or session.c); the accumulator blocks and
 * output rows both kinds share are in rows.c.
 *
 * Tumbling, hopping and cumulating windows live in slice.c (state per (key, slice), fire lists
 * per slice end), session windows in session.c (a per-key list of sessions and one timer per
 * session), checkpoints (the snapshot and restore hooks) in snapshot.c.
 * Both share the lifecycle of a window's state for one key:
 *
 *              process: first record            on_watermark: wm >= end - 1
 *   (absent) ---------------------------> OPEN ------------------------------> FIRED (+I)
 *                                          |                                    |    ^
 *                                          | wm >= end - 1 + lateness           |    | process:
 *                                          v  (lateness 0: at the firing)       |    | late record
 *                                       (removed) <-----------------------------+    | within
 *                                                  on_watermark: wm >= end-1+L   ----+ lateness
 *                                                                                   (-U / +U)
 *
 * A record whose window(s) are all past end - 1 + lateness never touches state: it is
 * counted in ctx->m.late and sent to the late side output (spec.late_tag), as Flink's
 * WindowOperator does with its late-data output tag.
 *
 * Every row for (key, [start, end)) is emitted with event time end - 1 (the window's max
 * timestamp). Rows fired by one watermark come out ordered by window end, then key hash,
 * then key bytes, so output order is reproducible.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kvtab.h"
#include "timer.h"
#include "window_int.h"

/* An out-of-line kernel could not allocate (agg.h): fail the job rather than drop a value. */
static void check_nomem(const struct win *w, struct sl_ctx *ctx)
{
	if (__builtin_expect(w->cfg->has_dyn && sl_agg_nomem, 0)) {
		sl_agg_nomem = false;
		sl_win_fail(ctx, -ENOMEM, "out of memory for aggregate values");
	}
}

/* Entries between two measurements while state grows: a measurement is a few loads. */
#define ACCT_EVERY 4096

void sl_win_account(struct win *w, struct sl_ctx *ctx)
{
	uint64_t entries;
	size_t tabs, b;

	w->kind->measure(w, &entries, &tabs);
	b = sizeof(*w) + tabs + w->run_bytes + (size_t)w->cap_bkt * sizeof(struct bucket) +
	    (size_t)w->cap_sort * sizeof(struct fref);
	if (w->timers) /* a timer is about an entry of the set plus its heap slot */
		b += sl_timers_count(w->timers) * 96;
	ctx->m.state_bytes = b;
	w->acct_at = ctx->m.state_entries + ACCT_EVERY;
}

/* After a record: measure again when ACCT_EVERY entries were made since the last time. */
static inline void account_growth(struct win *w, struct sl_ctx *ctx)
{
	if (__builtin_expect(ctx->m.state_entries >= w->acct_at, 0))
		sl_win_account(w, ctx);
}

static int window_open(struct sl_ctx *ctx)
{
	const struct sl_window_cfg *c = ctx->def->cfg;
	/* key groups split state for snapshots; unit tests run without a shard */
	uint32_t max_par = ctx->shard ? sl_shard_max_par(ctx->shard) : 128;
	struct win *w;
	int rc;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cfg = c;
	w->def = ctx->def;
	w->max_par = max_par;
	w->tmp = malloc(c->acc_size ? c->acc_size : 8);
	w->tmp2 = malloc(c->acc_size ? c->acc_size : 8);
	w->save = malloc(c->acc_size ? c->acc_size : 8);
	w->rowbuf = aligned_alloc(8, SL_ROW_SCRATCH);
	if (!w->tmp || !w->tmp2 || !w->save || !w->rowbuf) {
		rc = -ENOMEM;
		goto out_free;
	}
	w->kind = c->spec.kind == SL_WIN_SESSION ? &sl_win_sessions : &sl_win_slices;
	rc = w->kind->open(w, max_par);
	if (rc)
		goto out_free;
	ctx->self = w;
	/* processing time: the shard's clock each loop turn (window_on_proctime) */
	ctx->wants_proctime = c->spec.proctime;
	sl_win_account(w, ctx);
	return 0;

out_free:
	free(w->rowbuf);
	free(w->save);
	free(w->tmp2);
	free(w->tmp);
	free(w);
	return rc;
}

static void window_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	struct win *w = ctx->self;

	if (w->cfg->spec.proctime)
		ts = sl_ctx_proctime(ctx); /* the windows of now, whatever the record's time */
	w->kind->process(ctx, ts, row);
	check_nomem(w, ctx);
	account_growth(w, ctx);
}

static void window_merge_partial(struct sl_ctx *ctx, sl_ts_t ts, const void *acc, uint32_t acc_len,
				 uint32_t nrows)
{
	struct win *w = ctx->self;

	if (w->kind != &sl_win_slices || acc_len != w->cfg->acc_size) {
		sl_win_fail(ctx, -EPROTO, "a partial's accumulators are not this window's");
		return;
	}
	sl_win_slice_merge_partial(ctx, ts, acc, nrows);
	check_nomem(w, ctx);
	account_growth(w, ctx);
}

static void window_prefetch(struct sl_ctx *ctx, uint64_t hash, sl_ts_t ts, int stage)
{
	const struct win *w = ctx->self;

	if (w->kind->prefetch)
		w->kind->prefetch(w, hash, ts, stage);
}

static void fire_until(struct sl_ctx *ctx, sl_ts_t wm);

static void window_on_watermark(struct sl_ctx *ctx, sl_ts_t wm)
{
	const struct win *w = ctx->self;

	/* a processing-time window ignores event time, but for the end of input: what is
	 * still open fires then, so that no row is left behind */
	if (!w->cfg->spec.proctime || wm == SL_TS_MAX)
		fire_until(ctx, wm);
}

/* Processing time moved on to `now`: the windows that ended by it fire, as the watermark
 * now - 1 fires event-time ones. (Not now: a record of this same millisecond may still come
 * for the window whose last millisecond it is.) */
static void window_on_proctime(struct sl_ctx *ctx, sl_ts_t now)
{
	struct win *w = ctx->self;

	if (now > w->proc_fired) {
		w->proc_fired = now;
		fire_until(ctx, now - 1);
	}
}

static void fire_until(struct sl_ctx *ctx, sl_ts_t wm)
{
	struct win *w = ctx->self;
	const uint8_t *key = ctx->key;
	uint32_t klen = ctx->klen;
	uint64_t hash = ctx->hash;

	/* firing points ctx->key at each fired key; give the runtime its own back */
	w->kind->on_watermark(ctx, wm);
	check_nomem(w, ctx);
	sl_win_account(w, ctx); /* firing and cleanup may have freed entries */
	ctx->key = key;
	ctx->klen = klen;
	ctx->hash = hash;
}

static void window_pending(struct sl_ctx *ctx, sl_ts_t *at, uint64_t *n)
{
	const struct win *w = ctx->self;

	w->kind->pending(w, at, n);
}

static void window_close(struct sl_ctx *ctx)
{
	struct win *w = ctx->self;

	if (!w)
		return;
	w->kind->close(w);
	free(w->rowbuf);
	free(w->save);
	free(w->tmp2);
	free(w->tmp);
	free(w);
	ctx->self = NULL;
}

const struct sl_op_ops sl_window_ops = {
	.name = "window",
	.open = window_open,
	.process = window_process,
	.prefetch = window_prefetch,
	.on_watermark = window_on_watermark,
	.on_proctime = window_on_proctime,
	.close = window_close,
	.snapshot = sl_window_snapshot,
	.restore = sl_window_restore,
	.explain = sl_window_explain,
	.pending = window_pending,
	.combiner_of = sl_window_combiner_of,
	.merge_partial = window_merge_partial,
};
