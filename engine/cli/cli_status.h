/*
 * cli_status.h - `sluice status` and `sluice jobs` (status.c), and the control socket's
 * `status VIEW` command they talk to.
 */
#ifndef SL_CLI_STATUS_H
#define SL_CLI_STATUS_H

struct sl_job;

/* Control socket thread: writes job's status as view `arg` (text, why, json, brief) to fd. */
void sl_cli_status_serve(struct sl_job *job, int fd, const char *arg);

/* sluice status [--why] [--json] [--watch[=S]] PID|SOCKET; argv[0] is "status". */
int sl_cli_status_cmd(int argc, char **argv);
/* sluice jobs: the running jobs of this user on this machine. */
int sl_cli_jobs_cmd(int argc, char **argv);

#endif
