/*
 * window_fire_order_test.c - a window firing thousands of keys at once (large enough for the
 * radix sort in slice.c) emits them in (key hash, key bytes) order, each exactly once, with
 * the right counts; the same through a hopping window, where slices are merged.
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/job.h>

#include "hash.h"
#include "op.h"
#include "test.h"

#define NKEYS 6000

struct gen {
	int i;
};

static int g_nsplits(const void *cfg)
{
	return 1;
}

static void *g_open(const void *cfg, int split, struct sl_error *err)
{
	return calloc(1, sizeof(struct gen));
}

/* key k (string "user-<k>") appears (k % 3) + 1 times, all in the first 10 s */
static int g_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct gen *g = state;
	int n = 0;

	while (n < max && g->i < NKEYS * 3) {
		int k = g->i % NKEYS, rep = g->i / NKEYS;
		char name[32];
		struct sl_row_builder b;

		g->i++;
		if (rep > k % 3)
			continue;
		snprintf(name, sizeof name, "user-%d", k);
		sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 2);
		sl_rowb_set_str(&b, 0, name, (uint32_t)strlen(name));
		sl_rowb_set_i64(&b, 1, (int64_t)(g->i % 9000));
		if (sl_src_emit(c, sl_rowb_finish(&b)))
			return -1;
		n++;
	}
	return n ? n : SL_SRC_EOF;
}

static void g_close(void *state)
{
	free(state);
}

static const struct sl_source_ops gen_ops = { .name = "keys", .nsplits = g_nsplits,
					      .open = g_open, .poll = g_poll, .close = g_close };

struct seen {
	int rows;
	int errors;
	uint64_t last_hash;
	int64_t last_end;
	char last_key[32];
	int total;
};

static struct seen seen;

static void *s_open(const void *cfg, const struct sl_schema *s, int shard, int n,
		    struct sl_error *err)
{
	return &seen;
}

static int s_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	struct seen *s = state;
	int fields[1] = { 0 };
	enum sl_type types[1] = { SL_TYPE_STRING };
	uint8_t kb[SL_KEY_MAX];
	uint32_t klen = sl_key_encode(row, fields, types, 1, kb), len;
	uint64_t h = sl_hash_bytes(kb, klen);
	const char *key = sl_row_str(row, 0, &len);
	char name[32];
	int k;

	snprintf(name, sizeof name, "%.*s", (int)len, key); /* row strings have no NUL */
	k = atoi(name + 5);
	int64_t end = sl_row_i64(row, 2);

	if (end == s->last_end && h < s->last_hash) {
		s->errors++; /* not in hash order within one firing */
		if (getenv("SL_DEBUG"))
			fprintf(stderr, "order: %.*s after %s\n", (int)len, key, s->last_key);
	}
	if (end == s->last_end && h == s->last_hash && len == strlen(s->last_key) &&
	    !memcmp(key, s->last_key, len))
		s->errors++; /* the same key twice */
	if (sl_row_i64(row, 3) != k % 3 + 1) {
		s->errors++;
		if (getenv("SL_DEBUG"))
			fprintf(stderr, "count: %.*s %lld\n", (int)len, key,
				(long long)sl_row_i64(row, 3));
	}
	s->last_end = end;
	s->last_hash = h;
	snprintf(s->last_key, sizeof s->last_key, "%.*s", (int)len, key);
	s->rows++;
	s->total += (int)sl_row_i64(row, 3);
	return 0;
}

static const struct sl_sink_ops sink_ops = { .name = "order", .open = s_open, .write = s_write };

static void run(const struct sl_window_spec *win, int want_rows)
{
	struct sl_schema *sch = sl_schema_create();
	struct sl_wm_strategy wm = { .kind = SL_WM_BOUNDED, .ts_field = 1, .max_delay_ms = 100000 };
	struct sl_agg_spec cnt = { .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "n" };
	struct sl_run_opts opts = { .nshards = 1 };
	int key = 0;

	memset(&seen, 0, sizeof seen);
	seen.last_end = -1;
	sl_schema_add(sch, "user", SL_TYPE_STRING);
	sl_schema_add(sch, "ts", SL_TYPE_TIMESTAMP);
	struct sl_job *job = sl_job_create("order");
	struct sl_stream *s = sl_job_source(job, "keys", &gen_ops, NULL, sch, &wm);

	s = sl_stream_window(sl_stream_key_by(s, &key, 1), "w", win, &cnt, 1);
	T_ASSERT(sl_stream_sink(s, "order", &sink_ops, NULL) == 0);
	T_ASSERT(sl_job_run(job, &opts) == 0);
	T_ASSERT_EQ_I64(seen.errors, 0);
	T_ASSERT_EQ_I64(seen.rows, want_rows);
	sl_job_destroy(job);
	sl_schema_destroy(sch);
}

int main(void)
{
	struct sl_window_spec tumble = { .kind = SL_WIN_TUMBLE, .size_ms = 10000 };
	/* slide 5 s, size 10 s: every key's records fall in [0, 10 s): windows [-5, 5) and
	 * [0, 10) hold parts of them and [5, 15) the rest; counts are checked per window in
	 * the tumbling run only */
	struct sl_window_spec hop = { .kind = SL_WIN_HOP, .size_ms = 10000, .slide_ms = 10000 };

	run(&tumble, NKEYS);
	T_ASSERT_EQ_I64(seen.total, NKEYS * 2);
	run(&hop, NKEYS);
	return T_EXIT_PASS;
}
