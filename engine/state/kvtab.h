/*
 * kvtab.h - the heap state table: one per (operator instance, state) on a shard.
 *
 * Maps (key bytes, namespace) to a fixed-size value. Open addressing over a slot array of
 * (hash, entry) pairs; entries live in slabs and never move, so a value pointer stays valid
 * until its entry is removed or the table destroyed (windows keep such pointers in their
 * fire lists). Every entry records its key group, so snapshots and rescaling can take the
 * table apart by key group (DESIGN §7).
 *
 * Threads: a table belongs to one shard; every call comes from that shard's thread.
 * Hot path: get/put/remove do no allocation except when a slab or the slot array grows.
 */
#ifndef SL_STATE_KVTAB_H
#define SL_STATE_KVTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct sl_kvtab;

/* Longest key a table stores: SL_KEY_MAX (key.h) plus room for a caller's suffix (the
 * timer service appends the timer namespace to the key). */
#define SL_KVTAB_KEY_MAX 1040

/* One entry, as iteration and lookups expose it. Read-only but for the value bytes. */
struct sl_kv {
	uint64_t hash; /* key hash (sl_hash_bytes of the key) */
	uint64_t ns;   /* namespace: window end, 0 for plain keyed state */
	uint32_t klen;
	uint16_t kg; /* key group */
	const uint8_t *key;
	void *value; /* value_size bytes */
};

/* Returns an empty table for values of `value_size` bytes (8-byte aligned, zeroed when
 * created), key groups in [0, max_par), or NULL on ENOMEM or max_par not in [1, 65536].
 * Caller frees with sl_kvtab_destroy(), which accepts NULL. */
struct sl_kvtab *sl_kvtab_create(uint32_t value_size, uint32_t max_par);
/* The same, for a table where one key holds many namespaces at once: the home slot comes
 * from (key, ns), so a key's namespaces do not share one probe run. Its prefetches must
 * then be given the namespace. */
struct sl_kvtab *sl_kvtab_create_spread(uint32_t value_size, uint32_t max_par);
void sl_kvtab_destroy(struct sl_kvtab *t);

/* Returns the value for (key, ns) or NULL. */
void *sl_kvtab_get(struct sl_kvtab *t, uint64_t hash, const void *key, uint32_t klen, uint64_t ns);
/* Returns the value for (key, ns), inserting a zeroed one if absent (*created set). NULL on
 * ENOMEM or klen > SL_KVTAB_KEY_MAX. The pointer stays valid until the entry is removed. */
void *sl_kvtab_put(struct sl_kvtab *t, uint64_t hash, const void *key, uint32_t klen, uint64_t ns,
		   bool *created);
/* Removes (key, ns). Returns true if it was there. */
bool sl_kvtab_remove(struct sl_kvtab *t, uint64_t hash, const void *key, uint32_t klen,
		     uint64_t ns);
/* Removes the entry whose value pointer is `value` (as returned by get/put, still live). */
void sl_kvtab_remove_value(struct sl_kvtab *t, void *value);
/* Fills *kv for the entry owning `value`. */
void sl_kvtab_entry(const struct sl_kvtab *t, const void *value, struct sl_kv *kv);
/* Hints the cache about an upcoming lookup of (key `hash`, ns): fetches its slot line. Only
 * a spread table looks at ns (any namespace of a key shares the slot line otherwise). A
 * lookup is two dependent cache misses (slot, entry); a record loop hides both by calling
 * this D records ahead and sl_kvtab_prefetch_entry() about D/2 ahead. */
void sl_kvtab_prefetch(const struct sl_kvtab *t, uint64_t hash, uint64_t ns);
/* Second stage: reads the slot run (prefetched before, else this stalls) and fetches the
 * entry of (hash, ns) if present. */
void sl_kvtab_prefetch_entry(const struct sl_kvtab *t, uint64_t hash, uint64_t ns);

/* Removes every entry at once, keeping the slot array and the slabs for the entries that
 * come next: O(capacity) sequential writes, no per-entry work, no allocation while the
 * table refills to its old size (new entries are carved in slab order, so their first
 * writes are sequential too). Every value pointer becomes invalid; what values own must
 * have been released by the caller. */
void sl_kvtab_clear(struct sl_kvtab *t);

/* Grows the slot array now so that n more entries go in without a rehash (a restore knows
 * how many entries come). Returns 0 or -ENOMEM (the table is unchanged then). */
int sl_kvtab_reserve(struct sl_kvtab *t, size_t n);

size_t sl_kvtab_count(const struct sl_kvtab *t);
/* The longest probe distance any slot records (saturated at 255): how far the worst lookup
 * walks. A diagnostic for tests and benchmarks: it reads every slot. */
uint32_t sl_kvtab_max_probe(const struct sl_kvtab *t);
/* Approximate bytes held (slots, slabs). */
size_t sl_kvtab_bytes(const struct sl_kvtab *t);

/* Visits every entry in slab order (deterministic for a given sequence of calls). The
 * callback may remove entries (the one it is given or others: removed, unvisited ones are
 * skipped) and may insert (new entries may or may not be visited). Return false to stop. */
void sl_kvtab_foreach(struct sl_kvtab *t, bool (*fn)(const struct sl_kv *kv, void *arg), void *arg);

/*
 * Snapshot marks, for copy-on-write snapshots (heap_state.c): every entry carries one mark
 * bit, and the table a current mark that new entries get. flip_mark starts a snapshot: every
 * entry then differs from the current mark ("not yet in the snapshot"), every entry made
 * afterwards equals it ("not part of it"). take_mark returns true once per such epoch for an
 * entry that still differs, making it equal: whoever gets true copies the entry into the
 * snapshot, whether the snapshot's walk reached it or a write is about to change it.
 */
void sl_kvtab_flip_mark(struct sl_kvtab *t);
bool sl_kvtab_take_mark(struct sl_kvtab *t, void *value);

/* A read-only walk in the same slab order, for snapshots: no callback, and the table stays
 * const. Without changes in between, a walk sees every live entry once. With changes
 * between steps (a copy-on-write snapshot's walk spans many loop turns) it stays valid,
 * since entries never move and slabs are only appended: it visits every entry that was
 * live throughout, and may or may not visit ones inserted or removed meanwhile. */
struct sl_kvtab_iter {
	uint32_t slab;
	uint32_t idx;
};

/* Key equality for the common short keys (8 to 16 bytes: two overlapping word compares)
 * without a memcmp call; the table's own probe and the window's fire loop both use it. */
static inline bool sl_kvtab_key_eq(const uint8_t *a, const uint8_t *b, uint32_t n)
{
	uint64_t x, y, u, v;

	if (n >= 8 && n <= 16) {
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		memcpy(&u, a + n - 8, 8);
		memcpy(&v, b + n - 8, 8);
		return ((x ^ y) | (u ^ v)) == 0;
	}
	return memcmp(a, b, n) == 0;
}

static inline void sl_kvtab_iter_init(struct sl_kvtab_iter *it)
{
	it->slab = 0;
	it->idx = 0;
}

/* Fills *kv with the next live entry and returns true, or returns false at the end. */
bool sl_kvtab_next(const struct sl_kvtab *t, struct sl_kvtab_iter *it, struct sl_kv *kv);

#endif
