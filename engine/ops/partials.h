/*
 * partials.h - the bounded table a sending shard's local stage keeps its partial aggregates
 * in (two-stage aggregation, runtime/op.h struct sl_combiner_ops; DESIGN §5): one
 * accumulator block per (key, namespace), the namespace being a window's slice end or 0.
 * Used by the window's local stage (window/local.c) and the updating GROUP BY's
 * (group_agg_local.c).
 *
 * Open addressing over (key hash, namespace) with at most `cap` entries; keys live in one
 * arena and blocks in one array, so iteration is in insertion order and a reset touches
 * only the slots it used. No deletion but the whole-table reset: a local stage flushes
 * everything at once. Memory: cap x (40 + block) bytes, a 2 x cap slot array, the keys.
 * One shard's, no locking.
 */
#ifndef SL_OPS_PARTIALS_H
#define SL_OPS_PARTIALS_H

#include <stdint.h>

/* The usual capacity: enough to absorb the keys of a slice on skewed input, small enough to
 * stay in L2 (4096 x ~64 bytes). */
#define SL_PARTIALS_CAP 4096

struct sl_partial_entry {
	uint64_t hash;
	int64_t ns;
	uint32_t koff; /* key bytes in the arena */
	uint32_t klen;
	uint32_t nrows; /* input rows combined into it */
	uint32_t slot;	/* its index in the slot array, to clear on reset */
	int64_t ts;	/* the greatest event time combined (the user's bookkeeping) */
};

struct sl_partials {
	uint32_t cap, n, mask;
	uint32_t block; /* bytes of one accumulator block */
	uint32_t *slot; /* 0 empty, else 1 + entry index */
	struct sl_partial_entry *e;
	uint8_t *acc; /* cap blocks */
	uint8_t *keys;
	size_t kused, kcap;
};

/* A table of at most cap entries of `block` bytes each, or NULL (out of memory). */
struct sl_partials *sl_partials_create(uint32_t cap, uint32_t block);
void sl_partials_destroy(struct sl_partials *t);

/* The entry of (hash, ns, key) into *index: 1 found, 0 created (its block zeroed, nrows 0,
 * ts INT64_MIN), -ENOSPC (full), -ENOMEM (the key arena could not grow). Hot path. */
int sl_partials_get(struct sl_partials *t, uint64_t hash, int64_t ns, const uint8_t *key,
		    uint32_t klen, uint32_t *index);

static inline void *sl_partials_block(const struct sl_partials *t, uint32_t i)
{
	return t->acc + (size_t)i * t->block;
}

static inline const uint8_t *sl_partials_key(const struct sl_partials *t, uint32_t i)
{
	return t->keys + t->e[i].koff;
}

/* Forgets every entry (their blocks hold no out-of-line memory: the caller's kernels). */
void sl_partials_reset(struct sl_partials *t);

#endif
