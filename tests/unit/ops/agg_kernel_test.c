/*
 * agg_kernel_test.c - the typed kernel table on its own: which (function, type) pairs exist
 * and their result types, MIN/MAX over TIMESTAMP, and merge of empty and non-empty
 * accumulators (the partial-aggregate case of hopping slices and sessions). Which kernels
 * retract and which own memory (destroy hook). Values of every kernel: agg_types_test.c.
 * SUM(DISTINCT) of doubles: each value once, added in the order values first came, also
 * across a merge and a snapshot and restore (floating-point sums depend on the order).
 */
#include <string.h>

#include "agg.h"
#include "snap.h"
#include "tests/test.h"

static void check_result(const struct sl_agg_kernel *k, const struct sl_agg_bound *b,
			 const void *acc, bool is_null, int64_t v)
{
	_Alignas(8) uint8_t buf[256];
	struct sl_row_builder rb;
	const struct sl_row *r;

	sl_rowb_init(&rb, buf, sizeof buf, 1);
	k->result(b, acc, &rb, 0);
	r = sl_rowb_finish(&rb);
	T_ASSERT(r);
	T_ASSERT_EQ_I64(sl_row_is_null(r, 0), is_null);
	if (!is_null)
		T_ASSERT_EQ_I64(sl_row_i64(r, 0), v);
}

static const struct sl_row *ts_row(uint8_t *buf, int64_t ts)
{
	struct sl_row_builder rb;

	sl_rowb_init(&rb, buf, 256, 1);
	sl_rowb_set_i64(&rb, 0, ts);
	return sl_rowb_finish(&rb);
}

static const struct sl_row *f64_row(uint8_t *buf, double v)
{
	struct sl_row_builder rb;

	sl_rowb_init(&rb, buf, 256, 1);
	sl_rowb_set_f64(&rb, 0, v);
	return sl_rowb_finish(&rb);
}

static double f64_result(const struct sl_agg_bound *b, const void *acc)
{
	_Alignas(8) uint8_t buf[256];
	struct sl_row_builder rb;
	const struct sl_row *r;

	sl_rowb_init(&rb, buf, sizeof buf, 1);
	b->k->result(b, acc, &rb, 0);
	r = sl_rowb_finish(&rb);
	T_ASSERT(r && !sl_row_is_null(r, 0));
	return sl_row_f64(r, 0);
}

static void sum_distinct_order(void)
{
	struct sl_schema *s = sl_schema_create();
	struct sl_agg_spec spec = {
		.kind = SL_AGG_SUM, .field = 0, .name = "s", .sql_types = true, .distinct = true
	};
	/* 1e16 + 0.1 loses the 0.1: the order of additions shows in the result, which is
	 * 0.2 in first-seen order (0.1 is lost under 2e16) and other values in most others */
	static const double in[] = { 1e16, -1e16, 1e16, 0.1, 2e16, -1e16, -2e16, 0.2, 0.1 };
	const double want = ((((1e16 + -1e16) + 0.1) + 2e16) + -2e16) + 0.2;
	_Alignas(8) uint8_t rowbuf[256];
	uint64_t acc[1] = { 0 }, a1[1] = { 0 }, a2[1] = { 0 }, back[1] = { 0 };
	struct sl_agg_bound b = { 0 };
	struct sl_snap_buf snap;
	struct sl_snap_reader r;
	char err[128];

	T_ASSERT(s && sl_schema_add(s, "v", SL_TYPE_DOUBLE) == 0);
	T_ASSERT(sl_agg_bind(&b, &spec, s, err, sizeof err) == 0);
	T_ASSERT(b.inner && b.out_type == SL_TYPE_DOUBLE && b.k->destroy);
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
		b.k->add(&b, acc, f64_row(rowbuf, in[i]));
	T_ASSERT(f64_result(&b, acc) == want);
	/* merged: {1e16, -1e16} then {-1e16, 0.1, 2e16, -2e16, 0.2}: the union in that order */
	b.k->add(&b, a1, f64_row(rowbuf, 1e16));
	b.k->add(&b, a1, f64_row(rowbuf, -1e16));
	b.k->add(&b, a2, f64_row(rowbuf, -1e16));
	b.k->add(&b, a2, f64_row(rowbuf, 0.1));
	b.k->add(&b, a2, f64_row(rowbuf, 2e16));
	b.k->add(&b, a2, f64_row(rowbuf, -2e16));
	b.k->add(&b, a2, f64_row(rowbuf, 0.2));
	b.k->merge(&b, a1, a2);
	T_ASSERT(f64_result(&b, a1) == want);
	/* a snapshot and restore keeps the order */
	sl_snap_init(&snap);
	T_ASSERT(b.k->serialize(&b, acc, &snap) == 0);
	sl_snap_reader_init(&r, snap.data, snap.len);
	T_ASSERT(b.k->deserialize(&b, back, &r) == 0 && r.pos == r.len);
	T_ASSERT(f64_result(&b, back) == want);
	sl_snap_free(&snap);
	b.k->destroy(&b, acc);
	b.k->destroy(&b, a1);
	b.k->destroy(&b, a2);
	b.k->destroy(&b, back);
	/* only SUM and AVG of fixed-width values take DISTINCT as a fold */
	sl_schema_destroy(s);
	s = sl_schema_create();
	T_ASSERT(s && sl_schema_add(s, "v", SL_TYPE_STRING) == 0);
	spec.kind = SL_AGG_MAX;
	T_ASSERT(sl_agg_bind(&b, &spec, s, err, sizeof err) == 0 && !b.inner);
	sl_schema_destroy(s);
}

int main(void)
{
	sum_distinct_order();
	static const enum sl_type all[] = {
		SL_TYPE_BOOL,	SL_TYPE_INT,	       SL_TYPE_BIGINT, SL_TYPE_DOUBLE,
		SL_TYPE_STRING, SL_TYPE_TIMESTAMP,     SL_TYPE_FLOAT,  SL_TYPE_DECIMAL,
		SL_TYPE_DATE,	SL_TYPE_TIMESTAMP_LTZ,
	};
	enum { B = SL_TYPE_BIGINT, D = SL_TYPE_DOUBLE, I = -1 /* the input type */ };
	/* supported[kind][i]: 0 = refused, else the expected result type */
	static const int supported[SL_AGG_M2 + 1][10] = {
		[SL_AGG_COUNT] = { B, B, B, B, B, B, B, B, B, B },
		[SL_AGG_SUM] = { 0, B, I, I, 0, 0, I, I, 0, 0 },
		[SL_AGG_AVG] = { 0, I, I, I, 0, 0, I, I, 0, 0 },
		[SL_AGG_MIN] = { I, I, I, I, I, I, I, I, I, I },
		[SL_AGG_MAX] = { I, I, I, I, I, I, I, I, I, I },
		[SL_AGG_COUNT_DISTINCT] = { B, B, B, B, B, B, B, B, B, B },
		[SL_AGG_FIRST_VALUE] = { I, I, I, I, I, I, I, I, I, I },
		[SL_AGG_LAST_VALUE] = { I, I, I, I, I, I, I, I, I, I },
		[SL_AGG_M2] = { 0, D, D, D, 0, 0, D, 0, 0, 0 },
	};
	_Alignas(8) uint8_t rowbuf[256];
	int64_t acc[3], other[3];
	const struct sl_agg_kernel *k;
	struct sl_agg_bound b = { .field = 0 };

	for (int kind = SL_AGG_COUNT; kind <= SL_AGG_M2; kind++) {
		if (kind == SL_AGG_USER)
			continue;
		for (int i = 0; i < 10; i++) {
			bool retracts = kind == SL_AGG_COUNT || kind == SL_AGG_SUM ||
					kind == SL_AGG_AVG || kind == SL_AGG_M2;
			bool dyn = kind == SL_AGG_COUNT_DISTINCT ||
				   (all[i] == SL_TYPE_STRING && kind != SL_AGG_COUNT);

			k = sl_agg_kernel_find(kind, all[i], false);
			if (!supported[kind][i]) {
				T_ASSERT(k == NULL);
				continue;
			}
			T_ASSERT(k && k->add && k->merge && k->result && k->acc_size <= 24);
			/* retract only where the accumulator alone can undo an input */
			T_ASSERT((k->retract != NULL) == retracts);
			T_ASSERT((k->destroy != NULL) == dyn);
			T_ASSERT_EQ_I64(k->out ? (int)k->out : -1, supported[kind][i]);
		}
	}
	/* SQL: SUM(INT) is INT; everything else as the C API */
	k = sl_agg_kernel_find(SL_AGG_SUM, SL_TYPE_INT, true);
	T_ASSERT(k && k->out == SL_TYPE_INT);
	T_ASSERT(sl_agg_kernel_find(SL_AGG_SUM, SL_TYPE_BIGINT, true) ==
		 sl_agg_kernel_find(SL_AGG_SUM, SL_TYPE_BIGINT, false));
	k = sl_agg_kernel_find(SL_AGG_COUNT_STAR, SL_TYPE_STRING, false);
	T_ASSERT(k && k->out == SL_TYPE_BIGINT && k->retract);
	T_ASSERT(sl_agg_kernel_find(SL_AGG_USER, 0, false) != NULL);
	T_ASSERT(sl_agg_kernel_find(0, SL_TYPE_INT, false) == NULL);
	T_ASSERT(sl_agg_kernel_find(SL_AGG_M2 + 1, SL_TYPE_INT, false) == NULL);
	T_ASSERT(sl_agg_kernel_find(SL_AGG_MIN, SL_TYPE_TIMESTAMP_LTZ + 1, false) == NULL);
	T_ASSERT(strcmp(sl_agg_kind_name(SL_AGG_AVG), "AVG") == 0);
	T_ASSERT(strcmp(sl_agg_kind_name(SL_AGG_COUNT_DISTINCT), "COUNT(DISTINCT)") == 0);

	/* MIN over TIMESTAMP, including negative (pre-1970) values and empty merges */
	k = sl_agg_kernel_find(SL_AGG_MIN, SL_TYPE_TIMESTAMP, false);
	b.k = k;
	memset(acc, 0, sizeof acc);
	memset(other, 0, sizeof other);
	check_result(k, &b, acc, true, 0);
	k->merge(&b, acc, other); /* empty + empty */
	check_result(k, &b, acc, true, 0);
	k->add(&b, other, ts_row(rowbuf, 5));
	k->merge(&b, acc, other); /* empty + 5 */
	check_result(k, &b, acc, false, 5);
	k->add(&b, acc, ts_row(rowbuf, -3));
	check_result(k, &b, acc, false, -3);
	memset(other, 0, sizeof other);
	k->merge(&b, acc, other); /* -3 + empty */
	check_result(k, &b, acc, false, -3);

	/* MAX keeps the first of equal values' meaning: just the max, 0 is a real value */
	k = sl_agg_kernel_find(SL_AGG_MAX, SL_TYPE_BIGINT, false);
	b.k = k;
	memset(acc, 0, sizeof acc);
	k->add(&b, acc, ts_row(rowbuf, -7));
	check_result(k, &b, acc, false, -7);
	k->add(&b, acc, ts_row(rowbuf, 0));
	check_result(k, &b, acc, false, 0);

	/* SUM merge adds values and non-NULL counts */
	k = sl_agg_kernel_find(SL_AGG_SUM, SL_TYPE_INT, false);
	b.k = k;
	memset(acc, 0, sizeof acc);
	memset(other, 0, sizeof other);
	k->add(&b, acc, ts_row(rowbuf, 4));
	k->add(&b, other, ts_row(rowbuf, -6));
	k->merge(&b, acc, other);
	check_result(k, &b, acc, false, -2);
	return T_EXIT_PASS;
}
