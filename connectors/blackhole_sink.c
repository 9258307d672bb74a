/*
 * blackhole_sink.c - the blackhole sink: consumes rows and counts them, for benchmarks that
 * measure everything up to the sink and nothing after it.
 *
 * Each instance counts privately (no shared cache line per row) and adds its count to the
 * optional cfg counter at flush, with a relaxed atomic add: the reader looks at the counter
 * only after sl_job_run() has joined the shards, which orders everything before it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <sluice/connectors.h>

struct blackhole {
	uint64_t *total; /* cfg counter or NULL */
	uint64_t rows;	 /* since the last flush */
	uint64_t bytes;	 /* touched so the row is read, as a real sink would */
};

static void *blackhole_open(const void *cfgp, const struct sl_schema *schema, int shard,
			    int nshards, struct sl_error *err)
{
	const struct sl_blackhole_sink_cfg *cfg = cfgp;
	struct blackhole *b = calloc(1, sizeof(*b));

	if (!b) {
		err->code = -ENOMEM;
		snprintf(err->msg, sizeof err->msg, "blackhole sink: out of memory");
		return NULL;
	}
	b->total = cfg ? cfg->rows : NULL;
	return b;
}

/* Hot path. */
static int blackhole_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	struct blackhole *b = state;

	b->rows++;
	b->bytes += row->size;
	return 0;
}

static int blackhole_flush(void *state)
{
	struct blackhole *b = state;

	if (b->total && b->rows)
		__atomic_fetch_add(b->total, b->rows, __ATOMIC_RELAXED);
	b->rows = 0;
	return 0;
}

static void blackhole_close(void *state)
{
	if (state)
		blackhole_flush(state);
	free(state);
}

const struct sl_sink_ops sl_blackhole_sink_ops = {
	.name = "blackhole",
	.open = blackhole_open,
	.write = blackhole_write,
	.flush = blackhole_flush,
	.close = blackhole_close,
};
