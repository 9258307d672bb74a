/*
 * agg_types_test.c - the value of every built-in kernel over every input type, called
 * directly: NULL inputs skipped, an empty group and an all-NULL group (COUNT 0, the rest
 * NULL), MIN/MAX/FIRST/LAST_VALUE/COUNT(DISTINCT) over all ten types, SUM/AVG with Flink's
 * result types (SUM(INT) INT wrapping at 32 bits, AVG(INT) truncating toward zero, FLOAT
 * sums rounded to float every step, DECIMAL sums exact and NULL past 18 digits, AVG(DECIMAL)
 * at scale max(6, s) rounded HALF_UP), and for each kernel: merge of split inputs gives the
 * same result as one accumulator, retract (where it exists) undoes add, and destroy frees
 * what the accumulator owns (the ASan build checks the frees).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "agg.h"
#include "tests/test.h"

/* Input columns: one per type. */
enum { C_B, C_I, C_L, C_F, C_D, C_DEC, C_S, C_DT, C_TS, C_LTZ, NCOL };

static struct sl_schema *in;

/* Five rows of one group: v1, NULL, v2, v1 again, v3 (arrival order). */
struct val {
	uint64_t slot;
	const char *s;
};

static struct val vals[NCOL][3];

static uint64_t f64(double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	return u;
}

static void setup(void)
{
	in = sl_schema_create();
	T_ASSERT(in);
	T_ASSERT(sl_schema_add(in, "b", SL_TYPE_BOOL) == C_B);
	T_ASSERT(sl_schema_add(in, "i", SL_TYPE_INT) == C_I);
	T_ASSERT(sl_schema_add(in, "l", SL_TYPE_BIGINT) == C_L);
	T_ASSERT(sl_schema_add(in, "f", SL_TYPE_FLOAT) == C_F);
	T_ASSERT(sl_schema_add(in, "d", SL_TYPE_DOUBLE) == C_D);
	T_ASSERT(sl_schema_add_decimal(in, "dec", 10, 5) == C_DEC);
	T_ASSERT(sl_schema_add(in, "s", SL_TYPE_STRING) == C_S);
	T_ASSERT(sl_schema_add(in, "dt", SL_TYPE_DATE) == C_DT);
	T_ASSERT(sl_schema_add(in, "ts", SL_TYPE_TIMESTAMP) == C_TS);
	T_ASSERT(sl_schema_add(in, "ltz", SL_TYPE_TIMESTAMP_LTZ) == C_LTZ);

	vals[C_B][0].slot = 1, vals[C_B][1].slot = 0, vals[C_B][2].slot = 1;
	vals[C_I][0].slot = 5, vals[C_I][1].slot = (uint64_t)-30, vals[C_I][2].slot = 9;
	vals[C_L][0].slot = (uint64_t)-7, vals[C_L][1].slot = 40;
	vals[C_L][2].slot = 1ull << 40;
	vals[C_F][0].slot = f64(1.5), vals[C_F][1].slot = f64(0.1f);
	vals[C_F][2].slot = f64(-2.5);
	vals[C_D][0].slot = f64(2.25), vals[C_D][1].slot = f64(-1.0);
	vals[C_D][2].slot = f64(0.1);
	/* DECIMAL(10, 5): 1.00001, -2.05000, 0.00003 */
	vals[C_DEC][0].slot = 100001, vals[C_DEC][1].slot = (uint64_t)-205000;
	vals[C_DEC][2].slot = 3;
	vals[C_S][0].s = "pear", vals[C_S][1].s = "apple", vals[C_S][2].s = "Zebra";
	vals[C_DT][0].slot = 19000, vals[C_DT][1].slot = (uint64_t)-5, vals[C_DT][2].slot = 100;
	vals[C_TS][0].slot = 1000, vals[C_TS][1].slot = (uint64_t)-1, vals[C_TS][2].slot = 5;
	vals[C_LTZ][0].slot = 7, vals[C_LTZ][1].slot = 3, vals[C_LTZ][2].slot = 9;
}

/* Row r of the group (0..4: v1, NULL, v2, v1, v3); NULL in every column for r == 1. */
static const struct sl_row *row_of(uint8_t *buf, int r)
{
	static const int pick[5] = { 0, -1, 1, 0, 2 };
	struct sl_row_builder b;

	sl_rowb_init(&b, buf, 512, NCOL);
	for (int c = 0; c < NCOL && pick[r] >= 0; c++) {
		const struct val *v = &vals[c][pick[r]];

		if (c == C_S)
			sl_rowb_set_str(&b, c, v->s, (uint32_t)strlen(v->s));
		else
			sl_rowb_set_i64(&b, c, (int64_t)v->slot);
	}
	return sl_rowb_finish(&b);
}

/* The result of acc as a one-field row in buf. */
static const struct sl_row *result_of(const struct sl_agg_bound *a, const void *acc, uint8_t *buf)
{
	struct sl_row_builder b;
	const struct sl_row *r;

	sl_rowb_init(&b, buf, 512, 1);
	a->k->result(a, acc, &b, 0);
	r = sl_rowb_finish(&b);
	T_ASSERT(r);
	return r;
}

/* Equal results; float sums only within rounding (addition is not associative, in Flink
 * too: a merged or retracted sum may differ in the last bits). */
static bool same(const struct sl_row *x, const struct sl_row *y, bool str, bool approx)
{
	uint32_t xl, yl;
	const char *xs, *ys;

	if (sl_row_is_null(x, 0) || sl_row_is_null(y, 0))
		return sl_row_is_null(x, 0) == sl_row_is_null(y, 0);
	if (approx)
		return fabs(sl_row_f64(x, 0) - sl_row_f64(y, 0)) < 1e-6;
	if (!str)
		return x->slot[0] == y->slot[0];
	xs = sl_row_str(x, 0, &xl);
	ys = sl_row_str(y, 0, &yl);
	return xl == yl && !memcmp(xs, ys, xl);
}

static int failures;

static void check_at(const struct sl_row *r, bool is_null, uint64_t slot, const char *s,
		     const char *what, int line)
{
	uint32_t len;
	const char *got;

	if (sl_row_is_null(r, 0) != is_null) {
		fprintf(stderr, "line %d %s: null %d, want %d\n", line, what, sl_row_is_null(r, 0),
			is_null);
		failures++;
		return;
	}
	if (is_null)
		return;
	if (s) {
		got = sl_row_str(r, 0, &len);
		if (len != strlen(s) || memcmp(got, s, len)) {
			fprintf(stderr, "line %d %s: '%.*s', want '%s'\n", line, what, (int)len,
				got, s);
			failures++;
		}
	} else if (r->slot[0] != slot) {
		fprintf(stderr, "line %d %s: %lld, want %lld\n", line, what, (long long)r->slot[0],
			(long long)slot);
		failures++;
	}
}

/*
 * Runs one aggregate over the group and checks the result against (is_null, slot, s), then
 * checks the kernel's laws: empty and all-NULL groups, merge of the rows split in two
 * (both ways round: FIRST/LAST merge by arrival), retract of rows 2..4 back to rows 0..1.
 */
static void run(enum sl_agg_kind kind, int col, enum sl_type out_type, bool is_null, uint64_t slot,
		const char *s, int line)
{
	struct sl_agg_spec spec = { .kind = kind, .field = col, .name = "x", .sql_types = true };
	_Alignas(16) uint8_t acc[32] = { 0 }, p1[32] = { 0 }, p2[32] = { 0 }, p3[32] = { 0 };
	_Alignas(8) uint8_t rb[512], o1[512], o2[512];
	char what[64], err[200];
	struct sl_agg_bound a = { 0 };
	bool str, approx;

	snprintf(what, sizeof what, "%s(%s)", sl_agg_kind_name(kind),
		 col < 0 ? "*" : sl_schema_name(in, col));
	if (sl_agg_bind(&a, &spec, in, err, sizeof err)) {
		fprintf(stderr, "line %d %s: %s\n", line, what, err);
		exit(T_EXIT_FAIL);
	}
	T_ASSERT(a.k->acc_size <= sizeof acc);
	T_ASSERT_EQ_I64(a.out_type, out_type);
	str = out_type == SL_TYPE_STRING;
	approx = (kind == SL_AGG_SUM || kind == SL_AGG_AVG) &&
		 (out_type == SL_TYPE_FLOAT || out_type == SL_TYPE_DOUBLE);

	/* empty group, then a group of only the NULL row */
	check_at(result_of(&a, acc, o1),
		 kind != SL_AGG_COUNT && kind != SL_AGG_COUNT_DISTINCT && kind != SL_AGG_COUNT_STAR,
		 0, NULL, what, line);
	a.k->add(&a, acc, row_of(rb, 1));
	if (kind == SL_AGG_COUNT_STAR)
		check_at(result_of(&a, acc, o1), false, 1, NULL, what, line);
	else
		check_at(result_of(&a, acc, o1),
			 kind != SL_AGG_COUNT && kind != SL_AGG_COUNT_DISTINCT, 0, NULL, what,
			 line);

	/* the whole group */
	for (int r = 0; r < 5; r++)
		if (r != 1)
			a.k->add(&a, acc, row_of(rb, r));
	check_at(result_of(&a, acc, o1), is_null, slot, s, what, line);

	/* merge: rows 0..1 into p1, 2..4 into p2 (later arrivals), p1 += p2 */
	for (int r = 0; r < 5; r++)
		a.k->add(&a, r < 2 ? p1 : p2, row_of(rb, r));
	sl_agg_copy(&a, p3, p1); /* a copy shares nothing: destroying p1 leaves it intact */
	a.k->merge(&a, p1, p2);
	if (!same(result_of(&a, acc, o1), result_of(&a, p1, o2), str, approx)) {
		fprintf(stderr, "line %d %s: merge differs\n", line, what);
		failures++;
	}
	if (a.k->destroy)
		a.k->destroy(&a, p1);
	a.k->merge(&a, p3, p2);
	if (!same(result_of(&a, acc, o1), result_of(&a, p3, o2), str, approx)) {
		fprintf(stderr, "line %d %s: merge of a copy differs\n", line, what);
		failures++;
	}

	/* retract rows 2..4: back to the result of rows 0..1 (p2 reused as the reference) */
	if (a.k->retract) {
		if (a.k->destroy)
			a.k->destroy(&a, p2);
		memset(p2, 0, sizeof p2);
		for (int r = 0; r < 2; r++)
			a.k->add(&a, p2, row_of(rb, r));
		for (int r = 2; r < 5; r++)
			a.k->retract(&a, acc, row_of(rb, r));
		if (!same(result_of(&a, acc, o1), result_of(&a, p2, o2), str, approx)) {
			fprintf(stderr, "line %d %s: retract differs\n", line, what);
			failures++;
		}
	}
	if (a.k->destroy) {
		a.k->destroy(&a, acc);
		a.k->destroy(&a, p2);
		a.k->destroy(&a, p3);
		/* destroy leaves an empty accumulator */
		check_at(result_of(&a, acc, o1), kind != SL_AGG_COUNT_DISTINCT, 0, NULL, what,
			 line);
	}
	T_ASSERT(!sl_agg_nomem);
}

#define RUN(kind, col, t, n, v, s) run(kind, col, t, n, v, s, __LINE__)

int main(void)
{
	static const enum sl_type type_of[NCOL] = {
		SL_TYPE_BOOL,	   SL_TYPE_INT,		  SL_TYPE_BIGINT, SL_TYPE_FLOAT,
		SL_TYPE_DOUBLE,	   SL_TYPE_DECIMAL,	  SL_TYPE_STRING, SL_TYPE_DATE,
		SL_TYPE_TIMESTAMP, SL_TYPE_TIMESTAMP_LTZ,
	};
	/* min and max value index per column (of v1, v2, v3) */
	static const int min_of[NCOL] = { 1, 1, 0, 2, 1, 1, 2, 1, 1, 1 };
	static const int max_of[NCOL] = { 0, 2, 2, 0, 0, 0, 0, 0, 0, 2 };
	float fs;
	double ds;

	setup();
	RUN(SL_AGG_COUNT_STAR, -1, SL_TYPE_BIGINT, false, 5, NULL);
	for (int c = 0; c < NCOL; c++) {
		enum sl_type t = type_of[c];
		const struct val *v = vals[c];

		RUN(SL_AGG_COUNT, c, SL_TYPE_BIGINT, false, 4, NULL);
		RUN(SL_AGG_COUNT_DISTINCT, c, SL_TYPE_BIGINT, false, c == C_B ? 2 : 3, NULL);
		RUN(SL_AGG_MIN, c, t, false, v[min_of[c]].slot, v[min_of[c]].s);
		RUN(SL_AGG_MAX, c, t, false, v[max_of[c]].slot, v[max_of[c]].s);
		RUN(SL_AGG_FIRST_VALUE, c, t, false, v[0].slot, v[0].s);
		RUN(SL_AGG_LAST_VALUE, c, t, false, v[2].slot, v[2].s);
	}
	/* SUM/AVG: v1 + v2 + v1 + v3 over 4 non-NULL values */
	RUN(SL_AGG_SUM, C_I, SL_TYPE_INT, false, (uint64_t)-11, NULL);
	RUN(SL_AGG_AVG, C_I, SL_TYPE_INT, false, (uint64_t)-2, NULL); /* -2.75 truncated */
	RUN(SL_AGG_SUM, C_L, SL_TYPE_BIGINT, false, 1099511627802ull, NULL);
	RUN(SL_AGG_AVG, C_L, SL_TYPE_BIGINT, false, 274877906950ull, NULL);
	fs = 1.5f;
	fs += 0.1f;
	fs += 1.5f;
	fs += -2.5f;
	RUN(SL_AGG_SUM, C_F, SL_TYPE_FLOAT, false, f64(fs), NULL);
	RUN(SL_AGG_AVG, C_F, SL_TYPE_FLOAT, false,
	    f64((float)((1.5 + (double)0.1f + 1.5 - 2.5) / 4)), NULL);
	ds = 2.25 + -1.0 + 2.25 + 0.1;
	RUN(SL_AGG_SUM, C_D, SL_TYPE_DOUBLE, false, f64(ds), NULL);
	RUN(SL_AGG_AVG, C_D, SL_TYPE_DOUBLE, false, f64(ds / 4), NULL);
	/* 1.00001 - 2.05 + 1.00001 + 0.00003 = -0.04995; / 4 = -0.0124875 -> -0.012488 */
	RUN(SL_AGG_SUM, C_DEC, SL_TYPE_DECIMAL, false, (uint64_t)-4995, NULL);
	RUN(SL_AGG_AVG, C_DEC, SL_TYPE_DECIMAL, false, (uint64_t)-12488, NULL);
	if (failures)
		return T_EXIT_FAIL;

	/* result types and DECIMAL precision/scale: SUM (18, s), AVG (18, max(6, s)) */
	{
		struct sl_agg_spec sp = {
			.kind = SL_AGG_SUM, .field = C_DEC, .name = "s", .sql_types = true
		};
		struct sl_agg_bound a = { 0 };
		char err[200];

		T_ASSERT(sl_agg_bind(&a, &sp, in, err, sizeof err) == 0);
		T_ASSERT(a.out_prec == 18 && a.out_scale == 5);
		sp.kind = SL_AGG_AVG;
		T_ASSERT(sl_agg_bind(&a, &sp, in, err, sizeof err) == 0);
		T_ASSERT(a.out_prec == 18 && a.out_scale == 6);
		sp.kind = SL_AGG_MAX;
		T_ASSERT(sl_agg_bind(&a, &sp, in, err, sizeof err) == 0);
		T_ASSERT(a.out_prec == 10 && a.out_scale == 5);
		/* the C API's SUM(INT) stays BIGINT */
		sp = (struct sl_agg_spec){ .kind = SL_AGG_SUM, .field = C_I, .name = "s" };
		T_ASSERT(sl_agg_bind(&a, &sp, in, err, sizeof err) == 0);
		T_ASSERT(a.out_type == SL_TYPE_BIGINT);
		sp.kind = SL_AGG_AVG;
		sp.field = C_S;
		T_ASSERT(sl_agg_bind(&a, &sp, in, err, sizeof err) == -EINVAL);
		T_ASSERT(strcmp(err, "AVG over STRING field 's' is not supported") == 0);
	}

	/* SUM(INT) wraps like Java int; SUM(DECIMAL) is NULL beyond 18 digits, exact again
	 * once a retraction brings it back (the 128-bit sum never lost a digit) */
	{
		struct sl_agg_spec sp = {
			.kind = SL_AGG_SUM, .field = C_I, .name = "s", .sql_types = true
		};
		_Alignas(16) uint8_t acc[32] = { 0 };
		_Alignas(8) uint8_t rb[512], o[512];
		struct sl_agg_bound a = { 0 };
		struct sl_row_builder b;
		char err[200];

		T_ASSERT(sl_agg_bind(&a, &sp, in, err, sizeof err) == 0);
		for (int k = 0; k < 2; k++) {
			sl_rowb_init(&b, rb, sizeof rb, NCOL);
			sl_rowb_set_i64(&b, C_I, 2147483647);
			a.k->add(&a, acc, sl_rowb_finish(&b));
		}
		check_at(result_of(&a, acc, o), false, (uint64_t)-2, NULL, "SUM(INT) wrap",
			 __LINE__);

		sp.field = C_DEC;
		memset(acc, 0, sizeof acc);
		T_ASSERT(sl_agg_bind(&a, &sp, in, err, sizeof err) == 0);
		for (int k = 0; k < 10; k++) {
			sl_rowb_init(&b, rb, sizeof rb, NCOL);
			sl_rowb_set_i64(&b, C_DEC, 99999999999999999LL); /* 17 nines */
			a.k->add(&a, acc, sl_rowb_finish(&b));
		}
		check_at(result_of(&a, acc, o), false, 999999999999999990ull, NULL,
			 "SUM(DECIMAL) 18 digits", __LINE__);
		sl_rowb_init(&b, rb, sizeof rb, NCOL);
		sl_rowb_set_i64(&b, C_DEC, 10);
		a.k->add(&a, acc, sl_rowb_finish(&b));
		check_at(result_of(&a, acc, o), true, 0, NULL, "SUM(DECIMAL) overflow", __LINE__);
		a.k->retract(&a, acc, sl_rowb_finish(&b));
		check_at(result_of(&a, acc, o), false, 999999999999999990ull, NULL,
			 "SUM(DECIMAL) back", __LINE__);
	}
	return failures ? T_EXIT_FAIL : T_EXIT_PASS;
}
