/*
 * directory.h - the coordinator's side of a checkpoint directory (directory.c).
 * Every call is on the coordinator thread (the one in sl_job_run).
 */
#ifndef SL_CHECKPOINT_DIRECTORY_H
#define SL_CHECKPOINT_DIRECTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_runtime;
struct sl_job;

/* Writes job's identity for its checkpoints (manifest.h, "Job ids") into buf[0..cap). */
void sl_ckpt_job_identity(const struct sl_job *job, char *buf, size_t cap);

/* Opens the checkpoint directory and its writer; sets rt->ckpt_base so checkpoint ids
 * continue after those in the directory. A directory whose complete checkpoints are all
 * damaged is refused (-EBADMSG) unless start_fresh. State of operators the job lacks
 * refuses the restore unless allow_non_restored (then it is dropped). 0 or -errno with the
 * job's error set. */
int sl_ckpt_ctl_open(struct sl_runtime *rt, const char *dir, const char *savepoint,
		     bool start_fresh, bool allow_non_restored);
void sl_ckpt_ctl_close(struct sl_runtime *rt);
/* True when checkpoints go to a directory: each shard then writes its own state files. */
bool sl_ckpt_writes_files(const struct sl_runtime *rt);
/* "DIR/chk-<n>/<rel>" into buf; any thread (reads only the directory's name). 0 or -errno. */
int sl_ckpt_file_path(struct sl_runtime *rt, uint64_t n, const char *rel, char *buf, size_t cap);
/* Creates checkpoint n's directory before its barrier starts. 0 or -errno. */
int sl_ckpt_ctl_begin(struct sl_runtime *rt, uint64_t n);
/* Every shard acknowledged n: state files, manifest, then sink commits. 0 or -errno (the
 * checkpoint is then removed and reported failed; the job goes on). */
int sl_ckpt_ctl_complete(struct sl_runtime *rt, uint64_t n);
void sl_ckpt_ctl_abort(struct sl_runtime *rt, uint64_t n);

struct sl_shard;
struct sl_ctx;

/* On a shard while it wires itself: restores operator instance ctx (node op_id) from every
 * snapshot of that operator in the restored checkpoint, keeping this shard's key groups.
 * 0 (also when there is nothing to restore) or -errno with the shard failed. */
int sl_ckpt_restore_op(struct sl_shard *sh, struct sl_ctx *ctx, int op_id);
struct sl_rocks_db;

/* On a shard before it wires itself: loads the native state (RocksDB checkpoint
 * directories) of operator op_id in the restored checkpoint into db, keeping this shard's
 * key groups: the directory is hard-linked in when one old instance covers them all (same
 * shard count), else each old instance's overlapping range is copied. 0 (also when there is
 * nothing native to restore) or -errno with the shard failed. */
int sl_ckpt_restore_db(struct sl_shard *sh, int op_id, struct sl_rocks_db *db);
/* The restored position of split `split` of source node op_id: returns 1 with its event
 * time so far and the connector's bytes, 0 when there is none, -EINVAL if malformed. */
/* How many splits of source node op_id the restored checkpoint holds (0: none, or no
 * restore). */
int sl_ckpt_restored_nsplits(const struct sl_runtime *rt, int op_id);
int sl_ckpt_restore_split(struct sl_runtime *rt, int op_id, int split, int64_t *max_ts,
			  const void **pos, size_t *len);
/* After sl_ckpt_ctl_open, before any shard starts: hands each source with restore_layout
 * its checkpointed positions in split order, so it can number its splits as the checkpoint
 * did. 0 (nothing restored, or done) or -errno with the job's error set. */
int sl_ckpt_restore_layout(struct sl_runtime *rt);

#endif
