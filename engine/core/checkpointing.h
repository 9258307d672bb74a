/*
 * checkpointing.h - the coordinator's side of a checkpoint directory (checkpointing.c).
 * Every call is on the coordinator thread (the one in sl_job_run).
 */
#ifndef SL_CORE_CHECKPOINTING_H
#define SL_CORE_CHECKPOINTING_H

#include <stdint.h>

struct sl_runtime;

/* Opens the checkpoint directory and its writer; sets rt->ckpt_base so checkpoint ids
 * continue after those in the directory. 0 or -errno with the job's error set. */
int sl_ckpt_ctl_open(struct sl_runtime *rt, const char *dir);
void sl_ckpt_ctl_close(struct sl_runtime *rt);
/* Creates checkpoint n's directory before its barrier starts. 0 or -errno. */
int sl_ckpt_ctl_begin(struct sl_runtime *rt, uint64_t n);
/* Every shard acknowledged n: state files, manifest, then sink commits. 0 or -errno (the
 * checkpoint is then removed and reported failed; the job goes on). */
int sl_ckpt_ctl_complete(struct sl_runtime *rt, uint64_t n);
void sl_ckpt_ctl_abort(struct sl_runtime *rt, uint64_t n);

#endif
