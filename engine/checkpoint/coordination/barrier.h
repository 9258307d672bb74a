/*
 * barrier.h - a shard's side of a checkpoint (barrier.c), called from the shard loop on the
 * shard's thread. The handshake with the coordinator thread goes through the runtime's
 * atomics (runtime.h: ckpt_req, ckpt_acked, ckpt_consumed, ckpt_complete, final_done); each
 * acquire and release says what it pairs with.
 */
#ifndef SL_CHECKPOINT_BARRIER_H
#define SL_CHECKPOINT_BARRIER_H

#include <stddef.h>

struct sl_shard;

/* Bytes a copy-on-write snapshot of one operator instance moves on per loop turn: about
 * 0.1 ms of copying between record batches. */
#define SL_SNAP_STEP_BYTES (512u << 10)

/* Tells the source splits of a newly completed checkpoint (before a newer one can start in
 * this turn, so the positions they hold are still that checkpoint's). */
void sl_barrier_announce_complete(struct sl_shard *sh);
/* Starts a newly requested checkpoint at this shard's source instances (their barriers). */
void sl_barrier_start(struct sl_shard *sh);
/* Acknowledges the checkpoint in progress once its barrier has passed every stage instance
 * of the shard and its snapshots are complete and durable; copy-on-write snapshots move on
 * by `budget` bytes per call. Returns 1 if it moved a snapshot on (work done), else 0. */
int sl_barrier_ack(struct sl_shard *sh, size_t budget);
/* After the end of input, with a final checkpoint to come: serves every checkpoint the
 * coordinator asks for until it says there will be no more. */
void sl_barrier_final_checkpoints(struct sl_shard *sh);

#endif
