/*
 * main.c - the `sluice` command line.
 *
 *   sluice run JOB.sql [--shards N] [--cores LIST] [--dead-letter FILE] [--metrics]
 *                      [--checkpoint-dir DIR]
 *   sluice explain JOB.sql
 *   sluice demo clicks [--cores LIST] [--shards N] [--rows N] [--rate R] [--dead-letter FILE]
 *
 * The CLI is the only place with process-wide state: the running job, so that SIGINT and
 * SIGTERM can ask it to stop.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/job.h>

#include "cli/demos.h"
#include "sql/planner.h"

static struct sl_job *running_job;

static void on_signal(int sig)
{
	(void)sig;
	if (running_job)
		sl_job_stop(running_job);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: sluice run JOB.sql [options]   run a Flink SQL job file\n"
		   "       sluice explain JOB.sql         print the plan of every job in the file\n"
		   "       sluice demo clicks [options]   clicks per user per minute (C API demo)\n"
		   "options:\n"
		   "  --cores LIST        pin shards to these cores, e.g. 0-3,6\n"
		   "  --shards N          number of shards (default: one per listed or online core)\n"
		   "  --rows N            generated clicks (default 200000)\n"
		   "  --rate R            clicks per second, 0 = as fast as possible (default 0)\n"
		   "  --dead-letter FILE  undecodable records as JSON lines (default: stderr)\n"
		   "  --metrics           print per-operator counters at the end\n"
		   "  --checkpoint-dir D  (run) checkpoint into D (every 10 s unless SET\n"
		   "                      'execution.checkpointing.interval') and, on start, restore\n"
		   "                      the newest complete checkpoint found there\n");
}

static int run_demo(const char *name, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cores", required_argument, NULL, 'c' },
		{ "shards", required_argument, NULL, 's' },
		{ "rows", required_argument, NULL, 'r' },
		{ "rate", required_argument, NULL, 'R' },
		{ "dead-letter", required_argument, NULL, 'd' },
		{ "metrics", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sl_run_opts opts = { 0 };
	struct sl_demo_opts demo = { .rows = 200000, .rate = 0 };
	struct sl_job_stats st;
	struct sl_demo *d;
	bool metrics = false;
	int c, rc;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': opts.cores = optarg; break;
		case 's': opts.nshards = atoi(optarg); break;
		case 'r': demo.rows = strtoll(optarg, NULL, 10); break;
		case 'R': demo.rate = strtoll(optarg, NULL, 10); break;
		case 'd': opts.dead_letter_path = optarg; break;
		case 'm': metrics = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (strcmp(name, "clicks") != 0) {
		fprintf(stderr, "sluice: unknown demo '%s' (available: clicks)\n", name);
		return 2;
	}
	d = sl_demo_clicks_create(&demo);
	if (!d) {
		fprintf(stderr, "sluice: cannot build the clicks job: out of memory\n");
		return 1;
	}
	running_job = sl_demo_job(d);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	rc = sl_job_run(running_job, &opts);
	fflush(stdout);
	if (rc) {
		fprintf(stderr, "sluice: %s\n", sl_job_error(running_job)->msg);
	} else {
		sl_job_stats(running_job, &st);
		fprintf(stderr,
			"sluice: done: %llu records in, %llu rows out, %llu late, %llu malformed, "
			"rings full %llu times (%llu ms backpressured)\n",
			(unsigned long long)st.records_in, (unsigned long long)st.records_out,
			(unsigned long long)st.late_records, (unsigned long long)st.dead_letters,
			(unsigned long long)st.ring_full, (unsigned long long)st.backpressure_ms);
		if (metrics)
			sl_job_print_metrics(running_job, stderr);
	}
	running_job = NULL;
	sl_demo_destroy(d);
	return rc ? 1 : 0;
}

static void print_stats(struct sl_job *job, bool metrics)
{
	struct sl_job_stats st;

	sl_job_stats(job, &st);
	fprintf(stderr,
		"sluice: done: %llu records in, %llu rows out, %llu late, %llu malformed, "
		"rings full %llu times (%llu ms backpressured)\n",
		(unsigned long long)st.records_in, (unsigned long long)st.records_out,
		(unsigned long long)st.late_records, (unsigned long long)st.dead_letters,
		(unsigned long long)st.ring_full, (unsigned long long)st.backpressure_ms);
	if (metrics)
		sl_job_print_metrics(job, stderr);
}

/* sluice run|explain JOB.sql: plan the whole file, then run its jobs one after another. */
static int run_sql(bool explain, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cores", required_argument, NULL, 'c' },
		{ "shards", required_argument, NULL, 's' },
		{ "dead-letter", required_argument, NULL, 'd' },
		{ "metrics", no_argument, NULL, 'm' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "checkpoint-dir", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sl_sql_opts so = { 0 };
	struct sl_run_opts opts;
	struct sl_sql_script *script;
	const char *cores = NULL;
	bool metrics = false, quiet = false;
	char err[1024];
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': cores = optarg; break;
		case 's': so.nshards = atoi(optarg); break;
		case 'd': so.dead_letter_path = optarg; break;
		case 'm': metrics = true; break;
		case 'q': quiet = true; break;
		case 'k': so.checkpoint_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "sluice: %s takes one job file\n", explain ? "explain" : "run");
		return 2;
	}
	script = sl_sql_load(argv[optind], NULL, 0, &so, err, sizeof err);
	if (!script) {
		fprintf(stderr, "sluice: %s\n", err);
		return 1;
	}
	sl_sql_run_opts(script, &opts);
	opts.cores = cores;
	if (opts.checkpoint_dir && !opts.checkpoint_interval_ms)
		opts.checkpoint_interval_ms = 10000; /* a directory asks for checkpoints */
	for (int i = 0; i < sl_sql_njobs(script) && rc == 0; i++) {
		if (explain || sl_sql_job_explain_only(script, i)) {
			sl_sql_explain_job(script, i, stdout);
			continue;
		}
		running_job = sl_sql_job(script, i);
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		rc = sl_job_run(running_job, &opts);
		fflush(stdout);
		if (rc)
			fprintf(stderr, "sluice: %s\n", sl_job_error(running_job)->msg);
		else if (!quiet)
			print_stats(running_job, metrics);
		running_job = NULL;
	}
	sl_sql_destroy(script);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "run") || !strcmp(argv[1], "explain"))
		return run_sql(!strcmp(argv[1], "explain"), argc - 1, argv + 1);
	if (!strcmp(argv[1], "demo") && argc >= 3)
		return run_demo(argv[2], argc - 2, argv + 2);
	fprintf(stderr, "sluice: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
