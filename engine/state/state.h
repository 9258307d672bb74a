/*
 * state.h - keyed state of one operator instance on one shard (the heap backend behind the
 * value/map functions of sluice/operator.h).
 *
 * One kvtab per state descriptor, keyed by the operator's current key in namespace 0. Map
 * state keeps, per key, a small kvtab of its map entries, so one key's map can be iterated
 * and cleared without scanning other keys. TTL (descriptor ttl_ms > 0) follows Flink's
 * OnCreateAndWrite: a value or map entry expires ttl_ms of processing time after its last
 * put, is never returned after that, and is removed when it is next touched.
 *
 * The functions below take the key and the processing time explicitly; operator.h's
 * sl_value_* / sl_map_* call them with ctx->key and sl_ctx_proctime(ctx) (read only for
 * descriptors with a TTL). Threads: owned by one shard, every call from its thread.
 */
#ifndef SL_STATE_STATE_H
#define SL_STATE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/operator.h>

struct sl_kstate;

/* The current key as state sees it. */
struct sl_kkey {
	uint64_t hash;
	const void *key;
	uint32_t klen;
};

/* Returns state for descriptors descs[0..n) (copied; names borrowed until destroy), key
 * groups in [0, max_par); or NULL with *err = -EINVAL (bad descriptor) or -ENOMEM. Caller
 * frees with sl_kstate_destroy(), which accepts NULL. */
struct sl_kstate *sl_kstate_create(const struct sl_state_desc *descs, int n, uint32_t max_par,
				   int *err);
void sl_kstate_destroy(struct sl_kstate *ks);
/* Entries held: one per value, one per map entry (expired ones until they are touched). */
size_t sl_kstate_entries(const struct sl_kstate *ks);
/* Approximate bytes held. */
size_t sl_kstate_bytes(const struct sl_kstate *ks);
/* True if some descriptor has a TTL (the operator then needs the processing time). */
bool sl_kstate_has_ttl(const struct sl_kstate *ks);

/* The operations behind operator.h; `now` is processing time in ms (ignored without TTL).
 * A bad id or a descriptor of the other kind gives NULL / does nothing. */
void *sl_kstate_value_get(struct sl_kstate *ks, int id, const struct sl_kkey *k, sl_ts_t now);
void *sl_kstate_value_put(struct sl_kstate *ks, int id, const struct sl_kkey *k, sl_ts_t now);
void sl_kstate_value_clear(struct sl_kstate *ks, int id, const struct sl_kkey *k);
void *sl_kstate_map_get(struct sl_kstate *ks, int id, const struct sl_kkey *k,
			const void *mkey, uint32_t mklen, sl_ts_t now);
void *sl_kstate_map_put(struct sl_kstate *ks, int id, const struct sl_kkey *k,
			const void *mkey, uint32_t mklen, sl_ts_t now);
void sl_kstate_map_remove(struct sl_kstate *ks, int id, const struct sl_kkey *k,
			  const void *mkey, uint32_t mklen);
/* fn may remove entries of this map and change values; entries it puts may or may not be
 * visited. Expired entries are removed, not visited. */
void sl_kstate_map_foreach(struct sl_kstate *ks, int id, const struct sl_kkey *k,
			   bool (*fn)(const void *mkey, uint32_t mklen, void *value, void *arg),
			   void *arg, sl_ts_t now);
void sl_kstate_map_clear(struct sl_kstate *ks, int id, const struct sl_kkey *k);

#endif
