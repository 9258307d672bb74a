/*
 * wire.c - turns the plan into one shard's operator instances and connects them.
 *
 * Runs on the shard's own thread, so every instance (and what its open hook allocates) lives
 * in that shard's arena. Each node gets one instance; a key_by node gets two: the receiver
 * at the head of its stage and the exchange-out at the tail of its input's stage.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "directory.h"
#include "runtime.h"
#include "state.h"

static int port_for_tag(struct sl_ctx *from, int tag)
{
	for (int p = 0; p < from->nports; p++)
		if (from->port_tag[p] == tag)
			return p;
	if (from->nports == SL_MAX_PORTS)
		return -1;
	from->port_tag[from->nports] = tag;
	return from->nports++;
}

static int connect(struct sl_shard *sh, struct sl_ctx *from, int tag, struct sl_ctx *to)
{
	int p = port_for_tag(from, tag);

	if (p < 0 || from->port[p].n == SL_MAX_OUT) {
		sl_shard_fail(sh, -E2BIG, "operator '%s' has more than %d consumers per output",
			      from->def->name, SL_MAX_OUT);
		return -E2BIG;
	}
	from->port[p].to[from->port[p].n++] = to;
	return 0;
}

static int ctx_init(struct sl_shard *sh, struct sl_ctx *c, const struct sl_op_def *def)
{
	/* every instance gets its own output scratch for sl_ctx_out() */
	c->out_buf = aligned_alloc(8, SL_ROW_SCRATCH);
	if (!c->out_buf)
		return -ENOMEM;
	c->def = def;
	c->shard = sh;
	c->watermark = SL_TS_MIN;
	c->nports = 1;
	return 0;
}

/*
 * A source instance that owns no split will only ever send +inf and end-of-input. Waiting for
 * that would make the first watermarks depend on thread start-up order, so a job reading one
 * file would mark different rows late on different runs and core counts. The plan already
 * knows which shards own splits (split k runs on shard k mod N): channels from the others
 * are left out of the watermark from the start, and their frames are discarded.
 */
static void mark_dead_lane(const struct sl_runtime *rt, struct sl_stage_inst *si, int lane,
			   int nshards)
{
	const struct sl_stream *up = si->st->lanes[lane]->in;
	const struct sl_stream *src;
	int total, live = 0;

	while (up && up->kind != SL_NODE_SOURCE && up->kind != SL_NODE_KEYBY)
		up = up->in;
	if (!up || up->kind != SL_NODE_SOURCE)
		return;
	src = up;
	/* a source whose splits may grow can give any shard a split later: its instances
	 * without one say they are idle instead (source_rt.c) */
	if (src->src_ops->splits_grow && src->src_ops->splits_grow(src->cfg))
		return;
	total = rt->src_nsplits[src->id];
	for (int from = 0; from < nshards; from++)
		live += from < total;
	if (live == 0)
		return; /* nothing at all to read: let the end-of-input frames end the lane */
	for (int from = total; from < nshards; from++) {
		struct sl_chan *c = &si->chans[lane * nshards + from];

		c->dead = true;
		c->ended = true;
	}
}

static void mark_dead_channels(struct sl_shard *sh, struct sl_stage_inst *si)
{
	for (int lane = 0; lane < si->st->nlanes; lane++)
		mark_dead_lane(sh->rt, si, lane, sh->rt->nshards);
}

int sl_shard_wire(struct sl_shard *sh)
{
	struct sl_job *job = sh->rt->job;
	int n = job->nnodes, rc;

	sh->ctx = calloc((size_t)n, sizeof(*sh->ctx));
	sh->xctx = calloc((size_t)n, sizeof(*sh->xctx));
	sh->si = calloc((size_t)job->nstages, sizeof(*sh->si));
	sh->src_scratch = aligned_alloc(8, SL_ROW_SCRATCH);
	if (!sh->ctx || !sh->xctx || !sh->si || !sh->src_scratch)
		return -ENOMEM;

	for (int i = 0; i < n; i++) {
		struct sl_stream *node = job->node[i];

		if (ctx_init(sh, &sh->ctx[i], &node->def) < 0)
			return -ENOMEM;
		if (node->kind == SL_NODE_KEYBY && ctx_init(sh, &sh->xctx[i], &node->xdef) < 0)
			return -ENOMEM;
	}
	/* edges: a node's input feeds it; a key_by's input feeds its exchange-out */
	for (int i = 0; i < n; i++) {
		struct sl_stream *node = job->node[i];
		struct sl_stream *in = node->in;
		struct sl_ctx *to = node->kind == SL_NODE_KEYBY ? &sh->xctx[i] : &sh->ctx[i];
		int tag = node->kind == SL_NODE_SIDE ? node->side_tag : 0;

		if (!in)
			continue;
		rc = connect(sh, &sh->ctx[in->id], tag, to);
		if (rc)
			return rc;
	}
	for (int s = 0; s < job->nstages; s++) {
		struct sl_stage_inst *si = &sh->si[s];

		si->st = &job->stage[s];
		si->sh = sh;
		si->root = &sh->ctx[si->st->input->id];
		si->wm_out = SL_TS_MIN;
	}
	/* open in creation order: inputs before consumers */
	for (int i = 0; i < n; i++) {
		struct sl_stream *node = job->node[i];
		struct sl_ctx *c = &sh->ctx[i];

		if (c->def->ops->open && (rc = c->def->ops->open(c)) < 0) {
			sl_shard_fail(sh, rc, "operator '%s' failed to open: %s", node->name,
				      strerror(-rc));
			return rc;
		}
		if (c->wants_proctime) {
			c->next_in_shard = sh->proctime_list;
			sh->proctime_list = c;
		}
		/* restarting from a checkpoint: state before the first record */
		rc = sl_ckpt_restore_op(sh, c, i);
		if (rc < 0)
			return rc;
		if (node->kind == SL_NODE_KEYBY) {
			rc = sl_exchange_open(&sh->xctx[i], &sh->si[node->in->stage], node->stage,
					      node->lane);
			if (rc < 0)
				return rc;
			if (sh->xctx[i].wants_proctime) {
				sh->xctx[i].next_in_shard = sh->proctime_list;
				sh->proctime_list = &sh->xctx[i];
			}
		}
	}
	for (int s = 0; s < job->nstages; s++) {
		struct sl_stage_inst *si = &sh->si[s];

		if (si->st->input->kind == SL_NODE_SOURCE) {
			rc = sl_source_stage_open(si);
			if (rc < 0)
				return rc;
			continue;
		}
		/* channel lane * nshards + from: the ring from shard `from` on input lane */
		si->nchans = sh->rt->nshards * si->st->nlanes;
		si->chans = calloc((size_t)si->nchans, sizeof(*si->chans));
		if (!si->chans)
			return -ENOMEM;
		for (int c = 0; c < si->nchans; c++) {
			si->chans[c].ring = sl_rt_ring_lane(sh->rt, s, c / sh->rt->nshards,
							    c % sh->rt->nshards, sh->index);
			si->chans[c].wm = SL_TS_MIN;
		}
		mark_dead_channels(sh, si);
	}
	return 0;
}

void sl_shard_unwire(struct sl_shard *sh)
{
	struct sl_job *job = sh->rt->job;

	if (sh->si) {
		for (int s = 0; s < job->nstages; s++) {
			if (sh->stage_blocked_ms)
				sh->stage_blocked_ms[s] = sh->si[s].blocked_ms;
			if (sh->si[s].st && sh->si[s].st->input->kind == SL_NODE_SOURCE)
				sl_source_stage_close(&sh->si[s]);
			free(sh->si[s].chans);
		}
	}
	for (int i = job->nnodes - 1; i >= 0 && sh->ctx; i--) {
		struct sl_ctx *c = &sh->ctx[i];

		if (c->kstate)
			c->m.state_bytes = sl_kstate_bytes(c->kstate);
		if (sh->m) {
			sh->m[i] = c->m;
			/* a key_by counts what entered its exchange and what left its receiver */
			if (sh->xctx[i].def) {
				sh->m[i].in = sh->xctx[i].m.in;
				sh->m[i].combined = sh->xctx[i].m.combined;
				sh->m[i].partials = sh->xctx[i].m.partials;
			}
		}
		if (c->def && c->def->ops->close)
			c->def->ops->close(c);
		if (sh->xctx[i].def && sh->xctx[i].def->ops->close)
			sh->xctx[i].def->ops->close(&sh->xctx[i]);
		free(c->out_buf);
		free(sh->xctx[i].out_buf);
		sl_snap_free(&c->snap);
	}
	free(sh->si);
	free(sh->ctx);
	free(sh->xctx);
	free(sh->src_scratch);
	sh->si = NULL;
	sh->ctx = sh->xctx = NULL;
	sh->src_scratch = NULL;
}
