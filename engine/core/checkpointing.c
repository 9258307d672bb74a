/*
 * checkpointing.c - a completed checkpoint made durable (DESIGN §7): the snapshots the
 * shards took at the barrier become state files, the split positions and the sinks'
 * pre-commits go into the manifest, the manifest is committed, and only then do the sinks
 * commit.
 *
 * Runs on the coordinator thread while the shards go on processing: a shard only reuses its
 * snapshot buffers after the coordinator has released the checkpoint (runtime.c). The state
 * files are written through the coordinator's own io_uring writer (write + fsync linked);
 * DESIGN §7 puts one writer in each shard, which the coordinator's writer can become without
 * changing the files or the manifest.
 *
 * Checkpoint ids are the store's: a restarted job continues after the highest id in the
 * directory, so sinks that name files by checkpoint never reuse a name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint/manifest.h"
#include "checkpoint/store.h"
#include "checkpoint/uring_writer.h"
#include "checkpointing.h"
#include "hash.h"
#include "runtime.h"

struct sl_ckpt_ctl {
	struct sl_ckpt_store *store;
	struct sl_ckw *writer;
	char job_id[512];
	int files_failed;            /* state files of the checkpoint being completed */
	struct sl_ckpt_manifest *m;
	/* the checkpoint this run restores (restored.ckpt_id 0: a fresh start), with every
	 * state file loaded; read-only while the shards wire themselves */
	struct sl_ckpt_manifest restored;
	struct sl_snap_buf *state;   /* [restored.nfiles] */
};

/*
 * Restores the newest complete checkpoint of this job, if any (DESIGN §7): pending sink
 * commits finish first, then whatever sinks wrote after it is discarded, newer broken
 * checkpoints are cleared away, and the state files are loaded for the shards.
 */
static int restore_prepare(struct sl_runtime *rt, struct sl_ckpt_ctl *c)
{
	struct sl_job *job = rt->job;
	struct sl_ckpt_manifest *m = &c->restored;
	int rc = sl_ckpt_store_find_latest(c->store, c->job_id, m);

	if (rc == -ENOENT) {
		/* a fresh start: what an earlier run's sinks left uncommitted is discarded */
		memset(m, 0, sizeof(*m));
		for (int i = 0; i < job->nnodes; i++) {
			const struct sl_stream *s = job->node[i];

			if (s->kind != SL_NODE_SINK || !s->sink_ops->abort_pending)
				continue;
			for (int k = 0; k < rt->nshards; k++)
				if ((rc = s->sink_ops->abort_pending(s->cfg, k, rt->nshards, 0)) < 0) {
					sl_job_set_error(job, rc, "sink '%s': discarding uncommitted "
							 "output: %s", s->name, strerror(-rc));
					return rc;
				}
		}
		return 0;
	}
	if (rc) {
		sl_job_set_error(job, rc, "cannot restore: %s", rc == -EINVAL
				 ? "the checkpoint directory holds another job's checkpoints"
				 : strerror(-rc));
		return rc;
	}
	if (m->max_parallelism != rt->max_par) {
		sl_job_set_error(job, -EINVAL, "cannot restore checkpoint %" PRIu64 ": it has %u "
				 "key groups, this run %u", m->ckpt_id, m->max_parallelism,
				 rt->max_par);
		return -EINVAL;
	}
	for (uint32_t k = 0; k < m->nsinks; k++) {
		const struct sl_stream *s = m->sinks[k].op_id < (uint32_t)job->nnodes
						    ? job->node[m->sinks[k].op_id] : NULL;

		if (!s || s->kind != SL_NODE_SINK) {
			sl_job_set_error(job, -EINVAL, "checkpoint %" PRIu64 " does not match the "
					 "job: operator %u is not a sink", m->ckpt_id,
					 m->sinks[k].op_id);
			return -EINVAL;
		}
		if (s->sink_ops->commit &&
		    (rc = s->sink_ops->commit(s->cfg, m->ckpt_id, m->sinks[k].bytes,
					      m->sinks[k].len)) < 0) {
			sl_job_set_error(job, rc, "sink '%s': finishing the commit of checkpoint "
					 "%" PRIu64 ": %s", s->name, m->ckpt_id, strerror(-rc));
			return rc;
		}
	}
	for (int i = 0; i < job->nnodes; i++) {
		const struct sl_stream *s = job->node[i];

		if (s->kind != SL_NODE_SINK || !s->sink_ops->abort_pending)
			continue;
		for (int k = 0; k < rt->nshards; k++)
			if ((rc = s->sink_ops->abort_pending(s->cfg, k, rt->nshards,
							     m->ckpt_id)) < 0) {
				sl_job_set_error(job, rc, "sink '%s': discarding uncommitted output: "
						 "%s", s->name, strerror(-rc));
				return rc;
			}
	}
	sl_ckpt_store_discard_after(c->store, m->ckpt_id);
	c->state = calloc((size_t)m->nfiles + 1, sizeof(*c->state));
	if (!c->state)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->nfiles; i++) {
		rc = sl_ckpt_store_load(c->store, m, i, &c->state[i]);
		if (rc) {
			sl_job_set_error(job, rc, "checkpoint %" PRIu64 ": state file %s: %s",
					 m->ckpt_id, m->files[i].path, strerror(-rc));
			return rc;
		}
	}
	fprintf(stderr, "sluice: restoring checkpoint %" PRIu64 " (%u state files, %u shards "
			"then, %d now)\n", m->ckpt_id, m->nfiles, m->nshards, rt->nshards);
	return 0;
}

int sl_ckpt_restore_op(struct sl_shard *sh, struct sl_ctx *ctx, int op_id)
{
	struct sl_runtime *rt = sh->rt;
	struct sl_ckpt_ctl *c = rt->ckpt_ctl;
	uint32_t lo = UINT32_MAX, hi = 0;

	if (!c || !c->restored.ckpt_id || !ctx->def->ops->restore)
		return 0;
	/* this shard's key groups: a contiguous range (hash.h) */
	for (uint32_t kg = 0; kg < rt->max_par; kg++) {
		if (sl_key_group_shard(kg, rt->max_par, (uint32_t)rt->nshards) != (uint32_t)sh->index)
			continue;
		if (kg < lo)
			lo = kg;
		hi = kg + 1;
	}
	for (uint32_t i = 0; i < c->restored.nfiles; i++) {
		struct sl_snap_reader r;
		int rc;

		if (c->restored.files[i].op_id != (uint32_t)op_id)
			continue;
		sl_snap_reader_init(&r, c->state[i].data, c->state[i].len);
		rc = ctx->def->ops->restore(ctx, &r, lo, hi);
		if (rc < 0) {
			sl_shard_fail(sh, rc, "restoring operator '%s' from %s: %s",
				      ctx->def->name, c->restored.files[i].path,
				      rc == -EINVAL ? "the snapshot is corrupt"
				      : rc == -EPROTO ? "the job's state layout changed since the "
							"checkpoint"
						      : strerror(-rc));
			return rc;
		}
	}
	return 0;
}

int sl_ckpt_restore_split(struct sl_runtime *rt, int op_id, int split, sl_ts_t *max_ts,
			  const void **pos, size_t *len)
{
	struct sl_ckpt_ctl *c = rt->ckpt_ctl;

	if (!c || !c->restored.ckpt_id)
		return 0;
	for (uint32_t i = 0; i < c->restored.nsources; i++) {
		const struct sl_ckpt_source_pos *p = &c->restored.sources[i];

		if (p->op_id != (uint32_t)op_id || p->split != (uint32_t)split)
			continue;
		if (p->len < 8)
			return -EINVAL;
		memcpy(max_ts, p->bytes, 8);
		*pos = p->bytes + 8;
		*len = p->len - 8;
		return 1;
	}
	return 0;
}

/* A job's identity for its checkpoints: its name and the kind and name of every operator,
 * so a checkpoint of a different job graph is refused instead of restored. */
static void job_identity(const struct sl_job *job, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "%s", job->name);
	uint64_t h = 1469598103934665603ULL;

	for (int i = 0; i < job->nnodes; i++) {
		const struct sl_stream *s = job->node[i];

		h = (h ^ (uint64_t)s->kind) * 1099511628211ULL;
		for (const char *p = s->name; *p; p++)
			h = (h ^ (uint8_t)*p) * 1099511628211ULL;
	}
	if (n < cap)
		snprintf(buf + n, cap - n, "#%016" PRIx64, h);
}

int sl_ckpt_ctl_open(struct sl_runtime *rt, const char *dir)
{
	struct sl_ckpt_ctl *c = calloc(1, sizeof(*c));
	int err = 0;

	if (!c)
		return -ENOMEM;
	c->store = sl_ckpt_store_open(dir, &err);
	if (c->store)
		c->writer = sl_ckw_create(0, &err);
	if (!c->store || !c->writer) {
		sl_job_set_error(rt->job, err, "checkpoint directory '%s': %s", dir,
				 strerror(-err));
		sl_ckpt_store_close(c->store);
		free(c);
		return err ? err : -EIO;
	}
	job_identity(rt->job, c->job_id, sizeof c->job_id);
	rt->ckpt_ctl = c;
	err = restore_prepare(rt, c);
	if (err) {
		sl_ckpt_ctl_close(rt);
		return err;
	}
	/* barrier ids are store ids: continue after the newest checkpoint in the directory */
	rt->ckpt_base = sl_ckpt_store_next_id(c->store) - 1;
	return 0;
}

void sl_ckpt_ctl_close(struct sl_runtime *rt)
{
	struct sl_ckpt_ctl *c = rt->ckpt_ctl;

	if (!c)
		return;
	sl_ckw_destroy(c->writer);
	sl_ckpt_store_close(c->store);
	for (uint32_t i = 0; c->state && i < c->restored.nfiles; i++)
		sl_snap_free(&c->state[i]);
	free(c->state);
	sl_ckpt_manifest_fini(&c->restored);
	free(c);
	rt->ckpt_ctl = NULL;
}

int sl_ckpt_ctl_begin(struct sl_runtime *rt, uint64_t n)
{
	return sl_ckpt_store_begin(rt->ckpt_ctl->store, n);
}

static void file_done(void *arg, const struct sl_ckw_result *res)
{
	struct sl_ckpt_ctl *c = arg;

	if (res->error) {
		fprintf(stderr, "sluice: checkpoint state file %s: %s failed: %s\n", res->path,
			res->stage, strerror(-res->error));
		c->files_failed++;
		return;
	}
	/* the manifest entry was added at submit; check the size the kernel wrote */
	for (uint32_t i = 0; i < c->m->nfiles; i++) {
		char *slash = strrchr(res->path, '/');

		if (slash && !strcmp(c->m->files[i].path, slash + 1)) {
			if (c->m->files[i].size != res->bytes)
				c->files_failed++;
			c->m->files[i].crc32c = res->crc32c;
		}
	}
}

int sl_ckpt_ctl_complete(struct sl_runtime *rt, uint64_t n)
{
	struct sl_ckpt_ctl *c = rt->ckpt_ctl;
	struct sl_job *job = rt->job;
	struct sl_ckpt_manifest m;
	char rel[128], path[4096];
	int rc;

	rc = sl_ckpt_manifest_init(&m, c->job_id, n, (uint32_t)rt->nshards, rt->max_par);
	if (rc)
		return rc;
	c->m = &m;
	c->files_failed = 0;
	for (int i = 0; i < rt->nshards && !rc; i++) {
		const struct sl_shard *sh = &rt->shards[i];

		/* source positions: every split of every source instance of this shard */
		for (int s = 0; s < job->nstages && !rc; s++) {
			const struct sl_stage_inst *si = &sh->si[s];

			for (int k = 0; k < si->nsplits && !rc; k++) {
				const struct sl_split_inst *sp = &si->splits[k];

				if (sp->pos_ckpt != n || sp->pos.error)
					rc = -EIO;
				else
					rc = sl_ckpt_manifest_add_source(&m,
									 (uint32_t)si->st->input->id,
									 (uint32_t)sp->sctx.split,
									 sp->pos.data,
									 (uint32_t)sp->pos.len);
			}
		}
		for (int node = 0; node < job->nnodes && !rc; node++) {
			const struct sl_ctx *x = &sh->ctx[node];

			if (!x->def || !x->def->ops->snapshot)
				continue;
			if (x->snap_ckpt != n || x->snap_rc) {
				rc = x->snap_rc ? x->snap_rc : -EIO;
				break;
			}
			if (job->node[node]->kind == SL_NODE_SINK) {
				if (x->snap.len)
					rc = sl_ckpt_manifest_add_sink(&m, (uint32_t)node, (uint32_t)i,
								       x->snap.data,
								       (uint32_t)x->snap.len);
				continue;
			}
			sl_ckpt_state_name((uint32_t)node, (uint32_t)i, rel, sizeof rel);
			rc = sl_ckpt_manifest_add_file(&m, (uint32_t)node, (uint32_t)i, rel,
						       x->snap.len, 0);
			if (!rc)
				rc = sl_ckpt_store_path(c->store, n, rel, path, sizeof path);
			if (!rc)
				rc = sl_ckw_submit(c->writer, path, x->snap.data, x->snap.len,
						   file_done, c);
		}
	}
	sl_ckw_drain(c->writer);
	if (!rc && c->files_failed)
		rc = -EIO;
	if (!rc)
		rc = sl_ckpt_store_commit(c->store, &m);
	if (rc) {
		fprintf(stderr, "sluice: checkpoint %" PRIu64 " failed: %s\n", n, strerror(-rc));
		sl_ckw_clear(c->writer);
		sl_ckpt_store_abort(c->store, n);
		sl_ckpt_manifest_fini(&m);
		return rc;
	}
	/* durable: the sinks may now make the checkpoint's data visible */
	for (uint32_t k = 0; k < m.nsinks; k++) {
		const struct sl_stream *s = job->node[m.sinks[k].op_id];
		int crc = s->sink_ops->commit
				  ? s->sink_ops->commit(s->cfg, n, m.sinks[k].bytes, m.sinks[k].len)
				  : 0;

		if (crc < 0)
			fprintf(stderr, "sluice: sink '%s' commit of checkpoint %" PRIu64
					" failed: %s (recovery will retry it)\n",
				s->name, n, strerror(-crc));
	}
	sl_ckpt_manifest_fini(&m);
	return 0;
}

void sl_ckpt_ctl_abort(struct sl_runtime *rt, uint64_t n)
{
	sl_ckpt_store_abort(rt->ckpt_ctl->store, n);
}
