/*
 * keyed_bench.c - figures 3 to 6 of the runtime issue: keyed event-time windows over 1M keys,
 * events/s per core, each against a reference measured in the same run.
 *
 * Data (the same for every job): datagen rows (user_id BIGINT uniform in [0, 1M), seq BIGINT
 * 0, 1, 2, ...), one split per shard, as fast as possible. Event time is assigned from seq:
 * ts = 2024-01-01 + seq * 60000 / PER_WINDOW ms, so each minute of event time holds
 * PER_WINDOW (4M) events and a 1-minute window about 982K distinct keys (1M * (1 - e^-4)):
 * the state holds ~1M live keys per window. Watermark: bounded delay 0, every 200 ms. The
 * run is 40M rows by default: 10 minutes of event time.
 *
 *   tumble   key_by user_id -> TUMBLE 1 min COUNT(*) -> blackhole          (2 shards, 1 shard)
 *   hop      key_by user_id -> HOP 10 min / 1 min COUNT(*) -> blackhole    (2 shards)
 *   session  key_by user_id -> SESSION gap 30 min COUNT(*) -> blackhole    (2 shards)
 *   ceiling  one thread: generate the same (user_id, ts), encode the key as the exchange
 *            does (tag byte + 8 bytes), sl_hash_bytes, increment the key's count in a
 *            minimal open-addressing table (linear probing, 2^21 slots of 32 bytes, slot
 *            lines prefetched 16 records ahead); at each window end scan the table ("fire":
 *            sum and count the live keys) and clear it. The work of a tumbling count without
 *            a runtime, an exchange, or general state.
 *
 * Figures: keyed/tumble_events_per_core (2 shards, ratio to the ceiling),
 * keyed/hop_events_per_core and keyed/session_events_per_core (ratio to tumbling),
 * keyed/scaling_1_to_2 (tumbling events/s on 2 shards over 1 shard). Each job checks that
 * every record arrived and that its windows emitted the expected number of results; the
 * 1-shard tumble reads the ceiling's generator stream and must fire exactly its results.
 *
 * Options: --rows N (40M), --per-window N (4M), --only ceiling|tumble|tumble1|hop|session
 * (one contender: for perf record). Output: the FIGURE protocol of bench/README.md.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/connectors.h>

#include "hash.h"
#include "rand.h"

#define SEED 11
#define BASE_TS 1704067200000LL /* 2024-01-01 00:00:00 UTC, a whole minute */
#define NUSERS 1000000
#define MINUTE 60000LL

static int64_t per_window = 4000000;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void pin_main(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (cpu >= 0) {
		CPU_SET(cpu, &set);
	} else {
		for (int i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	}
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static inline sl_ts_t ts_of(int64_t seq)
{
	return BASE_TS + seq * MINUTE / per_window;
}

/* Event time from the seq column (the source's timestamp assigner). Hot path. */
static sl_ts_t assign_ts(const struct sl_row *row, void *arg)
{
	return ts_of(sl_row_i64(row, 1));
}

/* ---- the jobs ---- */

enum { TUMBLE, HOP, SESSION };
static const char *const kind_name[] = { "tumble", "hop", "session" };

/* Runs one job; returns events/s per shard and sets *results to the window results. */
static double run_job(int kind, int nshards, int64_t rows, uint64_t *results)
{
	struct sl_schema *sch = sl_schema_create();
	struct sl_datagen_field fields[2] = {
		{ .kind = SL_GEN_RANDOM, .min = 0, .max = NUSERS - 1 },
		{ .kind = SL_GEN_SEQUENCE, .start = 0, .end = rows - 1 },
	};
	struct sl_datagen_cfg gen = { .schema = sch, .fields = fields, .number_of_rows = rows,
				      .nsplits = nshards, .seed = SEED };
	struct sl_wm_strategy wm = { .kind = SL_WM_BOUNDED, .max_delay_ms = 0, .ts_field = -1,
				     .assign = assign_ts, .interval_ms = 200 };
	struct sl_window_spec win = { .kind = SL_WIN_TUMBLE, .size_ms = MINUTE };
	struct sl_agg_spec count = { .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "n" };
	struct sl_run_opts opts = { .nshards = nshards, .cores = nshards == 1 ? "0" : "0-1" };
	uint64_t sunk = 0;
	struct sl_blackhole_sink_cfg sink = { .rows = &sunk };
	int key = 0;
	int64_t minutes = (rows + per_window - 1) / per_window;
	double t0, t1, lo, hi;
	struct sl_job_stats st;
	struct sl_stream *s;
	struct sl_job *job;

	if (kind == HOP)
		win = (struct sl_window_spec){ .kind = SL_WIN_HOP, .size_ms = 10 * MINUTE,
					       .slide_ms = MINUTE };
	else if (kind == SESSION)
		win = (struct sl_window_spec){ .kind = SL_WIN_SESSION, .gap_ms = 30 * MINUTE };
	job = sl_job_create(kind_name[kind]);
	if (!sch || !job) {
		fprintf(stderr, "keyed_bench: out of memory\n");
		exit(1);
	}
	sl_schema_add(sch, "user_id", SL_TYPE_BIGINT);
	sl_schema_add(sch, "seq", SL_TYPE_BIGINT);
	s = sl_job_source(job, "datagen", &sl_datagen_source_ops, &gen, sch, &wm);
	s = sl_stream_window(sl_stream_key_by(s, &key, 1), kind_name[kind], &win, &count, 1);
	sl_stream_sink(s, "blackhole", &sl_blackhole_sink_ops, &sink);
	t0 = now_s();
	if (sl_job_run(job, &opts)) {
		fprintf(stderr, "keyed_bench: %s: %s\n", kind_name[kind], sl_job_error(job)->msg);
		exit(1);
	}
	t1 = now_s();
	sl_job_stats(job, &st);
	/*
	 * Expected results: a window (or a session: with a 30-minute gap and ~4 events per key
	 * per minute every key has one session) holds ~(1 - e^-(events per key)) of the keys.
	 * Tumbling: `minutes` windows; hopping: each minute's events are in 10 windows, the
	 * first and last 9 windows partly; session: one per key.
	 */
	if (kind == TUMBLE)
		lo = hi = (double)minutes * NUSERS * (1 - exp(-(double)per_window / NUSERS));
	else if (kind == HOP)
		lo = hi = (double)(minutes + 9) * NUSERS *
			  (1 - exp(-(double)per_window * (minutes < 10 ? minutes : 10) / NUSERS));
	else
		lo = hi = NUSERS * (1 - exp(-(double)rows / NUSERS));
	if (kind == HOP) /* the edge windows hold fewer keys */
		lo *= 0.5;
	if (st.records_in != (uint64_t)rows || sunk != st.records_out ||
	    (double)sunk < lo * 0.97 || (double)sunk > hi * 1.03) {
		fprintf(stderr, "keyed_bench: %s on %d shards: %llu records in (want %lld), %llu "
				"results (want %.0f..%.0f)\n", kind_name[kind], nshards,
			(unsigned long long)st.records_in, (long long)rows,
			(unsigned long long)sunk, lo, hi);
		exit(1);
	}
	fprintf(stderr, "%s, %d shards: %.2f s, %llu results, %llu ring-full\n", kind_name[kind],
		nshards, t1 - t0, (unsigned long long)sunk, (unsigned long long)st.ring_full);
	*results = sunk;
	sl_job_destroy(job);
	sl_schema_destroy(sch);
	return (double)rows / (t1 - t0) / nshards;
}

/* ---- the ceiling ---- */

/* datagen's generator (engine/base/rand.h, initialised as datagen_open() initialises split 0 of 1): the
 * same user ids. */
struct gen {
	uint64_t s[4];
};

#define TAB_BITS 21
#ifndef BATCH
#define BATCH 16 /* records generated and prefetched ahead of their lookups */
#endif

struct slot {
	uint64_t hash;    /* 0: empty (a zero hash is stored as 1) */
	uint8_t key[16];  /* the encoded key: tag 1 + 8 value bytes */
	uint32_t klen;
	uint32_t count;
};

struct ceil_tab {
	struct slot *s;
	uint64_t mask;
	uint64_t live;
};

/* Counts one record of key (key, klen, hash). Hot path of the ceiling. */
static inline void tab_inc(struct ceil_tab *t, const uint8_t *key, uint32_t klen, uint64_t h)
{
	uint64_t i = h & t->mask;

	for (;; i = (i + 1) & t->mask) {
		struct slot *s = &t->s[i];

		if (s->hash == h && s->klen == klen && !memcmp(s->key, key, klen)) {
			s->count++;
			return;
		}
		if (!s->hash) {
			s->hash = h;
			memcpy(s->key, key, klen);
			s->klen = klen;
			s->count = 1;
			t->live++;
			return;
		}
	}
}

/* Fires the window: reads every live count (as an emitter would), clears the table. */
static uint64_t tab_fire(struct ceil_tab *t, uint64_t *events)
{
	uint64_t keys = 0;

	for (uint64_t i = 0; i <= t->mask; i++) {
		if (t->s[i].hash) {
			*events += t->s[i].count;
			keys++;
		}
	}
	memset(t->s, 0, (t->mask + 1) * sizeof(*t->s));
	t->live = 0;
	return keys;
}

/* Returns events/s; *results gets the (key, window) results fired. */
static double run_ceiling(int64_t rows, uint64_t *results)
{
	struct ceil_tab t = { .mask = (1ull << TAB_BITS) - 1 };
	uint8_t key[BATCH][16];
	uint64_t hash[BATCH], counted = 0, x = SEED ^ 0xd1b54a32d192ed03ull;
	sl_ts_t ts[BATCH], end = BASE_TS + MINUTE;
	struct gen g;
	double t0, t1;

	t.s = aligned_alloc(64, (t.mask + 1) * sizeof(*t.s));
	if (!t.s) {
		fprintf(stderr, "keyed_bench: out of memory\n");
		exit(1);
	}
	memset(t.s, 0, (t.mask + 1) * sizeof(*t.s));
	sl_rand_seed(g.s, x);
	*results = 0;
	pin_main(0);
	t0 = now_s();
	for (int64_t i = 0; i < rows; i += BATCH) {
		int n = rows - i < BATCH ? (int)(rows - i) : BATCH;

		/* generate, encode, hash and prefetch a batch: its misses overlap */
		for (int j = 0; j < n; j++) {
			uint64_t id = sl_rand_below(g.s, NUSERS);

			key[j][0] = 1;
			memcpy(&key[j][1], &id, 8);
			hash[j] = sl_hash_bytes(key[j], 9);
			hash[j] += !hash[j];
			ts[j] = ts_of(i + j);
			__builtin_prefetch(&t.s[hash[j] & t.mask], 1);
		}
		for (int j = 0; j < n; j++) {
			if (ts[j] >= end) {
				*results += tab_fire(&t, &counted);
				end += MINUTE;
			}
			tab_inc(&t, key[j], 9, hash[j]);
		}
	}
	*results += tab_fire(&t, &counted);
	t1 = now_s();
	pin_main(-1);
	free(t.s);
	if (counted != (uint64_t)rows) {
		fprintf(stderr, "keyed_bench: ceiling counted %llu of %lld events\n",
			(unsigned long long)counted, (long long)rows);
		exit(1);
	}
	return (double)rows / (t1 - t0);
}

static void usage(void)
{
	fprintf(stderr, "usage: keyed_bench [--rows N] [--per-window N] "
			"[--only ceiling|tumble|tumble1|hop|session]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int64_t rows = 40000000;
	const char *only = NULL;
	double ceil, tumble, tumble1, hop, session;
	uint64_t res, res1, other;

	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--rows"))
			rows = strtoll(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--per-window"))
			per_window = strtoll(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--only"))
			only = argv[++i];
		else
			usage();
	}
	if (rows < 1000 || per_window < 1000)
		usage();
	if (only) {
		double r;

		if (!strcmp(only, "ceiling"))
			r = run_ceiling(rows, &res);
		else if (!strcmp(only, "tumble"))
			r = run_job(TUMBLE, 2, rows, &other);
		else if (!strcmp(only, "tumble1"))
			r = run_job(TUMBLE, 1, rows, &other);
		else if (!strcmp(only, "hop"))
			r = run_job(HOP, 2, rows, &other);
		else if (!strcmp(only, "session"))
			r = run_job(SESSION, 2, rows, &other);
		else
			usage();
		printf("FIGURE keyed/only_%s %.0f events/s - -\n", only, r);
		return 0;
	}

	ceil = run_ceiling(rows, &res);
	fprintf(stderr, "ceiling: %.1fM events/s, %llu results\n", ceil / 1e6,
		(unsigned long long)res);
	tumble = run_job(TUMBLE, 2, rows, &other);
	tumble1 = run_job(TUMBLE, 1, rows, &res1);
	/* one shard reads the ceiling's single generator stream: the same (key, window) set */
	if (res1 != res) {
		fprintf(stderr, "keyed_bench: tumble on 1 shard fired %llu results, the ceiling "
				"%llu\n", (unsigned long long)res1, (unsigned long long)res);
		return 1;
	}
	hop = run_job(HOP, 2, rows, &other);
	session = run_job(SESSION, 2, rows, &other);
	fprintf(stderr, "per core: ceiling %.1fM, tumble %.1fM (1 shard %.1fM), hop %.1fM, "
			"session %.1fM events/s\n", ceil / 1e6, tumble / 1e6, tumble1 / 1e6,
		hop / 1e6, session / 1e6);
	printf("FIGURE keyed/tumble_events_per_core %.0f events/s %.4f keyed/ceiling_events\n",
	       tumble, tumble / ceil);
	printf("FIGURE keyed/hop_events_per_core %.0f events/s %.4f keyed/tumble_events_per_core\n",
	       hop, hop / tumble);
	printf("FIGURE keyed/session_events_per_core %.0f events/s %.4f "
	       "keyed/tumble_events_per_core\n", session, session / tumble);
	printf("FIGURE keyed/scaling_1_to_2 %.4f x %.4f keyed/tumble_events_1shard\n",
	       2 * tumble / tumble1, 2 * tumble / tumble1);
	printf("FIGURE keyed/tumble_events_1shard %.0f events/s - -\n", tumble1);
	printf("FIGURE keyed/ceiling_events %.0f events/s - -\n", ceil);
	return 0;
}
