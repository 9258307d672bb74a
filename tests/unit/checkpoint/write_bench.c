/*
 * write_bench.c - a 100 MB state file through the shard's io_uring writer vs a plain
 * write()+fsync() loop, in the same run on the same disk.
 *
 * Prints per method the best and median of 5 rounds (alternating, so page-cache and disk
 * state favour neither), and for the writer what the shard thread itself spends: in submit
 * (open + CRC32C + queueing) and the longest single poll, which is what record processing
 * waits for. Usage: ckpt_write_bench [DIR] [MB]  (default $TMPDIR or /tmp, 100).
 */
#include "crc32c.h"
#include "uring_writer.h"

#include "tests/test.h"
#include "tests/unit/checkpoint/ckpt_util.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 5

static unsigned nap_us;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void on_done(void *arg, const struct sl_uring_writer_result *res)
{
	*(int *)arg = res->error ? res->error : 1;
}

static double plain(const char *path, const uint8_t *data, size_t len, bool crc)
{
	double t0 = now();
	size_t off = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	volatile uint32_t c;

	T_ASSERT(fd >= 0);
	if (crc)
		c = sl_crc32c(0, data, len);
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		T_ASSERT(w > 0);
		off += (size_t)w;
	}
	T_ASSERT(fsync(fd) == 0);
	T_ASSERT(close(fd) == 0);
	(void)c;
	return now() - t0;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double ring(struct sl_uring_writer *w, const char *path, const uint8_t *data, size_t len,
		   double *submit_s, double *max_poll_s, double *max_poll_cpu_s)
{
	double t0 = now(), t1;
	int state = 0;

	T_ASSERT(sl_uring_writer_submit(w, path, data, len, on_done, &state) == 0);
	*submit_s = now() - t0;
	*max_poll_s = 0;
	*max_poll_cpu_s = 0;
	while (!state) {
		double p0 = now(), c0 = cpu_now(), d, dc;

		sl_uring_writer_poll(w);
		d = now() - p0;
		dc = cpu_now() - c0;
		if (d > *max_poll_s)
			*max_poll_s = d;
		if (dc > *max_poll_cpu_s)
			*max_poll_cpu_s = dc;
		/* A shard would process records here; the bench spins, or naps (SL_BENCH_NAP_US)
		 * to leave the second core to io_uring's worker and writeback. */
		if (nap_us)
			usleep(nap_us);
	}
	t1 = now();
	T_ASSERT_EQ_I64(state, 1);
	return t1 - t0;
}

int main(int argc, char **argv)
{
	const char *t = getenv("TMPDIR");
	const char *base = argc > 1 ? argv[1] : t && *t ? t : "/tmp";
	size_t mb = argc > 2 ? strtoul(argv[2], NULL, 10) : 100, len = mb << 20;
	double tp[ROUNDS], tpc[ROUNDS], tr[ROUNDS], sub[ROUNDS], poll[ROUNDS], pollc[ROUNDS];
	char dir[512], path[600];
	uint8_t *data = malloc(len);
	struct sl_uring_writer *w;
	int err;

	if (getenv("SL_BENCH_NAP_US"))
		nap_us = (unsigned)strtoul(getenv("SL_BENCH_NAP_US"), NULL, 10);
	snprintf(dir, sizeof(dir), "%s/sl-ckwbench-XXXXXX", base);
	T_ASSERT(mkdtemp(dir));
	util_fill(data, len, 1);
	w = sl_uring_writer_create(0, &err);
	if (!w)
		return T_EXIT_SKIP;
	for (int r = 0; r < ROUNDS; r++) {
		snprintf(path, sizeof(path), "%s/ring-%d", dir, r);
		tr[r] = ring(w, path, data, len, &sub[r], &poll[r], &pollc[r]);
		unlink(path);
		snprintf(path, sizeof(path), "%s/plain-%d", dir, r);
		tp[r] = plain(path, data, len, false);
		unlink(path);
		snprintf(path, sizeof(path), "%s/plaincrc-%d", dir, r);
		tpc[r] = plain(path, data, len, true);
		unlink(path);
	}
	qsort(tr, ROUNDS, sizeof(double), cmp_d);
	qsort(tp, ROUNDS, sizeof(double), cmp_d);
	qsort(tpc, ROUNDS, sizeof(double), cmp_d);
	qsort(sub, ROUNDS, sizeof(double), cmp_d);
	qsort(poll, ROUNDS, sizeof(double), cmp_d);
	qsort(pollc, ROUNDS, sizeof(double), cmp_d);
	printf("state file %zu MB on %s, %d rounds (MB/s best / median), poll loop %s\n", mb, base,
	       ROUNDS, nap_us ? "napping between polls" : "spinning");
	printf("  io_uring writer (write+fsync linked, CRC32C): %7.0f / %7.0f\n", mb / tr[0],
	       mb / tr[ROUNDS / 2]);
	printf("  plain write()+fsync() loop:                   %7.0f / %7.0f\n", mb / tp[0],
	       mb / tp[ROUNDS / 2]);
	printf("  plain write()+fsync() loop + CRC32C:          %7.0f / %7.0f\n", mb / tpc[0],
	       mb / tpc[ROUNDS / 2]);
	printf("  ratio writer / plain (median):                %7.2f\n",
	       tp[ROUNDS / 2] / tr[ROUNDS / 2]);
	printf("  shard thread: submit (open+queue) median %.2f ms; longest poll median %.3f ms "
	       "wall, %.3f ms on-CPU (worst round %.3f ms on-CPU)\n",
	       sub[ROUNDS / 2] * 1e3, poll[ROUNDS / 2] * 1e3, pollc[ROUNDS / 2] * 1e3,
	       pollc[ROUNDS - 1] * 1e3);
	sl_uring_writer_destroy(w);
	util_rm_rf(dir);
	free(data);
	return T_EXIT_PASS;
}
