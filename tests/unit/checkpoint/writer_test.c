/*
 * writer_test.c - the shard's io_uring checkpoint writer:
 * - load: 300 files of mixed sizes (empty to 6 MB) through a shallow ring, submitted in bursts
 *   between polls as a shard loop would; every file gets exactly one callback with its size
 *   and CRC32C, and its bytes on disk are exactly the submitted ones, whatever the order in
 *   which completions were reaped (a big file first makes small ones overtake it);
 * - injected ENOSPC and EIO (the test hook and the SLUICE_CKPT_FAULT variable): the failing
 *   file is reported with its path and stage and removed, the others complete, the writer is
 *   sticky until cleared;
 * - a short write: RLIMIT_FSIZE lets the kernel write only the first MiB; the writer goes on
 *   from there and reports the kernel's EFBIG for the rest, with the bytes it got;
 * - open errors (an existing file) come back from submit, with no callback.
 */
#include "crc32c.h"
#include "uring_writer.h"

#include "tests/test.h"
#include "tests/unit/checkpoint/ckpt_util.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#define NFILES 300

struct file {
	char path[512];
	uint8_t *data;
	size_t len;
	int calls;
	int error;
	uint64_t bytes;
	uint32_t crc;
	char stage[16];
	int order;
};

static int done_count;

static void on_done(void *arg, const struct sl_uring_writer_result *res)
{
	struct file *f = arg;

	T_ASSERT(!strcmp(res->path, f->path));
	f->calls++;
	f->error = res->error;
	f->bytes = res->bytes;
	f->crc = res->crc32c;
	snprintf(f->stage, sizeof(f->stage), "%s", res->stage ? res->stage : "");
	f->order = done_count++;
}

static size_t size_of(int i)
{
	if (i == 0)
		return 6 << 20; /* a big one first: the rest can overtake it */
	if (i % 50 == 1)
		return 0;
	return (size_t)((i * 7919) % 200000) + 1;
}

static void test_load(const char *dir)
{
	struct file *f = calloc(NFILES, sizeof(*f));
	struct sl_uring_writer *w;
	int err, submitted = 0, finished = 0, overtakes = 0;

	w = sl_uring_writer_create(16, &err);
	if (!w) {
		fprintf(stderr, "io_uring unavailable: %s\n", strerror(-err));
		exit(T_EXIT_SKIP);
	}
	done_count = 0;
	while (submitted < NFILES) {
		/* A burst of up to 17 files, then one loop turn. */
		for (int k = 0; k < 17 && submitted < NFILES; k++, submitted++) {
			struct file *x = &f[submitted];

			snprintf(x->path, sizeof(x->path), "%s/load-%d.state", dir, submitted);
			x->len = size_of(submitted);
			x->data = malloc(x->len ? x->len : 1);
			util_fill(x->data, x->len, (uint64_t)submitted);
			T_ASSERT(sl_uring_writer_submit(w, x->path, x->data, x->len, on_done, x) == 0);
		}
		finished += sl_uring_writer_poll(w);
	}
	finished += sl_uring_writer_drain(w);
	T_ASSERT_EQ_I64(finished, NFILES);
	T_ASSERT_EQ_I64(sl_uring_writer_inflight(w), 0);
	T_ASSERT_EQ_I64(sl_uring_writer_error(w), 0);
	for (int i = 0; i < NFILES; i++) {
		uint8_t *disk = NULL;
		long n;

		T_ASSERT_EQ_I64(f[i].calls, 1);
		T_ASSERT_EQ_I64(f[i].error, 0);
		T_ASSERT_EQ_I64(f[i].bytes, f[i].len);
		T_ASSERT_EQ_I64(f[i].crc, sl_crc32c(0, f[i].data, f[i].len));
		n = util_read(f[i].path, &disk);
		T_ASSERT_EQ_I64(n, (long)f[i].len);
		T_ASSERT(!memcmp(disk, f[i].data, f[i].len));
		free(disk);
		if (i && f[i].order < f[i - 1].order)
			overtakes++;
	}
	printf("load: %d files, %d completed before an earlier submitted one\n", NFILES, overtakes);
	for (int i = 0; i < NFILES; i++)
		free(f[i].data);
	free(f);
	sl_uring_writer_destroy(w);
}

static void test_inject(const char *dir, int fault, const char *env)
{
	struct file f[5] = { 0 };
	uint8_t data[5][4096];
	struct sl_uring_writer *w;
	int err;

	if (env)
		setenv("SLUICE_CKPT_FAULT", env, 1);
	w = sl_uring_writer_create(0, &err);
	unsetenv("SLUICE_CKPT_FAULT");
	T_ASSERT(w);
	if (!env)
		sl_uring_writer_inject(w, fault, 3);
	for (int i = 0; i < 5; i++) {
		snprintf(f[i].path, sizeof(f[i].path), "%s/inj%d-%d.state", dir, -fault, i);
		util_fill(data[i], sizeof(data[i]), 100 + i);
		T_ASSERT(sl_uring_writer_submit(w, f[i].path, data[i], sizeof(data[i]), on_done, &f[i]) ==
			 0);
	}
	sl_uring_writer_drain(w);
	for (int i = 0; i < 5; i++) {
		struct stat sb;

		T_ASSERT_EQ_I64(f[i].calls, 1);
		if (i == 2) {
			T_ASSERT_EQ_I64(f[i].error, fault);
			T_ASSERT(!strcmp(f[i].stage, "write"));
			T_ASSERT(stat(f[i].path, &sb) != 0); /* removed */
			printf("injected: %s: %s failed: %s\n", f[i].path, f[i].stage,
			       strerror(-f[i].error));
		} else {
			T_ASSERT_EQ_I64(f[i].error, 0);
			T_ASSERT(stat(f[i].path, &sb) == 0 && sb.st_size == 4096);
		}
	}
	/* Sticky: nothing more is accepted until the failed checkpoint is abandoned. */
	T_ASSERT_EQ_I64(sl_uring_writer_error(w), fault);
	{
		char p[512];

		snprintf(p, sizeof(p), "%s/after%d.state", dir, -fault);
		T_ASSERT_EQ_I64(sl_uring_writer_submit(w, p, data[0], 10, on_done, &f[0]), fault);
		T_ASSERT(access(p, F_OK) != 0);
		sl_uring_writer_clear(w);
		f[0].calls = 0;
		snprintf(f[0].path, sizeof(f[0].path), "%s", p);
		T_ASSERT(sl_uring_writer_submit(w, p, data[0], 10, on_done, &f[0]) == 0);
		sl_uring_writer_drain(w);
		T_ASSERT_EQ_I64(f[0].calls, 1);
		T_ASSERT_EQ_I64(f[0].error, 0);
	}
	sl_uring_writer_destroy(w);
}

static void test_short_write(const char *dir)
{
	struct rlimit old, lim;
	struct file f = { 0 };
	struct sl_uring_writer *w;
	size_t len = 3 << 20;
	uint8_t *data = malloc(len);
	int err;

	util_fill(data, len, 5);
	signal(SIGXFSZ, SIG_IGN);
	T_ASSERT(getrlimit(RLIMIT_FSIZE, &old) == 0);
	lim = old;
	lim.rlim_cur = 1 << 20;
	T_ASSERT(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	w = sl_uring_writer_create(0, &err);
	T_ASSERT(w);
	snprintf(f.path, sizeof(f.path), "%s/short.state", dir);
	T_ASSERT(sl_uring_writer_submit(w, f.path, data, len, on_done, &f) == 0);
	sl_uring_writer_drain(w);
	T_ASSERT(setrlimit(RLIMIT_FSIZE, &old) == 0);
	T_ASSERT_EQ_I64(f.calls, 1);
	printf("short write: %s: %llu of %zu bytes, then %s at %s\n", f.path,
	       (unsigned long long)f.bytes, len, strerror(-f.error), f.stage);
	T_ASSERT_EQ_I64(f.error, -EFBIG);
	T_ASSERT(!strcmp(f.stage, "write"));
	T_ASSERT_EQ_I64(f.bytes, 1 << 20); /* the short write was taken and continued */
	T_ASSERT(access(f.path, F_OK) != 0);
	sl_uring_writer_destroy(w);
	free(data);
}

static void test_open_error(const char *dir)
{
	struct file f = { 0 };
	struct sl_uring_writer *w;
	char p[600];
	int err;

	w = sl_uring_writer_create(0, &err);
	T_ASSERT(w);
	snprintf(p, sizeof(p), "%s/exists.state", dir);
	util_write(p, "x", 1);
	T_ASSERT_EQ_I64(sl_uring_writer_submit(w, p, "y", 1, on_done, &f), -EEXIST);
	snprintf(p, sizeof(p), "%s/no/such/dir.state", dir);
	T_ASSERT_EQ_I64(sl_uring_writer_submit(w, p, "y", 1, on_done, &f), -ENOENT);
	T_ASSERT_EQ_I64(sl_uring_writer_poll(w), 0);
	T_ASSERT_EQ_I64(f.calls, 0);
	T_ASSERT_EQ_I64(sl_uring_writer_error(w), 0); /* refused at submit: nothing to undo */
	sl_uring_writer_destroy(w);
	sl_uring_writer_destroy(NULL);
}

int main(void)
{
	char dir[256];

	util_tmpdir(dir, sizeof(dir), "ckw");
	test_load(dir);
	test_inject(dir, -ENOSPC, NULL);
	test_inject(dir, -EIO, "EIO:3");
	test_short_write(dir);
	test_open_error(dir);
	util_rm_rf(dir);
	return T_EXIT_PASS;
}
