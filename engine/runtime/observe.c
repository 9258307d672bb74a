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
 *
 * The detail (observe.h) is what cannot be read racily: split arrays that grow, connector
 * state, operator indexes. So the shard copies it out itself, when asked:
 *
 *   observer (run_obs->lock held)            shard, once a loop turn (sl_shard_obs_poll)
 *   n = ++ask                      ------->  ask != seen: fill detail[ask & 1],
 *   wait until done >= n (deadline)  <-----  done = ask (release)
 *   read detail[n & 1] (acquire done)
 *
 * Why the buffers are safe: the lock keeps one observer at a time, and one that gave up
 * waiting reads nothing. The shard writes detail[m & 1] only for an ask m; while an
 * observer reads detail[n & 1] no ask newer than n exists, and every older one was
 * answered before done reached n. The final detail has its own buffer, written once after
 * the shard's loop has ended, and read only after `finished` (whose release orders it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "observe.h"
#include "runtime.h"
#include "timer.h"
#include "watermark.h"

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

static int detail_init(struct sl_obs_detail *d, const struct sl_runtime *rt, int nchans)
{
	const struct sl_job *job = rt->job;

	d->stage = calloc((size_t)job->nstages + 1, sizeof(*d->stage));
	d->chan = calloc((size_t)nchans + 1, sizeof(*d->chan));
	d->node = calloc((size_t)job->nnodes + 1, sizeof(*d->node));
	return d->stage && d->chan && d->node ? 0 : -ENOMEM;
}

static void detail_fini(struct sl_obs_detail *d)
{
	free(d->stage);
	free(d->chan);
	free(d->node);
}

int sl_run_obs_init(struct sl_runtime *rt)
{
	const struct sl_job *job = rt->job;
	int nchans = 0;

	rt->obs = calloc(1, sizeof(*rt->obs));
	if (!rt->obs)
		return -ENOMEM;
	pthread_mutex_init(&rt->obs->lock, NULL);
	pthread_mutex_init(&rt->obs->hist_lock, NULL);
	rt->obs->start_ms = sl_obs_wall_ms();
	for (int s = 0; s < job->nstages; s++)
		if (job->stage[s].input->kind != SL_NODE_SOURCE)
			nchans += job->stage[s].nlanes * rt->nshards;
	for (int i = 0; i < rt->nshards; i++) {
		struct sl_shard_obs *o = aligned_alloc(64, sizeof(*o));

		rt->shards[i].obs = o;
		if (!o)
			return -ENOMEM;
		memset(o, 0, sizeof(*o));
		o->stage = calloc((size_t)job->nstages + 1, sizeof(*o->stage));
		if (!o->stage || detail_init(&o->detail[0], rt, nchans) ||
		    detail_init(&o->detail[1], rt, nchans) || detail_init(&o->final, rt, nchans))
			return -ENOMEM;
	}
	return 0;
}

void sl_run_obs_fini(struct sl_runtime *rt)
{
	for (int i = 0; rt->shards && i < rt->nshards; i++) {
		struct sl_shard_obs *o = rt->shards[i].obs;

		if (!o)
			continue;
		free(o->stage);
		detail_fini(&o->detail[0]);
		detail_fini(&o->detail[1]);
		detail_fini(&o->final);
		free(o);
		rt->shards[i].obs = NULL;
	}
	if (rt->obs) {
		pthread_mutex_destroy(&rt->obs->lock);
		pthread_mutex_destroy(&rt->obs->hist_lock);
	}
	free(rt->obs);
	rt->obs = NULL;
}

/* A split's view: its connector's progress, then the runtime's event-time bookkeeping. */
static void fill_split(struct sl_split_obs *o, const struct sl_stage_inst *si,
		       const struct sl_split_inst *sp, sl_ts_t now)
{
	const struct sl_stream *src = si->st->input;

	memset(o, 0, sizeof(*o));
	o->p.pos = o->p.end = o->p.lag = -1;
	o->p.kind = "split";
	if (sp->state && src->src_ops->progress)
		src->src_ops->progress(sp->state, &o->p);
	if (!o->p.name[0])
		snprintf(o->p.name, sizeof o->p.name, "%s split %d", src->name, sp->sctx.split);
	o->node = src->id;
	o->split = sp->sctx.split;
	o->max_ts = sp->max_ts;
	o->wm = sl_wm_of_split(si->wm, sp->max_ts, sp->custom_wm);
	o->silent_ms = now - sp->last_active;
	o->idle = sp->idle;
	o->ended = sp->ended;
}

static void fill_node(struct sl_node_obs *o, struct sl_ctx *c)
{
	o->watermark = c->watermark;
	o->idle = c->idle;
	o->pending_at = SL_TS_MAX;
	o->pending = 0;
	if (!c->def)
		return;
	if (c->def->ops->pending && c->self) {
		c->def->ops->pending(c, &o->pending_at, &o->pending);
	} else if (c->event_timers) {
		o->pending = sl_timers_count(c->event_timers);
		o->pending_at = o->pending ? sl_timers_next(c->event_timers) : SL_TS_MAX;
	}
}

/* Copies this shard's detail into d. Shard thread, instances wired. */
static void fill(struct sl_shard *sh, struct sl_obs_detail *d)
{
	const struct sl_job *job = sh->rt->job;
	int chan = 0;

	d->now = sh->now;
	d->nsplits = d->splits_more = 0;
	for (int s = 0; s < job->nstages; s++) {
		const struct sl_stage_inst *si = &sh->si[s];
		struct sl_stage_detail *sd = &d->stage[s];

		sd->wm_out = si->wm_out;
		sd->idle = si->root->idle;
		sd->ended = si->ended;
		sd->chan0 = chan;
		sd->nchans = 0;
		if (job->stage[s].input->kind == SL_NODE_SOURCE) {
			for (int k = 0; k < si->nsplits; k++) {
				if (d->nsplits == SL_OBS_MAX_SPLITS) {
					d->splits_more++;
					continue;
				}
				fill_split(&d->split[d->nsplits++], si, &si->splits[k], sh->now);
			}
			continue;
		}
		sd->nchans = si->nchans;
		for (int c = 0; c < si->nchans; c++) {
			const struct sl_chan *ch = &si->chans[c];

			d->chan[chan++] = (struct sl_chan_obs){ .wm = ch->wm,
								.idle = ch->idle,
								.ended = ch->ended,
								.dead = ch->dead,
								.blocked = ch->blocked };
		}
	}
	for (int n = 0; n < job->nnodes; n++)
		fill_node(&d->node[n], &sh->ctx[n]);
}

void sl_shard_obs_poll(struct sl_shard *sh)
{
	struct sl_shard_obs *o = sh->obs;
	/* relaxed: only the number matters; the asker publishes nothing else to us */
	uint64_t n = atomic_load_explicit(&o->ask, memory_order_relaxed);

	if (n == o->seen)
		return;
	fill(sh, &o->detail[n & 1]);
	o->seen = n;
	/* release done: pairs with the acquire in sl_shard_obs_answer; detail[n & 1] is
	 * written */
	atomic_store_explicit(&o->done, n, memory_order_release);
}

void sl_shard_obs_final(struct sl_shard *sh)
{
	if (!sh->ctx || !sh->si)
		return; /* never wired: nothing to describe */
	fill(sh, &sh->obs->final);
	/* published by the release of sh->finished at the end of sl_shard_main */
	sh->obs->has_final = true;
}

uint64_t sl_shard_obs_ask(struct sl_shard *sh)
{
	return atomic_fetch_add_explicit(&sh->obs->ask, 1, memory_order_relaxed) + 1;
}

const struct sl_obs_detail *sl_shard_obs_answer(struct sl_shard *sh, uint64_t n)
{
	/* acquire done: pairs with the release in sl_shard_obs_poll */
	uint64_t done = atomic_load_explicit(&sh->obs->done, memory_order_acquire);

	return done >= n ? &sh->obs->detail[done & 1] : NULL;
}

void sl_run_obs_ckpt(struct sl_runtime *rt, uint64_t n, int rc, bool savepoint, int64_t started_ms,
		     int64_t now_ms)
{
	struct sl_run_obs *ro = rt->obs;
	struct sl_ckpt_obs c = { .id = n, .rc = rc, .savepoint = savepoint };

	c.end_ms = sl_obs_wall_ms();
	c.duration_ms = started_ms && now_ms > started_ms ? (uint64_t)(now_ms - started_ms) : 0;
	for (int i = 0; i < rt->nshards; i++) {
		const struct sl_shard *sh = &rt->shards[i];

		/* read after the shard acknowledged n (its acquire in the coordinator): its
		 * files and alignment times of n are written */
		for (int s = 0; s < rt->job->nstages; s++) {
			const struct sl_stage_obs *so = &sh->obs->stage[s];
			uint64_t us = __atomic_load_n(&so->align_ns_last, __ATOMIC_RELAXED) / 1000;

			if (__atomic_load_n(&so->align_ckpt, __ATOMIC_RELAXED) == n &&
			    us > c.align_us)
				c.align_us = us;
		}
		if (!rc && sh->files_ckpt == n)
			for (int f = 0; f < sh->nfiles; f++)
				c.bytes += sh->files[f].size;
	}
	pthread_mutex_lock(&ro->hist_lock);
	ro->hist[ro->nckpt % SL_OBS_CKPT_HIST] = c;
	ro->nckpt++;
	ro->ckpt_bytes_total += c.bytes;
	pthread_mutex_unlock(&ro->hist_lock);
}
