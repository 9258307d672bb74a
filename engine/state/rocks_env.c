/*
 * rocks_env.c - the RocksDB side of backend.h: the process env (one block cache and write
 * buffer manager under one memory budget), one DB per keyed operator instance, and the
 * DB-level barrier, checkpoint and load.
 *
 * Memory budget M (Flink's "managed memory", DESIGN §6):
 *   3/4 M  block cache, strict capacity, shared by every DB:
 *            - memtables reserve their memory in it (write buffer manager of half the
 *              cache: all memtables together flush at 3/8 M),
 *            - index and filter blocks live in it, at high priority (10% pool),
 *            - data blocks fill the rest;
 *   1/4 M  the kstates' write-back entry caches (rocks_state.c), M/4/nshards per shard,
 *          split evenly between the shard's DBs.
 * Outside the budget (the stated overhead, measured by tests/unit/state/rocks_budget.c):
 * table-reader metadata of open SST files, iterators and compaction buffers, the allocator's
 * slack, and the process itself.
 *
 * WAL off: a checkpoint is the durability point; a crash restores the last one. Working DBs
 * are therefore wiped at open; state comes back only through sl_rocks_db_load.
 *
 * Threads: the env is shared (RocksDB's cache and write buffer manager are thread-safe);
 * a db and its kstates belong to one shard thread. Background flushes and compactions run
 * on RocksDB's own thread pool (two jobs, matching the 2-core target).
 *
 * Sticky errors: the first failed RocksDB read or write puts the db in an error state
 * (db->error, message in db->msg); state calls then find nothing new and flush/checkpoint
 * fail with it, so a checkpoint never records state that was not written (SQLite's pager).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "key.h"
#include "rocks_shim.h"
#include "state_int.h"

#define WAL_NONE   1
#define BLOCK_SIZE (16 << 10)

static void seterr(char *err, size_t cap, const char *fmt, const char *a, const char *b)
{
	if (err && cap)
		snprintf(err, cap, fmt, a, b ? b : "");
}

/* ---- the TTL compaction filter ------------------------------------------------------------ */

static sl_ts_t wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (sl_ts_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Drops entries of TTL descriptors whose expiry has passed by the wall clock (processing
 * time is the shard's wall clock, so this agrees with what state calls would answer). Runs
 * on RocksDB's compaction threads: reads only its arguments. */
static unsigned char ttl_filter(void *st, int level, const char *key, size_t klen, const char *val,
				size_t vlen, char **nv, size_t *nvlen, unsigned char *changed)
{
	sl_ts_t e;

	if (klen < RK_PREFIX || !((uint8_t)key[6] & RK_TTL_BIT) || vlen < 8)
		return 0;
	memcpy(&e, val, 8);
	return wall_ms() >= e;
}

static void ttl_filter_free(void *st)
{
}

static const char *ttl_filter_name(void *st)
{
	return "sluice.ttl";
}

/* ---- env ---------------------------------------------------------------------------------- */

static int mkdirs(const char *dir)
{
	char buf[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, dir, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p) ? -errno : 0;
}

static void rm_tree(const char *p)
{
	nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void sl_state_env_close(struct sl_state_env *env)
{
	if (!env)
		return;
	if (env->opts)
		rocksdb_options_destroy(env->opts);
	if (env->bbto)
		rocksdb_block_based_options_destroy(env->bbto);
	if (env->ttl_filter)
		rocksdb_compactionfilter_destroy(env->ttl_filter);
	if (env->cache)
		rocksdb_cache_destroy(env->cache);
	free(env->dir);
	free(env);
}

enum sl_state_backend_kind sl_state_env_kind(const struct sl_state_env *env)
{
	return env ? env->kind : SL_STATE_HEAP;
}

size_t sl_state_env_memory_used(const struct sl_state_env *env)
{
	if (!env || env->kind == SL_STATE_HEAP)
		return 0;
	return sl_rocks_cache_usage(env->cache);
}

static int rocks_env_init(struct sl_state_env *env, char *err, size_t errcap)
{
	size_t cache_bytes = env->memory - env->memory / 4;
	size_t wbm = cache_bytes / 2;
	size_t wbs = wbm / (size_t)(2 * env->nshards * env->dbs_per_shard);
	rocksdb_options_t *o;
	int rc;

	env->kcache_db = env->memory / 4 / (size_t)env->nshards / (size_t)env->dbs_per_shard;
	env->cache = sl_rocks_cache_create_strict(cache_bytes, 0.1);
	env->bbto = rocksdb_block_based_options_create();
	env->ttl_filter =
		rocksdb_compactionfilter_create(NULL, ttl_filter_free, ttl_filter, ttl_filter_name);
	env->opts = o = rocksdb_options_create();
	if (!env->cache || !env->bbto || !env->ttl_filter || !o)
		return -ENOMEM;
	rocksdb_block_based_options_set_block_cache(env->bbto, env->cache);
	rocksdb_block_based_options_set_block_size(env->bbto, BLOCK_SIZE);
	rocksdb_block_based_options_set_cache_index_and_filter_blocks(env->bbto, 1);
	rocksdb_block_based_options_set_cache_index_and_filter_blocks_with_high_priority(env->bbto,
											 1);
	/* owned by bbto from here */
	rocksdb_block_based_options_set_filter_policy(env->bbto,
						      rocksdb_filterpolicy_create_bloom_full(10));
	rocksdb_options_set_block_based_table_factory(o, env->bbto);
	rocksdb_options_set_create_if_missing(o, 1);
	rocksdb_options_set_compression(o, rocksdb_lz4_compression);
	rocksdb_options_set_compaction_filter(o, env->ttl_filter);
	/* each DB's memtable: small enough that every DB's two fit the manager's share */
	/* at most 16 MiB: random inserts into a bigger skip list miss the CPU caches on every
	 * level (the write-back path spent most of its time there with 96 MiB memtables) */
	if (wbs > (16u << 20))
		wbs = 16u << 20;
	rocksdb_options_set_write_buffer_size(o, wbs < (1u << 20) ? (1u << 20) : wbs);
	rocksdb_options_set_max_write_buffer_number(o, 3);
	/* a cache miss is usually a key never seen: a bloom filter over each memtable's whole
	 * keys answers it without walking the skip lists (which dominated the miss cost) */
	rocksdb_options_set_memtable_prefix_bloom_size_ratio(o, 0.05);
	rocksdb_options_set_memtable_whole_key_filtering(o, 1);
	rocksdb_options_set_target_file_size_base(o, 32u << 20);
	rocksdb_options_set_max_bytes_for_level_base(o, 128u << 20);
	rocksdb_options_set_level_compaction_dynamic_level_bytes(o, 1);
	rocksdb_options_set_max_background_jobs(o, 2);
	rc = sl_rocks_options_set_wbm(o, env->cache, wbm);
	if (rc)
		return rc;
	rc = mkdirs(env->dir);
	if (rc)
		seterr(err, errcap, "state dir %s: %s", env->dir, strerror(-rc));
	return rc;
}

int sl_state_env_open(const struct sl_state_env_opts *o, struct sl_state_env **out, char *err,
		      size_t errcap)
{
	struct sl_state_env *env;
	int rc;

	*out = NULL;
	if (err && errcap)
		err[0] = '\0';
	if (o->kind != SL_STATE_HEAP && o->kind != SL_STATE_ROCKSDB) {
		seterr(err, errcap, "unknown state backend%s%s", "", NULL);
		return -EINVAL;
	}
	env = calloc(1, sizeof(*env));
	if (!env)
		return -ENOMEM;
	env->kind = o->kind;
	env->nshards = o->nshards > 0 ? o->nshards : 1;
	env->dbs_per_shard = o->dbs_per_shard > 0 ? o->dbs_per_shard : 1;
	env->memory = o->memory_bytes ? o->memory_bytes : SL_STATE_MEMORY_DEFAULT;
	if (env->kind == SL_STATE_HEAP) {
		*out = env;
		return 0;
	}
	if (!o->dir || !o->dir[0]) {
		seterr(err, errcap, "the rocksdb state backend needs a directory%s%s", "", NULL);
		free(env);
		return -EINVAL;
	}
	if (env->memory < ((size_t)16 << 20) * (size_t)env->nshards / 4) {
		seterr(err, errcap,
		       "state memory too small for rocksdb: give at least 4 MiB a "
		       "shard%s%s",
		       "", NULL);
		free(env);
		return -EINVAL;
	}
	env->dir = strdup(o->dir);
	rc = env->dir ? rocks_env_init(env, err, errcap) : -ENOMEM;
	if (rc) {
		if (rc == -ENOMEM)
			seterr(err, errcap, "out of memory opening the state backend%s%s", "",
			       NULL);
		sl_state_env_close(env);
		return rc;
	}
	*out = env;
	return 0;
}

/* ---- one db per operator instance ---------------------------------------------------------- */

int sl_rocks_fail(struct sl_rocks_db *db, const char *what, char *msg)
{
	if (!db->error) {
		db->error = -EIO;
		snprintf(db->msg, sizeof(db->msg), "rocksdb %s: %s", what, msg ? msg : "failed");
	}
	rocksdb_free(msg);
	return db->error;
}

size_t sl_rocks_wb_bytes(rocksdb_writebatch_t *wb)
{
	size_t n;

	rocksdb_writebatch_data(wb, &n);
	return n;
}

int sl_rocks_commit(struct sl_rocks_db *db)
{
	char *msg = NULL;

	if (db->error)
		return db->error;
	if (rocksdb_writebatch_count(db->wb) == 0)
		return 0;
	rocksdb_write(db->db, db->wo, db->wb, &msg);
	rocksdb_writebatch_clear(db->wb);
	db->written = true;
	if (msg)
		return sl_rocks_fail(db, "write", msg);
	return 0;
}

static void db_free(struct sl_rocks_db *db)
{
	if (db->db)
		rocksdb_close(db->db);
	if (db->wb)
		rocksdb_writebatch_destroy(db->wb);
	if (db->wo)
		rocksdb_writeoptions_destroy(db->wo);
	if (db->ro)
		rocksdb_readoptions_destroy(db->ro);
	if (db->ro_scan)
		rocksdb_readoptions_destroy(db->ro_scan);
	free(db->ck);
	free(db->ck_dir);
	free(db->crc_buf);
	free(db->path);
	free(db);
}

static int db_reopen(struct sl_rocks_db *db, char *err, size_t errcap)
{
	char *msg = NULL;

	db->db = rocksdb_open(db->env->opts, db->path, &msg);
	if (msg) {
		seterr(err, errcap, "rocksdb open %s: %s", db->path, msg);
		rocksdb_free(msg);
		return -EIO;
	}
	return 0;
}

int sl_rocks_db_open(struct sl_state_env *env, int shard, uint32_t op_uid, struct sl_rocks_db **out,
		     char *err, size_t errcap)
{
	struct sl_rocks_db *db;
	int rc;

	*out = NULL;
	if (env->kind == SL_STATE_HEAP)
		return 0;
	db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	db->env = env;
	db->shard = shard;
	db->op_uid = op_uid;
	db->wo = rocksdb_writeoptions_create();
	db->ro = rocksdb_readoptions_create();
	db->ro_scan = rocksdb_readoptions_create();
	db->wb = rocksdb_writebatch_create();
	if (asprintf(&db->path, "%s/shard-%d-op%u", env->dir, shard, op_uid) < 0)
		db->path = NULL;
	if (!db->wo || !db->ro || !db->ro_scan || !db->wb || !db->path) {
		db_free(db);
		return -ENOMEM;
	}
	rocksdb_writeoptions_disable_WAL(db->wo, WAL_NONE);
	rocksdb_readoptions_set_fill_cache(db->ro_scan, 0);
	rm_tree(db->path); /* a previous run's working DB: never reused */
	rc = db_reopen(db, err, errcap);
	if (rc) {
		db_free(db);
		return rc;
	}
	*out = db;
	return 0;
}

void sl_rocks_db_close(struct sl_rocks_db *db)
{
	char *path;

	if (!db)
		return;
	path = db->path;
	db->path = NULL;
	db_free(db);
	if (path)
		rm_tree(path);
	free(path);
}

int sl_rocks_db_flush(struct sl_rocks_db *db)
{
	if (!db)
		return 0;
	return sl_rocks_kstate_writeback_all(db);
}

int sl_rocks_db_compact(struct sl_rocks_db *db)
{
	int rc = sl_rocks_db_flush(db);

	if (rc || !db)
		return rc;
	rocksdb_compact_range(db->db, NULL, 0, NULL, 0);
	return 0;
}

const char *sl_rocks_db_error(const struct sl_rocks_db *db)
{
	return db ? db->msg : "";
}

size_t sl_rocks_db_bytes(const struct sl_rocks_db *db)
{
	uint64_t live = 0, mem = 0;
	size_t b;

	if (!db)
		return 0;
	rocksdb_property_int(db->db, "rocksdb.estimate-live-data-size", &live);
	rocksdb_property_int(db->db, "rocksdb.cur-size-all-mem-tables", &mem);
	b = (size_t)(live + mem);
	b += sl_rocks_kstate_cache_bytes_all(db);
	return b;
}

/* ---- checkpoints -------------------------------------------------------------------------- */

static bool is_sst(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && !strcmp(name + n - 4, ".sst");
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct sl_state_ckpt_file *)a)->name,
		      ((const struct sl_state_ckpt_file *)b)->name);
}

/* The CRC32C of SST `name` if an earlier checkpoint of db checksummed it: SST files are
 * immutable and their names never reused, so a checksum stays true for the file's life. */
static const struct sl_state_ckpt_file *known_sst(const struct sl_rocks_db *db, const char *name)
{
	struct sl_state_ckpt_file k;

	if (!db->nck || strlen(name) >= sizeof(k.name))
		return NULL;
	strcpy(k.name, name);
	return bsearch(&k, db->ck, db->nck, sizeof(k), cmp_file);
}

/*
 * Lists the files of checkpoint directory `path` as the new db->ck: the SSTs an earlier
 * checkpoint checksummed keep their CRC32C, every other file (new SSTs; MANIFEST, OPTIONS,
 * CURRENT, which RocksDB writes anew each time) waits for sl_rocks_db_checkpoint_crc.
 * *bytes_new: the bytes of those other files, which is what an incremental upload of this
 * checkpoint would copy. 0 or -errno.
 */
static int list_ckpt(struct sl_rocks_db *db, const char *path, uint64_t *bytes_new)
{
	DIR *dir = opendir(path);
	struct sl_state_ckpt_file *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t sum = 0;
	char full[4096];
	struct dirent *de;
	struct stat st;
	int rc = 0;

	if (!dir)
		return -errno;
	while (!rc && (de = readdir(dir))) {
		const struct sl_state_ckpt_file *old;
		struct sl_state_ckpt_file *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(full, sizeof(full), "%s/%s", path, de->d_name);
		if (stat(full, &st) || !S_ISREG(st.st_mode))
			continue;
		if (strlen(de->d_name) >= sizeof(f->name)) {
			rc = -ENAMETOOLONG;
			break;
		}
		if (n == cap) {
			struct sl_state_ckpt_file *nv =
				realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*nv));

			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
		}
		f = &v[n++];
		memset(f, 0, sizeof(*f));
		strcpy(f->name, de->d_name);
		f->size = (uint64_t)st.st_size;
		old = is_sst(f->name) ? known_sst(db, f->name) : NULL;
		if (old && old->crc_ok && old->size == f->size) {
			f->crc32c = old->crc32c;
			f->crc_ok = true;
		} else {
			sum += f->size;
		}
	}
	closedir(dir);
	if (rc) {
		free(v);
		return rc;
	}
	if (n) /* qsort must not be given a NULL array, even an empty one */
		qsort(v, n, sizeof(*v), cmp_file);
	free(db->ck);
	db->ck = v;
	db->nck = n;
	db->ck_at = 0;
	db->ck_off = 0;
	free(db->ck_dir);
	db->ck_dir = strdup(path);
	if (!db->ck_dir)
		return -ENOMEM;
	if (bytes_new)
		*bytes_new = sum;
	return 0;
}

int sl_rocks_db_checkpoint(struct sl_rocks_db *db, const char *path, uint64_t *bytes_new)
{
	rocksdb_checkpoint_t *cp;
	char *msg = NULL;
	int rc;

	if (bytes_new)
		*bytes_new = 0;
	if (!db)
		return -EINVAL;
	rc = sl_rocks_db_flush(db);
	if (rc)
		return rc;
	cp = rocksdb_checkpoint_object_create(db->db, &msg);
	if (msg)
		return sl_rocks_fail(db, "checkpoint", msg);
	/* log_size_for_flush 0: memtables are flushed first (no WAL to carry them) */
	rocksdb_checkpoint_create(cp, path, 0, &msg);
	rocksdb_checkpoint_object_destroy(cp);
	if (msg) {
		/* a checkpoint that could not be made is not a state failure: report it only */
		rc = strstr(msg, "exists") ? -EEXIST : -EIO;
		snprintf(db->msg, sizeof(db->msg), "rocksdb checkpoint %s: %s", path, msg);
		rocksdb_free(msg);
		return rc;
	}
	return list_ckpt(db, path, bytes_new);
}

#define CRC_SLICE ((size_t)1 << 20)

/* Reads up to `budget` more bytes of file db->ck[db->ck_at] into its checksum. 0 or -errno. */
static int crc_slice(struct sl_rocks_db *db, size_t budget, size_t *used)
{
	struct sl_state_ckpt_file *f = &db->ck[db->ck_at];
	char full[4096];
	int fd, rc = 0;

	if (!db->crc_buf && !(db->crc_buf = malloc(CRC_SLICE)))
		return -ENOMEM;
	snprintf(full, sizeof(full), "%s/%s", db->ck_dir, f->name);
	fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (db->ck_off < f->size && *used < budget) {
		size_t want = f->size - db->ck_off < CRC_SLICE ? (size_t)(f->size - db->ck_off)
							       : CRC_SLICE;
		ssize_t r = pread(fd, db->crc_buf, want, (off_t)db->ck_off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r < 0 ? -errno : -EIO; /* shorter than listed: not what was linked */
			break;
		}
		f->crc32c = sl_crc32c(db->ck_off ? f->crc32c : 0, db->crc_buf, (size_t)r);
		db->ck_off += (uint64_t)r;
		*used += (size_t)r;
	}
	close(fd);
	if (!rc && db->ck_off >= f->size) {
		f->crc_ok = true;
		db->ck_off = 0;
	}
	return rc;
}

int sl_rocks_db_checkpoint_crc(struct sl_rocks_db *db, size_t budget, char *err, size_t errcap)
{
	size_t used = 0;

	if (!db)
		return 1;
	if (!budget)
		budget = SIZE_MAX;
	while (db->ck_at < db->nck && used < budget) {
		int rc;

		if (db->ck[db->ck_at].crc_ok) {
			db->ck_at++;
			continue;
		}
		rc = crc_slice(db, budget, &used);
		if (rc) {
			if (err && errcap)
				snprintf(err, errcap, "checksumming %s/%s: %s", db->ck_dir,
					 db->ck[db->ck_at].name, strerror(-rc));
			return rc;
		}
		if (db->ck[db->ck_at].crc_ok)
			db->ck_at++;
	}
	return db->ck_at >= db->nck;
}

const struct sl_state_ckpt_file *sl_rocks_db_checkpoint_files(const struct sl_rocks_db *db,
							      size_t *n)
{
	*n = db ? db->nck : 0;
	return db ? db->ck : NULL;
}

int sl_rocks_db_seed_crc(struct sl_rocks_db *db, const struct sl_state_ckpt_file *files, size_t n)
{
	struct sl_state_ckpt_file *v;
	size_t k = 0;

	if (!db || !n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (is_sst(files[i].name)) {
			v[k] = files[i];
			v[k++].crc_ok = true;
		}
	if (k) /* qsort must not be given an empty array */
		qsort(v, k, sizeof(*v), cmp_file);
	/* the cache only: no checkpoint of this db was made, so no directory is named */
	free(db->ck);
	db->ck = v;
	db->nck = k;
	db->ck_at = k;
	db->ck_off = 0;
	return 0;
}

const char *sl_rocks_db_checkpoint_dir(const struct sl_rocks_db *db)
{
	return db ? db->ck_dir : NULL;
}

/* ---- load --------------------------------------------------------------------------------- */

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), outfd, rc = 0;
	char buf[65536];
	ssize_t n;

	if (in < 0)
		return -errno;
	outfd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (outfd < 0) {
		rc = -errno;
		close(in);
		return rc;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(outfd, buf, (size_t)n) != n) {
			rc = -EIO;
			break;
		}
	}
	if (n < 0)
		rc = -errno;
	close(outfd);
	close(in);
	return rc;
}

/* Makes the working DB directory a copy of checkpoint dir `from`: SST files hard-linked
 * (immutable, so sharing them is safe), the small rest (CURRENT, MANIFEST, OPTIONS)
 * copied, since the reopened DB may write to them. */
static int link_dir(const char *from, const char *to)
{
	DIR *dir = opendir(from);
	char a[4096], b[4096];
	struct dirent *de;
	int rc = 0;

	if (!dir)
		return -errno;
	rc = mkdirs(to);
	while (!rc && (de = readdir(dir))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "LOCK") ||
		    !strncmp(de->d_name, "LOG", 3))
			continue;
		snprintf(a, sizeof(a), "%s/%s", from, de->d_name);
		snprintf(b, sizeof(b), "%s/%s", to, de->d_name);
		if (is_sst(de->d_name) && !link(a, b))
			continue;
		rc = copy_file(a, b);
	}
	closedir(dir);
	return rc;
}

/* Deletes what lies outside key groups [lo, hi): range tombstones, dropped by compaction.
 * The upper range ends at a run of 0xff longer than any key (RK_HDR + two SL_KEY_MAX). */
static int keep_range(struct sl_rocks_db *db, uint32_t lo, uint32_t hi)
{
	static uint8_t top[RK_HDR + 2 * SL_KEY_MAX + 8];
	uint8_t a[2] = { 0, 0 }, b[2] = { (uint8_t)(lo >> 8), (uint8_t)lo };
	uint8_t c[2] = { (uint8_t)(hi >> 8), (uint8_t)hi };

	memset(top, 0xff, sizeof(top));
	if (lo > 0)
		rocksdb_writebatch_delete_range(db->wb, (const char *)a, 2, (const char *)b, 2);
	if (hi < 65536)
		rocksdb_writebatch_delete_range(db->wb, (const char *)c, 2, (const char *)top,
						sizeof(top));
	return sl_rocks_commit(db);
}

/* Copies the entries of key groups [lo, hi) of DB dir `from` (opened read-only) into db. */
static int copy_range(struct sl_rocks_db *db, const char *from, uint32_t lo, uint32_t hi, char *err,
		      size_t errcap)
{
	uint8_t start[2] = { (uint8_t)(lo >> 8), (uint8_t)lo };
	uint8_t end[2] = { (uint8_t)(hi >> 8), (uint8_t)hi };
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_iterator_t *it;
	rocksdb_t *src;
	char *msg = NULL;
	int rc = 0;

	if (!ro)
		return -ENOMEM;
	src = rocksdb_open_for_read_only(db->env->opts, from, 0, &msg);
	if (msg) {
		seterr(err, errcap, "state checkpoint %s is not readable: %s", from, msg);
		rocksdb_free(msg);
		rocksdb_readoptions_destroy(ro);
		return -EINVAL;
	}
	rocksdb_readoptions_set_fill_cache(ro, 0);
	if (hi < 65536)
		rocksdb_readoptions_set_iterate_upper_bound(ro, (const char *)end, 2);
	it = rocksdb_create_iterator(src, ro);
	for (rocksdb_iter_seek(it, (const char *)start, 2); rocksdb_iter_valid(it) && !rc;
	     rocksdb_iter_next(it)) {
		size_t kl, vl;
		const char *k = rocksdb_iter_key(it, &kl), *v = rocksdb_iter_value(it, &vl);

		rocksdb_writebatch_put(db->wb, k, kl, v, vl);
		if (sl_rocks_wb_bytes(db->wb) >= ((size_t)4 << 20))
			rc = sl_rocks_commit(db);
	}
	rocksdb_iter_get_error(it, &msg);
	if (msg) {
		seterr(err, errcap, "state checkpoint %s: %s", from, msg);
		rocksdb_free(msg);
		rc = -EINVAL;
	}
	rocksdb_iter_destroy(it);
	rocksdb_close(src);
	rocksdb_readoptions_destroy(ro);
	if (!rc)
		rc = sl_rocks_commit(db);
	if (rc == -EIO)
		seterr(err, errcap, "%s%s", db->msg, NULL);
	return rc;
}

int sl_rocks_db_load(struct sl_rocks_db *db, const char *path, uint32_t kg_lo, uint32_t kg_hi,
		     char *err, size_t errcap)
{
	struct stat st;
	int rc;

	if (err && errcap)
		err[0] = '\0';
	if (!db || db->nks || kg_lo >= kg_hi || kg_hi > 65536)
		return -EINVAL;
	if (db->error) {
		seterr(err, errcap, "%s%s", db->msg, NULL);
		return db->error;
	}
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		seterr(err, errcap, "state checkpoint %s: %s", path, strerror(ENOENT));
		return -EINVAL;
	}
	db->loaded = true;
	if (db->written)
		return copy_range(db, path, kg_lo, kg_hi, err, errcap);
	/* first load into a fresh db: become the checkpoint (hard links), then drop the key
	 * groups that are not ours */
	rocksdb_close(db->db);
	db->db = NULL;
	rm_tree(db->path);
	rc = link_dir(path, db->path);
	if (rc) {
		seterr(err, errcap, "state checkpoint %s: %s", path, strerror(-rc));
		rm_tree(db->path);
		db_reopen(db, NULL, 0);
		return rc == -ENOENT ? -EINVAL : rc;
	}
	rc = db_reopen(db, err, errcap);
	if (rc) {
		/* not a DB: start over empty so the caller may try an older checkpoint */
		rm_tree(db->path);
		if (db_reopen(db, NULL, 0))
			db->error = -EIO;
		return -EINVAL;
	}
	db->written = true;
	rc = keep_range(db, kg_lo, kg_hi);
	if (rc)
		seterr(err, errcap, "%s%s", db->msg, NULL);
	return rc;
}
