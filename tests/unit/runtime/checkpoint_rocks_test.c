/*
 * checkpoint_rocks_test.c - native RocksDB checkpoints through the whole job path: a
 * generated source (released a step per checkpoint, so checkpoints fall mid-input) ->
 * key_by -> a counting keyed process function on the rocksdb backend -> a sink keeping each key's largest count,
 * checkpointed every 20 ms into a directory.
 *
 *  1. incremental: a job whose source first writes every key once, waits for a checkpoint,
 *     then changes 1% of the keys and waits for another; the second checkpoint's SST files
 *     are mostly the first's (same inode), and its new bytes are a small part of the first's
 *     (checkpoints 200 ms apart here, so no level-0 compaction rewrites the SSTs between);
 *  2. every checkpoint is native (op<id>-s<shard>/ directories listed in the manifest) and
 *     verifies;
 *  3. a run stopped mid-input, restored on the same shard count and (from a copy) on
 *     another, ends with every key's count exact: state lost or doubled at restore would
 *     show as a count off by the records before the checkpoint;
 *     A restart after the end checkpoints the restored files again with the checksums the
 *     restored manifest gave (no re-read), and that checkpoint verifies;
 *  4. a corrupt SST (one byte flipped) and a missing SST in the newest checkpoint (its
 *     MANIFEST copy when it has no SST of its own, newest_own_file): recovery says which
 *     file, restores the checkpoint before it, and the counts are still exact.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sluice/job.h>

#include "manifest.h"
#include "snap.h"
#include "store.h"
#include "test.h"

#define NKEYS	20000
#define ROUNDS	5   /* each key's records in the restore runs */
#define STEP (NKEYS * ROUNDS / 10) /* RESTORE: rows the source may emit per checkpoint */
#define NSMALL	(NKEYS / 100)

static const struct sl_state_desc count_state[] = {
	{ .name = "count", .kind = SL_STATE_VALUE, .value_size = 8 },
};

static _Atomic int64_t max_count[NKEYS];

/* ---- the source: one split; rows seq 0.. with key seq % NKEYS ---------------------------- */

enum mode { RESTORE, PHASED };

static enum mode mode;
static int64_t total;		/* rows of the input */
static _Atomic int64_t emitted; /* rows emitted so far (this run) */
static _Atomic int64_t allowed; /* PHASED: rows the source may emit now */
/* RESTORE: checkpoints completed in this run. The source emits STEP rows more after each,
 * so checkpoints fall mid-input however slow or busy the machine is (a clock-driven
 * rate let a stalled run catch up and finish all keys before its k-th checkpoint). */
static _Atomic int64_t ck_done;
static struct sl_job *_Atomic stopping; /* stop it once the source reached stop_rows */
static _Atomic int64_t stop_rows;

struct gen {
	int64_t next;
	int64_t base; /* where this run started: 0, or the restored position */
};

static int gen_nsplits(const void *cfg)
{
	return 1;
}

static void *gen_open(const void *cfg, int split, struct sl_error *err)
{
	return calloc(1, sizeof(struct gen));
}

/* PHASED: rows 0..NKEYS-1 are every key once, then NSMALL rows change 1% of the keys. */
static int64_t key_of(int64_t seq)
{
	if (mode == PHASED && seq >= NKEYS)
		return (seq - NKEYS) * 100 % NKEYS;
	return seq % NKEYS;
}

static int gen_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct gen *g = state;
	int64_t limit = mode == PHASED ? atomic_load(&allowed)
				       : g->base + (atomic_load(&ck_done) + 1) * STEP;
	int n = 0;

	if (g->next >= total)
		return SL_SRC_EOF;
	while (n < max && g->next < total && g->next < limit) {
		struct sl_row_builder b;

		sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 2);
		sl_rowb_set_i64(&b, 0, key_of(g->next));
		sl_rowb_set_i64(&b, 1, g->next);
		T_ASSERT(sl_src_emit(c, sl_rowb_finish(&b)) == 0);
		g->next++;
		n++;
	}
	atomic_fetch_add(&emitted, n);
	if (atomic_load(&stopping) && g->next >= atomic_load(&stop_rows))
		sl_job_stop(atomic_load(&stopping));
	return n;
}

static int gen_position(void *state, void *buf, size_t cap, size_t *len)
{
	memcpy(buf, &((struct gen *)state)->next, 8);
	*len = 8;
	return 0;
}

static int gen_seek(void *state, const void *pos, size_t len)
{
	struct gen *g = state;

	if (len != 8)
		return -EINVAL;
	memcpy(&g->next, pos, 8);
	/* the limit counts from the restored position */
	g->base = g->next;
	return 0;
}

static void gen_close(void *state)
{
	free(state);
}

static const struct sl_source_ops gen_ops = {
	.name = "gen",
	.nsplits = gen_nsplits,
	.open = gen_open,
	.poll = gen_poll,
	.close = gen_close,
	.position = gen_position,
	.seek = gen_seek,
};

/* ---- the job ------------------------------------------------------------------------------ */

static void count_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	int64_t *n = sl_value_put(ctx, 0);
	struct sl_row_builder *b = sl_ctx_out(ctx);

	T_ASSERT(n);
	(*n)++;
	sl_rowb_set_i64(b, 0, sl_row_i64(row, 0));
	sl_rowb_set_i64(b, 1, *n);
	sl_emit(ctx, ts, sl_rowb_finish(b));
}

static void *nop_open(const void *cfg, const struct sl_schema *schema, int shard, int nshards,
		      struct sl_error *err)
{
	return calloc(1, 8);
}

static int max_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	int64_t k = sl_row_i64(row, 0), c = sl_row_i64(row, 1), cur;

	cur = atomic_load(&max_count[k]);
	while (c > cur && !atomic_compare_exchange_weak(&max_count[k], &cur, c))
		;
	return 0;
}

static int nop_flush(void *state)
{
	return 0;
}

static void nop_close(void *state)
{
	free(state);
}

static const struct sl_sink_ops max_ops = {
	.name = "max",
	.open = nop_open,
	.write = max_write,
	.flush = nop_flush,
	.close = nop_close,
};

struct run {
	const char *dir;
	int nshards;
	sl_ts_t interval; /* ms between checkpoints; 0: 20 */
	int (*on_ck)(struct sl_job *job, uint64_t ckpt, void *arg);
	uint64_t checkpoints;
	int64_t records_in;
};

/* Every checkpoint of a run: counted for the source's limit, then the run's own callback. */
static int count_ck(struct sl_job *job, uint64_t n, void *arg)
{
	struct run *r = arg;

	atomic_fetch_add(&ck_done, 1);
	return r->on_ck ? r->on_ck(job, n, arg) : 0;
}

static int run_job(struct run *r)
{
	struct sl_schema *sch = sl_schema_create();
	struct sl_wm_strategy wm = { .kind = SL_WM_NONE, .ts_field = -1 };
	struct sl_process_fn fn = { .states = count_state, .nstates = 1, .process = count_process };
	struct sl_run_opts opts = { .nshards = r->nshards,
				    .checkpoint_interval_ms = r->interval ? r->interval : 20,
				    .checkpoint_dir = r->dir,
				    .on_checkpoint = count_ck,
				    .checkpoint_arg = r,
				    .state_backend = "rocksdb",
				    .state_memory = (size_t)64 << 20 };
	struct sl_job_stats st;
	int key[1] = { 0 }, rc;
	struct sl_job *job = sl_job_create("ckrocks");
	struct sl_stream *s;

	sl_schema_add(sch, "key", SL_TYPE_BIGINT);
	sl_schema_add(sch, "seq", SL_TYPE_BIGINT);
	s = sl_job_source(job, "gen", &gen_ops, NULL, sch, &wm);
	s = sl_stream_process(sl_stream_key_by(s, key, 1), "count", &fn, sch);
	T_ASSERT(sl_stream_sink(s, "max", &max_ops, NULL) == 0);
	atomic_store(&emitted, 0);
	atomic_store(&ck_done, 0);
	atomic_store(&stopping, NULL);
	rc = sl_job_run(job, &opts);
	if (rc)
		fprintf(stderr, "run: %s\n", sl_job_error(job)->msg);
	sl_job_stats(job, &st);
	r->checkpoints = st.checkpoints;
	r->records_in = (int64_t)st.records_in;
	printf("ckrocks: %d shards, %llu records in, %llu checkpoints, %llu failed\n", r->nshards,
	       (unsigned long long)st.records_in, (unsigned long long)st.checkpoints,
	       (unsigned long long)st.checkpoints_failed);
	T_ASSERT_EQ_I64(st.checkpoints_failed, 0);
	sl_job_destroy(job);
	sl_schema_destroy(sch);
	return rc;
}

static void sh(const char *fmt, const char *a, const char *b)
{
	char cmd[2048];

	snprintf(cmd, sizeof cmd, fmt, a, b);
	T_ASSERT(system(cmd) == 0);
}

/* ---- 1. incremental ------------------------------------------------------------------------
 *
 * on_checkpoint runs after checkpoint n is durable and before n+1 starts, so once it sees a
 * phase's rows all emitted, checkpoint n+1 holds them all. Each phase's checkpoint is kept
 * aside by hard links (cp -al: the same inodes), out of retention's reach.
 */
static int stage;
static uint64_t mark, full_id, incr_id;
static char saved_full[512], saved_incr[512];

static int phased_ck(struct sl_job *job, uint64_t n, void *arg)
{
	struct run *r = arg;
	char from[600];

	snprintf(from, sizeof from, "%s/chk-%" PRIu64, r->dir, n);
	if (stage == 0) {
		/* right after a checkpoint: the bulk is in before the next one, in one flush */
		atomic_store(&allowed, NKEYS);
		stage = 1;
	} else if (stage == 1 && atomic_load(&emitted) == NKEYS) {
		mark = n;
		stage = 2;
	} else if (stage == 2 && n > mark) {
		full_id = n;
		sh("cp -al '%s' '%s'", from, saved_full);
		atomic_store(&allowed, NKEYS + NSMALL);
		stage = 3;
	} else if (stage == 3 && atomic_load(&emitted) == NKEYS + NSMALL) {
		mark = n;
		stage = 4;
	} else if (stage == 4 && n > mark) {
		incr_id = n;
		sh("cp -al '%s' '%s'", from, saved_incr);
		stage = 5;
		sl_job_stop(job);
	}
	return 0;
}

/* Sums the SST bytes of every op*-s* directory of checkpoint copy `dir`, and of those the
 * bytes that are the same inode as the same-named file in `base` (NULL: none). Returns the
 * number of native directories. */
static int sst_bytes(const char *dir, const char *base, uint64_t *all, uint64_t *shared,
		     uint64_t *nonsst)
{
	DIR *d = opendir(dir), *sd;
	struct dirent *de, *se;
	int ndirs = 0;

	T_ASSERT(d);
	*all = *shared = *nonsst = 0;
	while ((de = readdir(d))) {
		char sub[1024], bsub[1024], f[1400], bf[1400];
		struct stat st, bst;

		if (strncmp(de->d_name, "op", 2) || strstr(de->d_name, ".state"))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
		snprintf(bsub, sizeof bsub, "%s/%s", base ? base : "", de->d_name);
		sd = opendir(sub);
		T_ASSERT(sd);
		ndirs++;
		while ((se = readdir(sd))) {
			size_t n = strlen(se->d_name);

			if (se->d_name[0] == '.')
				continue;
			snprintf(f, sizeof f, "%s/%s", sub, se->d_name);
			T_ASSERT(stat(f, &st) == 0);
			if (n < 4 || strcmp(se->d_name + n - 4, ".sst")) {
				*nonsst += (uint64_t)st.st_size;
				continue;
			}
			*all += (uint64_t)st.st_size;
			snprintf(bf, sizeof bf, "%s/%s", bsub, se->d_name);
			if (base && !stat(bf, &bst) && bst.st_ino == st.st_ino)
				*shared += (uint64_t)st.st_size;
		}
		closedir(sd);
	}
	closedir(d);
	return ndirs;
}

static void test_incremental(const char *root)
{
	char dir[512];
	/* checkpoints far apart: each phase's rows land in one memtable flush, so the level-0
	 * files stay below RocksDB's compaction trigger (4) and nothing rewrites the full
	 * checkpoint's SSTs between the two */
	struct run r = { .dir = dir, .nshards = 2, .on_ck = phased_ck, .interval = 200 };
	uint64_t fall, fshared, fsmall, iall, ishared, ismall;

	snprintf(dir, sizeof dir, "%s/phased", root);
	snprintf(saved_full, sizeof saved_full, "%s/saved-full", root);
	snprintf(saved_incr, sizeof saved_incr, "%s/saved-incr", root);
	mode = PHASED;
	total = NKEYS + NSMALL + 1; /* never reached: the job ends by sl_job_stop */
	atomic_store(&allowed, 0);
	stage = 0;
	run_job(&r);
	T_ASSERT(stage == 5);
	T_ASSERT(sst_bytes(saved_full, NULL, &fall, &fshared, &fsmall) == 2);
	T_ASSERT(sst_bytes(saved_incr, saved_full, &iall, &ishared, &ismall) == 2);
	printf("incremental: full checkpoint %" PRIu64 ": %" PRIu64 " SST bytes (+%" PRIu64
	       " other); after 1%% of keys changed, checkpoint %" PRIu64 ": %" PRIu64
	       " SST bytes, %" PRIu64 " of them the full one's files (same inode), new %" PRIu64
	       " SST + %" PRIu64 " other\n",
	       full_id, fall, fsmall, incr_id, iall, ishared, iall - ishared, ismall);
	/* 20000 keys x (17-byte prefix + 8-byte key + 8-byte count) */
	T_ASSERT(fall > NKEYS * 10);
	/* most of the second checkpoint is the first one's files, linked */
	T_ASSERT(ishared >= iall * 3 / 4);
	T_ASSERT(iall - ishared + ismall < (fall + fsmall) / 4);
	sh("rm -rf '%s' '%s'", dir, saved_full);
	sh("rm -rf '%s'%s", saved_incr, "");
}

/* ---- 2.-4. restore ------------------------------------------------------------------------ */

static int stop_at;

/* At the k-th checkpoint: stop once the source has emitted the rows that checkpoint let it
 * emit, so the final checkpoint holds rows (and SSTs) the k-th does not. */
static int stop_ck(struct sl_job *job, uint64_t n, void *arg)
{
	if (--stop_at == 0) {
		atomic_store(&stop_rows, (atomic_load(&ck_done) + 1) * STEP);
		atomic_store(&stopping, job);
	}
	return 0;
}

/* The newest checkpoint verifies and is native: its manifest lists op<id>-s<shard>/ files. */
static uint64_t check_native(const char *dir)
{
	int err = 0, native = 0;
	struct sl_ckpt_store *st = sl_ckpt_store_open(dir, &err);
	struct sl_ckpt_manifest m = { 0 };
	uint64_t id;

	T_ASSERT(st);
	T_ASSERT(sl_ckpt_store_find_latest(st, NULL, &m) == 0);
	for (uint32_t i = 0; i < m.nfiles; i++)
		native += sl_ckpt_path_is_native(m.files[i].path);
	T_ASSERT(native >= 2 * 3); /* two shards' SSTs, MANIFEST, CURRENT, OPTIONS at least */
	id = m.ckpt_id;
	sl_ckpt_manifest_fini(&m);
	sl_ckpt_store_close(st);
	return id;
}

static void reset_counts(void)
{
	for (int k = 0; k < NKEYS; k++)
		atomic_store(&max_count[k], 0);
}

static void check_counts(const char *what)
{
	int bad = 0;

	for (int k = 0; k < NKEYS; k++)
		if (atomic_load(&max_count[k]) != ROUNDS && bad++ < 5)
			fprintf(stderr, "%s: key %d counted %" PRId64 ", not %d\n", what, k,
				atomic_load(&max_count[k]), ROUNDS);
	T_ASSERT(bad == 0);
	printf("%s: every key's count exact\n", what);
}

/* Runs the job on `dir` with stderr captured; returns the checkpoint it said it restored
 * (0: none) and leaves stderr's text in log. */
static uint64_t restore_run(const char *dir, int nshards, char *log, size_t cap)
{
	char path[600];
	struct run r = { .dir = dir, .nshards = nshards };
	int fd, saved = dup(2);
	const char *p;
	ssize_t n;

	snprintf(path, sizeof path, "%s.stderr", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	T_ASSERT(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, 2);
	T_ASSERT(run_job(&r) == 0);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, log, cap - 1, 0);
	close(fd);
	unlink(path);
	log[n > 0 ? n : 0] = '\0';
	fputs(log, stderr);
	/* the restored run read only what came after its checkpoint */
	T_ASSERT(r.records_in < total);
	p = strstr(log, "restoring checkpoint ");
	return p ? strtoull(p + strlen("restoring checkpoint "), NULL, 10) : 0;
}

/*
 * A file of checkpoint `id`'s native directories whose name ends with `suffix` (or begins
 * with it, when `prefix`) and that checkpoint id - 1 does not share (no same-named file of
 * the same inode). false: none.
 */
static bool own_file(const char *dir, uint64_t id, const char *suffix, bool prefix, char *out,
		     size_t cap)
{
	char top[600], sub[1000], prev[1000], f[1300], pf[1300];
	size_t sl = strlen(suffix);
	DIR *t, *d;
	struct dirent *te, *de;

	snprintf(top, sizeof top, "%s/chk-%" PRIu64, dir, id);
	t = opendir(top);
	T_ASSERT(t);
	while ((te = readdir(t))) {
		if (strncmp(te->d_name, "op", 2) || strstr(te->d_name, ".state"))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", top, te->d_name);
		snprintf(prev, sizeof prev, "%s/chk-%" PRIu64 "/%s", dir, id - 1, te->d_name);
		d = opendir(sub);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			size_t n = strlen(de->d_name);
			struct stat a, b;

			if (n < sl || (prefix ? strncmp(de->d_name, suffix, sl)
					      : strcmp(de->d_name + n - sl, suffix)))
				continue;
			snprintf(f, sizeof f, "%s/%s", sub, de->d_name);
			snprintf(pf, sizeof pf, "%s/%s", prev, de->d_name);
			if (!stat(f, &a) && (stat(pf, &b) || a.st_ino != b.st_ino)) {
				snprintf(out, cap, "%s", f);
				closedir(d);
				closedir(t);
				return true;
			}
		}
		closedir(d);
	}
	closedir(t);
	return false;
}

/*
 * The file of the newest checkpoint to damage: an SST the one before it does not share. A
 * periodic checkpoint can come between the stopped run's last rows and its final
 * checkpoint (seen under ASan, where the shards are slow), and then the final one has no
 * SST of its own; its MANIFEST copy is always its own (RocksDB copies it into every
 * checkpoint) and is checked by the same manifest CRC, so the fall-back is tested either way.
 */
static void newest_own_file(const char *dir, uint64_t id, char *out, size_t cap)
{
	if (own_file(dir, id, ".sst", false, out, cap))
		return;
	T_ASSERT(own_file(dir, id, "MANIFEST-", true, out, cap));
	printf("checkpoint %" PRIu64 " has no SST of its own: damaging %s instead\n", id, out);
}

static void flip_byte(const char *path)
{
	int fd = open(path, O_RDWR);
	uint8_t c;

	T_ASSERT(fd >= 0);
	T_ASSERT(pread(fd, &c, 1, 100) == 1);
	c ^= 0x5a;
	T_ASSERT(pwrite(fd, &c, 1, 100) == 1);
	close(fd);
}

/* The sink's counts when the stopped run ended: each restore starts from them, as a
 * restart would (what the sink saw stays seen). */
static int64_t at_stop[NKEYS];

static void back_to_stop(void)
{
	for (int k = 0; k < NKEYS; k++)
		atomic_store(&max_count[k], at_stop[k]);
}

/* A run stopped after its `k`-th checkpoint; returns the newest checkpoint's id. */
static uint64_t stopped_run(const char *dir, int k)
{
	struct run r = { .dir = dir, .nshards = 2, .on_ck = stop_ck };
	int complete = 0;

	reset_counts();
	stop_at = k;
	T_ASSERT(run_job(&r) == 0);
	T_ASSERT(r.records_in < total);
	for (int i = 0; i < NKEYS; i++) {
		at_stop[i] = atomic_load(&max_count[i]);
		complete += at_stop[i] == ROUNDS;
	}
	/* else the restores could not tell a lost state from a kept one */
	T_ASSERT(complete == 0);
	return check_native(dir);
}

static void test_restore(const char *root)
{
	static char log[65536];
	char dir[512], copy[512], copy2[512], copy3[512], sst[1300];
	uint64_t newest, got, finished;

	snprintf(dir, sizeof dir, "%s/restore", root);
	snprintf(copy, sizeof copy, "%s/restore-copy", root);
	snprintf(copy2, sizeof copy2, "%s/restore-copy2", root);
	snprintf(copy3, sizeof copy3, "%s/restore-copy3", root);
	mode = RESTORE;
	total = (int64_t)NKEYS * ROUNDS;

	newest = stopped_run(dir, 3);
	/* real copies: each restore gets the same checkpoints, and their inodes of its own */
	sh("cp -a '%s' '%s'", dir, copy);
	sh("cp -a '%s' '%s'", dir, copy2);
	sh("cp -a '%s' '%s'", dir, copy3);

	/* same shard count: the checkpoint directories are linked in */
	got = restore_run(dir, 2, log, sizeof log);
	T_ASSERT_EQ_I64(got, newest);
	check_counts("restore on 2 shards (as taken)");
	/* the restored run's own checkpoints verify: the newest one is theirs */
	finished = check_native(dir);
	T_ASSERT(finished > newest);
	/* a restart after the end: nothing to read, and a final checkpoint of the restored
	 * files, whose checksums come from the restored manifest (not read again): it must
	 * verify, or the newest complete one would be the one restored */
	got = restore_run(dir, 2, log, sizeof log);
	T_ASSERT_EQ_I64(got, finished);
	T_ASSERT(check_native(dir) > finished);
	check_counts("restart after the end");

	/* 2 -> 3 shards: key groups move, each new instance loads the old ones' ranges */
	back_to_stop();
	got = restore_run(copy, 3, log, sizeof log);
	T_ASSERT_EQ_I64(got, newest);
	check_counts("restore on 3 shards");
	T_ASSERT(check_native(copy) > newest);

	/* a corrupt file of the newest checkpoint: named, and the one before it restored */
	newest_own_file(copy2, newest, sst, sizeof sst);
	flip_byte(sst);
	back_to_stop();
	got = restore_run(copy2, 2, log, sizeof log);
	T_ASSERT(strstr(log, sst) && strstr(log, "CRC32C"));
	T_ASSERT_EQ_I64(got, newest - 1);
	check_counts("restore after a corrupt file (previous checkpoint)");

	/* a missing file likewise */
	newest_own_file(copy3, newest, sst, sizeof sst);
	T_ASSERT(unlink(sst) == 0);
	back_to_stop();
	got = restore_run(copy3, 2, log, sizeof log);
	T_ASSERT(strstr(log, sst) && strstr(log, "missing"));
	T_ASSERT_EQ_I64(got, newest - 1);
	check_counts("restore after a missing file (previous checkpoint)");
}

int main(void)
{
	char root[] = "/tmp/sluice-ckrocks-XXXXXX";

	T_ASSERT(mkdtemp(root));
	test_incremental(root);
	test_restore(root);
	sh("rm -rf '%s'%s", root, "");
	return T_EXIT_PASS;
}
