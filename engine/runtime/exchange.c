/*
 * exchange.c - the two ends of a keyed exchange (DESIGN §3).
 *
 * Sender (exchange-out, tail of the upstream stage): hashes the record's key, picks the shard
 * owning its key group and writes the frame in place into ring (me -> that shard).
 * Watermarks, idle markers and end-of-input are broadcast to every ring.
 *
 * When a ring is full the frame goes to a per-target hold queue instead, and the owning stage
 * instance counts it as pending; the shard loop stops feeding that stage until its queues
 * drain, while it keeps running every downstream stage. Since the last stage (sinks) never
 * waits, every stage eventually drains: backpressure without a deadlock of the mesh. A queue
 * only ever holds what one input record (or one watermark's firing) expanded into, and it
 * preserves per-channel order: nothing bypasses a non-empty queue.
 *
 * Two-stage aggregation (op.h, struct sl_combiner_ops): when the keyed operator behind the
 * exchange can be split, the sender first offers each record to that operator's local stage,
 * which combines it into a partial per (key, slice); partials leave as SL_FRAME_PARTIAL
 * frames when the watermark the sender forwards could fire one of their windows, when the
 * table is full, and before a barrier, an idle marker or end of input. A celebrity key then
 * costs its owner one partial per flush from each sender rather than one frame per record.
 * Once the sender has gone idle it sends raw rows only: its owner leaves an idle channel out
 * of its watermark, so the owner may have fired windows the sender still holds open.
 *
 * Receiver (keyed exchange head): encodes the key once and sets it as the current key of the
 * keyed operators it feeds; a partial carries its key's bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "runtime.h"

/* A FIFO of whole frames, grown on demand (only while the ring is full: the slow path). */
struct hold_queue {
	uint8_t *buf;
	size_t head;
	size_t tail;
	size_t cap;
};

struct exchange_out {
	struct sl_stage_inst *owner;
	int n;
	uint32_t max_par;
	struct sl_ring **out;	 /* [to shard] */
	struct hold_queue *held; /* [to shard] */
	uint8_t key[SL_KEY_MAX];
	/* two-stage aggregation: the feeding operator's local stage, NULL for raw rows */
	const struct sl_combiner_ops *comb;
	void *local;
	struct sl_ctx *ctx; /* for the flush's emit callback */
	sl_ts_t wm;	    /* the last watermark forwarded */
	sl_ts_t flush_at;   /* timed: flush before forwarding a watermark >= this */
	sl_ts_t delay;	    /* untimed: flush partials held this long (ms), 0: never */
	sl_ts_t held_since; /* untimed: shard time of the first partial held */
	/* adaptive bypass (see flush_local): rows combined and partials sent since the last
	 * flush, rows still to send raw, and the next bypass's length */
	uint64_t rows_held, partials_sent;
	uint64_t bypass_left, bypass_len;
	struct sl_partial *part; /* a partial frame's payload, built for send_frame */
	struct sl_hot_keys *hot; /* this sender's heavy hitters (the shard's, hot_keys.h) */
};

static int hold(struct exchange_out *x, int to, const struct sl_frame *hdr, const void *payload,
		uint32_t len)
{
	struct hold_queue *q = &x->held[to];
	size_t size = hdr->size;

	if (q->tail + size > q->cap) {
		size_t live = q->tail - q->head;

		if (q->head && live + size <= q->cap) {
			memmove(q->buf, q->buf + q->head, live);
		} else {
			size_t cap = q->cap ? q->cap * 2 : 65536;
			uint8_t *nb;

			while (cap < live + size)
				cap *= 2;
			nb = malloc(cap);
			if (!nb)
				return -ENOMEM;
			if (live)
				memcpy(nb, q->buf + q->head, live);
			free(q->buf);
			q->buf = nb;
			q->cap = cap;
		}
		q->head = 0;
		q->tail = live;
	}
	memcpy(q->buf + q->tail, hdr, sizeof(*hdr));
	if (len)
		memcpy(q->buf + q->tail + sizeof(*hdr), payload, len);
	q->tail += size;
	x->owner->pending++;
	return 0;
}

/* Writes a frame of `len` payload bytes (a row, a partial, nothing) to ring `to`, or holds
 * it. Hot path when the ring has room. */
static inline void send_frame(struct sl_ctx *ctx, struct exchange_out *x, int to, uint8_t type,
			      uint64_t hash, sl_ts_t ts, const void *payload, uint32_t len)
{
	uint32_t size = (uint32_t)sizeof(struct sl_frame) + SL_FRAME_ALIGN(len);
	struct sl_frame *f;

	if (x->held[to].tail == x->held[to].head) {
		f = sl_ring_reserve_spsc(x->out[to], size);
		if (f) {
			sl_frame_init(f, size, type, 0);
			f->hash = hash;
			f->ts = ts;
			if (len)
				memcpy(f->payload, payload, len);
			sl_ring_commit_spsc(x->out[to], f);
			return;
		}
		if (size > x->out[to]->max_frame) {
			sl_shard_fail(ctx->shard, -E2BIG,
				      "exchange after '%s': a %u-byte frame exceeds the ring's "
				      "largest frame (%u bytes); raise the ring size",
				      ctx->def->name, size, x->out[to]->max_frame);
			return;
		}
	}
	struct sl_frame hdr = { .size = size, .type = type, .hash = hash, .ts = ts };

	if (hold(x, to, &hdr, payload, len) < 0)
		sl_shard_fail(ctx->shard, -ENOMEM,
			      "exchange after '%s': out of memory holding "
			      "frames for a full ring",
			      ctx->def->name);
}

static inline uint32_t owner_of(const struct exchange_out *x, uint64_t hash)
{
	return sl_key_group_shard(sl_key_group(hash, x->max_par), x->max_par, (uint32_t)x->n);
}

/* sl_partial_emit_fn: one partial of the local stage to its key's owner. */
static void send_partial(void *arg, uint64_t hash, const uint8_t *key, uint32_t klen, sl_ts_t ts,
			 const void *acc, uint32_t acc_len, uint32_t nrows)
{
	struct exchange_out *x = arg;
	struct sl_partial *p = x->part;
	uint32_t koff = SL_FRAME_ALIGN(klen);

	x->ctx->m.partials++;
	x->partials_sent++;
	p->klen = klen;
	p->acc_len = acc_len;
	p->nrows = nrows;
	p->rsv = 0;
	memcpy(p->key, key, klen);
	memset(p->key + klen, 0, koff - klen);
	memcpy(p->key + koff, acc, acc_len);
	send_frame(x->ctx, x, (int)owner_of(x, hash), SL_FRAME_PARTIAL, hash, ts, p,
		   (uint32_t)sizeof(*p) + koff + acc_len);
}

/*
 * When keys hardly repeat within a flush (1M uniform keys against a 4096-partial table),
 * the local stage only adds a probe per row and a larger frame per key, so a flush of many
 * rows that produced almost one partial per row turns it off for the next BYPASS_MIN rows
 * (doubling while it keeps failing, up to BYPASS_MAX), then it is tried again. Raw rows
 * are always exact, so this changes costs only, never results.
 */
#define BYPASS_TRY   1024	/* rows a flush needs before it says anything */
#define BYPASS_MIN   65536	/* rows sent raw after a poor flush */
#define BYPASS_MAX   (1u << 24) /* the longest bypass */
#define BYPASS_RATIO 1.25	/* rows per partial below which a flush is poor */

/* Sends every partial the local stage holds, ahead of what the sender forwards next. */
static void flush_local(struct sl_ctx *ctx, struct exchange_out *x)
{
	if (!x->local)
		return;
	x->ctx = ctx;
	x->partials_sent = 0;
	x->comb->flush(x->local, send_partial, x);
	x->flush_at = SL_TS_MAX;
	x->held_since = SL_TS_MAX;
	if (x->rows_held >= BYPASS_TRY) {
		if ((double)x->rows_held < BYPASS_RATIO * (double)x->partials_sent) {
			x->bypass_len = x->bypass_len ? x->bypass_len * 2 : BYPASS_MIN;
			if (x->bypass_len > BYPASS_MAX)
				x->bypass_len = BYPASS_MAX;
			x->bypass_left = x->bypass_len;
		} else {
			x->bypass_len = 0;
		}
	}
	x->rows_held = 0;
}

int sl_exchange_drain(struct sl_ctx *ctx)
{
	struct exchange_out *x = ctx->self;
	int moved = 0;

	for (int to = 0; to < x->n; to++) {
		struct hold_queue *q = &x->held[to];

		while (q->head < q->tail) {
			const struct sl_frame *h = (const struct sl_frame *)(q->buf + q->head);
			struct sl_frame *f = sl_ring_reserve_spsc(x->out[to], h->size);

			if (!f)
				break;
			memcpy(f, h, h->size);
			sl_ring_commit_spsc(x->out[to], f);
			q->head += h->size;
			x->owner->pending--;
			moved++;
		}
		if (q->head == q->tail)
			q->head = q->tail = 0;
	}
	return moved;
}

int sl_exchange_open(struct sl_ctx *ctx, struct sl_stage_inst *owner, int to_stage, int lane)
{
	struct sl_runtime *rt = owner->sh->rt;
	struct exchange_out *x = calloc(1, sizeof(*x));

	if (!x)
		return -ENOMEM;
	x->owner = owner;
	x->n = rt->nshards;
	x->max_par = rt->max_par;
	x->out = calloc((size_t)x->n, sizeof(*x->out));
	x->held = calloc((size_t)x->n, sizeof(*x->held));
	if (!x->out || !x->held) {
		free(x->out);
		free(x->held);
		free(x);
		return -ENOMEM;
	}
	for (int to = 0; to < x->n; to++)
		x->out[to] = sl_rt_ring_lane(rt, to_stage, lane, owner->sh->index, to);
	x->wm = SL_TS_MIN;
	x->flush_at = SL_TS_MAX;
	x->held_since = SL_TS_MAX;
	x->hot = &owner->sh->hot[ctx->def->id];
	/* one shard owns every key already: a local stage would only add a copy */
	if (ctx->def->combine && x->n > 1) {
		x->comb = ctx->def->combine;
		x->local = x->comb->create(ctx->def->combine_cfg);
		x->part = malloc(sizeof(*x->part) + SL_KEY_MAX + SL_ROW_SCRATCH);
		if (!x->local || !x->part) {
			if (x->local)
				x->comb->destroy(x->local);
			free(x->part);
			free(x->out);
			free(x->held);
			free(x);
			return -ENOMEM;
		}
		if (!x->comb->timed && x->comb->max_delay) {
			x->delay = x->comb->max_delay(ctx->def->combine_cfg);
			ctx->wants_proctime = x->delay > 0; /* wire.c lists it for on_proctime */
		}
	}
	ctx->self = x;
	return 0;
}

/* Offers the record to the local stage; true when it was combined there. */
static bool combine(struct sl_ctx *ctx, struct exchange_out *x, uint64_t hash, uint32_t klen,
		    sl_ts_t ts, const struct sl_row *row)
{
	int rc = x->comb->add(x->local, hash, x->key, klen, ts, row, x->wm);

	if (rc == -ENOSPC) {
		flush_local(ctx, x);
		rc = x->comb->add(x->local, hash, x->key, klen, ts, row, x->wm);
	}
	if (rc < 0) {
		sl_shard_fail(ctx->shard, rc, "exchange after '%s': %s in the local aggregation",
			      ctx->def->name, rc == -ENOMEM ? "out of memory" : "no room");
		return true; /* the job stops with the error; the row is not sent twice */
	}
	if (rc > 0) {
		ctx->m.combined++;
		x->rows_held++;
		if (x->comb->timed) {
			sl_ts_t at = x->comb->next_flush(x->local);

			if (at < x->flush_at)
				x->flush_at = at;
		} else if (x->held_since == SL_TS_MAX) {
			x->held_since = sl_shard_now(ctx->shard);
		}
	}
	return rc > 0;
}

static void xout_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	struct exchange_out *x = ctx->self;
	const struct sl_op_def *d = ctx->def;
	uint32_t klen = sl_key_encode(row, d->key_fields, d->key_types, d->nkey, x->key);
	uint64_t hash = sl_hash_bytes(x->key, klen);

	ctx->m.out++;
	sl_hot_keys_offer(x->hot, hash, x->key, klen);
	if (x->local) {
		if (x->bypass_left)
			x->bypass_left--;
		else if (combine(ctx, x, hash, klen, ts, row))
			return;
	}
	send_frame(ctx, x, (int)owner_of(x, hash), SL_FRAME_RECORD, hash, ts, row, row->size);
}

static void xout_forward_wm(struct sl_ctx *ctx, sl_ts_t wm)
{
	struct exchange_out *x = ctx->self;

	if (wm >= x->flush_at)
		flush_local(ctx, x);
	x->wm = wm;
	for (int to = 0; to < x->n; to++)
		send_frame(ctx, x, to, SL_FRAME_WATERMARK, 0, wm, NULL, 0);
}

static void xout_forward_idle(struct sl_ctx *ctx, bool idle)
{
	struct exchange_out *x = ctx->self;

	flush_local(ctx, x);
	if (idle && x->local && x->comb->timed) {
		/* raw from now on: see the header */
		x->comb->destroy(x->local);
		x->local = NULL;
	}
	for (int to = 0; to < x->n; to++)
		send_frame(ctx, x, to, SL_FRAME_IDLE, 0, idle ? 1 : 0, NULL, 0);
}

static void xout_forward_end(struct sl_ctx *ctx)
{
	struct exchange_out *x = ctx->self;

	flush_local(ctx, x);
	for (int to = 0; to < x->n; to++)
		send_frame(ctx, x, to, SL_FRAME_END, 0, 0, NULL, 0);
}

/* The barrier goes to every ring in order with the records before it (through the hold
 * queue when a ring is full), so each receiver sees the same cut. The local stage is
 * flushed first: a checkpoint never has partials in flight. */
static void xout_forward_barrier(struct sl_ctx *ctx, uint64_t ckpt)
{
	struct exchange_out *x = ctx->self;

	flush_local(ctx, x);
	for (int to = 0; to < x->n; to++)
		send_frame(ctx, x, to, SL_FRAME_BARRIER, 0, (sl_ts_t)ckpt, NULL, 0);
}

/* Untimed local stages: partials wait at most x->delay of processing time. */
static void xout_on_proctime(struct sl_ctx *ctx, sl_ts_t now)
{
	struct exchange_out *x = ctx->self;

	if (x->held_since != SL_TS_MAX && now - x->held_since >= x->delay)
		flush_local(ctx, x);
}

static void xout_close(struct sl_ctx *ctx)
{
	struct exchange_out *x = ctx->self;

	if (!x)
		return;
	if (x->local)
		x->comb->destroy(x->local);
	free(x->part);
	for (int to = 0; to < x->n; to++)
		free(x->held[to].buf);
	free(x->held);
	free(x->out);
	free(x);
	ctx->self = NULL;
}

/* open is done by the wiring (it needs the owning stage instance): sl_exchange_open(). */
const struct sl_op_ops sl_exchange_out_ops = {
	.name = "exchange",
	.process = xout_process,
	.on_proctime = xout_on_proctime,
	.close = xout_close,
	.forward_wm = xout_forward_wm,
	.forward_idle = xout_forward_idle,
	.forward_end = xout_forward_end,
	.forward_barrier = xout_forward_barrier,
};

/* ---- receiver ------------------------------------------------------------------------- */

static int kin_open(struct sl_ctx *ctx)
{
	ctx->self = malloc(SL_KEY_MAX);
	return ctx->self ? 0 : -ENOMEM;
}

/* ctx->hash was set from the frame by the stage input; the key bytes are encoded here once
 * for all keyed targets. */
static void kin_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	const struct sl_op_def *d = ctx->def;
	uint8_t *key = ctx->self;
	uint32_t klen = sl_key_encode(row, d->key_fields, d->key_types, d->nkey, key);
	struct sl_port *p = &ctx->port[0];

	ctx->m.out++;
	for (int i = 0; i < p->n; i++) {
		struct sl_ctx *to = p->to[i];

		to->key = key;
		to->klen = klen;
		to->hash = ctx->hash;
		to->m.in++;
		to->def->ops->process(to, ts, row);
	}
}

/* A partial from a sender's local stage; the stage input set ctx->key from its frame. */
static void kin_partial(struct sl_ctx *ctx, sl_ts_t ts, const void *acc, uint32_t acc_len,
			uint32_t nrows)
{
	struct sl_port *p = &ctx->port[0];

	ctx->m.out += nrows;
	for (int i = 0; i < p->n; i++) {
		struct sl_ctx *to = p->to[i];

		to->key = ctx->key;
		to->klen = ctx->klen;
		to->hash = ctx->hash;
		to->m.in += nrows;
		to->def->ops->merge_partial(to, ts, acc, acc_len, nrows);
	}
}

static void kin_prefetch(struct sl_ctx *ctx, uint64_t hash, sl_ts_t ts, int stage)
{
	struct sl_port *p = &ctx->port[0];

	for (int i = 0; i < p->n; i++)
		if (p->to[i]->def->ops->prefetch)
			p->to[i]->def->ops->prefetch(p->to[i], hash, ts, stage);
}

static void kin_close(struct sl_ctx *ctx)
{
	free(ctx->self);
	ctx->self = NULL;
}

const struct sl_op_ops sl_keyby_in_ops = {
	.name = "keyed-exchange",
	.open = kin_open,
	.process = kin_process,
	.close = kin_close,
	.prefetch = kin_prefetch,
	.merge_partial = kin_partial,
};
