/*
 * coordinator.c - the checkpoint coordinator (DESIGN.md, "Checkpoints"), on the thread that
 * called sl_job_run, and the savepoint requests other threads post to it.
 *
 * Checkpoint n, from the coordinator's side (barrier.c has the shards', directory.c the
 * files'):
 *
 *   coordinator                         shard i (each)                  disk
 *   -----------                         --------------                  ----
 *   sl_ckpt_ctl_begin(n)  ------------------------------------------->  chk-n/
 *   ckpt_req = n  (release) ----+
 *                               +---->  sees ckpt_req (acquire)
 *                                       sources: positions, BARRIER(n)
 *                                       stages align, operators snapshot
 *                                       io_uring: state files  ----->  chk-n/op*-s*
 *                               +-----  ckpt_acked = n (release)
 *   sees every ckpt_acked (acquire) <---+
 *   sl_ckpt_ctl_complete(n): manifest (temp, fsync, rename) --------->  MANIFEST
 *                            then sinks commit
 *   ckpt_complete = n (release) -->   sources told n completed (acquire)
 *   ckpt_consumed = n (release) -->   snapshot buffers reusable (acquire)
 *
 * One checkpoint at a time: n+1 is requested only after n was consumed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator.h"
#include "directory.h"
#include "runtime.h"

sl_ts_t sl_wall_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (sl_ts_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Hands a finished savepoint request its result and wakes the thread waiting for it. */
static void savepoint_done(struct sl_runtime *rt, int rc, const char *why)
{
	struct sl_savepoint_req *sp = &rt->sp;

	pthread_mutex_lock(&sp->lock);
	if (sp->pending || sp->active) {
		sp->rc = rc;
		if (rc && why)
			snprintf(sp->err, sizeof sp->err, "%s", why);
		sp->pending = sp->active = false;
		sp->done = true;
		pthread_cond_broadcast(&sp->done_cond);
	}
	pthread_mutex_unlock(&sp->lock);
}

/* Fails the job (the coordinator's side of sl_shard_fail): "<what failed>; the job stops,
 * <what is not committed>". */
static void fail_job(struct sl_runtime *rt, int rc, const char *what)
{
	uint64_t last = atomic_load_explicit(&rt->ckpt_complete, memory_order_acquire);

	pthread_mutex_lock(&rt->err_lock);
	if (last)
		sl_job_set_error(rt->job, rc ? rc : -EIO,
				 "%s; the job stops: what came after "
				 "checkpoint %" PRIu64 " is not committed (a restart redoes it)",
				 what, last);
	else
		sl_job_set_error(rt->job, rc ? rc : -EIO,
				 "%s; the job stops: this run's output "
				 "is not committed (a restart redoes it)",
				 what);
	pthread_mutex_unlock(&rt->err_lock);
	atomic_store(&rt->abort, true);
}

/*
 * Counts failed checkpoint n (why: its cause). Past the tolerable number of failures in a
 * row (Flink's execution.checkpointing.tolerable-failed-checkpoints; 0, its default, fails
 * at the first) the job fails: a job that cannot checkpoint commits nothing, and running on
 * looking healthy would hide that. Savepoints do not count (their caller hears of it).
 */
static void count_failed(struct sl_runtime *rt, const struct sl_run_opts *o, uint64_t n, int rc,
			 const char *why, int *in_row)
{
	char what[512];

	rt->ckpt_failed++;
	++*in_row;
	if (o->tolerable_failed_checkpoints < 0 || *in_row <= o->tolerable_failed_checkpoints)
		return;
	snprintf(what, sizeof what,
		 "checkpoint %" PRIu64 " failed (%s): %d in a row, more than "
		 "the %d execution.checkpointing.tolerable-failed-checkpoints tolerates",
		 n, why, *in_row, o->tolerable_failed_checkpoints);
	fail_job(rt, rc, what);
}

/* The final checkpoint could not be taken: never end "done" with the last rows uncommitted. */
static void final_failed(struct sl_runtime *rt, int rc, uint64_t n, const char *why, int tries)
{
	char what[512];

	snprintf(what, sizeof what,
		 "the final checkpoint %" PRIu64 " failed (%s) at the end "
		 "of input, %d times in a row",
		 n, why, tries);
	fail_job(rt, rc, what);
}

/*
 * The checkpoint coordinator (DESIGN §7), on the thread that called sl_job_run: every
 * interval (and at least min_pause after the last one ended) it asks for checkpoint n (the
 * shards' source instances inject its barrier), waits until every shard has acknowledged it
 * (or finished), makes it durable and committed (directory.c), hands it to
 * on_checkpoint, and lets the shards reuse their snapshot buffers. One checkpoint at a time.
 *
 * A checkpoint still unacknowledged after checkpoint_timeout is reported and counted
 * failed; its barrier still drains before the next one starts (barriers never overtake).
 * Savepoints are checkpoints taken at once and also written to the savepoint's directory;
 * stop-with-savepoint stops the sources and lets the final checkpoint be the savepoint.
 * With a final checkpoint (a checkpoint directory, or a stop-with-savepoint), the shards
 * wait at the end of their input until one more checkpoint has completed, so that the
 * last rows of exactly-once sinks are published by a commit a restart can finish.
 */
void sl_ckpt_coordinate(struct sl_runtime *rt, const struct sl_run_opts *o)
{
	struct sl_job *job = rt->job;
	sl_ts_t interval = o->checkpoint_interval_ms > 0 ? o->checkpoint_interval_ms : 0;
	sl_ts_t pause = o->checkpoint_min_pause_ms > 0 ? o->checkpoint_min_pause_ms : 0;
	sl_ts_t timeout = o->checkpoint_timeout_ms > 0 ? o->checkpoint_timeout_ms : 600000;
	sl_ts_t now = sl_wall_now_ms(), next = interval ? now + interval : SL_TS_MAX, started = 0;
	uint64_t n = rt->ckpt_base;
	/* final_inflight: the checkpoint in flight started after every shard's input ended, so
	 * its snapshots hold everything; only such a one can be the final checkpoint */
	bool inflight = false, final_ok = false, timed_out = false, final_inflight = false;
	int final_tries = 0, in_row = 0; /* in_row: failed checkpoints since the last good one */

	for (;;) {
		struct timespec ts = { 0, 1000000 };
		bool all_finished = true, all_ended = true, acked = true, want_final;

		sl_source_discover(rt, sl_wall_now_ms());

		for (int i = 0; i < rt->nshards; i++) {
			const struct sl_shard *sh = &rt->shards[i];
			/* acquire finished: pairs with the shard's release of it at the end of
			 * sl_shard_main (shard.c) */
			bool fin = atomic_load_explicit(&sh->finished, memory_order_acquire);

			all_finished &= fin;
			/* acquire input_done: pairs with the shard's release of it (barrier.c,
			 * sl_barrier_final_checkpoints) */
			all_ended &=
				fin || atomic_load_explicit(&sh->input_done, memory_order_acquire);
			/* acquire ckpt_acked: pairs with the shard's release of it (barrier.c,
			 * sl_barrier_ack): its snapshots and files are readable now */
			if (!fin && atomic_load_explicit(&sh->ckpt_acked, memory_order_acquire) < n)
				acked = false;
		}
		now = sl_wall_now_ms();
		if (inflight && !acked && !timed_out && now - started > timeout) {
			timed_out = true;
			fprintf(stderr,
				"sluice: checkpoint %" PRIu64 " timed out after %" PRId64
				" ms (execution.checkpointing.timeout): discarded\n",
				n, (int64_t)timeout);
		}
		if (inflight && acked) {
			bool sp_here = rt->sp.active && rt->sp.ckpt == n;
			int rc = 0;

			/* a shard that finished before acknowledging took its state with it */
			for (int i = 0; i < rt->nshards; i++)
				if (atomic_load(&rt->shards[i].ckpt_acked) < n)
					rc = -ECANCELED;
			if (timed_out)
				rc = -ETIMEDOUT;
			rc = rc ? (sl_ckpt_ctl_abort(rt, n), rc) : sl_ckpt_ctl_complete(rt, n);
			if (!rc && o->on_checkpoint)
				rc = o->on_checkpoint(job, n, o->checkpoint_arg);

			/* -ECANCELED: the end of input overtook it, nothing went wrong */
			if (rc && rc != -ECANCELED && sp_here)
				rt->ckpt_failed++;
			else if (rc && rc != -ECANCELED)
				count_failed(rt, o, n, rc, strerror(-rc), &in_row);
			else if (!rc) {
				rt->ckpt_completed++;
				in_row = 0;
				/* release ckpt_complete: pairs with the shards' acquire of it
				 * (barrier.c, sl_barrier_announce_complete): n's manifest and
				 * sink commits are done */
				atomic_store_explicit(&rt->ckpt_complete, n, memory_order_release);
			}
			if (rc != -ECANCELED) /* for observers: the history (observe.h) */
				sl_run_obs_ckpt(rt, n, rc, sp_here, started, now);
			if (sp_here) {
				/* the checkpoint may be fine and its savepoint copy not
				 * (write_savepoint left the cause in the request) */
				int sprc = rc;
				bool said;

				pthread_mutex_lock(&rt->sp.lock);
				if (!sprc)
					sprc = rt->sp.rc;
				said = rt->sp.err[0] != 0;
				pthread_mutex_unlock(&rt->sp.lock);
				savepoint_done(rt, sprc, rc && !said ? strerror(-rc) : NULL);
			}
			if (final_inflight && atomic_load(&rt->final_ckpt)) {
				if (!rc)
					final_ok = true;
				else if (++final_tries >= 3) {
					final_failed(rt, rc, n, strerror(-rc), final_tries);
					final_ok = true;
				}
			}
			/* release ckpt_consumed: pairs with the shards' acquire of it
			 * (barrier.c, shard.c, source_rt.c): the coordinator is done reading
			 * their snapshots of n, so the buffers may be reused */
			atomic_store_explicit(&rt->ckpt_consumed, n, memory_order_release);
			if (final_ok)
				atomic_store(&rt->final_done, true);
			inflight = timed_out = final_inflight = false;
			now = sl_wall_now_ms();
			next = interval ? now + (interval > pause ? interval : pause) : SL_TS_MAX;
		}
		if (atomic_load(&rt->abort)) {
			savepoint_done(rt, -ECANCELED, "the job failed");
			atomic_store(&rt->final_done, true);
		}
		if (all_finished && !inflight)
			break;
		if (inflight) {
			nanosleep(&ts, NULL);
			continue;
		}
		/* a savepoint request: at once, or through the final checkpoint when stopping */
		pthread_mutex_lock(&rt->sp.lock);
		if (rt->sp.pending && !rt->sp.active) {
			if (all_ended && !atomic_load(&rt->final_ckpt)) {
				pthread_mutex_unlock(&rt->sp.lock);
				savepoint_done(rt, -ESRCH, "the job has finished");
				pthread_mutex_lock(&rt->sp.lock);
			} else {
				rt->sp.active = true;
				rt->sp.ckpt = n + 1;
				if (rt->sp.stop) {
					atomic_store(&rt->final_ckpt, true);
					sl_job_stop(job);
				}
			}
		}
		pthread_mutex_unlock(&rt->sp.lock);
		want_final = all_ended && atomic_load(&rt->final_ckpt) && !final_ok &&
			     !atomic_load(&rt->final_done);
		if (!all_ended && rt->sp.active && rt->sp.stop)
			want_final = false; /* wait for the sources to stop */
		else if (!all_ended && rt->sp.active)
			want_final = true; /* a savepoint: now */
		if (!atomic_load(&rt->abort) &&
		    (want_final || (!all_ended && !atomic_load(&job->stop) && now >= next))) {
			n++;
			if (rt->sp.active)
				rt->sp.ckpt = n;
			/* a savepoint's state must be logical (portable): shards read this */
			if (rt->sp.active)
				atomic_store_explicit(&rt->ckpt_savepoint, n, memory_order_relaxed);
			int brc = sl_ckpt_ctl_begin(rt, n);

			if (brc) {
				char why[160];

				if (brc == -EEXIST) /* ids only grow: someone else made it */
					snprintf(why, sizeof why,
						 "its directory exists already: another run of "
						 "this job writes to the same checkpoint "
						 "directory (this one is a zombie)");
				else
					snprintf(why, sizeof why, "cannot create its directory: %s",
						 strerror(-brc));
				fprintf(stderr, "sluice: checkpoint %" PRIu64 ": %s\n", n, why);
				sl_run_obs_ckpt(rt, n, brc, rt->sp.active && rt->sp.ckpt == n, now,
						now);
				if (rt->sp.active && rt->sp.ckpt == n) {
					rt->ckpt_failed++;
					savepoint_done(rt, -EIO, "cannot create the checkpoint");
				} else {
					count_failed(rt, o, n, brc, why, &in_row);
				}
				if (all_ended && ++final_tries >= 3 && !atomic_load(&rt->abort))
					final_failed(rt, brc, n, why, final_tries);
				if (all_ended && final_tries >= 3)
					atomic_store(&rt->final_done, true);
				next = now + (interval ? interval : 1000);
				nanosleep(&ts, NULL);
				continue;
			}
			inflight = true;
			final_inflight = all_ended;
			started = now;
			/* release ckpt_req: pairs with the shards' acquire of it (barrier.c,
			 * sl_barrier_start and sl_barrier_final_checkpoints): n's directory and
			 * ckpt_savepoint come first */
			atomic_store_explicit(&rt->ckpt_req, n, memory_order_release);
		}
		nanosleep(&ts, NULL);
	}
	atomic_store(&rt->final_done, true);
	pthread_mutex_lock(&rt->sp.lock);
	atomic_store(&rt->coordinating, false); /* pairs with the check in sl_job_savepoint */
	pthread_mutex_unlock(&rt->sp.lock);
	savepoint_done(rt, -ECANCELED, "the job ended before the savepoint");
	/* release ckpt_consumed: pairs with the shards' acquire of it (barrier.c, shard.c,
	 * source_rt.c): the coordinator is done reading their snapshots of n, so the buffers
	 * may be reused */
	atomic_store_explicit(&rt->ckpt_consumed, UINT64_MAX, memory_order_release);
}

int sl_job_savepoint(struct sl_job *job, const char *dir, bool stop, char *path, size_t cap,
		     char *err, size_t errcap)
{
	struct sl_runtime *rt = __atomic_load_n(&job->rt, __ATOMIC_ACQUIRE);
	struct sl_savepoint_req *sp;
	int rc;

	if (!rt || !atomic_load(&rt->coordinating)) {
		snprintf(err, errcap, "the job is not running (or runs without a coordinator)");
		return -ESRCH;
	}
	if (!dir || !*dir || strlen(dir) >= sizeof sp->dir) {
		snprintf(err, errcap, "no savepoint directory given (state.savepoints.dir)");
		return -EINVAL;
	}
	sp = &rt->sp;
	pthread_mutex_lock(&sp->lock);
	/* again under the lock, which the coordinator holds to clear it: a request either
	 * sees it gone or is pending before the coordinator's last savepoint_done() */
	if (!atomic_load(&rt->coordinating)) {
		pthread_mutex_unlock(&sp->lock);
		snprintf(err, errcap, "the job is not running (or runs without a coordinator)");
		return -ESRCH;
	}
	if (sp->pending || sp->active) {
		pthread_mutex_unlock(&sp->lock);
		snprintf(err, errcap, "another savepoint is in progress");
		return -EBUSY;
	}
	snprintf(sp->dir, sizeof sp->dir, "%s", dir);
	sp->stop = stop;
	sp->done = false;
	sp->rc = 0;
	sp->err[0] = sp->path[0] = 0;
	sp->ckpt = 0;
	sp->pending = true;
	while (!sp->done)
		pthread_cond_wait(&sp->done_cond, &sp->lock);
	rc = sp->rc;
	snprintf(path, cap, "%s", sp->path);
	snprintf(err, errcap, "%s", sp->err);
	pthread_mutex_unlock(&sp->lock);
	return rc;
}
