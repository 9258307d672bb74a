/*
 * ctx_state.c - operator.h's state and timer calls on the current key of an operator
 * instance: the runtime's side of keyed state (state/state.h) and timers (time/timer.h),
 * which themselves know nothing of operator contexts.
 */
#include "op.h"
#include "state.h"
#include "timer.h"

static inline struct sl_kkey cur(const struct sl_ctx *ctx)
{
	return (struct sl_kkey){ ctx->hash, ctx->key, ctx->klen };
}

/* Processing time only for descriptors with a TTL: a plain lookup reads no clock. */
static inline sl_ts_t now_for(const struct sl_ctx *ctx, int id)
{
	return sl_kstate_desc_ttl(ctx->kstate, id) ? sl_ctx_proctime(ctx) : 0;
}

void *sl_value_get(struct sl_ctx *ctx, int id)
{
	struct sl_kkey k = cur(ctx);

	return sl_kstate_value_get(ctx->kstate, id, &k, now_for(ctx, id));
}

void *sl_value_put(struct sl_ctx *ctx, int id)
{
	struct sl_kkey k = cur(ctx);

	return sl_kstate_value_put(ctx->kstate, id, &k, now_for(ctx, id));
}

void sl_value_clear(struct sl_ctx *ctx, int id)
{
	struct sl_kkey k = cur(ctx);

	sl_kstate_value_clear(ctx->kstate, id, &k);
}

void *sl_map_get(struct sl_ctx *ctx, int id, const void *mkey, uint32_t mklen)
{
	struct sl_kkey k = cur(ctx);

	return sl_kstate_map_get(ctx->kstate, id, &k, mkey, mklen, now_for(ctx, id));
}

void *sl_map_put(struct sl_ctx *ctx, int id, const void *mkey, uint32_t mklen)
{
	struct sl_kkey k = cur(ctx);

	return sl_kstate_map_put(ctx->kstate, id, &k, mkey, mklen, now_for(ctx, id));
}

void sl_map_remove(struct sl_ctx *ctx, int id, const void *mkey, uint32_t mklen)
{
	struct sl_kkey k = cur(ctx);

	sl_kstate_map_remove(ctx->kstate, id, &k, mkey, mklen);
}

void sl_map_foreach(struct sl_ctx *ctx, int id,
		    bool (*fn)(const void *mkey, uint32_t mklen, void *value, void *arg), void *arg)
{
	struct sl_kkey k = cur(ctx);

	sl_kstate_map_foreach(ctx->kstate, id, &k, fn, arg, now_for(ctx, id));
}

void sl_map_clear(struct sl_ctx *ctx, int id)
{
	struct sl_kkey k = cur(ctx);

	sl_kstate_map_clear(ctx->kstate, id, &k);
}

/* ---- operator.h: timers of the current key ----------------------------------------------- */

int sl_timer_event(struct sl_ctx *ctx, sl_ts_t at)
{
	if (!ctx->event_timers)
		return -EINVAL;
	return sl_timers_add(ctx->event_timers, at, ctx->hash, ctx->key, ctx->klen, 0);
}

int sl_timer_proc(struct sl_ctx *ctx, sl_ts_t at)
{
	if (!ctx->proc_timers)
		return -EINVAL;
	return sl_timers_add(ctx->proc_timers, at, ctx->hash, ctx->key, ctx->klen, 0);
}

void sl_timer_event_delete(struct sl_ctx *ctx, sl_ts_t at)
{
	if (ctx->event_timers)
		sl_timers_delete(ctx->event_timers, at, ctx->hash, ctx->key, ctx->klen, 0);
}

void sl_timer_proc_delete(struct sl_ctx *ctx, sl_ts_t at)
{
	if (ctx->proc_timers)
		sl_timers_delete(ctx->proc_timers, at, ctx->hash, ctx->key, ctx->klen, 0);
}
