/*
 * print_sink.c - the print sink: rows in changelog notation (`+I[...]`), one a line, as
 * Flink's print connector writes them, to stdout or a given fd.
 *
 * Each shard's instance formats lines into its own buffer and hands it to write(2) whole,
 * when the buffer is full or on flush(), so the cost per row is formatting only. Lines of
 * different shards must never interleave mid-line, and a write(2) to a pipe larger than
 * PIPE_BUF may be split by the kernel and may return short, so the chunk is written under
 * one process-wide mutex: one lock per chunk (tens of KiB), never per row.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/connectors.h>

#include "sink_io.h"

#define PRINT_BUF (64u << 10)

struct print_sink {
	const struct sl_schema *schema;
	int fd;
	char prefix[96];
	size_t plen;
	char *buf;
	size_t cap, used;
};

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

int sl_sink_write_all(int fd, const char *p, size_t n, pthread_mutex_t *lock)
{
	int rc = 0;

	if (lock)
		pthread_mutex_lock(lock);
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = -errno;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	if (lock)
		pthread_mutex_unlock(lock);
	return rc;
}

static void *print_open(const void *cfgp, const struct sl_schema *schema, int shard, int nshards,
			struct sl_error *err)
{
	const struct sl_print_sink_cfg *cfg = cfgp;
	const char *id = cfg && cfg->identifier ? cfg->identifier : "";
	struct print_sink *p = calloc(1, sizeof(*p));
	int n;

	if (!p)
		goto out_nomem;
	p->schema = schema;
	p->fd = cfg && cfg->fd > 0 ? cfg->fd : STDOUT_FILENO;
	/* Flink's PrintSinkOutputWriter: "id", then ":N" or "N" for parallel subtasks, "> " */
	if (cfg && cfg->subtask_prefix && nshards > 1)
		n = snprintf(p->prefix, sizeof p->prefix, "%s%s%d", id, *id ? ":" : "", shard + 1);
	else
		n = snprintf(p->prefix, sizeof p->prefix, "%s", id);
	if (n < 0 || (size_t)n + 3 > sizeof p->prefix) {
		free(p);
		err->code = -EINVAL;
		snprintf(err->msg, sizeof err->msg, "print sink: identifier too long");
		return NULL;
	}
	if (n)
		n += snprintf(p->prefix + n, sizeof p->prefix - (size_t)n, "> ");
	p->plen = (size_t)n;
	p->cap = PRINT_BUF;
	p->buf = malloc(p->cap);
	if (!p->buf) {
		free(p);
		goto out_nomem;
	}
	return p;

out_nomem:
	err->code = -ENOMEM;
	snprintf(err->msg, sizeof err->msg, "print sink: out of memory");
	return NULL;
}

static int print_flush(void *state)
{
	struct print_sink *p = state;
	int rc;

	if (!p->used)
		return 0;
	rc = sl_sink_write_all(p->fd, p->buf, p->used, &print_lock);
	p->used = 0;
	return rc;
}

/* Formats one line into the buffer. Hot path: formatting only, a write(2) per full buffer. */
static int print_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	struct print_sink *p = state;
	size_t room = p->cap - p->used;
	int n, rc;

	/* sl_row_format writes a NUL after the line: the '\n' goes there */
	n = room > p->plen
		    ? sl_row_format(row, p->schema, p->buf + p->used + p->plen, room - p->plen)
		    : (int)room;
	if (n < 0)
		return -EINVAL;
	if (p->plen + (size_t)n + 1 > room) {
		rc = print_flush(p);
		if (rc < 0)
			return rc;
		n = sl_row_format(row, p->schema, p->buf + p->plen, p->cap - p->plen);
		if (p->plen + (size_t)n + 1 > p->cap) {
			/* a line longer than the buffer: grow once to fit it */
			size_t cap = p->plen + (size_t)n + 1;
			char *nb = malloc(cap);

			if (!nb)
				return -ENOMEM;
			free(p->buf);
			p->buf = nb;
			p->cap = cap;
			n = sl_row_format(row, p->schema, p->buf + p->plen, p->cap - p->plen);
		}
	}
	memcpy(p->buf + p->used, p->prefix, p->plen);
	p->used += p->plen + (size_t)n;
	p->buf[p->used++] = '\n';
	return 0;
}

static void print_close(void *state)
{
	struct print_sink *p = state;

	if (!p)
		return;
	print_flush(p); /* flush() normally ran; this only saves rows of a failing job */
	free(p->buf);
	free(p);
}

const struct sl_sink_ops sl_print_sink_ops = {
	.name = "print",
	.open = print_open,
	.write = print_write,
	.flush = print_flush,
	.close = print_close,
};
