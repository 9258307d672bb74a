/*
 * runtime_api_test.c - the job API's edges through the whole runtime:
 *  - a file with malformed lines: each bad line goes to the dead-letter output with its
 *    path:line and cause, is counted, and the job goes on with the good ones;
 *  - a missing input file fails the run with an error naming the file;
 *  - sl_job_stop() from another thread ends an unbounded job;
 *  - monotonous and custom watermark strategies drive a window to the same result;
 *  - construction errors (bad key field, window on an unkeyed stream) surface from run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sluice/connectors.h>

#include "test.h"

static char dir[] = "/tmp/sluice-api-XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	T_ASSERT(f);
	fputs(text, f);
	fclose(f);
}

static char *read_file(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	T_ASSERT(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static struct sl_schema *click_schema(void)
{
	struct sl_schema *s = sl_schema_create();

	T_ASSERT(s);
	sl_schema_add(s, "user", SL_TYPE_STRING);
	sl_schema_add(s, "ts", SL_TYPE_TIMESTAMP);
	return s;
}

/* user, then window_start/end, then the count: runs a tumbling 10 s count over `path` with
 * the given watermark strategy into a JSON-lines file and returns its text. */
static int run_count(const char *path, const struct sl_wm_strategy *wm, const char *out,
		     const char *dead, struct sl_job_stats *st, char *err, size_t errcap)
{
	struct sl_schema *sch = click_schema();
	const char *paths[1] = { path };
	struct sl_file_source_cfg src = { .paths = paths, .npaths = 1, .format = SL_FORMAT_JSON,
					  .schema = sch };
	struct sl_jsonl_sink_cfg sink = { .path = out };
	struct sl_window_spec win = { .kind = SL_WIN_TUMBLE, .size_ms = 10000 };
	struct sl_agg_spec cnt = { .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "n" };
	struct sl_run_opts opts = { .nshards = 1, .dead_letter_path = dead };
	int key = 0, rc;

	struct sl_job *job = sl_job_create("count");
	struct sl_stream *s = sl_job_source(job, "clicks", &sl_file_source_ops, &src, sch, wm);

	s = sl_stream_window(sl_stream_key_by(s, &key, 1), "count", &win, &cnt, 1);
	sl_stream_sink(s, "out", &sl_jsonl_sink_ops, &sink);
	rc = sl_job_run(job, &opts);
	snprintf(err, errcap, "%s", sl_job_error(job)->msg);
	sl_job_stats(job, st);
	sl_job_destroy(job);
	sl_schema_destroy(sch);
	return rc;
}

static const char *input = "{\"user\": \"a\", \"ts\": 1000}\n"
			   "{\"user\": \"b\", \"ts\": 2000}\n"
			   "{\"user\": \"a\", \"ts\": oops}\n"
			   "{\"user\": \"a\", \"ts\": 12000}\n"
			   "not json at all\n"
			   "{\"user\": \"b\", \"ts\": 25000}\n";

static const char *expected = "{\"user\":\"a\",\"window_start\":\"1970-01-01 00:00:00\","
			      "\"window_end\":\"1970-01-01 00:00:10\",\"n\":1}\n"
			      "{\"user\":\"b\",\"window_start\":\"1970-01-01 00:00:00\","
			      "\"window_end\":\"1970-01-01 00:00:10\",\"n\":1}\n"
			      "{\"user\":\"a\",\"window_start\":\"1970-01-01 00:00:10\","
			      "\"window_end\":\"1970-01-01 00:00:20\",\"n\":1}\n"
			      "{\"user\":\"b\",\"window_start\":\"1970-01-01 00:00:20\","
			      "\"window_end\":\"1970-01-01 00:00:30\",\"n\":1}\n";

/* Output rows of one watermark come in key-hash order: compare as sorted line sets. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sorted_lines(const char *text, char *out)
{
	char *copy = strdup(text), *lines[64], *save = NULL;
	int n = 0;

	for (char *l = strtok_r(copy, "\n", &save); l && n < 64; l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	qsort(lines, (size_t)n, sizeof(char *), cmp_str);
	out[0] = 0;
	for (int i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
	}
	free(copy);
}

static void assert_same_rows(const char *got, const char *want)
{
	static char a[65536], b[65536];

	sorted_lines(got, a);
	sorted_lines(want, b);
	if (strcmp(a, b)) {
		fprintf(stderr, "got:\n%s\nwant:\n%s\n", a, b);
		exit(T_EXIT_FAIL);
	}
}

static void test_dead_letters(void)
{
	char in[256], out[256], dead[256], err[256];
	struct sl_wm_strategy wm = { .kind = SL_WM_BOUNDED, .max_delay_ms = 0, .ts_field = 1 };
	struct sl_job_stats st;

	snprintf(in, sizeof in, "%s/clicks.jsonl", dir);
	snprintf(out, sizeof out, "%s/out.jsonl", dir);
	snprintf(dead, sizeof dead, "%s/dead.jsonl", dir);
	write_file(in, input);
	T_ASSERT(run_count(in, &wm, out, dead, &st, err, sizeof err) == 0);
	T_ASSERT_EQ_I64(st.records_in, 4);
	T_ASSERT_EQ_I64(st.dead_letters, 2);
	assert_same_rows(read_file(out), expected);
	/* each bad line: where (path:line), why, and the raw record */
	char *d = read_file(dead);
	char where3[300], where5[300];

	snprintf(where3, sizeof where3, "\"where\":\"%s:3\"", in);
	snprintf(where5, sizeof where5, "\"where\":\"%s:5\"", in);
	T_ASSERT(strstr(d, where3) && strstr(d, where5));
	T_ASSERT(strstr(d, "not json at all"));
	T_ASSERT(strstr(d, "ts"));
}

static void test_missing_file(void)
{
	char err[256], out[256];
	struct sl_wm_strategy wm = { .kind = SL_WM_BOUNDED, .ts_field = 1 };
	struct sl_job_stats st;

	snprintf(out, sizeof out, "%s/out2.jsonl", dir);
	T_ASSERT(run_count("/nonexistent/clicks.jsonl", &wm, out, NULL, &st, err, sizeof err) < 0);
	T_ASSERT(strstr(err, "/nonexistent/clicks.jsonl"));
	T_ASSERT(strstr(err, "No such file"));
}

/* the custom generator: the largest time seen, held back 0 ms, emitted periodically */
static void max_on_event(void *state, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	if (ts > *(sl_ts_t *)state)
		*(sl_ts_t *)state = ts;
}

static sl_ts_t max_periodic(void *state, void *arg)
{
	return *(sl_ts_t *)state;
}

static void test_strategies(void)
{
	char in[256], out[256], err[256];
	struct sl_job_stats st;
	struct sl_wm_strategy mono = { .kind = SL_WM_MONOTONOUS, .ts_field = 1 };
	struct sl_wm_strategy custom = {
		.kind = SL_WM_CUSTOM,
		.ts_field = 1,
		.interval_ms = 1,
		.custom = { .state_size = sizeof(sl_ts_t), .on_event = max_on_event,
			    .on_periodic = max_periodic },
	};

	snprintf(in, sizeof in, "%s/clicks.jsonl", dir);
	snprintf(out, sizeof out, "%s/out3.jsonl", dir);
	T_ASSERT(run_count(in, &mono, out, "/dev/null", &st, err, sizeof err) == 0);
	assert_same_rows(read_file(out), expected);
	/* a new file: the sink appends to one it finds, it never truncates visible rows */
	snprintf(out, sizeof out, "%s/out4.jsonl", dir);
	T_ASSERT(run_count(in, &custom, out, "/dev/null", &st, err, sizeof err) == 0);
	assert_same_rows(read_file(out), expected);
}

static void *stopper(void *job)
{
	struct timespec t = { 0, 100 * 1000000L };

	nanosleep(&t, NULL);
	sl_job_stop(job);
	return NULL;
}

static void test_stop(void)
{
	struct sl_schema *sch = sl_schema_create();
	struct sl_datagen_field f[1] = { { .kind = SL_GEN_RANDOM, .min = 0, .max = 100 } };
	struct sl_datagen_cfg gen = { .schema = sch, .fields = f, .nsplits = 2 };
	struct sl_run_opts opts = { .nshards = 2 };
	struct sl_job_stats st;
	pthread_t t;
	int key = 0;

	sl_schema_add(sch, "v", SL_TYPE_BIGINT);
	struct sl_job *job = sl_job_create("unbounded");
	struct sl_stream *s = sl_job_source(job, "gen", &sl_datagen_source_ops, &gen, sch, NULL);

	sl_stream_sink(sl_stream_key_by(s, &key, 1), "null", &sl_blackhole_sink_ops, NULL);
	pthread_create(&t, NULL, stopper, job);
	T_ASSERT(sl_job_run(job, &opts) == 0);
	pthread_join(t, NULL);
	sl_job_stats(job, &st);
	T_ASSERT(st.records_in > 0);
	T_ASSERT_EQ_I64(st.records_out, st.records_in);
	sl_job_destroy(job);
	sl_schema_destroy(sch);
}

static void test_construction_errors(void)
{
	struct sl_schema *sch = click_schema();
	struct sl_datagen_field f[2] = { { .kind = SL_GEN_RANDOM }, { .kind = SL_GEN_RANDOM } };
	struct sl_datagen_cfg gen = { .schema = sch, .fields = f, .number_of_rows = 10 };
	struct sl_window_spec win = { .kind = SL_WIN_TUMBLE, .size_ms = 1000 };
	struct sl_agg_spec cnt = { .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "n" };
	int bad_key = 7;

	struct sl_job *job = sl_job_create("bad");
	struct sl_stream *s = sl_job_source(job, "gen", &sl_datagen_source_ops, &gen, sch, NULL);

	T_ASSERT(sl_stream_key_by(s, &bad_key, 1) == NULL);
	T_ASSERT(sl_job_run(job, NULL) == -EINVAL);
	T_ASSERT(strstr(sl_job_error(job)->msg, "out of range"));
	sl_job_destroy(job);

	job = sl_job_create("unkeyed");
	s = sl_job_source(job, "gen", &sl_datagen_source_ops, &gen, sch, NULL);
	T_ASSERT(sl_stream_window(s, "w", &win, &cnt, 1) == NULL);
	T_ASSERT(strstr(sl_job_error(job)->msg, "not keyed"));
	sl_job_destroy(job);
	sl_schema_destroy(sch);
}

int main(void)
{
	T_ASSERT(mkdtemp(dir));
	test_dead_letters();
	test_missing_file();
	test_strategies();
	test_stop();
	test_construction_errors();
	char cmd[300];

	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	T_ASSERT(system(cmd) == 0);
	return T_EXIT_PASS;
}
