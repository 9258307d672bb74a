/*
 * skew_bench.c - the skew figures of issue 15 (§1): a keyed tumbling count on 2 shards when
 * a few keys carry most of the events, with the two-stage aggregation on (AUTO, the
 * default) and off (ONE_PHASE), against the same job over uniform keys in the same run.
 *
 * Data: datagen's seq column 0, 1, 2, ... on one split per shard; a map turns seq into the
 * key (splitmix64 of seq, so every contender sees the same keys) and event time into
 * 2024-01-01 + seq * 60000 / PER_WINDOW ms (PER_WINDOW = 4M events a minute, as the keyed
 * suite). Watermark: bounded delay 0, every 200 ms. 20M rows: 5 minutes of event time.
 *
 *   uniform  keys uniform over 1M users
 *   hot80    one key (a celebrity user) carries 80 % of the events, the rest uniform over 1M
 *   zipf     Zipf s = 1.2 over 1M users (the top key about 20 %), by inverse CDF over 2^16
 *            quantiles, uniform inside a quantile that spans several keys
 *
 * Every distribution runs as key_by -> TUMBLE 1 min COUNT(*) -> blackhole, with the agg-phase
 * strategy AUTO and ONE_PHASE; each pair must fire the same number of windows and count every
 * record, or the benchmark fails. The uniform and zipf keys also run the updating GROUP BY
 * (key_by -> COUNT(*) per key, changelog -> blackhole) with mini-batch on (200 ms, 4096 keys)
 * in two phases and in one; both must end with the same number of keys.
 *
 * Figures (events/s per core): skew/hot80_tumble and skew/zipf_tumble with their ratio to
 * skew/uniform_tumble (target >= 0.9), skew/hot80_gain and skew/zipf_gain (two phases over
 * one on the same keys), skew/uniform_tumble with its ratio to its one-phase run (what the
 * local stage costs where nothing combines), and the one-phase figures themselves;
 * skew/zipf_groupby with its ratio to skew/uniform_groupby (target >= 0.9) and
 * skew/zipf_groupby_gain.
 *
 * Options: --rows N (20M), --only uniform|hot80|zipf[:one] (one contender, for perf record).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/connectors.h>

#include "group_agg.h"
#include "rand.h"

#define BASE_TS	   1704067200000LL /* 2024-01-01 00:00:00 UTC, a whole minute */
#define NUSERS	   1000000
#define MINUTE	   60000LL
#define PER_WINDOW 4000000LL
#define ZIPF_BITS  16

enum dist { UNIFORM, HOT80, ZIPF };
static const char *const dist_name[] = { "uniform", "hot80", "zipf" };

/* zipf_lo[q]: the smallest key whose CDF reaches q / 2^ZIPF_BITS; quantile q draws a key in
 * [zipf_lo[q], zipf_lo[q + 1]] (one key for the head, a run of the tail's keys). */
static uint32_t zipf_lo[(1 << ZIPF_BITS) + 1];

static void zipf_init(double s)
{
	double sum = 0, cdf = 0;
	uint32_t q = 0;

	for (uint32_t r = 0; r < NUSERS; r++)
		sum += pow(r + 1, -s);
	for (uint32_t r = 0; r < NUSERS && q <= (1u << ZIPF_BITS); r++) {
		cdf += pow(r + 1, -s) / sum;
		while (q <= (1u << ZIPF_BITS) && cdf * (1 << ZIPF_BITS) >= q)
			zipf_lo[q++] = r;
	}
	while (q <= (1u << ZIPF_BITS))
		zipf_lo[q++] = NUSERS - 1;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static sl_ts_t assign_ts(const struct sl_row *row, void *arg)
{
	(void)arg;
	return BASE_TS + sl_row_i64(row, 1) * MINUTE / PER_WINDOW;
}

/* (seq) -> (key, seq). Hot path: a hash and, for zipf, one lookup in a 256 KB table. */
static void key_of(const struct sl_row *in, struct sl_row_builder *out, void *arg)
{
	enum dist d = (enum dist)(intptr_t)arg;
	uint64_t x = (uint64_t)sl_row_i64(in, 1);
	uint64_t h = sl_splitmix64(&x);
	int64_t k;

	if (d == UNIFORM) {
		k = (int64_t)(h % NUSERS);
	} else if (d == HOT80) {
		k = (h >> 40) % 100 < 80 ? 0 : (int64_t)(h % NUSERS);
	} else {
		uint32_t q = (uint32_t)(h >> (64 - ZIPF_BITS));
		uint32_t lo = zipf_lo[q], hi = zipf_lo[q + 1];

		k = lo + (hi > lo ? (int64_t)(h % (hi - lo + 1)) : 0);
	}
	sl_rowb_set_i64(out, 0, k);
	sl_rowb_set_i64(out, 1, sl_row_i64(in, 1));
}

/* The group by's sink: counts its +I rows (one per key: the input is insert-only) and
 * drops the rest, as a blackhole does. */
struct key_count {
	_Atomic uint64_t *total;
	uint64_t n;
};

static void *kc_open(const void *cfg, const struct sl_schema *schema, int shard, int nshards,
		     struct sl_error *err)
{
	struct key_count *k = calloc(1, sizeof(*k));

	(void)schema, (void)shard, (void)nshards, (void)err;
	if (k)
		k->total = (_Atomic uint64_t *)cfg;
	return k;
}

static int kc_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	struct key_count *k = state;

	(void)ts;
	k->n += row->kind == SL_ROW_INSERT;
	return 0;
}

static void kc_close(void *state)
{
	struct key_count *k = state;

	atomic_fetch_add(k->total, k->n);
	free(k);
}

static const struct sl_sink_ops key_count_sink = { .name = "key count", .open = kc_open,
						   .write = kc_write, .close = kc_close };

/* Runs one job; returns events/s per shard and sets *results to the windows fired (the
 * group by: the distinct keys, counted by the sink as +I rows minus -D rows). */
static double run_job(enum dist d, enum sl_agg_phase phase, bool group_by, int64_t rows,
		      uint64_t *results)
{
	struct sl_schema *sch = sl_schema_create(), *keyed = sl_schema_create();
	struct sl_datagen_field fields[2] = {
		{ .kind = SL_GEN_RANDOM, .min = 0, .max = 0 },
		{ .kind = SL_GEN_SEQUENCE, .start = 0, .end = rows - 1 },
	};
	struct sl_datagen_cfg gen = { .schema = sch, .fields = fields, .number_of_rows = rows,
				      .nsplits = 2, .seed = 11 };
	struct sl_wm_strategy wm = { .kind = SL_WM_BOUNDED, .max_delay_ms = 0, .ts_field = -1,
				     .assign = assign_ts, .interval_ms = 200 };
	struct sl_window_spec win = { .kind = SL_WIN_TUMBLE, .size_ms = MINUTE,
				      .agg_phase = phase };
	struct sl_agg_spec count = { .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "n" };
	struct sl_run_opts opts = { .nshards = 2, .cores = "0-1" };
	uint64_t sunk = 0;
	struct sl_blackhole_sink_cfg sink = { .rows = &sunk };
	int key = 0;
	struct sl_job_stats st;
	struct sl_stream *s;
	struct sl_job *job = sl_job_create(dist_name[d]);
	struct sl_process_fn ga = { 0 };
	_Atomic uint64_t distinct_keys = 0;
	double t0, t1;

	if (!sch || !keyed || !job) {
		fprintf(stderr, "skew_bench: out of memory\n");
		exit(1);
	}
	sl_schema_add(sch, "unused", SL_TYPE_BIGINT);
	sl_schema_add(sch, "seq", SL_TYPE_BIGINT);
	sl_schema_add(keyed, "user_id", SL_TYPE_BIGINT);
	sl_schema_add(keyed, "seq", SL_TYPE_BIGINT);
	s = sl_job_source(job, "datagen", &sl_datagen_source_ops, &gen, sch, &wm);
	s = sl_stream_map(s, "key", key_of, (void *)(intptr_t)d, keyed);
	if (group_by) {
		struct sl_group_agg_cfg gc = { .in = keyed, .key_fields = &key, .nkey = 1,
					       .aggs = &count, .naggs = 1, .insert_only = true,
					       .agg_phase = phase, .mini_batch_latency_ms = 200 };
		struct sl_schema *out = NULL;
		char err[256];

		if (sl_group_agg_build(&gc, &ga, &out, err, sizeof err)) {
			fprintf(stderr, "skew_bench: %s\n", err);
			exit(1);
		}
		s = sl_stream_process(sl_stream_key_by(s, &key, 1), "group by", &ga, out);
		sl_schema_destroy(out);
		sl_stream_sink(s, "key count", &key_count_sink, (void *)&distinct_keys);
	} else {
		s = sl_stream_window(sl_stream_key_by(s, &key, 1), "tumble", &win, &count, 1);
		sl_stream_sink(s, "blackhole", &sl_blackhole_sink_ops, &sink);
	}
	t0 = now_s();
	if (sl_job_run(job, &opts)) {
		fprintf(stderr, "skew_bench: %s: %s\n", dist_name[d], sl_job_error(job)->msg);
		exit(1);
	}
	t1 = now_s();
	sl_job_stats(job, &st);
	if (group_by)
		sunk = distinct_keys;
	if (st.records_in != (uint64_t)rows || (!group_by && sunk != st.records_out) || !sunk) {
		fprintf(stderr, "skew_bench: %s: %llu records in (want %lld), %llu results\n",
			dist_name[d], (unsigned long long)st.records_in, (long long)rows,
			(unsigned long long)sunk);
		exit(1);
	}
	fprintf(stderr, "%s %s %s: %.2f s, %llu results, %llu rows combined into %llu partials, "
			"%llu ring-full\n",
		dist_name[d], group_by ? "group by" : "tumble",
		phase == SL_AGG_PHASE_ONE ? "one phase" : "auto", t1 - t0,
		(unsigned long long)sunk, (unsigned long long)st.records_combined,
		(unsigned long long)st.partials, (unsigned long long)st.ring_full);
	*results = sunk;
	sl_job_destroy(job);
	sl_group_agg_free(&ga);
	sl_schema_destroy(keyed);
	sl_schema_destroy(sch);
	return (double)rows / (t1 - t0) / 2;
}

static void usage(void)
{
	fprintf(stderr, "usage: skew_bench [--rows N] [--only uniform|hot80|zipf[:one]]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int64_t rows = 20000000;
	const char *only = NULL;
	double two[3], one[3], gb2[3] = { 0 }, gb1[3] = { 0 };
	uint64_t r2, r1;

	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--rows"))
			rows = strtoll(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--only"))
			only = argv[++i];
		else
			usage();
	}
	if (rows < 1000)
		usage();
	zipf_init(1.2);
	if (only) {
		for (int d = UNIFORM; d <= ZIPF; d++) {
			size_t n = strlen(dist_name[d]);

			if (strncmp(only, dist_name[d], n) || (only[n] && strcmp(only + n, ":one")))
				continue;
			printf("FIGURE skew/only_%s %.0f events/s - -\n", only,
			       run_job((enum dist)d, only[n] ? SL_AGG_PHASE_ONE : SL_AGG_PHASE_AUTO,
				       false, rows, &r2));
			return 0;
		}
		usage();
	}
	for (int d = UNIFORM; d <= ZIPF; d++) {
		two[d] = run_job((enum dist)d, SL_AGG_PHASE_AUTO, false, rows, &r2);
		one[d] = run_job((enum dist)d, SL_AGG_PHASE_ONE, false, rows, &r1);
		if (r1 != r2) {
			fprintf(stderr, "skew_bench: %s fired %llu windows in two phases, %llu in one\n",
				dist_name[d], (unsigned long long)r2, (unsigned long long)r1);
			return 1;
		}
		if (d == HOT80)
			continue;
		gb2[d] = run_job((enum dist)d, SL_AGG_PHASE_AUTO, true, rows, &r2);
		gb1[d] = run_job((enum dist)d, SL_AGG_PHASE_ONE, true, rows, &r1);
		if (r1 != r2) {
			fprintf(stderr, "skew_bench: %s group by: %llu keys in two phases, %llu in one\n",
				dist_name[d], (unsigned long long)r2, (unsigned long long)r1);
			return 1;
		}
	}
	printf("FIGURE skew/uniform_tumble %.0f events/s %.4f skew/uniform_tumble_one_phase\n",
	       two[UNIFORM], two[UNIFORM] / one[UNIFORM]);
	printf("FIGURE skew/hot80_tumble %.0f events/s %.4f skew/uniform_tumble\n", two[HOT80],
	       two[HOT80] / two[UNIFORM]);
	printf("FIGURE skew/zipf_tumble %.0f events/s %.4f skew/uniform_tumble\n", two[ZIPF],
	       two[ZIPF] / two[UNIFORM]);
	printf("FIGURE skew/hot80_gain %.4f x %.4f skew/hot80_tumble_one_phase\n",
	       two[HOT80] / one[HOT80], two[HOT80] / one[HOT80]);
	printf("FIGURE skew/zipf_gain %.4f x %.4f skew/zipf_tumble_one_phase\n",
	       two[ZIPF] / one[ZIPF], two[ZIPF] / one[ZIPF]);
	printf("FIGURE skew/zipf_groupby %.0f events/s %.4f skew/uniform_groupby\n", gb2[ZIPF],
	       gb2[ZIPF] / gb2[UNIFORM]);
	printf("FIGURE skew/zipf_groupby_gain %.4f x %.4f skew/zipf_groupby_one_phase\n",
	       gb2[ZIPF] / gb1[ZIPF], gb2[ZIPF] / gb1[ZIPF]);
	printf("FIGURE skew/uniform_groupby %.0f events/s %.4f skew/uniform_groupby_one_phase\n",
	       gb2[UNIFORM], gb2[UNIFORM] / gb1[UNIFORM]);
	for (int d = UNIFORM; d <= ZIPF; d++)
		printf("FIGURE skew/%s_tumble_one_phase %.0f events/s - -\n", dist_name[d], one[d]);
	printf("FIGURE skew/uniform_groupby_one_phase %.0f events/s - -\n", gb1[UNIFORM]);
	printf("FIGURE skew/zipf_groupby_one_phase %.0f events/s - -\n", gb1[ZIPF]);
	return 0;
}
