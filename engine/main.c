/*
 * main.c - the `sluice` command line.
 *
 *   sluice run JOB.sql [--shards N] [--cores LIST] [--dead-letter FILE] [--metrics]
 *                      [--checkpoint-dir DIR] [--from-savepoint DIR] [--start-fresh]
 *                      [--allow-non-restored-state]
 *                      [--control SOCKET]
 *                      [--state-backend heap|rocksdb] [--state-memory SIZE]
 *                      [--http [ADDR:]PORT]
 *   sluice savepoint PID|SOCKET [DIR]
 *   sluice stop [--savepoint[=DIR]] PID|SOCKET
 *   sluice status [--why] [--json] [--watch[=S]] PID|SOCKET
 *   sluice jobs
 *   sluice profile PID|SOCKET [--seconds N] [-o OUT.svg]
 *   sluice explain JOB.sql
 *   sluice upgrade-check NEW.sql --from-savepoint|--checkpoint-dir DIR
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
#include <unistd.h>

#include <sluice/http.h>
#include <sluice/job.h>

#include "cli_status.h"
#include "control.h"
#include "demos.h"
#include "planner.h"
#include "upgrade_check.h"
#include "sql_options.h"
#include "status.h"

static struct sl_job *running_job;

static void on_signal(int sig)
{
	(void)sig;
	if (running_job)
		sl_job_stop(running_job);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sluice run JOB.sql [options]   run a Flink SQL job file\n"
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
		"                      the newest complete checkpoint found there\n"
		"  --from-savepoint D  (run) restore savepoint D (any --shards/--cores)\n"
		"  --start-fresh       (run) when every checkpoint in --checkpoint-dir is\n"
		"                      damaged, start from scratch instead of refusing to\n"
		"                      (what they committed is written again)\n"
		"  --allow-non-restored-state  (run) drop the restored state of operators\n"
		"                      the job no longer has, instead of refusing to restore\n"
		"  --control SOCKET    (run) control socket (default $SLUICE_RUN_DIR,\n"
		"                      $XDG_RUNTIME_DIR/sluice or /tmp/sluice-<uid>,\n"
		"                      /sluice-<pid>.sock)\n"
		"  --state-backend B   (run) heap (default) or rocksdb\n"
		"  --state-memory SIZE (run) memory for all state, e.g. 2g: RocksDB's budget, and\n"
		"                      the limit of state on the heap (default 3/4 of memory)\n"
		"  --http [ADDR:]PORT  (run) serve the status page (/), /metrics (Prometheus),\n"
		"                      /api/metrics and /api/status (JSON) there; ADDR defaults\n"
		"                      to 127.0.0.1, any other is served only when given\n"
		"                      (0.0.0.0: every interface)\n"
		"       sluice savepoint PID|SOCKET [DIR]  savepoint a running job into DIR\n"
		"                      (default: its SET 'state.savepoints.dir')\n"
		"       sluice upgrade-check NEW.sql --from-savepoint|--checkpoint-dir DIR\n"
		"                      operator by operator: would DIR's state be restored?\n"
		"       sluice stop [--savepoint[=DIR]] PID|SOCKET  stop a running job, with a\n"
		"                      savepoint first when asked (restart: --from-savepoint)\n"
		"       sluice status [--why] [--json] [--watch[=S]] PID|SOCKET  a running\n"
		"                      job's operators, splits, checkpoints, and with --why\n"
		"                      what holds its windows back\n"
		"       sluice jobs    the running jobs of this user on this machine\n"
		"       sluice profile PID|SOCKET [--seconds N] [-o OUT.svg]  a flame graph of\n"
		"                      a running job (perf, as tools/flamegraph draws it)\n");
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
		case 'c':
			opts.cores = optarg;
			break;
		case 's':
			opts.nshards = atoi(optarg);
			break;
		case 'r':
			demo.rows = strtoll(optarg, NULL, 10);
			break;
		case 'R':
			demo.rate = strtoll(optarg, NULL, 10);
			break;
		case 'd':
			opts.dead_letter_path = optarg;
			break;
		case 'm':
			metrics = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
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
	/* Flink makes them NULL without a word; say how many, and where to look */
	if (st.decimal_overflows)
		fprintf(stderr,
			"sluice: %llu DECIMAL value%s did not fit their type and became NULL "
			"(per operator with --metrics; '<format>.fail-on-decimal-overflow' sends "
			"such source records to the dead-letter output)\n",
			(unsigned long long)st.decimal_overflows,
			st.decimal_overflows == 1 ? "" : "s");
	if (metrics)
		sl_job_print_metrics(job, stderr);
}

/* The output of the file's SHOW and DESCRIBE statements that come after `after` jobs. */
static void print_infos(const struct sl_sql_script *script, int after)
{
	for (int k = 0; k < sl_sql_ninfos(script); k++) {
		int at;
		const char *text = sl_sql_info(script, k, &at);

		if (at == after)
			fputs(text, stdout);
	}
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
		{ "from-savepoint", required_argument, NULL, 'f' },
		{ "start-fresh", no_argument, NULL, 'F' },
		{ "allow-non-restored-state", no_argument, NULL, 'N' },
		{ "control", required_argument, NULL, 'C' },
		{ "state-backend", required_argument, NULL, 'b' },
		{ "state-memory", required_argument, NULL, 'M' },
		{ "http", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sl_sql_opts so = { 0 };
	const char *http_addr = NULL;
	struct sl_http *http = NULL;
	const char *control = NULL;
	char ctl_path[4096];
	struct sl_run_opts opts;
	struct sl_sql_script *script;
	const char *cores = NULL;
	bool metrics = false, quiet = false, start_fresh = false, allow_drop = false;
	char err[1024];
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cores = optarg;
			break;
		case 's':
			so.nshards = atoi(optarg);
			break;
		case 'd':
			so.dead_letter_path = optarg;
			break;
		case 'm':
			metrics = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'k':
			so.checkpoint_dir = optarg;
			break;
		case 'f':
			so.from_savepoint = optarg;
			break;
		case 'F':
			start_fresh = true;
			break;
		case 'N':
			allow_drop = true;
			break;
		case 'C':
			control = optarg;
			break;
		case 'b':
			if (strcmp(optarg, "heap") && strcmp(optarg, "hashmap") &&
			    strcmp(optarg, "rocksdb")) {
				fprintf(stderr,
					"sluice: --state-backend '%s': expected heap or "
					"rocksdb\n",
					optarg);
				return 2;
			}
			so.state_backend = strcmp(optarg, "rocksdb") ? "heap" : "rocksdb";
			break;
		case 'M':
			if (sl_sql_conn_parse_memory_size(optarg, &so.state_memory) < 0 ||
			    !so.state_memory) {
				fprintf(stderr,
					"sluice: --state-memory '%s': expected a size such "
					"as 512m or 2g\n",
					optarg);
				return 2;
			}
			break;
		case 'H':
			http_addr = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "sluice: %s takes one job file\n", explain ? "explain" : "run");
		return 2;
	}
	so.offline = explain; /* explaining a Kafka job needs no broker */
	script = sl_sql_load(argv[optind], NULL, 0, &so, err, sizeof err);
	if (!script) {
		fprintf(stderr, "sluice: %s\n", err);
		return 1;
	}
	if (http_addr && !explain) {
		char url[128];

		http = sl_http_start(http_addr, err, sizeof err);
		if (!http) {
			fprintf(stderr, "sluice: %s\n", err);
			sl_sql_destroy(script);
			return 1;
		}
		if (sl_http_url(http, url, sizeof url) == 0) {
			fprintf(stderr, "sluice: metrics at %s/metrics\n", url);
			fprintf(stderr, "sluice: status page at %s/\n", url);
		}
		if (!sl_http_loopback(http))
			fprintf(stderr,
				"sluice: --http %s is not a loopback address: whoever can "
				"reach this machine can read the job's metrics\n",
				http_addr);
	}
	sl_sql_run_opts(script, &opts);
	opts.cores = cores;
	opts.start_fresh = start_fresh;
	opts.allow_non_restored_state |= allow_drop;
	opts.savepoints = true;
	if (!control && !explain) {
		if (sl_control_prepare_default(getpid(), ctl_path, sizeof ctl_path, err,
					       sizeof err) == 0)
			control = ctl_path;
		else
			fprintf(stderr, "sluice: %s (savepoints unavailable)\n", err);
	}
	if (opts.checkpoint_dir && !opts.checkpoint_interval_ms)
		opts.checkpoint_interval_ms = 10000; /* a directory asks for checkpoints */
	print_infos(script, 0);
	sl_cli_explain_watermarks(script, 0, stdout);
	for (int i = 0; i < sl_sql_njobs(script) && rc == 0; i++) {
		if (explain || sl_sql_job_explain_only(script, i)) {
			sl_sql_explain_job(script, i, stdout);
			print_infos(script, i + 1);
			sl_cli_explain_watermarks(script, i + 1, stdout);
			continue;
		}
		struct sl_control *ctl = NULL;
		struct sl_cli_progress *progress;

		running_job = sl_sql_job(script, i);
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		if (control) {
			ctl = sl_control_start(control, running_job, sl_sql_savepoint_dir(script),
					       err, sizeof err);
			if (!ctl)
				fprintf(stderr, "sluice: %s (savepoints unavailable)\n", err);
		}
		/* shown from before its run (not started yet) until the next job replaces it */
		sl_http_show(http, running_job);
		/* a terminal sees the job move; a pipe or a file only its summary */
		progress =
			!quiet && isatty(STDERR_FILENO) ? sl_cli_progress_start(running_job) : NULL;
		rc = sl_job_run(running_job, &opts);
		sl_cli_progress_stop(progress);
		sl_control_stop(ctl);
		fflush(stdout);
		if (rc)
			fprintf(stderr, "sluice: %s\n", sl_job_error(running_job)->msg);
		else if (!quiet)
			print_stats(running_job, metrics);
		/* windows still open at the end: say what held them back */
		if (!rc && !quiet)
			sl_obs_report_open_windows(running_job, stderr);
		if (!rc) {
			print_infos(script, i + 1);
			sl_cli_explain_watermarks(script, i + 1, stdout);
		}
		running_job = NULL;
	}
	sl_http_stop(http); /* before the jobs it shows go */
	sl_sql_destroy(script);
	return rc ? 1 : 0;
}

/* sluice savepoint PID|SOCKET [DIR] and sluice stop [--savepoint[=DIR]] PID|SOCKET */
static int control_cmd(bool stop, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "savepoint", optional_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = stop ? "none" : "-";
	char line[4200], reply[4200];
	int c, rc;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (!stop) {
				usage(stderr);
				return 2;
			}
			dir = optarg ? optarg : "-";
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc || argc - optind > (stop ? 1 : 2)) {
		fprintf(stderr, "sluice: %s takes a job (its pid or control socket)%s\n",
			stop ? "stop" : "savepoint", stop ? "" : " and an optional directory");
		return 2;
	}
	if (!stop && argc - optind == 2)
		dir = argv[optind + 1];
	if (snprintf(line, sizeof line, "%s %s", stop ? "stop" : "savepoint", dir) >=
	    (int)sizeof line) {
		fprintf(stderr, "sluice: directory name too long\n");
		return 2;
	}
	rc = sl_control_request(argv[optind], line, reply, sizeof reply);
	if (rc) {
		fprintf(stderr, "sluice: %s\n", reply);
		return 1;
	}
	/* "ok PATH": the savepoint, on stdout for scripts */
	if (strncmp(reply, "ok stopping", 11))
		printf("%s\n", reply + 3);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "run") || !strcmp(argv[1], "explain"))
		return run_sql(!strcmp(argv[1], "explain"), argc - 1, argv + 1);
	if (!strcmp(argv[1], "savepoint") || !strcmp(argv[1], "stop"))
		return control_cmd(!strcmp(argv[1], "stop"), argc - 1, argv + 1);
	if (!strcmp(argv[1], "status"))
		return sl_cli_status_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "profile"))
		return sl_cli_profile_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "jobs"))
		return sl_cli_jobs_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "upgrade-check"))
		return sl_cli_upgrade_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "demo") && argc >= 3)
		return run_demo(argv[2], argc - 2, argv + 2);
	fprintf(stderr, "sluice: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
