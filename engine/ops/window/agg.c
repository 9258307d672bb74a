/*
 * agg.c - the table of typed aggregate kernels (see agg.h).
 *
 * Every (function, input type) pair is one row of `kernels`, so adding a type or a function
 * is adding table rows, never a branch in a shared per-type if-tree. INT, BIGINT and
 * TIMESTAMP share the 64-bit integer kernels (they are all int64 slots); DOUBLE has its own.
 *
 * Invariants of the built-in accumulators: all-zero bytes are the empty state, and `n`/`has`
 * counts non-NULL inputs, so SUM/AVG/MIN/MAX of only NULLs yield NULL (SQL) while COUNT
 * yields 0. Integer sums wrap on overflow like Java's long arithmetic in Flink.
 */
#include <string.h>

#include "agg.h"

struct acc_i64 {
	int64_t v;
	int64_t n; /* non-NULL inputs seen */
};

struct acc_f64 {
	double v;
	int64_t n;
};

/* ---- COUNT ---------------------------------------------------------------------------- */

static void count_star_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	(*(int64_t *)acc)++;
}

static void count_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	*(int64_t *)acc += !sl_row_is_null(row, a->field);
}

static void count_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	*(int64_t *)acc += *(const int64_t *)other;
}

static void count_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
			 int field)
{
	sl_rowb_set_i64(b, field, *(const int64_t *)acc);
}

/* ---- SUM / AVG -------------------------------------------------------------------------- */

static void sum_i64_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_i64 *s = acc;

	if (sl_row_is_null(row, a->field))
		return;
	s->v = (int64_t)((uint64_t)s->v + (uint64_t)sl_row_i64(row, a->field));
	s->n++;
}

static void sum_i64_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_i64 *s = acc;
	const struct acc_i64 *o = other;

	s->v = (int64_t)((uint64_t)s->v + (uint64_t)o->v);
	s->n += o->n;
}

/* SUM, MIN, MAX: the value, or NULL when every input was NULL. */
static void opt_i64_result(const struct sl_agg_bound *a, const void *acc,
			   struct sl_row_builder *b, int field)
{
	const struct acc_i64 *s = acc;

	if (s->n)
		sl_rowb_set_i64(b, field, s->v);
	else
		sl_rowb_set_null(b, field);
}

/* Flink: AVG keeps the input type, so AVG(INT) is an integer division (truncating). */
static void avg_i64_result(const struct sl_agg_bound *a, const void *acc,
			   struct sl_row_builder *b, int field)
{
	const struct acc_i64 *s = acc;

	if (s->n)
		sl_rowb_set_i64(b, field, s->v / s->n);
	else
		sl_rowb_set_null(b, field);
}

static void sum_f64_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_f64 *s = acc;

	if (sl_row_is_null(row, a->field))
		return;
	s->v += sl_row_f64(row, a->field);
	s->n++;
}

static void sum_f64_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_f64 *s = acc;
	const struct acc_f64 *o = other;

	s->v += o->v;
	s->n += o->n;
}

static void opt_f64_result(const struct sl_agg_bound *a, const void *acc,
			   struct sl_row_builder *b, int field)
{
	const struct acc_f64 *s = acc;

	if (s->n)
		sl_rowb_set_f64(b, field, s->v);
	else
		sl_rowb_set_null(b, field);
}

static void avg_f64_result(const struct sl_agg_bound *a, const void *acc,
			   struct sl_row_builder *b, int field)
{
	const struct acc_f64 *s = acc;

	if (s->n)
		sl_rowb_set_f64(b, field, s->v / (double)s->n);
	else
		sl_rowb_set_null(b, field);
}

/* ---- MIN / MAX: `n` doubles as the "has a value" flag ---------------------------------- */

#define MINMAX_KERNELS(name, T, acc_t, get, better)                                           \
	static void name##_add(const struct sl_agg_bound *a, void *acc,                      \
			       const struct sl_row *row)                                     \
	{                                                                                     \
		struct acc_t *s = acc;                                                        \
		T x;                                                                          \
                                                                                              \
		if (sl_row_is_null(row, a->field))                                            \
			return;                                                               \
		x = get(row, a->field);                                                       \
		if (!s->n || better(x, s->v))                                                 \
			s->v = x;                                                             \
		s->n = 1;                                                                     \
	}                                                                                     \
	static void name##_merge(const struct sl_agg_bound *a, void *acc, const void *other) \
	{                                                                                     \
		struct acc_t *s = acc;                                                        \
		const struct acc_t *o = other;                                                \
                                                                                              \
		if (o->n && (!s->n || better(o->v, s->v))) {                                  \
			s->v = o->v;                                                          \
			s->n = 1;                                                             \
		}                                                                             \
	}

#define LESS(x, y) ((x) < (y))
#define GREATER(x, y) ((x) > (y))

MINMAX_KERNELS(min_i64, int64_t, acc_i64, sl_row_i64, LESS)
MINMAX_KERNELS(max_i64, int64_t, acc_i64, sl_row_i64, GREATER)
MINMAX_KERNELS(min_f64, double, acc_f64, sl_row_f64, LESS)
MINMAX_KERNELS(max_f64, double, acc_f64, sl_row_f64, GREATER)

/* ---- USER: the sl_agg_fn callbacks ----------------------------------------------------- */

static void user_init(const struct sl_agg_bound *a, void *acc)
{
	if (a->user.init)
		a->user.init(acc, a->user.arg);
}

static void user_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	a->user.add(acc, row, a->user.arg);
}

static void user_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	a->user.merge(acc, other, a->user.arg);
}

static void user_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
			int field)
{
	a->user.result(acc, b, field, a->user.arg);
}

/* ---- the table -------------------------------------------------------------------------- */

#define K_COUNT { 8, SL_TYPE_BIGINT, NULL, count_add, NULL, count_merge, count_result }
#define K_SUM_I { 16, SL_TYPE_BIGINT, NULL, sum_i64_add, NULL, sum_i64_merge, opt_i64_result }
#define K_SUM_F { 16, SL_TYPE_DOUBLE, NULL, sum_f64_add, NULL, sum_f64_merge, opt_f64_result }
#define K_AVG_I { 16, 0, NULL, sum_i64_add, NULL, sum_i64_merge, avg_i64_result }
#define K_AVG_F { 16, 0, NULL, sum_f64_add, NULL, sum_f64_merge, avg_f64_result }
#define K_MIN_I { 16, 0, NULL, min_i64_add, NULL, min_i64_merge, opt_i64_result }
#define K_MAX_I { 16, 0, NULL, max_i64_add, NULL, max_i64_merge, opt_i64_result }
#define K_MIN_F { 16, 0, NULL, min_f64_add, NULL, min_f64_merge, opt_f64_result }
#define K_MAX_F { 16, 0, NULL, max_f64_add, NULL, max_f64_merge, opt_f64_result }

/* [kind][input type]; column 0 is used by the kinds that take no typed input. A zero row
 * (add == NULL) is an unsupported combination. */
static const struct sl_agg_kernel kernels[SL_AGG_USER + 1][SL_TYPE_TIMESTAMP + 1] = {
	[SL_AGG_COUNT_STAR] = {
		[0] = { 8, SL_TYPE_BIGINT, NULL, count_star_add, NULL, count_merge, count_result },
	},
	[SL_AGG_COUNT] = {
		[SL_TYPE_BOOL] = K_COUNT, [SL_TYPE_INT] = K_COUNT, [SL_TYPE_BIGINT] = K_COUNT,
		[SL_TYPE_DOUBLE] = K_COUNT, [SL_TYPE_STRING] = K_COUNT,
		[SL_TYPE_TIMESTAMP] = K_COUNT,
	},
	[SL_AGG_SUM] = {
		[SL_TYPE_INT] = K_SUM_I, [SL_TYPE_BIGINT] = K_SUM_I, [SL_TYPE_DOUBLE] = K_SUM_F,
	},
	[SL_AGG_AVG] = {
		[SL_TYPE_INT] = K_AVG_I, [SL_TYPE_BIGINT] = K_AVG_I, [SL_TYPE_DOUBLE] = K_AVG_F,
	},
	[SL_AGG_MIN] = {
		[SL_TYPE_INT] = K_MIN_I, [SL_TYPE_BIGINT] = K_MIN_I, [SL_TYPE_DOUBLE] = K_MIN_F,
		[SL_TYPE_TIMESTAMP] = K_MIN_I,
	},
	[SL_AGG_MAX] = {
		[SL_TYPE_INT] = K_MAX_I, [SL_TYPE_BIGINT] = K_MAX_I, [SL_TYPE_DOUBLE] = K_MAX_F,
		[SL_TYPE_TIMESTAMP] = K_MAX_I,
	},
	[SL_AGG_USER] = {
		[0] = { 0, 0, user_init, user_add, NULL, user_merge, user_result },
	},
};

const struct sl_agg_kernel *sl_agg_kernel_find(enum sl_agg_kind kind, enum sl_type in)
{
	const struct sl_agg_kernel *k;

	if (kind < SL_AGG_COUNT_STAR || kind > SL_AGG_USER)
		return NULL;
	if (kind == SL_AGG_COUNT_STAR || kind == SL_AGG_USER)
		in = 0;
	else if (in < SL_TYPE_BOOL || in > SL_TYPE_TIMESTAMP)
		return NULL;
	k = &kernels[kind][in];
	return k->add ? k : NULL;
}

const char *sl_agg_kind_name(enum sl_agg_kind kind)
{
	static const char *const names[] = {
		[SL_AGG_COUNT_STAR] = "COUNT(*)", [SL_AGG_COUNT] = "COUNT", [SL_AGG_SUM] = "SUM",
		[SL_AGG_AVG] = "AVG", [SL_AGG_MIN] = "MIN", [SL_AGG_MAX] = "MAX",
		[SL_AGG_USER] = "USER",
	};

	if (kind < SL_AGG_COUNT_STAR || kind > SL_AGG_USER)
		return "?";
	return names[kind];
}
