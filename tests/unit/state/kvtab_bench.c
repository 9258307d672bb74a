/*
 * kvtab_bench.c - lookup cost of the heap state table with 1M keys (the keyed tumbling count
 * benchmark's state size), next to this machine's memory latency (the physical ceiling:
 * one dependent DRAM miss, and the throughput of independent misses).
 *
 * Keys are 9-byte encoded BIGINTs built and hashed in the loop, as a record carries them.
 * Variants: plain get/put, put with the slot prefetched D ahead, put with the two-stage
 * prefetch (slot 2D ahead, entry D ahead), and a tumbling-window pattern (ns = window end).
 * Prints ns per operation; asserts nothing about time (a `meson benchmark` target).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hash.h"
#include "kvtab.h"

#define NKEYS 1000000
#define NOPS 10000000
#define D 8

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint32_t *order;

static inline uint64_t key_of(uint64_t id, uint8_t *b)
{
	b[0] = 1;
	memcpy(b + 1, &id, 8);
	return sl_hash_bytes(b, 9);
}

static inline uint64_t hash_of(uint64_t id)
{
	uint8_t b[9];

	return key_of(id, b);
}

static void memory_ceiling(void)
{
	size_t m = (64u << 20) / 8;
	uint64_t *a = malloc(m * 8), x = 88172645463325252ull, s = 0, j = 0;
	double t0, t1;

	for (size_t i = 0; i < m; i++)
		a[i] = i * 0x9e3779b97f4a7c15ull;
	t0 = now_ns();
	for (int i = 0; i < 2000000; i++)
		j = (a[j] ^ (x = x * 6364136223846793005ull + 1)) % m;
	t1 = now_ns();
	printf("ceiling: dependent random read, 64 MB:   %6.1f ns\n", (t1 - t0) / 2e6);
	t0 = now_ns();
	for (int i = 0; i < 10000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		s += a[x % m];
	}
	t1 = now_ns();
	printf("ceiling: independent random reads, 64 MB: %6.1f ns (%llu)\n", (t1 - t0) / 1e7,
	       (unsigned long long)(s + j));
	free(a);
}

static double run(struct sl_kvtab *t, int mode, uint64_t ns_every)
{
	uint8_t b[9];
	bool c;
	double t0 = now_ns();

	for (uint32_t i = 0; i < NOPS; i++) {
		uint64_t h = key_of(order[i], b);
		uint64_t ns = ns_every ? 1000 * (1 + i / ns_every) : 0;

		if (mode == 1 && i + D < NOPS) {
			sl_kvtab_prefetch(t, hash_of(order[i + D]), 0);
		} else if (mode == 2 && i + 2 * D < NOPS) {
			sl_kvtab_prefetch(t, hash_of(order[i + 2 * D]), 0);
			sl_kvtab_prefetch_entry(t, hash_of(order[i + D]),
						ns_every ? 1000 * (1 + (i + D) / ns_every) : 0);
		}
		if (mode == 3)
			(void)!sl_kvtab_get(t, h, b, 9, ns);
		else
			(*(uint64_t *)sl_kvtab_put(t, h, b, 9, ns, &c))++;
	}
	return (now_ns() - t0) / NOPS;
}

int main(void)
{
	struct sl_kvtab *t = sl_kvtab_create(8, 128), *w = sl_kvtab_create(8, 128);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint8_t b[9];
	double t0;
	bool c;

	order = malloc(sizeof(*order) * NOPS);
	if (!t || !w || !order)
		return 1;
	for (uint32_t i = 0; i < NOPS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		order[i] = (uint32_t)(x % NKEYS);
	}
	memory_ceiling();
	t0 = now_ns();
	for (uint32_t i = 0; i < NKEYS; i++)
		*(uint64_t *)sl_kvtab_put(t, key_of(i, b), b, 9, 0, &c) = i;
	printf("insert 1M keys:                          %6.1f ns/op\n", (now_ns() - t0) / NKEYS);
	printf("get, 1M keys, random:                    %6.1f ns/op\n", run(t, 3, 0));
	printf("put (hit), 1M keys, random:              %6.1f ns/op\n", run(t, 0, 0));
	printf("put, slot prefetched %d ahead:            %6.1f ns/op\n", D, run(t, 1, 0));
	printf("put, two-stage prefetch (%d/%d ahead):    %6.1f ns/op\n", 2 * D, D, run(t, 2, 0));
	printf("tumbling pattern (ns = end, 5 windows):  %6.1f ns/op\n", run(w, 0, NOPS / 5));
	printf("  same, two-stage prefetch:              %6.1f ns/op\n", run(w, 2, NOPS / 5));
	for (uint32_t i = 0; i < NOPS; i++)
		order[i] &= 1023;
	printf("put, 1K hot keys (in cache):             %6.1f ns/op\n", run(t, 0, 0));
	printf("table: %zu entries, %.0f MB; window table %zu entries, %.0f MB\n",
	       sl_kvtab_count(t), sl_kvtab_bytes(t) / 1e6, sl_kvtab_count(w),
	       sl_kvtab_bytes(w) / 1e6);
	sl_kvtab_destroy(w);
	sl_kvtab_destroy(t);
	free(order);
	return 0;
}
