/*
 * micro_core.c - single-thread microbenchmarks of core primitives (Google Benchmark through
 * gbench_shim.h): the ring's per-frame cost with no cache-line transfer at all, and the key
 * hash on the key sizes exchanges see most (one 8-byte integer, a short string).
 */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "ring.h"
#include "gbench_shim.h"

/* reserve + commit + peek + consume of one 32-byte frame, SL_RING_PUBLISH_EVERY at a time
 * (a frame is invisible to peek until its batch is published). */
static void bm_ring_frame(struct sl_gb_state *st, void *arg)
{
	struct sl_ring *r = sl_ring_create(65536);
	uint64_t seq = 0, sum = 0;

	if (!r) {
		sl_gb_skip_with_error(st, "sl_ring_create failed");
		return;
	}
	while (sl_gb_keep_running_batch(st, SL_RING_PUBLISH_EVERY)) {
		for (int i = 0; i < SL_RING_PUBLISH_EVERY; i++) {
			struct sl_frame *f = sl_ring_reserve_spsc(r, 32);

			f->size = 32;
			f->type = SL_FRAME_RAW;
			f->hash = seq;
			f->ts = (sl_ts_t)seq;
			f->payload[0] = seq++;
			sl_ring_commit_spsc(r, f);
		}
		for (int i = 0; i < SL_RING_PUBLISH_EVERY; i++) {
			const struct sl_frame *f = sl_ring_peek_spsc(r);

			sum += f->payload[0];
			sl_ring_consume_spsc(r, f);
		}
	}
	if (sum != seq * (seq - 1) / 2)
		sl_gb_skip_with_error(st, "ring lost frames");
	sl_gb_do_not_optimize(sum);
	sl_gb_set_items_processed(st, sl_gb_iterations(st));
	sl_ring_destroy(r);
}

/* sl_hash_bytes on a key of sl_gb_range() bytes, changing every call so nothing is hoisted. */
static void bm_hash_bytes(struct sl_gb_state *st, void *arg)
{
	uint32_t len = (uint32_t)sl_gb_range(st);
	uint8_t key[64];
	uint64_t h = 0;

	memset(key, 'k', sizeof(key));
	while (sl_gb_keep_running_batch(st, 256)) {
		for (uint64_t i = 0; i < 256; i++) {
			memcpy(key, &i, sizeof(i));
			h ^= sl_hash_bytes(key, len);
			sl_gb_clobber_memory();
		}
	}
	sl_gb_do_not_optimize(h);
	sl_gb_set_items_processed(st, sl_gb_iterations(st));
	sl_gb_set_bytes_processed(st, sl_gb_iterations(st) * len);
}

int main(int argc, char **argv)
{
	static const int64_t key_lens[] = { 8, 32 };

	sl_gb_register("ring_frame", bm_ring_frame, NULL);
	sl_gb_register_args("hash_bytes", bm_hash_bytes, NULL, key_lens, 2);
	return sl_gb_main(argc, argv);
}
