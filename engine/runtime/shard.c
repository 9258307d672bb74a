/*
 * shard.c - the shard loop: one pinned thread that runs one instance of every stage.
 *
 * A loop turn:
 *   1. read the clock once (processing time for timers, idleness, periodic watermarks);
 *   2. visit stages downstream-first: a stage whose exchange-outs hold frames back first
 *      tries to drain them and, if it cannot, is skipped (backpressure: it stops pulling its
 *      input, while downstream stages keep running, so the mesh cannot deadlock);
 *      otherwise it consumes a batch from each input channel, or polls its source splits;
 *   3. fire processing-time timers, tick source watermarks and idleness;
 *   4. publish every output ring and release every input ring, so partial batches never
 *      wait for a full one: an idle pipeline forwards a lone record at once;
 *   5. with no work done, spin briefly, then yield, then sleep 50 us (bounded latency).
 *
 * Exchange channel state machine (per input ring):
 *   active --IDLE(1)--> idle --record/WM/IDLE(0)--> active;  any --END--> ended
 * The stage watermark is the minimum over active channels and only moves forward.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "barrier.h"
#include "directory.h"
#include "runtime.h"
#include "uring_writer.h"
#include "watermark.h"

#ifdef SL_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#define CHAN_BATCH 256

sl_ts_t sl_shard_now(const struct sl_shard *sh)
{
	return sh->now;
}

int sl_shard_index(const struct sl_shard *sh)
{
	return sh->index;
}

int sl_shard_count(const struct sl_shard *sh)
{
	return sh->rt->nshards;
}

uint32_t sl_shard_max_par(const struct sl_shard *sh)
{
	return sh->rt->max_par;
}

void sl_shard_fail(struct sl_shard *sh, int code, const char *fmt, ...)
{
	struct sl_job *job = sh->rt->job;
	va_list ap;

	pthread_mutex_lock(&sh->rt->err_lock);
	if (!job->err.code) {
		job->err.code = code ? code : -EIO;
		va_start(ap, fmt);
		vsnprintf(job->err.msg, sizeof job->err.msg, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&sh->rt->err_lock);
	if (!sh->error)
		sh->error = code ? code : -EIO;
	atomic_store_explicit(&sh->rt->abort, true, memory_order_relaxed);
}

void sl_dead_letter_write(struct sl_shard *sh, const char *where, const char *why, const char *raw,
			  size_t rawlen)
{
	char line[SL_DEAD_LETTER_MAX];
	size_t n;

	sh->dead_letters++;
	/* stderr is the dead-letter output unless a file is given: then only the first few
	 * records are announced there, and the file gets them all */
	if (sh->rt->dl_fd == STDERR_FILENO || sh->dead_letters <= 10)
		fprintf(stderr, "sluice: malformed record at %s: %s%s\n", where, why,
			sh->dead_letters == 10 && sh->rt->dl_fd != STDERR_FILENO
				? " (further ones only in the dead-letter file)"
				: "");
	if (sh->rt->dl_fd == STDERR_FILENO)
		return;
	/* one valid JSON object a line, whatever where, why and raw hold */
	n = sl_dead_letter_format(line, where, why, raw, rawlen);
	/* one write per line: O_APPEND keeps lines of different shards whole */
	if (write(sh->rt->dl_fd, line, n) < 0)
		sl_shard_fail(sh, -errno, "dead-letter output: %s", strerror(errno));
}

static sl_ts_t wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (sl_ts_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void sl_stage_input_time(struct sl_stage_inst *si, const struct sl_wm_min *m)
{
	sl_ts_t wm;

	if (!m->active) {
		if (m->idle)
			sl_op_idle(si->root, true);
		return;
	}
	if (si->root->idle)
		sl_op_idle(si->root, false);
	wm = sl_wm_min_advance(m, si->wm_out);
	if (wm != SL_TS_MIN) {
		si->wm_out = wm;
		sl_op_watermark(si->root, wm);
	}
}

/*
 * Recomputes an exchange stage's watermark/idleness from its channels (watermark.h).
 *
 * A channel leaves the minimum when its input is exhausted: its sender forwarded the
 * watermark of +inf before its end. A channel that ended below +inf was stopped (sl_job_stop
 * ends sources where they are, DESIGN §7), not exhausted: it keeps holding the minimum at
 * its last watermark. Otherwise the other shards' channels, which may run ahead in event
 * time, would fire windows without the records the stopped sender still has to send, and a
 * restart from the stop's final checkpoint would send them again into windows already
 * committed (a window twice with partial counts, or the records dropped as late).
 */
static void chan_update(struct sl_stage_inst *si)
{
	struct sl_wm_min m;

	sl_wm_min_init(&m);
	for (int i = 0; i < si->nchans; i++) {
		const struct sl_chan *c = &si->chans[i];

		sl_wm_min_add(&m, c->wm, c->idle, c->ended && (c->dead || c->wm == SL_TS_MAX));
	}
	sl_stage_input_time(si, &m);
}

/* Alignment time for observers (observe.h): from the first barrier of checkpoint n on any
 * channel of the stage to the last. Two clock reads a checkpoint and stage instance. */
static void align_begin(struct sl_stage_inst *si)
{
	struct sl_stage_obs *o = &si->sh->obs->stage[si->st->id];

	if (!o->align_since_ns)
		o->align_since_ns = sl_obs_clock_ns();
}

static void align_done(struct sl_stage_inst *si, uint64_t n)
{
	struct sl_stage_obs *o = &si->sh->obs->stage[si->st->id];

	/* relaxed stores: the coordinator loads them once the shard acknowledged n */
	if (o->align_since_ns)
		__atomic_store_n(&o->align_ns_last, sl_obs_clock_ns() - o->align_since_ns,
				 __ATOMIC_RELAXED);
	__atomic_store_n(&o->align_ckpt, n, __ATOMIC_RELAXED);
	o->align_since_ns = 0;
}

/*
 * Barrier alignment (DESIGN §7): a channel that delivered the barrier of checkpoint n is not
 * read again until every live channel has delivered it (an ended or dead channel never
 * will: it counts as aligned). Then the stage's operators snapshot, in chain order, and the
 * barrier moves on; every record before the barrier on any channel is in the snapshot and
 * none after it.
 */
static void chan_try_align(struct sl_stage_inst *si)
{
	uint64_t n = 0;

	for (int i = 0; i < si->nchans && !n; i++)
		if (si->chans[i].blocked)
			n = si->chans[i].barrier;
	if (!n)
		return;
	for (int i = 0; i < si->nchans; i++) {
		const struct sl_chan *c = &si->chans[i];

		if (c->ended || c->dead)
			continue;
		if (!c->blocked || c->barrier != n)
			return;
	}
	for (int i = 0; i < si->nchans; i++)
		si->chans[i].blocked = false;
	si->ckpt_done = n;
	align_done(si, n);
	sl_op_barrier(si->root, n);
}

static void chan_end(struct sl_stage_inst *si, struct sl_chan *c)
{
	c->ended = true;
	c->blocked = false;
	chan_try_align(si);
	for (int i = 0; i < si->nchans; i++)
		if (!si->chans[i].ended) {
			chan_update(si);
			return;
		}
	si->ended = true;
	sl_op_end(si->root);
}

/*
 * Keyed state lookups are cache misses (1M keys: two dependent DRAM reads, slot then entry).
 * The frames behind the current one are already in the ring, with their key hash and event
 * time in the header, so the receiver starts those misses early: the table slot of the
 * record PF_FAR frames ahead and the entry of the record PF_NEAR frames ahead. By the time a
 * record is processed its state is in cache. Distances: enough misses in flight to cover
 * memory latency, few enough to stay in L1.
 */
#define PF_FAR	16
#define PF_NEAR 8

struct lookahead {
	uint64_t pos; /* ring position of the first frame not yet prefetched */
	int ahead;    /* frames between the consumer and pos */
};

static inline void look_ahead(struct sl_ctx *root, struct sl_ring *r, struct lookahead *la,
			      int dist, int stage)
{
	const struct sl_frame *g;

	if (la->ahead <= 0) {
		la->pos = r->cons_next;
		la->ahead = 0;
	}
	while (la->ahead < dist && (g = sl_ring_lookahead_spsc(r, &la->pos)) != NULL) {
		if (g->type == SL_FRAME_RECORD)
			root->def->ops->prefetch(root, g->hash, g->ts, stage);
		la->pos += g->size;
		la->ahead++;
	}
}

/* Consumes up to a batch from each channel. Returns frames consumed. */
static int consume(struct sl_stage_inst *si)
{
	struct sl_ctx *root = si->root;
	bool pf = root->def->ops->prefetch != NULL;
	int work = 0;

	for (int i = 0; i < si->nchans && !si->ended; i++) {
		struct sl_chan *c = &si->chans[i];
		struct lookahead far = { 0 }, near = { 0 };
		const struct sl_frame *f;
		int k = 0;

		if (c->dead) {
			while ((f = sl_ring_peek_spsc(c->ring)) != NULL) {
				sl_ring_consume_spsc(c->ring, f);
				k++;
			}
			work += k;
			continue;
		}
		while (!c->ended && !c->blocked && k < CHAN_BATCH && !si->pending &&
		       (f = sl_ring_peek_spsc(c->ring)) != NULL) {
			if (pf) {
				look_ahead(root, c->ring, &far, PF_FAR, 0);
				look_ahead(root, c->ring, &near, PF_NEAR, 1);
				far.ahead--;
				near.ahead--;
			}
			switch (f->type) {
			case SL_FRAME_RECORD:
				if (c->idle) {
					c->idle = false;
					chan_update(si);
				}
				root->hash = f->hash;
				root->m.in++;
				root->def->ops->process(root, f->ts, sl_frame_row(f));
				break;
			case SL_FRAME_PARTIAL: {
				/* only an exchange whose keyed operator has merge_partial sends
				 * these (plan.c), and the sender is not idle (exchange.c) */
				const struct sl_partial *pt = (const void *)f->payload;

				root->hash = f->hash;
				root->key = pt->key;
				root->klen = pt->klen;
				root->m.in += pt->nrows;
				root->def->ops->merge_partial(root, f->ts, sl_partial_acc(pt),
							      pt->acc_len, pt->nrows);
				break;
			}
			case SL_FRAME_WATERMARK:
				c->idle = false;
				if (f->ts > c->wm)
					c->wm = f->ts;
				chan_update(si);
				break;
			case SL_FRAME_IDLE:
				c->idle = f->ts != 0;
				chan_update(si);
				break;
			case SL_FRAME_END:
				sl_ring_consume_spsc(c->ring, f);
				chan_end(si, c);
				k++;
				continue;
			case SL_FRAME_BARRIER:
				sl_ring_consume_spsc(c->ring, f);
				align_begin(si);
				c->blocked = true;
				c->barrier = (uint64_t)f->ts;
				k++;
				chan_try_align(si);
				continue;
			default:
				break;
			}
			sl_ring_consume_spsc(c->ring, f);
			k++;
		}
		work += k;
	}
	return work;
}

/* Drains the stage's exchange-outs. Returns frames moved. */
static int drain(struct sl_shard *sh, struct sl_stage_inst *si)
{
	struct sl_job *job = sh->rt->job;
	int moved = 0;

	for (int i = 0; i < job->nnodes && si->pending; i++) {
		struct sl_stream *n = job->node[i];

		if (n->kind == SL_NODE_KEYBY && n->in->stage == si->st->id)
			moved += sl_exchange_drain(&sh->xctx[i]);
	}
	return moved;
}

static void publish_all(struct sl_shard *sh)
{
	struct sl_runtime *rt = sh->rt;
	struct sl_job *job = rt->job;

	for (int s = 0; s < job->nstages; s++) {
		if (job->stage[s].input->kind == SL_NODE_SOURCE)
			continue;
		for (int l = 0; l < job->stage[s].nlanes; l++) {
			for (int j = 0; j < rt->nshards; j++) {
				sl_ring_publish_spsc(sl_rt_ring_lane(rt, s, l, sh->index, j));
				sl_ring_release_spsc(sl_rt_ring_lane(rt, s, l, j, sh->index));
			}
		}
	}
}

/* Out of input: make what the sinks buffered visible now rather than at the next batch. */
static void flush_sinks(struct sl_shard *sh)
{
	struct sl_job *job = sh->rt->job;

	for (int i = 0; i < job->nnodes; i++)
		if (job->node[i]->kind == SL_NODE_SINK)
			sl_sink_flush(&sh->ctx[i]);
}

/* The shard's ring indices summed: frames published into its inputs and space freed in
 * its outputs both change it (doorbell.h). Read only by a shard about to sleep. */
static uint64_t ring_fingerprint(void *arg)
{
	struct sl_shard *sh = arg;
	struct sl_runtime *rt = sh->rt;
	struct sl_job *job = rt->job;
	uint64_t sum = 0;

	for (int s = 0; s < job->nstages; s++) {
		if (job->stage[s].input->kind == SL_NODE_SOURCE)
			continue;
		for (int l = 0; l < job->stage[s].nlanes; l++) {
			for (int j = 0; j < rt->nshards; j++) {
				sum += atomic_load_explicit(
					&sl_rt_ring_lane(rt, s, l, j, sh->index)->prod_tail,
					memory_order_acquire);
				sum += atomic_load_explicit(
					&sl_rt_ring_lane(rt, s, l, sh->index, j)->cons_head,
					memory_order_acquire);
			}
		}
	}
	return sum;
}

/* What this shard has published into its outputs and freed in its inputs, from its own
 * private ring fields (no shared line is read). */
static uint64_t ring_moves(struct sl_shard *sh)
{
	struct sl_runtime *rt = sh->rt;
	struct sl_job *job = rt->job;
	uint64_t sum = 0;

	for (int s = 0; s < job->nstages; s++) {
		if (job->stage[s].input->kind == SL_NODE_SOURCE)
			continue;
		for (int l = 0; l < job->stage[s].nlanes; l++) {
			for (int j = 0; j < rt->nshards; j++) {
				sum += sl_rt_ring_lane(rt, s, l, sh->index, j)->prod_published;
				sum += sl_rt_ring_lane(rt, s, l, j, sh->index)->cons_released;
			}
		}
	}
	return sum;
}

/* After a turn that moved frames (published or freed ring space): wake the peers that
 * sleep (pairs with the fence in sl_doorbell_sleep: the ring stores come first). A turn
 * that moved nothing wakes nobody: two idle shards must not wake each other in turn. */
static void wake_peers(struct sl_shard *sh)
{
	struct sl_runtime *rt = sh->rt;
	uint64_t moves = ring_moves(sh);

	if (moves == sh->bell_moves)
		return;
	sh->bell_moves = moves;
	sl_doorbell_fence();
	for (int j = 0; j < rt->nshards; j++)
		if (j != sh->index)
			sl_doorbell_wake(&rt->bells[j]);
}

static void pin(struct sl_shard *sh)
{
	cpu_set_t set;

	if (sh->cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(sh->cpu, &set);
	/* best effort: a failure (core offline, cgroup limits) only costs locality */
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void own_arena(void)
{
#ifdef SL_HAVE_JEMALLOC
	unsigned arena;
	size_t sz = sizeof arena;

	/* a private arena: this shard's allocations never contend with another shard's */
	if (mallctl("arenas.create", &arena, &sz, NULL, 0) == 0)
		mallctl("thread.arena", NULL, NULL, &arena, sizeof arena);
#endif
}

/*
 * RocksDB backend: one DB for each keyed operator instance of this shard (backend.h says why
 * not one per shard), opened before wiring so that an operator's open finds it. 0, or -errno
 * with the shard failed.
 */
static int open_state_dbs(struct sl_shard *sh)
{
	struct sl_job *job = sh->rt->job;

	sh->state_dbs = calloc((size_t)job->nnodes + 1, sizeof(*sh->state_dbs));
	if (!sh->state_dbs) {
		sl_shard_fail(sh, -ENOMEM, "shard %d: out of memory opening its state", sh->index);
		return -ENOMEM;
	}
	for (int node = 0; node < job->nnodes; node++) {
		char err[256];
		int rc;

		if (!sl_node_keeps_keyed_state(job->node[node]))
			continue;
		rc = sl_rocks_db_open(sh->rt->state_env, sh->index, (uint32_t)node,
				      &sh->state_dbs[node], err, sizeof err);
		if (rc) {
			sl_shard_fail(sh, rc, "shard %d: opening the state store of '%s': %s",
				      sh->index, job->node[node]->name, err);
			return rc;
		}
		/* a native checkpoint's state goes in before any kstate exists on the db */
		rc = sl_ckpt_restore_db(sh, node, sh->state_dbs[node]);
		if (rc)
			return rc;
	}
	return 0;
}

/* After unwiring: the kstates on the DBs are destroyed. Removes the working DBs. */
static void close_state_dbs(struct sl_shard *sh)
{
	for (int node = 0; sh->state_dbs && node < sh->rt->job->nnodes; node++)
		sl_rocks_db_close(sh->state_dbs[node]);
	free(sh->state_dbs);
	sh->state_dbs = NULL;
}

void *sl_shard_main(void *arg)
{
	struct sl_shard *sh = arg;
	struct sl_runtime *rt = sh->rt;
	struct sl_job *job = rt->job;
	struct sl_shard_obs *ob = sh->obs;
	uint64_t busy_from = 0; /* clock read a stage's busy time starts from */
	unsigned spins = 0;
	bool stopped = false, wired = false;

	pin(sh);
	own_arena();
	sh->now = wall_ms();
	if (sl_ckpt_writes_files(rt)) {
		int err = 0;

		sh->files = calloc((size_t)job->nnodes + 1, sizeof(*sh->files));
		sh->writer = sh->files ? sl_uring_writer_create(0, &err) : NULL;
		if (!sh->writer) {
			sl_shard_fail(sh, err ? err : -ENOMEM,
				      "shard %d: its checkpoint writer: %s", sh->index,
				      strerror(err ? -err : ENOMEM));
			goto out;
		}
	}
	if (rt->state_env && open_state_dbs(sh) < 0)
		goto out;
	if (sl_shard_wire(sh) < 0) {
		if (!sh->error)
			sl_shard_fail(sh, -ENOMEM, "shard %d: out of memory wiring the job",
				      sh->index);
		goto out;
	}
	sl_shard_obs_publish(sh);
	wired = true;
	ob->t_start = ob->t_mark = busy_from = sl_obs_clock_ns();
	for (;;) {
		/* this turn began at the last clock read of the previous one (observe.h),
		 * its busy time where the pause after an idle turn ended */
		uint64_t t_turn = ob->t_mark, t_end, bp_mask = 0;
		int work = 0;
		bool done = true;
		/* about to sleep if this turn is empty too: what the rings look like before it */
		uint64_t before = spins >= SL_DOORBELL_SPINS ? ring_fingerprint(sh) : 0;

		if (atomic_load_explicit(&rt->abort, memory_order_relaxed))
			break;
		sh->now = wall_ms();
		sh->loops++;
		sl_barrier_announce_complete(sh);
		sl_barrier_start(sh);
		if (!stopped && atomic_load_explicit(&job->stop, memory_order_relaxed)) {
			stopped = true;
			for (int s = 0; s < job->nstages; s++)
				if (job->stage[s].input->kind == SL_NODE_SOURCE)
					sl_source_stage_stop(&sh->si[s]);
		}
		for (int s = job->nstages - 1; s >= 0; s--) {
			struct sl_stage_inst *si = &sh->si[s];

			if (si->pending)
				work += drain(sh, si);
			if (si->pending) {
				if (!si->blocked_since)
					si->blocked_since = sh->now;
				if (s < 64)
					bp_mask |= 1ull << s;
				done = false;
				continue;
			}
			if (si->blocked_since) {
				si->blocked_ms += (uint64_t)(sh->now - si->blocked_since);
				si->blocked_since = 0;
			}
			if (si->ended)
				continue;
			done = false;
			int w = si->chans ? consume(si) : sl_source_stage_poll(si);

			if (w) {
				/* busy: since the last clock read (one read a stage with work) */
				uint64_t t = sl_obs_clock_ns();

				/* relaxed: observers load it racily (observe.h) */
				__atomic_store_n(&ob->stage[s].busy_ns,
						 ob->stage[s].busy_ns + (t - busy_from),
						 __ATOMIC_RELAXED);
				busy_from = t;
			}
			work += w;
		}
		for (struct sl_ctx *c = sh->proctime_list; c; c = c->next_in_shard)
			c->def->ops->on_proctime(c, sh->now);
		for (int s = 0; s < job->nstages; s++)
			if (!sh->si[s].chans)
				sl_source_stage_tick(&sh->si[s]);
		publish_all(sh);
		sl_mem_guard_check(sh);
		work += sl_barrier_ack(sh, SL_SNAP_STEP_BYTES);
		/* every turn: watermarks, barriers and timer output move frames without
		 * counting as work */
		wake_peers(sh);
		sl_shard_obs_poll(sh);
		/* backpressured: the whole turn, sleeps after an idle one included */
		t_end = sl_obs_clock_ns();
		for (int s = 0; bp_mask && s < job->nstages && s < 64; s++)
			if (bp_mask & (1ull << s))
				__atomic_store_n(&ob->stage[s].bp_ns,
						 ob->stage[s].bp_ns + (t_end - t_turn),
						 __ATOMIC_RELAXED);
		ob->t_mark = busy_from = t_end;
		__atomic_store_n(&ob->run_ns, t_end - ob->t_start, __ATOMIC_RELAXED);
		if (done)
			break;
		if (work) {
			spins = 0;
		} else {
			sh->idle_loops++;
			if (spins == 0)
				flush_sinks(sh);
			if (spins >= SL_DOORBELL_SPINS) {
				sl_doorbell_sleep(&rt->bells[sh->index], before, ring_fingerprint,
						  sh);
				/* busy time starts after the sleep (the bp time of this turn
				 * ended at t_end, so a sleep still counts for a stage with full
				 * outputs) */
				busy_from = sl_obs_clock_ns();
			} else {
				spins++;
			}
		}
	}
	publish_all(sh);
	wake_peers(sh); /* the last frames and end-of-input marks */
	if (rt->checkpointing && atomic_load(&rt->final_ckpt) && !atomic_load(&rt->abort))
		sl_barrier_final_checkpoints(sh);
	/* the coordinator reads the snapshots of an acknowledged checkpoint from this shard's
	 * instances: keep them until it is done */
	while (rt->checkpointing && !atomic_load(&rt->abort) &&
	       /* acquire ckpt_consumed: pairs with the coordinator's release of it
		* (coordinator.c): it is done reading this shard's snapshots, which may be
		* reused */
	       atomic_load_explicit(&rt->ckpt_consumed, memory_order_acquire) <
		       atomic_load_explicit(&sh->ckpt_acked, memory_order_relaxed)) {
		struct timespec ts = { 0, 100000 };

		sl_shard_obs_poll(sh);
		nanosleep(&ts, NULL);
	}
out:
	/* observers leave this shard's instances before they are freed; its final counters
	 * go to sh->m in unwiring, what its instances waited for to the final detail */
	sl_shard_obs_retract(sh);
	if (wired)
		sl_shard_obs_final(sh);
	sl_shard_unwire(sh);
	sl_uring_writer_destroy(
		sh->writer); /* waits for files in flight: their bytes were the operators' */
	sh->writer = NULL;
	close_state_dbs(sh);
	/* release finished: pairs with the acquires of it in coordinator.c and runtime.c: the
	 * shard loop has returned and its metrics are final */
	atomic_store_explicit(&sh->finished, true, memory_order_release);
	return NULL;
}
