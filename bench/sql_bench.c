/*
 * sql_bench.c - issue 3's SQL figure: the keyed tumbling count of the runtime issue written
 * in SQL, against the same job built with the C API, in the same run (target: >= 0.8x).
 *
 * Data (both jobs): datagen rows (user_id BIGINT uniform in [0, 1M), seq BIGINT 0, 1, ...),
 * one split per shard, as fast as possible; event time 2024-01-01 + seq * 60000 / 4M ms
 * (4M events per minute, ~982K distinct keys per 1-minute window), watermark bounded with
 * delay 0 every 200 ms; TUMBLE 1 min COUNT(*) per user_id into a blackhole; 40M rows.
 *
 *   C API  datagen -> key_by user_id -> window (assigner callback computes ts from seq)
 *   SQL    CREATE TABLE gen (user_id, seq, ts AS TO_TIMESTAMP_LTZ(1704067200000 +
 *          seq * 60000 / 4000000, 3), WATERMARK FOR ts AS ts) WITH ('connector' =
 *          'datagen', ...); INSERT INTO sink SELECT user_id, COUNT(*) FROM gen GROUP BY
 *          user_id, TUMBLE(ts, INTERVAL '1' MINUTE)
 * The SQL job pays for what a SQL user gets: the rowtime expression evaluated per record,
 * the computed column, and a projection after the window.
 *
 * Figures: sql/tumble_events_per_core (SQL, ratio to C API), sql/capi_tumble_events_per_core.
 * Both jobs must count every record and fire the same number of window results.
 * Options: --rows N (40M), --shards N (2), --only sql|capi (for perf record).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/connectors.h>

#include "planner.h"

#define BASE_TS 1704067200000LL
#define PER_WINDOW 4000000LL
#define MINUTE 60000LL
#define NUSERS 1000000

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static sl_ts_t assign_ts(const struct sl_row *row, void *arg)
{
	return BASE_TS + sl_row_i64(row, 1) * MINUTE / PER_WINDOW;
}

static double run_capi(int nshards, int64_t rows, uint64_t *results)
{
	struct sl_schema *sch = sl_schema_create();
	struct sl_datagen_field fields[2] = {
		{ .kind = SL_GEN_RANDOM, .min = 0, .max = NUSERS - 1 },
		{ .kind = SL_GEN_SEQUENCE, .start = 0, .end = rows - 1 },
	};
	struct sl_datagen_cfg gen = { .schema = sch, .fields = fields, .number_of_rows = rows,
				      .nsplits = nshards, .seed = 11 };
	struct sl_wm_strategy wm = { .kind = SL_WM_BOUNDED, .max_delay_ms = 0, .ts_field = -1,
				     .assign = assign_ts, .interval_ms = 200 };
	struct sl_window_spec win = { .kind = SL_WIN_TUMBLE, .size_ms = MINUTE };
	struct sl_agg_spec count = { .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "n" };
	struct sl_run_opts opts = { .nshards = nshards };
	struct sl_blackhole_sink_cfg sink = { 0 };
	struct sl_job *job = sl_job_create("capi tumble");
	struct sl_job_stats st;
	struct sl_stream *s;
	int key = 0;
	double t0, t1;

	sl_schema_add(sch, "user_id", SL_TYPE_BIGINT);
	sl_schema_add(sch, "seq", SL_TYPE_BIGINT);
	s = sl_job_source(job, "datagen", &sl_datagen_source_ops, &gen, sch, &wm);
	s = sl_stream_window(sl_stream_key_by(s, &key, 1), "tumble", &win, &count, 1);
	sl_stream_sink(s, "blackhole", &sl_blackhole_sink_ops, &sink);
	t0 = now_s();
	if (sl_job_run(job, &opts)) {
		fprintf(stderr, "sql_bench: C API job: %s\n", sl_job_error(job)->msg);
		exit(1);
	}
	t1 = now_s();
	sl_job_stats(job, &st);
	if (st.records_in != (uint64_t)rows) {
		fprintf(stderr, "sql_bench: C API job read %llu of %lld rows\n",
			(unsigned long long)st.records_in, (long long)rows);
		exit(1);
	}
	*results = st.records_out;
	sl_job_destroy(job);
	sl_schema_destroy(sch);
	return (double)rows / (t1 - t0) / nshards;
}

static double run_sql(int nshards, int64_t rows, uint64_t *results)
{
	char src[2048], err[1024];
	struct sl_sql_opts so = { .nshards = nshards };
	struct sl_sql_script *script;
	struct sl_run_opts opts;
	struct sl_job_stats st;
	double t0, t1;

	snprintf(src, sizeof src,
		 "CREATE TABLE gen (\n"
		 "  user_id BIGINT,\n"
		 "  seq BIGINT,\n"
		 "  ts AS TO_TIMESTAMP_LTZ(%lld + seq * %lld / %lld, 3),\n"
		 "  WATERMARK FOR ts AS ts\n"
		 ") WITH ('connector' = 'datagen', 'number-of-rows' = '%lld',\n"
		 "  'rows-per-second' = '0', 'seed' = '11',\n"
		 "  'fields.user_id.kind' = 'random', 'fields.user_id.min' = '0',\n"
		 "  'fields.user_id.max' = '%d',\n"
		 "  'fields.seq.kind' = 'sequence', 'fields.seq.start' = '0',\n"
		 "  'fields.seq.end' = '%lld');\n"
		 "CREATE TABLE sink (user_id BIGINT, n BIGINT) WITH ('connector' = 'blackhole');\n"
		 "INSERT INTO sink SELECT user_id, COUNT(*) FROM gen\n"
		 "GROUP BY user_id, TUMBLE(ts, INTERVAL '1' MINUTE);\n",
		 (long long)BASE_TS, (long long)MINUTE, (long long)PER_WINDOW, (long long)rows,
		 NUSERS - 1, (long long)rows - 1);
	script = sl_sql_load("sql_bench.sql", src, strlen(src), &so, err, sizeof err);
	if (!script) {
		fprintf(stderr, "sql_bench: %s\n", err);
		exit(1);
	}
	sl_sql_run_opts(script, &opts);
	t0 = now_s();
	if (sl_job_run(sl_sql_job(script, 0), &opts)) {
		fprintf(stderr, "sql_bench: SQL job: %s\n", sl_job_error(sl_sql_job(script, 0))->msg);
		exit(1);
	}
	t1 = now_s();
	sl_job_stats(sl_sql_job(script, 0), &st);
	if (st.records_in != (uint64_t)rows) {
		fprintf(stderr, "sql_bench: SQL job read %llu of %lld rows\n",
			(unsigned long long)st.records_in, (long long)rows);
		exit(1);
	}
	*results = st.records_out;
	sl_sql_destroy(script);
	return (double)rows / (t1 - t0) / nshards;
}

int main(int argc, char **argv)
{
	int64_t rows = 40000000;
	int nshards = 2;
	const char *only = NULL;
	uint64_t rc_api = 0, rc_sql = 0;
	double capi, sql;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rows") && i + 1 < argc)
			rows = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--shards") && i + 1 < argc)
			nshards = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: sql_bench [--rows N] [--shards N] [--only sql|capi]\n");
			return 2;
		}
	}
	if (only) {
		double r = !strcmp(only, "sql") ? run_sql(nshards, rows, &rc_sql)
						: run_capi(nshards, rows, &rc_api);

		printf("FIGURE sql/only_%s %.0f events/s - -\n", only, r);
		return 0;
	}
	/* interleaved, best of two each, so both saw the same machine */
	capi = run_capi(nshards, rows, &rc_api);
	sql = run_sql(nshards, rows, &rc_sql);
	{
		double c2 = run_capi(nshards, rows, &rc_api), s2 = run_sql(nshards, rows, &rc_sql);

		capi = c2 > capi ? c2 : capi;
		sql = s2 > sql ? s2 : sql;
	}
	if (rc_api != rc_sql) {
		fprintf(stderr, "sql_bench: the C API job fired %llu results, the SQL job %llu\n",
			(unsigned long long)rc_api, (unsigned long long)rc_sql);
		return 1;
	}
	fprintf(stderr, "per core on %d shards: C API %.2fM events/s, SQL %.2fM (%.2fx), %llu "
			"window results each\n", nshards, capi / 1e6, sql / 1e6, sql / capi,
		(unsigned long long)rc_api);
	printf("FIGURE sql/tumble_events_per_core %.0f events/s %.4f sql/capi_tumble_events_per_core\n",
	       sql, sql / capi);
	printf("FIGURE sql/capi_tumble_events_per_core %.0f events/s - -\n", capi);
	return 0;
}
