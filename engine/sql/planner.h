/*
 * planner.h - a Flink SQL job file turned into runnable sluice jobs.
 *
 * sl_sql_load() reads and plans the whole file before any data flows: every statement is
 * parsed, every table, column, function, type and connector option is checked, and each
 * INSERT, bare SELECT or statement set becomes one job graph built with the same C API a
 * hand-written job uses (job.h). Errors are one line, "FILE:LINE:COL: what is wrong".
 *
 * Ownership: the returned script owns its jobs, compiled expressions and connector configs;
 * sl_sql_destroy() frees all of it after the jobs have finished.
 */
#ifndef SL_SQL_PLANNER_H
#define SL_SQL_PLANNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <sluice/job.h>

struct sl_sql_script;

struct sl_sql_opts {
	int nshards; /* 0: parallelism.default from the file, else online CPUs */
	const char *dead_letter_path;
	FILE *notices;		    /* one-line notices (view watermark extension); NULL: stderr */
	int out_fd;		    /* fd bare SELECTs print their changelog to; 0: stdout */
	const char *checkpoint_dir; /* --checkpoint-dir: checkpoints go there, and a run
				     * restores the newest one it finds */
	const char *from_savepoint; /* --from-savepoint */
	const char *state_backend;  /* --state-backend heap|rocksdb */
	size_t state_memory;	    /* --state-memory */
	bool offline;		    /* plan without asking external systems (Kafka partition
				     * counts): for explain and fuzzing; such jobs cannot run */
};

/* Plans the job file `path` (read from disk) or, when src is not NULL, src[0..len) named
 * `path` in messages. Returns the script or NULL with the error in err. */
struct sl_sql_script *sl_sql_load(const char *path, const char *src, size_t len,
				  const struct sl_sql_opts *opts, char *err, size_t errcap);
void sl_sql_destroy(struct sl_sql_script *s);

/* Number of jobs (INSERTs, SELECTs and statement sets outside EXPLAIN). */
int sl_sql_njobs(const struct sl_sql_script *s);
struct sl_job *sl_sql_job(const struct sl_sql_script *s, int i);
/* SHOW TABLES / VIEWS / CREATE TABLE and DESCRIBE statements, in file order: the k-th
 * returns its output (Flink's tableau text, borrowed until sl_sql_destroy) and *after, the
 * jobs before it (print it once job after - 1 has run; 0: before any job). */
int sl_sql_ninfos(const struct sl_sql_script *s);
const char *sl_sql_info(const struct sl_sql_script *s, int k, int *after);
/* EXPLAIN WATERMARK FOR statements (a sluice extension), in file order: the k-th returns
 * the name as written, *after (the jobs before it: print it once job after - 1 has run;
 * 0: before any job) and the tables it reads (borrowed until sl_sql_destroy). */
int sl_sql_nwatermark_explains(const struct sl_sql_script *s);
const char *sl_sql_watermark_explain(const struct sl_sql_script *s, int k, int *after,
				     const char *const **tables, int *ntables);
/* What explain calls job i ("FILE:LINE INSERT", or its pipeline.name); its identity, which
 * its checkpoints carry, is sl_sql_job(s, i)'s name: the pipeline name, by default the
 * file's name ("#k" added for the k-th job of a file, k > 1). */
const char *sl_sql_job_title(const struct sl_sql_script *s, int i);
/* True for a job planned only to be explained (EXPLAIN ...): print it, do not run it. */
bool sl_sql_job_explain_only(const struct sl_sql_script *s, int i);
/* The run options the file's SET statements and the opts ask for. Run the jobs with exactly
 * this shard count: per-shard operator state (expression scratch) was sized for it. */
void sl_sql_run_opts(const struct sl_sql_script *s, struct sl_run_opts *out);
/* SET 'state.savepoints.dir': where `sluice savepoint` writes when given no directory. */
const char *sl_sql_savepoint_dir(const struct sl_sql_script *s);

/* Writes EXPLAIN output for every job (stages, exchanges, state per operator, watermark
 * path) to f. */
void sl_sql_explain(const struct sl_sql_script *s, FILE *f);
/* Like sl_sql_explain() for job i only. */
void sl_sql_explain_job(const struct sl_sql_script *s, int i, FILE *f);

#endif
