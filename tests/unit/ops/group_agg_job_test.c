/*
 * group_agg_job_test.c - the updating GROUP BY through the real runtime (sl_job_run on 1 and
 * 2 shards): a Debezium-like changelog of orders (+I, -U/+U moving orders between statuses,
 * -D) keyed by status, COUNT(*) and SUM(total) per status. The sink applies the changelog to
 * a table (per shard instance: a key's rows all reach one shard, in order) and checks every
 * retraction against the row it retracts; the final table must equal the aggregate of the
 * final orders, as in the seed_cdc_debezium_orders_by_status acceptance case.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "group_agg.h"
#include "tests/test.h"

#define NORDERS 60
#define NEVENTS 400

static const char *const statuses[] = { "paid", "pending", "shipped" };

struct event {
	enum sl_row_kind kind;
	int id, status;
	int64_t cents;
};

static struct event events[NEVENTS * 2];
static int nevents;

/* The final orders, for the expected table. */
static int final_status[NORDERS]; /* -1: absent */
static int64_t final_cents[NORDERS];

static void make_events(unsigned seed)
{
	srand(seed);
	nevents = 0;
	for (int i = 0; i < NORDERS; i++)
		final_status[i] = -1;
	for (int e = 0; e < NEVENTS; e++) {
		int id = rand() % NORDERS, st = rand() % 3;
		int64_t cents = rand() % 10000;

		if (final_status[id] < 0) { /* op c */
			events[nevents++] = (struct event){ SL_ROW_INSERT, id, st, cents };
		} else if (rand() % 4) { /* op u: before and after images */
			events[nevents++] = (struct event){ SL_ROW_UPDATE_BEFORE, id,
							    final_status[id], final_cents[id] };
			events[nevents++] = (struct event){ SL_ROW_UPDATE_AFTER, id, st, cents };
		} else { /* op d */
			events[nevents++] = (struct event){ SL_ROW_DELETE, id, final_status[id],
							    final_cents[id] };
			final_status[id] = -1;
			continue;
		}
		final_status[id] = st;
		final_cents[id] = cents;
	}
}

/* ---- source: the event list on one split ---- */

static int src_nsplits(const void *cfg)
{
	return 1;
}

static void *src_open(const void *cfg, int split, struct sl_error *err)
{
	return calloc(1, sizeof(int));
}

static int src_poll(void *state, struct sl_src_ctx *c, int max)
{
	int *pos = state, n = 0;

	if (*pos == nevents)
		return SL_SRC_EOF;
	while (n < max && *pos < nevents) {
		const struct event *e = &events[(*pos)++];
		const char *st = statuses[e->status];
		struct sl_row_builder b;
		int rc;

		sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 3);
		sl_rowb_set_i64(&b, 0, e->id);
		sl_rowb_set_str(&b, 1, st, (uint32_t)strlen(st));
		sl_rowb_set_i64(&b, 2, e->cents);
		sl_rowb_set_kind(&b, e->kind);
		rc = sl_src_emit(c, sl_rowb_finish(&b));
		if (rc < 0)
			return rc;
		n++;
	}
	return n;
}

static void src_close(void *state)
{
	free(state);
}

static const struct sl_source_ops src_ops = {
	.name = "orders",
	.nsplits = src_nsplits,
	.open = src_open,
	.poll = src_poll,
	.close = src_close,
};

/* ---- sink: the changelog applied to a table, per status ---- */

struct table {
	int present[3];
	int64_t count[3], sum[3];
	int errors;
};

static struct table tables[2];

static void *sink_open(const void *cfg, const struct sl_schema *schema, int shard, int nshards,
		       struct sl_error *err)
{
	memset(&tables[shard], 0, sizeof(tables[shard]));
	return &tables[shard];
}

static int sink_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	struct table *t = state;
	uint32_t len;
	const char *s = sl_row_str(row, 0, &len);
	int st = len == 4 ? 0 : len == 7 && s[1] == 'e' ? 1 : 2;
	int64_t n = sl_row_i64(row, 1), sum = sl_row_i64(row, 2);

	if (row->kind == SL_ROW_INSERT || row->kind == SL_ROW_UPDATE_AFTER) {
		t->errors += t->present[st];
		t->present[st] = 1;
		t->count[st] = n;
		t->sum[st] = sum;
	} else {
		t->errors += !t->present[st] || t->count[st] != n || t->sum[st] != sum;
		t->present[st] = 0;
	}
	return 0;
}

static int sink_flush(void *state)
{
	return 0;
}

static void sink_close(void *state)
{
}

static const struct sl_sink_ops sink_ops = {
	.name = "table",
	.open = sink_open,
	.write = sink_write,
	.flush = sink_flush,
	.close = sink_close,
};

static void run(int nshards)
{
	static const int key[] = { 1 };
	static const struct sl_agg_spec aggs[] = {
		{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "orders", .sql_types = true },
		{ .kind = SL_AGG_SUM, .field = 2, .name = "total", .sql_types = true },
	};
	struct sl_schema *in = sl_schema_create(), *out = NULL;
	struct sl_wm_strategy wm = { .kind = SL_WM_NONE, .ts_field = -1 };
	struct sl_run_opts opts = { .nshards = nshards };
	struct sl_process_fn fn;
	struct sl_stream *s;
	struct sl_job *job;
	char err[256];
	int64_t want_n[3] = { 0 }, want_sum[3] = { 0 };

	T_ASSERT(in);
	sl_schema_add(in, "id", SL_TYPE_INT);
	sl_schema_add(in, "status", SL_TYPE_STRING);
	sl_schema_add_decimal(in, "total", 10, 2);
	{
		struct sl_group_agg_cfg cfg = {
			.in = in, .key_fields = key, .nkey = 1, .aggs = aggs, .naggs = 2
		};

		if (sl_group_agg_build(&cfg, &fn, &out, err, sizeof err)) {
			fprintf(stderr, "%s\n", err);
			exit(T_EXIT_FAIL);
		}
	}
	job = sl_job_create("group-agg");
	T_ASSERT(job);
	s = sl_job_source(job, "orders", &src_ops, NULL, in, &wm);
	s = sl_stream_key_by(s, key, 1);
	s = sl_stream_process(s, "by-status", &fn, out);
	if (sl_stream_sink(s, "table", &sink_ops, NULL) || sl_job_run(job, &opts)) {
		fprintf(stderr, "job: %s\n", sl_job_error(job)->msg);
		exit(T_EXIT_FAIL);
	}
	sl_job_destroy(job);
	sl_group_agg_free(&fn);
	sl_schema_destroy(out);
	sl_schema_destroy(in);

	for (int i = 0; i < NORDERS; i++) {
		if (final_status[i] >= 0) {
			want_n[final_status[i]]++;
			want_sum[final_status[i]] += final_cents[i];
		}
	}
	for (int st = 0; st < 3; st++) {
		int present = 0;
		int64_t n = 0, sum = 0;

		for (int sh = 0; sh < nshards; sh++) {
			T_ASSERT_EQ_I64(tables[sh].errors, 0);
			if (tables[sh].present[st]) {
				present++;
				n = tables[sh].count[st];
				sum = tables[sh].sum[st];
			}
		}
		T_ASSERT_EQ_I64(present, want_n[st] > 0);
		T_ASSERT_EQ_I64(n, want_n[st]);
		T_ASSERT_EQ_I64(sum, want_sum[st]);
	}
}

int main(void)
{
	for (unsigned seed = 1; seed <= 3; seed++) {
		make_events(seed);
		run(1);
		run(2);
	}
	return T_EXIT_PASS;
}
