/*
 * barrier.c - a shard's side of checkpoint n (DESIGN.md, "Checkpoints"): it starts n at its
 * source instances when the coordinator asks, takes the operators' snapshots as the barrier
 * passes (op.h), hands their bytes to its own io_uring writer, and acknowledges n once
 * every stage instance of the shard has passed the barrier and every state file is durable.
 * The coordinator (coordinator.c) waits for every shard's acknowledgement, then completes n.
 * Channel alignment itself is in the shard loop (runtime/shard.c, chan_try_align), where
 * the rings are read.
 *
 * Every call here runs on the shard's own thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "fault.h"
#include "barrier.h"
#include "directory.h"
#include "runtime.h"
#include "store.h"
#include "uring_writer.h"

/* Tells the source splits of a newly completed checkpoint (before a newer one can start in
 * this turn, so the positions they hold are still that checkpoint's). */
void sl_barrier_announce_complete(struct sl_shard *sh)
{
	struct sl_runtime *rt = sh->rt;
	/* acquire ckpt_complete: pairs with the coordinator's release of it (coordinator.c)
	 * once n's manifest and sink commits are done */
	uint64_t done = atomic_load_explicit(&rt->ckpt_complete, memory_order_acquire);

	if (done <= sh->ckpt_announced)
		return;
	sh->ckpt_announced = done;
	for (int s = 0; s < rt->job->nstages; s++)
		if (!sh->si[s].chans)
			sl_source_stage_complete(&sh->si[s], done);
}

/* Starts a newly requested checkpoint at this shard's source instances. */
void sl_barrier_start(struct sl_shard *sh)
{
	struct sl_runtime *rt = sh->rt;
	struct sl_job *job = rt->job;
	/* acquire ckpt_req: pairs with the coordinator's release of it (coordinator.c), after
	 * checkpoint n's directory and ckpt_savepoint are in place */
	uint64_t req = atomic_load_explicit(&rt->ckpt_req, memory_order_acquire);

	if (req <= sh->ckpt_seen)
		return;
	sh->ckpt_seen = req;
	/* the coordinator has given up the previous checkpoint if its files failed */
	if (sh->writer && sl_uring_writer_error(sh->writer))
		sl_uring_writer_clear(sh->writer);
	for (int s = 0; s < job->nstages; s++)
		if (!sh->si[s].chans)
			sl_source_stage_barrier(&sh->si[s], req);
	sl_fault_point("barrier-injected", req);
}

/* A state file of this shard became durable, or failed (its writer's callback). */
static void file_done(void *arg, const struct sl_uring_writer_result *res)
{
	struct sl_shard *sh = arg;
	size_t plen = strlen(res->path);

	for (int i = 0; i < sh->nfiles; i++) {
		struct sl_shard_file *f = &sh->files[i];
		size_t rlen = strlen(f->rel);

		if (plen <= rlen || strcmp(res->path + plen - rlen, f->rel) ||
		    res->path[plen - rlen - 1] != '/')
			continue;
		f->crc32c = res->crc32c;
		f->error = res->error ? res->error : res->bytes != f->size ? -EIO : 0;
		if (res->error)
			fprintf(stderr, "sluice: checkpoint state file %s: %s failed: %s\n",
				res->path, res->stage, strerror(-res->error));
		sh->files_pending--;
		return;
	}
}

/* The db of node's instance if it took a native checkpoint for n at its barrier (it did
 * unless n needed the logical snapshot: sl_shard_native_ckpt_dir). */
static struct sl_rocks_db *native_ckpt(struct sl_shard *sh, int node, uint64_t n)
{
	struct sl_rocks_db *db = sh->state_dbs ? sh->state_dbs[node] : NULL;
	const char *last = sl_rocks_db_checkpoint_dir(db);
	char want[4096];

	if (!last || sl_shard_native_ckpt_dir(sh, n, node, want, sizeof want) != 1)
		return NULL;
	return strcmp(last, want) ? NULL : db;
}

/*
 * Hands the state files of checkpoint n (the snapshots this shard's operators took) to the
 * shard's own io_uring writer: write + fsync run while the shard goes on with records, and
 * file_done records each one's checksum for the manifest (DESIGN §7).
 */
static void submit_files(struct sl_shard *sh, uint64_t n)
{
	struct sl_runtime *rt = sh->rt;
	struct sl_job *job = rt->job;
	char path[4096];

	sh->files_ckpt = n;
	sh->nfiles = 0;
	sh->files_pending = 0;
	for (int node = 0; node < job->nnodes; node++) {
		const struct sl_ctx *x = &sh->ctx[node];
		struct sl_shard_file *f;
		int rc;

		if (!x->def || !x->def->ops->snapshot || job->node[node]->kind == SL_NODE_SINK)
			continue;
		f = &sh->files[sh->nfiles++];
		memset(f, 0, sizeof(*f));
		f->node = node;
		f->size = x->snap.len;
		sl_ckpt_state_name((uint32_t)node, (uint32_t)sh->index, rt->ckpt_run, f->rel,
				   sizeof f->rel);
		if (x->snap_ckpt != n || x->snap_rc) {
			f->error = x->snap_rc ? x->snap_rc : -EIO;
			continue;
		}
		f->native = native_ckpt(sh, node, n);
		rc = sl_ckpt_file_path(rt, n, f->rel, path, sizeof path);
		/* counted first: the writer may finish a small file within submit */
		sh->files_pending++;
		if (!rc)
			rc = sl_uring_writer_submit(sh->writer, path, x->snap.data, x->snap.len,
						    file_done, sh);
		if (rc) {
			sh->files_pending--;
			f->error = rc;
		}
	}
}

/* Checksums read per loop turn for native checkpoints: about as long a pause as the
 * writer's own 1 MiB CRC slices (uring_writer.h). */
#define NATIVE_CRC_SLICE ((size_t)1 << 20)

/* True once the native checkpoint files of checkpoint n have their checksums (or one
 * failed: the node's file then carries the error). Runs one slice of checksumming a turn:
 * the barrier itself paid only for the flush and the hard links. */
static bool natives_checked(struct sl_shard *sh)
{
	bool done = true;

	for (int i = 0; i < sh->nfiles; i++) {
		struct sl_shard_file *f = &sh->files[i];
		char err[512];
		int rc;

		if (!f->native || f->error)
			continue;
		rc = sl_rocks_db_checkpoint_crc(f->native, NATIVE_CRC_SLICE, err, sizeof err);
		if (rc < 0) {
			fprintf(stderr, "sluice: checkpoint state of shard %d: %s\n", sh->index,
				err);
			f->error = rc;
		} else if (rc == 0) {
			done = false;
			break; /* one slice a turn */
		}
	}
	return done;
}

/* True once checkpoint n's state files of this shard are durable (or failed). */
static bool files_durable(struct sl_shard *sh, uint64_t n)
{
	if (!sh->writer)
		return true;
	if (sh->files_ckpt != n)
		submit_files(sh, n);
	if (sh->files_pending)
		sl_uring_writer_poll(sh->writer);
	return sh->files_pending == 0 && natives_checked(sh);
}

/* Moves this shard's copy-on-write snapshots on by `budget` bytes each (op.h). Returns true
 * while one of them is still pending. */
static bool step_snapshots(struct sl_shard *sh, size_t budget)
{
	bool pending = false;

	for (int n = 0; n < sh->rt->job->nnodes; n++)
		pending |= sl_op_snapshot_step(&sh->ctx[n], budget);
	return pending;
}

/* Acknowledges the checkpoint once its barrier has passed every stage instance here, the
 * snapshots it took are complete (copy-on-write ones take `budget` bytes further per call)
 * and on disk. Returns 1 if it moved a snapshot on (work done this turn), else 0. */
int sl_barrier_ack(struct sl_shard *sh, size_t budget)
{
	struct sl_job *job = sh->rt->job;

	if (sh->ckpt_seen <= atomic_load_explicit(&sh->ckpt_acked, memory_order_relaxed))
		return 0;
	if (step_snapshots(sh, budget))
		return 1;
	for (int s = 0; s < job->nstages; s++) {
		const struct sl_stage_inst *si = &sh->si[s];

		if (!si->ended && si->ckpt_done < sh->ckpt_seen)
			return 0;
	}
	/*
	 * A stage instance that ended without the barrier ended before it: every input it had
	 * ended before its sender injected the barrier (a channel that delivered the barrier
	 * stays blocked until the stage aligns, so it cannot end first). All it processed then
	 * precedes the checkpoint, and its operators, idle for good, are snapshot as they are.
	 */
	for (int s = 0; s < job->nstages; s++) {
		struct sl_stage_inst *si = &sh->si[s];

		if (si->ended && si->ckpt_done < sh->ckpt_seen) {
			if (si->root)
				sl_op_snapshot_chain(si->root, sh->ckpt_seen);
			si->ckpt_done = sh->ckpt_seen;
		}
	}
	if (step_snapshots(sh, SIZE_MAX)) /* those idle for good: nothing to interleave */
		return 1;
	if (!files_durable(sh, sh->ckpt_seen))
		return 0;
	sl_fault_point("snapshot-written", sh->ckpt_seen);
	/* release ckpt_acked: pairs with the coordinator's acquire of it (coordinator.c): this
	 * shard's snapshots (ctx->snap) and state files (sh->files) of the checkpoint are
	 * complete */
	atomic_store_explicit(&sh->ckpt_acked, sh->ckpt_seen, memory_order_release);
	return 0;
}

/*
 * After the end of input, with a final checkpoint to come (DESIGN §7): serves every
 * checkpoint the coordinator asks for until it says there will be no more. Nothing moves
 * here any more (every stage ended, every frame published), so the snapshot hooks run
 * directly, without barriers: source positions (at their ends), operator state, and the
 * sinks' pre-commits of their last rows, which the final checkpoint's commit publishes.
 */
void sl_barrier_final_checkpoints(struct sl_shard *sh)
{
	struct sl_runtime *rt = sh->rt;
	struct sl_job *job = rt->job;

	/* release input_done: pairs with the coordinator's acquire of it (coordinator.c): every
	 * stage of this shard has ended */
	atomic_store_explicit(&sh->input_done, true, memory_order_release);
	while (!atomic_load(&rt->abort) && !atomic_load(&rt->final_done)) {
		/* acquire ckpt_req: pairs with the coordinator's release of it (coordinator.c),
		 * after checkpoint n's directory and ckpt_savepoint are in place */
		uint64_t req = atomic_load_explicit(&rt->ckpt_req, memory_order_acquire);
		struct timespec ts = { 0, 200000 };

		/* a checkpoint the loop started may still have snapshots or files in flight;
		 * nothing else runs here, so its snapshots complete at once */
		sl_barrier_ack(sh, SIZE_MAX);
		if (req > sh->ckpt_seen &&
		    sh->ckpt_seen <= atomic_load_explicit(&sh->ckpt_acked, memory_order_relaxed) &&
		    /* acquire ckpt_consumed: pairs with the coordinator's release of it
		     * (coordinator.c): it is done reading this shard's snapshots, which may be
		     * reused */
		    atomic_load_explicit(&rt->ckpt_consumed, memory_order_acquire) >=
			    sh->ckpt_seen) {
			sh->ckpt_seen = req;
			for (int s = 0; s < job->nstages; s++)
				if (!sh->si[s].chans)
					sl_source_stage_barrier(&sh->si[s], req);
			sl_fault_point("barrier-injected", req);
			for (int n = 0; n < job->nnodes; n++)
				sl_op_snapshot(&sh->ctx[n], req);
			step_snapshots(sh, SIZE_MAX);
			if (sh->writer && sl_uring_writer_error(sh->writer))
				sl_uring_writer_clear(sh->writer);
			while (!files_durable(sh, req) && !atomic_load(&rt->abort))
				nanosleep(&ts, NULL);
			sl_fault_point("snapshot-written", req);
			/* release ckpt_acked: pairs with the coordinator's acquire of it
			 * (coordinator.c): this shard's snapshots (ctx->snap) and state files
			 * (sh->files) of the checkpoint are complete */
			atomic_store_explicit(&sh->ckpt_acked, req, memory_order_release);
			continue;
		}
		nanosleep(&ts, NULL);
	}
}
