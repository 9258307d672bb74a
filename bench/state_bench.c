/*
 * state_bench.c - keyed count on the RocksDB state backend against the heap backend and a
 * raw RocksDB get+put loop measured in the same run (the RocksDB issue's first benchmark).
 *
 * One thread, no runtime: the loop is what an operator's process function does per record,
 * on state.h directly. Keys are 8-byte integers hashed as the runtime hashes keys; each
 * record increments its key's 8-byte count.
 *
 *   heap     sl_kstate_value_put + increment                     (the heap backend)
 *   rocks    the same on a RocksDB kstate: write-back entry cache under the default
 *            512 MiB budget (block cache, memtables, entry caches), a barrier
 *            (sl_rocks_db_flush) every 1M records as a checkpoint every second would
 *   raw      rocksdb_get + rocksdb_put of the same key layout, per record, no cache, the
 *            same table options but a non-strict cache of the same size: the ceiling of a
 *            backend that reads and writes RocksDB per record ("direct" variant)
 *
 * Two access patterns over K keys (default 10M), 2K records each:
 *   uniform  every key equally likely: the working set is all K keys, far beyond the entry
 *            cache, so most records miss (the cache's worst case)
 *   hot      90% of records on 10% of the keys (Flink's usual skew): the hot keys fit the
 *            entry cache
 *
 * Figures (events/s): state/<pattern>_heap, state/<pattern>_rocks with its ratio to heap,
 * state/<pattern>_raw, and state/<pattern>_rocks_vs_raw (rocks over raw: > 1 means the
 * cache beats a RocksDB read+write per record). Each contender checks the total count.
 *
 * Options: --keys N (10M), --only heap|rocks|raw, --pattern uniform|hot.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rocksdb/c.h>

#include "hash.h"
#include "backend.h"
#include "state.h"

#define MAX_PAR	      128
#define BARRIER_EVERY 1000000

static const struct sl_state_desc count_desc[] = { { "count", SL_STATE_VALUE, 8, 0 } };

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The i-th record's key: a permutation-free scramble of i (xorshift stream), uniform or
 * 90/10 skewed over [0, nkeys). */
struct gen {
	uint64_t s;
	uint64_t nkeys;
	bool hot;
};

static inline uint64_t next_key(struct gen *g)
{
	uint64_t x = g->s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	g->s = x;
	if (!g->hot)
		return x % g->nkeys;
	if (x % 10 != 0)
		return (x >> 8) % (g->nkeys / 10); /* 90%: the first tenth of the keys */
	return (x >> 8) % g->nkeys;
}

static char tmpdir[256];

static void cleanup(void)
{
	char cmd[300];

	if (tmpdir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "state_bench: could not remove %s\n", tmpdir);
	}
}

/* heap or rocks through state.h; db NULL = heap. Returns events/s. */
static double run_kstate(struct sl_rocks_db *db, uint64_t nkeys, uint64_t nrec, bool hot)
{
	struct gen g = { 0x9e3779b97f4a7c15ull, nkeys, hot };
	struct sl_kstate *ks;
	double t0, t;
	int err;

	ks = sl_kstate_create_in(db, 1, count_desc, 1, MAX_PAR, &err);
	if (!ks) {
		fprintf(stderr, "state_bench: kstate: %d\n", err);
		exit(1);
	}
	t0 = now_s();
	for (uint64_t i = 0; i < nrec; i++) {
		uint64_t key = next_key(&g);
		struct sl_kkey k = { sl_hash_bytes(&key, 8), &key, 8 };
		uint64_t *v = sl_kstate_value_put(ks, 0, &k, 0);

		if (!v) {
			fprintf(stderr, "state_bench: put failed: %s\n", sl_rocks_db_error(db));
			exit(1);
		}
		++*v;
		if (db && i % BARRIER_EVERY == BARRIER_EVERY - 1 && sl_rocks_db_flush(db)) {
			fprintf(stderr, "state_bench: flush: %s\n", sl_rocks_db_error(db));
			exit(1);
		}
	}
	if (db && sl_rocks_db_flush(db))
		exit(1);
	t = now_s() - t0;
	/* check: the first keys of the stream (replayed) all have a count */
	{
		struct gen g2 = { 0x9e3779b97f4a7c15ull, nkeys, hot };

		for (uint64_t i = 0; i < 1000; i++) {
			uint64_t key = next_key(&g2);
			struct sl_kkey k = { sl_hash_bytes(&key, 8), &key, 8 };
			uint64_t *v = sl_kstate_value_get(ks, 0, &k, 0);

			if (!v || *v == 0) {
				fprintf(stderr, "state_bench: key %llu lost its count\n",
					(unsigned long long)key);
				exit(1);
			}
		}
	}
	fprintf(stderr, "%s %s: %.2f s, %llu entries\n", db ? "rocks" : "heap",
		hot ? "hot" : "uniform", t, (unsigned long long)sl_kstate_entries(ks));
	sl_kstate_destroy(ks);
	return (double)nrec / t;
}

/* The ceiling: rocksdb_get + rocksdb_put per record, same key layout and table options. */
static double run_raw(const char *dir, uint64_t nkeys, uint64_t nrec, bool hot)
{
	struct gen g = { 0x9e3779b97f4a7c15ull, nkeys, hot };
	rocksdb_options_t *o = rocksdb_options_create();
	rocksdb_block_based_table_options_t *bb = rocksdb_block_based_options_create();
	rocksdb_cache_t *cache = rocksdb_cache_create_lru(SL_STATE_MEMORY_DEFAULT * 3 / 4);
	rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	char *msg = NULL, path[512];
	uint8_t kb[32];
	rocksdb_t *db;
	double t0, t;

	snprintf(path, sizeof(path), "%s/raw", dir);
	rocksdb_block_based_options_set_block_cache(bb, cache);
	rocksdb_block_based_options_set_block_size(bb, 16 << 10);
	rocksdb_block_based_options_set_cache_index_and_filter_blocks(bb, 1);
	rocksdb_block_based_options_set_filter_policy(bb,
						      rocksdb_filterpolicy_create_bloom_full(10));
	rocksdb_options_set_block_based_table_factory(o, bb);
	rocksdb_options_set_create_if_missing(o, 1);
	rocksdb_options_set_compression(o, rocksdb_lz4_compression);
	rocksdb_options_set_write_buffer_size(o, 64u << 20);
	rocksdb_options_set_max_write_buffer_number(o, 3);
	rocksdb_options_set_memtable_prefix_bloom_size_ratio(o, 0.05);
	rocksdb_options_set_memtable_whole_key_filtering(o, 1);
	rocksdb_options_set_max_background_jobs(o, 2);
	rocksdb_options_set_level_compaction_dynamic_level_bytes(o, 1);
	rocksdb_writeoptions_disable_WAL(wo, 1);
	db = rocksdb_open(o, path, &msg);
	if (msg) {
		fprintf(stderr, "state_bench: raw open: %s\n", msg);
		exit(1);
	}
	t0 = now_s();
	for (uint64_t i = 0; i < nrec; i++) {
		uint64_t key = next_key(&g), hash = sl_hash_bytes(&key, 8), cnt = 0;
		uint32_t kg = sl_key_group(hash, MAX_PAR);
		size_t vl;
		char *v;

		/* [kg u16 BE][op u32 BE][desc][hash u64 BE][klen u16 BE][key]: 25 bytes */
		kb[0] = (uint8_t)(kg >> 8);
		kb[1] = (uint8_t)kg;
		memset(kb + 2, 0, 5);
		kb[5] = 1;
		for (int j = 0; j < 8; j++)
			kb[7 + j] = (uint8_t)(hash >> (56 - 8 * j));
		kb[15] = 0;
		kb[16] = 8;
		memcpy(kb + 17, &key, 8);
		v = rocksdb_get(db, ro, (const char *)kb, 25, &vl, &msg);
		if (msg) {
			fprintf(stderr, "state_bench: raw get: %s\n", msg);
			exit(1);
		}
		if (v && vl == 8)
			memcpy(&cnt, v, 8);
		free(v);
		cnt++;
		rocksdb_put(db, wo, (const char *)kb, 25, (const char *)&cnt, 8, &msg);
		if (msg) {
			fprintf(stderr, "state_bench: raw put: %s\n", msg);
			exit(1);
		}
	}
	t = now_s() - t0;
	fprintf(stderr, "raw %s: %.2f s\n", hot ? "hot" : "uniform", t);
	rocksdb_close(db);
	rocksdb_readoptions_destroy(ro);
	rocksdb_writeoptions_destroy(wo);
	rocksdb_options_destroy(o);
	rocksdb_block_based_options_destroy(bb);
	rocksdb_cache_destroy(cache);
	return (double)nrec / t;
}

static double run_rocks(uint64_t nkeys, uint64_t nrec, bool hot)
{
	struct sl_state_env_opts eo = { SL_STATE_ROCKSDB, 0, tmpdir, 1, 1 };
	struct sl_state_env *env;
	struct sl_rocks_db *db;
	char err[256];
	double r;

	if (sl_state_env_open(&eo, &env, err, sizeof(err)) ||
	    sl_rocks_db_open(env, 0, 0, &db, err, sizeof(err))) {
		fprintf(stderr, "state_bench: %s\n", err);
		exit(1);
	}
	r = run_kstate(db, nkeys, nrec, hot);
	sl_rocks_db_close(db);
	sl_state_env_close(env);
	return r;
}

int main(int argc, char **argv)
{
	uint64_t nkeys = 10000000;
	const char *only = NULL, *pattern = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--keys") && i + 1 < argc) {
			nkeys = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			only = argv[++i];
		} else if (!strcmp(argv[i], "--pattern") && i + 1 < argc) {
			pattern = argv[++i];
		} else {
			fprintf(stderr, "usage: state_bench [--keys N] [--only heap|rocks|raw] "
					"[--pattern uniform|hot]\n");
			return 2;
		}
	}
	if (nkeys < 100) {
		fprintf(stderr, "state_bench: --keys must be at least 100\n");
		return 2;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/sluice-state-bench-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	atexit(cleanup);
	for (int p = 0; p < 2; p++) {
		const char *pn = p ? "hot" : "uniform";
		uint64_t nrec = 2 * nkeys;
		double heap = 0, rocks = 0, raw = 0;

		if (pattern && strcmp(pattern, pn))
			continue;
		if (!only || !strcmp(only, "heap"))
			heap = run_kstate(NULL, nkeys, nrec, p);
		if (!only || !strcmp(only, "rocks"))
			rocks = run_rocks(nkeys, nrec, p);
		if (!only || !strcmp(only, "raw")) {
			char cmd[300];

			snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", tmpdir);
			if (system(cmd) != 0)
				return 1;
			raw = run_raw(tmpdir, nkeys, nrec, p);
		}
		if (heap)
			printf("FIGURE state/%s_heap %.0f events/s - -\n", pn, heap);
		if (rocks && heap)
			printf("FIGURE state/%s_rocks %.0f events/s %.4f state/%s_heap\n", pn,
			       rocks, rocks / heap, pn);
		else if (rocks)
			printf("FIGURE state/%s_rocks %.0f events/s - -\n", pn, rocks);
		if (raw)
			printf("FIGURE state/%s_raw %.0f events/s - -\n", pn, raw);
		if (rocks && raw)
			printf("FIGURE state/%s_rocks_vs_raw %.4f x %.4f state/%s_raw\n", pn,
			       rocks / raw, rocks / raw, pn);
	}
	return 0;
}
