/*
 * snapshot.c - copies a job's counters out of its shards while they run, for the HTTP
 * endpoint (http.c), through the observer handshake of runtime/observe.c.
 *
 * Why a copy: a shard that is about to free its instances waits for readers inside
 * sl_shard_observe_begin/_end, so the time inside is kept to loading a few words per
 * operator; formatting (prometheus.c, api_json.c) happens afterwards on the copy.
 *
 * Where each figure comes from while a shard runs (the live instance, not sh->m, which
 * unwiring fills only at the end):
 *   records in/out/late, state entries/bytes  ctx->m of the node's instance (a key_by's
 *                                             "in" is its exchange-out's, as sl_job_stats)
 *   watermark                                 ctx->watermark
 *   backpressured time                        si->blocked_ms (stretches that ended)
 *   dead letters, loop turns                  the shard's own fields
 *   ring stalls                               ring->prod_full (atomic, lives with the run)
 *   checkpoints                               the coordinator's counters in the runtime
 * Once a shard has finished, its final sh->m and sh->stage_blocked_ms are read instead;
 * while it is between the two (unwiring) it is left out of this snapshot.
 *
 * Every load of a shard-written plain counter is a relaxed atomic load: one writer, aligned
 * 64-bit words, monotonic (state entries and watermarks are gauges), so a value is never
 * torn, at worst a little old.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "snapshot.h"

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static uint64_t rss_bytes(void)
{
	unsigned long long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void copy_metrics(struct sl_obs_op *o, const struct sl_op_metrics *m)
{
	o->in = LOAD(m->in);
	o->out = LOAD(m->out);
	o->late = LOAD(m->late);
	o->state_entries = LOAD(m->state_entries);
	o->state_bytes = LOAD(m->state_bytes);
}

/* A finished shard: its final counters, kept by the run (no handshake needed). */
static void copy_final(struct sl_obs_snap *snap, const struct sl_shard *sh)
{
	int ns = snap->nshards, i = sh->index;

	for (int n = 0; n < snap->nnodes; n++) {
		struct sl_obs_op *o = &snap->op[n * ns + i];

		copy_metrics(o, &sh->m[n]);
		o->watermark = SL_TS_MIN; /* the instance is gone, and its watermark with it */
	}
	for (int s = 0; s < snap->nstages; s++)
		snap->stage_blocked_ms[s * ns + i] = sh->stage_blocked_ms[s];
}

/* A live shard, between sl_shard_observe_begin and _end: its instances as they are. */
static void copy_live(struct sl_obs_snap *snap, const struct sl_shard *sh)
{
	int ns = snap->nshards, i = sh->index;

	for (int n = 0; n < snap->nnodes; n++) {
		struct sl_obs_op *o = &snap->op[n * ns + i];
		const struct sl_ctx *c = &sh->ctx[n];

		copy_metrics(o, &c->m);
		if (sh->xctx[n].def)
			o->in = LOAD(sh->xctx[n].m.in);
		o->watermark = LOAD(c->watermark);
	}
	for (int s = 0; s < snap->nstages; s++)
		snap->stage_blocked_ms[s * ns + i] = LOAD(sh->si[s].blocked_ms);
}

static void copy_rings(struct sl_obs_snap *snap, struct sl_runtime *rt)
{
	const struct sl_job *job = rt->job;
	int k = 0;

	for (int t = 0; t < job->nstages; t++)
		for (int l = 0; l < job->stage[t].nlanes; l++)
			for (int a = 0; a < rt->nshards; a++)
				for (int b = 0; b < rt->nshards; b++) {
					struct sl_obs_ring *r = &snap->ring[k++];

					*r = (struct sl_obs_ring){
						.stage = t, .lane = l, .from = a, .to = b
					};
					r->full = atomic_load_explicit(
						&sl_rt_ring_lane(rt, t, l, a, b)->prod_full,
						memory_order_relaxed);
				}
	snap->nrings = k;
}

static int snap_alloc(struct sl_obs_snap *snap, const struct sl_runtime *rt)
{
	size_t ns = (size_t)rt->nshards;

	snap->nshards = rt->nshards;
	snap->nnodes = rt->job->nnodes;
	snap->nstages = rt->job->nstages;
	snap->shard = calloc(ns, sizeof(*snap->shard));
	snap->op = calloc((size_t)snap->nnodes * ns + 1, sizeof(*snap->op));
	snap->stage_blocked_ms = calloc((size_t)snap->nstages * ns + 1, sizeof(uint64_t));
	snap->ring = calloc((size_t)rt->nlanes * ns * ns + 1, sizeof(*snap->ring));
	if (!snap->shard || !snap->op || !snap->stage_blocked_ms || !snap->ring)
		return -ENOMEM;
	return 0;
}

int sl_obs_snap_take(struct sl_job *job, struct sl_obs_snap *snap)
{
	struct sl_runtime *rt;
	int rc = 0;

	memset(snap, 0, sizeof(*snap));
	snap->job = job;
	snap->rss_bytes = rss_bytes();
	rt = sl_job_observe_begin(job);
	if (!rt)
		return 0; /* not running yet: the process figures only */
	snap->started = true;
	rc = snap_alloc(snap, rt);
	if (rc)
		goto out_end;
	for (int i = 0; i < rt->nshards; i++) {
		struct sl_shard *sh = &rt->shards[i];
		struct sl_obs_shard *o = &snap->shard[i];

		/* acquire finished: pairs with the release at the end of sl_shard_main; sh->m
		 * and stage_blocked_ms are then final */
		if (atomic_load_explicit(&sh->finished, memory_order_acquire)) {
			o->finished = true;
			copy_final(snap, sh);
		} else if (sl_shard_observe_begin(sh)) {
			copy_live(snap, sh);
			sl_shard_observe_end(sh);
		} else {
			continue; /* not wired yet, or unwiring: not seen this time */
		}
		o->seen = true;
		o->dead_letters = LOAD(sh->dead_letters);
		o->loops = LOAD(sh->loops);
		o->idle_loops = LOAD(sh->idle_loops);
	}
	copy_rings(snap, rt);
	snap->ckpt_completed = LOAD(rt->ckpt_completed);
	snap->ckpt_failed = LOAD(rt->ckpt_failed);
out_end:
	sl_job_observe_end(job);
	return rc;
}

void sl_obs_snap_fini(struct sl_obs_snap *snap)
{
	if (!snap)
		return;
	free(snap->shard);
	free(snap->op);
	free(snap->stage_blocked_ms);
	free(snap->ring);
	memset(snap, 0, sizeof(*snap));
}

const char *sl_obs_job_name(const struct sl_job *job)
{
	return job->name;
}

const char *sl_obs_node_name(const struct sl_job *job, int node)
{
	return job->node[node]->name;
}

const char *sl_obs_node_kind(const struct sl_job *job, int node)
{
	static const char *const kinds[] = {
		[SL_NODE_SOURCE] = "source",	[SL_NODE_FILTER] = "filter",
		[SL_NODE_MAP] = "map",		[SL_NODE_PROJECT] = "project",
		[SL_NODE_FLATMAP] = "flat_map", [SL_NODE_KEYBY] = "key_by",
		[SL_NODE_KEYED] = "keyed",	[SL_NODE_SIDE] = "side",
		[SL_NODE_SINK] = "sink",
	};
	enum sl_node_kind k = job->node[node]->kind;

	return k > 0 && k < sizeof kinds / sizeof kinds[0] && kinds[k] ? kinds[k] : "other";
}

int sl_obs_node_stage(const struct sl_job *job, int node)
{
	return job->node[node]->stage;
}

const char *sl_obs_stage_input(const struct sl_job *job, int stage)
{
	return job->stage[stage].input->name;
}

void sl_obs_buf_printf(struct sl_obs_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 16384;

		while (cap - b->len <= (size_t)n)
			cap *= 2;
		char *p = realloc(b->p, cap);

		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

void sl_obs_buf_escaped(struct sl_obs_buf *b, const char *s, bool json)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			sl_obs_buf_printf(b, "\\%c", ch);
		else if (ch == '\n')
			sl_obs_buf_printf(b, "\\n");
		else if (json && ch < 0x20)
			sl_obs_buf_printf(b, "\\u%04x", ch);
		else
			sl_obs_buf_printf(b, "%c", ch);
	}
}
