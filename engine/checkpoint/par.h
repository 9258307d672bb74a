/*
 * par.h - a parallel for over a few threads, for recovery's disk-bound loops (checking and
 * mapping every state file of a checkpoint), which one thread would run at a fraction of
 * what the disk and the cores give. Not for the record path: it starts threads per call.
 */
#ifndef SL_CHECKPOINT_PAR_H
#define SL_CHECKPOINT_PAR_H

#include <stdint.h>

/* Runs fn(i, arg) for every i in [0, n), on up to `threads` threads (the caller's among
 * them; fewer if threads cannot be started), and returns when every call has returned.
 * fn must be safe to run concurrently for different i. threads <= 0: one per online CPU. */
void sl_par_for(uint32_t n, int threads, void (*fn)(uint32_t i, void *arg), void *arg);

#endif
