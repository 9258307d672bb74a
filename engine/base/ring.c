/*
 * ring.c - the SPSC frame ring (see ring.h for the protocol and invariants).
 *
 * Synchronizing edges, and only these:
 *   producer: release store prod_tail (publish)   -> consumer: acquire load prod_tail (peek)
 *   consumer: release store cons_head (release)   -> producer: acquire load cons_head (reserve)
 * Everything else is private to one side.
 */
#include "ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sl_ring *sl_ring_create(uint32_t cap)
{
	struct sl_ring *r;

	if (cap < 4096 || (cap & (cap - 1)))
		return NULL;
	r = aligned_alloc(SL_CACHE_LINE, sizeof(*r));
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->buf = aligned_alloc(SL_CACHE_LINE, cap);
	if (!r->buf) {
		free(r);
		return NULL;
	}
	r->cap = cap;
	r->mask = cap - 1;
	r->max_frame = cap / 4;
	r->batch_bytes = cap / 2;
	return r;
}

void sl_ring_destroy(struct sl_ring *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}

/* Bytes the producer needs for a frame of `size` at its position: the frame, plus the tail of
 * the buffer it skips with a PAD frame when the frame would straddle the end. */
static inline uint32_t bytes_needed(const struct sl_ring *r, uint32_t size)
{
	uint32_t contig = r->cap - (uint32_t)(r->prod_next & r->mask);

	return size <= contig ? size : contig + size;
}

bool sl_ring_has_room_spsc(struct sl_ring *r, uint32_t size)
{
	uint64_t need = bytes_needed(r, size);

	if (size > r->max_frame) /* reserve refuses it however empty the ring is */
		return false;
	if (r->prod_next + need - r->prod_cached_head <= r->cap)
		return true;
	/* Pairs with the release store of cons_head in sl_ring_release_spsc(). */
	r->prod_cached_head = atomic_load_explicit(&r->cons_head, memory_order_acquire);
	return r->prod_next + need - r->prod_cached_head <= r->cap;
}

struct sl_frame *sl_ring_reserve_slow_spsc(struct sl_ring *r, uint32_t size)
{
	uint32_t pos, contig;
	struct sl_frame *pad;

	if (size > r->max_frame)
		return NULL;
	if (!sl_ring_has_room_spsc(r, size)) {
		/* Let the consumer see everything we have, or it may wait on us forever. */
		sl_ring_publish_spsc(r);
		if (!r->prod_stalled) {
			/* count stalls, not the retries of a producer waiting out one stall */
			r->prod_stalled = true;
			atomic_store_explicit(
				&r->prod_full,
				atomic_load_explicit(&r->prod_full, memory_order_relaxed) + 1,
				memory_order_relaxed);
		}
		return NULL;
	}
	pos = (uint32_t)(r->prod_next & r->mask);
	contig = r->cap - pos;
	if (size > contig) {
		pad = (struct sl_frame *)(r->buf + pos);
		pad->size = contig;
		pad->type = SL_FRAME_PAD;
		r->prod_next += contig;
		pos = 0;
	}
	return (struct sl_frame *)(r->buf + pos);
}

const struct sl_frame *sl_ring_peek_slow_spsc(struct sl_ring *r)
{
	const struct sl_frame *f;

	for (;;) {
		if (r->cons_next == r->cons_cached_tail) {
			/* Pairs with the release store of prod_tail in sl_ring_publish_spsc(). */
			r->cons_cached_tail =
				atomic_load_explicit(&r->prod_tail, memory_order_acquire);
			if (r->cons_next == r->cons_cached_tail) {
				sl_ring_release_spsc(r);
				return NULL;
			}
		}
		f = (const struct sl_frame *)(r->buf + (r->cons_next & r->mask));
		if (f->type != SL_FRAME_PAD)
			return f;
		r->cons_next += f->size;
		r->cons_unreleased++;
	}
}

uint32_t sl_ring_fill(const struct sl_ring *r)
{
	uint64_t t = atomic_load_explicit(&((struct sl_ring *)r)->prod_tail, memory_order_relaxed);
	uint64_t h = atomic_load_explicit(&((struct sl_ring *)r)->cons_head, memory_order_relaxed);

	return t > h ? (uint32_t)(t - h) : 0;
}
