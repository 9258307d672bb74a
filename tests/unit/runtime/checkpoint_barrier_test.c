/*
 * checkpoint_barrier_test.c - aligned checkpoint barriers through the runtime (DESIGN §7).
 *
 * A generated source (4 splits, each reporting its position: records emitted so far) feeds
 * key_by -> map -> key_by -> a sink whose precommit reports the rows it has received, over
 * tiny rings and a skewed key so barriers meet full rings and hold queues. Checkpoints are
 * taken every millisecond. For every checkpoint acknowledged by all shards, the cut must be
 * consistent: the records the sources had emitted before the barrier are exactly the rows
 * the sinks had received before it (the pipeline is one row in, one row out), and every
 * operator's snapshot belongs to that checkpoint.
 *
 * Usage: checkpoint_barrier_test [NSHARDS]
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/job.h>

#include "runtime.h"
#include "test.h"

#define PER_SPLIT 300000
#define NSPLITS 4

struct gen_split {
	int64_t next;
	uint64_t rng;
};

static int gen_nsplits(const void *cfg)
{
	return NSPLITS;
}

static void *gen_open(const void *cfg, int split, struct sl_error *err)
{
	struct gen_split *s = calloc(1, sizeof(*s));

	if (s)
		s->rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(split + 1);
	return s;
}

static int gen_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct gen_split *s = state;
	int n = 0;

	if (s->next == PER_SPLIT)
		return SL_SRC_EOF;
	while (n < max && s->next < PER_SPLIT) {
		struct sl_row_builder b;

		s->rng ^= s->rng << 13;
		s->rng ^= s->rng >> 7;
		s->rng ^= s->rng << 17;
		sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 2);
		sl_rowb_set_i64(&b, 0, (s->rng & 1) ? 0 : (int64_t)(s->rng % 997));
		sl_rowb_set_i64(&b, 1, s->next);
		T_ASSERT(sl_src_emit(c, sl_rowb_finish(&b)) == 0);
		s->next++;
		n++;
	}
	return n;
}

static int gen_position(void *state, void *buf, size_t cap, size_t *len)
{
	const struct gen_split *s = state;

	if (cap < 8)
		return -ENOSPC;
	memcpy(buf, &s->next, 8);
	*len = 8;
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
};

static void plus_one(const struct sl_row *in, struct sl_row_builder *out, void *arg)
{
	sl_rowb_set_i64(out, 0, sl_row_i64(in, 0) + 1);
	sl_rowb_set_i64(out, 1, sl_row_i64(in, 1));
}

struct counter {
	int64_t rows;
};

static void *cnt_open(const void *cfg, const struct sl_schema *schema, int shard, int nshards,
		      struct sl_error *err)
{
	return calloc(1, sizeof(struct counter));
}

static int cnt_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	((struct counter *)state)->rows++;
	return 0;
}

static int cnt_flush(void *state)
{
	return 0;
}

static _Atomic int64_t total_rows;

static void cnt_close(void *state)
{
	atomic_fetch_add(&total_rows, ((struct counter *)state)->rows);
	free(state);
}

static int cnt_precommit(void *state, uint64_t ckpt, void *meta, size_t cap, size_t *len)
{
	const struct counter *c = state;

	if (cap < 8)
		return -ENOSPC;
	memcpy(meta, &c->rows, 8);
	*len = 8;
	return 0;
}

static const struct sl_sink_ops cnt_ops = {
	.name = "counter",
	.open = cnt_open,
	.write = cnt_write,
	.flush = cnt_flush,
	.close = cnt_close,
	.precommit = cnt_precommit,
};

static int checked, partial, errors;

/* Runs on the coordinator while every shard that acknowledged keeps its snapshots. */
static int on_ckpt(struct sl_job *job, uint64_t n, void *arg)
{
	struct sl_runtime *rt = job->rt;
	int64_t emitted = 0, received = 0;

	for (int i = 0; i < rt->nshards; i++) {
		const struct sl_shard *sh = &rt->shards[i];

		if (atomic_load(&sh->ckpt_acked) < n) {
			partial++; /* the shard finished first: its buffers are gone */
			return 0;
		}
	}
	for (int i = 0; i < rt->nshards; i++) {
		const struct sl_shard *sh = &rt->shards[i];

		for (int s = 0; s < job->nstages; s++) {
			const struct sl_stage_inst *si = &sh->si[s];

			if (si->chans)
				continue;
			/*
			 * A split without a position for n belongs to an instance that had ended
			 * before the barrier (it emitted everything). Only fields written before
			 * the acknowledgement are read: the shard goes on running meanwhile.
			 */
			for (int k = 0; k < si->nsplits; k++) {
				const struct sl_split_inst *sp = &si->splits[k];
				int64_t next;

				if (sp->pos_ckpt != n) {
					emitted += PER_SPLIT;
					continue;
				}
				if (sp->pos.len != 16) {
					errors++;
					continue;
				}
				memcpy(&next, sp->pos.data + 8, 8);
				emitted += next;
			}
		}
		for (int node = 0; node < job->nnodes; node++) {
			const struct sl_ctx *c = &sh->ctx[node];
			int64_t rows;

			if (job->node[node]->kind != SL_NODE_SINK)
				continue;
			if (c->snap_ckpt != n) {
				/* the sink's stage had ended before the barrier: all input was in
				 * and out before n, there is no cut to compare */
				partial++;
				return 0;
			}
			if (c->snap_rc || c->snap.len != 8) {
				errors++;
				continue;
			}
			memcpy(&rows, c->snap.data, 8);
			received += rows;
		}
	}
	if (emitted != received) {
		fprintf(stderr, "checkpoint %llu: sources emitted %lld, sinks received %lld\n",
			(unsigned long long)n, (long long)emitted, (long long)received);
		errors++;
	}
	checked++;
	return 0;
}

int main(int argc, char **argv)
{
	int nshards = argc > 1 ? atoi(argv[1]) : 3;
	struct sl_schema *sch = sl_schema_create();
	struct sl_wm_strategy wm = { .kind = SL_WM_NONE, .ts_field = -1 };
	struct sl_run_opts opts = { .nshards = nshards, .ring_bytes = 4096,
				    .checkpoint_interval_ms = 1, .on_checkpoint = on_ckpt };
	struct sl_job_stats st;
	int key[1] = { 0 };

	T_ASSERT(sch);
	sl_schema_add(sch, "key", SL_TYPE_BIGINT);
	sl_schema_add(sch, "seq", SL_TYPE_BIGINT);

	struct sl_job *job = sl_job_create("barriers");
	struct sl_stream *s = sl_job_source(job, "gen", &gen_ops, NULL, sch, &wm);

	s = sl_stream_key_by(s, key, 1);
	s = sl_stream_map(s, "plus one", plus_one, NULL, sch);
	s = sl_stream_key_by(s, key, 1);
	T_ASSERT(sl_stream_sink(s, "counter", &cnt_ops, NULL) == 0);
	T_ASSERT(sl_job_run(job, &opts) == 0);
	sl_job_stats(job, &st);
	printf("barriers: %d shards, %llu checkpoints (%d checked with every shard, %d partial), "
	       "%d errors\n", nshards, (unsigned long long)st.checkpoints, checked, partial,
	       errors);
	T_ASSERT_EQ_I64(errors, 0);
	T_ASSERT(checked >= 3);
	T_ASSERT_EQ_I64(atomic_load(&total_rows), (int64_t)NSPLITS * PER_SPLIT);
	T_ASSERT_EQ_I64(st.records_out, (int64_t)NSPLITS * PER_SPLIT);
	sl_job_destroy(job);
	sl_schema_destroy(sch);
	return T_EXIT_PASS;
}
