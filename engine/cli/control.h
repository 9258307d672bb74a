/*
 * control.h - the control socket of a running `sluice run` (the CLI's side of savepoints).
 *
 * The running process listens on a Unix socket, by default RUNDIR/sluice-<pid>.sock with
 * RUNDIR = $SLUICE_RUN_DIR (as given), else $XDG_RUNTIME_DIR/sluice, else /tmp/sluice-<uid>,
 * the last two private directories (0700, ours) made for it. Other `sluice` processes send
 * one line and read one line back:
 *
 *   savepoint DIR|-     ->  "ok PATH" | "error WHY"      (-: state.savepoints.dir)
 *   stop DIR|-|none     ->  "ok PATH" | "ok stopping" | "error WHY"
 *   status VIEW         ->  the job's status (text|why|json|brief|watermark T) up to EOF, or
 *                           "error WHY" (cli_status.h)
 *
 * A savepoint blocks its connection until it is complete (sl_job_savepoint); other
 * connections are served meanwhile. The socket is only reachable by the same user (mode
 * 0600, in a private directory) and is removed when the job ends, if it is still ours: a
 * path holding anything but a stale socket of ours is never removed.
 *
 * Threads: the server runs an accepting thread and one per connection; start and stop from
 * the main thread.
 */
#ifndef SL_CLI_CONTROL_H
#define SL_CLI_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

struct sl_job;
struct sl_control;

/* Writes the default socket path of process `pid` into buf (makes nothing: the client's
 * side). 0 or -ENAMETOOLONG. */
int sl_control_default_path(pid_t pid, char *buf, size_t cap);

/* The server's side: writes the default path of `pid` into buf, makes its private
 * directory (or checks it is a directory of ours, and makes it 0700) and removes from it
 * the sockets of processes that died. 0, or -errno with the reason in err. */
int sl_control_prepare_default(pid_t pid, char *buf, size_t cap, char *err, size_t errcap);

/* Listens on `path` for commands to `job`; default_dir is used for "savepoint -" (may be
 * NULL). A stale socket of ours at `path` (nobody listens) is replaced; anything else there
 * (a file, a directory, another user's or a live socket) is left alone and refused. Returns
 * the server or NULL with the reason in err. */
struct sl_control *sl_control_start(const char *path, struct sl_job *job, const char *default_dir,
				    char *err, size_t errcap);
/* Stops the server and removes the socket; accepts NULL. Call before the job is destroyed. */
void sl_control_stop(struct sl_control *ctl);

/* Client: sends `line` to `target` (a pid, or a socket path) and reads the reply into
 * reply[0..cap). Returns 0 (reply "ok ..."), 1 (reply "error ..."), or -errno with the
 * reason in reply. Waits as long as the savepoint takes. */
int sl_control_request(const char *target, const char *line, char *reply, size_t cap);

#endif
