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
#include "runtime.h"

struct sl_ckpt_ctl {
	struct sl_ckpt_store *store;
	struct sl_ckw *writer;
	char job_id[512];
	int files_failed;            /* state files of the checkpoint being completed */
	struct sl_ckpt_manifest *m;
};

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
