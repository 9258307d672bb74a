/*
 * store_test.c - the checkpoint directory end to end: state files written through the
 * io_uring writer, manifests committed, recovery and retention.
 * - round trip: checkpoints of 3 operators x 2 shards with source positions and sink metas;
 *   the newest one is found, verified and every state file loads back byte for byte;
 * - retention keeps the newest N complete ones, drops abandoned incomplete ones, leaves an
 *   in-progress one alone;
 * - crash consistency: a truncated manifest, a flipped byte in a state file, a missing state
 *   file, a truncated state file, a temp manifest never renamed: recovery takes the previous
 *   checkpoint and reports one line naming the file and the cause; discard_after then
 *   quarantines the broken one and ids are never reused;
 * - a checkpoint of another job is refused, not skipped.
 */
#include "crc32c.h"
#include "manifest.h"
#include "snap.h"
#include "store.h"
#include "uring_writer.h"

#include "tests/test.h"
#include "tests/unit/checkpoint/ckpt_util.h"

#include <errno.h>
#include <unistd.h>

#define NOPS	3
#define NSHARDS 2
#define JOB	"job:plan-7e1"

static char reports[16384];

static void capture(void *arg, const char *line)
{
	(void)arg;
	strncat(reports, line, sizeof(reports) - strlen(reports) - 2);
	strcat(reports, "\n");
}

static size_t state_len(uint64_t n, uint32_t op, uint32_t sh)
{
	return (size_t)(n * 1000 + op * 37 + sh * 11000) % 70000 + (op == 2 ? 0 : 1);
}

static uint64_t state_seed(uint64_t n, uint32_t op, uint32_t sh)
{
	return n * 10000 + op * 100 + sh;
}

struct pending {
	struct sl_ckpt_manifest *m;
	uint32_t op, shard;
	char name[64];
	int err;
};

static void on_written(void *arg, const struct sl_uring_writer_result *res)
{
	struct pending *p = arg;

	p->err = res->error;
	if (!res->error)
		T_ASSERT(sl_ckpt_manifest_add_file(p->m, p->op, p->shard, p->name, res->bytes,
						   res->crc32c) == 0);
}

/* Writes checkpoint n's state files through the writer; commits unless `commit` is false. */
static void make_ckpt(struct sl_ckpt_store *st, struct sl_uring_writer *w, uint64_t n, bool commit)
{
	struct sl_ckpt_manifest m;
	struct pending p[NOPS * NSHARDS];
	uint8_t *bufs[NOPS * NSHARDS];
	int k = 0;

	T_ASSERT(sl_ckpt_store_begin(st, n) == 0);
	T_ASSERT(sl_ckpt_manifest_init(&m, JOB, n, NSHARDS, 128) == 0);
	for (uint32_t op = 1; op <= NOPS; op++)
		for (uint32_t sh = 0; sh < NSHARDS; sh++, k++) {
			char path[512];
			size_t len = state_len(n, op, sh);

			p[k] = (struct pending){ .m = &m, .op = op, .shard = sh, .err = 1 };
			T_ASSERT(sl_ckpt_state_name(op, sh, 0, p[k].name, sizeof(p[k].name)) == 0);
			T_ASSERT(sl_ckpt_store_path(st, n, p[k].name, path, sizeof(path)) == 0);
			bufs[k] = malloc(len + 1);
			util_fill(bufs[k], len, state_seed(n, op, sh));
			T_ASSERT(sl_uring_writer_submit(w, path, bufs[k], len, on_written, &p[k]) ==
				 0);
		}
	sl_uring_writer_drain(w);
	for (int i = 0; i < k; i++) {
		T_ASSERT_EQ_I64(p[i].err, 0);
		free(bufs[i]);
	}
	for (uint32_t s = 0; s < 3; s++) {
		uint64_t pos = n * 100 + s;

		T_ASSERT(sl_ckpt_manifest_add_source(&m, 0, s, &pos, sizeof(pos)) == 0);
	}
	for (uint32_t i = 0; i < NSHARDS; i++) {
		char meta[64];
		int len = snprintf(meta, sizeof(meta), "rename .part-%u-%llu", i,
				   (unsigned long long)n);

		T_ASSERT(sl_ckpt_manifest_add_sink(&m, 9, i, meta, (uint32_t)len) == 0);
	}
	if (commit)
		T_ASSERT(sl_ckpt_store_commit(st, &m) == 0);
	sl_ckpt_manifest_fini(&m);
}

static bool exists(struct sl_ckpt_store *st, uint64_t n, const char *rel)
{
	char path[512];

	T_ASSERT(sl_ckpt_store_path(st, n, rel, path, sizeof(path)) == 0);
	return access(path, F_OK) == 0;
}

/* The newest checkpoint found must be `want`, with every state file loading back intact. */
static void expect_latest(struct sl_ckpt_store *st, uint64_t want)
{
	struct sl_ckpt_manifest m;
	struct sl_snap_buf buf;

	T_ASSERT_EQ_I64(sl_ckpt_store_find_latest(st, JOB, &m), 0);
	T_ASSERT_EQ_I64(m.ckpt_id, want);
	T_ASSERT_EQ_I64(m.nshards, NSHARDS);
	T_ASSERT_EQ_I64(m.max_parallelism, 128);
	T_ASSERT(!strcmp(m.job_id, JOB));
	T_ASSERT_EQ_I64(m.nfiles, NOPS * NSHARDS);
	T_ASSERT_EQ_I64(m.nsources, 3);
	T_ASSERT_EQ_I64(m.nsinks, NSHARDS);
	{
		uint64_t pos;

		memcpy(&pos, m.sources[2].bytes, 8);
		T_ASSERT_EQ_I64(pos, want * 100 + 2);
	}
	sl_snap_init(&buf);
	for (uint32_t i = 0; i < m.nfiles; i++) {
		const struct sl_ckpt_state_file *f = &m.files[i];
		size_t len = state_len(want, f->op_id, f->shard);
		uint8_t *exp = malloc(len + 1);

		util_fill(exp, len, state_seed(want, f->op_id, f->shard));
		sl_snap_reset(&buf);
		T_ASSERT_EQ_I64(sl_ckpt_store_load(st, &m, i, &buf), 0);
		T_ASSERT_EQ_I64(buf.len, len);
		T_ASSERT(!memcmp(buf.data, exp, len));
		free(exp);
	}
	sl_snap_free(&buf);
	sl_ckpt_manifest_fini(&m);
}

static struct sl_ckpt_store *fresh(char *dir, size_t cap, const char *tag)
{
	struct sl_ckpt_store *st;
	char sub[600];
	int err;

	util_tmpdir(dir, cap, tag);
	snprintf(sub, sizeof(sub), "%s/ckpts", dir); /* open creates it */
	st = sl_ckpt_store_open(sub, &err);
	T_ASSERT(st);
	sl_ckpt_store_set_report(st, capture, NULL);
	reports[0] = 0;
	return st;
}

static void test_round_trip_and_retention(struct sl_uring_writer *w)
{
	char dir[256];
	struct sl_ckpt_store *st = fresh(dir, sizeof(dir), "store");
	struct sl_ckpt_manifest m;

	T_ASSERT_EQ_I64(sl_ckpt_store_find_latest(st, JOB, &m), -ENOENT);
	T_ASSERT(strstr(reports, "no complete checkpoint"));
	T_ASSERT_EQ_I64(sl_ckpt_store_next_id(st), 1);
	make_ckpt(st, w, 1, true);
	make_ckpt(st, w, 2, true);
	expect_latest(st, 2);
	T_ASSERT_EQ_I64(sl_ckpt_store_begin(st, 2), -EEXIST);

	/* 3 is abandoned (begun, never committed); 4 and 5 complete. */
	make_ckpt(st, w, 3, false);
	make_ckpt(st, w, 4, true);
	T_ASSERT(!exists(st, 1, NULL) && exists(st, 2, NULL) && !exists(st, 3, NULL));
	make_ckpt(st, w, 5, true);
	T_ASSERT(!exists(st, 2, NULL) && exists(st, 4, "MANIFEST") && exists(st, 5, "MANIFEST"));
	/* 6 is in progress: retention must not touch it. */
	make_ckpt(st, w, 6, false);
	T_ASSERT_EQ_I64(sl_ckpt_store_retain(st), 0);
	T_ASSERT(exists(st, 4, NULL) && exists(st, 5, NULL) && exists(st, 6, "op1-s0.state"));
	expect_latest(st, 5); /* and says chk-6 has no manifest */
	T_ASSERT(strstr(reports, "chk-6/MANIFEST: checkpoint 6 incomplete: no manifest"));
	T_ASSERT_EQ_I64(sl_ckpt_store_next_id(st), 7);

	/* keep 3 */
	sl_ckpt_store_set_keep(st, 3);
	T_ASSERT_EQ_I64(sl_ckpt_store_abort(st, 6), 0);
	T_ASSERT(!exists(st, 6, NULL));
	make_ckpt(st, w, 7, true);
	make_ckpt(st, w, 8, true);
	T_ASSERT(!exists(st, 4, NULL) && exists(st, 5, NULL) && exists(st, 7, NULL) &&
		 exists(st, 8, NULL));
	expect_latest(st, 8);

	/* Another job's checkpoint is refused, not skipped. */
	T_ASSERT_EQ_I64(sl_ckpt_store_find_latest(st, "job:other", &m), -EINVAL);
	T_ASSERT(strstr(reports, "refusing"));
	sl_ckpt_store_close(st);
	util_rm_rf(dir);
}

enum damage { TRUNC_MANIFEST, FLIP_STATE, MISSING_STATE, TRUNC_STATE, TEMP_MANIFEST };

static void test_damage(struct sl_uring_writer *w, enum damage d, const char *expect)
{
	char dir[256], path[512];
	struct sl_ckpt_store *st = fresh(dir, sizeof(dir), "damage");
	uint64_t broken = d == TEMP_MANIFEST ? 3 : 2;
	uint8_t *b;
	long n;

	sl_ckpt_store_set_keep(st, 5);
	make_ckpt(st, w, 1, true);
	make_ckpt(st, w, 2, true);
	switch (d) {
	case TRUNC_MANIFEST:
		sl_ckpt_store_path(st, 2, "MANIFEST", path, sizeof(path));
		T_ASSERT(truncate(path, 60) == 0);
		break;
	case FLIP_STATE:
		sl_ckpt_store_path(st, 2, "op3-s1.state", path, sizeof(path));
		n = util_read(path, &b);
		T_ASSERT(n > 100);
		b[n / 2] ^= 0x01;
		util_write(path, b, (size_t)n);
		free(b);
		break;
	case MISSING_STATE:
		sl_ckpt_store_path(st, 2, "op1-s1.state", path, sizeof(path));
		T_ASSERT(unlink(path) == 0);
		break;
	case TRUNC_STATE:
		sl_ckpt_store_path(st, 2, "op3-s0.state", path, sizeof(path));
		T_ASSERT(truncate(path, 10) == 0);
		break;
	case TEMP_MANIFEST:
		/* Crash between writing the temp manifest and the rename. */
		make_ckpt(st, w, 3, false);
		sl_ckpt_store_path(st, 2, "MANIFEST", path, sizeof(path));
		n = util_read(path, &b);
		sl_ckpt_store_path(st, 3, "MANIFEST.tmp", path, sizeof(path));
		util_write(path, b, (size_t)n);
		free(b);
		break;
	}
	reports[0] = 0;
	expect_latest(st, d == TEMP_MANIFEST ? 2 : 1);
	printf("%s", reports);
	T_ASSERT(strstr(reports, expect));
	{
		char chk[64];

		snprintf(chk, sizeof(chk), "chk-%llu/", (unsigned long long)broken);
		T_ASSERT(strstr(reports, chk));
	}
	/* Restoring the older one: the broken one is moved aside (or dropped if incomplete). */
	T_ASSERT_EQ_I64(sl_ckpt_store_discard_after(st, d == TEMP_MANIFEST ? 2 : 1), 1);
	T_ASSERT(!exists(st, broken, NULL));
	snprintf(path, sizeof(path), "%s/ckpts/corrupt-chk-%llu", dir, (unsigned long long)broken);
	T_ASSERT_EQ_I64(access(path, F_OK) == 0, d != TEMP_MANIFEST);
	T_ASSERT_EQ_I64(sl_ckpt_store_next_id(st), d == TEMP_MANIFEST ? 3 : 3);
	/* Recovery goes on without a report about the quarantined one, and new checkpoints
	 * push it out once it is older than every kept one. */
	sl_ckpt_store_set_keep(st, 1);
	make_ckpt(st, w, 4, true);
	T_ASSERT_EQ_I64(access(path, F_OK), -1);
	reports[0] = 0;
	expect_latest(st, 4);
	T_ASSERT_EQ_I64(reports[0], 0);
	sl_ckpt_store_close(st);
	util_rm_rf(dir);
}

/* A state file damaged after recovery verified it is still caught by load. */
static void test_load_recheck(struct sl_uring_writer *w)
{
	char dir[256], path[512];
	struct sl_ckpt_store *st = fresh(dir, sizeof(dir), "reload");
	struct sl_ckpt_manifest m;
	struct sl_snap_buf buf;
	uint8_t *b;
	long n;

	make_ckpt(st, w, 1, true);
	T_ASSERT_EQ_I64(sl_ckpt_store_find_latest(st, NULL, &m), 0);
	sl_ckpt_store_path(st, 1, m.files[0].path, path, sizeof(path));
	n = util_read(path, &b);
	b[0] ^= 0x80;
	util_write(path, b, (size_t)n);
	free(b);
	sl_snap_init(&buf);
	T_ASSERT_EQ_I64(sl_ckpt_store_load(st, &m, 0, &buf), -EINVAL);
	T_ASSERT(strstr(reports, "corrupt"));
	T_ASSERT_EQ_I64(buf.len, 0);
	T_ASSERT_EQ_I64(sl_ckpt_store_load(st, &m, 99, &buf), -EINVAL);
	sl_snap_free(&buf);
	sl_ckpt_manifest_fini(&m);
	sl_ckpt_store_close(st);
	util_rm_rf(dir);
}

/* Every complete checkpoint damaged: not a first start (-ENOENT) but -EBADMSG, naming
 * them; an incomplete one alone is still a first start. */
static void test_all_damaged(struct sl_uring_writer *w)
{
	char dir[256], path[512], names[64];
	struct sl_ckpt_store *st = fresh(dir, sizeof(dir), "alldamaged");
	struct sl_ckpt_manifest m;

	make_ckpt(st, w, 1, false);
	T_ASSERT_EQ_I64(sl_ckpt_store_find_latest(st, JOB, &m), -ENOENT);
	T_ASSERT_EQ_I64(sl_ckpt_store_abort(st, 1), 0);
	make_ckpt(st, w, 2, true);
	make_ckpt(st, w, 3, true);
	sl_ckpt_store_path(st, 3, "MANIFEST", path, sizeof(path));
	T_ASSERT(truncate(path, 60) == 0);
	sl_ckpt_store_path(st, 2, "op1-s1.state", path, sizeof(path));
	T_ASSERT(unlink(path) == 0);
	reports[0] = 0;
	T_ASSERT_EQ_I64(sl_ckpt_store_find_latest(st, JOB, &m), -EBADMSG);
	T_ASSERT(strstr(reports, "chk-3/MANIFEST") && strstr(reports, "op1-s1.state: missing"));
	T_ASSERT(strstr(reports, "no usable checkpoint: 2 complete ones are damaged"));
	T_ASSERT_EQ_I64(sl_ckpt_store_list_complete(st, UINT64_MAX, names, sizeof names), 2);
	T_ASSERT(!strcmp(names, "chk-3, chk-2"));
	T_ASSERT_EQ_I64(sl_ckpt_store_list_complete(st, 3, names, sizeof names), 1);
	T_ASSERT(!strcmp(names, "chk-2"));
	/* once moved aside (--start-fresh), the directory is a first start again */
	T_ASSERT_EQ_I64(sl_ckpt_store_discard_after(st, 0), 2);
	T_ASSERT_EQ_I64(sl_ckpt_store_find_latest(st, JOB, &m), -ENOENT);
	T_ASSERT_EQ_I64(sl_ckpt_store_next_id(st), 4);
	sl_ckpt_store_close(st);
	util_rm_rf(dir);
}

/* A zombie: run A begins 2 and stops; run B on the same directory removes A's incomplete
 * chk-2 (recovery) and completes its own 2. A, resumed, must neither put its manifest over
 * B's nor remove B's directory on abort. */
static void test_zombie(struct sl_uring_writer *w)
{
	char dir[256], sub[600];
	struct sl_ckpt_store *a = fresh(dir, sizeof(dir), "zombie"), *b;
	struct sl_ckpt_manifest m;
	int err;

	snprintf(sub, sizeof(sub), "%s/ckpts", dir);
	b = sl_ckpt_store_open(sub, &err);
	T_ASSERT(b);
	sl_ckpt_store_set_report(b, capture, NULL);
	make_ckpt(a, w, 1, true);
	T_ASSERT_EQ_I64(sl_ckpt_store_begin(a, 2), 0);
	T_ASSERT_EQ_I64(sl_ckpt_store_discard_after(b, 1), 1);
	make_ckpt(b, w, 2, true);
	T_ASSERT(sl_ckpt_manifest_init(&m, JOB, 2, NSHARDS, 128) == 0);
	reports[0] = 0;
	T_ASSERT_EQ_I64(sl_ckpt_store_commit(a, &m), -ESTALE);
	T_ASSERT(strstr(reports, "this one is a zombie"));
	T_ASSERT_EQ_I64(sl_ckpt_store_abort(a, 2), -ESTALE);
	sl_ckpt_manifest_fini(&m);
	expect_latest(b, 2); /* B's manifest and state files, intact */
	sl_ckpt_store_close(a);
	sl_ckpt_store_close(b);
	util_rm_rf(dir);
}

int main(void)
{
	struct sl_uring_writer *w;
	int err;

	w = sl_uring_writer_create(8, &err);
	if (!w) {
		fprintf(stderr, "io_uring unavailable: %s\n", strerror(-err));
		return T_EXIT_SKIP;
	}
	test_round_trip_and_retention(w);
	test_damage(w, TRUNC_MANIFEST, "truncated or extended");
	test_damage(w, FLIP_STATE, "op3-s1.state: CRC32C");
	test_damage(w, MISSING_STATE, "op1-s1.state: missing");
	test_damage(w, TRUNC_STATE, "op3-s0.state: 10 bytes, the manifest says");
	test_damage(w, TEMP_MANIFEST, "only a temp manifest");
	test_load_recheck(w);
	test_all_damaged(w);
	test_zombie(w);
	sl_uring_writer_destroy(w);
	return T_EXIT_PASS;
}
