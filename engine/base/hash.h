/*
 * hash.h - the key hash used by exchanges, key groups and state tables.
 *
 * One function everywhere, so a record hashed at the sender lands in the key group whose
 * state the receiver owns. 64-bit, seeded by nothing: it must be stable across runs and
 * versions because key groups are persisted in checkpoints and savepoints.
 */
#ifndef SL_BASE_HASH_H
#define SL_BASE_HASH_H

#include <stdint.h>
#include <string.h>

static inline uint64_t sl_hash_mix64(uint64_t h)
{
	/* murmur3 fmix64: full avalanche for single integer keys */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* Hash of `len` bytes. Reads 8 bytes at a time; cost O(len / 8). */
static inline uint64_t sl_hash_bytes(const void *p, uint32_t len)
{
	const uint8_t *s = (const uint8_t *)p;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)len * 0x100000001b3ULL);
	uint64_t w;

	while (len >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ sl_hash_mix64(w)) * 0x9e3779b97f4a7c15ULL;
		s += 8;
		len -= 8;
	}
	if (len) {
		/* the last len bytes, zero-extended (little-endian). A key of 8 bytes or more
		 * loads them as one word ending at its end: a variable-length memcpy was a byte
		 * loop into a stack word, whose reload then waited on the byte stores (14 % of
		 * xout_process's samples for the 9-byte BIGINT key). Same value. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (s != (const uint8_t *)p) { /* at least 8 bytes in all */
			memcpy(&w, s + len - 8, 8);
			w >>= 8 * (8 - len);
		} else
#endif
		{
			w = 0;
			memcpy(&w, s, len);
		}
		h = (h ^ sl_hash_mix64(w)) * 0x9e3779b97f4a7c15ULL;
	}
	return sl_hash_mix64(h);
}

/* Key group of a hash, in [0, max_par). Uses the high bits so tables using the low bits
 * for their slots stay uniform within a group. */
static inline uint32_t sl_key_group(uint64_t hash, uint32_t max_par)
{
	return (uint32_t)(((hash >> 32) * (uint64_t)max_par) >> 32);
}

/* The shard owning key group kg: contiguous ranges, as Flink assigns them, so a change of
 * shard count moves whole ranges. */
static inline uint32_t sl_key_group_shard(uint32_t kg, uint32_t max_par, uint32_t nshards)
{
	return (uint32_t)((uint64_t)kg * nshards / max_par);
}

/* The key groups of shard `shard` of `nshards`: the contiguous range [*lo, *hi) that
 * sl_key_group_shard gives it; empty (*lo >= *hi) when the shard has none. */
static inline void sl_key_group_range(uint32_t max_par, uint32_t nshards, uint32_t shard,
				      uint32_t *lo, uint32_t *hi)
{
	*lo = UINT32_MAX;
	*hi = 0;
	for (uint32_t kg = 0; kg < max_par; kg++) {
		if (sl_key_group_shard(kg, max_par, nshards) != shard)
			continue;
		if (kg < *lo)
			*lo = kg;
		*hi = kg + 1;
	}
}

#endif
