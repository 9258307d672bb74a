/*
 * directory.c - a completed checkpoint made durable (DESIGN §7): the snapshots the
 * shards took at the barrier become state files, the split positions and the sinks'
 * pre-commits go into the manifest, the manifest is committed, and only then do the sinks
 * commit.
 *
 * Runs on the coordinator thread while the shards go on processing: a shard only reuses its
 * snapshot buffers after the coordinator has released the checkpoint (coordinator.c). Each
 * shard writes its own state files through its own io_uring writer (barrier.c) before it
 * acknowledges; the coordinator's writer here writes only the copies a savepoint needs and
 * the manifest's temp file.
 *
 * Checkpoint ids are the store's: a restarted job continues after the highest id in the
 * directory, so sinks that name files by checkpoint never reuse a name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "manifest.h"
#include "store.h"
#include "uring_writer.h"
#include "directory.h"
#include "fault.h"
#include "hash.h"
#include "runtime.h"
#include "backend.h"

struct sl_ckpt_ctl {
	struct sl_ckpt_store *store;   /* the checkpoint directory; NULL: none */
	struct sl_ckpt_store *sp_from; /* the savepoint restored (--from-savepoint); NULL: none */
	uint64_t stale_max;	       /* newest checkpoint recovery stepped back from */
	bool start_fresh; /* damaged checkpoints only: start from scratch (--start-fresh) */
	struct sl_uring_writer *writer;
	char job_id[8192]; /* sl_ckpt_job_identity */
	int files_failed;  /* state files of the checkpoint being completed */
	struct sl_ckpt_manifest *m;
	/* the checkpoint this run restores (restored.ckpt_id 0: a fresh start), with every
	 * state file mapped; read-only while the shards wire themselves */
	struct sl_ckpt_manifest restored;
	struct sl_ckpt_mapped *state; /* [restored.nfiles] */
};

/* Calls abort_pending of every sink instance: what they wrote after checkpoint `ckpt` (0: a
 * fresh start) and did not get into a completed checkpoint is discarded. */
static int abort_sinks(struct sl_runtime *rt, uint64_t ckpt)
{
	struct sl_job *job = rt->job;

	for (int i = 0; i < job->nnodes; i++) {
		const struct sl_stream *s = job->node[i];
		int rc;

		if (s->kind != SL_NODE_SINK || !s->sink_ops->abort_pending)
			continue;
		for (int k = 0; k < rt->nshards; k++)
			if ((rc = s->sink_ops->abort_pending(s->cfg, k, rt->nshards, ckpt)) < 0) {
				sl_job_set_error(job, rc,
						 "sink '%s': discarding uncommitted output: "
						 "%s",
						 s->name, strerror(-rc));
				return rc;
			}
	}
	return 0;
}

/*
 * Runs the sink commits a manifest lists: pass 0 those of sinks whose commit may be lost
 * (job.h, commit_may_be_lost), pass 1 the others. Returns 0, -ESTALE (pass 0: the epoch's
 * output never committed), or the first error. `recovering` only changes the messages.
 */
static int commit_sinks(struct sl_runtime *rt, const struct sl_ckpt_manifest *m, int pass,
			bool recovering)
{
	struct sl_job *job = rt->job;
	int first = 0;

	for (uint32_t k = 0; k < m->nsinks; k++) {
		const struct sl_stream *s = job->node[m->sinks[k].op_id];
		int rc;

		if (!s->sink_ops->commit || s->sink_ops->commit_may_be_lost != (pass == 0))
			continue;
		rc = s->sink_ops->commit(s->cfg, m->ckpt_id, m->sinks[k].bytes, m->sinks[k].len);
		if (!rc && !recovering)
			sl_fault_point("sink-commit", m->ckpt_id);
		if (rc == -ESTALE && pass == 0 && recovering)
			return rc;
		if (rc < 0 && recovering) {
			sl_job_set_error(job, rc,
					 "sink '%s': finishing the commit of checkpoint "
					 "%" PRIu64 ": %s",
					 s->name, m->ckpt_id, strerror(-rc));
			return rc;
		}
		if (rc < 0) {
			fprintf(stderr,
				"sluice: sink '%s' commit of checkpoint %" PRIu64
				" failed: %s (%s)\n",
				s->name, m->ckpt_id, strerror(-rc),
				s->sink_ops->commit_may_be_lost
					? "recovery will restore the checkpoint before it"
					: "recovery will retry it");
			if (!first)
				first = rc;
		}
	}
	return first;
}

/* The manifest's sinks must be sink operators of this job. */
static int check_sinks(struct sl_runtime *rt, const struct sl_ckpt_manifest *m)
{
	struct sl_job *job = rt->job;

	for (uint32_t k = 0; k < m->nsinks; k++) {
		const struct sl_stream *s = m->sinks[k].op_id < (uint32_t)job->nnodes
						    ? job->node[m->sinks[k].op_id]
						    : NULL;

		if (!s || s->kind != SL_NODE_SINK) {
			sl_job_set_error(job, -EINVAL,
					 "checkpoint %" PRIu64 " does not match the "
					 "job: operator %u is not a sink",
					 m->ckpt_id, m->sinks[k].op_id);
			return -EINVAL;
		}
	}
	if (m->max_parallelism != rt->max_par) {
		sl_job_set_error(job, -EINVAL,
				 "cannot restore checkpoint %" PRIu64 ": it has %u "
				 "key groups, this run %u",
				 m->ckpt_id, m->max_parallelism, rt->max_par);
		return -EINVAL;
	}
	return 0;
}

/*
 * Every complete checkpoint in the directory is damaged. Their sinks may have committed
 * output, so a start from scratch would write it again (and an exactly-once sink would
 * hold it twice): refuse, naming what is damaged and the two ways on. The directory is
 * left as it is, so the same start says the same again.
 */
static int refuse_damaged(struct sl_runtime *rt, struct sl_ckpt_ctl *c, uint64_t below)
{
	char names[256];
	int n = sl_ckpt_store_list_complete(c->store, below, names, sizeof names);

	fprintf(stderr, "sluice: not starting from scratch: the output the damaged checkpoints "
			"committed would be written a second time\n");
	sl_job_set_error(rt->job, -EBADMSG,
			 "checkpoint directory '%s': no usable checkpoint (%s damaged): restore "
			 "a savepoint (--from-savepoint DIR) or start from scratch on purpose "
			 "(--start-fresh)",
			 sl_ckpt_store_dir(c->store), n > 0 ? names : "every one");
	return -EBADMSG;
}

/*
 * Restores the newest complete checkpoint of this job, if any (DESIGN §7): pending sink
 * commits finish first, then whatever sinks wrote after it is discarded, newer broken
 * checkpoints are cleared away, and the state files are loaded for the shards. A sink that
 * reports the newest checkpoint's output lost (-ESTALE) sends recovery one checkpoint back:
 * that checkpoint is removed, and the one before it restored and its epoch replayed.
 */
static int restore_prepare(struct sl_runtime *rt, struct sl_ckpt_ctl *c)
{
	struct sl_job *job = rt->job;
	struct sl_ckpt_manifest *m = &c->restored;
	struct sl_ckpt_store *from = c->sp_from ? c->sp_from : c->store;
	uint64_t below = UINT64_MAX;
	int rc;

	for (;;) {
		rc = from ? sl_ckpt_store_find_below(from, c->job_id, below, m) : -ENOENT;
		if (rc == -ENOENT && c->sp_from) {
			sl_job_set_error(
				job, -ENOENT, "savepoint '%s': %s", sl_ckpt_store_dir(c->sp_from),
				below == UINT64_MAX ? "no complete checkpoint in it"
						    : "its sinks' output was never committed");
			return -ENOENT;
		}
		if (rc == -EBADMSG && c->sp_from) {
			sl_job_set_error(job, rc,
					 "savepoint '%s': damaged (see above): restore another "
					 "savepoint or a checkpoint",
					 sl_ckpt_store_dir(c->sp_from));
			return rc;
		}
		if (rc == -EBADMSG && !c->start_fresh)
			return refuse_damaged(rt, c, below);
		if (rc == -EBADMSG) {
			/* asked for: the damaged ones stay for inspection, out of the way */
			fprintf(stderr,
				"sluice: --start-fresh: the damaged checkpoints of %s are moved "
				"aside as corrupt-chk-<n> (until two newer ones complete); "
				"starting from scratch (output committed before is written "
				"again)\n",
				sl_ckpt_store_dir(c->store));
			sl_ckpt_store_discard_after(c->store, 0);
			rc = -ENOENT;
		}
		if (rc == -ENOENT) {
			/* a fresh start: what an earlier run's sinks left uncommitted goes */
			memset(m, 0, sizeof(*m));
			return abort_sinks(rt, 0);
		}
		if (rc) {
			sl_job_set_error(job, rc, "cannot restore: %s",
					 rc == -EINVAL
						 ? "the checkpoint directory holds another job's "
						   "checkpoints"
						 : strerror(-rc));
			return rc;
		}
		rc = check_sinks(rt, m);
		if (!rc)
			rc = commit_sinks(rt, m, 0, true);
		if (rc != -ESTALE)
			break;
		fprintf(stderr,
			"sluice: checkpoint %" PRIu64 ": a sink's output of it was never "
			"committed (the transaction died with the process); restoring the "
			"checkpoint before it\n",
			m->ckpt_id);
		below = m->ckpt_id;
		if (below > c->stale_max)
			c->stale_max = below;
		sl_ckpt_manifest_fini(m);
		if (!c->sp_from)
			sl_ckpt_store_abort(c->store, below);
	}
	if (!rc)
		rc = commit_sinks(rt, m, 1, true);
	if (!rc)
		rc = abort_sinks(rt, m->ckpt_id);
	if (rc)
		return rc;
	if (!c->sp_from)
		sl_ckpt_store_discard_after(c->store, m->ckpt_id);
	c->state = calloc((size_t)m->nfiles + 1, sizeof(*c->state));
	if (!c->state)
		return -ENOMEM;
	rc = sl_ckpt_store_map_all(from, m, c->state);
	if (rc) {
		sl_job_set_error(job, rc, "checkpoint %" PRIu64 ": its state files (see above): %s",
				 m->ckpt_id, strerror(-rc));
		return rc;
	}
	fprintf(stderr,
		"sluice: restoring %s %" PRIu64 " of %s (%u state files, %u shards "
		"then, %d now)\n",
		c->sp_from ? "savepoint" : "checkpoint", m->ckpt_id, sl_ckpt_store_dir(from),
		m->nfiles, m->nshards, rt->nshards);
	return 0;
}

int sl_ckpt_restore_op(struct sl_shard *sh, struct sl_ctx *ctx, int op_id)
{
	struct sl_runtime *rt = sh->rt;
	struct sl_ckpt_ctl *c = rt->ckpt_ctl;
	uint32_t lo, hi;

	if (!c || !c->restored.ckpt_id || !ctx->def->ops->restore)
		return 0;
	sl_key_group_range(rt->max_par, (uint32_t)rt->nshards, (uint32_t)sh->index, &lo, &hi);
	/*
	 * Pass 0 restores the old instance that held exactly this shard's key groups (there is
	 * one when the shard count is the same), pass 1 the others: the result does not depend
	 * on the order, but a RocksDB kstate takes its entry count from that instance's native
	 * section only if it comes before anything asks for the count (else it scans the db).
	 */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < c->restored.nfiles; i++) {
			const struct sl_ckpt_state_file *f = &c->restored.files[i];
			struct sl_snap_reader r;
			uint32_t olo, ohi;
			int rc;

			if (f->op_id != (uint32_t)op_id || sl_ckpt_path_is_native(f->path))
				continue;
			sl_key_group_range(c->restored.max_parallelism, c->restored.nshards,
					   f->shard, &olo, &ohi);
			if ((olo == lo && ohi == hi) != (pass == 0))
				continue;
			sl_snap_reader_init(&r, c->state[i].data, c->state[i].len);
			rc = ctx->def->ops->restore(ctx, &r, lo, hi);
			if (rc < 0) {
				sl_shard_fail(sh, rc, "restoring operator '%s' from %s: %s",
					      ctx->def->name, c->restored.files[i].path,
					      rc == -EINVAL ? "the snapshot is corrupt"
					      : rc == -EPROTO
						      ? "the job's state layout changed since the "
							"checkpoint"
						      : strerror(-rc));
				return rc;
			}
		}
	return 0;
}

/* Hands db the CRC32C the manifest records for the files of native directory `rel`
 * (listed together from m->files[at]), verified at recovery: the db's next checkpoint then
 * reads only the SSTs made after the restore. */
static int seed_crcs(struct sl_rocks_db *db, const struct sl_ckpt_manifest *m, uint32_t at,
		     const char *rel)
{
	size_t rl = strlen(rel), n = 0;
	struct sl_state_ckpt_file *v = calloc(m->nfiles + 1, sizeof(*v));
	int rc;

	if (!v)
		return -ENOMEM;
	for (uint32_t i = at; i < m->nfiles; i++) {
		const struct sl_ckpt_state_file *f = &m->files[i];

		if (strncmp(f->path, rel, rl) || f->path[rl] != '/')
			break;
		if (strlen(f->path + rl + 1) >= sizeof(v[n].name))
			continue;
		strcpy(v[n].name, f->path + rl + 1);
		v[n].size = f->size;
		v[n].crc32c = f->crc32c;
		n++;
	}
	rc = sl_rocks_db_seed_crc(db, v, n);
	free(v);
	return rc;
}

int sl_ckpt_restore_db(struct sl_shard *sh, int op_id, struct sl_rocks_db *db)
{
	struct sl_runtime *rt = sh->rt;
	struct sl_ckpt_ctl *c = rt->ckpt_ctl;
	const struct sl_ckpt_manifest *m = c ? &c->restored : NULL;
	struct sl_ckpt_store *from = c && c->sp_from ? c->sp_from : c ? c->store : NULL;
	uint32_t lo, hi, last = UINT32_MAX;
	int loaded = 0;

	if (!m || !m->ckpt_id || !db)
		return 0;
	sl_key_group_range(rt->max_par, (uint32_t)rt->nshards, (uint32_t)sh->index, &lo, &hi);
	/* the files of one old instance's directory are listed together (commit_shard_files) */
	for (uint32_t i = 0; i < m->nfiles; i++) {
		const struct sl_ckpt_state_file *f = &m->files[i];
		uint32_t olo, ohi;
		char rel[64], path[4096], err[512];
		int rc;

		if (f->op_id != (uint32_t)op_id || !sl_ckpt_path_is_native(f->path) ||
		    f->shard == last)
			continue;
		last = f->shard;
		sl_key_group_range(m->max_parallelism, m->nshards, f->shard, &olo, &ohi);
		if (olo >= lo && ohi <= hi) {
			/* all of it is ours (same shard count, or fewer shards now): load it
			 * whole, without range tombstones, whose write can wait seconds behind
			 * the level-0 compactions of a freshly linked DB */
			olo = 0;
			ohi = 65536;
		} else {
			olo = olo > lo ? olo : lo;
			ohi = ohi < hi ? ohi : hi;
			if (olo >= ohi)
				continue; /* none of this shard's key groups were there */
		}
		/* the directory the files lie in: named by the operator's index when it was
		 * written, which need not be its index now (op_match.h) */
		rc = (size_t)(strchr(f->path, '/') - f->path) < sizeof rel ? 0 : -ENAMETOOLONG;
		if (!rc)
			snprintf(rel, sizeof rel, "%.*s", (int)(strchr(f->path, '/') - f->path),
				 f->path);
		if (!rc)
			rc = sl_ckpt_store_path(from, m->ckpt_id, rel, path, sizeof path);
		if (!rc)
			rc = sl_rocks_db_load(db, path, olo, ohi, err, sizeof err);
		else
			snprintf(err, sizeof err, "%s", strerror(-rc));
		/* the first load linked this directory in: its SSTs' checksums are known (a
		 * cache: without it the next checkpoint reads the SSTs again) */
		if (!rc && !loaded++)
			seed_crcs(db, m, i, rel);
		if (rc) {
			sl_shard_fail(sh, rc,
				      "restoring the state of '%s' from checkpoint %" PRIu64 ": %s",
				      rt->job->node[op_id]->name, m->ckpt_id, err);
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

int sl_ckpt_restored_nsplits(const struct sl_runtime *rt, int op_id)
{
	const struct sl_ckpt_ctl *c = rt->ckpt_ctl;
	int n = 0;

	if (!c || !c->restored.ckpt_id)
		return 0;
	for (uint32_t j = 0; j < c->restored.nsources; j++)
		if (c->restored.sources[j].op_id == (uint32_t)op_id &&
		    (int)c->restored.sources[j].split >= n)
			n = (int)c->restored.sources[j].split + 1;
	return n;
}

int sl_ckpt_restore_layout(struct sl_runtime *rt)
{
	struct sl_ckpt_ctl *c = rt->ckpt_ctl;
	struct sl_job *job = rt->job;

	if (!c || !c->restored.ckpt_id)
		return 0;
	for (int i = 0; i < job->nnodes; i++) {
		const struct sl_stream *src = job->node[i];
		const void **pos;
		size_t *len;
		int n = 0, rc;
		struct sl_error err = { 0 };

		if (src->kind != SL_NODE_SOURCE || !src->src_ops->restore_layout)
			continue;
		for (uint32_t j = 0; j < c->restored.nsources; j++)
			if (c->restored.sources[j].op_id == (uint32_t)src->id &&
			    (int)c->restored.sources[j].split >= n)
				n = (int)c->restored.sources[j].split + 1;
		pos = calloc((size_t)(n ? n : 1), sizeof(*pos));
		len = calloc((size_t)(n ? n : 1), sizeof(*len));
		if (!pos || !len) {
			free(pos);
			free(len);
			sl_job_set_error(job, -ENOMEM, "out of memory restoring source '%s'",
					 src->name);
			return -ENOMEM;
		}
		for (uint32_t j = 0; j < c->restored.nsources; j++) {
			const struct sl_ckpt_source_pos *p = &c->restored.sources[j];

			if (p->op_id != (uint32_t)src->id || p->len < 8)
				continue;
			pos[p->split] = p->bytes + 8; /* after the split's event time */
			len[p->split] = p->len - 8;
		}
		rc = src->src_ops->restore_layout(src->cfg, n, pos, len, &err);
		free(pos);
		free(len);
		if (rc < 0) {
			sl_job_set_error(job, rc,
					 "source '%s': cannot restore its splits from the "
					 "checkpoint: %s",
					 src->name, err.msg[0] ? err.msg : strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* A hash of the columns an operator's keyed state is laid out by: its input's and its
 * output's names and types. */
static uint32_t node_columns_hash(const struct sl_stream *s)
{
	const struct sl_schema *sc[2] = { s->in ? s->in->schema : NULL, s->schema };
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (int k = 0; k < 2; k++)
		for (int i = 0; sc[k] && i < sl_schema_nfields(sc[k]); i++) {
			const char *name = sl_schema_name(sc[k], i);
			uint64_t t = (uint64_t)sl_schema_type(sc[k], i) |
				     (uint64_t)sl_schema_precision(sc[k], i) << 8 |
				     (uint64_t)sl_schema_scale(sc[k], i) << 16 | (uint64_t)k << 24;

			h = sl_hash_mix64(h ^ sl_hash_bytes(name, (uint32_t)strlen(name)));
			h = sl_hash_mix64(h ^ t);
		}
	return (uint32_t)(h ^ h >> 32);
}

/*
 * sl_ckpt_job_identity: a job's identity for its checkpoints (manifest.h, "Job ids"): its name
 * (SQL: the pipeline name, by default the job file's name) and, operator by operator, its
 * index, kind and uid (op_match.h), with the columns' hash for keyed operators.
 * A restore matches operators by kind and uid, not by index or by where the file lies, so
 * the state goes where it belongs after operators are added or removed elsewhere. The
 * second operator of the same kind and uid gets "#2" after it, and so on.
 */
void sl_ckpt_job_identity(const struct sl_job *job, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "%s|", job->name);

	for (int i = 0; i < job->nnodes && n < cap; i++) {
		const struct sl_stream *s = job->node[i];
		char tok[300];

		sl_node_uid_token(job, i, tok, sizeof tok);
		n += (size_t)snprintf(buf + n, cap - n, "%d:%s", i, tok);
		if (s->kind == SL_NODE_KEYED && n < cap)
			n += (size_t)snprintf(buf + n, cap - n, "=%08x", node_columns_hash(s));
		if (n < cap)
			n += (size_t)snprintf(buf + n, cap - n, ";");
	}
	if (n >= cap && cap)
		buf[cap - 1] = 0;
}

int sl_ckpt_ctl_open(struct sl_runtime *rt, const char *dir, const char *savepoint,
		     bool start_fresh, bool allow_non_restored)
{
	struct sl_ckpt_ctl *c = calloc(1, sizeof(*c));
	const char *what = dir;
	struct stat sb;
	int err = 0;

	if (!c)
		return -ENOMEM;
	rt->ckpt_ctl = c;
	c->start_fresh = start_fresh;
	c->writer = sl_uring_writer_create(0, &err);
	if (c->writer && dir)
		c->store = sl_ckpt_store_open(dir, &err);
	if (!err && savepoint) {
		what = savepoint;
		/* a savepoint is read, never created */
		if (stat(savepoint, &sb))
			err = -errno;
		else if (!S_ISDIR(sb.st_mode))
			err = -ENOTDIR;
		else
			c->sp_from = sl_ckpt_store_open(savepoint, &err);
	}
	if (err) {
		sl_job_set_error(rt->job, err, "%s '%s': %s",
				 what == savepoint ? "savepoint" : "checkpoint directory",
				 what ? what : "", strerror(-err));
		sl_ckpt_ctl_close(rt);
		return err;
	}
	rt->ckpt_store = c->store;
	if (c->store)
		sl_ckpt_store_allow_non_restored(c->store, allow_non_restored);
	if (c->sp_from)
		sl_ckpt_store_allow_non_restored(c->sp_from, allow_non_restored);
	sl_ckpt_job_identity(rt->job, c->job_id, sizeof c->job_id);
	err = restore_prepare(rt, c);
	if (err) {
		sl_ckpt_ctl_close(rt);
		return err;
	}
	/* barrier ids are store ids: continue after the newest checkpoint in the directory
	 * and after the restored one, so sinks naming files by checkpoint never reuse one */
	rt->ckpt_base = c->store ? sl_ckpt_store_next_id(c->store) - 1 : 0;
	if (c->restored.ckpt_id > rt->ckpt_base)
		rt->ckpt_base = c->restored.ckpt_id;
	/* nor the ids of checkpoints stepped back from: their sinks may have used them */
	if (c->stale_max > rt->ckpt_base)
		rt->ckpt_base = c->stale_max;
	return 0;
}

void sl_ckpt_ctl_close(struct sl_runtime *rt)
{
	struct sl_ckpt_ctl *c = rt->ckpt_ctl;

	if (!c)
		return;
	sl_uring_writer_destroy(c->writer);
	rt->ckpt_store = NULL;
	sl_ckpt_store_close(c->store);
	sl_ckpt_store_close(c->sp_from);
	sl_ckpt_store_unmap_all(c->state, c->restored.nfiles);
	free(c->state);
	sl_ckpt_manifest_fini(&c->restored);
	free(c);
	rt->ckpt_ctl = NULL;
}

bool sl_ckpt_writes_files(const struct sl_runtime *rt)
{
	return rt->ckpt_ctl && rt->ckpt_ctl->store;
}

int sl_ckpt_file_path(struct sl_runtime *rt, uint64_t n, const char *rel, char *buf, size_t cap)
{
	return sl_ckpt_store_path(rt->ckpt_ctl->store, n, rel, buf, cap);
}

int sl_ckpt_ctl_begin(struct sl_runtime *rt, uint64_t n)
{
	struct sl_ckpt_ctl *c = rt->ckpt_ctl;

	return c->store ? sl_ckpt_store_begin(c->store, n) : 0;
}

static void file_done(void *arg, const struct sl_uring_writer_result *res)
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

/* One state file of the checkpoint being completed: the bytes stay in the shard's
 * instance (its snapshot buffer) until the coordinator releases the checkpoint. */
struct pending_file {
	const void *data;
	size_t len;
	uint32_t node, shard;
	char rel[64];
};

/* Writes the state files and then the manifest of checkpoint m->ckpt_id into store `st`
 * (begun already). 0 once the manifest is durable, or -errno with the checkpoint removed. */
static int write_to(struct sl_ckpt_ctl *c, struct sl_ckpt_store *st, struct sl_ckpt_manifest *m,
		    const struct pending_file *f, uint32_t nf)
{
	char path[4096];
	int rc = 0;

	c->m = m;
	c->files_failed = 0;
	for (uint32_t i = 0; i < nf && !rc; i++) {
		rc = sl_ckpt_store_path(st, m->ckpt_id, f[i].rel, path, sizeof path);
		if (!rc)
			rc = sl_uring_writer_submit(c->writer, path, f[i].data, f[i].len, file_done,
						    c);
	}
	sl_uring_writer_drain(c->writer);
	if (!rc && c->files_failed)
		rc = -EIO;
	if (!rc)
		rc = sl_ckpt_store_commit(st, m);
	if (rc) {
		fprintf(stderr, "sluice: checkpoint %" PRIu64 " in %s failed: %s\n", m->ckpt_id,
			sl_ckpt_store_dir(st), strerror(-rc));
		sl_uring_writer_clear(c->writer);
		sl_ckpt_store_abort(st, m->ckpt_id);
	}
	return rc;
}

/* The files of the native checkpoint (a RocksDB checkpoint directory) that shard file f's
 * operator took, each with its CRC32C (the shard had them all before acknowledging). The
 * db is the shard's, read here between its acknowledgement and the release of the
 * checkpoint, when the shard does not touch it. */
static int add_native(const struct sl_runtime *rt, struct sl_ckpt_manifest *m,
		      const struct sl_shard_file *f, uint32_t shard)
{
	const struct sl_state_ckpt_file *v;
	char rel[64], path[192];
	size_t n;
	int rc;

	v = sl_rocks_db_checkpoint_files(f->native, &n);
	rc = sl_ckpt_state_dir_name((uint32_t)f->node, shard, rt->ckpt_run, rel, sizeof rel);
	for (size_t i = 0; i < n && !rc; i++) {
		if (!v[i].crc_ok)
			return -EIO;
		snprintf(path, sizeof path, "%s/%s", rel, v[i].name);
		rc = sl_ckpt_manifest_add_file(m, (uint32_t)f->node, shard, path, v[i].size,
					       v[i].crc32c);
	}
	return rc;
}

/*
 * The shards wrote their state files of checkpoint m->ckpt_id before acknowledging it (each
 * through its own io_uring, barrier.c): the manifest takes their sizes and checksums, then is
 * committed. 0, or -errno with the checkpoint removed.
 */
static int commit_shard_files(struct sl_runtime *rt, struct sl_ckpt_manifest *m)
{
	struct sl_ckpt_ctl *c = rt->ckpt_ctl;
	int rc = 0;

	for (int i = 0; i < rt->nshards && !rc; i++) {
		const struct sl_shard *sh = &rt->shards[i];

		if (sh->files_ckpt != m->ckpt_id) {
			rc = -EIO;
			break;
		}
		for (int k = 0; k < sh->nfiles && !rc; k++) {
			const struct sl_shard_file *f = &sh->files[k];

			rc = f->error ? f->error
				      : sl_ckpt_manifest_add_file(m, (uint32_t)f->node, (uint32_t)i,
								  f->rel, f->size, f->crc32c);
			if (!rc && f->native)
				rc = add_native(rt, m, f, (uint32_t)i);
		}
	}
	if (!rc)
		rc = sl_ckpt_store_commit(c->store, m);
	if (rc) {
		fprintf(stderr, "sluice: checkpoint %" PRIu64 " in %s failed: %s\n", m->ckpt_id,
			sl_ckpt_store_dir(c->store), strerror(-rc));
		sl_ckpt_store_abort(c->store, m->ckpt_id);
	}
	return rc;
}

/* Writes checkpoint m into a new savepoint directory under the requested one; the path or
 * the failure goes to the request (rt->sp, read by the coordinator). */
static int write_savepoint(struct sl_runtime *rt, struct sl_ckpt_manifest *m,
			   const struct pending_file *f, uint32_t nf)
{
	struct sl_savepoint_req *sp = &rt->sp;
	struct sl_ckpt_store *st = NULL;
	char path[4096];
	int rc = 0;

	if (mkdir(sp->dir, 0755) && errno != EEXIST)
		rc = -errno;
	if (!rc && snprintf(path, sizeof path, "%s/savepoint-%" PRIu64 "-%08x", sp->dir, m->ckpt_id,
			    (unsigned)(sl_hash_bytes(&m->ckpt_id, 8) ^ (uint64_t)time(NULL))) >=
			   (int)sizeof path)
		rc = -ENAMETOOLONG;
	if (!rc && mkdir(path, 0755))
		rc = -errno;
	if (!rc)
		st = sl_ckpt_store_open(path, &rc);
	if (st) {
		sl_ckpt_store_set_keep(st, 1);
		rc = sl_ckpt_store_begin(st, m->ckpt_id);
		if (!rc)
			rc = write_to(rt->ckpt_ctl, st, m, f, nf);
		sl_ckpt_store_close(st);
	}
	pthread_mutex_lock(&sp->lock);
	sp->rc = rc;
	if (rc)
		snprintf(sp->err, sizeof sp->err, "writing the savepoint under '%.150s': %s",
			 sp->dir, strerror(-rc));
	else
		snprintf(sp->path, sizeof sp->path, "%s", path);
	pthread_mutex_unlock(&sp->lock);
	return rc;
}

int sl_ckpt_ctl_complete(struct sl_runtime *rt, uint64_t n)
{
	struct sl_ckpt_ctl *c = rt->ckpt_ctl;
	struct sl_job *job = rt->job;
	bool sp_here = rt->sp.active && rt->sp.ckpt == n;
	struct pending_file *f = NULL;
	struct sl_ckpt_manifest m;
	uint32_t nf = 0, cap = 0;
	int rc;

	/* only on_checkpoint looks at a checkpoint that goes nowhere (tests) */
	if (!c->store && !sp_here)
		return 0;
	rc = sl_ckpt_manifest_init(&m, c->job_id, n, (uint32_t)rt->nshards, rt->max_par);
	if (rc)
		return rc;
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
					rc = sl_ckpt_manifest_add_source(
						&m, (uint32_t)si->st->input->id,
						(uint32_t)sp->sctx.split, sp->pos.data,
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
					rc = sl_ckpt_manifest_add_sink(&m, (uint32_t)node,
								       (uint32_t)i, x->snap.data,
								       (uint32_t)x->snap.len);
				continue;
			}
			if (nf == cap) {
				struct pending_file *g =
					realloc(f, (cap = cap ? 2 * cap : 16) * sizeof(*f));

				if (!g) {
					rc = -ENOMEM;
					break;
				}
				f = g;
			}
			f[nf].data = x->snap.data;
			f[nf].len = x->snap.len;
			f[nf].node = (uint32_t)node;
			f[nf].shard = (uint32_t)i;
			sl_ckpt_state_name((uint32_t)node, (uint32_t)i, rt->ckpt_run, f[nf].rel,
					   sizeof f[nf].rel);
			nf++;
		}
	}
	if (rc) {
		fprintf(stderr, "sluice: checkpoint %" PRIu64 " failed: %s\n", n, strerror(-rc));
		if (c->store)
			sl_ckpt_store_abort(c->store, n);
	} else if (c->store) {
		rc = commit_shard_files(rt, &m);
	} else {
		/* a savepoint alone: its writer checksums the files into the manifest */
		for (uint32_t i = 0; i < nf && !rc; i++)
			rc = sl_ckpt_manifest_add_file(&m, f[i].node, f[i].shard, f[i].rel,
						       f[i].len, 0);
	}
	if (!rc && sp_here) {
		int sprc = write_savepoint(rt, &m, f, nf);

		/* with no checkpoint directory the savepoint was the checkpoint */
		if (!c->store)
			rc = sprc;
	}
	/* durable: the sinks may now make the checkpoint's data visible, those whose commit
	 * can be lost first (job.h) -- unless only a savepoint was to hold it, and failed */
	if (!rc) {
		commit_sinks(rt, &m, 0, false);
		commit_sinks(rt, &m, 1, false);
	}
	free(f);
	sl_ckpt_manifest_fini(&m);
	return rc;
}

void sl_ckpt_ctl_abort(struct sl_runtime *rt, uint64_t n)
{
	struct sl_ckpt_ctl *c = rt->ckpt_ctl;

	if (c->store)
		sl_ckpt_store_abort(c->store, n);
}
