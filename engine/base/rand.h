/*
 * rand.h - the project's one pseudo-random generator: xoshiro256** (Blackman & Vigna: four
 * words of state, a few shifts and multiplies a draw, passes BigCrush), its state filled
 * from a seed by splitmix64, and the draws built on it. datagen, the Nexmark generator and
 * the benchmarks' ceiling loops all use it, so a ceiling loop draws exactly the values of
 * the connector it stands beside. Header only, so a draw inlines into the record loop. The
 * caller owns the state (four words anywhere); one thread per state. Not for secrets.
 */
#ifndef SL_BASE_RAND_H
#define SL_BASE_RAND_H

#include <stdint.h>

/* splitmix64: advances *x and returns the next value (how a seed becomes a state). */
static inline uint64_t sl_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Fills the state s from seed x. */
static inline void sl_rand_seed(uint64_t s[4], uint64_t x)
{
	for (int i = 0; i < 4; i++)
		s[i] = sl_splitmix64(&x);
}

static inline uint64_t sl_rand_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* The next 64 random bits. */
static inline uint64_t sl_rand_next(uint64_t s[4])
{
	uint64_t r = sl_rand_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = sl_rand_rotl(s[3], 45);
	return r;
}

/* Uniform in [0, range) by multiply-shift (Lemire: no division, bias below range / 2^64);
 * range 0 means all 2^64 values. */
static inline uint64_t sl_rand_below(uint64_t s[4], uint64_t range)
{
	uint64_t x = sl_rand_next(s);

	return range ? (uint64_t)(((unsigned __int128)x * range) >> 64) : x;
}

/* Uniform double in [0, 1) from the top 53 bits. */
static inline double sl_rand_unit(uint64_t s[4])
{
	return (double)(sl_rand_next(s) >> 11) * 0x1.0p-53;
}

#endif
