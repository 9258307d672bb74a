/*
 * hot_keys.h - the heavy hitters of one exchange sender (issue 15, DESIGN §3): which keys
 * carry a large share of the records a shard sends through a keyed exchange, found with a
 * Space-Saving sketch (Metwally et al., 2005) of SL_HOT_K counters over every
 * SL_HOT_SAMPLE-th record.
 *
 * Space-Saving keeps K (key, count, err) entries; a record of a key not held replaces the
 * entry with the smallest count c and starts at c + 1 with err = c. Every key whose share
 * of the sampled records exceeds 1/K is held, and count - err <= true count <= count, so a
 * share reported from count - err is never an overestimate. Cost on the record path: one
 * counter test per record, a scan of K hashes per sampled one (K/SAMPLE = 2 compares per
 * record); 3 KB per sender.
 *
 * One writer (the sender's shard), any readers: every field is a relaxed atomic, so a
 * reader on another thread (the metrics endpoint) sees each value whole; an entry being
 * replaced may show the old key with the new count for a moment, which a sample can take.
 * Owned by the shard (struct sl_shard.hot, one per node), kept after the run.
 */
#ifndef SL_RUNTIME_HOT_KEYS_H
#define SL_RUNTIME_HOT_KEYS_H

#include <stdatomic.h>
#include <stdint.h>

#define SL_HOT_K	 32
#define SL_HOT_SAMPLE	 16
#define SL_HOT_KEY_BYTES 64 /* key bytes kept for display; longer keys are shown by hash */

struct sl_hot_entry {
	_Atomic uint64_t hash;
	_Atomic uint64_t count; /* 0: unused */
	_Atomic uint64_t err;
	_Atomic uint32_t klen;
	_Atomic uint64_t key[SL_HOT_KEY_BYTES / 8];
};

struct sl_hot_keys {
	uint32_t tick;	       /* records since the last sampled one (writer only) */
	_Atomic uint64_t seen; /* records sampled */
	struct sl_hot_entry e[SL_HOT_K];
};

void sl_hot_keys_sample(struct sl_hot_keys *h, uint64_t hash, const uint8_t *key, uint32_t klen);

/* Counts one record of the exchange. Hot path: one increment and test. */
static inline void sl_hot_keys_offer(struct sl_hot_keys *h, uint64_t hash, const uint8_t *key,
				     uint32_t klen)
{
	if (++h->tick < SL_HOT_SAMPLE)
		return;
	h->tick = 0;
	sl_hot_keys_sample(h, hash, key, klen);
}

/* One key of the merged view. */
struct sl_hot_key {
	uint64_t hash;
	uint32_t klen; /* > SL_HOT_KEY_BYTES: only the first bytes are in key */
	uint8_t key[SL_HOT_KEY_BYTES];
	double share;	 /* guaranteed lower bound of its share of the records */
	double share_hi; /* upper bound */
};

/*
 * Merges the sketches of one exchange on n shards (NULL entries skipped) and writes into
 * out[0..max) the keys whose guaranteed share of all sampled records is at least
 * min_share, largest first. Returns how many; *sampled gets the records sampled (0: none
 * yet). Any thread.
 */
int sl_hot_keys_top(const struct sl_hot_keys *const *h, int n, double min_share,
		    struct sl_hot_key *out, int max, uint64_t *sampled);

#endif
