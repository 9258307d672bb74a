/*
 * datagen_test.c - the datagen source: identical rows for identical (random start, split) whatever
 * the poll sizes, different rows for different random starts and splits, row counts dealt over
 * splits, sequences dealt like Flink's (and ending the source), random values inside their
 * ranges, event time within its disorder bound with the configured share of late records,
 * rate limiting that never runs ahead of the clock, and cfg errors.
 */
#include <math.h>
#include <time.h>

#include "conn_harness.h"

static const char *const spec[] = { "seq", "BIGINT", "user", "STRING", "n", "INT", "x", "DOUBLE",
				    "ok", "BOOL", "ts", "TIMESTAMP", "r", "TIMESTAMP", NULL };

static struct sl_datagen_field fields[7] = {
	{ .kind = SL_GEN_SEQUENCE, .start = 100, .end = 1000000 },
	{ .kind = SL_GEN_RANDOM, .length = 12 },
	{ .kind = SL_GEN_RANDOM, .min = -5, .max = 5 },
	{ .kind = SL_GEN_RANDOM, .min = 10, .max = 20 },
	{ .kind = SL_GEN_RANDOM },
	{ .kind = SL_GEN_EVENT_TIME, .base_ts = 1700000000000ll, .step_ms = 10,
	  .max_disorder_ms = 500, .late_fraction = 0.05, .late_ms = 60000 },
	{ .kind = SL_GEN_RANDOM },
};

static bool same_rows(struct harness *a, struct harness *b)
{
	if (a->nrows != b->nrows)
		return false;
	for (size_t i = 0; i < a->nrows; i++)
		if (a->rows[i]->size != b->rows[i]->size ||
		    memcmp(a->rows[i], b->rows[i], a->rows[i]->size) != 0)
			return false;
	return true;
}

static void test_determinism(struct sl_schema *s)
{
	struct sl_datagen_cfg cfg = { .schema = s, .fields = fields, .number_of_rows = 5000,
				      .nsplits = 2, .seed = 42 };
	struct harness a, b, c;

	h_init(&a);
	h_init(&b);
	h_init(&c);
	h_drain(&a, &sl_datagen_source_ops, &cfg, 1, 64);
	h_drain(&b, &sl_datagen_source_ops, &cfg, 1, 7); /* other batching, same rows */
	T_ASSERT_EQ_I64(a.nrows, 2500);
	T_ASSERT(same_rows(&a, &b));
	h_drain(&c, &sl_datagen_source_ops, &cfg, 0, 64); /* another split differs */
	T_ASSERT_EQ_I64(c.nrows, 2500);
	T_ASSERT(memcmp(&a.rows[0]->slot[1], &c.rows[0]->slot[1], 8) == 0); /* same layout */
	T_ASSERT(!same_rows(&a, &c));
	h_reset(&b);
	cfg.seed = 43; /* another random start differs */
	h_drain(&b, &sl_datagen_source_ops, &cfg, 1, 64);
	T_ASSERT(!same_rows(&a, &b));
	h_fini(&a);
	h_fini(&b);
	h_fini(&c);
}

/* number_of_rows and sequences dealt over 3 splits; every record checked for its ranges. */
static void test_counts_and_values(struct sl_schema *s)
{
	struct sl_datagen_cfg cfg = { .schema = s, .fields = fields, .number_of_rows = 100000,
				      .nsplits = 3, .seed = 7 };
	const struct sl_datagen_field *et = &fields[5];
	uint64_t late = 0, total = 0;
	int64_t imin = 99, imax = -99;
	bool *seen = calloc(100000, 1);
	struct harness h;

	T_ASSERT(sl_datagen_source_ops.nsplits(&cfg) == 3);
	h_init(&h);
	for (int sp = 0; sp < 3; sp++) {
		h_reset(&h);
		h_drain(&h, &sl_datagen_source_ops, &cfg, sp, 1000);
		T_ASSERT_EQ_I64(h.nrows, sp == 0 ? 33334 : 33333);
		for (size_t k = 0; k < h.nrows; k++) {
			const struct sl_row *r = h.rows[k];
			int64_t seq = sl_row_i64(r, 0), i = seq - 100, ideal, ts, v;
			uint32_t len;
			const char *u = sl_row_str(r, 1, &len);

			T_ASSERT(r->nulls == 0);
			/* split sp gets start+sp, start+sp+3, ... */
			T_ASSERT_EQ_I64(i, (int64_t)k * 3 + sp);
			T_ASSERT(!seen[i]);
			seen[i] = true;
			T_ASSERT(len == 12);
			for (uint32_t j = 0; j < len; j++)
				T_ASSERT(strchr("abcdefghijklmnopqrstuvwxyz"
						"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", u[j]) &&
					 u[j]);
			v = sl_row_i64(r, 2);
			T_ASSERT(v >= -5 && v <= 5);
			imin = v < imin ? v : imin;
			imax = v > imax ? v : imax;
			T_ASSERT(sl_row_f64(r, 3) >= 10 && sl_row_f64(r, 3) < 20);
			T_ASSERT(r->slot[4] <= 1);
			/* event time: ideal - disorder, or a further late_ms back */
			ideal = et->base_ts + i * et->step_ms;
			ts = sl_row_i64(r, 5);
			if (ideal - ts > et->max_disorder_ms) {
				late++;
				T_ASSERT(ideal - ts >= et->late_ms);
				T_ASSERT(ideal - ts <= et->late_ms + et->max_disorder_ms);
			} else {
				T_ASSERT(ts <= ideal);
			}
			T_ASSERT(sl_row_i64(r, 6) >= 0 && sl_row_i64(r, 6) < 4102444800000ll);
			total++;
		}
	}
	T_ASSERT_EQ_I64(total, 100000);
	for (int i = 0; i < 100000; i++)
		T_ASSERT(seen[i]);
	T_ASSERT(imin == -5 && imax == 5); /* both ends reachable */
	/* 5% late: binomial sd is ~69 over 100000 records; allow 7 sd */
	T_ASSERT(late > 5000 - 480 && late < 5000 + 480);
	free(seen);
	h_fini(&h);
}

/* With no row limit a sequence's end ends the source; a STRING sequence is decimal text. */
static void test_sequence_end(void)
{
	static const char *const sspec[] = { "id", "STRING", "v", "INT", NULL };
	struct sl_schema *s = h_schema(sspec);
	struct sl_datagen_field f[2] = {
		{ .kind = SL_GEN_SEQUENCE, .start = -3, .end = 6 },
		{ .kind = SL_GEN_SEQUENCE, .start = 0, .end = INT32_MAX },
	};
	struct sl_datagen_cfg cfg = { .schema = s, .fields = f, .nsplits = 4 };
	struct harness h;
	char want[8];

	h_init(&h);
	for (int sp = 0; sp < 4; sp++)
		h_drain(&h, &sl_datagen_source_ops, &cfg, sp, 64);
	T_ASSERT_EQ_I64(h.nrows, 10); /* 3 + 3 + 2 + 2 */
	/* split 0 produced records 0, 4, 8 */
	snprintf(want, sizeof want, "%d", -3);
	T_ASSERT_STR(h.rows[0], 0, want);
	T_ASSERT_STR(h.rows[1], 0, "1");
	T_ASSERT_STR(h.rows[2], 0, "5");
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[2], 1), 8);
	T_ASSERT_STR(h.rows[3], 0, "-2"); /* split 1 */
	h_fini(&h);
	sl_schema_destroy(s);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* 2000 rows/s over 2 splits: split 0 may never be ahead of 1000/s since its first poll. */
static void test_rate(struct sl_schema *s)
{
	struct sl_datagen_cfg cfg = { .schema = s, .fields = fields, .rows_per_second = 2000,
				      .nsplits = 2, .seed = 1 };
	struct sl_error err = { 0 };
	struct harness h;
	void *st = sl_datagen_source_ops.open(&cfg, 0, &err);
	double t0 = 0, el = 0;
	int rc, polls = 0;

	h_init(&h);
	T_ASSERT(st);
	do {
		if (!polls)
			t0 = now_s();
		rc = sl_datagen_source_ops.poll(st, &h.c, 64);
		el = now_s() - t0;
		T_ASSERT(rc >= 0);
		polls++;
		/* never ahead: one record at once, then 1000/s */
		T_ASSERT((double)h.nrows <= 1 + 1000 * el + 1e-6);
		if (!rc) {
			struct timespec ts = { 0, 2000000 };

			nanosleep(&ts, NULL);
		}
	} while (el < 0.12);
	/* it did produce (loosely: a loaded machine may stall the test) */
	T_ASSERT(h.nrows >= 10);
	sl_datagen_source_ops.close(st);
	h_fini(&h);
}

static void test_errors(struct sl_schema *s)
{
	struct sl_datagen_field bad[7];
	struct sl_datagen_cfg cfg = { .schema = s, .fields = bad, .number_of_rows = 10 };
	struct sl_error err = { 0 };

	memcpy(bad, fields, sizeof bad);
	bad[0].end = 0; /* end < start */
	T_ASSERT(sl_datagen_source_ops.open(&cfg, 0, &err) == NULL);
	T_ASSERT_EQ_I64(err.code, -EINVAL);
	T_ASSERT(strcmp(err.msg, "datagen: field 'seq' (BIGINT): sequence end is before its "
				 "start") == 0);
	memcpy(bad, fields, sizeof bad);
	bad[4].kind = SL_GEN_SEQUENCE;
	T_ASSERT(sl_datagen_source_ops.open(&cfg, 0, &err) == NULL);
	T_ASSERT(strstr(err.msg, "'ok' (BOOLEAN): a sequence needs a number or string"));
	memcpy(bad, fields, sizeof bad);
	bad[2].max = (int64_t)INT32_MAX + 1;
	T_ASSERT(sl_datagen_source_ops.open(&cfg, 0, &err) == NULL);
	T_ASSERT(strstr(err.msg, "random range outside the INT range"));
	memcpy(bad, fields, sizeof bad);
	bad[1].kind = SL_GEN_EVENT_TIME;
	T_ASSERT(sl_datagen_source_ops.open(&cfg, 0, &err) == NULL);
	T_ASSERT(strstr(err.msg, "event time needs TIMESTAMP[_LTZ] or BIGINT"));
	memcpy(bad, fields, sizeof bad);
	bad[5].late_fraction = 1.5;
	T_ASSERT(sl_datagen_source_ops.open(&cfg, 0, &err) == NULL);
}

int main(void)
{
	struct sl_schema *s = h_schema(spec);

	test_determinism(s);
	test_counts_and_values(s);
	test_sequence_end();
	test_rate(s);
	test_errors(s);
	sl_schema_destroy(s);
	return T_EXIT_PASS;
}
