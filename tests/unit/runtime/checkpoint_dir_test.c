/*
 * checkpoint_dir_test.c - completed checkpoints land in a checkpoint directory: a generated
 * source (4 splits) -> key_by -> a counting keyed process function (value state) -> a sink
 * with precommit/commit, checkpointed every few milliseconds into a fresh directory. After
 * the run the newest checkpoint must verify (manifest checksum, every state file's size and
 * CRC32C), hold a position for every split and a pre-commit for every sink instance, and
 * every committed checkpoint must have been committed to the sink exactly once, in order,
 * after its manifest was durable.
 *
 * Then stop and restore: a run stopped right after its first completed checkpoint, and a
 * second run of the same job in the same directory, which restores that checkpoint (source
 * positions and the counters' keyed state, on another shard count) and runs to the end.
 * Every key's last emitted count must then be exactly its number of records: a lost state
 * would restart a count, a re-read split would overshoot it.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/job.h>

#include "manifest.h"
#include "snap.h"
#include "store.h"
#include "test.h"

#define PER_SPLIT 200000
#define NSPLITS 4
#define NKEYS 1000

/* the source moves on a step per completed checkpoint (ckpt_gen.h): a run completes
 * checkpoints mid-input, and one stopped at its first checkpoint has input left, whatever
 * the machine's load (a clock-driven run failed under parallel load) */
#define CKPT_GEN_STEP (PER_SPLIT / 8)
#include "ckpt_gen.h"

static const struct sl_state_desc count_state[] = {
	{ .name = "count", .kind = SL_STATE_VALUE, .value_size = 8 },
};

static _Atomic int64_t max_count[NKEYS];

/* Emits (key, count so far); the sink keeps each key's largest count. */
static void count_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	int64_t *n = sl_value_put(ctx, 0);
	struct sl_row_builder *b = sl_ctx_out(ctx);

	T_ASSERT(n);
	(*n)++;
	sl_rowb_set_i64(b, 0, sl_row_i64(row, 0));
	sl_rowb_set_i64(b, 1, *n);
	sl_emit(ctx, ts, sl_rowb_finish(b));
}

static _Atomic uint64_t last_commit;
static _Atomic int commit_errors;

static void *nop_open(const void *cfg, const struct sl_schema *schema, int shard, int nshards,
		      struct sl_error *err)
{
	return calloc(1, 8);
}

static int nop_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	int64_t k = sl_row_i64(row, 0), c = sl_row_i64(row, 1), cur;

	cur = atomic_load(&max_count[k]);
	while (c > cur && !atomic_compare_exchange_weak(&max_count[k], &cur, c))
		;
	return 0;
}

static int nop_flush(void *state)
{
	return 0;
}

static void nop_close(void *state)
{
	free(state);
}

static int ck_precommit(void *state, uint64_t ckpt, void *meta, size_t cap, size_t *len)
{
	memcpy(meta, &ckpt, 8);
	*len = 8;
	return 0;
}

/* Each checkpoint's metas are committed once per sink instance, ids never going back. */
static int ck_commit(const void *cfg, uint64_t ckpt, const void *meta, size_t len)
{
	uint64_t m;

	memcpy(&m, meta, 8);
	if (len != 8 || m != ckpt || ckpt < atomic_load(&last_commit))
		atomic_fetch_add(&commit_errors, 1);
	atomic_store(&last_commit, ckpt);
	return 0;
}

static const struct sl_sink_ops ck_ops = {
	.name = "ck", .open = nop_open, .write = nop_write, .flush = nop_flush,
	.close = nop_close, .precommit = ck_precommit, .commit = ck_commit,
};

static int64_t last_records_in;

static int stop_after_first(struct sl_job *job, uint64_t ckpt, void *arg)
{
	ckpt_gen_checkpointed();
	sl_job_stop(job);
	return 0;
}

static int count_checkpoint(struct sl_job *job, uint64_t ckpt, void *arg)
{
	ckpt_gen_checkpointed();
	return 0;
}

static bool restored_run;

static uint64_t run_once_opts(const char *dir, int nshards, bool stop)
{
	struct sl_schema *sch = sl_schema_create();
	struct sl_wm_strategy wm = { .kind = SL_WM_NONE, .ts_field = -1 };
	struct sl_process_fn fn = { .states = count_state, .nstates = 1, .process = count_process };
	struct sl_run_opts opts = { .nshards = nshards, .checkpoint_interval_ms = 5,
				    .checkpoint_dir = dir,
				    .on_checkpoint = stop ? stop_after_first : count_checkpoint };
	struct sl_job_stats st;
	int key[1] = { 0 };
	struct sl_job *job = sl_job_create("ckdir");

	sl_schema_add(sch, "key", SL_TYPE_BIGINT);
	sl_schema_add(sch, "seq", SL_TYPE_BIGINT);
	struct sl_stream *s = sl_job_source(job, "gen", &gen_ops, NULL, sch, &wm);

	s = sl_stream_process(sl_stream_key_by(s, key, 1), "count", &fn, sch);
	T_ASSERT(sl_stream_sink(s, "ck", &ck_ops, NULL) == 0);
	ckpt_gen_reset();
	if (sl_job_run(job, &opts))
		fprintf(stderr, "run: %s\n", sl_job_error(job)->msg);
	sl_job_stats(job, &st);
	printf("ckdir: %d shards, %llu checkpoints completed, %llu failed\n", nshards,
	       (unsigned long long)st.checkpoints, (unsigned long long)st.checkpoints_failed);
	last_records_in = (int64_t)st.records_in;
	/* a restored run may have too little left to complete a checkpoint */
	T_ASSERT(st.checkpoints >= 1 || restored_run);
	T_ASSERT_EQ_I64(st.checkpoints_failed, 0);
	sl_job_destroy(job);
	sl_schema_destroy(sch);
	return st.checkpoints;
}

static uint64_t run_once(const char *dir, int nshards)
{
	return run_once_opts(dir, nshards, false);
}

static void verify(const char *dir, int nshards, uint64_t *id)
{
	int err = 0;
	struct sl_ckpt_store *store = sl_ckpt_store_open(dir, &err);
	struct sl_ckpt_manifest m = { 0 };
	struct sl_snap_buf b;

	T_ASSERT(store);
	T_ASSERT(sl_ckpt_store_find_latest(store, NULL, &m) == 0);
	T_ASSERT_EQ_I64(m.nsources, NSPLITS);
	T_ASSERT_EQ_I64(m.nsinks, nshards);
	T_ASSERT(m.nfiles >= 1);
	for (uint32_t i = 0; i < m.nfiles; i++) {
		sl_snap_init(&b);
		T_ASSERT(sl_ckpt_store_load(store, &m, i, &b) == 0);
		T_ASSERT_EQ_I64((int64_t)b.len, (int64_t)m.files[i].size);
		sl_snap_free(&b);
	}
	T_ASSERT_EQ_I64((int64_t)atomic_load(&last_commit), (int64_t)m.ckpt_id);
	*id = m.ckpt_id;
	sl_ckpt_manifest_fini(&m);
	sl_ckpt_store_close(store);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/sluice-ckdir-XXXXXX";
	uint64_t first;

	T_ASSERT(mkdtemp(dir));
	run_once(dir, 2);
	verify(dir, 2, &first);
	T_ASSERT(first >= 1);
	T_ASSERT_EQ_I64(atomic_load(&commit_errors), 0);
	{
		char cmd[600];

		snprintf(cmd, sizeof cmd, "rm -rf '%s'/*", dir);
		T_ASSERT(system(cmd) == 0);
	}
	/* stop after the first checkpoint, then restore it on another shard count */
	for (int k = 0; k < NKEYS; k++)
		atomic_store(&max_count[k], 0);
	run_once_opts(dir, 2, true);
	for (int k = 0; k < NKEYS; k++)
		T_ASSERT(atomic_load(&max_count[k]) < NSPLITS * PER_SPLIT / NKEYS);
	restored_run = true;
	run_once_opts(dir, 3, false);
	/* the restored run read only what came after the checkpoint */
	T_ASSERT(last_records_in > 0 && last_records_in < NSPLITS * PER_SPLIT);
	for (int k = 0; k < NKEYS; k++)
		T_ASSERT_EQ_I64(atomic_load(&max_count[k]), NSPLITS * PER_SPLIT / NKEYS);
	{
		char cmd[600];

		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		T_ASSERT(system(cmd) == 0);
	}
	return T_EXIT_PASS;
}
