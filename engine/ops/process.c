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
#include <stdlib.h>
#include <string.h>

#include "process.h"
#include "state/kvtab.h"
#include "state/state.h"
#include "time/timer.h"

struct proc {
	const struct sl_process_fn *fn;
	bool own_out;                  /* ctx->out_buf was allocated here */
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
	if (!ctx->out_buf) {
		/* the operator's own output scratch for sl_ctx_out(), as every operator's */
		ctx->out_buf = aligned_alloc(8, SL_ROW_SCRATCH);
		if (!ctx->out_buf)
			goto out_release;
		p->own_out = true;
	}
	ctx->kstate = sl_kstate_create(fn->states, fn->nstates, max_par, &rc);
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

const struct sl_op_ops sl_process_ops = {
	.name = "process",
	.open = process_open,
	.process = process_process,
	.on_watermark = process_on_watermark,
	.on_proctime = process_on_proctime,
	.close = process_close,
};
