/*
 * store.h - a checkpoint directory: where checkpoint n's files go, how n becomes complete,
 * which complete checkpoint recovery uses, and which ones are kept.
 *
 * Layout:
 *
 *   DIR/chk-<n>/<state files>       written by the shards' sl_uring_writer writers (names: any path
 *                                    relative to chk-<n>; sl_ckpt_state_name gives the usual one)
 *   DIR/chk-<n>/op<o>-s<s>-<run>/<f> native state (RocksDB checkpoints: hard links, so SST
 *                                    files unchanged since chk-<n-1> are the same inodes);
 *                                    retention removing a chk-<n> only drops links
 *   DIR/chk-<n>/MANIFEST.tmp         the manifest being written
 *   DIR/chk-<n>/MANIFEST             present <=> checkpoint n is complete
 *   DIR/corrupt-chk-<n>/             a checkpoint recovery found broken, kept for inspection
 *
 * Lifecycle of checkpoint n (coordinator thread; these calls block on the disk):
 *
 *   sl_ckpt_store_begin(n)           mkdir chk-<n>, fsync DIR
 *   ... shards write their state files asynchronously ...
 *   sl_ckpt_store_commit(manifest)   fsync chk-<n> (the files' entries), write MANIFEST.tmp,
 *                                    fsync it, rename to MANIFEST, fsync chk-<n>: complete;
 *                                    then retention
 *   or sl_ckpt_store_abort(n)        the checkpoint failed: remove chk-<n>
 *
 * Recovery: sl_ckpt_store_find_latest verifies the newest checkpoint (manifest checksum, every
 * state file's size and CRC32C) and falls back to older ones, reporting each one it passes
 * over in one line naming the file and the cause, and tells a directory whose complete
 * checkpoints are all damaged (-EBADMSG) from one that has none (-ENOENT);
 * sl_ckpt_store_discard_after then clears what is newer than the one restored; sl_ckpt_store_load
 * reads a state file back.
 *
 * Threads: one store per process, used by one thread at a time.
 */
#ifndef SL_CHECKPOINT_STORE_H
#define SL_CHECKPOINT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_ckpt_manifest;
struct sl_snap_buf;
struct sl_ckpt_store;

/* Receives one line (no newline) per problem found; default: stderr, "sluice: " first. */
typedef void (*sl_ckpt_report_fn)(void *arg, const char *line);

/* Opens DIR, creating it (not its parents) if missing. NULL and -errno in *err on failure. */
struct sl_ckpt_store *sl_ckpt_store_open(const char *dir, int *err);
/* Accepts NULL. */
void sl_ckpt_store_close(struct sl_ckpt_store *st);
/* The directory it was opened on. */
const char *sl_ckpt_store_dir(const struct sl_ckpt_store *st);

void sl_ckpt_store_set_report(struct sl_ckpt_store *st, sl_ckpt_report_fn fn, void *arg);
/* How many complete checkpoints retention keeps (default 2, at least 1). */
void sl_ckpt_store_set_keep(struct sl_ckpt_store *st, unsigned keep);

/* Writes "DIR/chk-<n>/<rel>" (rel may be NULL: the directory) into buf. 0 or -ENAMETOOLONG. */
int sl_ckpt_store_path(const struct sl_ckpt_store *st, uint64_t n, const char *rel, char *buf,
		       size_t cap);
/*
 * The usual state file name of (operator, shard) in a run: "op<op>-s<shard>-<run>.state",
 * run as 16 hex digits ("op<op>-s<shard>.state" for run 0). The run's random bits keep an
 * old run that is still going (a zombie: paused, then resumed after its successor took
 * over) from ever creating a name its successor writes in the same chk-<n> (files are
 * created O_EXCL: that would fail the successor's checkpoint); what a zombie leaves there
 * is in no manifest and goes with the directory. Restores take names from the manifest.
 */
int sl_ckpt_state_name(uint32_t op_id, uint32_t shard, uint64_t run, char *buf, size_t cap);
/*
 * The directory of (operator, shard)'s native state in chk-<n>: "op<op>-s<shard>-<run>" (a RocksDB
 * checkpoint, state/backend.h). The manifest lists each of its files as "op<op>-s<shard>/
 * <name>"; such a file (a path with a directory) is verified at recovery like any state file
 * but restored by the backend from the directory, not read through an operator's restore.
 */
int sl_ckpt_state_dir_name(uint32_t op_id, uint32_t shard, uint64_t run, char *buf, size_t cap);
/* True if the manifest path `path` is a file of a native state directory (see above). */
bool sl_ckpt_path_is_native(const char *path);

/* One more than the highest checkpoint id in DIR, whatever its state (ids are never reused). */
uint64_t sl_ckpt_store_next_id(struct sl_ckpt_store *st);

/* Creates chk-<n>. 0, -EEXIST (n was used before: take sl_ckpt_store_next_id), or -errno. */
int sl_ckpt_store_begin(struct sl_ckpt_store *st, uint64_t n);

/*
 * Makes checkpoint m->ckpt_id complete (see the lifecycle above), then applies retention.
 * Returns 0 once MANIFEST is durable; -errno (e.g. -ENOSPC) otherwise, with the temp file
 * removed, a line reported, and the checkpoint not complete; -ESTALE when chk-<n> was not
 * made by this store's begin, or is another directory now (a successor run removed it and
 * made its own: this run is a zombie, and must not complete n over it). Retention problems
 * are reported but do not fail the commit.
 */
int sl_ckpt_store_commit(struct sl_ckpt_store *st, const struct sl_ckpt_manifest *m);

/* Removes chk-<n> of a failed checkpoint. 0 or -errno; -ESTALE (said, nothing removed) when
 * chk-<n> is no longer the directory this store's begin made: another run's. */
int sl_ckpt_store_abort(struct sl_ckpt_store *st, uint64_t n);

/*
 * Keeps the newest `keep` complete checkpoints and removes: older checkpoints (complete or
 * not), incomplete ones older than the newest complete one (abandoned), temp manifests, and
 * corrupt-chk-<n> older than the oldest kept. Incomplete checkpoints newer than the newest
 * complete one are left alone: they may be in progress. Returns how many were removed or
 * -errno.
 */
int sl_ckpt_store_retain(struct sl_ckpt_store *st);

/*
 * Finds the newest checkpoint that verifies and decodes its manifest into *out (caller
 * finis it). `job_id` (NULL: any) must match the manifest's: a checkpoint of another job
 * is refused, not skipped. With a job_id, the manifest's operator indices are those of that
 * job once found (sl_ckpt_manifest_map_ops: operators matched by uid); state of operators the
 * job lacks refuses it too, unless sl_ckpt_store_allow_non_restored said to drop it. Returns 0;
 * -ENOENT if there is no complete checkpoint at all (a first start, or one cut short before its
 * first checkpoint completed); -EBADMSG if there are complete ones and none verifies (each
 * reported: their sinks may have committed, so starting from scratch would write that output
 * again); -EINVAL on a job mismatch; or -errno (DIR unreadable).
 */
int sl_ckpt_store_find_latest(struct sl_ckpt_store *st, const char *job_id,
			      struct sl_ckpt_manifest *out);
/* Whether find_latest/find_below drop the state of operators the job lacks (Flink's
 * --allowNonRestoredState) instead of refusing the checkpoint. Default false. */
void sl_ckpt_store_allow_non_restored(struct sl_ckpt_store *st, bool allow);
/* The same among checkpoints older than `below` (recovery stepping back, see job.h -ESTALE). */
int sl_ckpt_store_find_below(struct sl_ckpt_store *st, const char *job_id, uint64_t below,
			     struct sl_ckpt_manifest *out);

/*
 * Writes the names of the complete checkpoints older than `below` ("chk-5, chk-4", newest
 * first; corrupt-chk-<n> left out) into buf[0..cap), truncated to fit. Returns how many
 * there are, or -errno.
 */
int sl_ckpt_store_list_complete(struct sl_ckpt_store *st, uint64_t below, char *buf, size_t cap);

/*
 * After restoring checkpoint n: removes incomplete checkpoints newer than n (a crash cut
 * them short) and renames complete-but-broken ones to corrupt-chk-<id>, so retention never
 * counts them as good. Returns how many were moved or removed, or -errno.
 */
int sl_ckpt_store_discard_after(struct sl_ckpt_store *st, uint64_t n);

/*
 * Reads state file m->files[i] of checkpoint m->ckpt_id into `out` (appended) and checks its
 * size and CRC32C again. 0, -EINVAL (corrupt: reported), or -errno.
 */
int sl_ckpt_store_load(struct sl_ckpt_store *st, const struct sl_ckpt_manifest *m, uint32_t i,
		       struct sl_snap_buf *out);

/* A state file mapped read-only: its bytes, valid until sl_ckpt_store_unmap_all. */
struct sl_ckpt_mapped {
	const uint8_t *data; /* NULL for an empty file */
	size_t len;
};

/*
 * Recovery's load: maps every state file of checkpoint m into out[0..m->nfiles) (the page
 * cache's own pages, read ahead with MAP_POPULATE: no copy into fresh memory) and checks
 * each one's size and CRC32C again, the files in parallel on up to one thread per CPU.
 * Native files (sl_ckpt_path_is_native: a RocksDB checkpoint's) are left unmapped: their
 * backend opens them where they are.
 * Returns 0, or -EINVAL (a file is corrupt: reported) / -errno with nothing left mapped.
 */
int sl_ckpt_store_map_all(struct sl_ckpt_store *st, const struct sl_ckpt_manifest *m,
			  struct sl_ckpt_mapped *out);
/* Unmaps maps[0..n) (accepts NULL and entries already unmapped). */
void sl_ckpt_store_unmap_all(struct sl_ckpt_mapped *maps, uint32_t n);

#endif
