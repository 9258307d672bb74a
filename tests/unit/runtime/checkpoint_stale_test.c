/*
 * checkpoint_stale_test.c - recovery steps back one checkpoint when a sink's output of the
 * newest one was lost (job.h: a Kafka transaction dies with its producer; commit returns
 * -ESTALE during recovery).
 *
 * A generated source (4 splits, positions) -> key_by -> a counting keyed process function
 * -> a sink with commit_may_be_lost. The first run stops itself after its second completed
 * checkpoint; every later commit "dies" (is not recorded), as if the process had crashed
 * between the manifest and the transaction's commit: the final checkpoint is complete on
 * disk but its output was never committed. The second run must see -ESTALE for it, remove
 * it, restore the checkpoint before it, and replay from there: every key's last count is
 * then exactly its number of records (a restore of the newest checkpoint would skip the
 * lost epoch's records; no restore at all would double-count). A run with nothing recorded
 * as committed falls back to a fresh start.
 */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/job.h>

#include "test.h"

#define PER_SPLIT 150000
#define NSPLITS 4
#define NKEYS 500

#include "ckpt_gen.h"

static const struct sl_state_desc count_state[] = {
	{ .name = "count", .kind = SL_STATE_VALUE, .value_size = 8 },
};

static _Atomic int64_t max_count[NKEYS];

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

/* What "the broker" holds: the checkpoints whose transactions committed. */
static _Atomic bool committed[4096];
static _Atomic bool recovering;   /* the next commits are recovery's questions */
static _Atomic uint64_t lose_from = UINT64_MAX;
static _Atomic int stale_answers;

static void *nop_open(const void *cfg, const struct sl_schema *schema, int shard, int nshards,
		      struct sl_error *err)
{
	atomic_store(&recovering, false); /* instances open after recovery */
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

static int tx_precommit(void *state, uint64_t ckpt, void *meta, size_t cap, size_t *len)
{
	memcpy(meta, &ckpt, 8);
	*len = 8;
	return 0;
}

static int tx_commit(const void *cfg, uint64_t ckpt, const void *meta, size_t len)
{
	T_ASSERT(ckpt < 4096);
	if (atomic_load(&recovering)) {
		if (atomic_load(&committed[ckpt]))
			return 0;
		atomic_fetch_add(&stale_answers, 1);
		return -ESTALE;
	}
	if (ckpt < atomic_load(&lose_from))
		atomic_store(&committed[ckpt], true);
	return 0;
}

static const struct sl_sink_ops tx_ops = {
	.name = "tx", .open = nop_open, .write = nop_write, .flush = nop_flush,
	.close = nop_close, .precommit = tx_precommit, .commit = tx_commit,
	.commit_may_be_lost = true,
};

static int completed;

/* After the second checkpoint: stop, and let every later commit die. */
static int stop_after_second(struct sl_job *job, uint64_t ckpt, void *arg)
{
	if (++completed == 2) {
		if (atomic_load(&lose_from) == UINT64_MAX)
			atomic_store(&lose_from, ckpt + 1);
		sl_job_stop(job);
	}
	return 0;
}

static int64_t run(const char *dir, bool first)
{
	struct sl_schema *sch = sl_schema_create(), *out = sl_schema_create();
	struct sl_wm_strategy wm = { .kind = SL_WM_NONE, .ts_field = -1 };
	struct sl_process_fn fn = { .states = count_state, .nstates = 1, .process = count_process };
	struct sl_run_opts opts = { .nshards = 2, .checkpoint_interval_ms = 5,
				    .checkpoint_dir = dir,
				    .on_checkpoint = first ? stop_after_second : NULL };
	struct sl_job_stats st;
	int key[1] = { 0 };
	struct sl_job *job = sl_job_create("stale");
	struct sl_stream *s;
	int rc;

	sl_schema_add(sch, "key", SL_TYPE_BIGINT);
	sl_schema_add(sch, "seq", SL_TYPE_BIGINT);
	sl_schema_add(out, "key", SL_TYPE_BIGINT);
	sl_schema_add(out, "count", SL_TYPE_BIGINT);
	s = sl_job_source(job, "gen", &gen_ops, NULL, sch, &wm);
	s = sl_stream_process(sl_stream_key_by(s, key, 1), "count", &fn, out);
	T_ASSERT(sl_stream_sink(s, "tx", &tx_ops, NULL) == 0);
	atomic_store(&recovering, !first);
	rc = sl_job_run(job, &opts);
	if (rc)
		fprintf(stderr, "run: %s\n", sl_job_error(job)->msg);
	T_ASSERT_EQ_I64(rc, 0);
	sl_job_stats(job, &st);
	sl_job_destroy(job);
	sl_schema_destroy(sch);
	sl_schema_destroy(out);
	return (int64_t)st.records_in;
}

static bool chk_exists(const char *dir, uint64_t id)
{
	char path[512];
	DIR *d;

	snprintf(path, sizeof path, "%s/chk-%llu", dir, (unsigned long long)id);
	d = opendir(path);
	if (d)
		closedir(d);
	return d != NULL;
}

int main(void)
{
	char dir[] = "/tmp/sluice-stale-XXXXXX", cmd[600];
	uint64_t lost;
	int64_t first_in, second_in;

	T_ASSERT(mkdtemp(dir));
	first_in = run(dir, true);
	lost = atomic_load(&lose_from);
	T_ASSERT(lost != UINT64_MAX);
	/* the stop's final checkpoint is complete on disk, its commit lost */
	T_ASSERT(chk_exists(dir, lost));
	T_ASSERT(first_in < NSPLITS * PER_SPLIT);
	for (int k = 0; k < NKEYS; k++)
		atomic_store(&max_count[k], 0);
	second_in = run(dir, false);
	printf("stale: first run %lld records, checkpoint %llu lost its commit, second run "
	       "%lld records, %d stale answers\n", (long long)first_in,
	       (unsigned long long)lost, (long long)second_in, atomic_load(&stale_answers));
	T_ASSERT(atomic_load(&stale_answers) >= 1);
	T_ASSERT(!chk_exists(dir, lost));
	/* the replay started at the older checkpoint: state and positions agree */
	for (int k = 0; k < NKEYS; k++)
		T_ASSERT_EQ_I64(atomic_load(&max_count[k]), NSPLITS * PER_SPLIT / NKEYS);

	/* nothing ever committed: recovery steps back to a fresh start */
	snprintf(cmd, sizeof cmd, "rm -rf '%s'/*", dir);
	T_ASSERT(system(cmd) == 0);
	memset((void *)committed, 0, sizeof committed);
	completed = 0;
	atomic_store(&lose_from, 0);
	run(dir, true);
	atomic_store(&lose_from, UINT64_MAX);
	for (int k = 0; k < NKEYS; k++)
		atomic_store(&max_count[k], 0);
	second_in = run(dir, false);
	T_ASSERT_EQ_I64(second_in, NSPLITS * PER_SPLIT);
	for (int k = 0; k < NKEYS; k++)
		T_ASSERT_EQ_I64(atomic_load(&max_count[k]), NSPLITS * PER_SPLIT / NKEYS);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	T_ASSERT(system(cmd) == 0);
	return T_EXIT_PASS;
}
