/*
 * runtime.c - sl_job_run(): plan, create the exchange rings, start one thread per shard,
 * wait for them, and keep the counters for sl_job_stats().
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkpointing.h"
#include "runtime.h"
#include "state/backend.h"

#define DEFAULT_RING_BYTES (1u << 20)
#define DEFAULT_MAX_PAR 128

/* Parses "0-3,6,8-9" into cpus[]. Returns the count, or -EINVAL. */
static int parse_cores(const char *spec, int *cpus, int max)
{
	int n = 0;
	const char *p = spec;

	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				return -EINVAL;
		}
		for (long c = a; c <= b; c++) {
			if (n == max)
				return -EINVAL;
			cpus[n++] = (int)c;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		p = end;
	}
	return n ? n : -EINVAL;
}

/* Closes the RocksDB backend's env (every shard closed its DB) and removes the working
 * directory if we made it. */
static void close_state(struct sl_runtime *rt)
{
	sl_state_env_close(rt->state_env);
	rt->state_env = NULL;
	if (rt->state_tmp[0] && rmdir(rt->state_tmp))
		fprintf(stderr, "sluice: removing the state directory %s: %s\n", rt->state_tmp,
			strerror(errno));
	rt->state_tmp[0] = 0;
}

/*
 * Opens the state backend the run asks for (DESIGN §6): nothing for the heap; for RocksDB
 * the process-wide env (one memory budget), in opts->state_dir or a fresh directory under
 * $TMPDIR (default /var/tmp: on disk, since the state may be larger than memory).
 */
static int open_state(struct sl_runtime *rt, const struct sl_run_opts *o)
{
	struct sl_state_env_opts eo = { .kind = SL_STATE_ROCKSDB, .memory_bytes = o->state_memory,
					.dir = o->state_dir, .nshards = rt->nshards };
	char err[512];
	int rc;

	for (int i = 0; i < rt->job->nnodes; i++)
		eo.dbs_per_shard += sl_node_keeps_keyed_state(rt->job->node[i]);
	if (!o->state_backend || !strcmp(o->state_backend, "heap") ||
	    !strcmp(o->state_backend, "hashmap"))
		return 0;
	if (strcmp(o->state_backend, "rocksdb")) {
		sl_job_set_error(rt->job, -EINVAL, "state backend '%s': expected heap or rocksdb",
				 o->state_backend);
		return -EINVAL;
	}
	if (!eo.dir) {
		const char *tmp = getenv("TMPDIR");

		snprintf(rt->state_tmp, sizeof rt->state_tmp, "%s/sluice-state-XXXXXX",
			 tmp && *tmp ? tmp : "/var/tmp");
		if (!mkdtemp(rt->state_tmp)) {
			rc = -errno;
			sl_job_set_error(rt->job, rc, "state directory %s: %s", rt->state_tmp,
					 strerror(-rc));
			rt->state_tmp[0] = 0;
			return rc;
		}
		eo.dir = rt->state_tmp;
	}
	rc = sl_state_env_open(&eo, &rt->state_env, err, sizeof err);
	if (rc) {
		sl_job_set_error(rt->job, rc, "RocksDB state backend in %s: %s", eo.dir, err);
		close_state(rt);
	}
	return rc;
}

void sl_runtime_destroy(struct sl_runtime *rt)
{
	if (!rt)
		return;
	if (rt->rings) {
		size_t nr = (size_t)rt->nlanes * rt->nshards * rt->nshards;

		for (size_t i = 0; i < nr; i++)
			sl_ring_destroy(rt->rings[i]);
	}
	if (rt->dl_close)
		close(rt->dl_fd);
	free(rt->rings);
	free(rt->lane_base);
	for (int i = 0; rt->shards && i < rt->nshards; i++) {
		free(rt->shards[i].m);
		free(rt->shards[i].stage_blocked_ms);
		free(rt->shards[i].files);
	}
	free(rt->shards);
	free(rt->src_splits);
	close_state(rt);
	pthread_mutex_destroy(&rt->err_lock);
	pthread_mutex_destroy(&rt->sp.lock);
	pthread_cond_destroy(&rt->sp.done_cond);
	free(rt);
}

static int create_rings(struct sl_runtime *rt)
{
	struct sl_job *job = rt->job;
	size_t n = (size_t)rt->nshards;

	rt->lane_base = calloc((size_t)job->nstages, sizeof(*rt->lane_base));
	if (!rt->lane_base)
		return -ENOMEM;
	rt->nlanes = 0;
	for (int s = 0; s < job->nstages; s++) {
		rt->lane_base[s] = rt->nlanes;
		rt->nlanes += job->stage[s].nlanes;
	}
	rt->rings = calloc((size_t)rt->nlanes * n * n + 1, sizeof(*rt->rings));
	if (!rt->rings)
		return -ENOMEM;
	for (size_t k = 0; k < (size_t)rt->nlanes * n * n; k++) {
		rt->rings[k] = sl_ring_create(rt->ring_bytes);
		if (!rt->rings[k])
			return -ENOMEM;
	}
	return 0;
}

static sl_ts_t wall_now_ms(void)
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

/*
 * The checkpoint coordinator (DESIGN §7), on the thread that called sl_job_run: every
 * interval (and at least min_pause after the last one ended) it asks for checkpoint n (the
 * shards' source instances inject its barrier), waits until every shard has acknowledged it
 * (or finished), makes it durable and committed (checkpointing.c), hands it to
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
/* Without a coordinator: the run thread only looks for new source splits (a source whose
 * splits grow), every 10 ms until the shards finish; with none it just waits for them. */
static void discover_until_finished(struct sl_runtime *rt)
{
	struct timespec ts = { 0, 10000000 };

	while (sl_source_discover(rt, wall_now_ms())) {
		bool all_finished = true;

		for (int i = 0; i < rt->nshards; i++)
			all_finished &=
				atomic_load_explicit(&rt->shards[i].finished, memory_order_acquire);
		if (all_finished || atomic_load(&rt->abort))
			break;
		nanosleep(&ts, NULL);
	}
}

static void coordinate(struct sl_runtime *rt, const struct sl_run_opts *o)
{
	struct sl_job *job = rt->job;
	sl_ts_t interval = o->checkpoint_interval_ms > 0 ? o->checkpoint_interval_ms : 0;
	sl_ts_t pause = o->checkpoint_min_pause_ms > 0 ? o->checkpoint_min_pause_ms : 0;
	sl_ts_t timeout = o->checkpoint_timeout_ms > 0 ? o->checkpoint_timeout_ms : 600000;
	sl_ts_t now = wall_now_ms(), next = interval ? now + interval : SL_TS_MAX, started = 0;
	uint64_t n = rt->ckpt_base;
	/* final_inflight: the checkpoint in flight started after every shard's input ended, so
	 * its snapshots hold everything; only such a one can be the final checkpoint */
	bool inflight = false, final_ok = false, timed_out = false, final_inflight = false;
	int final_tries = 0;

	for (;;) {
		struct timespec ts = { 0, 1000000 };
		bool all_finished = true, all_ended = true, acked = true, want_final;

		sl_source_discover(rt, wall_now_ms());

		for (int i = 0; i < rt->nshards; i++) {
			const struct sl_shard *sh = &rt->shards[i];
			bool fin = atomic_load_explicit(&sh->finished, memory_order_acquire);

			all_finished &= fin;
			all_ended &= fin || atomic_load_explicit(&sh->input_done,
								 memory_order_acquire);
			if (!fin && atomic_load_explicit(&sh->ckpt_acked, memory_order_acquire) < n)
				acked = false;
		}
		now = wall_now_ms();
		if (inflight && !acked && !timed_out && now - started > timeout) {
			timed_out = true;
			fprintf(stderr, "sluice: checkpoint %" PRIu64 " timed out after %" PRId64
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
			if (rc && rc != -ECANCELED)
				rt->ckpt_failed++;
			else if (!rc) {
				rt->ckpt_completed++;
				atomic_store_explicit(&rt->ckpt_complete, n, memory_order_release);
			}
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
					sl_job_set_error(job, rc, "the final checkpoint failed %d times "
							 "(last: %s): what came after checkpoint %" PRIu64
							 " is not committed; a restart redoes it",
							 final_tries, strerror(-rc), rt->ckpt_completed
							 ? n - 1 : 0);
					final_ok = true;
				}
			}
			atomic_store_explicit(&rt->ckpt_consumed, n, memory_order_release);
			if (final_ok)
				atomic_store(&rt->final_done, true);
			inflight = timed_out = final_inflight = false;
			now = wall_now_ms();
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
			want_final = true;  /* a savepoint: now */
		if (!atomic_load(&rt->abort) &&
		    (want_final ||
		     (!all_ended && !atomic_load(&job->stop) && now >= next))) {
			n++;
			if (rt->sp.active)
				rt->sp.ckpt = n;
			/* a savepoint's state must be logical (portable): shards read this */
			if (rt->sp.active)
				atomic_store_explicit(&rt->ckpt_savepoint, n, memory_order_relaxed);
			int brc = sl_ckpt_ctl_begin(rt, n);

			if (brc) {
				fprintf(stderr, "sluice: checkpoint %" PRIu64 ": cannot create its "
						"directory: %s\n", n, strerror(-brc));
				rt->ckpt_failed++;
				if (rt->sp.active && rt->sp.ckpt == n)
					savepoint_done(rt, -EIO, "cannot create the checkpoint");
				if (all_ended && ++final_tries >= 3)
					atomic_store(&rt->final_done, true);
				next = now + (interval ? interval : 1000);
				nanosleep(&ts, NULL);
				continue;
			}
			inflight = true;
			final_inflight = all_ended;
			started = now;
			atomic_store_explicit(&rt->ckpt_req, n, memory_order_release);
		}
		nanosleep(&ts, NULL);
	}
	atomic_store(&rt->final_done, true);
	savepoint_done(rt, -ECANCELED, "the job ended before the savepoint");
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

int sl_job_run(struct sl_job *job, const struct sl_run_opts *opts)
{
	static const struct sl_run_opts defaults;
	struct sl_runtime *rt;
	int cpus[1024], ncpus = 0, rc;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	if (!opts)
		opts = &defaults;
	rc = sl_plan_build(job);
	if (rc)
		return rc;
	if (opts->cores) {
		ncpus = parse_cores(opts->cores, cpus, 1024);
		if (ncpus < 0) {
			sl_job_set_error(job, -EINVAL, "--cores '%s': expected a list like 0-3,6",
					 opts->cores);
			return -EINVAL;
		}
	}
	sl_runtime_destroy(job->rt);
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	pthread_mutex_init(&rt->err_lock, NULL);
	pthread_mutex_init(&rt->sp.lock, NULL);
	pthread_cond_init(&rt->sp.done_cond, NULL);
	/* published whole: sl_job_savepoint may look at it from another thread */
	__atomic_store_n(&job->rt, rt, __ATOMIC_RELEASE);
	rt->job = job;
	rt->nshards = opts->nshards > 0 ? opts->nshards : ncpus > 0 ? ncpus : (int)online;
	rt->max_par = opts->max_parallelism > 0 ? (uint32_t)opts->max_parallelism
						: DEFAULT_MAX_PAR;
	rt->ring_bytes = opts->ring_bytes ? opts->ring_bytes : DEFAULT_RING_BYTES;
	rt->dl_fd = STDERR_FILENO;
	if ((uint32_t)rt->nshards > rt->max_par) {
		sl_job_set_error(job, -EINVAL, "%d shards but only %u key groups", rt->nshards,
				 rt->max_par);
		return -EINVAL;
	}
	if (opts->dead_letter_path) {
		rt->dl_fd = open(opts->dead_letter_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
				 0644);
		if (rt->dl_fd < 0) {
			rc = -errno;
			rt->dl_fd = STDERR_FILENO;
			sl_job_set_error(job, rc, "dead-letter output '%s': %s",
					 opts->dead_letter_path, strerror(-rc));
			return rc;
		}
		rt->dl_close = true;
	}
	rt->shards = calloc((size_t)rt->nshards, sizeof(*rt->shards));
	rt->src_splits = calloc((size_t)job->nnodes, sizeof(*rt->src_splits));
	if (!rt->shards || !rt->src_splits || create_rings(rt) < 0) {
		sl_job_set_error(job, -ENOMEM, "out of memory creating %d shards' rings",
				 rt->nshards);
		return -ENOMEM;
	}
	atomic_store(&job->stop, false);
	rt->checkpointing = opts->checkpoint_interval_ms > 0 || opts->savepoints ||
			    opts->from_savepoint;
	if (rt->checkpointing) {
		rc = sl_ckpt_ctl_open(rt, opts->checkpoint_dir, opts->from_savepoint);
		if (!rc)
			rc = sl_ckpt_restore_layout(rt);
		if (rc)
			return rc;
		atomic_store(&rt->final_ckpt, opts->checkpoint_dir != NULL);
	}
	for (int i = 0; i < rt->nshards; i++) {
		struct sl_shard *sh = &rt->shards[i];

		sh->rt = rt;
		sh->index = i;
		sh->m = calloc((size_t)job->nnodes, sizeof(*sh->m));
		sh->stage_blocked_ms = calloc((size_t)job->nstages, sizeof(uint64_t));
		if (!sh->m || !sh->stage_blocked_ms) {
			sl_job_set_error(job, -ENOMEM, "out of memory creating shards");
			return -ENOMEM;
		}
		/* pin when asked, or when every shard can have a core of its own */
		sh->cpu = ncpus > 0 ? cpus[i % ncpus] : rt->nshards <= online ? i : -1;
	}
	rc = open_state(rt, opts);
	if (rc)
		return rc;
	for (int i = 0; i < rt->nshards; i++) {
		rc = pthread_create(&rt->shards[i].thread, NULL, sl_shard_main, &rt->shards[i]);
		if (rc) {
			sl_job_set_error(job, -rc, "cannot start shard %d: %s", i, strerror(rc));
			atomic_store(&rt->abort, true);
			for (int j = 0; j < i; j++)
				pthread_join(rt->shards[j].thread, NULL);
			return -rc;
		}
	}
	if (rt->checkpointing) {
		atomic_store(&rt->coordinating, true);
		coordinate(rt, opts);
		atomic_store(&rt->coordinating, false);
	} else {
		discover_until_finished(rt);
	}
	for (int i = 0; i < rt->nshards; i++)
		pthread_join(rt->shards[i].thread, NULL);
	sl_ckpt_ctl_close(rt);
	close_state(rt);
	return job->err.code;
}

void sl_job_stats(const struct sl_job *job, struct sl_job_stats *out)
{
	const struct sl_runtime *rt = job->rt;

	memset(out, 0, sizeof(*out));
	if (!rt || !rt->shards)
		return;
	out->checkpoints = rt->ckpt_completed;
	out->checkpoints_failed = rt->ckpt_failed;
	for (int i = 0; i < rt->nshards; i++) {
		out->dead_letters += rt->shards[i].dead_letters;
		for (int s = 0; s < job->nstages; s++)
			out->backpressure_ms += rt->shards[i].stage_blocked_ms[s];
	}
	for (size_t k = 0; rt->rings && k < (size_t)rt->nlanes * rt->nshards * rt->nshards; k++)
		if (rt->rings[k])
			out->ring_full += atomic_load_explicit(&rt->rings[k]->prod_full,
							      memory_order_relaxed);
	for (int n = 0; n < job->nnodes; n++) {
		const struct sl_stream *node = job->node[n];

		for (int i = 0; i < rt->nshards; i++) {
			const struct sl_op_metrics *m = &rt->shards[i].m[n];

			if (node->kind == SL_NODE_SOURCE)
				out->records_in += m->in;
			if (node->kind == SL_NODE_SINK)
				out->records_out += m->in;
			out->late_records += m->late;
		}
	}
}

void sl_job_print_metrics(const struct sl_job *job, void *f)
{
	const struct sl_runtime *rt = job->rt;

	if (!rt || !rt->shards)
		return;
	for (int n = 0; n < job->nnodes; n++) {
		const struct sl_stream *node = job->node[n];
		struct sl_op_metrics sum = { 0 };

		for (int i = 0; i < rt->nshards; i++) {
			const struct sl_op_metrics *m = &rt->shards[i].m[n];

			sum.in += m->in;
			sum.out += m->out;
			sum.late += m->late;
			sum.state_entries += m->state_entries;
			sum.state_bytes += m->state_bytes;
			sum.ckpt_bytes += m->ckpt_bytes;
		}
		fprintf(f, "operator %-20s stage %d in %" PRIu64 " out %" PRIu64 " late %" PRIu64
			   " state %" PRIu64,
			node->name, node->stage, sum.in, sum.out, sum.late, sum.state_entries);
		/* sizes only where there are some: stateless operators keep their short line */
		if (sum.state_bytes)
			fprintf(f, " (%" PRIu64 " bytes)", sum.state_bytes);
		if (sum.ckpt_bytes)
			fprintf(f, " checkpointed %" PRIu64 " bytes", sum.ckpt_bytes);
		fputc('\n', f);
	}
	for (int s = 0; s < job->nstages; s++) {
		uint64_t blocked = 0, full = 0;

		for (int i = 0; i < rt->nshards; i++)
			blocked += rt->shards[i].stage_blocked_ms[s];
		/* stalls of the rings feeding the next stages out of s */
		for (int t = 0; t < job->nstages; t++) {
			for (int l = 0; l < job->stage[t].nlanes; l++) {
				if (job->stage[t].lanes[l]->in->stage != s)
					continue;
				for (int a = 0; a < rt->nshards; a++)
					for (int b = 0; b < rt->nshards; b++)
						full += atomic_load_explicit(
							&sl_rt_ring_lane((struct sl_runtime *)rt, t, l,
									 a, b)->prod_full,
							memory_order_relaxed);
			}
		}
		fprintf(f, "stage %d (%s) backpressured %" PRIu64 " ms over all shards, output "
			   "rings full %" PRIu64 " times\n",
			s, job->stage[s].input->name, blocked, full);
	}
}
