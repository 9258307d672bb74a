/*
 * timer_test.c - the timer service against a brute-force oracle: random add (with
 * duplicates), delete and pop over keys that share hashes and prefixes, times with many ties,
 * several namespaces; every pop must return the oracle's minimum in (at, hash, key bytes,
 * ns) order. Also a 200k-timer run in time order and the too-long-key error.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "kvtab.h"
#include "tests/test.h"
#include "timer.h"

#define NK 12
#define NT 40
#define NNS 3

static bool live[NK][NT][NNS];
static uint8_t keys[NK][8];
static uint32_t klens[NK];
static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t hash_of(int k)
{
	return (uint64_t)(k % 3) * 1000; /* many keys per hash: ties resolved by key bytes */
}

static int keycmp(int a, int b)
{
	uint32_t la = klens[a], lb = klens[b];
	int c = memcmp(keys[a], keys[b], la < lb ? la : lb);

	return c ? c : (la < lb ? -1 : la > lb);
}

/* Oracle minimum with at <= until; false if none. */
static bool oracle_min(sl_ts_t until, int *rk, int *rt, int *rn)
{
	bool found = false;

	for (int t = 0; t < NT && t <= until; t++) {
		for (int k = 0; k < NK; k++) {
			for (int n = 0; n < NNS; n++) {
				if (!live[k][t][n])
					continue;
				if (!found || t < *rt ||
				    (t == *rt && (hash_of(k) < hash_of(*rk) ||
						  (hash_of(k) == hash_of(*rk) &&
						   (keycmp(k, *rk) < 0 ||
						    (k == *rk && n < *rn)))))) {
					*rk = k;
					*rt = t;
					*rn = n;
					found = true;
				}
			}
		}
		if (found)
			return true;
	}
	return found;
}

static void test_oracle(void)
{
	struct sl_timers *tm = sl_timers_create();
	size_t count = 0;
	struct sl_timer out;

	T_ASSERT(tm);
	T_ASSERT(sl_timers_next(tm) == SL_TS_MAX);
	T_ASSERT(!sl_timers_pop(tm, SL_TS_MAX, &out));
	for (int k = 0; k < NK; k++) {
		/* lengths 1..6 with shared prefixes: "a", "ab", "abc", "b", ... */
		klens[k] = 1 + (uint32_t)(k % 6);
		for (uint32_t i = 0; i < klens[k]; i++)
			keys[k][i] = (uint8_t)('a' + (k / 6) + i);
	}
	for (int round = 0; round < 200000; round++) {
		int k = (int)(rnd() % NK), t = (int)(rnd() % NT), n = (int)(rnd() % NNS);
		uint64_t op = rnd() % 10;

		if (op < 6) {
			T_ASSERT(sl_timers_add(tm, t, hash_of(k), keys[k], klens[k], (uint64_t)n) ==
				 0);
			count += !live[k][t][n];
			live[k][t][n] = true;
		} else if (op < 8) {
			sl_timers_delete(tm, t, hash_of(k), keys[k], klens[k], (uint64_t)n);
			count -= live[k][t][n];
			live[k][t][n] = false;
		} else {
			sl_ts_t until = (sl_ts_t)(rnd() % NT);
			int ok = 0, ot = 0, on = 0;
			bool want = oracle_min(until, &ok, &ot, &on);

			T_ASSERT(sl_timers_pop(tm, until, &out) == want);
			if (want) {
				T_ASSERT_EQ_I64(out.at, ot);
				T_ASSERT(out.hash == hash_of(ok));
				T_ASSERT(out.klen == klens[ok]);
				T_ASSERT(memcmp(out.key, keys[ok], klens[ok]) == 0);
				T_ASSERT_EQ_I64(out.ns, on);
				live[ok][ot][on] = false;
				count--;
			}
		}
		T_ASSERT_EQ_I64(sl_timers_count(tm), count);
		if (count) {
			int ok = 0, ot = 0, on = 0;

			T_ASSERT(oracle_min(NT, &ok, &ot, &on));
			T_ASSERT_EQ_I64(sl_timers_next(tm), ot);
		} else {
			T_ASSERT(sl_timers_next(tm) == SL_TS_MAX);
		}
	}
	sl_timers_destroy(tm);
}

static void test_many(void)
{
	enum { N = 200000 };
	struct sl_timers *tm = sl_timers_create();
	struct sl_timer out;
	sl_ts_t last = SL_TS_MIN;
	size_t popped = 0;

	T_ASSERT(tm);
	for (uint64_t i = 0; i < N; i++) {
		uint64_t k = i % 5000;
		sl_ts_t at = (sl_ts_t)((i * 7919) % 100003);

		T_ASSERT(sl_timers_add(tm, at, k * 0x9e3779b97f4a7c15ull, &k, 8, 0) == 0);
	}
	while (sl_timers_pop(tm, 50000, &out)) {
		T_ASSERT(out.at >= last && out.at <= 50000);
		last = out.at;
		popped++;
	}
	T_ASSERT(sl_timers_next(tm) > 50000);
	while (sl_timers_pop(tm, SL_TS_MAX, &out)) {
		T_ASSERT(out.at >= last);
		last = out.at;
		popped++;
	}
	T_ASSERT_EQ_I64(popped, N);
	T_ASSERT_EQ_I64(sl_timers_count(tm), 0);
	sl_timers_destroy(tm);
	sl_timers_destroy(NULL);
}

static void test_long_key(void)
{
	static uint8_t big[SL_KVTAB_KEY_MAX];
	struct sl_timers *tm = sl_timers_create();

	T_ASSERT(tm);
	T_ASSERT(sl_timers_add(tm, 1, 1, big, SL_KVTAB_KEY_MAX - 7, 0) == -EINVAL);
	T_ASSERT(sl_timers_add(tm, 1, 1, big, SL_KVTAB_KEY_MAX - 8, 0) == 0);
	T_ASSERT(sl_timers_add(tm, 1, 1, big, SL_KVTAB_KEY_MAX - 8, 0) == 0);
	T_ASSERT_EQ_I64(sl_timers_count(tm), 1);
	sl_timers_destroy(tm);
}

int main(void)
{
	test_oracle();
	test_many();
	test_long_key();
	return T_EXIT_PASS;
}
