/*
 * rows.c - what both window kinds (slice.c, session.c) share: a window's accumulator block
 * (its aggregates one after another, agg.h), the output row built from it, the rows emitted
 * (+I on firing, -U/+U on a late update within allowed lateness, -D for an absorbed
 * session), late records sent to the late side output, and the job's failure.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
