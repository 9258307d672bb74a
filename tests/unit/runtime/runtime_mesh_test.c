/*
 * runtime_mesh_test.c - the runtime end to end without windows: a generated source, two
 * repartitionings (key_by -> map -> key_by -> flat_map) over tiny rings with skewed keys, so
 * every ring fills and backpressure must not deadlock the mesh. Checks that every record
 * arrives exactly once, on the shard that owns its key, with per-key order preserved.
 *
 * With "union", the four splits come from two sources (two splits each) joined by a keyed
 * union, which must deliver the same records with the same guarantees.
 *
 * Usage: runtime_mesh_test [NSHARDS] [RECORDS] [union]
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/job.h>

#include "hash.h"
#include "op.h"
#include "test.h"

#define NKEYS 1000
#define MAX_SHARDS 8

struct gen_cfg {
	int nsplits;
	int split_base;  /* split numbers in the rows start here */
	int64_t per_split;
};

struct gen_split {
	int split;
	int64_t next;
	int64_t end;
	uint64_t rng;
};

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int gen_nsplits(const void *cfg)
{
	return ((const struct gen_cfg *)cfg)->nsplits;
}

static void *gen_open(const void *cfg, int split, struct sl_error *err)
{
	const struct gen_cfg *c = cfg;
	struct gen_split *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->split = c->split_base + split;
	s->end = c->per_split;
	s->rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(s->split + 1);
	return s;
}

/* Row: split, seq, key (skewed: half the records on key 0), string payload. */
static int gen_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct gen_split *s = state;
	char payload[64];
	int n = 0;

	if (s->next == s->end)
		return SL_SRC_EOF;
	while (n < max && s->next < s->end) {
		struct sl_row_builder b;
		uint64_t r = xorshift(&s->rng);
		int64_t key = (r & 1) ? 0 : (int64_t)((r >> 1) % NKEYS);
		int len = (int)(r % 40);

		memset(payload, 'a' + (int)(r % 26), sizeof payload);
		sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 4);
		sl_rowb_set_i64(&b, 0, s->split);
		sl_rowb_set_i64(&b, 1, s->next);
		sl_rowb_set_i64(&b, 2, key);
		sl_rowb_set_str(&b, 3, payload, (uint32_t)len);
		T_ASSERT(sl_src_emit(c, sl_rowb_finish(&b)) == 0);
		s->next++;
		n++;
	}
	return n;
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
};

/* map: key2 = key * 7 + split (the second repartitioning key), keep the rest */
static void remap(const struct sl_row *in, struct sl_row_builder *out, void *arg)
{
	uint32_t len;
	const char *s = sl_row_str(in, 3, &len);

	sl_rowb_set_i64(out, 0, sl_row_i64(in, 0));
	sl_rowb_set_i64(out, 1, sl_row_i64(in, 1));
	sl_rowb_set_i64(out, 2, sl_row_i64(in, 2) * 7 + sl_row_i64(in, 0));
	sl_rowb_set_str(out, 3, s, len);
}

/* flat_map: every record twice, to exercise fan-out after the second exchange */
static void twice(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *in, void *arg)
{
	sl_emit(ctx, ts, in);
	sl_emit(ctx, ts, in);
}

/* The sink checks, per shard, that keys are owned by that shard and per (split, key) the
 * sequence numbers arrive in order, and counts records. */
struct sink_state {
	int shard;
	int nshards;
	int64_t count;
	int64_t last_seq[4][NKEYS * 7 + 4];
	int64_t dup_pending[4][NKEYS * 7 + 4];
};

static _Atomic int64_t total_count;
static _Atomic int errors;

static void *check_open(const void *cfg, const struct sl_schema *schema, int shard, int nshards,
			struct sl_error *err)
{
	struct sink_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->shard = shard;
	s->nshards = nshards;
	memset(s->last_seq, 0xff, sizeof s->last_seq);
	return s;
}

static int check_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	struct sink_state *s = state;
	int64_t split = sl_row_i64(row, 0), seq = sl_row_i64(row, 1), key2 = sl_row_i64(row, 2);
	int fields[1] = { 2 };
	enum sl_type types[1] = { SL_TYPE_BIGINT };
	uint8_t kb[SL_KEY_MAX];
	uint32_t klen = sl_key_encode(row, fields, types, 1, kb);
	uint64_t h = sl_hash_bytes(kb, klen);
	int owner = (int)sl_key_group_shard(sl_key_group(h, 128), 128, (uint32_t)s->nshards);

	if (owner != s->shard)
		atomic_fetch_add(&errors, 1);
	/* each record arrives twice in a row (flat_map), then the next in sequence */
	if (s->dup_pending[split][key2]) {
		if (s->last_seq[split][key2] != seq)
			atomic_fetch_add(&errors, 1);
		s->dup_pending[split][key2] = 0;
	} else {
		if (seq <= s->last_seq[split][key2])
			atomic_fetch_add(&errors, 1);
		s->last_seq[split][key2] = seq;
		s->dup_pending[split][key2] = 1;
	}
	s->count++;
	return 0;
}

static int check_flush(void *state)
{
	return 0;
}

static void check_close(void *state)
{
	struct sink_state *s = state;

	atomic_fetch_add(&total_count, s->count);
	free(s);
}

static const struct sl_sink_ops check_ops = {
	.name = "check",
	.open = check_open,
	.write = check_write,
	.flush = check_flush,
	.close = check_close,
};

int main(int argc, char **argv)
{
	int nshards = argc > 1 ? atoi(argv[1]) : 3;
	int64_t per_split = argc > 2 ? atoll(argv[2]) : 200000;
	bool use_union = argc > 3 && strcmp(argv[3], "union") == 0;
	struct gen_cfg cfg = { .nsplits = use_union ? 2 : 4, .per_split = per_split };
	struct gen_cfg cfg2 = { .nsplits = 2, .split_base = 2, .per_split = per_split };
	struct sl_schema *sch = sl_schema_create();
	struct sl_wm_strategy wm = { .kind = SL_WM_NONE, .ts_field = -1 };
	struct sl_run_opts opts = { .nshards = nshards, .ring_bytes = 4096 };
	struct sl_job_stats st;
	int key[1] = { 2 };

	T_ASSERT(sch);
	sl_schema_add(sch, "split", SL_TYPE_BIGINT);
	sl_schema_add(sch, "seq", SL_TYPE_BIGINT);
	sl_schema_add(sch, "key", SL_TYPE_BIGINT);
	sl_schema_add(sch, "payload", SL_TYPE_STRING);

	struct sl_job *job = sl_job_create("mesh");
	struct sl_stream *s = sl_job_source(job, "gen", &gen_ops, &cfg, sch, &wm);

	if (use_union) {
		struct sl_stream *ins[2] = { s, sl_job_source(job, "gen2", &gen_ops, &cfg2, sch,
							      &wm) };

		s = sl_stream_union_key_by(ins, 2, key, 1);
	} else {
		s = sl_stream_key_by(s, key, 1);
	}
	s = sl_stream_map(s, "remap", remap, NULL, sch);
	s = sl_stream_key_by(s, key, 1);
	s = sl_stream_flat_map(s, "twice", twice, NULL, sch);
	T_ASSERT(sl_stream_sink(s, "check", &check_ops, NULL) == 0);

	int rc = sl_job_run(job, &opts);

	if (rc)
		fprintf(stderr, "run: %s\n", sl_job_error(job)->msg);
	T_ASSERT(rc == 0);
	sl_job_stats(job, &st);
	T_ASSERT_EQ_I64(atomic_load(&errors), 0);
	T_ASSERT_EQ_I64(st.records_in, 4 * per_split);
	T_ASSERT_EQ_I64(atomic_load(&total_count), 2 * 4 * per_split);
	T_ASSERT_EQ_I64(st.records_out, 2 * 4 * per_split);
	/* tiny rings and a hot key: the producers must have met full rings */
	T_ASSERT(nshards == 1 || st.ring_full > 0);
	printf("mesh%s: %d shards, %lld records, ring full %llu times\n", use_union ? " (union)" : "", nshards,
	       (long long)st.records_in, (unsigned long long)st.ring_full);
	sl_job_destroy(job);
	sl_schema_destroy(sch);
	return T_EXIT_PASS;
}
