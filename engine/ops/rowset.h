/*
 * rowset.h - a multiset of whole rows kept in one map-state descriptor under the current
 * key: what the regular join keeps of each side and Top-N of each partition.
 *
 * Map keys are the only variable-length state (at most SL_KEY_MAX bytes), so a row is
 * stored as map KEYS [u64 row hash][u16 chunk][<= SL_ROWSET_CHUNK row bytes]: a row of n
 * bytes takes ceil(n / 1014) entries and every row up to SL_ROW_SCRATCH bytes is kept
 * whole. Chunk 0's value is the row's struct sl_rowset_val (the descriptor's value_size);
 * the other chunks' values are zero. The row's bytes are its identity: build it with the
 * row builder, which writes equal rows as equal bytes. Two different rows with the same
 * 64-bit hash would be taken for one (a chance of 2^-64 per pair of rows under one key).
 *
 * Every chunk of a row is written together (sl_rowset_store), so under a TTL the chunks
 * expire together. Shard thread only, inside the operator's callbacks.
 */
#ifndef SL_OPS_ROWSET_H
#define SL_OPS_ROWSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/job.h>
#include <sluice/operator.h>

#include "hash.h"

#define SL_ROWSET_CHUNK 1014u /* SL_KEY_MAX minus the row hash and the chunk index */

/* What a stored row carries besides its bytes. */
struct sl_rowset_val {
	int64_t count; /* copies of the row, >= 1 */
	int64_t aux;   /* the operator's (the join: matches; Top-N: arrival number) */
};

/* A growing array (allocation happens only while a shard's largest key grows it). */
struct sl_rowset_vec {
	void *p;
	size_t n;
	size_t cap;
};

/* One stored row as sl_rowset_scan() found it; its bytes are at s->rows.p + off. */
struct sl_rowset_row {
	size_t off;
	uint32_t len;
	uint64_t h;
	struct sl_rowset_val v;
};

/* What a scan works in: reuse it for every record (per shard), free it at close. */
struct sl_rowset_scan {
	struct sl_rowset_vec ents; /* map entries copied out of state */
	struct sl_rowset_vec keys; /* their key bytes */
	struct sl_rowset_vec rows; /* reassembled rows (8-aligned) */
	struct sl_rowset_vec out;  /* struct sl_rowset_row */
};

/* Makes room for n more elements of `size` bytes; returns the first, or NULL on ENOMEM. */
void *sl_rowset_vec_grow(struct sl_rowset_vec *v, size_t size, size_t n);
void sl_rowset_scan_free(struct sl_rowset_scan *s);

/* The hash a row is stored under. */
static inline uint64_t sl_rowset_hash(const struct sl_row *row)
{
	return sl_hash_bytes(row, row->size);
}

/* Writes every chunk of `row` (hash h) into map `id` with v on chunk 0. 0 or -ENOMEM. */
int sl_rowset_store(struct sl_ctx *ctx, int id, const struct sl_row *row, uint64_t h,
		    const struct sl_rowset_val *v);
void sl_rowset_remove(struct sl_ctx *ctx, int id, const struct sl_row *row, uint64_t h);
/* Copies the row's value into *v; false when the row is not stored. */
bool sl_rowset_get(struct sl_ctx *ctx, int id, const struct sl_row *row, uint64_t h,
		   struct sl_rowset_val *v);
/* Reads every row of map `id` into s->out, ordered by (hash, bytes); a row missing a chunk
 * (a damaged state) is left out. Returns 0 or -ENOMEM. */
int sl_rowset_scan(struct sl_ctx *ctx, int id, struct sl_rowset_scan *s);

static inline const struct sl_row *sl_rowset_row_at(const struct sl_rowset_scan *s,
						    const struct sl_rowset_row *r)
{
	return (const struct sl_row *)((const uint8_t *)s->rows.p + r->off);
}

#endif
