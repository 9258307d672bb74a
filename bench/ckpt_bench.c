/*
 * ckpt_bench.c - the checkpoint figures of the state issue (issue 4), heap backend: what a
 * checkpoint of 100 MiB and 1 GiB of keyed state costs, what checkpointing every 10 s and
 * every 1 s costs a keyed job's throughput, and how long restoring 1 GiB of state takes, each
 * against a reference measured in the same run on the same filesystem.
 *
 *   size      a custom source (2 splits) emits each key of [0, N) once -> key_by -> a process
 *             function that puts a 128-byte value per key (N = state bytes / 128), checkpointed
 *             every second into a checkpoint directory. A checkpoint whose barrier left
 *             every split after its last key holds the whole state; the job stops after the
 *             second such one. The figure is that second one (the state a long-running job
 *             checkpoints again and again, snapshot buffers already grown); the first one,
 *             which also grows the buffers, is printed as *_first. Duration is from
 *             the first split's barrier (sl_source_ops.position runs there) to on_checkpoint
 *             (the manifest is durable), its "stall" the longest a shard spent from that
 *             barrier to its sink's precommit (alignment + the process function's snapshot:
 *             the time the shard does not process records), its bytes the sizes of the files
 *             in chk-<n>. Reference: one file of the same bytes written sequentially (1 MiB
 *             write()s) and fsynced, directory fsynced: the ceiling of that disk. Context:
 *             the time to first touch as many bytes of fresh memory (fault_in: page faults
 *             cost ~25-100 us each in this VM, so every buffer that is not reused counts).
 *   cost      datagen (user_id uniform in [0, 1M), amount) -> key_by user_id -> a process
 *             function updating a 64-byte value per record (count, sum, min, max, last) ->
 *             a sink that receives nothing (the state is the work). Records/s over a window
 *             after a warm-up, counted by the process function; run without checkpoints,
 *             with one every 10 s and every 1 s into a real checkpoint directory. Reference:
 *             the run without checkpoints.
 *   recovery  the size job again over the directory holding the 1 GiB checkpoint: the
 *             source only emits 1000 verification keys per split, whose restored values the
 *             process function checks. Recovery time is from sl_job_run to the first record
 *             processed (files loaded, manifest and checksums verified, state rebuilt, job
 *             wired). Reference: reading the same state files with a 1 MiB read() loop. Both
 *             cold (the files' pages dropped from the page cache with POSIX_FADV_DONTNEED:
 *             a restart after a reboot; the hypervisor may still cache them) and warm.
 *
 * Heap snapshots are always full: every checkpoint writes all of the state. Incremental
 * checkpoints are the RocksDB backend's: with --backend rocksdb the size part runs each size
 * twice in the same run, on the heap as above (the reference) and on RocksDB (native
 * checkpoints: flush + hard links, chk-<n>/op<id>-s<shard>/):
 *   rocks     the same fill, then, as soon as the first full checkpoint is durable, the
 *             source changes 1% of the keys (every 100th key of each split gets another
 *             value); the first checkpoint whose barrier left every split after its changes
 *             is the incremental one, and the job stops. Figures: the full (first)
 *             checkpoint's duration, stall and bytes (every file new), the incremental one's
 *             duration, stall and new bytes (files whose inode the full checkpoint did not
 *             have: new SSTs, compaction outputs, MANIFEST/OPTIONS/CURRENT), each against a
 *             raw write + fsync of the full checkpoint's bytes measured right after; the
 *             recovery part then restores the RocksDB checkpoint (the manifest's files
 *             verified by CRC32C, the directories linked into the working DBs, opened),
 *             checking the changed values too, against a read() of the same files.
 * A recovery run ends its input, so it takes a final checkpoint after the measured part.
 *
 * Options: --quick (CI: 100 MiB only, recovery of 100 MiB, cost windows of 12 s after 2 s of
 * warm-up, one round: one checkpoint at 10 s; figures say so), --secs S (cost window,
 * default 40), --rounds R (cost rounds, default 2: each runs the three jobs in turn),
 * --only size|cost|recovery, --shards N (2), --dir D (parent of the temporary checkpoint
 * directories; default /var/tmp), --keep (leave them), --backend rocksdb (above; the cost
 * part stays on the heap), --sizes 100mb|1gb|both (default both). Output: the FIGURE protocol of
 * bench/README.md, then a summary table (markdown) for the closing note.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sluice/connectors.h>

#define MIB		 (1024.0 * 1024.0)
#define VAL_WORDS	 16 /* the size job's value: 128 bytes */
#define VAL_SIZE	 (VAL_WORDS * 8)
#define VERIFY_PER_SPLIT 1000
#define MAX_SPLITS	 64
#define MAX_CKPTS	 1024
#define COST_KEYS	 1000000
#define IO_CHUNK	 (1 << 20)

static int nshards = 2;
static const char *backend;		     /* NULL: heap; "rocksdb" (--backend) */
static _Atomic bool upd_go;		     /* rocks size job: change 1% of the keys now */
static _Atomic bool pos_updated[MAX_SPLITS]; /* ... and the split had changed them all */
static char cores[32] = "0-1";
static char parent[512] = "/var/tmp";
static bool keep;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "ckpt_bench: %s: %s\n", what, why);
	exit(1);
}

/* ---- timing of each checkpoint, written on the shards, read in on_checkpoint ----
 * The coordinator reads these after it saw every shard acknowledge the checkpoint (an
 * acquire that pairs with the shard's release of ckpt_acked, runtime.c), and the shards
 * wrote them before acknowledging; relaxed atomics keep the accesses race-free. */

static _Atomic int64_t pos_ns[MAX_SPLITS];	 /* the split's last barrier */
static _Atomic bool pos_filled[MAX_SPLITS];	 /* size job: the split had emitted every key */
static _Atomic int64_t precommit_ns[MAX_SPLITS]; /* the shard's last snapshot done (by shard) */
static int nsplits_seen;

struct ckpt_rec {
	uint64_t id;
	double dur_s;	    /* first barrier -> manifest durable */
	double stall_s;	    /* longest barrier -> snapshot done on a shard */
	uint64_t bytes;	    /* files in chk-<id> (native directories included) */
	uint64_t new_bytes; /* rocks incremental: of those, files the full one did not have */
	uint64_t new_prev;  /* rocks: files the previous checkpoint did not have: what this
			     * one added to disk (new SSTs, compaction outputs, small files) */
	bool full;	    /* size job: every key was in it */
	bool incr;	    /* rocks size job: every split's 1% changes were in it */
	int64_t done_ns;
};

/* Inodes of a checkpoint's files: what a later checkpoint shares with it (hard links). */
struct inoset {
	ino_t *v;
	size_t n, cap;
};

struct ckpt_log {
	const char *dir;   /* the checkpoint directory */
	bool stop_on_full; /* size job: stop once two full checkpoints completed */
	bool update;	   /* rocks size job: after the first full one, change 1%, then stop */
	int n, nfull;
	struct inoset full_inodes;
	struct inoset prev_inodes; /* rocks: the previous checkpoint's files */
	struct ckpt_rec r[MAX_CKPTS];
};

static bool ino_has(const struct inoset *s, ino_t ino)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == ino)
			return true;
	return false;
}

static void ino_add(struct inoset *s, ino_t ino)
{
	if (s->n == s->cap) {
		ino_t *nv = realloc(s->v, (s->cap = s->cap ? 2 * s->cap : 256) * sizeof(*nv));

		if (!nv)
			die("inode set", "out of memory");
		s->v = nv;
	}
	s->v[s->n++] = ino;
}

/*
 * Bytes of the regular files under path and in its subdirectories (chk-<n> holds the heap's
 * state files and the RocksDB checkpoints' op<id>-s<shard>/ directories). With `base`,
 * *fresh gets the bytes of files whose inode is not in it; with `collect`, every inode is
 * added to it. O(files x base): a few hundred files at most.
 */
static uint64_t tree_bytes(const char *path, const struct inoset *base, uint64_t *fresh,
			   struct inoset *collect, int depth)
{
	DIR *d = opendir(path);
	uint64_t sum = 0;
	struct dirent *e;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char sub[1400];
		struct stat st;

		if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, 0))
			continue;
		if (S_ISDIR(st.st_mode) && depth == 0) {
			snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
			sum += tree_bytes(sub, base, fresh, collect, 1);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		sum += (uint64_t)st.st_size;
		if (base && fresh && !ino_has(base, st.st_ino))
			*fresh += (uint64_t)st.st_size;
		if (collect)
			ino_add(collect, st.st_ino);
	}
	closedir(d);
	return sum;
}

static int on_ckpt(struct sl_job *job, uint64_t id, void *arg)
{
	struct ckpt_log *l = arg;
	int64_t done = now_ns(), first = INT64_MAX, stall = 0;
	struct ckpt_rec *r;
	char path[1024];
	bool full = true, updated = true;

	for (int i = 0; i < nsplits_seen; i++) {
		int64_t p = atomic_load_explicit(&pos_ns[i], memory_order_relaxed);

		if (p < first)
			first = p;
		full &= atomic_load_explicit(&pos_filled[i], memory_order_relaxed);
		updated &= atomic_load_explicit(&pos_updated[i], memory_order_relaxed);
	}
	for (int i = 0; i < nshards; i++) {
		int64_t s = atomic_load_explicit(&precommit_ns[i], memory_order_relaxed);

		if (s - first > stall)
			stall = s - first;
	}
	if (l->n == MAX_CKPTS)
		return 0;
	r = &l->r[l->n++];
	r->id = id;
	r->dur_s = (double)(done - first) * 1e-9;
	r->stall_s = (double)stall * 1e-9;
	r->full = full;
	r->done_ns = done;
	snprintf(path, sizeof path, "%s/chk-%llu", l->dir, (unsigned long long)id);
	if (l->update && full && !l->nfull) {
		/* the first full checkpoint: remember its files, then change 1% of the keys */
		r->bytes = tree_bytes(path, NULL, NULL, &l->full_inodes, 0);
		r->new_bytes = r->bytes;
		atomic_store(&upd_go, true);
	} else {
		r->bytes = tree_bytes(path, &l->full_inodes, &r->new_bytes, NULL, 0);
	}
	if (l->update) {
		struct inoset now = { 0 };

		tree_bytes(path, &l->prev_inodes, &r->new_prev, &now, 0);
		free(l->prev_inodes.v);
		l->prev_inodes = now;
	}
	r->incr = l->update && l->nfull && updated;
	fprintf(stderr, "  checkpoint %llu: %.3f s (shard stall %.3f s), %.1f MiB%s",
		(unsigned long long)id, r->dur_s, r->stall_s, (double)r->bytes / MIB,
		full ? ", full state" : "");
	if (l->update)
		fprintf(stderr,
			", %.1f MiB not in the full one's files, %.1f MiB not in the "
			"previous one's%s",
			(double)r->new_bytes / MIB, (double)r->new_prev / MIB,
			r->incr ? ", 1% of the keys changed" : "");
	fprintf(stderr, "\n");
	if (l->update) {
		if (full)
			l->nfull++;
		if (r->incr)
			sl_job_stop(job);
		return 0;
	}
	/* the first full checkpoint grows the snapshot buffers, the second reuses them */
	if (full && ++l->nfull == 2 && l->stop_on_full)
		sl_job_stop(job);
	return 0;
}

/* ---- a sink that receives nothing but records when its shard's snapshot is done ---- */

static void *nul_open(const void *cfg, const struct sl_schema *s, int shard, int n,
		      struct sl_error *err)
{
	return &precommit_ns[shard];
}

static int nul_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	return 0;
}

static int nul_flush(void *state)
{
	return 0;
}

static void nul_close(void *state)
{
}

/* Runs right after the process function's snapshot on the same shard (chain order). */
static int nul_precommit(void *state, uint64_t ckpt, void *meta, size_t cap, size_t *len)
{
	atomic_store_explicit((_Atomic int64_t *)state, now_ns(), memory_order_relaxed);
	*len = 0;
	return 0;
}

static const struct sl_sink_ops nul_ops = {
	.name = "nul",
	.open = nul_open,
	.write = nul_write,
	.flush = nul_flush,
	.close = nul_close,
	.precommit = nul_precommit,
};

/* ---- the size job: every key once, then idle until stopped ---- */

struct fill_cfg {
	int64_t nkeys;
	bool verify; /* recovery run: emit verification keys, then end */
	bool update; /* rocks: 1% of the keys change after the first full checkpoint (fill),
		      * or did (verify: expect their new values) */
};

struct fill_split {
	const struct fill_cfg *cfg;
	int split;
	int64_t next; /* fill: the next key index of this split; verify: records emitted */
	int64_t upd;  /* update: changed keys so far (key indexes 0, 100, 200, ...) */
};

/* Key index i of a split changes in the update phase (rocks): every 100th. */
static inline bool changes(int64_t i, int64_t mine)
{
	return i % 100 == 0 && i / 100 < mine / 100;
}

static inline int64_t split_keys(const struct fill_cfg *cfg, int split)
{
	return (cfg->nkeys - split + nshards - 1) / nshards;
}

static _Atomic int64_t first_rec_ns; /* recovery: first verification record processed */
static _Atomic int64_t last_rec_ns;  /* recovery: latest verification record processed */
static _Atomic int64_t op_open_ns;   /* recovery: first process instance opened */
static _Atomic int64_t src_open_ns;  /* recovery: last split opened (after the restore) */
static _Atomic uint64_t verified, mismatched;

static int fill_nsplits(const void *cfg)
{
	return nshards;
}

static void *fill_open(const void *cfg, int split, struct sl_error *err)
{
	struct fill_split *s = calloc(1, sizeof(*s));

	if (!s) {
		err->code = -ENOMEM;
		snprintf(err->msg, sizeof err->msg, "out of memory");
		return NULL;
	}
	s->cfg = cfg;
	s->split = split;
	if (split >= nsplits_seen)
		nsplits_seen = split + 1;
	atomic_store(&src_open_ns, now_ns());
	return s;
}

static int fill_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct fill_split *s = state;
	int64_t mine = (s->cfg->nkeys - s->split + nshards - 1) / nshards;
	int n = 0;

	if (s->cfg->verify) {
		int64_t stride = mine / VERIFY_PER_SPLIT > 0 ? mine / VERIFY_PER_SPLIT : 1;

		if (s->next >= VERIFY_PER_SPLIT || s->next * stride >= mine)
			return SL_SRC_EOF;
		for (; n < max && s->next < VERIFY_PER_SPLIT && s->next * stride < mine; n++) {
			struct sl_row_builder b;

			sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 2);
			sl_rowb_set_i64(&b, 0, s->split + nshards * (s->next * stride));
			sl_rowb_set_i64(&b, 1, 1);
			if (sl_src_emit(c, sl_rowb_finish(&b)))
				return -EIO;
			s->next++;
		}
		return n;
	}
	for (; n < max && s->next < mine; n++) {
		struct sl_row_builder b;

		sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 2);
		sl_rowb_set_i64(&b, 0, s->split + nshards * s->next);
		sl_rowb_set_i64(&b, 1, 0);
		if (sl_src_emit(c, sl_rowb_finish(&b)))
			return -EIO;
		s->next++;
	}
	for (; s->cfg->update && s->next >= mine && n < max && s->upd < mine / 100 &&
	       atomic_load_explicit(&upd_go, memory_order_relaxed);
	     n++) {
		struct sl_row_builder b;

		sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 2);
		sl_rowb_set_i64(&b, 0, s->split + nshards * (s->upd * 100));
		sl_rowb_set_i64(&b, 1, 2);
		if (sl_src_emit(c, sl_rowb_finish(&b)))
			return -EIO;
		s->upd++;
	}
	return n; /* 0 once filled: the job idles until on_ckpt stops it */
}

static int fill_position(void *state, void *buf, size_t cap, size_t *len)
{
	struct fill_split *s = state;
	int64_t mine = (s->cfg->nkeys - s->split + nshards - 1) / nshards;

	atomic_store_explicit(&pos_ns[s->split], now_ns(), memory_order_relaxed);
	atomic_store_explicit(&pos_filled[s->split], s->next >= mine, memory_order_relaxed);
	atomic_store_explicit(&pos_updated[s->split],
			      atomic_load_explicit(&upd_go, memory_order_relaxed) &&
				      s->upd >= mine / 100,
			      memory_order_relaxed);
	memcpy(buf, &s->next, 8);
	memcpy((char *)buf + 8, &s->upd, 8);
	*len = 16;
	return 0;
}

static int fill_seek(void *state, const void *pos, size_t len)
{
	struct fill_split *s = state;

	if (len != 16)
		return -EINVAL;
	if (!s->cfg->verify) {
		memcpy(&s->next, pos, 8);
		memcpy(&s->upd, (const char *)pos + 8, 8);
	}
	return 0;
}

static void fill_close(void *state)
{
	free(state);
}

static const struct sl_source_ops fill_ops = {
	.name = "fill",
	.nsplits = fill_nsplits,
	.open = fill_open,
	.poll = fill_poll,
	.close = fill_close,
	.position = fill_position,
	.seek = fill_seek,
};

static const struct sl_state_desc fill_state[] = {
	{ .name = "v", .kind = SL_STATE_VALUE, .value_size = VAL_SIZE },
};

static inline uint64_t pattern(int64_t key, int i)
{
	return (uint64_t)key * 0x9e3779b97f4a7c15ull + (uint64_t)i;
}

/* The value key holds after the update phase (rocks), word i. */
static inline uint64_t pattern_now(const struct fill_cfg *cfg, int64_t key, int i)
{
	int split = (int)(key % nshards);
	bool changed = cfg->update && changes(key / nshards, split_keys(cfg, split));

	return pattern(key, i) ^ (changed ? 0xa5a5a5a5a5a5a5a5ull : 0);
}

static int fill_fn_open(struct sl_ctx *ctx, void *arg)
{
	int64_t zero = 0;

	atomic_compare_exchange_strong(&op_open_ns, &zero, now_ns());
	return 0;
}

/* Fill: writes the key's 128-byte pattern (mode 0), or its changed one (mode 2). Verify:
 * checks it. Hot path. */
static void fill_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	const struct fill_cfg *cfg = arg;
	int64_t key = sl_row_i64(row, 0), mode = sl_row_i64(row, 1);
	uint64_t *v;

	if (mode == 0 || mode == 2) {
		v = sl_value_put(ctx, 0);
		if (v)
			for (int i = 0; i < VAL_WORDS; i++)
				v[i] = pattern(key, i) ^ (mode == 2 ? 0xa5a5a5a5a5a5a5a5ull : 0);
		return;
	}
	if (!atomic_load_explicit(&first_rec_ns, memory_order_relaxed)) {
		int64_t zero = 0;

		atomic_compare_exchange_strong(&first_rec_ns, &zero, now_ns());
	}
	atomic_store_explicit(&last_rec_ns, now_ns(), memory_order_relaxed);
	v = sl_value_get(ctx, 0);
	for (int i = 0; v && i < VAL_WORDS; i++)
		if (v[i] != pattern_now(cfg, key, i))
			v = NULL;
	atomic_fetch_add_explicit(v ? &verified : &mismatched, 1, memory_order_relaxed);
}

/* Builds the size job ("ckpt_state": the same name and operators in the fill and the
 * recovery run, so the recovery run's identity matches the checkpoint's). */
static struct sl_job *size_job(const struct fill_cfg *cfg, struct sl_schema *sch)
{
	struct sl_wm_strategy wm = { .kind = SL_WM_NONE, .ts_field = -1 };
	struct sl_process_fn fn = { .states = fill_state,
				    .nstates = 1,
				    .open = fill_fn_open,
				    .process = fill_process,
				    .arg = (void *)cfg };
	struct sl_job *job = sl_job_create("ckpt_state");
	struct sl_stream *s;
	int key = 0;

	if (!job)
		die("size job", "out of memory");
	s = sl_job_source(job, "fill", &fill_ops, cfg, sch, &wm);
	s = sl_stream_process(sl_stream_key_by(s, &key, 1), "put", &fn, sch);
	if (sl_stream_sink(s, "nul", &nul_ops, NULL))
		die("size job", sl_job_error(job)->msg);
	return job;
}

/* ---- references: sequential write + fsync, sequential read ---- */

static double raw_write(const char *dir, uint64_t bytes)
{
	char path[1024];
	char *buf = malloc(IO_CHUNK);
	int64_t t0, t1;
	int fd, dfd;

	if (!buf)
		die("raw write", "out of memory");
	for (size_t i = 0; i < IO_CHUNK; i++)
		buf[i] = (char)(i * 131 + 7);
	snprintf(path, sizeof path, "%s/raw.bin", dir);
	t0 = now_ns();
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die(path, strerror(errno));
	for (uint64_t done = 0; done < bytes;) {
		size_t n = bytes - done < IO_CHUNK ? (size_t)(bytes - done) : IO_CHUNK;
		ssize_t w = write(fd, buf, n);

		if (w <= 0)
			die(path, strerror(errno));
		done += (uint64_t)w;
	}
	if (fsync(fd) || close(fd))
		die(path, strerror(errno));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd))
		die(dir, strerror(errno));
	close(dfd);
	t1 = now_ns();
	unlink(path);
	free(buf);
	return (double)(t1 - t0) * 1e-9;
}

/* Drops the cached pages of every file of chk_dir and of its subdirectories (the native
 * checkpoints' op<id>-s<shard>/): a restart after a reboot. */
static void drop_cache(const char *chk_dir, int depth)
{
	DIR *d = opendir(chk_dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[1400];
		struct stat st;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", chk_dir, e->d_name);
		if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
			if (depth == 0)
				drop_cache(path, 1);
			continue;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
	}
	if (d)
		closedir(d);
}

/* read()s every file of dir and of its subdirectories into buf; adds their bytes. */
static void read_tree(const char *dir, char *buf, uint64_t *bytes, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		die(dir, strerror(errno));
	while ((e = readdir(d))) {
		char path[1400];
		struct stat st;
		ssize_t r;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
			if (depth == 0)
				read_tree(path, buf, bytes, 1);
			continue;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		while ((r = read(fd, buf, IO_CHUNK)) > 0)
			*bytes += (uint64_t)r;
		close(fd);
	}
	closedir(d);
}

/* Reads every file of chk_dir (cold: their cached pages dropped first). Returns seconds. */
static double raw_read(const char *chk_dir, bool cold, uint64_t *bytes)
{
	char *buf = malloc(IO_CHUNK);
	int64_t t0;

	if (!buf)
		die(chk_dir, "out of memory");
	if (cold)
		drop_cache(chk_dir, 0);
	*bytes = 0;
	t0 = now_ns();
	read_tree(chk_dir, buf, bytes, 0);
	free(buf);
	return (double)(now_ns() - t0) * 1e-9;
}

/* Seconds to map and first touch `bytes` of anonymous memory, one write a 4 KiB page: what a
 * snapshot or restore buffer that is not reused pays before its first byte is copied (page
 * faults are expensive in some VMs). */
static double fault_in(uint64_t bytes)
{
	int64_t t0 = now_ns();
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double s;

	if (p == MAP_FAILED)
		die("fault-in reference", strerror(errno));
	for (uint64_t i = 0; i < bytes; i += 4096)
		p[i] = 1;
	s = (double)(now_ns() - t0) * 1e-9;
	munmap(p, bytes);
	return s;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_tree(const char *path)
{
	if (!keep)
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_dir(char *out, size_t cap, const char *what)
{
	snprintf(out, cap, "%s/ckpt_bench-%s-XXXXXX", parent, what);
	if (!mkdtemp(out))
		die(out, strerror(errno));
}

/* ---- part 1: checkpoint of a given state size ---- */

struct size_result {
	uint64_t state_bytes;
	int64_t nkeys;
	bool rocks;		/* the run was on RocksDB (native checkpoints) */
	struct ckpt_rec full;	/* the first checkpoint holding every key */
	struct ckpt_rec steady; /* heap: the next one, same state, snapshot buffers grown;
				 * rocks: the one after 1% of the keys changed */
	double raw_s;
	double fault_s; /* first touch of as many bytes of fresh anonymous memory */
	/* the checkpoints taken while the state was being filled (before `full`) */
	int fill_ckpts;
	double fill_stall_sum_s, fill_stall_max_s;
	char dir[600]; /* the checkpoint directory, kept for the recovery part */
};

static void run_size(uint64_t state_bytes, bool rocks, struct size_result *res)
{
	struct sl_schema *sch = sl_schema_create();
	struct fill_cfg cfg = { .nkeys = (int64_t)(state_bytes / VAL_SIZE), .update = rocks };
	static struct ckpt_log log;
	struct sl_run_opts opts = { .nshards = nshards,
				    .cores = cores,
				    .checkpoint_interval_ms = 1000,
				    .on_checkpoint = on_ckpt,
				    .checkpoint_arg = &log,
				    .state_backend = rocks ? "rocksdb" : NULL };
	struct sl_job_stats st;
	struct sl_job *job;
	int64_t t0;

	memset(res, 0, sizeof(*res));
	res->state_bytes = state_bytes;
	res->nkeys = cfg.nkeys;
	res->rocks = rocks;
	make_dir(res->dir, sizeof res->dir, rocks ? "rocks" : "size");
	free(log.full_inodes.v);
	free(log.prev_inodes.v);
	memset(&log, 0, sizeof log);
	log.dir = res->dir;
	log.stop_on_full = !rocks;
	log.update = rocks;
	atomic_store(&upd_go, false);
	for (int i = 0; i < MAX_SPLITS; i++) {
		atomic_store(&pos_filled[i], false);
		atomic_store(&pos_updated[i], false);
	}
	opts.checkpoint_dir = res->dir;
	sl_schema_add(sch, "k", SL_TYPE_BIGINT);
	sl_schema_add(sch, "mode", SL_TYPE_BIGINT);
	job = size_job(&cfg, sch);
	fprintf(stderr,
		"size (%s): %.0f MiB of state = %lld keys x %d-byte values, %d shards, "
		"checkpoint every 1 s into %s\n",
		rocks ? "rocksdb" : "heap", (double)state_bytes / MIB, (long long)cfg.nkeys,
		VAL_SIZE, nshards, res->dir);
	t0 = now_ns();
	if (sl_job_run(job, &opts))
		die("size job", sl_job_error(job)->msg);
	sl_job_stats(job, &st);
	if (st.records_in < (uint64_t)cfg.nkeys)
		die("size job", "not every key was emitted before the stop");
	for (int i = 0; i < log.n; i++) {
		if (!log.r[i].full) {
			res->fill_ckpts++;
			res->fill_stall_sum_s += log.r[i].stall_s;
			if (log.r[i].stall_s > res->fill_stall_max_s)
				res->fill_stall_max_s = log.r[i].stall_s;
			continue;
		}
		if (!res->full.id)
			res->full = log.r[i];
		else if (!res->steady.id && (!rocks || log.r[i].incr))
			res->steady = log.r[i];
	}
	if (!res->steady.id)
		die("size job", rocks ? "no checkpoint held the 1% changes"
				      : "fewer than two checkpoints held the whole state");
	if (rocks && res->steady.id != res->full.id + 1)
		fprintf(stderr,
			"size: note: %llu checkpoints between the full and the "
			"incremental one took part of the changes\n",
			(unsigned long long)(res->steady.id - res->full.id - 1));
	fprintf(stderr, "size: run %.1f s, %llu checkpoints (%llu failed)\n",
		(double)(now_ns() - t0) * 1e-9, (unsigned long long)st.checkpoints,
		(unsigned long long)st.checkpoints_failed);
	sl_job_destroy(job);
	sl_schema_destroy(sch);
	res->raw_s = raw_write(res->dir, res->full.bytes);
	res->fault_s = fault_in(res->full.bytes);
	if (rocks)
		fprintf(stderr,
			"size (rocksdb): full checkpoint %.3f s (stall %.3f s), %.1f MiB; after "
			"1%% of the keys changed %.3f s (stall %.3f s), %.1f MiB new of %.1f MiB\n",
			res->full.dur_s, res->full.stall_s, (double)res->full.bytes / MIB,
			res->steady.dur_s, res->steady.stall_s, (double)res->steady.new_bytes / MIB,
			(double)res->steady.bytes / MIB);
	fprintf(stderr,
		"size: raw write + fsync of %.1f MiB: %.3f s (%.0f MiB/s); checkpoint "
		"%.3f s first, %.3f s steady (%.0f MiB/s); first touch of as much fresh "
		"memory %.3f s\n",
		(double)res->full.bytes / MIB, res->raw_s,
		(double)res->full.bytes / MIB / res->raw_s, res->full.dur_s, res->steady.dur_s,
		(double)res->steady.bytes / MIB / res->steady.dur_s, res->fault_s);
}

/* ---- part 3: recovery from a size run's checkpoint ---- */

struct rec_result {
	double all_s;			   /* to the last verification record: every shard
					    * restored and processing */
	double first_s, load_s, restore_s; /* to the first record; to the first operator open
					    * (files loaded and verified); to the last source
					    * open (the last shard's state rebuilt) */
	double read_s;
	uint64_t read_bytes;
};

/* The newest complete checkpoint of dir (the one a restore loads) into out: chk-<n> with a
 * MANIFEST. A run that reaches the end of its input takes a final checkpoint, and retention
 * then drops older ones, so this moves from one recovery run to the next. */
static void newest_chk(const char *dir, char *out, size_t cap)
{
	unsigned long long best = 0, n;
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[1024];

		if (sscanf(e->d_name, "chk-%llu", &n) != 1 || n <= best)
			continue;
		snprintf(path, sizeof path, "%s/%s/MANIFEST", dir, e->d_name);
		if (!access(path, F_OK))
			best = n;
	}
	if (d)
		closedir(d);
	if (!best)
		die(dir, "no complete checkpoint");
	snprintf(out, cap, "%s/chk-%llu", dir, best);
}

static void run_recovery(const struct size_result *sz, bool cold, struct rec_result *res)
{
	char chk_dir[700];
	struct sl_schema *sch = sl_schema_create();
	struct fill_cfg cfg = { .nkeys = sz->nkeys, .verify = true, .update = sz->rocks };
	/* checkpointing on (that is what restores) but never due during the short run */
	struct sl_run_opts opts = { .nshards = nshards,
				    .cores = cores,
				    .checkpoint_interval_ms = 3600 * 1000,
				    .checkpoint_dir = sz->dir,
				    .state_backend = sz->rocks ? "rocksdb" : NULL };
	struct sl_job_stats st;
	struct sl_job *job;
	uint64_t want;
	int64_t t0;

	newest_chk(sz->dir, chk_dir, sizeof chk_dir);
	res->read_s = raw_read(chk_dir, cold, &res->read_bytes);
	sl_schema_add(sch, "k", SL_TYPE_BIGINT);
	sl_schema_add(sch, "mode", SL_TYPE_BIGINT);
	job = size_job(&cfg, sch);
	atomic_store(&first_rec_ns, 0);
	atomic_store(&last_rec_ns, 0);
	atomic_store(&op_open_ns, 0);
	atomic_store(&verified, 0);
	atomic_store(&mismatched, 0);
	/* the reference read brought the pages back in: drop them again */
	if (cold)
		drop_cache(chk_dir, 0);
	t0 = now_ns();
	if (sl_job_run(job, &opts))
		die("recovery job", sl_job_error(job)->msg);
	sl_job_stats(job, &st);
	want = st.records_in;
	if (!want || atomic_load(&verified) != want || atomic_load(&mismatched)) {
		fprintf(stderr,
			"ckpt_bench: recovery: %llu of %llu keys restored with their "
			"values, %llu wrong or missing\n",
			(unsigned long long)atomic_load(&verified), (unsigned long long)want,
			(unsigned long long)atomic_load(&mismatched));
		exit(1);
	}
	res->all_s = (double)(atomic_load(&last_rec_ns) - t0) * 1e-9;
	res->first_s = (double)(atomic_load(&first_rec_ns) - t0) * 1e-9;
	res->load_s = (double)(atomic_load(&op_open_ns) - t0) * 1e-9;
	res->restore_s = (double)(atomic_load(&src_open_ns) - t0) * 1e-9;
	fprintf(stderr,
		"recovery (%s%s): every shard processing %.3f s after start (files loaded "
		"%.3f s, state rebuilt %.3f s, first record %.3f s), %llu keys verified; "
		"reading the %.1f MiB of state files: %.3f s\n",
		sz->rocks ? "rocksdb, " : "", cold ? "cold" : "warm", res->all_s, res->load_s,
		res->restore_s, res->first_s, (unsigned long long)want,
		(double)res->read_bytes / MIB, res->read_s);
	sl_job_destroy(job);
	sl_schema_destroy(sch);
}

/* ---- part 2: throughput cost of checkpointing ---- */

struct cost_val {
	int64_t count, sum, min, max, last;
	int64_t pad[3]; /* 64 bytes */
};

static const struct sl_state_desc cost_state[] = {
	{ .name = "agg", .kind = SL_STATE_VALUE, .value_size = sizeof(struct cost_val) },
};

/* Records processed, one counter per shard on its own line (written by that shard only),
 * and the longest time between two clock reads of that shard's process function (one per
 * GAP_EVERY records) once the window has begun: the longest the shard stopped processing
 * records, whatever stopped it (a snapshot, a page fault, the neighbours' load). */
#define GAP_EVERY 64
static struct {
	_Atomic uint64_t n;
	_Atomic int64_t gap_max_ns;
	int64_t last_ns;
	char pad[40];
} processed[MAX_SPLITS];
static _Atomic int64_t gap_from_ns; /* 0: the window has not begun */

/* One record: update the key's aggregate. Hot path. */
static void cost_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	struct cost_val *v = sl_value_put(ctx, 0);
	int64_t a = sl_row_i64(row, 1);
	_Atomic uint64_t *n = &processed[sl_ctx_shard(ctx)].n;

	uint64_t cnt = atomic_load_explicit(n, memory_order_relaxed) + 1;

	if (v) {
		if (!v->count++ || a < v->min)
			v->min = a;
		if (a > v->max)
			v->max = a;
		v->sum += a;
		v->last = a;
	}
	atomic_store_explicit(n, cnt, memory_order_relaxed);
	if (cnt % GAP_EVERY == 0) {
		int shard = sl_ctx_shard(ctx);
		int64_t t = now_ns(), from = atomic_load_explicit(&gap_from_ns, memory_order_relaxed);
		int64_t last = processed[shard].last_ns;

		if (from && last >= from && t - last >
		    atomic_load_explicit(&processed[shard].gap_max_ns, memory_order_relaxed))
			atomic_store_explicit(&processed[shard].gap_max_ns, t - last,
					      memory_order_relaxed);
		processed[shard].last_ns = t;
	}
}

/* datagen with its barrier timed: the same splits, positions and seeks. */
struct timed_split {
	void *inner;
	int split;
};

static void *timed_open(const void *cfg, int split, struct sl_error *err)
{
	struct timed_split *t = calloc(1, sizeof(*t));

	if (!t || !(t->inner = sl_datagen_source_ops.open(cfg, split, err))) {
		free(t);
		return NULL;
	}
	t->split = split;
	if (split >= nsplits_seen)
		nsplits_seen = split + 1;
	return t;
}

static int timed_poll(void *state, struct sl_src_ctx *c, int max)
{
	return sl_datagen_source_ops.poll(((struct timed_split *)state)->inner, c, max);
}

static void timed_close(void *state)
{
	struct timed_split *t = state;

	sl_datagen_source_ops.close(t->inner);
	free(t);
}

static int timed_position(void *state, void *buf, size_t cap, size_t *len)
{
	struct timed_split *t = state;

	atomic_store_explicit(&pos_ns[t->split], now_ns(), memory_order_relaxed);
	return sl_datagen_source_ops.position(t->inner, buf, cap, len);
}

static int timed_seek(void *state, const void *pos, size_t len)
{
	return sl_datagen_source_ops.seek(((struct timed_split *)state)->inner, pos, len);
}

static int timed_nsplits(const void *cfg)
{
	return sl_datagen_source_ops.nsplits(cfg);
}

static const struct sl_source_ops timed_ops = {
	.name = "datagen",
	.nsplits = timed_nsplits,
	.open = timed_open,
	.poll = timed_poll,
	.close = timed_close,
	.position = timed_position,
	.seek = timed_seek,
};

struct cost_result {
	double rate;  /* records/s over the window */
	double ratio; /* to the run without checkpoints of the same round */
	int ckpts;    /* completed inside the window */
	double dur_mean_s, dur_max_s, stall_mean_s, stall_max_s;
	double mib_mean;   /* bytes per checkpoint */
	double stall_frac; /* summed shard stalls / window: a load-independent view of the cost */
	double gap_max_s;  /* longest a shard went without processing a record in the window */
};

struct window {
	struct sl_job *job;
	double warm_s, secs;
	int64_t t_lo, t_hi;
	uint64_t n_lo, n_hi;
};

static uint64_t processed_sum(void)
{
	uint64_t s = 0;

	for (int i = 0; i < nshards; i++)
		s += atomic_load_explicit(&processed[i].n, memory_order_relaxed);
	return s;
}

static void sleep_s(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* Timer thread: counts processed records over [warm, warm + secs), then stops the job. */
static void *window_main(void *arg)
{
	struct window *w = arg;

	sleep_s(w->warm_s);
	w->n_lo = processed_sum();
	w->t_lo = now_ns();
	atomic_store(&gap_from_ns, w->t_lo);
	sleep_s(w->secs);
	w->n_hi = processed_sum();
	w->t_hi = now_ns();
	atomic_store(&gap_from_ns, 0);
	sl_job_stop(w->job);
	return NULL;
}

static void run_cost(sl_ts_t interval_ms, double warm_s, double secs, struct cost_result *res)
{
	struct sl_schema *sch = sl_schema_create();
	struct sl_datagen_field fields[2] = {
		{ .kind = SL_GEN_RANDOM, .min = 0, .max = COST_KEYS - 1 },
		{ .kind = SL_GEN_RANDOM, .min = 0, .max = 1000 },
	};
	struct sl_datagen_cfg gen = {
		.schema = sch, .fields = fields, .nsplits = nshards, .seed = 7
	};
	struct sl_wm_strategy wm = { .kind = SL_WM_NONE, .ts_field = -1 };
	struct sl_process_fn fn = { .states = cost_state, .nstates = 1, .process = cost_process };
	static struct ckpt_log log;
	struct sl_run_opts opts = { .nshards = nshards,
				    .cores = cores,
				    .checkpoint_interval_ms = interval_ms,
				    .on_checkpoint = on_ckpt,
				    .checkpoint_arg = &log };
	struct window w = { .warm_s = warm_s, .secs = secs };
	char dir[600] = "";
	struct sl_job *job = sl_job_create("ckpt_cost");
	struct sl_stream *s;
	pthread_t timer;
	int key = 0, k = 0;

	memset(res, 0, sizeof(*res));
	memset(&log, 0, sizeof log);
	for (int i = 0; i < MAX_SPLITS; i++) {
		atomic_store(&processed[i].n, 0);
		atomic_store(&processed[i].gap_max_ns, 0);
		processed[i].last_ns = 0;
	}
	if (interval_ms) {
		make_dir(dir, sizeof dir, "cost");
		opts.checkpoint_dir = dir;
		log.dir = dir;
	}
	sl_schema_add(sch, "user_id", SL_TYPE_BIGINT);
	sl_schema_add(sch, "amount", SL_TYPE_BIGINT);
	s = sl_job_source(job, "datagen", &timed_ops, &gen, sch, &wm);
	s = sl_stream_process(sl_stream_key_by(s, &key, 1), "agg", &fn, sch);
	if (sl_stream_sink(s, "nul", &nul_ops, NULL))
		die("cost job", sl_job_error(job)->msg);
	fprintf(stderr,
		"cost: checkpoint %s, %d shards, %d keys x %zu-byte values, %.0f s "
		"warm-up + %.0f s window\n",
		interval_ms ? (interval_ms == 1000 ? "every 1 s" : "every 10 s") : "never", nshards,
		COST_KEYS, sizeof(struct cost_val), warm_s, secs);
	w.job = job;
	if (pthread_create(&timer, NULL, window_main, &w))
		die("cost", "cannot start the timer thread");
	if (sl_job_run(job, &opts))
		die("cost job", sl_job_error(job)->msg);
	pthread_join(timer, NULL);
	res->rate = (double)(w.n_hi - w.n_lo) / ((double)(w.t_hi - w.t_lo) * 1e-9);
	for (int i = 0; i < log.n; i++) {
		const struct ckpt_rec *r = &log.r[i];

		if (r->done_ns < w.t_lo || r->done_ns > w.t_hi)
			continue;
		k++;
		res->dur_mean_s += r->dur_s;
		res->stall_mean_s += r->stall_s;
		res->stall_frac += r->stall_s / secs;
		res->mib_mean += (double)r->bytes / MIB;
		if (r->dur_s > res->dur_max_s)
			res->dur_max_s = r->dur_s;
		if (r->stall_s > res->stall_max_s)
			res->stall_max_s = r->stall_s;
	}
	for (int i = 0; i < nshards; i++) {
		double g = (double)atomic_load(&processed[i].gap_max_ns) * 1e-9;

		if (g > res->gap_max_s)
			res->gap_max_s = g;
	}
	res->ckpts = k;
	if (k) {
		res->dur_mean_s /= k;
		res->stall_mean_s /= k;
		res->mib_mean /= k;
	}
	fprintf(stderr,
		"cost: %.2fM records/s, %d checkpoints in the window (mean %.3f s, max "
		"%.3f s, shard stall mean %.3f s max %.3f s = %.1f%% of the window, %.1f MiB "
		"each); longest a shard processed no record: %.1f ms\n",
		res->rate / 1e6, k, res->dur_mean_s, res->dur_max_s, res->stall_mean_s,
		res->stall_max_s, 100 * res->stall_frac, res->mib_mean, res->gap_max_s * 1e3);
	sl_job_destroy(job);
	sl_schema_destroy(sch);
	if (dir[0])
		rm_tree(dir);
}

/* Adds one round's result to the mean over `rounds` rounds (checkpoint figures weighted by
 * their count). */
static void cost_add(struct cost_result *sum, const struct cost_result *r, int rounds)
{
	int k = sum->ckpts + r->ckpts;

	sum->rate += r->rate / rounds;
	sum->ratio += r->ratio / rounds;
	sum->stall_frac += r->stall_frac / rounds;
	if (k) {
		sum->dur_mean_s = (sum->dur_mean_s * sum->ckpts + r->dur_mean_s * r->ckpts) / k;
		sum->stall_mean_s =
			(sum->stall_mean_s * sum->ckpts + r->stall_mean_s * r->ckpts) / k;
		sum->mib_mean = (sum->mib_mean * sum->ckpts + r->mib_mean * r->ckpts) / k;
	}
	sum->ckpts = k;
	if (r->dur_max_s > sum->dur_max_s)
		sum->dur_max_s = r->dur_max_s;
	if (r->stall_max_s > sum->stall_max_s)
		sum->stall_max_s = r->stall_max_s;
	if (r->gap_max_s > sum->gap_max_s)
		sum->gap_max_s = r->gap_max_s;
}

/* ---- main ---- */

static const char *label(uint64_t bytes)
{
	return bytes >= (1ull << 30) ? "1gb" : "100mb";
}

static void usage(void)
{
	fprintf(stderr, "usage: ckpt_bench [--quick] [--secs S] [--only size,cost,recovery] "
			"[--rounds R] [--shards N] [--dir PARENT] [--keep] [--backend rocksdb] "
			"[--sizes 100mb|1gb|both]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	bool quick = false;
	const char *only = NULL;
	double secs = 40, warm = 5;
	uint64_t sizes[2] = { 100ull << 20, 1ull << 30 };
	int nsizes = 2, rounds = 2;
	static struct size_result sz[2], rk[2];
	const char *only_size = NULL;
	struct rec_result cold = { 0 }, warm_r = { 0 };
	struct cost_result none = { 0 }, c10 = { 0 }, c1 = { 0 };
	bool do_size, do_cost, do_rec;
	const char *L;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = true;
		} else if (!strcmp(argv[i], "--keep")) {
			keep = true;
		} else if (i + 1 >= argc) {
			usage();
		} else if (!strcmp(argv[i], "--rounds")) {
			rounds = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--secs")) {
			secs = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--only")) {
			only = argv[++i];
		} else if (!strcmp(argv[i], "--shards")) {
			nshards = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--dir")) {
			snprintf(parent, sizeof parent, "%s", argv[++i]);
		} else if (!strcmp(argv[i], "--backend")) {
			backend = argv[++i];
			if (strcmp(backend, "rocksdb") && strcmp(backend, "heap"))
				usage();
			if (!strcmp(backend, "heap"))
				backend = NULL;
		} else if (!strcmp(argv[i], "--sizes")) {
			only_size = argv[++i];
		} else {
			usage();
		}
	}
	if (nshards < 1 || nshards > MAX_SPLITS || secs < 1 || rounds < 1)
		usage();
	snprintf(cores, sizeof cores, nshards == 1 ? "0" : "0-%d", nshards - 1);
	if (quick) {
		nsizes = 1;
		secs = 12;
		warm = 2;
		rounds = 1;
	}
	if (only_size && !strcmp(only_size, "100mb"))
		nsizes = 1;
	else if (only_size && !strcmp(only_size, "1gb"))
		sizes[0] = sizes[1], nsizes = 1;
	else if (only_size && strcmp(only_size, "both"))
		usage();
	/* --only takes one part or several: "size,recovery" */
	do_size = !only || strstr(only, "size");
	do_cost = !only || strstr(only, "cost");
	do_rec = !only || strstr(only, "recovery");
	if (!do_size && !do_cost && !do_rec)
		usage();
	if (quick)
		fprintf(stderr,
			"ckpt_bench: --quick: 100 MiB of state only, recovery of 100 MiB, "
			"cost windows of %.0f s (one checkpoint at 10 s): not the figures "
			"of record\n",
			secs);

	/* the size runs; the largest one's checkpoint is the recovery's (RocksDB's with
	 * --backend rocksdb: the heap runs are then the size part's reference) */
	for (int i = do_size ? 0 : nsizes - 1; (do_size || do_rec) && i < nsizes; i++) {
		if (do_size || !backend)
			run_size(sizes[i], false, &sz[i]);
		if (backend)
			run_size(sizes[i], true, &rk[i]);
	}
	L = label(sizes[nsizes - 1]);
	if (do_rec) {
		const struct size_result *from = backend ? &rk[nsizes - 1] : &sz[nsizes - 1];

		run_recovery(from, true, &cold);
		run_recovery(from, false, &warm_r);
	}
	for (int i = 0; i < nsizes; i++) {
		if (sz[i].dir[0])
			rm_tree(sz[i].dir);
		if (rk[i].dir[0])
			rm_tree(rk[i].dir);
	}
	/* rounds interleave the three runs, so a busy minute on this shared machine hits each
	 * round's runs alike; ratios are per round, then averaged */
	for (int r = 0; do_cost && r < rounds; r++) {
		struct cost_result a, b, c;

		run_cost(0, warm, secs, &a);
		run_cost(10000, warm, secs, &b);
		run_cost(1000, warm, secs, &c);
		b.ratio = b.rate / a.rate;
		c.ratio = c.rate / a.rate;
		fprintf(stderr, "cost round %d: %.3f at 10 s, %.3f at 1 s\n", r + 1, b.ratio,
			c.ratio);
		cost_add(&none, &a, rounds);
		cost_add(&c10, &b, rounds);
		cost_add(&c1, &c, rounds);
	}

	for (int i = 0; do_size && backend && i < nsizes; i++) {
		const struct size_result *r = &rk[i], *h = &sz[i];
		const char *l = label(r->state_bytes);

		printf("FIGURE ckpt/rocks_%s_full_s %.3f s %.3f ckpt/raw_write_rocks_%s_s\n", l,
		       r->full.dur_s, r->full.dur_s / r->raw_s, l);
		printf("FIGURE ckpt/rocks_%s_full_stall_s %.3f s %.3f ckpt/rocks_%s_full_s\n", l,
		       r->full.stall_s, r->full.stall_s / r->full.dur_s, l);
		printf("FIGURE ckpt/rocks_%s_full_bytes %llu B %.4f ckpt/state_%s_bytes\n", l,
		       (unsigned long long)r->full.bytes,
		       (double)r->full.bytes / (double)r->state_bytes, l);
		printf("FIGURE ckpt/rocks_%s_full_new_bytes %llu B %.4f ckpt/rocks_%s_full_bytes\n",
		       l, (unsigned long long)r->full.new_prev,
		       (double)r->full.new_prev / (double)r->full.bytes, l);
		printf("FIGURE ckpt/rocks_%s_fill_stall_max_s %.3f s %.3f "
		       "ckpt/heap_%s_first_stall_s\n",
		       l, r->fill_stall_max_s, r->fill_stall_max_s / h->full.stall_s, l);
		printf("FIGURE ckpt/rocks_%s_incr_s %.3f s %.3f ckpt/raw_write_rocks_%s_s\n", l,
		       r->steady.dur_s, r->steady.dur_s / r->raw_s, l);
		printf("FIGURE ckpt/rocks_%s_incr_stall_s %.3f s %.3f ckpt/rocks_%s_incr_s\n", l,
		       r->steady.stall_s, r->steady.stall_s / r->steady.dur_s, l);
		printf("FIGURE ckpt/rocks_%s_incr_new_bytes %llu B %.4f ckpt/rocks_%s_full_bytes\n",
		       l, (unsigned long long)r->steady.new_bytes,
		       (double)r->steady.new_bytes / (double)r->full.bytes, l);
		printf("FIGURE ckpt/rocks_%s_incr_vs_heap %.3f x %.3f ckpt/heap_%s_s\n", l,
		       r->steady.dur_s / h->steady.dur_s, r->steady.dur_s / h->steady.dur_s, l);
		printf("FIGURE ckpt/raw_write_rocks_%s_s %.3f s - -\n", l, r->raw_s);
	}
	for (int i = 0; do_size && i < nsizes; i++) {
		const struct size_result *r = &sz[i];
		const char *l = label(r->state_bytes);

		printf("FIGURE ckpt/heap_%s_s %.3f s %.3f ckpt/raw_write_%s_s\n", l,
		       r->steady.dur_s, r->steady.dur_s / r->raw_s, l);
		printf("FIGURE ckpt/heap_%s_first_s %.3f s %.3f ckpt/raw_write_%s_s\n", l,
		       r->full.dur_s, r->full.dur_s / r->raw_s, l);
		printf("FIGURE ckpt/heap_%s_bytes %llu B %.4f ckpt/state_%s_bytes\n", l,
		       (unsigned long long)r->steady.bytes,
		       (double)r->steady.bytes / (double)r->state_bytes, l);
		printf("FIGURE ckpt/heap_%s_stall_s %.3f s %.3f ckpt/heap_%s_s\n", l,
		       r->steady.stall_s, r->steady.stall_s / r->steady.dur_s, l);
		printf("FIGURE ckpt/heap_%s_first_stall_s %.3f s %.3f ckpt/heap_%s_first_s\n", l,
		       r->full.stall_s, r->full.stall_s / r->full.dur_s, l);
		printf("FIGURE ckpt/raw_write_%s_s %.3f s - -\n", l, r->raw_s);
		printf("FIGURE ckpt/fault_in_%s_s %.3f s - -\n", l, r->fault_s);
		printf("FIGURE ckpt/state_%s_bytes %llu B - -\n", l,
		       (unsigned long long)r->state_bytes);
	}
	if (do_cost) {
		const char *q = quick ? "_quick" : "";

		printf("FIGURE ckpt/throughput_none%s %.0f records/s - -\n", q, none.rate);
		printf("FIGURE ckpt/throughput_10s%s %.0f records/s %.4f ckpt/throughput_none%s\n",
		       q, c10.rate, c10.ratio, q);
		printf("FIGURE ckpt/throughput_1s%s %.0f records/s %.4f ckpt/throughput_none%s\n",
		       q, c1.rate, c1.ratio, q);
		/* the longest a shard processed no record, against the same without checkpoints */
		printf("FIGURE ckpt/gap_none%s %.4f s - -\n", q, none.gap_max_s);
		printf("FIGURE ckpt/gap_10s%s %.4f s %.3f ckpt/gap_none%s\n", q, c10.gap_max_s,
		       none.gap_max_s > 0 ? c10.gap_max_s / none.gap_max_s : 0, q);
		printf("FIGURE ckpt/gap_1s%s %.4f s %.3f ckpt/gap_none%s\n", q, c1.gap_max_s,
		       none.gap_max_s > 0 ? c1.gap_max_s / none.gap_max_s : 0, q);
	}
	if (do_rec) {
		const char *b = backend ? "rocks_" : "";

		printf("FIGURE ckpt/%srecovery_%s_s %.3f s %.3f ckpt/%sraw_read_%s_s\n", b, L,
		       cold.all_s, cold.all_s / cold.read_s, b, L);
		printf("FIGURE ckpt/%srecovery_%s_warm_s %.3f s %.3f ckpt/%sraw_read_%s_warm_s\n",
		       b, L, warm_r.all_s, warm_r.all_s / warm_r.read_s, b, L);
		printf("FIGURE ckpt/%sraw_read_%s_s %.3f s - -\n", b, L, cold.read_s);
		printf("FIGURE ckpt/%sraw_read_%s_warm_s %.3f s - -\n", b, L, warm_r.read_s);
	}

	/* the table for the closing note */
	printf("\n| figure | value | reference (same run) | ratio | target | met? |\n");
	printf("|---|---|---|---|---|---|\n");
	for (int i = 0; do_size && i < nsizes; i++) {
		const struct size_result *r = &sz[i];
		const char *l = label(r->state_bytes);

		printf("| heap checkpoint, %s state (%lld keys x %d B), full | %.2f s, %.0f MiB "
		       "on disk (%.2fx state), shard stall %.2f s | raw write+fsync %.2f s "
		       "(%.0f MiB/s) | %.2fx | - | - |\n",
		       l, (long long)r->nkeys, VAL_SIZE, r->steady.dur_s,
		       (double)r->steady.bytes / MIB,
		       (double)r->steady.bytes / (double)r->state_bytes, r->steady.stall_s,
		       r->raw_s, (double)r->steady.bytes / MIB / r->raw_s,
		       r->steady.dur_s / r->raw_s);
		printf("| the same, the job's first full checkpoint (snapshot buffers grow) | %.2f "
		       "s, shard stall %.2f s | raw write+fsync %.2f s; first touch of as much "
		       "fresh memory %.2f s | %.2fx | - | - |\n",
		       r->full.dur_s, r->full.stall_s, r->raw_s, r->fault_s,
		       r->full.dur_s / r->raw_s);
	}
	for (int i = 0; do_size && backend && i < nsizes; i++) {
		const struct size_result *r = &rk[i], *h = &sz[i];
		const char *l = label(r->state_bytes);

		printf("| RocksDB native checkpoint, %s state, first holding every key | %.2f s, "
		       "%.0f MiB of files (%.2fx state), %.1f MiB of them new since the "
		       "checkpoint before it, shard stall %.2f s | raw write+fsync of the %.0f "
		       "MiB %.2f s | %.2fx | - | - |\n",
		       l, r->full.dur_s, (double)r->full.bytes / MIB,
		       (double)r->full.bytes / (double)r->state_bytes,
		       (double)r->full.new_prev / MIB, r->full.stall_s, (double)r->full.bytes / MIB,
		       r->raw_s, r->full.dur_s / r->raw_s);
		printf("| the %d RocksDB checkpoints taken while the state was filled (1 s "
		       "interval) | shard stall max %.2f s, %.1f s summed | heap: first full "
		       "checkpoint's stall %.2f s | %.1fx | - | - |\n",
		       r->fill_ckpts, r->fill_stall_max_s, r->fill_stall_sum_s, h->full.stall_s,
		       r->fill_stall_max_s / h->full.stall_s);
		printf("| RocksDB native checkpoint, %s state, after 1%% of the keys changed "
		       "(incremental) | %.2f s, %.1f MiB new of %.0f MiB linked (%.3fx the full "
		       "one), shard stall %.2f s | raw write+fsync %.2f s; heap full checkpoint "
		       "%.2f s | %.2fx raw, %.2fx heap | - | - |\n",
		       l, r->steady.dur_s, (double)r->steady.new_bytes / MIB,
		       (double)r->steady.bytes / MIB,
		       (double)r->steady.new_bytes / (double)r->full.bytes, r->steady.stall_s,
		       r->raw_s, h->steady.dur_s, r->steady.dur_s / r->raw_s,
		       r->steady.dur_s / h->steady.dur_s);
	}
	if (do_size && !backend)
		printf("| incremental checkpoint | heap snapshots are always full; "
		       "incremental is the RocksDB backend's: --backend rocksdb | - | - | - | - "
		       "|\n");
	if (do_cost) {
		printf("| throughput, no checkpoints%s | %.2fM records/s | - | - | - | - |\n",
		       quick ? " (quick)" : "", none.rate / 1e6);
		printf("| throughput, checkpoint every 10 s%s | %.2fM records/s; %d ckpts of %.0f "
		       "MiB, %.2f s each; shards stalled %.1f%% of the time | no checkpoints | "
		       "%.3f (cost %.1f%%) | cost <= 5%% | %s |\n",
		       quick ? " (quick)" : "", c10.rate / 1e6, c10.ckpts, c10.mib_mean,
		       c10.dur_mean_s, 100 * c10.stall_frac, c10.ratio, 100 * (1 - c10.ratio),
		       c10.ratio >= 0.95 ? "yes" : "**no**");
		printf("| throughput, checkpoint every 1 s%s | %.2fM records/s; %d ckpts of %.0f "
		       "MiB, %.2f s each; shards stalled %.1f%% of the time | no checkpoints | "
		       "%.3f (cost %.1f%%) | cost <= 15%% | %s |\n",
		       quick ? " (quick)" : "", c1.rate / 1e6, c1.ckpts, c1.mib_mean, c1.dur_mean_s,
		       100 * c1.stall_frac, c1.ratio, 100 * (1 - c1.ratio),
		       c1.ratio >= 0.85 ? "yes" : "**no**");
	}
	if (do_rec) {
		printf("| recovery%s, %s state, cold cache | %.2f s until every shard processes "
		       "(files loaded %.2f s, state rebuilt %.2f s) | read of the files %.2f s | "
		       "%.1fx | <= 5 s | %s |\n",
		       backend ? " from the RocksDB checkpoint" : "", L, cold.all_s, cold.load_s,
		       cold.restore_s, cold.read_s, cold.all_s / cold.read_s,
		       cold.all_s <= 5 ? "yes" : "**no**");
		printf("| recovery%s, %s state, warm cache | %.2f s until every shard processes "
		       "(files loaded %.2f s, state rebuilt %.2f s) | read of the files %.2f s | "
		       "%.1fx | <= 5 s | %s |\n",
		       backend ? " from the RocksDB checkpoint" : "", L, warm_r.all_s,
		       warm_r.load_s, warm_r.restore_s, warm_r.read_s, warm_r.all_s / warm_r.read_s,
		       warm_r.all_s <= 5 ? "yes" : "**no**");
	}
	return 0;
}
