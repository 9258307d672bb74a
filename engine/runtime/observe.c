/*
 * observe.c - how a thread that is not a shard (the HTTP endpoint, engine/obs/) reads a
 * running job's live counters without the shards taking a lock or paying anything on the
 * record path.
 *
 * Two things appear and disappear under an observer's feet: the run (struct sl_runtime,
 * created half-way through sl_job_run and freed by the next run or sl_job_destroy) and
 * each shard's operator instances (sh->ctx, sh->xctx, sh->si: built by sl_shard_wire on
 * the shard thread, freed by sl_shard_unwire there). Both are guarded by the same two-sided
 * handshake, a reader count and a state word, both seq_cst (Dekker's pattern: the writer
 * stores the state then loads the count, the reader increments the count then loads the
 * state; in the single total order of seq_cst operations one of them sees the other):
 *
 *   shard:   NONE --sl_shard_obs_publish (wired)--> LIVE --sl_shard_obs_retract--> GONE
 *   run:     NULL --sl_job_obs_publish (shards set up)--> rt --sl_job_obs_retract--> NULL
 *
 * A retract waits until no reader is inside, and afterwards no new reader gets in, so the
 * thing may be freed. Readers stay inside only to copy a few counters (obs/snapshot.c), so
 * the wait is microseconds, once per shard at the end of a run. What a reader reads inside
 * are the shards' own plain counters, racily: monotonic 64-bit values written by one
 * thread, loaded with relaxed atomic loads (a torn or stale value is impossible on an
 * aligned 64-bit word, a slightly old one is fine).
 *
 * After GONE, a shard's final counters are in sh->m and sh->stage_blocked_ms, readable
 * once sh->finished is seen (acquire) for as long as the run is.
 */
#include <time.h>

#include "runtime.h"

static void wait_no_readers(_Atomic unsigned *readers)
{
	struct timespec ts = { 0, 20000 };

	/* seq_cst load: ordered after the retracting store above it (see the file comment);
	 * reading 0 also acquires the last reader's release in its _end */
	while (atomic_load_explicit(readers, memory_order_seq_cst) != 0)
		nanosleep(&ts, NULL);
}

void sl_shard_obs_publish(struct sl_shard *sh)
{
	/* seq_cst store (a release too): pairs with the load in sl_shard_observe_begin, which
	 * then sees the instances sl_shard_wire built */
	atomic_store_explicit(&sh->obs_state, SL_SHARD_OBS_LIVE, memory_order_seq_cst);
}

void sl_shard_obs_retract(struct sl_shard *sh)
{
	/* pairs with the increment and load in sl_shard_observe_begin */
	atomic_store_explicit(&sh->obs_state, SL_SHARD_OBS_GONE, memory_order_seq_cst);
	wait_no_readers(&sh->obs_readers);
}

bool sl_shard_observe_begin(struct sl_shard *sh)
{
	/* pairs with the store and load in sl_shard_obs_retract (and the publish store) */
	atomic_fetch_add_explicit(&sh->obs_readers, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&sh->obs_state, memory_order_seq_cst) == SL_SHARD_OBS_LIVE)
		return true;
	atomic_fetch_sub_explicit(&sh->obs_readers, 1, memory_order_release);
	return false;
}

void sl_shard_observe_end(struct sl_shard *sh)
{
	/* release: pairs with the load in wait_no_readers; our reads come before the free */
	atomic_fetch_sub_explicit(&sh->obs_readers, 1, memory_order_release);
}

void sl_job_obs_publish(struct sl_job *job, struct sl_runtime *rt)
{
	/* seq_cst store (a release too): pairs with the load in sl_job_observe_begin, which
	 * then sees the shards array, the rings and the metric arrays set up */
	atomic_store_explicit(&job->obs_rt, rt, memory_order_seq_cst);
}

void sl_job_obs_retract(struct sl_job *job)
{
	/* pairs with the increment and load in sl_job_observe_begin */
	atomic_store_explicit(&job->obs_rt, NULL, memory_order_seq_cst);
	wait_no_readers(&job->obs_readers);
}

struct sl_runtime *sl_job_observe_begin(struct sl_job *job)
{
	struct sl_runtime *rt;

	/* pairs with the store and load in sl_job_obs_retract (and the publish store) */
	atomic_fetch_add_explicit(&job->obs_readers, 1, memory_order_seq_cst);
	rt = atomic_load_explicit(&job->obs_rt, memory_order_seq_cst);
	if (!rt)
		atomic_fetch_sub_explicit(&job->obs_readers, 1, memory_order_release);
	return rt;
}

void sl_job_observe_end(struct sl_job *job)
{
	/* release: pairs with the load in wait_no_readers */
	atomic_fetch_sub_explicit(&job->obs_readers, 1, memory_order_release);
}
