/*
 * enospc_test.c - a full or failing disk under checkpoints: the error is reported with the
 * file, the failed checkpoint is aborted, and recovery still finds the last good one.
 * - always: ENOSPC injected into the shard writer (the deterministic path CI relies on);
 * - as root where `mount -t tmpfs -o size=64k` works: a real full file system, for state
 *   files (the writer) and for the manifest (the commit); unmounted at exit.
 */
#include "manifest.h"
#include "store.h"
#include "uring_writer.h"

#include "tests/test.h"
#include "tests/unit/checkpoint/ckpt_util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

static char reports[8192];
static char mnt[256];

static void capture(void *arg, const char *line)
{
	(void)arg;
	strncat(reports, line, sizeof(reports) - strlen(reports) - 2);
	strcat(reports, "\n");
}

struct slot {
	struct sl_ckpt_manifest *m;
	char name[32];
	int err;
	char path[512];
};

static void on_written(void *arg, const struct sl_uring_writer_result *res)
{
	struct slot *s = arg;

	s->err = res->error;
	if (res->error)
		snprintf(s->path, sizeof(s->path), "%s: %s: %s", res->path, res->stage,
			 strerror(-res->error));
	else
		T_ASSERT(sl_ckpt_manifest_add_file(s->m, 1, 0, s->name, res->bytes, res->crc32c) ==
			 0);
}

/*
 * Checkpoint n: `nfiles` files of `size` bytes, then commit. Returns the first file error
 * (the checkpoint is then aborted, as the coordinator would) or the commit's result.
 */
static int checkpoint(struct sl_ckpt_store *st, struct sl_uring_writer *w, uint64_t n, int nfiles,
		      size_t size)
{
	struct sl_ckpt_manifest m;
	struct slot s[16] = { 0 };
	uint8_t *data = malloc(size);
	int rc = 0;

	util_fill(data, size, n);
	T_ASSERT(sl_ckpt_store_begin(st, n) == 0);
	T_ASSERT(sl_ckpt_manifest_init(&m, "job", n, 1, 1) == 0);
	for (int i = 0; i < nfiles; i++) {
		char path[512];

		s[i].m = &m;
		snprintf(s[i].name, sizeof(s[i].name), "f%d.state", i);
		T_ASSERT(sl_ckpt_store_path(st, n, s[i].name, path, sizeof(path)) == 0);
		rc = sl_uring_writer_submit(w, path, data, size, on_written, &s[i]);
		if (rc)
			break; /* sticky: an earlier file of this checkpoint failed */
	}
	sl_uring_writer_drain(w);
	for (int i = 0; i < nfiles && !rc; i++)
		if (s[i].err) {
			rc = s[i].err;
			printf("checkpoint %llu: %s\n", (unsigned long long)n, s[i].path);
			T_ASSERT(strstr(s[i].path, "f") && strstr(s[i].path, "No space"));
		}
	if (!rc)
		rc = sl_ckpt_store_commit(st, &m);
	if (rc) {
		T_ASSERT(sl_ckpt_store_abort(st, n) == 0);
		sl_uring_writer_clear(w);
	}
	sl_ckpt_manifest_fini(&m);
	free(data);
	return rc;
}

static void expect_latest(struct sl_ckpt_store *st, uint64_t n)
{
	struct sl_ckpt_manifest m;

	T_ASSERT_EQ_I64(sl_ckpt_store_find_latest(st, "job", &m), 0);
	T_ASSERT_EQ_I64(m.ckpt_id, n);
	sl_ckpt_manifest_fini(&m);
}

static void test_injected(struct sl_uring_writer *w)
{
	char dir[256];
	struct sl_ckpt_store *st;
	int err;

	util_tmpdir(dir, sizeof(dir), "nospc");
	st = sl_ckpt_store_open(dir, &err);
	T_ASSERT(st);
	sl_ckpt_store_set_report(st, capture, NULL);
	T_ASSERT_EQ_I64(checkpoint(st, w, 1, 4, 5000), 0);
	sl_uring_writer_inject(w, -ENOSPC, 2);
	T_ASSERT_EQ_I64(checkpoint(st, w, 2, 4, 5000), -ENOSPC);
	expect_latest(st, 1);
	T_ASSERT_EQ_I64(checkpoint(st, w, 3, 4, 5000), 0); /* and the job goes on */
	expect_latest(st, 3);
	sl_ckpt_store_close(st);
	util_rm_rf(dir);
}

static void unmount_at_exit(void)
{
	if (mnt[0]) {
		umount2(mnt, MNT_DETACH);
		rmdir(mnt);
		mnt[0] = 0;
	}
}

/* Fills the file system; returns the filler's path. */
static void fill(const char *dir, char *path, size_t cap)
{
	char block[4096];
	int fd;

	memset(block, 'z', sizeof(block));
	snprintf(path, cap, "%s/filler", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	T_ASSERT(fd >= 0);
	while (write(fd, block, sizeof(block)) > 0)
		;
	T_ASSERT(errno == ENOSPC);
	/* Partial pages: top up byte by byte until not even one fits. */
	while (write(fd, block, 1) > 0)
		;
	close(fd);
}

static bool test_tmpfs(struct sl_uring_writer *w)
{
	char dir[300], filler[320];
	struct sl_ckpt_store *st;
	int err;

	if (geteuid() != 0)
		return false;
	util_tmpdir(mnt, sizeof(mnt), "tmpfs");
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k")) {
		printf("tmpfs: mount failed (%s): injected faults only\n", strerror(errno));
		rmdir(mnt);
		mnt[0] = 0;
		return false;
	}
	atexit(unmount_at_exit);
	snprintf(dir, sizeof(dir), "%s/ckpts", mnt);
	st = sl_ckpt_store_open(dir, &err);
	T_ASSERT(st);
	sl_ckpt_store_set_report(st, capture, NULL);
	T_ASSERT_EQ_I64(checkpoint(st, w, 1, 2, 4000), 0);
	/* 6 x 16 KiB cannot fit in what is left of 64 KiB. */
	T_ASSERT_EQ_I64(checkpoint(st, w, 2, 6, 16384), -ENOSPC);
	expect_latest(st, 1);
	/* The aborted checkpoint gave its space back: a small one fits again. */
	T_ASSERT_EQ_I64(checkpoint(st, w, 3, 2, 4000), 0);
	expect_latest(st, 3);
	/* State files fit, but the manifest finds the disk full. */
	{
		struct sl_ckpt_manifest m;
		char tmp[512];

		T_ASSERT(sl_ckpt_store_begin(st, 4) == 0);
		T_ASSERT(sl_ckpt_manifest_init(&m, "job", 4, 1, 1) == 0);
		fill(mnt, filler, sizeof(filler));
		reports[0] = 0;
		T_ASSERT_EQ_I64(sl_ckpt_store_commit(st, &m), -ENOSPC);
		printf("%s", reports);
		T_ASSERT(strstr(reports, "chk-4/MANIFEST.tmp: checkpoint 4 not completed: "
					 "manifest write failed: No space"));
		sl_ckpt_store_path(st, 4, "MANIFEST.tmp", tmp, sizeof(tmp));
		T_ASSERT(access(tmp, F_OK) != 0);
		expect_latest(st, 3);
		unlink(filler);
		T_ASSERT_EQ_I64(sl_ckpt_store_commit(st, &m), 0);
		expect_latest(st, 4);
		sl_ckpt_manifest_fini(&m);
	}
	sl_ckpt_store_close(st);
	unmount_at_exit();
	return true;
}

int main(void)
{
	struct sl_uring_writer *w;
	int err;

	w = sl_uring_writer_create(0, &err);
	if (!w) {
		fprintf(stderr, "io_uring unavailable: %s\n", strerror(-err));
		return T_EXIT_SKIP;
	}
	test_injected(w);
	if (!test_tmpfs(w))
		printf("tmpfs ENOSPC: not root or no tmpfs mount here: injected faults only\n");
	sl_uring_writer_destroy(w);
	return T_EXIT_PASS;
}
