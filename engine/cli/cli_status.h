/*
 * cli_status.h - `sluice status` and `sluice jobs` (status.c), and the control socket's
 * `status VIEW` command they talk to.
 */
#ifndef SL_CLI_STATUS_H
#define SL_CLI_STATUS_H

#include <stdbool.h>
#include <stdio.h>

struct sl_job;
struct sl_sql_script;

/* Control socket thread: writes job's status as view `arg` (text, why, json, brief) to fd. */
void sl_cli_status_serve(struct sl_job *job, int fd, const char *arg);

/* sluice status [--why] [--json] [--watch[=S]] PID|SOCKET; argv[0] is "status". */
int sl_cli_status_cmd(int argc, char **argv);
/* sluice jobs: the running jobs of this user on this machine. */
int sl_cli_jobs_cmd(int argc, char **argv);

/* Prints to f every EXPLAIN WATERMARK FOR of the script that comes after `after` jobs
 * (they have run, or were explained): what the last of them that read its tables shows. */
void sl_cli_explain_watermarks(struct sl_sql_script *script, int after, FILE *f);

/* sluice profile PID|SOCKET [--seconds N] [-o OUT.svg] (profile.c): runs tools/flamegraph. */
int sl_cli_profile_cmd(int argc, char **argv);

/* The progress line (progress.c): started before a run when stderr is a terminal, stopped
 * (its line cleared) after it; NULL: none. */
struct sl_cli_progress;
struct sl_cli_progress *sl_cli_progress_start(struct sl_job *job);
void sl_cli_progress_stop(struct sl_cli_progress *p);

#endif
