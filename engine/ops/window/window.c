/*
 * window.c - the keyed event-time window operator: hooks, output rows, late records.
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
#include "window_int.h"

void sl_win_acc_init(const struct win *w, void *acc)
{
	const struct sl_window_cfg *c = w->cfg;

	memset(acc, 0, c->acc_size);
	if (!c->has_init)
		return;
	for (int i = 0; i < c->naggs; i++)
		if (c->agg[i].k->init)
			c->agg[i].k->init(&c->agg[i], (uint8_t *)acc + c->agg[i].off);
}

/* Hot path: one indirect call per aggregate. */
void sl_win_acc_add(const struct win *w, void *acc, const struct sl_row *row)
{
	const struct sl_window_cfg *c = w->cfg;

	for (int i = 0; i < c->naggs; i++)
		c->agg[i].k->add(&c->agg[i], (uint8_t *)acc + c->agg[i].off, row);
}

void sl_win_acc_copy(const struct win *w, void *dst, const void *src)
{
	const struct sl_window_cfg *c = w->cfg;

	if (!c->has_dyn) {
		memcpy(dst, src, c->acc_size);
		return;
	}
	for (int i = 0; i < c->naggs; i++)
		sl_agg_copy(&c->agg[i], (uint8_t *)dst + c->agg[i].off,
			    (const uint8_t *)src + c->agg[i].off);
}

void sl_win_acc_destroy(const struct win *w, void *acc)
{
	const struct sl_window_cfg *c = w->cfg;

	if (!c->has_dyn)
		return;
	for (int i = 0; i < c->naggs; i++)
		if (c->agg[i].k->destroy)
			c->agg[i].k->destroy(&c->agg[i], (uint8_t *)acc + c->agg[i].off);
}

/* An out-of-line kernel could not allocate (agg.h): fail the job rather than drop a value. */
static void check_nomem(const struct win *w, struct sl_ctx *ctx)
{
	if (__builtin_expect(w->cfg->has_dyn && sl_agg_nomem, 0)) {
		sl_agg_nomem = false;
		sl_win_fail(ctx, -ENOMEM, "out of memory for aggregate values");
	}
}

void sl_win_acc_merge(const struct win *w, void *acc, const void *other)
{
	const struct sl_window_cfg *c = w->cfg;

	for (int i = 0; i < c->naggs; i++)
		c->agg[i].k->merge(&c->agg[i], (uint8_t *)acc + c->agg[i].off,
				   (const uint8_t *)other + c->agg[i].off);
}

const struct sl_row *sl_win_row_build(struct win *w, struct sl_ctx *ctx, void *buf, sl_ts_t start,
				   sl_ts_t end, const void *acc, enum sl_row_kind kind)
{
	const struct sl_window_cfg *c = w->cfg;
	struct sl_row_builder lb, *b = &lb;
	int f = c->nkey;

	if (buf)
		sl_rowb_init(b, buf, SL_ROW_SCRATCH, c->nout);
	else
		b = sl_ctx_out(ctx);
	for (int i = 0; i < c->nkey; i++)
		sl_ctx_key_copy(ctx, i, b, i);
	sl_rowb_set_i64(b, f++, start);
	sl_rowb_set_i64(b, f++, end);
	for (int i = 0; i < c->naggs; i++, f++)
		c->agg[i].k->result(&c->agg[i], (const uint8_t *)acc + c->agg[i].off, b, f);
	sl_rowb_set_kind(b, kind);
	return sl_rowb_finish(b);
}

static void emit_row(struct sl_ctx *ctx, sl_ts_t end, const struct sl_row *row)
{
	if (!row) {
		sl_win_fail(ctx, -ENOSPC, "output row larger than the row scratch buffer");
		return;
	}
	sl_emit(ctx, end - 1, row);
}

void sl_win_emit(struct win *w, struct sl_ctx *ctx, sl_ts_t start, sl_ts_t end, const void *acc,
	      enum sl_row_kind kind)
{
	emit_row(ctx, end, sl_win_row_build(w, ctx, NULL, start, end, acc, kind));
}

static bool same_values(const struct sl_row *a, const struct sl_row *b)
{
	return a->size == b->size && a->nulls == b->nulls &&
	       memcmp(a->slot, b->slot, a->size - SL_ROW_HDR) == 0;
}

void sl_win_emit_update(struct win *w, struct sl_ctx *ctx, sl_ts_t start, sl_ts_t end,
		     const void *old_acc, const void *new_acc)
{
	const struct sl_row *old, *new;

	old = sl_win_row_build(w, ctx, w->rowbuf, start, end, old_acc, SL_ROW_UPDATE_BEFORE);
	new = sl_win_row_build(w, ctx, NULL, start, end, new_acc, SL_ROW_UPDATE_AFTER);
	if (!old || !new) {
		emit_row(ctx, end, NULL);
		return;
	}
	/* Flink's window operator sends no retraction when the result did not change. */
	if (same_values(old, new))
		return;
	sl_emit(ctx, end - 1, old);
	sl_emit(ctx, end - 1, new);
}

void sl_win_late(struct win *w, struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	sl_ctx_count_late(ctx);
	if (w->cfg->spec.late_tag)
		sl_emit_side(ctx, w->cfg->spec.late_tag, ts, row);
}

void sl_win_fail(struct sl_ctx *ctx, int code, const char *what)
{
	/* Unit tests drive instances without a shard; the job path always has one. */
	if (ctx->shard)
		sl_shard_fail(ctx->shard, code, "window '%s': %s", ctx->def->name, what);
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
	const struct win *w = ctx->self;

	w->kind->process(ctx, ts, row);
	check_nomem(w, ctx);
}

static void window_prefetch(struct sl_ctx *ctx, uint64_t hash, sl_ts_t ts, int stage)
{
	const struct win *w = ctx->self;

	if (w->kind->prefetch)
		w->kind->prefetch(w, hash, ts, stage);
}

static void window_on_watermark(struct sl_ctx *ctx, sl_ts_t wm)
{
	const struct win *w = ctx->self;
	const uint8_t *key = ctx->key;
	uint32_t klen = ctx->klen;
	uint64_t hash = ctx->hash;

	/* firing points ctx->key at each fired key; give the runtime its own back */
	w->kind->on_watermark(ctx, wm);
	check_nomem(w, ctx);
	ctx->key = key;
	ctx->klen = klen;
	ctx->hash = hash;
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
	.close = window_close,
	.snapshot = sl_window_snapshot,
	.restore = sl_window_restore,
	.explain = sl_window_explain,
};
