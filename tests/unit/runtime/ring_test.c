/*
 * ring_test.c - single-thread tests of the SPSC frame ring (engine/base/ring.h).
 *
 * One thread plays both sides, so every step of the protocol is observable: a frame is
 * invisible until published, space comes back only when the consumer releases it, a frame
 * that would straddle the end of the buffer is preceded by a PAD frame the consumer never
 * sees, and a full ring returns NULL and counts prod_full. The last test drives thousands of
 * laps of random frame sizes against a FIFO model of what must come out.
 */
#include <stdint.h>
#include <string.h>

#include "ring.h"
#include "test.h"

/* Fills a frame's header and payload from (seq, size) so the reader can check both. */
static void fill(struct sl_frame *f, uint32_t size, uint64_t seq)
{
	uint32_t words = (size - sizeof(*f)) / 8;

	f->size = size;
	f->type = SL_FRAME_RAW;
	f->port = 0;
	f->rsv = 0;
	f->hash = seq;
	f->ts = (sl_ts_t)(seq * 3);
	for (uint32_t i = 0; i < words; i++)
		f->payload[i] = seq * 1000003u + i;
}

static void check(const struct sl_frame *f, uint32_t size, uint64_t seq)
{
	uint32_t words = (size - sizeof(*f)) / 8;

	T_ASSERT_EQ_I64(f->size, size);
	T_ASSERT_EQ_I64(f->type, SL_FRAME_RAW);
	T_ASSERT_EQ_I64(f->hash, seq);
	T_ASSERT_EQ_I64(f->ts, seq * 3);
	for (uint32_t i = 0; i < words; i++)
		T_ASSERT_EQ_I64(f->payload[i], seq * 1000003u + i);
}

/* Produces one frame; fails the test when the ring has no room. */
static void put(struct sl_ring *r, uint32_t size, uint64_t seq)
{
	struct sl_frame *f = sl_ring_reserve_spsc(r, size);

	T_ASSERT(f != NULL);
	fill(f, size, seq);
	sl_ring_commit_spsc(r, f);
}

/* Consumes one frame and checks it. */
static void get(struct sl_ring *r, uint32_t size, uint64_t seq)
{
	const struct sl_frame *f = sl_ring_peek_spsc(r);

	T_ASSERT(f != NULL);
	check(f, size, seq);
	sl_ring_consume_spsc(r, f);
}

static void test_create(void)
{
	static const uint32_t bad[] = { 0, 1, 64, 2048, 4095, 4097, 6144, 12288 };
	struct sl_ring *r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		T_ASSERT(sl_ring_create(bad[i]) == NULL);
	r = sl_ring_create(8192);
	T_ASSERT(r != NULL);
	T_ASSERT_EQ_I64(r->cap, 8192);
	T_ASSERT_EQ_I64(r->max_frame, 2048);
	T_ASSERT(((uintptr_t)r->buf & 7) == 0);
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	T_ASSERT_EQ_I64(sl_ring_fill(r), 0);
	sl_ring_destroy(r);
	sl_ring_destroy(NULL);
}

/* reserve/commit/publish/peek/consume for one frame, and the automatic publication. */
static void test_basic(void)
{
	struct sl_ring *r = sl_ring_create(4096);
	const struct sl_frame *f;

	T_ASSERT(r != NULL);
	put(r, 32, 1);
	/* Committed is not published: the consumer must not see it yet. */
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	T_ASSERT_EQ_I64(sl_ring_fill(r), 0);
	sl_ring_publish_spsc(r);
	T_ASSERT_EQ_I64(sl_ring_fill(r), 32);
	f = sl_ring_peek_spsc(r);
	T_ASSERT(f != NULL);
	check(f, 32, 1);
	/* Peek is idempotent until consume. */
	T_ASSERT(sl_ring_peek_spsc(r) == f);
	sl_ring_consume_spsc(r, f);
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	/* The empty peek released the space. */
	T_ASSERT_EQ_I64(sl_ring_fill(r), 0);
	T_ASSERT_EQ_I64(atomic_load(&r->cons_head), 32);

	/* SL_RING_PUBLISH_EVERY commits publish on their own; one fewer does not. */
	for (uint64_t s = 0; s < SL_RING_PUBLISH_EVERY - 1; s++)
		put(r, 40, 100 + s);
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	put(r, 40, 100 + SL_RING_PUBLISH_EVERY - 1);
	T_ASSERT_EQ_I64(sl_ring_fill(r), 40 * SL_RING_PUBLISH_EVERY);
	for (uint64_t s = 0; s < SL_RING_PUBLISH_EVERY; s++)
		get(r, 40, 100 + s);
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	/* Publishing with nothing committed changes nothing. */
	sl_ring_publish_spsc(r);
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_frames), 1 + SL_RING_PUBLISH_EVERY);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_full), 0);
	sl_ring_destroy(r);
}

/* A frame that does not fit before the end of the buffer goes to offset 0 behind a PAD. */
static void test_wrap(void)
{
	struct sl_ring *r = sl_ring_create(4096);
	struct sl_frame *f;

	T_ASSERT(r != NULL);
	for (uint64_t s = 0; s < 4; s++)
		put(r, 1000, s);
	sl_ring_publish_spsc(r);
	for (uint64_t s = 0; s < 4; s++)
		get(r, 1000, s);
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	/* prod_next is at 4000: 96 bytes left, too few for 200. */
	f = sl_ring_reserve_spsc(r, 200);
	T_ASSERT(f != NULL);
	T_ASSERT((uint8_t *)f == r->buf);
	T_ASSERT_EQ_I64(((struct sl_frame *)(r->buf + 4000))->type, SL_FRAME_PAD);
	T_ASSERT_EQ_I64(((struct sl_frame *)(r->buf + 4000))->size, 96);
	fill(f, 200, 4);
	sl_ring_commit_spsc(r, f);
	sl_ring_publish_spsc(r);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_tail), 4096 + 200);
	/* The consumer skips the PAD and gets the frame at offset 0. */
	f = (struct sl_frame *)sl_ring_peek_spsc(r);
	T_ASSERT((uint8_t *)f == r->buf);
	check(f, 200, 4);
	sl_ring_consume_spsc(r, f);
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	T_ASSERT_EQ_I64(atomic_load(&r->cons_head), 4096 + 200);
	sl_ring_destroy(r);

	/* An 8-byte tail: smaller than a frame header, still a valid PAD (size and type fit). */
	r = sl_ring_create(4096);
	T_ASSERT(r != NULL);
	for (uint64_t s = 0; s < 4; s++)
		put(r, 1016, s);
	put(r, 24, 4);
	sl_ring_publish_spsc(r);
	for (uint64_t s = 0; s < 4; s++)
		get(r, 1016, s);
	get(r, 24, 4);
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	put(r, 32, 5);
	T_ASSERT_EQ_I64(((struct sl_frame *)(r->buf + 4088))->size, 8);
	T_ASSERT_EQ_I64(((struct sl_frame *)(r->buf + 4088))->type, SL_FRAME_PAD);
	sl_ring_publish_spsc(r);
	get(r, 32, 5);
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);

	/* Frames ending exactly at the buffer's end need no PAD: the next one starts at 0. */
	for (uint64_t s = 0; s < 4; s++)
		put(r, 1016, 6 + s);
	T_ASSERT_EQ_I64(r->prod_next, 2 * 4096);
	f = sl_ring_reserve_spsc(r, 32);
	T_ASSERT((uint8_t *)f == r->buf);
	T_ASSERT_EQ_I64(r->prod_next, 2 * 4096);
	fill(f, 32, 10);
	sl_ring_commit_spsc(r, f);
	sl_ring_publish_spsc(r);
	for (uint64_t s = 0; s < 4; s++)
		get(r, 1016, 6 + s);
	get(r, 32, 10);
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	T_ASSERT_EQ_I64(atomic_load(&r->cons_head), 2 * 4096 + 32);
	sl_ring_destroy(r);
}

/* A full ring returns NULL, counts one stall in prod_full, and publishes what is pending. Space comes back
 * only when the consumer releases it (every SL_RING_PUBLISH_EVERY frames or when it runs dry). */
static void test_full(void)
{
	struct sl_ring *r = sl_ring_create(4096);
	uint64_t s, n = 4096 / 40; /* 102 frames, 4080 bytes, 16 left before the end */
	struct sl_frame *f;

	T_ASSERT(r != NULL);
	T_ASSERT(sl_ring_has_room_spsc(r, 40));
	for (s = 0; s < n; s++)
		put(r, 40, s);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_tail), 96 * 40);
	T_ASSERT(!sl_ring_has_room_spsc(r, 40));
	T_ASSERT(!sl_ring_has_room_spsc(r, 24));
	T_ASSERT(sl_ring_has_room_spsc(r, 16));
	T_ASSERT(sl_ring_reserve_spsc(r, 40) == NULL);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_full), 1);
	/* The failed reserve published the 6 pending frames so the consumer can drain. */
	T_ASSERT_EQ_I64(atomic_load(&r->prod_tail), 4080);
	/* Retrying while the same stall lasts is not another stall. */
	T_ASSERT(sl_ring_reserve_spsc(r, 40) == NULL);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_full), 1);

	/* One consumed frame is not released yet: still full. */
	get(r, 40, 0);
	T_ASSERT(!sl_ring_has_room_spsc(r, 40));
	T_ASSERT(sl_ring_reserve_spsc(r, 40) == NULL);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_full), 1);
	for (s = 1; s < SL_RING_PUBLISH_EVERY; s++)
		get(r, 40, s);
	T_ASSERT_EQ_I64(atomic_load(&r->cons_head), SL_RING_PUBLISH_EVERY * 40);
	/* has_room refreshes the stale cached head. */
	T_ASSERT(sl_ring_has_room_spsc(r, 40));
	f = sl_ring_reserve_spsc(r, 40);
	T_ASSERT((uint8_t *)f == r->buf);
	fill(f, 40, n);
	sl_ring_commit_spsc(r, f);
	sl_ring_publish_spsc(r);
	for (s = SL_RING_PUBLISH_EVERY; s <= n; s++)
		get(r, 40, s);
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	T_ASSERT_EQ_I64(sl_ring_fill(r), 0);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_full), 1);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_frames), n + 1);
	/* A publication ends the stall: the next full ring is a new one. */
	for (s = n + 1; sl_ring_has_room_spsc(r, 40); s++)
		put(r, 40, s);
	T_ASSERT(s > n + SL_RING_PUBLISH_EVERY);
	T_ASSERT(sl_ring_reserve_spsc(r, 40) == NULL);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_full), 2);
	sl_ring_destroy(r);
}

/* Large frames: publication and release also go by bytes (half the ring), so two 1 KiB
 * frames in a 4 KiB ring are visible without an explicit publish, and consuming them gives
 * their space back without waiting for 32 frames or for the ring to run dry. */
static void test_large_frames(void)
{
	struct sl_ring *r = sl_ring_create(4096);
	const struct sl_frame *g;

	T_ASSERT(r != NULL);
	put(r, 1024, 0);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_tail), 0);
	put(r, 1024, 1);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_tail), 2048);
	put(r, 1024, 2);
	put(r, 1024, 3);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_tail), 4096);
	T_ASSERT(!sl_ring_has_room_spsc(r, 1024));
	for (uint64_t s = 0; s < 2; s++) {
		g = sl_ring_peek_spsc(r);
		T_ASSERT(g != NULL);
		check(g, 1024, s);
		sl_ring_consume_spsc(r, g);
	}
	/* two frames consumed, the ring not drained: released by bytes */
	T_ASSERT_EQ_I64(atomic_load(&r->cons_head), 2048);
	T_ASSERT(sl_ring_has_room_spsc(r, 1024));
	sl_ring_destroy(r);
}

/* Frames above cap / 4 are refused without counting as full; cap / 4 itself fits. */
static void test_max_frame(void)
{
	struct sl_ring *r = sl_ring_create(4096);

	T_ASSERT(r != NULL);
	/* has_room agrees with reserve, so a caller may test before it reserves. */
	T_ASSERT(sl_ring_has_room_spsc(r, 1024));
	T_ASSERT(!sl_ring_has_room_spsc(r, 1032));
	T_ASSERT(!sl_ring_has_room_spsc(r, 1u << 31));
	T_ASSERT(sl_ring_reserve_spsc(r, 1032) == NULL);
	T_ASSERT(sl_ring_reserve_spsc(r, 1u << 31) == NULL);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_full), 0);
	T_ASSERT_EQ_I64(r->prod_next, 0);
	for (uint64_t s = 0; s < 4; s++)
		put(r, 1024, s);
	T_ASSERT(sl_ring_reserve_spsc(r, 1024) == NULL);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_full), 1);
	for (uint64_t s = 0; s < 4; s++)
		get(r, 1024, s);
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	sl_ring_destroy(r);
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Frame size of sequence number `seq`: mostly small, sometimes up to max_frame. */
static uint32_t size_of(uint64_t seq, uint32_t max_frame)
{
	uint64_t h = mix(seq);

	if ((h & 15) == 0)
		return 24 + 8 * (uint32_t)((h >> 8) % ((max_frame - 24) / 8 + 1));
	return 24 + 8 * (uint32_t)((h >> 8) % 12);
}

/*
 * Random interleaving of bursts of both sides over many laps, checked against the model
 * "frames come out in order with their sizes and contents" plus the ring's invariants. A
 * NULL from reserve must mean the ring is really full for that frame.
 */
static void test_random(uint32_t cap, uint64_t steps)
{
	struct sl_ring *r = sl_ring_create(cap);
	uint64_t next_put = 0, next_get = 0, rnd = cap;

	T_ASSERT(r != NULL);
	for (uint64_t step = 0; step < steps; step++) {
		uint32_t burst = (uint32_t)((rnd = mix(rnd)) % 64);

		for (uint32_t i = 0; i < burst; i++) {
			uint32_t size = size_of(next_put, r->max_frame);
			struct sl_frame *f = sl_ring_reserve_spsc(r, size);
			uint64_t used, contig, need;

			if (f) {
				fill(f, size, next_put++);
				sl_ring_commit_spsc(r, f);
				continue;
			}
			T_ASSERT_EQ_I64(atomic_load(&r->prod_tail), r->prod_next);
			used = r->prod_next - atomic_load(&r->cons_head);
			contig = cap - (r->prod_next & r->mask);
			need = size <= contig ? size : contig + size;
			T_ASSERT(used + need > cap);
			break;
		}
		if ((rnd & 3) == 0)
			sl_ring_publish_spsc(r);

		burst = (uint32_t)((rnd >> 8) % 64);
		for (uint32_t i = 0; i < burst; i++) {
			const struct sl_frame *f = sl_ring_peek_spsc(r);

			if (!f) {
				/* Dry: everything published was consumed and handed back. */
				T_ASSERT_EQ_I64(atomic_load(&r->cons_head),
						atomic_load(&r->prod_tail));
				break;
			}
			check(f, size_of(next_get, r->max_frame), next_get);
			next_get++;
			sl_ring_consume_spsc(r, f);
		}
		T_ASSERT(atomic_load(&r->cons_head) <= atomic_load(&r->prod_tail));
		T_ASSERT(atomic_load(&r->prod_tail) <= r->prod_next);
		T_ASSERT(r->prod_next - atomic_load(&r->cons_head) <= cap);
		T_ASSERT(sl_ring_fill(r) <= cap);
	}
	sl_ring_publish_spsc(r);
	while (next_get < next_put) {
		const struct sl_frame *f = sl_ring_peek_spsc(r);

		T_ASSERT(f != NULL);
		check(f, size_of(next_get, r->max_frame), next_get);
		next_get++;
		sl_ring_consume_spsc(r, f);
	}
	T_ASSERT(sl_ring_peek_spsc(r) == NULL);
	T_ASSERT_EQ_I64(atomic_load(&r->cons_head), r->prod_next);
	T_ASSERT_EQ_I64(atomic_load(&r->prod_frames), next_put);
	/* Many laps, so wrap-around was exercised at every offset class. */
	T_ASSERT(r->prod_next / cap > 1000);
	T_ASSERT(atomic_load(&r->prod_full) > 0);
	sl_ring_destroy(r);
}

int main(void)
{
	test_create();
	test_basic();
	test_wrap();
	test_full();
	test_max_frame();
	test_large_frames();
	test_random(4096, 200000);
	test_random(16384, 100000);
	return T_EXIT_PASS;
}
