/*
 * fraud_detector.c - Flink's classic fraud detector as a sluice C job (public API only).
 *
 * Transactions (user_id, amount, ts) are keyed by user_id. A keyed process function keeps,
 * per user, the time of the last transaction above 1000 in value state, and an event-time
 * timer one minute after it that clears the state. A large transaction within a minute of
 * the previous large one is an alert:
 *
 *     user_id, first_ts, second_ts, amount
 *
 * The source is an in-memory list (the four transactions of the fraud-detection walkthrough); with it, exactly one
 * alert comes out: U123's 2000 at 30000 follows its 1500 at 1000.
 *
 *     ./fraud_detector [nshards]
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/job.h>
#include <sluice/operator.h>

#define LARGE 1000
#define WINDOW_MS 60000

/* ---- an in-memory source: one split emitting a fixed list ------------------------------- */

struct tx {
	const char *user_id;
	int64_t amount;
	sl_ts_t ts;
};

static const struct tx seed_txs[] = {
	{ "U123", 1500, 1000 },
	{ "U123", 2000, 30000 },   /* 29 s after the first large one: fraud */
	{ "U456", 500, 5000 },
	{ "U123", 3000, 120000 },  /* 90 s after the previous large one: fine */
};

struct tx_list {
	const struct tx *txs;
	int n;
};

struct tx_split {
	const struct tx_list *list;
	int pos;
};

static int tx_nsplits(const void *cfg)
{
	return 1;
}

static void *tx_open(const void *cfg, int split, struct sl_error *err)
{
	struct tx_split *s = calloc(1, sizeof(*s));

	if (!s) {
		err->code = -ENOMEM;
		snprintf(err->msg, sizeof(err->msg), "tx source: out of memory");
		return NULL;
	}
	s->list = cfg;
	return s;
}

static int tx_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct tx_split *s = state;
	int n = 0;

	if (s->pos == s->list->n)
		return SL_SRC_EOF;
	while (n < max && s->pos < s->list->n) {
		const struct tx *t = &s->list->txs[s->pos++];
		struct sl_row_builder b;
		int rc;

		sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 3);
		sl_rowb_set_str(&b, 0, t->user_id, (uint32_t)strlen(t->user_id));
		sl_rowb_set_i64(&b, 1, t->amount);
		sl_rowb_set_i64(&b, 2, t->ts);
		rc = sl_src_emit(c, sl_rowb_finish(&b));
		if (rc < 0)
			return rc;
		n++;
	}
	return n;
}

static void tx_close(void *state)
{
	free(state);
}

static const struct sl_source_ops tx_source = {
	.name = "transactions",
	.nsplits = tx_nsplits,
	.open = tx_open,
	.poll = tx_poll,
	.close = tx_close,
};

/* ---- the fraud detector ------------------------------------------------------------------ */

enum { ST_LAST_LARGE = 0 };

static const struct sl_state_desc fraud_states[] = {
	/* event time of the user's last large transaction */
	{ "last-large-tx", SL_STATE_VALUE, sizeof(sl_ts_t), 0 },
};

static void fraud_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *tx, void *arg)
{
	int64_t amount = sl_row_i64(tx, 1);
	sl_ts_t *last, *slot;

	if (amount <= LARGE)
		return;
	last = sl_value_get(ctx, ST_LAST_LARGE);
	if (last) {
		if (ts - *last < WINDOW_MS) {
			struct sl_row_builder *out = sl_ctx_out(ctx);

			sl_ctx_key_copy(ctx, 0, out, 0); /* user_id */
			sl_rowb_set_i64(out, 1, *last);
			sl_rowb_set_i64(out, 2, ts);
			sl_rowb_set_i64(out, 3, amount);
			sl_emit(ctx, ts, sl_rowb_finish(out));
		}
		/* the minute now runs from this transaction */
		sl_timer_event_delete(ctx, *last + WINDOW_MS);
	}
	slot = sl_value_put(ctx, ST_LAST_LARGE);
	if (!slot)
		return;
	*slot = ts;
	sl_timer_event(ctx, ts + WINDOW_MS);
}

static void fraud_on_timer(struct sl_ctx *ctx, sl_ts_t at, enum sl_time_domain domain,
			   void *arg)
{
	/* a minute without a large transaction: forget the last one */
	sl_value_clear(ctx, ST_LAST_LARGE);
}

static const struct sl_process_fn fraud_fn = {
	.states = fraud_states,
	.nstates = 1,
	.process = fraud_process,
	.on_timer = fraud_on_timer,
};

/* ---- a sink that prints alerts and counts them ------------------------------------------- */

struct alerts {
	atomic_int n;
	int quiet;            /* tests: count, do not print */
	char user[32];        /* the last alert, for tests */
	int64_t first_ts, second_ts, amount;
};

struct alert_sink {
	struct alerts *a;
	const struct sl_schema *schema;
};

static void *alert_open(const void *cfg, const struct sl_schema *schema, int shard, int nshards,
			struct sl_error *err)
{
	struct alert_sink *s = calloc(1, sizeof(*s));

	if (!s) {
		err->code = -ENOMEM;
		snprintf(err->msg, sizeof(err->msg), "alert sink: out of memory");
		return NULL;
	}
	s->a = (struct alerts *)cfg;
	s->schema = schema;
	return s;
}

static int alert_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	struct alert_sink *s = state;
	struct alerts *a = s->a;
	uint32_t len;
	const char *user = sl_row_str(row, 0, &len);

	if (len >= sizeof(a->user))
		len = sizeof(a->user) - 1;
	memcpy(a->user, user, len);
	a->user[len] = 0;
	a->first_ts = sl_row_i64(row, 1);
	a->second_ts = sl_row_i64(row, 2);
	a->amount = sl_row_i64(row, 3);
	atomic_fetch_add(&a->n, 1);
	if (!a->quiet) {
		char line[256];

		sl_row_format(row, s->schema, line, sizeof(line));
		printf("FRAUD %s\n", line); /* stdio buffers; flushed in alert_flush */
	}
	return 0;
}

static int alert_flush(void *state)
{
	fflush(stdout);
	return 0;
}

static void alert_close(void *state)
{
	free(state);
}

static const struct sl_sink_ops alert_sink_ops = {
	.name = "alerts",
	.open = alert_open,
	.write = alert_write,
	.flush = alert_flush,
	.close = alert_close,
};

/* ---- the job ----------------------------------------------------------------------------- */

/* Builds and runs the job on `nshards` shards; alerts are counted in *a. Returns 0 or -errno
 * (the job's error message on stderr). */
static int fraud_run(int nshards, struct alerts *a)
{
	static const struct tx_list list = { seed_txs, sizeof(seed_txs) / sizeof(seed_txs[0]) };
	struct sl_schema *in = sl_schema_create(), *out = sl_schema_create();
	struct sl_wm_strategy wm = {
		.kind = SL_WM_BOUNDED,
		.max_delay_ms = 5000, /* the list is out of order by up to 25 s; late records
				       * still reach a process function, as in Flink */
		.ts_field = 2,
	};
	struct sl_run_opts opts = { .nshards = nshards };
	const int key[] = { 0 };
	struct sl_stream *s;
	struct sl_job *job = NULL;
	int rc = -ENOMEM;

	if (!in || !out)
		goto out_schemas;
	sl_schema_add(in, "user_id", SL_TYPE_STRING);
	sl_schema_add(in, "amount", SL_TYPE_BIGINT);
	sl_schema_add(in, "ts", SL_TYPE_BIGINT);
	sl_schema_add(out, "user_id", SL_TYPE_STRING);
	sl_schema_add(out, "first_ts", SL_TYPE_BIGINT);
	sl_schema_add(out, "second_ts", SL_TYPE_BIGINT);
	sl_schema_add(out, "amount", SL_TYPE_BIGINT);

	job = sl_job_create("fraud-detector");
	if (!job)
		goto out_schemas;
	s = sl_job_source(job, "transactions", &tx_source, &list, in, &wm);
	s = sl_stream_key_by(s, key, 1);
	s = sl_stream_process(s, "fraud-detector", &fraud_fn, out);
	rc = sl_stream_sink(s, "alerts", &alert_sink_ops, a);
	if (rc == 0)
		rc = sl_job_run(job, &opts);
	if (rc < 0)
		fprintf(stderr, "fraud_detector: %s\n", sl_job_error(job)->msg);
	sl_job_destroy(job);
out_schemas:
	sl_schema_destroy(out);
	sl_schema_destroy(in);
	return rc;
}

#ifndef FRAUD_DETECTOR_NO_MAIN
int main(int argc, char **argv)
{
	struct alerts a = { 0 };
	int rc = fraud_run(argc > 1 ? atoi(argv[1]) : 2, &a);

	if (rc < 0)
		return 1;
	printf("%d alert(s)\n", atomic_load(&a.n));
	return 0;
}
#endif
