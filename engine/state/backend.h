/*
 * backend.h - where keyed state lives: on the heap, or in one RocksDB per (keyed operator
 * instance, shard) under one process-wide memory budget (DESIGN §6).
 *
 * The caller (the runtime) owns one env for the process and, per keyed operator instance, one
 * db opened and closed on its shard's thread. One db per instance rather than per shard
 * because each instance reaches a checkpoint's barrier at its own moment (stages of one shard
 * align separately): only a db holding nothing but that instance's state can be checkpointed
 * whole at its barrier (sl_rocks_db_checkpoint). Every db shares the env's block cache and
 * write buffer manager, so the budget stays one. Operators make their state with
 * sl_kstate_create_in() and use it through state.h exactly as with the heap backend. With the
 * heap kind the env is trivial and every db is NULL, so the same calls work whatever the job
 * chose.
 *
 * Lifetime:
 *   sl_state_env_open                      (any thread, once)
 *     sl_rocks_db_open                     (shard thread; heap: *out = NULL)
 *       [sl_rocks_db_load ...]             (before any kstate is created on the db)
 *       sl_kstate_create_in ... destroy    (shard thread)
 *       sl_rocks_db_flush / _checkpoint    (shard thread, at barriers)
 *     sl_rocks_db_close                    (shard thread, after its kstates are destroyed)
 *   sl_state_env_close                     (after every db is closed)
 *
 * Errors: 0 or -errno; where a message helps, RocksDB's own text goes to err (errcap bytes).
 */
#ifndef SL_STATE_BACKEND_H
#define SL_STATE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"

enum sl_state_backend_kind { SL_STATE_HEAP = 0, SL_STATE_ROCKSDB = 1 };

struct sl_state_env_opts {
	enum sl_state_backend_kind kind;
	size_t memory_bytes; /* the whole process's budget: 0 = SL_STATE_MEMORY_DEFAULT */
	const char *dir;     /* the working DBs (created; old ones wiped at db open) */
	int nshards;
	int dbs_per_shard; /* keyed operator instances on a shard (0: 1): the entry cache
			    * and memtable shares of a shard are split between them */
};

#define SL_STATE_MEMORY_DEFAULT ((size_t)512 << 20)

/*
 * Working directories (workdir.c). sl_state_workdir_create() first removes the directories
 * under `base` left by runs that died (sl_state_workdir_sweep), then makes a fresh one,
 * base/sluice-state-XXXXXX, into path[cap], holding its owner lock in *lock_fd for as long
 * as the process lives (keep it open; the kernel drops it however the process ends).
 * Returns 0 or -errno. sl_state_workdir_release() removes the lock file and closes the
 * lock: call it when the directory is empty but for the lock, then rmdir it. The sweep
 * returns how many it removed; it touches only directories of ours whose lock is free.
 */
int sl_state_workdir_create(const char *base, char *path, size_t cap, int *lock_fd);
void sl_state_workdir_release(const char *path, int lock_fd);
int sl_state_workdir_sweep(const char *base);

struct sl_state_env;
struct sl_rocks_db;

/*
 * Opens the process-wide part of the backend. For RocksDB: a block cache of 3/4 of the
 * budget with a strict capacity, shared by every shard's DB, with the DBs' memtables charged
 * to it (a write buffer manager of half the cache), index and filter blocks cached at high
 * priority, bloom filters, WAL off, and a compaction filter dropping expired TTL entries;
 * the other 1/4 is the in-memory entry caches of the kstates (split evenly between shards,
 * then between the kstates of a shard). Returns 0 and *out, or -EINVAL (bad options) /
 * -ENOMEM / -errno creating dir, with a message in err. Caller closes with
 * sl_state_env_close() after every db is closed; it accepts NULL.
 */
int sl_state_env_open(const struct sl_state_env_opts *o, struct sl_state_env **out, char *err,
		      size_t errcap);
void sl_state_env_close(struct sl_state_env *env);
enum sl_state_backend_kind sl_state_env_kind(const struct sl_state_env *env);
/* Bytes the shared block cache holds now (blocks and memtable reservations; at most 3/4 of
 * the budget, the kstate caches' 1/4 is not included). Any thread. 0 for the heap. */
size_t sl_state_env_memory_used(const struct sl_state_env *env);

/*
 * Opens the DB of operator instance (op_uid, shard) in env's dir (DIR/shard-N-opM, wiped
 * first: a working DB is never reused, checkpoints are restored with sl_rocks_db_load). Call
 * on the shard's thread. Heap kind: returns 0 with *out = NULL. Returns 0 or -EINVAL / -EIO
 * with RocksDB's message.
 */
int sl_rocks_db_open(struct sl_state_env *env, int shard, uint32_t op_uid, struct sl_rocks_db **out,
		     char *err, size_t errcap);
/* Closes the DB (its kstates must be destroyed first) and removes its working files.
 * Accepts NULL. */
void sl_rocks_db_close(struct sl_rocks_db *db);

/*
 * Returns keyed state for descs[0..n) as sl_kstate_create() does, kept in db (NULL: on the
 * heap). op_uid is part of every key (a db is one instance's, but a test or tool may put
 * several kstates in one): two live kstates of one db must not share it. RocksDB: at most 127
 * descriptors (else -EINVAL); value pointers returned by the state.h calls are valid until the next
 * call on that kstate (operator.h's wording), and writes through them are kept.
 */
struct sl_kstate *sl_kstate_create_in(struct sl_rocks_db *db, uint32_t op_uid,
				      const struct sl_state_desc *descs, int n, uint32_t max_par,
				      int *err);

/* Which backend holds ks. A RocksDB kstate's checkpoint is its db's sl_rocks_db_checkpoint;
 * sl_kstate_snapshot() (the logical format) is for savepoints and backend changes. */
enum sl_state_backend_kind sl_kstate_backend(const struct sl_kstate *ks);

/*
 * The keyed state section of a native checkpoint, in place of sl_kstate_snapshot's: only
 * ks's layout (descriptors, max parallelism), its entry count and the key groups [kg_lo,
 * kg_hi) the instance holds, since the entries are in its db's checkpoint directory
 * (sl_rocks_db_checkpoint). sl_kstate_restore of such a section into a RocksDB kstate checks
 * the layout (the entries were loaded with sl_rocks_db_load before the kstate was made) and,
 * when the range is the restoring instance's own, takes the count instead of scanning the
 * db for it; into a heap kstate it is refused with -EPROTO. 0, -ENOMEM, or -EINVAL for a
 * heap ks.
 */
int sl_kstate_snapshot_native(const struct sl_kstate *ks, uint32_t kg_lo, uint32_t kg_hi,
			      struct sl_snap_buf *out);

/*
 * Barrier: writes every dirty cached entry of every kstate of db to RocksDB. 0 or -EIO (the
 * db is then in a sticky error state: every later flush/checkpoint fails the same way).
 */
int sl_rocks_db_flush(struct sl_rocks_db *db);
/*
 * Flushes, then makes a RocksDB checkpoint in `path` (must not exist): hard links of the
 * SST files, so files unchanged since the previous checkpoint are shared (incremental); the
 * memtables are flushed into new SSTs first (the WAL is off). Blocks the caller for the
 * flush and the links only. Lists the checkpoint's files (sl_rocks_db_checkpoint_files):
 * SSTs an earlier checkpoint of this db checksummed keep their CRC32C, the others are
 * checksummed by sl_rocks_db_checkpoint_crc. *bytes_new (may be NULL) gets the bytes of the
 * files still to checksum: those new since the previous checkpoint. 0 or -errno.
 */
int sl_rocks_db_checkpoint(struct sl_rocks_db *db, const char *path, uint64_t *bytes_new);

/* One file of a db's last checkpoint, as a checkpoint manifest lists it. */
struct sl_state_ckpt_file {
	char name[64]; /* in the checkpoint's directory */
	uint64_t size;
	uint32_t crc32c; /* of the whole file, once crc_ok */
	bool crc_ok;
};

/*
 * Checksums the last checkpoint's files that have no CRC32C yet, reading at most about
 * `budget` bytes (0: no limit) so a shard loop can spread the work over its turns. Returns
 * 1 once every file has its checksum, 0 while some remain, or -errno (a file unreadable or
 * shorter than listed) with a message naming the file in err. NULL db: 1.
 */
int sl_rocks_db_checkpoint_crc(struct sl_rocks_db *db, size_t budget, char *err, size_t errcap);
/* The last checkpoint's files, sorted by name: *n of them; valid until the next checkpoint
 * or close. Borrowed. */
const struct sl_state_ckpt_file *sl_rocks_db_checkpoint_files(const struct sl_rocks_db *db,
							      size_t *n);
/*
 * After sl_rocks_db_load linked a checkpoint directory into a fresh db (its first load):
 * the CRC32C of that directory's SST files as its manifest recorded them (verified at
 * recovery), so the db's next checkpoint takes them from the cache instead of reading
 * every restored SST again. files[0..n) are copied; entries that are not SSTs are skipped.
 * Only for the directory of the first load: a later load copies entries into new SSTs,
 * whose names may be any other directory's. 0 or -ENOMEM.
 */
int sl_rocks_db_seed_crc(struct sl_rocks_db *db, const struct sl_state_ckpt_file *files, size_t n);
/* The directory of the last checkpoint sl_rocks_db_checkpoint made, or NULL. Borrowed. */
const char *sl_rocks_db_checkpoint_dir(const struct sl_rocks_db *db);
/*
 * Restores the entries of key groups [kg_lo, kg_hi) from a directory written by
 * sl_rocks_db_checkpoint (once per old shard's directory when the shard count changed).
 * Before any kstate is created on db. When the db is still empty and the range covers all
 * that the directory holds, the SST files are hard-linked in (ingested), not copied.
 * Returns 0 or -errno: -EINVAL for a directory that is not a readable DB (message in err).
 */
int sl_rocks_db_load(struct sl_rocks_db *db, const char *path, uint32_t kg_lo, uint32_t kg_hi,
		     char *err, size_t errcap);
/* Writes the cache back and compacts the whole DB now (the TTL filter runs on every entry).
 * For tests and tools: RocksDB compacts by itself. 0 or -EIO. */
int sl_rocks_db_compact(struct sl_rocks_db *db);
/* Approximate bytes of live state in db (SST files + memtables + cached entries). */
size_t sl_rocks_db_bytes(const struct sl_rocks_db *db);
/* The last RocksDB error of db (a sticky one, or a checkpoint or load that failed), or "". */
const char *sl_rocks_db_error(const struct sl_rocks_db *db);

#endif
