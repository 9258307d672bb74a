/*
 * runtime.c - sl_job_run(): plan, create the exchange rings, start one thread per shard,
 * wait for them, and keep the counters for sl_job_stats() (engine/obs/metrics.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "coordinator.h"
#include "directory.h"
#include "runtime.h"
#include "backend.h"

#define DEFAULT_RING_BYTES (1u << 20)
#define DEFAULT_MAX_PAR	   128

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
	if (rt->state_tmp[0])
		sl_state_workdir_release(rt->state_tmp, rt->state_lock);
	if (rt->state_tmp[0] && rmdir(rt->state_tmp))
		fprintf(stderr, "sluice: removing the state directory %s: %s\n", rt->state_tmp,
			strerror(errno));
	rt->state_tmp[0] = 0;
}

/*
 * Opens the state backend the run asks for (DESIGN §6): nothing for the heap; for RocksDB
 * the process-wide env (one memory budget), in opts->state_dir or a fresh directory under
 * $TMPDIR (default /var/tmp: on disk, since the state may be larger than memory), after
 * removing the directories there of runs that died (kill -9 leaves them).
 */
static int open_state(struct sl_runtime *rt, const struct sl_run_opts *o)
{
	struct sl_state_env_opts eo = { .kind = SL_STATE_ROCKSDB,
					.memory_bytes = o->state_memory,
					.dir = o->state_dir,
					.nshards = rt->nshards };
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

		tmp = tmp && *tmp ? tmp : "/var/tmp";
		rc = sl_state_workdir_create(tmp, rt->state_tmp, sizeof rt->state_tmp,
					     &rt->state_lock);
		if (rc) {
			sl_job_set_error(rt->job, rc, "state directory under %s: %s", tmp,
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
	/* observers out before anything they read goes */
	if (rt->job && atomic_load(&rt->job->obs_rt) == rt)
		sl_job_obs_retract(rt->job);
	if (rt->rings) {
		size_t nr = (size_t)rt->nlanes * rt->nshards * rt->nshards;

		for (size_t i = 0; i < nr; i++)
			sl_ring_destroy(rt->rings[i]);
	}
	if (rt->dl_close)
		close(rt->dl_fd);
	free(rt->rings);
	free(rt->lane_base);
	sl_run_obs_fini(rt);
	for (int i = 0; rt->shards && i < rt->nshards; i++) {
		free(rt->shards[i].m);
		free(rt->shards[i].hot);
		free(rt->shards[i].stage_blocked_ms);
		free(rt->shards[i].files);
	}
	free(rt->shards);
	free(rt->bells);
	free(rt->src_splits);
	free(rt->src_nsplits);
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

/* Without a coordinator: the run thread only looks for new source splits (a source whose
 * splits grow), every 10 ms until the shards finish; with none it just waits for them. */
static void discover_until_finished(struct sl_runtime *rt)
{
	struct timespec ts = { 0, 10000000 };

	while (sl_source_discover(rt, sl_wall_now_ms())) {
		bool all_finished = true;

		for (int i = 0; i < rt->nshards; i++)
			all_finished &=
				/* acquire finished: pairs with the shard's release of it at the
				 * end of sl_shard_main (shard.c) */
				atomic_load_explicit(&rt->shards[i].finished, memory_order_acquire);
		if (all_finished || atomic_load(&rt->abort))
			break;
		nanosleep(&ts, NULL);
	}
}

/* The splits each source starts with: its own count, or on restore the count its
 * restored_nsplits keeps (datagen: the first run's), so the same stream goes on. */
static void count_splits(struct sl_runtime *rt)
{
	struct sl_job *job = rt->job;

	for (int i = 0; i < job->nnodes; i++) {
		const struct sl_stream *src = job->node[i];
		int n, had;

		if (src->kind != SL_NODE_SOURCE)
			continue;
		n = src->src_ops->nsplits ? src->src_ops->nsplits(src->cfg) : 1;
		had = sl_ckpt_restored_nsplits(rt, i);
		if (had > 0 && src->src_ops->restored_nsplits)
			n = src->src_ops->restored_nsplits(src->cfg, had);
		rt->src_nsplits[i] = n;
	}
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
	rt->max_par = opts->max_parallelism > 0 ? (uint32_t)opts->max_parallelism : DEFAULT_MAX_PAR;
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
	rt->bells = aligned_alloc(SL_CACHE_LINE, (size_t)rt->nshards * sizeof(*rt->bells));
	if (rt->bells)
		memset(rt->bells, 0, (size_t)rt->nshards * sizeof(*rt->bells));
	rt->src_splits = calloc((size_t)job->nnodes, sizeof(*rt->src_splits));
	rt->src_nsplits = calloc((size_t)job->nnodes, sizeof(*rt->src_nsplits));
	if (!rt->shards || !rt->bells || !rt->src_splits || !rt->src_nsplits ||
	    create_rings(rt) < 0) {
		sl_job_set_error(job, -ENOMEM, "out of memory creating %d shards' rings",
				 rt->nshards);
		return -ENOMEM;
	}
	rt->checkpointing =
		opts->checkpoint_interval_ms > 0 || opts->savepoints || opts->from_savepoint;
	if (rt->checkpointing) {
		rc = sl_ckpt_ctl_open(rt, opts->checkpoint_dir, opts->from_savepoint,
				      opts->start_fresh, opts->allow_non_restored_state);
		if (!rc)
			rc = sl_ckpt_restore_layout(rt);
		if (rc)
			return rc;
		atomic_store(&rt->final_ckpt, opts->checkpoint_dir != NULL);
	}
	count_splits(rt);
	/* a clock-derived fallback still differs between runs when there is no entropy */
	if (getrandom(&rt->ckpt_run, sizeof rt->ckpt_run, GRND_NONBLOCK) !=
	    (ssize_t)sizeof rt->ckpt_run) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		rt->ckpt_run = ((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec) *
				       0x9E3779B97F4A7C15ull ^
			       (uint64_t)getpid();
	}
	rt->ckpt_run |= 1; /* never 0, the name without a run */
	rt->heap_limit_given = opts->state_memory != 0;
	rt->heap_limit = opts->state_memory ? opts->state_memory : sl_mem_guard_default_limit();
	for (int i = 0; i < rt->nshards; i++) {
		struct sl_shard *sh = &rt->shards[i];

		sh->rt = rt;
		sh->index = i;
		sh->m = calloc((size_t)job->nnodes, sizeof(*sh->m));
		sh->hot = calloc((size_t)job->nnodes, sizeof(*sh->hot));
		sh->stage_blocked_ms = calloc((size_t)job->nstages, sizeof(uint64_t));
		if (!sh->m || !sh->hot || !sh->stage_blocked_ms) {
			sl_job_set_error(job, -ENOMEM, "out of memory creating shards");
			return -ENOMEM;
		}
		/* pin when asked, or when every shard can have a core of its own */
		sh->cpu = ncpus > 0 ? cpus[i % ncpus] : rt->nshards <= online ? i : -1;
	}
	if (sl_run_obs_init(rt) < 0) {
		sl_job_set_error(job, -ENOMEM, "out of memory creating shards");
		return -ENOMEM;
	}
	/* shards, rings and metric arrays are in place: observers may read them from now on
	 * (runtime/observe.c); the instances each shard publishes itself once wired */
	sl_job_obs_publish(job, rt);
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
		sl_ckpt_coordinate(rt, opts);
		atomic_store(&rt->coordinating, false);
	} else {
		discover_until_finished(rt);
	}
	for (int i = 0; i < rt->nshards; i++)
		pthread_join(rt->shards[i].thread, NULL);
	sl_ckpt_ctl_close(rt);
	close_state(rt);
	/* a stop ends this run, not the next one; one asked for before or while the run
	 * started (a SIGTERM during planning) was kept until here, not lost */
	atomic_store(&job->stop, false);
	return job->err.code;
}
