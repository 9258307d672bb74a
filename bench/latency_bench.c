/*
 * latency_bench.c - figure 7 of the runtime issue: end-to-end latency of an idle pipeline.
 *
 * A source emits one record every 200 us (5000/s, far below capacity) stamped with
 * CLOCK_MONOTONIC; the job is source -> key_by -> map -> key_by -> sink on 2 shards, so each
 * record crosses two exchanges. The sink takes now - stamp. The reference, measured in the
 * same run, is the same stamp-and-compare through one bare SPSC ring between two threads
 * (the floor for crossing cores at all, with the consumer polling the way a shard does).
 *
 * Output (bench/run protocol): FIGURE <suite>/<figure> <value> <unit> <ratio> <ref>
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/job.h>

#include "ring.h"

#define PERIOD_NS 200000L
#define NREC 20000

static int64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000L + t.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- the sluice pipeline ---- */

struct src {
	int64_t next;
	int64_t due;
};

static int src_nsplits(const void *cfg)
{
	return 1;
}

static void *src_open(const void *cfg, int split, struct sl_error *err)
{
	struct src *s = calloc(1, sizeof(*s));

	if (s)
		s->due = mono_ns() + 50 * 1000000L; /* let every shard start */
	return s;
}

static int src_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct src *s = state;
	struct sl_row_builder b;
	int64_t now;

	if (s->next == NREC)
		return SL_SRC_EOF;
	now = mono_ns();
	if (now < s->due)
		return 0;
	s->due += PERIOD_NS;
	sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 2);
	sl_rowb_set_i64(&b, 0, s->next % 97);
	sl_rowb_set_i64(&b, 1, mono_ns());
	s->next++;
	return sl_src_emit(c, sl_rowb_finish(&b)) == 0 ? 1 : -1;
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

static void rekey(const struct sl_row *in, struct sl_row_builder *out, void *arg)
{
	sl_rowb_set_i64(out, 0, sl_row_i64(in, 0) * 31 + 7);
	sl_rowb_set_i64(out, 1, sl_row_i64(in, 1));
}

static int64_t lat[NREC];
static _Atomic int nlat;

static void *snk_open(const void *cfg, const struct sl_schema *s, int shard, int n,
		      struct sl_error *err)
{
	return lat;
}

static int snk_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	int i = atomic_fetch_add_explicit(&nlat, 1, memory_order_relaxed);

	if (i < NREC)
		lat[i] = mono_ns() - sl_row_i64(row, 1);
	return 0;
}

static const struct sl_sink_ops snk_ops = { .name = "lat", .open = snk_open,
					    .write = snk_write };

static void run_sluice(int64_t *p50, int64_t *p99)
{
	struct sl_schema *sch = sl_schema_create();
	struct sl_wm_strategy wm = { .kind = SL_WM_NONE, .ts_field = -1 };
	struct sl_run_opts opts = { .nshards = 2, .cores = "0-1" };
	int key[1] = { 0 };

	sl_schema_add(sch, "k", SL_TYPE_BIGINT);
	sl_schema_add(sch, "stamp", SL_TYPE_BIGINT);
	struct sl_job *job = sl_job_create("latency");
	struct sl_stream *s = sl_job_source(job, "paced", &src_ops, NULL, sch, &wm);

	s = sl_stream_key_by(s, key, 1);
	s = sl_stream_map(s, "rekey", rekey, NULL, sch);
	s = sl_stream_key_by(s, key, 1);
	sl_stream_sink(s, "lat", &snk_ops, NULL);
	atomic_store(&nlat, 0);
	if (sl_job_run(job, &opts)) {
		fprintf(stderr, "latency: %s\n", sl_job_error(job)->msg);
		exit(1);
	}
	qsort(lat, NREC, sizeof lat[0], cmp_i64);
	*p50 = lat[NREC / 2];
	*p99 = lat[NREC * 99 / 100];
	sl_job_destroy(job);
	sl_schema_destroy(sch);
}

/* ---- the reference: one bare ring, the consumer polling like an idle shard ---- */

static struct sl_ring *ref_ring;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *ref_consumer(void *arg)
{
	int n = 0;

	pin(1);
	while (n < NREC) {
		const struct sl_frame *f = sl_ring_peek_spsc(ref_ring);

		if (!f)
			continue;
		lat[n++] = mono_ns() - f->ts;
		sl_ring_consume_spsc(ref_ring, f);
	}
	return NULL;
}

static void run_ref(int64_t *p50, int64_t *p99)
{
	pthread_t t;
	int64_t due = mono_ns() + 10 * 1000000L;

	ref_ring = sl_ring_create(1 << 20);
	pthread_create(&t, NULL, ref_consumer, NULL);
	pin(0);
	for (int i = 0; i < NREC; i++) {
		struct sl_frame *f;

		while (mono_ns() < due)
			;
		due += PERIOD_NS;
		f = sl_ring_reserve_spsc(ref_ring, 32);
		f->size = 32;
		f->type = SL_FRAME_RAW;
		f->ts = mono_ns();
		sl_ring_commit_spsc(ref_ring, f);
		sl_ring_publish_spsc(ref_ring);
	}
	pthread_join(t, NULL);
	sl_ring_destroy(ref_ring);
	qsort(lat, NREC, sizeof lat[0], cmp_i64);
	*p50 = lat[NREC / 2];
	*p99 = lat[NREC * 99 / 100];
}

int main(void)
{
	int64_t s50, s99, r50, r99;

	run_ref(&r50, &r99);
	run_sluice(&s50, &s99);
	printf("FIGURE latency/p50_us %.1f us %.2f ring_p50=%.1fus\n", s50 / 1e3,
	       (double)s50 / (double)(r50 ? r50 : 1), r50 / 1e3);
	printf("FIGURE latency/p99_us %.1f us %.2f ring_p99=%.1fus\n", s99 / 1e3,
	       (double)s99 / (double)(r99 ? r99 : 1), r99 / 1e3);
	return 0;
}
