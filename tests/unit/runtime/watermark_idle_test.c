/*
 * watermark_idle_test.c - event time through a keyed exchange: per-split watermarks, idle
 * splits, monotonic stage watermarks and the +inf watermark at the end of bounded input.
 *
 * A source with two splits: split 0 emits one record per millisecond with event time i*1000;
 * split 1 emits nothing until split 0 is done. Behind a key_by, a flat_map stamps each
 * record with the watermark its operator has seen. Without an idle timeout, split 1 holds
 * the watermark at its start for the whole run; with a 20 ms timeout, split 1 turns idle and
 * the watermark follows split 0.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/job.h>

#include "test.h"

#define NREC 150

struct split {
	int split;
	int next;
	struct timespec last;
};

static _Atomic int split0_done;

static int src_nsplits(const void *cfg)
{
	return 2;
}

static void *src_open(const void *cfg, int split, struct sl_error *err)
{
	struct split *s = calloc(1, sizeof(*s));

	if (s)
		s->split = split;
	return s;
}

static int src_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct split *s = state;
	struct timespec now;
	struct sl_row_builder b;

	if (s->split == 1)
		return atomic_load(&split0_done) ? SL_SRC_EOF : 0;
	if (s->next == NREC) {
		atomic_store(&split0_done, 1);
		return SL_SRC_EOF;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - s->last.tv_sec) * 1000000000L + (now.tv_nsec - s->last.tv_nsec) <
	    1000000L)
		return 0;
	s->last = now;
	sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 3);
	sl_rowb_set_i64(&b, 0, s->next % 5);
	sl_rowb_set_i64(&b, 1, (int64_t)s->next * 1000);
	sl_rowb_set_null(&b, 2);
	s->next++;
	return sl_src_emit(c, sl_rowb_finish(&b)) == 0 ? 1 : -EIO;
}

static void src_close(void *state)
{
	free(state);
}

static const struct sl_source_ops src_ops = {
	.name = "paced",
	.nsplits = src_nsplits,
	.open = src_open,
	.poll = src_poll,
	.close = src_close,
};

static void stamp(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *in, void *arg)
{
	struct sl_row_builder *b = sl_ctx_out(ctx);

	sl_rowb_set_i64(b, 0, sl_row_i64(in, 0));
	sl_rowb_set_i64(b, 1, sl_row_i64(in, 1));
	sl_rowb_set_i64(b, 2, sl_ctx_watermark(ctx));
	sl_emit(ctx, ts, sl_rowb_finish(b));
}

struct seen {
	int64_t n;
	int64_t max_wm;
	int regressions;
};

static struct seen seen[8];

static void *snk_open(const void *cfg, const struct sl_schema *s, int shard, int n,
		      struct sl_error *err)
{
	memset(&seen[shard], 0, sizeof seen[shard]);
	seen[shard].max_wm = INT64_MIN;
	return &seen[shard];
}

static int snk_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	struct seen *s = state;
	int64_t wm = sl_row_i64(row, 2);

	if (wm < s->max_wm)
		s->regressions++;
	if (wm > s->max_wm)
		s->max_wm = wm;
	s->n++;
	return 0;
}

static const struct sl_sink_ops snk_ops = { .name = "seen", .open = snk_open,
					    .write = snk_write };

static void run(sl_ts_t idle_timeout, int64_t *max_wm, int64_t *n)
{
	struct sl_schema *sch = sl_schema_create();
	struct sl_wm_strategy wm = { .kind = SL_WM_BOUNDED, .max_delay_ms = 2000, .ts_field = 1,
				     .idle_timeout_ms = idle_timeout, .interval_ms = 0 };
	struct sl_run_opts opts = { .nshards = 2, .ring_bytes = 65536 };
	int key[1] = { 0 };

	atomic_store(&split0_done, 0);
	sl_schema_add(sch, "k", SL_TYPE_BIGINT);
	sl_schema_add(sch, "ts", SL_TYPE_TIMESTAMP);
	sl_schema_add(sch, "wm", SL_TYPE_BIGINT);

	struct sl_job *job = sl_job_create("wm");
	struct sl_stream *s = sl_job_source(job, "paced", &src_ops, NULL, sch, &wm);

	s = sl_stream_key_by(s, key, 1);
	s = sl_stream_flat_map(s, "stamp", stamp, NULL, sch);
	T_ASSERT(sl_stream_sink(s, "seen", &snk_ops, NULL) == 0);
	T_ASSERT(sl_job_run(job, &opts) == 0);
	*max_wm = INT64_MIN;
	*n = 0;
	for (int i = 0; i < 2; i++) {
		T_ASSERT_EQ_I64(seen[i].regressions, 0);
		if (seen[i].max_wm > *max_wm)
			*max_wm = seen[i].max_wm;
		*n += seen[i].n;
	}
	sl_job_destroy(job);
	sl_schema_destroy(sch);
}

int main(void)
{
	int64_t max_wm, n;

	/* split 1 never idle: it holds every watermark back */
	run(0, &max_wm, &n);
	T_ASSERT_EQ_I64(n, NREC);
	T_ASSERT_EQ_I64(max_wm, INT64_MIN);

	/* split 1 idle after 20 ms: the watermark follows split 0 (ts - 2 s), and since each
	 * shard sees records only after the watermark that preceded them, late in the run it
	 * is well past the start */
	run(20, &max_wm, &n);
	T_ASSERT_EQ_I64(n, NREC);
	T_ASSERT(max_wm >= (NREC - 40) * 1000 - 2000);
	T_ASSERT(max_wm <= (NREC - 1) * 1000 - 2000);
	return T_EXIT_PASS;
}
