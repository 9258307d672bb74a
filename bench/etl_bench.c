/*
 * etl_bench.c - figure 2 of the runtime issue: a stateless ETL job's events/s per core, with
 * the work itself done by a plain C loop as the ceiling, measured in the same run.
 *
 * The job (one stage, everything chained by direct calls on each shard):
 *
 *   datagen (id SEQUENCE, user_id BIGINT [0, 1M), amount DOUBLE [0, 100), category INT
 *            [0, 9], ts TIMESTAMP base + i ms; as fast as possible, one split per shard;
 *            bounded-delay watermark every 200 ms)
 *     -> filter  category != 0 && amount >= 10     (81 % pass)
 *     -> project (user_id, amount, ts)
 *     -> blackhole
 *
 * run on 1 shard and on 2 shards; events/s are source rows over the wall time of
 * sl_job_run(), divided by the shards.
 *
 * The ceiling is one thread building the same rows with sl_rowb_* from the same generator
 * (datagen's xoshiro256** stream and draws, copied here so the rows are bit-identical),
 * applying the same filter and building the same projected row, and counting rows and bytes
 * as the blackhole does: the work itself without the runtime. With one shard the job sees
 * exactly the ceiling's rows, so the run fails unless both pass the same number.
 *
 * The scrape overhead (issue 16): the 2-shard job again with the HTTP endpoint on
 * 127.0.0.1 and a thread GETting /metrics every 100 ms, as a busy Prometheus would; its
 * ratio to the unscraped 2-shard run of the same run is the figure (target >= 0.98). The
 * endpoint and the scraper share the two cores with the shards, as they would in
 * production on a fully used box.
 *
 * Each run measures ceiling, 1 shard, 2 shards, 2 shards scraped once (bench/run repeats
 * runs). Options: --rows N per shard (30M), --only ceiling|1|2|2scraped (one contender: for
 * perf record).
 * Output: the FIGURE protocol of bench/README.md.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sluice/connectors.h>

#include "rand.h"
#include <sluice/http.h>

#define SEED 7
#define BASE_TS 1704067200000LL /* 2024-01-01 00:00:00 UTC */
#define NUSERS 1000000
#define NCAT 10

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

/* ---- the job's user functions (also used by the ceiling) ---- */

static bool keep(const struct sl_row *in, void *arg)
{
	return sl_row_i64(in, 3) != 0 && sl_row_f64(in, 2) >= 10.0;
}

static const int proj[3] = { 1, 2, 4 };
static const enum sl_type proj_type[3] = { SL_TYPE_BIGINT, SL_TYPE_DOUBLE, SL_TYPE_TIMESTAMP };

/* ---- the job ---- */

struct etl {
	struct sl_schema *schema;
	struct sl_datagen_field fields[5];
	struct sl_datagen_cfg gen;
	uint64_t sunk;
	struct sl_blackhole_sink_cfg sink;
};

static void etl_schema(struct etl *e)
{
	e->schema = sl_schema_create();
	if (!e->schema) {
		fprintf(stderr, "etl_bench: out of memory\n");
		exit(1);
	}
	sl_schema_add(e->schema, "id", SL_TYPE_BIGINT);
	sl_schema_add(e->schema, "user_id", SL_TYPE_BIGINT);
	sl_schema_add(e->schema, "amount", SL_TYPE_DOUBLE);
	sl_schema_add(e->schema, "category", SL_TYPE_INT);
	sl_schema_add(e->schema, "ts", SL_TYPE_TIMESTAMP);
}

/* ---- the scraper: GET /metrics every 100 ms until told to stop ---- */

struct scraper {
	int port;
	_Atomic bool stop;
	uint64_t scrapes, bytes;
};

/* One HTTP/1.0 GET of /metrics; returns the bytes read (headers included), 0 on failure. */
static uint64_t scrape_once(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	static const char req[] = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
	char buf[65536];
	uint64_t got = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return 0;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
	    write(fd, req, sizeof req - 1) == (ssize_t)(sizeof req - 1))
		while ((n = read(fd, buf, sizeof buf)) > 0)
			got += (uint64_t)n;
	close(fd);
	return got;
}

static void *scrape_main(void *arg)
{
	struct scraper *sc = arg;
	struct timespec ts = { 0, 100000000 };

	while (!atomic_load(&sc->stop)) {
		uint64_t n = scrape_once(sc->port);

		sc->scrapes += n > 0;
		sc->bytes += n;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Runs the job on `nshards` shards over `rows` rows; returns events/s per shard and sets
 * *sunk to the rows that reached the sink. With `scraped`, the HTTP endpoint shows the job
 * and a thread scrapes it every 100 ms meanwhile. */
static double run_job(int nshards, int64_t rows, uint64_t *sunk, bool scraped)
{
	struct sl_http *http = NULL;
	struct scraper sc = { 0 };
	pthread_t scrape_thread;
	struct etl e = { 0 };
	struct sl_wm_strategy wm = { .kind = SL_WM_BOUNDED, .max_delay_ms = 0, .ts_field = 4,
				     .interval_ms = 200 };
	struct sl_run_opts opts = { .nshards = nshards, .cores = nshards == 1 ? "0" : "0-1" };
	struct sl_job_stats st;
	struct sl_stream *s;
	struct sl_job *job;
	double t0, t1;

	etl_schema(&e);
	e.fields[0] = (struct sl_datagen_field){ .kind = SL_GEN_SEQUENCE, .start = 0,
						 .end = rows - 1 };
	e.fields[1] = (struct sl_datagen_field){ .kind = SL_GEN_RANDOM, .min = 0,
						 .max = NUSERS - 1 };
	e.fields[2] = (struct sl_datagen_field){ .kind = SL_GEN_RANDOM, .min = 0, .max = 100 };
	e.fields[3] = (struct sl_datagen_field){ .kind = SL_GEN_RANDOM, .min = 0, .max = NCAT - 1 };
	e.fields[4] = (struct sl_datagen_field){ .kind = SL_GEN_EVENT_TIME, .base_ts = BASE_TS,
						 .step_ms = 1 };
	e.gen = (struct sl_datagen_cfg){ .schema = e.schema, .fields = e.fields,
					 .number_of_rows = rows, .nsplits = nshards,
					 .seed = SEED };
	e.sink.rows = &e.sunk;

	job = sl_job_create("etl");
	if (!job) {
		fprintf(stderr, "etl_bench: out of memory\n");
		exit(1);
	}
	s = sl_job_source(job, "datagen", &sl_datagen_source_ops, &e.gen, e.schema, &wm);
	s = sl_stream_filter(s, "filter", keep, NULL);
	s = sl_stream_project(s, "project", proj, 3);
	sl_stream_sink(s, "blackhole", &sl_blackhole_sink_ops, &e.sink);
	if (scraped) {
		char err[256], url[128];

		http = sl_http_start("127.0.0.1:0", err, sizeof err);
		if (!http || sl_http_url(http, url, sizeof url) ||
		    sscanf(strrchr(url, ':') + 1, "%d", &sc.port) != 1) {
			fprintf(stderr, "etl_bench: the HTTP endpoint: %s\n", http ? url : err);
			exit(1);
		}
		sl_http_show(http, job);
		if (pthread_create(&scrape_thread, NULL, scrape_main, &sc)) {
			fprintf(stderr, "etl_bench: cannot start the scraper\n");
			exit(1);
		}
	}
	t0 = now_s();
	if (sl_job_run(job, &opts)) {
		fprintf(stderr, "etl_bench: %s\n", sl_job_error(job)->msg);
		exit(1);
	}
	t1 = now_s();
	if (scraped) {
		atomic_store(&sc.stop, true);
		pthread_join(scrape_thread, NULL);
		sl_http_stop(http);
		fprintf(stderr, "etl_bench: %llu scrapes of /metrics (%llu bytes) in %.2f s\n",
			(unsigned long long)sc.scrapes, (unsigned long long)sc.bytes, t1 - t0);
		if (sc.scrapes < (uint64_t)((t1 - t0) * 5)) {
			fprintf(stderr, "etl_bench: too few scrapes succeeded\n");
			exit(1);
		}
	}
	sl_job_stats(job, &st);
	if (st.records_in != (uint64_t)rows) {
		fprintf(stderr, "etl_bench: %d shards: %llu records in, want %lld\n", nshards,
			(unsigned long long)st.records_in, (long long)rows);
		exit(1);
	}
	*sunk = e.sunk;
	sl_job_destroy(job);
	sl_schema_destroy(e.schema);
	return (double)rows / (t1 - t0) / nshards;
}

/* ---- the ceiling: datagen's generator and draws (engine/base/rand.h), inline ---- */

struct gen {
	uint64_t s[4];
};

/* Split 0 of 1, as datagen_open() initialises it. */
static void gen_init(struct gen *g)
{
	uint64_t x = SEED ^ (0xd1b54a32d192ed03ull * 1);

	sl_rand_seed(g->s, x);
}

/* Returns rows/s; *passed gets the rows that passed the filter. */
static double run_ceiling(int64_t rows, uint64_t *passed)
{
	static uint64_t in[64], out[64]; /* the source scratch and the projection scratch */
	uint64_t n = 0, bytes = 0;
	struct gen g;
	double t0, t1;

	gen_init(&g);
	pin_main(0);
	t0 = now_s();
	for (int64_t i = 0; i < rows; i++) {
		struct sl_row_builder b, p;
		const struct sl_row *r, *o;

		sl_rowb_init(&b, in, sizeof(in), 5);
		sl_rowb_set_i64(&b, 0, i);
		sl_rowb_set_i64(&b, 1, (int64_t)sl_rand_below(g.s, NUSERS));
		sl_rowb_set_f64(&b, 2, 100.0 * sl_rand_unit(g.s));
		sl_rowb_set_i64(&b, 3, (int64_t)sl_rand_below(g.s, NCAT));
		sl_rowb_set_i64(&b, 4, BASE_TS + i);
		r = sl_rowb_finish(&b);
		if (!keep(r, NULL))
			continue;
		sl_rowb_init(&p, out, sizeof(out), 3);
		for (int f = 0; f < 3; f++)
			sl_rowb_copy_field(&p, f, r, proj[f], proj_type[f]);
		o = sl_rowb_finish(&p);
		n++;
		bytes += o->size;
	}
	t1 = now_s();
	pin_main(-1);
	if (bytes < n * SL_ROW_HDR) { /* keeps `bytes` live, as the blackhole's is */
		fprintf(stderr, "etl_bench: ceiling rows too small\n");
		exit(1);
	}
	*passed = n;
	return (double)rows / (t1 - t0);
}

static void usage(void)
{
	fprintf(stderr, "usage: etl_bench [--rows N per shard] [--only ceiling|1|2]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int64_t rows = 30000000;
	const char *only = NULL;
	double ceil, one, two, scraped;
	uint64_t pass_ceil, pass_one, pass_two, pass_scraped;

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
	if (only) {
		double r;

		if (!strcmp(only, "ceiling"))
			r = run_ceiling(rows, &pass_ceil);
		else if (!strcmp(only, "1") || !strcmp(only, "2"))
			r = run_job(atoi(only), rows * atoi(only), &pass_one, false);
		else if (!strcmp(only, "2scraped"))
			r = run_job(2, rows * 2, &pass_one, true);
		else
			usage();
		printf("FIGURE etl/only_%s %.0f events/s - -\n", only, r);
		return 0;
	}

	ceil = run_ceiling(rows, &pass_ceil);
	one = run_job(1, rows, &pass_one, false);
	two = run_job(2, 2 * rows, &pass_two, false);
	scraped = run_job(2, 2 * rows, &pass_scraped, true);
	fprintf(stderr, "ceiling %.1fM/s, 1 shard %.1fM/s, 2 shards %.1fM/s per core; "
			"passed %llu / %llu / %llu\n", ceil / 1e6, one / 1e6, two / 1e6,
		(unsigned long long)pass_ceil, (unsigned long long)pass_one,
		(unsigned long long)pass_two);
	if (pass_one != pass_ceil) {
		fprintf(stderr, "etl_bench: the job passed %llu rows, the ceiling %llu: not the "
				"same rows\n", (unsigned long long)pass_one,
			(unsigned long long)pass_ceil);
		return 1;
	}
	/* 2 shards draw other streams: the pass rate must still be ~81 % */
	if (pass_two < (uint64_t)(2 * rows) * 78 / 100 || pass_two > (uint64_t)(2 * rows) * 84 / 100) {
		fprintf(stderr, "etl_bench: 2 shards passed %llu of %lld rows\n",
			(unsigned long long)pass_two, (long long)(2 * rows));
		return 1;
	}
	printf("FIGURE etl/events_per_core %.0f events/s %.4f etl/ceiling_events\n", two,
	       two / ceil);
	if (pass_scraped != pass_two) {
		fprintf(stderr, "etl_bench: scraped, the job passed %llu rows, unscraped %llu\n",
			(unsigned long long)pass_scraped, (unsigned long long)pass_two);
		return 1;
	}
	printf("FIGURE etl/events_per_core_scraped_100ms %.0f events/s %.4f etl/events_per_core\n",
	       scraped, scraped / two);
	printf("FIGURE etl/events_per_core_1shard %.0f events/s %.4f etl/ceiling_events\n", one,
	       one / ceil);
	printf("FIGURE etl/ceiling_events %.0f events/s - -\n", ceil);
	return 0;
}
