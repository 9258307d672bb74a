/*
 * coordinator.h - the checkpoint coordinator loop (coordinator.c), run by sl_job_run on its
 * own thread while the shards run, and the savepoint request it serves (sl_job_savepoint in
 * job.h posts it from any thread).
 */
#ifndef SL_CHECKPOINT_COORDINATOR_H
#define SL_CHECKPOINT_COORDINATOR_H

#include <sluice/job.h>

struct sl_runtime;

/* Takes checkpoints every interval of `o` until every shard has finished (and the final
 * checkpoint, if one follows the end of input, has completed). Coordinator thread. */
void sl_ckpt_coordinate(struct sl_runtime *rt, const struct sl_run_opts *o);
/* The monotonic clock in ms, as the coordinator and the run thread read it. */
sl_ts_t sl_wall_now_ms(void);

#endif
