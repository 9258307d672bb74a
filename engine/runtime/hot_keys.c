/*
 * hot_keys.c - Space-Saving over a sender's sampled records, and the merge of the senders'
 * sketches for a reader (hot_keys.h).
 */
#include <string.h>

#include "hot_keys.h"

#define RELAXED memory_order_relaxed

static void set_key(struct sl_hot_entry *e, const uint8_t *key, uint32_t klen)
{
	uint64_t w[SL_HOT_KEY_BYTES / 8] = { 0 };

	memcpy(w, key, klen < SL_HOT_KEY_BYTES ? klen : SL_HOT_KEY_BYTES);
	for (int i = 0; i < SL_HOT_KEY_BYTES / 8; i++)
		atomic_store_explicit(&e->key[i], w[i], RELAXED);
	atomic_store_explicit(&e->klen, klen, RELAXED);
}

/* The writer reads its own entries with relaxed loads too (no other writer exists). */
void sl_hot_keys_sample(struct sl_hot_keys *h, uint64_t hash, const uint8_t *key, uint32_t klen)
{
	struct sl_hot_entry *min = &h->e[0];
	uint64_t minc = UINT64_MAX;

	atomic_store_explicit(&h->seen, atomic_load_explicit(&h->seen, RELAXED) + 1, RELAXED);
	for (int i = 0; i < SL_HOT_K; i++) {
		struct sl_hot_entry *e = &h->e[i];
		uint64_t c = atomic_load_explicit(&e->count, RELAXED);

		/* equal hashes of different keys count as one: a 64-bit collision among the few
		 * heavy keys is too rare to matter for a report */
		if (c && atomic_load_explicit(&e->hash, RELAXED) == hash) {
			atomic_store_explicit(&e->count, c + 1, RELAXED);
			return;
		}
		if (c < minc) {
			minc = c;
			min = e;
		}
	}
	atomic_store_explicit(&min->hash, hash, RELAXED);
	atomic_store_explicit(&min->err, minc, RELAXED);
	set_key(min, key, klen);
	atomic_store_explicit(&min->count, minc + 1, RELAXED);
}

int sl_hot_keys_top(const struct sl_hot_keys *const *h, int n, double min_share,
		    struct sl_hot_key *out, int max, uint64_t *sampled)
{
	struct {
		uint64_t hash, count, err;
		const struct sl_hot_entry *e;
	} m[SL_HOT_K * 8];
	int nm = 0, nout = 0;
	uint64_t total = 0;

	for (int s = 0; s < n; s++) {
		if (!h[s])
			continue;
		total += atomic_load_explicit(&h[s]->seen, RELAXED);
		for (int i = 0; i < SL_HOT_K; i++) {
			const struct sl_hot_entry *e = &h[s]->e[i];
			uint64_t c = atomic_load_explicit(&e->count, RELAXED);
			uint64_t hash = atomic_load_explicit(&e->hash, RELAXED);
			int j;

			if (!c)
				continue;
			for (j = 0; j < nm && m[j].hash != hash; j++)
				;
			if (j == nm) {
				if (nm == (int)(sizeof m / sizeof m[0]))
					continue; /* more shards than the merge holds: a sample */
				m[nm].hash = hash;
				m[nm].count = m[nm].err = 0;
				m[nm++].e = e;
			}
			m[j].count += c;
			m[j].err += atomic_load_explicit(&e->err, RELAXED);
		}
	}
	*sampled = total;
	if (!total)
		return 0;
	/* selection of the largest guaranteed counts, max of them */
	while (nout < max) {
		int best = -1;

		for (int j = 0; j < nm; j++)
			if (m[j].e &&
			    (best < 0 || m[j].count - m[j].err > m[best].count - m[best].err))
				best = j;
		if (best < 0 || (double)(m[best].count - m[best].err) < min_share * (double)total)
			break;
		struct sl_hot_key *k = &out[nout++];
		const struct sl_hot_entry *e = m[best].e;
		uint64_t w[SL_HOT_KEY_BYTES / 8];

		k->hash = m[best].hash;
		k->klen = atomic_load_explicit(&e->klen, RELAXED);
		for (int i = 0; i < SL_HOT_KEY_BYTES / 8; i++)
			w[i] = atomic_load_explicit(&e->key[i], RELAXED);
		memcpy(k->key, w, sizeof k->key);
		k->share = (double)(m[best].count - m[best].err) / (double)total;
		k->share_hi = (double)m[best].count / (double)total;
		if (k->share_hi > 1)
			k->share_hi = 1;
		m[best].e = NULL;
	}
	return nout;
}
