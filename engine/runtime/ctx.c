/*
 * ctx.c - emission along operator chains and the operator context's accessors.
 *
 * Emitting is a direct call of each target's process hook: a forward edge costs a function
 * call (DESIGN §3). Watermarks, idleness and end-of-input travel the same edges after the
 * operator's own hook has run, so anything an operator emits on a watermark precedes it.
 */
#include <string.h>

#include "op.h"
#include "source.h"

static inline void emit_port(struct sl_ctx *ctx, int p, sl_ts_t ts, const struct sl_row *row)
{
	struct sl_port *port = &ctx->port[p];

	for (int i = 0; i < port->n; i++) {
		struct sl_ctx *to = port->to[i];

		to->m.in++;
		to->def->ops->process(to, ts, row);
	}
}

void sl_emit(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	ctx->m.out++;
	emit_port(ctx, 0, ts, row);
}

void sl_emit_side(struct sl_ctx *ctx, int tag, sl_ts_t ts, const struct sl_row *row)
{
	for (int p = 1; p < ctx->nports; p++) {
		if (ctx->port_tag[p] == tag) {
			emit_port(ctx, p, ts, row);
			return;
		}
	}
}

struct sl_row_builder *sl_ctx_out(struct sl_ctx *ctx)
{
	int n = ctx->def->out_schema ? sl_schema_nfields(ctx->def->out_schema) : 0;

	sl_rowb_init(&ctx->out, ctx->out_buf, SL_ROW_SCRATCH, n);
	return &ctx->out;
}

sl_ts_t sl_ctx_watermark(const struct sl_ctx *ctx)
{
	return ctx->watermark;
}

sl_ts_t sl_ctx_proctime(const struct sl_ctx *ctx)
{
	return sl_shard_now(ctx->shard);
}

int sl_ctx_shard(const struct sl_ctx *ctx)
{
	return sl_shard_index(ctx->shard);
}

int sl_ctx_nshards(const struct sl_ctx *ctx)
{
	return sl_shard_count(ctx->shard);
}

void sl_ctx_count_late(struct sl_ctx *ctx)
{
	ctx->m.late++;
}

const void *sl_ctx_key(const struct sl_ctx *ctx, uint32_t *len)
{
	*len = ctx->klen;
	return ctx->key;
}

void sl_ctx_key_copy(const struct sl_ctx *ctx, int i, struct sl_row_builder *out, int field)
{
	const struct sl_op_def *d = ctx->def;

	sl_key_decode_field(ctx->key, ctx->klen, i, sl_schema_type(d->in_schema, d->key_fields[i]),
			    out, field);
}

void sl_op_watermark(struct sl_ctx *ctx, sl_ts_t wm)
{
	if (wm <= ctx->watermark)
		return; /* watermarks only move forward */
	ctx->watermark = wm;
	ctx->idle = false;
	if (ctx->def->ops->on_watermark)
		ctx->def->ops->on_watermark(ctx, wm);
	if (ctx->def->ops->forward_wm) {
		ctx->def->ops->forward_wm(ctx, wm);
		return;
	}
	for (int p = 0; p < ctx->nports; p++)
		for (int i = 0; i < ctx->port[p].n; i++)
			sl_op_watermark(ctx->port[p].to[i], wm);
}

void sl_op_idle(struct sl_ctx *ctx, bool idle)
{
	if (ctx->idle == idle)
		return;
	ctx->idle = idle;
	if (ctx->def->ops->forward_idle) {
		ctx->def->ops->forward_idle(ctx, idle);
		return;
	}
	for (int p = 0; p < ctx->nports; p++)
		for (int i = 0; i < ctx->port[p].n; i++)
			sl_op_idle(ctx->port[p].to[i], idle);
}

void sl_op_end(struct sl_ctx *ctx)
{
	if (ctx->def->ops->on_end)
		ctx->def->ops->on_end(ctx);
	if (ctx->def->ops->forward_end) {
		ctx->def->ops->forward_end(ctx);
		return;
	}
	for (int p = 0; p < ctx->nports; p++)
		for (int i = 0; i < ctx->port[p].n; i++)
			sl_op_end(ctx->port[p].to[i]);
}

void sl_op_snapshot(struct sl_ctx *ctx, uint64_t ckpt)
{
	int rc;

	if (!ctx->def || !ctx->def->ops->snapshot)
		return;
	/* an unfinished one borrows snap: it completes first (the runtime waits for it before
	 * it acknowledges a checkpoint, so this only guards) */
	sl_op_snapshot_step(ctx, SIZE_MAX);
	sl_snap_reset(&ctx->snap);
	rc = ctx->def->ops->snapshot(ctx, ckpt, &ctx->snap);
	ctx->snap_pending = rc == 1 && ctx->def->ops->snapshot_step;
	ctx->snap_rc = rc == 1 ? 0 : rc;
	if (!ctx->snap_rc && ctx->snap.error)
		ctx->snap_rc = ctx->snap.error;
	ctx->snap_ckpt = ckpt;
	ctx->m.ckpt_bytes = ctx->snap.len;
}

bool sl_op_snapshot_step(struct sl_ctx *ctx, size_t budget)
{
	int rc;

	if (!ctx->snap_pending)
		return false;
	rc = ctx->def->ops->snapshot_step(ctx, budget);
	if (rc == 1)
		return true;
	ctx->snap_pending = false;
	ctx->snap_rc = rc < 0 ? rc : ctx->snap.error;
	ctx->m.ckpt_bytes = ctx->snap.len;
	return false;
}

void sl_op_snapshot_chain(struct sl_ctx *ctx, uint64_t ckpt)
{
	sl_op_snapshot(ctx, ckpt);
	if (ctx->def->ops->forward_barrier)
		return; /* an exchange-out: what follows is another stage */
	for (int p = 0; p < ctx->nports; p++)
		for (int i = 0; i < ctx->port[p].n; i++)
			sl_op_snapshot_chain(ctx->port[p].to[i], ckpt);
}

void sl_op_barrier(struct sl_ctx *ctx, uint64_t ckpt)
{
	sl_op_snapshot(ctx, ckpt);
	if (ctx->def->ops->forward_barrier) {
		ctx->def->ops->forward_barrier(ctx, ckpt);
		return;
	}
	for (int p = 0; p < ctx->nports; p++)
		for (int i = 0; i < ctx->port[p].n; i++)
			sl_op_barrier(ctx->port[p].to[i], ckpt);
}

int sl_src_emit(struct sl_src_ctx *c, const struct sl_row *row)
{
	return c->emit(c, row);
}

void sl_src_dead_letter(struct sl_src_ctx *c, const char *where, const char *why, const char *raw,
			size_t rawlen)
{
	c->dead_letter(c, where, why, raw, rawlen);
}

void sl_src_count_overflow(struct sl_src_ctx *c, uint64_t n)
{
	if (c->overflows)
		*c->overflows += n;
}

void sl_ctx_count_overflow(struct sl_ctx *ctx, uint64_t n)
{
	ctx->m.overflow += n;
}

void *sl_src_scratch(struct sl_src_ctx *c)
{
	return c->scratch;
}
