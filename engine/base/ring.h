/*
 * ring.h - single-producer single-consumer byte ring of variable-size frames.
 *
 * One producer thread writes frames in place (reserve, fill, commit) and makes them visible
 * in batches (publish); one consumer thread reads them in place (peek, consume) and hands the
 * space back in batches (release). Each side keeps a cached copy of the other side's index
 * and only reads the shared one when the cache says full/empty, so the shared cache lines
 * move once per batch, not once per frame.
 *
 * Invariants: prod_tail and cons_head only grow (64-bit byte counters, never wrap);
 * cons_head <= prod_tail <= cons_head + cap; a frame never straddles the end of the buffer
 * (the producer writes a PAD frame and starts again at offset 0).
 */
#ifndef SL_BASE_RING_H
#define SL_BASE_RING_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"

#define SL_CACHE_LINE	      64
#define SL_RING_PUBLISH_EVERY 32 /* frames between automatic publications */

struct sl_ring {
	/* Shared: written by the producer, read by the consumer. */
	alignas(SL_CACHE_LINE) _Atomic uint64_t prod_tail;
	/* Shared: written by the consumer, read by the producer. */
	alignas(SL_CACHE_LINE) _Atomic uint64_t cons_head;

	/* Producer-private. */
	alignas(SL_CACHE_LINE) uint64_t prod_next; /* end of committed frames */
	uint64_t prod_cached_head;		   /* last cons_head seen */
	uint32_t prod_unpublished;		   /* frames committed since publish */
	uint64_t prod_published;		   /* prod_tail as last stored */
	_Atomic uint64_t prod_full;		   /* stalls: reserve found no space after a
						    * publication went through (metric) */
	bool prod_stalled;			   /* the last reserve failed */
	_Atomic uint64_t prod_frames;		   /* frames committed (metric) */

	/* Consumer-private. */
	alignas(SL_CACHE_LINE) uint64_t cons_next; /* start of the next unread frame */
	uint64_t cons_cached_tail;		   /* last prod_tail seen */
	uint32_t cons_unreleased;		   /* frames consumed since release */
	uint64_t cons_released;			   /* cons_head as last stored */

	/* Read-only after creation. */
	alignas(SL_CACHE_LINE) uint8_t *buf;
	uint64_t mask;
	uint32_t cap;
	uint32_t max_frame;
	uint32_t batch_bytes; /* publish/release also after this many bytes: cap / 2 */
};

static_assert(offsetof(struct sl_ring, cons_head) - offsetof(struct sl_ring, prod_tail) >=
		      SL_CACHE_LINE,
	      "indices on separate cache lines");
static_assert(offsetof(struct sl_ring, cons_next) - offsetof(struct sl_ring, prod_next) >=
		      SL_CACHE_LINE,
	      "private sides on separate cache lines");

/* Returns a ring of `cap` bytes (power of two, >= 4096) or NULL (EINVAL, ENOMEM). The largest
 * frame it takes is cap / 4. Caller frees with sl_ring_destroy(). */
struct sl_ring *sl_ring_create(uint32_t cap);
void sl_ring_destroy(struct sl_ring *r);

struct sl_frame *sl_ring_reserve_slow_spsc(struct sl_ring *r, uint32_t size);

/* Producer: returns space for a frame of `size` bytes (multiple of 8), or NULL when the ring
 * is full (publishes what is pending first, so the consumer can drain). Per record: the
 * common case (fits before the end, cached head says there is room) is inline. */
static inline struct sl_frame *sl_ring_reserve_spsc(struct sl_ring *r, uint32_t size)
{
	uint64_t next = r->prod_next;
	uint32_t pos = (uint32_t)(next & r->mask);

	if (__builtin_expect(size <= r->cap - pos && next + size - r->prod_cached_head <= r->cap &&
				     size <= r->max_frame,
			     1))
		return (struct sl_frame *)(r->buf + pos);
	return sl_ring_reserve_slow_spsc(r, size);
}

/* Producer: makes a publication visible to the consumer. Release store pairs with the
 * acquire load of prod_tail in sl_ring_peek_spsc(). */
static inline void sl_ring_publish_spsc(struct sl_ring *r)
{
	if (r->prod_next != r->prod_published) {
		/* The frames metric is kept per publication, not per frame: one RMW per batch. */
		atomic_store_explicit(&r->prod_frames,
				      atomic_load_explicit(&r->prod_frames, memory_order_relaxed) +
					      r->prod_unpublished,
				      memory_order_relaxed);
		r->prod_unpublished = 0;
		r->prod_published = r->prod_next;
		r->prod_stalled = false;
		atomic_store_explicit(&r->prod_tail, r->prod_next, memory_order_release);
	}
}

/* Producer: seals the frame returned by the last reserve (its size field set). Publishes
 * every SL_RING_PUBLISH_EVERY frames, or sooner once they fill half the ring: a few large
 * frames must not sit unpublished in a ring they nearly fill. */
static inline void sl_ring_commit_spsc(struct sl_ring *r, struct sl_frame *f)
{
	r->prod_next += f->size;
	if (++r->prod_unpublished >= SL_RING_PUBLISH_EVERY ||
	    r->prod_next - r->prod_published >= r->batch_bytes)
		sl_ring_publish_spsc(r);
}

/* Producer: true when a frame of `size` bytes would fit now (refreshes the cached head). */
bool sl_ring_has_room_spsc(struct sl_ring *r, uint32_t size);

/* Consumer: gives freed space back. Release store pairs with the acquire load of cons_head
 * in sl_ring_reserve_spsc(). */
static inline void sl_ring_release_spsc(struct sl_ring *r)
{
	if (r->cons_unreleased) {
		r->cons_unreleased = 0;
		r->cons_released = r->cons_next;
		atomic_store_explicit(&r->cons_head, r->cons_next, memory_order_release);
	}
}

const struct sl_frame *sl_ring_peek_slow_spsc(struct sl_ring *r);

/* Consumer: the next frame, or NULL when none is published. Releases consumed space before
 * reporting empty, so a waiting producer sees it. Per record: inline unless the cached tail
 * is reached or a PAD is next. */
static inline const struct sl_frame *sl_ring_peek_spsc(struct sl_ring *r)
{
	if (__builtin_expect(r->cons_next != r->cons_cached_tail, 1)) {
		const struct sl_frame *f =
			(const struct sl_frame *)(r->buf + (r->cons_next & r->mask));

		if (__builtin_expect(f->type != SL_FRAME_PAD, 1))
			return f;
	}
	return sl_ring_peek_slow_spsc(r);
}

/* Consumer: done with the frame returned by the last peek. Releases every
 * SL_RING_PUBLISH_EVERY frames or half the ring, whichever comes first. */
static inline void sl_ring_consume_spsc(struct sl_ring *r, const struct sl_frame *f)
{
	r->cons_next += f->size;
	if (++r->cons_unreleased >= SL_RING_PUBLISH_EVERY ||
	    r->cons_next - r->cons_released >= r->batch_bytes)
		sl_ring_release_spsc(r);
}

/* Consumer: for looking ahead without consuming. Starting at byte position *pos (from
 * cons_next on), returns the next published non-PAD frame and leaves *pos at it, or NULL when
 * *pos reached what the consumer last saw published. No shared-memory access: it only
 * reads frames the consumer may already read. */
static inline const struct sl_frame *sl_ring_lookahead_spsc(const struct sl_ring *r, uint64_t *pos)
{
	while (*pos < r->cons_cached_tail) {
		const struct sl_frame *f = (const struct sl_frame *)(r->buf + (*pos & r->mask));

		if (f->type != SL_FRAME_PAD)
			return f;
		*pos += f->size;
	}
	return NULL;
}

/* Any thread: approximate bytes in flight (metric). */
uint32_t sl_ring_fill(const struct sl_ring *r);

#endif
