/*
 * local.c - the local stage of a two-stage window aggregation (runtime/op.h, struct
 * sl_combiner_ops; DESIGN §5): what a sending shard runs before its exchange, so that the
 * rows of a key and slice cross the exchange as one partial accumulator block instead of
 * one frame each. Flink's local-global window aggregation (LocalSlicingWindowAggOperator),
 * without its mini-batch buffer: rows are combined as they come.
 *
 * The table is open addressing over (key hash, slice end) with at most `cap` partials; keys
 * live in one arena, accumulators in one array, so a flush walks them in insertion order
 * and a reset touches only the slots it used. A row is combined only while no window of
 * its slice can fire at the sender's watermark; otherwise it goes raw and the owner treats
 * it as the late or re-firing row it is.
 *
 * Cost: one probe and the aggregates' add per row on the sender, where the one-stage plan
 * pays a ring frame per row and the owner's lookup; a flush costs one frame per partial.
 * Memory: cap x (32 + acc_size) bytes, a 2 x cap slot array and the keys' bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "window_int.h"

struct partial {
	uint64_t hash;
	sl_ts_t s_end;
	uint32_t koff; /* key bytes in keys[] */
	uint32_t klen;
	uint32_t nrows;
	uint32_t slot; /* its index in slot[], to clear on reset */
};

struct local {
	const struct sl_window_cfg *c;
	uint32_t cap;	/* partials held at most */
	uint32_t n;	/* partials held */
	uint32_t mask;	/* slot[] has mask + 1 entries, a power of two >= 2 x cap */
	uint32_t *slot; /* 0 empty, else 1 + index into part[] */
	struct partial *part;
	uint8_t *acc; /* cap blocks of c->acc_size bytes */
	uint8_t *keys;
	size_t kused, kcap;
	sl_ts_t next_flush; /* the smallest first-window end - 1 of the partials held */
};

static uint32_t slot_of(const struct local *l, uint64_t hash, sl_ts_t s_end)
{
	uint64_t h = hash ^ ((uint64_t)s_end * 0x9E3779B97F4A7C15ull);

	return (uint32_t)(h ^ (h >> 29)) & l->mask;
}

static inline void *acc_of(const struct local *l, uint32_t i)
{
	return l->acc + (size_t)i * l->c->acc_size;
}

static bool window_accepts(const void *op_cfg)
{
	const struct sl_window_cfg *c = op_cfg;

	return c->two_phase;
}

static void *local_create(const void *op_cfg, uint32_t cap)
{
	const struct sl_window_cfg *c = op_cfg;
	struct local *l = calloc(1, sizeof(*l));
	uint32_t nslot = 2;

	if (!l)
		return NULL;
	while (nslot < 2 * cap)
		nslot *= 2;
	l->c = c;
	l->cap = cap;
	l->mask = nslot - 1;
	l->next_flush = SL_TS_MAX;
	l->slot = calloc(nslot, sizeof(*l->slot));
	l->part = calloc(cap, sizeof(*l->part));
	l->acc = calloc(cap, c->acc_size ? c->acc_size : 1);
	l->kcap = (size_t)cap * 16;
	l->keys = malloc(l->kcap);
	if (!l->slot || !l->part || !l->acc || !l->keys) {
		free(l->slot);
		free(l->part);
		free(l->acc);
		free(l->keys);
		free(l);
		return NULL;
	}
	return l;
}

static void local_destroy(void *lp)
{
	struct local *l = lp;

	if (!l)
		return;
	free(l->slot);
	free(l->part);
	free(l->acc);
	free(l->keys);
	free(l);
}

/* A new partial for (key, s_end) at slot `at`, its accumulators empty. Returns its index,
 * -ENOSPC (table full) or -ENOMEM (the key arena could not grow). */
static int insert(struct local *l, uint32_t at, uint64_t hash, const uint8_t *key, uint32_t klen,
		  sl_ts_t s_end)
{
	const struct sl_window_cfg *c = l->c;
	struct partial *p;
	uint32_t i;
	uint8_t *acc;

	if (l->n == l->cap)
		return -ENOSPC;
	if (l->kused + klen > l->kcap) {
		size_t cap = l->kcap * 2;
		uint8_t *nk;

		while (cap < l->kused + klen)
			cap *= 2;
		nk = realloc(l->keys, cap);
		if (!nk)
			return -ENOMEM;
		l->keys = nk;
		l->kcap = cap;
	}
	i = l->n++;
	p = &l->part[i];
	*p = (struct partial){
		.hash = hash, .s_end = s_end, .koff = (uint32_t)l->kused, .klen = klen, .slot = at
	};
	memcpy(l->keys + l->kused, key, klen);
	l->kused += klen;
	l->slot[at] = i + 1;
	acc = acc_of(l, i);
	memset(acc, 0, c->acc_size);
	if (c->has_init)
		for (int a = 0; a < c->naggs; a++)
			if (c->agg[a].k->init)
				c->agg[a].k->init(&c->agg[a], acc + c->agg[a].off);
	return (int)i;
}

/* Hot path: one probe, the aggregates' add. */
static int local_add(void *lp, uint64_t hash, const uint8_t *key, uint32_t klen, sl_ts_t ts,
		     const struct sl_row *row, sl_ts_t wm)
{
	struct local *l = lp;
	const struct sl_window_cfg *c = l->c;
	sl_ts_t s_end = slice_end_of(c, ts), fire = first_end(c, s_end) - 1;
	uint32_t at = slot_of(l, hash, s_end);
	int i = -1;
	uint8_t *acc;

	if (fire <= wm)
		return 0; /* a window of its slice may have fired: the owner decides */
	for (;; at = (at + 1) & l->mask) {
		uint32_t e = l->slot[at];
		const struct partial *p;

		if (!e)
			break;
		p = &l->part[e - 1];
		if (p->hash == hash && p->s_end == s_end && p->klen == klen &&
		    memcmp(l->keys + p->koff, key, klen) == 0) {
			i = (int)(e - 1);
			break;
		}
	}
	if (i < 0) {
		i = insert(l, at, hash, key, klen, s_end);
		if (i < 0)
			return i;
		if (fire < l->next_flush)
			l->next_flush = fire;
	}
	acc = acc_of(l, (uint32_t)i);
	for (int a = 0; a < c->naggs; a++)
		c->agg[a].k->add(&c->agg[a], acc + c->agg[a].off, row);
	l->part[i].nrows++;
	return 1;
}

static sl_ts_t local_next_flush(const void *lp)
{
	const struct local *l = lp;

	return l->next_flush;
}

/* Partials leave in insertion order; each carries an event time inside its slice. */
static void local_flush(void *lp, sl_partial_emit_fn emit, void *arg)
{
	struct local *l = lp;

	for (uint32_t i = 0; i < l->n; i++) {
		const struct partial *p = &l->part[i];

		emit(arg, p->hash, l->keys + p->koff, p->klen, p->s_end - 1, acc_of(l, i),
		     l->c->acc_size, p->nrows);
		l->slot[p->slot] = 0;
	}
	l->n = 0;
	l->kused = 0;
	l->next_flush = SL_TS_MAX;
}

const struct sl_combiner_ops sl_window_combiner = {
	.accepts = window_accepts,
	.create = local_create,
	.destroy = local_destroy,
	.add = local_add,
	.next_flush = local_next_flush,
	.flush = local_flush,
};
