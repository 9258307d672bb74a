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
 *   busy / backpressured ns, loop run time    sh->obs (observe.h), kept after the run
 *   splits, channels, waiting windows         the shard's detail, on request (observe.h)
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

#include <time.h>

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
		snap->stage[s * ns + i].blocked_ms = sh->stage_blocked_ms[s];
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
		snap->stage[s * ns + i].blocked_ms = LOAD(sh->si[s].blocked_ms);
}

/* Busy and backpressured time live in sh->obs, beside the shard, for as long as the run. */
static void copy_times(struct sl_obs_snap *snap, const struct sl_shard *sh)
{
	int ns = snap->nshards, i = sh->index;

	for (int s = 0; s < snap->nstages; s++) {
		struct sl_obs_stage *o = &snap->stage[s * ns + i];

		o->busy_ns = LOAD(sh->obs->stage[s].busy_ns);
		o->bp_ns = LOAD(sh->obs->stage[s].bp_ns);
	}
	snap->shard[i].run_ns = LOAD(sh->obs->run_ns);
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
					struct sl_ring *ring = sl_rt_ring_lane(rt, t, l, a, b);
					uint64_t tail = atomic_load_explicit(&ring->prod_tail,
									     memory_order_relaxed);
					uint64_t head = atomic_load_explicit(&ring->cons_head,
									     memory_order_relaxed);

					r->full = atomic_load_explicit(&ring->prod_full,
								       memory_order_relaxed);
					r->frames = atomic_load_explicit(&ring->prod_frames,
									 memory_order_relaxed);
					/* two loads, not one moment: clamp to what can be */
					r->used = tail > head ? tail - head : 0;
					r->cap = ring->cap;
					if (r->used > r->cap)
						r->used = r->cap;
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
	snap->stage = calloc((size_t)snap->nstages * ns + 1, sizeof(*snap->stage));
	snap->rate = calloc((size_t)snap->nstages * ns + 1, sizeof(*snap->rate));
	snap->rec_in_s = calloc((size_t)snap->nnodes * ns + 1, sizeof(double));
	snap->rec_out_s = calloc((size_t)snap->nnodes * ns + 1, sizeof(double));
	snap->ring = calloc((size_t)rt->nlanes * ns * ns + 1, sizeof(*snap->ring));
	if (!snap->shard || !snap->op || !snap->stage || !snap->rate || !snap->rec_in_s ||
	    !snap->rec_out_s || !snap->ring)
		return -ENOMEM;
	return 0;
}

/* A deep copy of a shard's detail (its arrays sized by the run). NULL: out of memory. */
static struct sl_obs_detail *detail_copy(const struct sl_obs_detail *d, const struct sl_runtime *rt)
{
	const struct sl_job *job = rt->job;
	struct sl_obs_detail *c = malloc(sizeof(*c));
	size_t nchans = 0;

	if (!c)
		return NULL;
	for (int s = 0; s < job->nstages; s++)
		nchans += (size_t)d->stage[s].nchans;
	memcpy(c, d, sizeof(*c));
	c->stage = malloc(((size_t)job->nstages + 1) * sizeof(*c->stage));
	c->chan = malloc((nchans + 1) * sizeof(*c->chan));
	c->node = malloc(((size_t)job->nnodes + 1) * sizeof(*c->node));
	if (!c->stage || !c->chan || !c->node) {
		free(c->stage);
		free(c->chan);
		free(c->node);
		free(c);
		return NULL;
	}
	memcpy(c->stage, d->stage, (size_t)job->nstages * sizeof(*c->stage));
	memcpy(c->chan, d->chan, nchans * sizeof(*c->chan));
	memcpy(c->node, d->node, (size_t)job->nnodes * sizeof(*c->node));
	return c;
}

static void detail_free(struct sl_obs_detail *d)
{
	if (!d)
		return;
	free(d->stage);
	free(d->chan);
	free(d->node);
	free(d);
}

/*
 * Asks every live shard for its detail and copies the answers (observe.h has the protocol).
 * Under the run's observer lock, so one reader at a time; the wait is a poll of each
 * shard's answer word with a deadline, since a shard answers within one loop turn unless
 * it is stuck in a long call, and a stuck shard must not stop the reader forever.
 */
static int ask_details(struct sl_obs_snap *snap, struct sl_runtime *rt)
{
	uint64_t ask[rt->nshards > 0 ? rt->nshards : 1];
	uint64_t deadline = sl_obs_clock_ns() + (uint64_t)SL_OBS_ASK_MS * 1000000u;
	struct timespec pause = { 0, 200000 };
	int rc = 0;

	pthread_mutex_lock(&rt->obs->lock);
	for (int i = 0; i < rt->nshards; i++) {
		struct sl_shard *sh = &rt->shards[i];

		ask[i] = 0;
		if (!atomic_load_explicit(&sh->finished, memory_order_acquire) &&
		    atomic_load_explicit(&sh->obs_state, memory_order_acquire) == SL_SHARD_OBS_LIVE)
			ask[i] = sl_shard_obs_ask(sh);
	}
	for (;;) {
		bool waiting = false;

		for (int i = 0; i < rt->nshards; i++) {
			struct sl_shard *sh = &rt->shards[i];
			const struct sl_obs_detail *d;

			if (!ask[i])
				continue;
			d = sl_shard_obs_answer(sh, ask[i]);
			if (d) {
				if (!snap->shard[i].detail &&
				    !(snap->shard[i].detail = detail_copy(d, rt)))
					rc = -ENOMEM;
				ask[i] = 0;
			} else if (atomic_load_explicit(&sh->obs_state, memory_order_acquire) !=
				   SL_SHARD_OBS_LIVE) {
				ask[i] = 0; /* ending: its final detail comes with `finished` */
			} else {
				waiting = true;
			}
		}
		if (!waiting || sl_obs_clock_ns() > deadline)
			break;
		nanosleep(&pause, NULL);
	}
	pthread_mutex_unlock(&rt->obs->lock);
	/* shards that finished meanwhile, or before: their final detail */
	for (int i = 0; i < rt->nshards && !rc; i++) {
		struct sl_shard *sh = &rt->shards[i];

		/* acquire finished: pairs with the release at the end of sl_shard_main, after
		 * the final detail was written */
		if (!snap->shard[i].detail &&
		    atomic_load_explicit(&sh->finished, memory_order_acquire) &&
		    sh->obs->has_final &&
		    !(snap->shard[i].detail = detail_copy(&sh->obs->final, rt)))
			rc = -ENOMEM;
	}
	return rc;
}

static void copy_history(struct sl_obs_snap *snap, struct sl_runtime *rt)
{
	struct sl_run_obs *ro = rt->obs;
	uint64_t first;

	pthread_mutex_lock(&ro->hist_lock);
	first = ro->nckpt > SL_OBS_CKPT_HIST ? ro->nckpt - SL_OBS_CKPT_HIST : 0;
	snap->nhist = 0;
	for (uint64_t k = first; k < ro->nckpt; k++)
		snap->hist[snap->nhist++] = ro->hist[k % SL_OBS_CKPT_HIST];
	snap->ckpt_bytes_total = ro->ckpt_bytes_total;
	pthread_mutex_unlock(&ro->hist_lock);
	snap->start_ms = ro->start_ms;
}

void sl_obs_prev_fini(struct sl_obs_prev *p)
{
	if (!p)
		return;
	free(p->run_ns);
	free(p->busy_ns);
	free(p->bp_ns);
	free(p->in);
	free(p->out);
	memset(p, 0, sizeof(*p));
}

static int prev_store(struct sl_obs_prev *p, const struct sl_obs_snap *s, const void *run)
{
	size_t ns = (size_t)s->nshards, st = (size_t)s->nstages * ns, nn = (size_t)s->nnodes * ns;

	sl_obs_prev_fini(p);
	p->run_ns = calloc(ns + 1, sizeof(uint64_t));
	p->busy_ns = calloc(st + 1, sizeof(uint64_t));
	p->bp_ns = calloc(st + 1, sizeof(uint64_t));
	p->in = calloc(nn + 1, sizeof(uint64_t));
	p->out = calloc(nn + 1, sizeof(uint64_t));
	if (!p->run_ns || !p->busy_ns || !p->bp_ns || !p->in || !p->out) {
		sl_obs_prev_fini(p);
		return -ENOMEM;
	}
	p->run = run;
	p->at_ms = s->now_ms;
	p->nshards = s->nshards;
	p->nnodes = s->nnodes;
	p->nstages = s->nstages;
	for (size_t i = 0; i < ns; i++)
		p->run_ns[i] = s->shard[i].run_ns;
	for (size_t k = 0; k < st; k++) {
		p->busy_ns[k] = s->stage[k].busy_ns;
		p->bp_ns[k] = s->stage[k].bp_ns;
	}
	for (size_t k = 0; k < nn; k++) {
		p->in[k] = s->op[k].in;
		p->out[k] = s->op[k].out;
	}
	return 0;
}

static double per_s(uint64_t now, uint64_t then, double dt_s)
{
	return now > then && dt_s > 0 ? (double)(now - then) / dt_s : 0;
}

/*
 * Rates per stage instance and operator instance against prev (the same run), or since the
 * start of the run when there is none. Idle is what is neither busy nor backpressured, as
 * Flink's three add up to 1000 ms a second.
 */
static void rates(struct sl_obs_snap *s, const struct sl_obs_prev *p)
{
	int ns = s->nshards;

	for (int i = 0; i < ns; i++) {
		uint64_t run0 = p ? p->run_ns[i] : 0;
		double dt = (double)(s->shard[i].run_ns > run0 ? s->shard[i].run_ns - run0 : 0);
		double dt_s = p ? (double)(s->now_ms - p->at_ms) / 1000.0
				: (double)s->shard[i].run_ns / 1e9;

		if (!s->shard[i].seen)
			continue;
		for (int st = 0; st < s->nstages; st++) {
			int k = st * ns + i;
			struct sl_obs_rate *r = &s->rate[k];
			uint64_t b0 = p ? p->busy_ns[k] : 0, q0 = p ? p->bp_ns[k] : 0;

			if (dt <= 0)
				continue;
			r->busy_ms = (double)(s->stage[k].busy_ns - b0) / dt * 1000.0;
			r->bp_ms = (double)(s->stage[k].bp_ns - q0) / dt * 1000.0;
			if (r->busy_ms > 1000)
				r->busy_ms = 1000;
			if (r->bp_ms > 1000 - r->busy_ms)
				r->bp_ms = 1000 - r->busy_ms;
			r->idle_ms = 1000 - r->busy_ms - r->bp_ms;
		}
		for (int n = 0; n < s->nnodes; n++) {
			int k = n * ns + i;

			s->rec_in_s[k] = per_s(s->op[k].in, p ? p->in[k] : 0, dt_s);
			s->rec_out_s[k] = per_s(s->op[k].out, p ? p->out[k] : 0, dt_s);
		}
	}
}

/* Rates against prev when it is of this run and at least 200 ms old; prev moves on once
 * it is half a second old, so readers a second apart see the last second. */
static int sample(struct sl_obs_snap *s, struct sl_obs_prev *prev, const void *run)
{
	bool same = prev && prev->run == run && prev->nshards == s->nshards &&
		    prev->nnodes == s->nnodes && prev->nstages == s->nstages;

	for (int i = 0; same && i < s->nshards; i++)
		same = s->shard[i].run_ns >= prev->run_ns[i];
	rates(s, same && s->now_ms - prev->at_ms >= 200 ? prev : NULL);
	if (prev && (!same || s->now_ms - prev->at_ms >= 500))
		return prev_store(prev, s, run);
	return 0;
}

int sl_obs_snap_take(struct sl_job *job, struct sl_obs_snap *snap, bool detail,
		     struct sl_obs_prev *prev)
{
	struct sl_runtime *rt;
	int rc = 0;

	memset(snap, 0, sizeof(*snap));
	snap->job = job;
	snap->rss_bytes = rss_bytes();
	snap->now_ms = sl_obs_wall_ms();
	snap->detailed = detail;
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
		copy_times(snap, sh);
	}
	copy_rings(snap, rt);
	snap->ckpt_completed = LOAD(rt->ckpt_completed);
	snap->ckpt_failed = LOAD(rt->ckpt_failed);
	copy_history(snap, rt);
	snap->nhot = sl_job_hot_keys(job, SL_OBS_HOT_SHARE, snap->hot, SL_OBS_HOT_MAX);
	if (detail)
		rc = ask_details(snap, rt);
	if (!rc)
		rc = sample(snap, prev, rt);
out_end:
	sl_job_observe_end(job);
	return rc;
}

void sl_obs_snap_fini(struct sl_obs_snap *snap)
{
	if (!snap)
		return;
	for (int i = 0; snap->shard && i < snap->nshards; i++)
		detail_free(snap->shard[i].detail);
	free(snap->shard);
	free(snap->op);
	free(snap->stage);
	free(snap->rate);
	free(snap->rec_in_s);
	free(snap->rec_out_s);
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

int sl_obs_stage_input_id(const struct sl_job *job, int stage)
{
	return job->stage[stage].input->id;
}

int sl_obs_node_input(const struct sl_job *job, int node)
{
	const struct sl_stream *in = job->node[node]->in;

	return in ? in->id : -1;
}

int sl_obs_stage_nlanes(const struct sl_job *job, int stage)
{
	return job->stage[stage].input->kind == SL_NODE_SOURCE ? 0 : job->stage[stage].nlanes;
}

int sl_obs_stage_lane_from(const struct sl_job *job, int stage, int lane)
{
	const struct sl_stage *st = &job->stage[stage];

	if (st->input->kind == SL_NODE_SOURCE || lane < 0 || lane >= st->nlanes)
		return -1;
	/* the lane's key_by node sits at the head; its input runs in the stage before */
	return st->lanes[lane]->in ? st->lanes[lane]->in->stage : -1;
}

bool sl_obs_stage_is_source(const struct sl_job *job, int stage)
{
	return job->stage[stage].input->kind == SL_NODE_SOURCE;
}

const struct sl_wm_strategy *sl_obs_source_wm(const struct sl_job *job, int node)
{
	return job->node[node]->kind == SL_NODE_SOURCE ? &job->node[node]->wm : NULL;
}

const char *sl_obs_source_ts_column(const struct sl_job *job, int node)
{
	const struct sl_stream *n = job->node[node];

	if (n->kind != SL_NODE_SOURCE)
		return "?";
	if (n->wm.ts_column)
		return n->wm.ts_column;
	if (n->wm.ts_field < 0 || !n->schema)
		return "its event time";
	return sl_schema_name(n->schema, n->wm.ts_field);
}

bool sl_obs_node_is_keyed(const struct sl_job *job, int node)
{
	return job->node[node]->kind == SL_NODE_KEYED;
}

const char *sl_obs_fmt_ts(sl_ts_t ts, char buf[32])
{
	struct tm tm;
	time_t sec;
	int ms;

	if (ts == SL_TS_MIN)
		return "-inf";
	if (ts == SL_TS_MAX)
		return "+inf";
	sec = (time_t)(ts >= 0 ? ts / 1000 : (ts - 999) / 1000);
	ms = (int)(ts - (sl_ts_t)sec * 1000);
	if (!gmtime_r(&sec, &tm))
		return "?";
	size_t n = strftime(buf, 24, "%Y-%m-%d %H:%M:%S", &tm);

	if (!n)
		return "?";
	snprintf(buf + n, 32 - n, ".%03d", ms % 1000);
	return buf;
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
