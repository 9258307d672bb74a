/*
 * file_split.c - cutting a file source's files into byte ranges that begin at record starts
 * (sl_file_plan_ranges), so one large file is read by every shard, as Flink's file source
 * splits a file by blocks.
 *
 * A boundary is wanted every split_bytes; the range then begins at the first record start at
 * or after it. For JSON lines, Debezium JSON and CSV without any '"' a record is a line, so
 * the start is just after the first '\n' at or after offset target - 1: one small read per
 * boundary. A CSV field in quotes may hold a line break, and whether a given line break is
 * inside quotes can only be told by reading from the file's start; a CSV file that holds a
 * '"' anywhere is therefore read once through the file source's own reader
 * (sl_file_scan_starts), which cuts records exactly as the splits will. Checking for a quote
 * costs one read of the file at memchr speed; the exact pass costs about a tenth of
 * decoding it, once, at plan time.
 *
 * The ranges depend on the files' bytes and split_bytes only: the same on every shard count,
 * on every restore (file_source.c checks a restored position against its range).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_split.h"

#define SCAN_READ (1u << 20)

static int read_fail(struct sl_error *err, const char *path, int e)
{
	err->code = -e;
	snprintf(err->msg, sizeof err->msg, "file source: cannot read '%s' to plan its splits: %s",
		 path, strerror(e));
	return -e;
}

/* Reads fd at off into buf (up to cap bytes); the count, 0 at EOF, or -errno. */
static ssize_t read_at(int fd, char *buf, size_t cap, uint64_t off)
{
	ssize_t n;

	do
		n = pread(fd, buf, cap, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* Whether the file holds a '"'. 1, 0 or -errno. */
static int has_quote(int fd, char *buf)
{
	uint64_t off = 0;
	ssize_t n;

	while ((n = read_at(fd, buf, SCAN_READ, off)) > 0) {
		if (memchr(buf, '"', (size_t)n))
			return 1;
		off += (uint64_t)n;
	}
	return n < 0 ? (int)n : 0;
}

/* Line starts: starts[i] just after the first '\n' at or after targets[i] - 1. */
static int line_starts(int fd, char *buf, struct sl_file_scan *scan)
{
	for (int i = 0; i < scan->n; i++) {
		uint64_t off = scan->targets[i] - 1;
		ssize_t n;

		scan->starts[i] = UINT64_MAX;
		while ((n = read_at(fd, buf, SCAN_READ, off)) > 0) {
			const char *nl = memchr(buf, '\n', (size_t)n);

			if (nl) {
				scan->starts[i] = off + (uint64_t)(nl - buf) + 1;
				break;
			}
			off += (uint64_t)n;
		}
		if (n < 0)
			return (int)n;
	}
	return 0;
}

/* Appends range [begin, end) of file `path` to *v (growing it). 0 or -ENOMEM. */
static int push(struct sl_file_range **v, int *n, int *cap, int path, uint64_t begin, uint64_t end)
{
	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 16;
		struct sl_file_range *nv = realloc(*v, (size_t)nc * sizeof(**v));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = (struct sl_file_range){ .path = path, .begin = begin, .end = end };
	return 0;
}

/* The ranges of file `path` (size bytes): boundaries found, duplicates and those at the end
 * dropped. */
static int plan_file(const struct sl_file_source_cfg *cfg, int path, uint64_t size,
		     uint64_t split_bytes, char *buf, struct sl_file_range **v, int *n, int *cap,
		     struct sl_error *err)
{
	int nt = (int)((size - 1) / split_bytes), rc = 0, fd;
	uint64_t *targets = malloc((size_t)nt * sizeof(*targets) * 2), begin = 0;
	struct sl_file_scan scan = { .n = nt };

	if (!targets)
		return -ENOMEM;
	for (int i = 0; i < nt; i++)
		targets[i] = (uint64_t)(i + 1) * split_bytes;
	scan.targets = targets;
	scan.starts = targets + nt;
	fd = open(cfg->paths[path], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = read_fail(err, cfg->paths[path], errno);
		goto out;
	}
	rc = cfg->format == SL_FORMAT_CSV ? has_quote(fd, buf) : 0;
	if (rc == 0)
		rc = line_starts(fd, buf, &scan);
	else if (rc == 1) {
		rc = sl_file_scan_starts(cfg, path, &scan, err);
		for (int i = scan.next; i < nt; i++)
			scan.starts[i] = UINT64_MAX;
	}
	close(fd);
	if (rc < 0) {
		if (!err->code)
			read_fail(err, cfg->paths[path], -rc);
		goto out;
	}
	for (int i = 0; i < nt && !rc; i++) {
		uint64_t s = scan.starts[i];

		if (s == UINT64_MAX || s >= size || s <= begin)
			continue;
		rc = push(v, n, cap, path, begin, s);
		begin = s;
	}
	if (!rc)
		rc = push(v, n, cap, path, begin, UINT64_MAX);
out:
	free(targets);
	return rc;
}

int sl_file_plan_ranges(const struct sl_file_source_cfg *cfg, uint64_t split_bytes,
			struct sl_file_range **out, int *nout, struct sl_error *err)
{
	struct sl_file_range *v = NULL;
	int n = 0, cap = 0, rc = 0;
	char *buf = malloc(SCAN_READ);

	*out = NULL;
	*nout = 0;
	err->code = 0;
	err->msg[0] = 0;
	if (!buf)
		goto nomem;
	for (int p = 0; p < cfg->npaths && !rc; p++) {
		struct stat st;

		/* unreadable yet, small, or not cut: one range; the split reports a missing
		 * file when it opens */
		if (!split_bytes || stat(cfg->paths[p], &st) < 0 || !S_ISREG(st.st_mode) ||
		    (uint64_t)st.st_size <= split_bytes)
			rc = push(&v, &n, &cap, p, 0, UINT64_MAX);
		else
			rc = plan_file(cfg, p, (uint64_t)st.st_size, split_bytes, buf, &v, &n, &cap,
				       err);
	}
	free(buf);
	if (rc == -ENOMEM && !err->code)
		goto nomem;
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*nout = n;
	return 0;
nomem:
	free(v);
	err->code = -ENOMEM;
	snprintf(err->msg, sizeof err->msg, "file source: out of memory planning splits");
	return -ENOMEM;
}
