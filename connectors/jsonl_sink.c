/*
 * jsonl_sink.c - the filesystem sink (JSON lines or CSV): each shard's instance writes its
 * own part file (`<dir>/part-<shard>.jsonl` or `.csv`), or a single-shard sink writes the
 * named file, one JSON object or CSV record per row in the format the file source reads back.
 *
 * Rows are encoded into a per-instance buffer and written in large chunks (when full and on
 * flush()), so a row costs its encoding only. Files are not shared between shards, so no
 * lock is taken. Exactly-once part-file commits (temp names renamed at checkpoint) belong to
 * the checkpoint protocol, not here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sluice/connectors.h>

#include "sink_io.h"

#define JSONL_BUF (256u << 10)

struct jsonl_sink {
	const struct sl_jsonl_sink_cfg *cfg;
	const struct sl_schema *schema;
	int fd;
	char *buf;
	size_t cap, used;
};

static void *fail(struct sl_error *err, int code, const char *path, const char *what)
{
	err->code = code;
	snprintf(err->msg, sizeof err->msg, "jsonl sink: %s '%.160s': %s", what, path,
		 strerror(-code));
	return NULL;
}

static void *jsonl_open(const void *cfgp, const struct sl_schema *schema, int shard,
			int nshards, struct sl_error *err)
{
	const struct sl_jsonl_sink_cfg *cfg = cfgp;
	char file[4096];
	struct jsonl_sink *j;
	struct stat st;
	bool dir;

	if (!cfg || !cfg->path)
		return fail(err, -EINVAL, "", "no path");
	if (cfg->format != SL_FORMAT_JSON && cfg->format != SL_FORMAT_CSV)
		return fail(err, -EINVAL, cfg->path, "format must be JSON or CSV for");
	dir = stat(cfg->path, &st) == 0 && S_ISDIR(st.st_mode);
	if (!dir && nshards > 1) {
		/* several part files need a directory: make it (other shards may race us) */
		if (mkdir(cfg->path, 0755) < 0 && errno != EEXIST)
			return fail(err, -errno, cfg->path, "cannot create directory");
		if (stat(cfg->path, &st) < 0 || !S_ISDIR(st.st_mode))
			return fail(err, -ENOTDIR, cfg->path, "needs a directory for part files");
		dir = true;
	}
	if (dir) {
		if (snprintf(file, sizeof file, "%s/part-%d.%s", cfg->path, shard,
			     cfg->format == SL_FORMAT_CSV ? "csv" : "jsonl") >= (int)sizeof file)
			return fail(err, -ENAMETOOLONG, cfg->path, "path too long");
	} else {
		snprintf(file, sizeof file, "%s", cfg->path);
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return fail(err, -ENOMEM, file, "cannot open");
	j->cfg = cfg;
	j->schema = schema;
	j->cap = JSONL_BUF;
	j->buf = malloc(j->cap);
	if (!j->buf)
		goto out_free;
	j->fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (j->fd < 0) {
		int e = -errno;

		free(j->buf);
		free(j);
		return fail(err, e, file, "cannot open");
	}
	return j;

out_free:
	free(j);
	return fail(err, -ENOMEM, file, "cannot open");
}

static int jsonl_flush(void *state)
{
	struct jsonl_sink *j = state;
	int rc;

	if (!j->used)
		return 0;
	rc = sl_sink_write_all(j->fd, j->buf, j->used, NULL);
	j->used = 0;
	return rc;
}

static int encode(struct jsonl_sink *j, const struct sl_row *row, char *buf, size_t cap)
{
	if (j->cfg->format == SL_FORMAT_CSV)
		return sl_csv_write_row(row, j->schema, &j->cfg->csv, buf, cap);
	return sl_json_write_row(row, j->schema, buf, cap);
}

/* Hot path: encoding only; a write(2) per full buffer. */
static int jsonl_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	struct jsonl_sink *j = state;
	int n, rc;

	n = encode(j, row, j->buf + j->used, j->cap - j->used);
	if (n >= 0) {
		j->used += (size_t)n;
		return 0;
	}
	rc = jsonl_flush(j);
	if (rc < 0)
		return rc;
	n = encode(j, row, j->buf, j->cap);
	if (n < 0) {
		/* a row whose worst-case encoding exceeds the buffer: grow once to fit it */
		size_t cap = j->cap;
		char *nb;

		while (n < 0 && cap < ((size_t)1 << 31)) {
			cap *= 2;
			nb = realloc(j->buf, cap);
			if (!nb)
				return -ENOMEM;
			j->buf = nb;
			j->cap = cap;
			n = encode(j, row, j->buf, j->cap);
		}
		if (n < 0)
			return -E2BIG;
	}
	j->used = (size_t)n;
	return 0;
}

static void jsonl_close(void *state)
{
	struct jsonl_sink *j = state;

	if (!j)
		return;
	jsonl_flush(j); /* flush() normally ran; this only saves rows of a failing job */
	close(j->fd);
	free(j->buf);
	free(j);
}

const struct sl_sink_ops sl_jsonl_sink_ops = {
	.name = "filesystem-jsonl",
	.open = jsonl_open,
	.write = jsonl_write,
	.flush = jsonl_flush,
	.close = jsonl_close,
};
