/*
 * agg.c - the table of typed aggregate kernels (see agg.h).
 *
 * Every (function, input type) pair is one cell of `kernels`, so adding a type or a function
 * is adding table cells, never a branch in a shared per-type if-tree. Types that are int64
 * slots with the natural order (BOOL, INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ, DATE, DECIMAL of
 * one scale) share the 64-bit integer kernels; FLOAT and DOUBLE share the double ones (a
 * FLOAT slot holds a float-rounded double); STRING has its own.
 *
 * Invariants of the built-in accumulators: all-zero bytes are the empty state, and `n`/`has`
 * counts non-NULL inputs, so SUM/AVG/MIN/MAX of only NULLs yield NULL (SQL) while COUNT
 * yields 0. Integer sums wrap on overflow like Java's long (int for SQL SUM(INT)) arithmetic
 * in Flink. FLOAT sums round to float after every step, as Java float addition does.
 * DECIMAL sums are exact in 128 bits; the result is NULL when it needs more than 18 digits
 * (the widest DECIMAL a slot holds; Flink's SUM is DECIMAL(38, s) and also gives NULL on
 * overflow, only later).
 *
 * FIRST/LAST_VALUE order inputs by a per-thread arrival counter (a key lives on one shard,
 * so this is the key's arrival order); merge keeps the earliest (FIRST) or latest (LAST) of
 * the two sides, which is what hopping slices and merged sessions need.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "snap.h"
#include "hash.h"
#include "decimal.h"

_Thread_local bool sl_agg_nomem;

static _Thread_local uint64_t arrival; /* FIRST/LAST_VALUE order, see the file comment */

struct acc_i64 {
	int64_t v;
	int64_t n; /* non-NULL inputs seen */
};

struct acc_f64 {
	double v;
	int64_t n;
};

/* DECIMAL sum: the 128-bit unscaled sum in two words (the state is only 8-byte aligned). */
struct acc_dec {
	uint64_t lo;
	uint64_t hi;
	int64_t n;
};

/* FIRST/LAST_VALUE over a fixed-width type: the raw slot and its arrival number. */
struct acc_seq {
	uint64_t v;
	uint64_t seq; /* 0: no value yet */
};

/* MIN/MAX/FIRST/LAST_VALUE over STRING: the value in malloc'd memory. */
struct acc_str {
	char *p;
	uint32_t len;
	uint32_t cap;
	uint64_t seq; /* FIRST/LAST: arrival number; MIN/MAX: 1 once set. 0: no value */
};

/* ---- COUNT ---------------------------------------------------------------------------- */

static void count_star_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	(*(int64_t *)acc)++;
}

static void count_star_retract(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	(*(int64_t *)acc)--;
}

static void count_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	*(int64_t *)acc += !sl_row_is_null(row, a->field);
}

static void count_retract(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	*(int64_t *)acc -= !sl_row_is_null(row, a->field);
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

/* ---- SUM / AVG over integers ------------------------------------------------------------ */

static void sum_i64_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_i64 *s = acc;

	if (sl_row_is_null(row, a->field))
		return;
	s->v = (int64_t)((uint64_t)s->v + (uint64_t)sl_row_i64(row, a->field));
	s->n++;
}

static void sum_i64_retract(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_i64 *s = acc;

	if (sl_row_is_null(row, a->field))
		return;
	s->v = (int64_t)((uint64_t)s->v - (uint64_t)sl_row_i64(row, a->field));
	s->n--;
}

static void sum_i64_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_i64 *s = acc;
	const struct acc_i64 *o = other;

	s->v = (int64_t)((uint64_t)s->v + (uint64_t)o->v);
	s->n += o->n;
}

/* SUM, MIN, MAX: the value, or NULL when every input was NULL. */
static void opt_i64_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
			   int field)
{
	const struct acc_i64 *s = acc;

	if (s->n)
		sl_rowb_set_i64(b, field, s->v);
	else
		sl_rowb_set_null(b, field);
}

/* SQL SUM(INT) is INT: Java int addition wraps at 32 bits, and wrapping the 64-bit sum once
 * at the end gives the same bits as wrapping after every step. */
static void sum_i32_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
			   int field)
{
	const struct acc_i64 *s = acc;

	if (s->n)
		sl_rowb_set_i64(b, field, (int32_t)(uint32_t)(uint64_t)s->v);
	else
		sl_rowb_set_null(b, field);
}

/* Flink: AVG keeps the input type, so AVG(INT) is an integer division (truncating). */
static void avg_i64_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
			   int field)
{
	const struct acc_i64 *s = acc;

	if (s->n)
		sl_rowb_set_i64(b, field, s->v / s->n);
	else
		sl_rowb_set_null(b, field);
}

/* ---- SUM / AVG over DOUBLE and FLOAT ---------------------------------------------------- */

static void sum_f64_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_f64 *s = acc;

	if (sl_row_is_null(row, a->field))
		return;
	s->v += sl_row_f64(row, a->field);
	s->n++;
}

static void sum_f64_retract(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_f64 *s = acc;

	if (sl_row_is_null(row, a->field))
		return;
	s->v -= sl_row_f64(row, a->field);
	s->n--;
}

static void sum_f64_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_f64 *s = acc;
	const struct acc_f64 *o = other;

	s->v += o->v;
	s->n += o->n;
}

/* FLOAT sums: a double sum of two floats rounded once to float is the float sum (double has
 * more than 2 * 24 + 2 bits, so the double rounding is exact). */
static void sum_f32_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_f64 *s = acc;

	if (sl_row_is_null(row, a->field))
		return;
	s->v = (float)(s->v + sl_row_f64(row, a->field));
	s->n++;
}

static void sum_f32_retract(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_f64 *s = acc;

	if (sl_row_is_null(row, a->field))
		return;
	s->v = (float)(s->v - sl_row_f64(row, a->field));
	s->n--;
}

static void sum_f32_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_f64 *s = acc;
	const struct acc_f64 *o = other;

	s->v = (float)(s->v + o->v);
	s->n += o->n;
}

static void opt_f64_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
			   int field)
{
	const struct acc_f64 *s = acc;

	if (s->n)
		sl_rowb_set_f64(b, field, s->v);
	else
		sl_rowb_set_null(b, field);
}

static void avg_f64_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
			   int field)
{
	const struct acc_f64 *s = acc;

	if (s->n)
		sl_rowb_set_f64(b, field, s->v / (double)s->n);
	else
		sl_rowb_set_null(b, field);
}

/* Flink's AVG(FLOAT) sums in DOUBLE and casts the quotient to FLOAT. */
static void avg_f32_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
			   int field)
{
	const struct acc_f64 *s = acc;

	if (s->n)
		sl_rowb_set_f64(b, field, (float)(s->v / (double)s->n));
	else
		sl_rowb_set_null(b, field);
}

/* ---- SUM / AVG over DECIMAL --------------------------------------------------------------- */

static inline sl_dec_t dec_load(const struct acc_dec *s)
{
	return (sl_dec_t)(((unsigned __int128)s->hi << 64) | s->lo);
}

static inline void dec_store(struct acc_dec *s, sl_dec_t v)
{
	s->lo = (uint64_t)(unsigned __int128)v;
	s->hi = (uint64_t)((unsigned __int128)v >> 64);
}

static void sum_dec_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_dec *s = acc;

	if (sl_row_is_null(row, a->field))
		return;
	dec_store(s, dec_load(s) + sl_row_i64(row, a->field));
	s->n++;
}

static void sum_dec_retract(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_dec *s = acc;

	if (sl_row_is_null(row, a->field))
		return;
	dec_store(s, dec_load(s) - sl_row_i64(row, a->field));
	s->n--;
}

static void sum_dec_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_dec *s = acc;
	const struct acc_dec *o = other;

	dec_store(s, dec_load(s) + dec_load(o));
	s->n += o->n;
}

#define DEC18_LIMIT ((sl_dec_t)1000000000000000000LL) /* 10^18: DECIMAL(18, s) holds less */

static void set_dec18(struct sl_row_builder *b, int field, sl_dec_t v)
{
	if (v >= DEC18_LIMIT || v <= -DEC18_LIMIT)
		sl_rowb_set_null(b, field); /* overflow: NULL, as Flink's decimal arithmetic */
	else
		sl_rowb_set_i64(b, field, (int64_t)v);
}

static void sum_dec_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
			   int field)
{
	const struct acc_dec *s = acc;

	if (s->n)
		set_dec18(b, field, dec_load(s));
	else
		sl_rowb_set_null(b, field);
}

/* Flink: CAST(sum / count AS DECIMAL(38, max(6, s))), the quotient rounded HALF_UP. */
static void avg_dec_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
			   int field)
{
	const struct acc_dec *s = acc;
	struct sl_dec_type ts = { 38, (uint8_t)a->in_scale }, tc = { 19, 0 };
	struct sl_dec_type rt = { 38, (uint8_t)a->out_scale };
	sl_dec_t q;

	if (!s->n || sl_dec_div(dec_load(s), ts, (sl_dec_t)s->n, tc, rt, &q))
		sl_rowb_set_null(b, field);
	else
		set_dec18(b, field, q);
}

/* ---- MIN / MAX over fixed-width types: `n` doubles as the "has a value" flag ------------- */

#define MINMAX_KERNELS(name, T, acc_t, get, better)                                                \
	static void name##_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)  \
	{                                                                                          \
		struct acc_t *s = acc;                                                             \
		T x;                                                                               \
                                                                                                   \
		if (sl_row_is_null(row, a->field))                                                 \
			return;                                                                    \
		x = get(row, a->field);                                                            \
		if (!s->n || better(x, s->v))                                                      \
			s->v = x;                                                                  \
		s->n = 1;                                                                          \
	}                                                                                          \
	static void name##_merge(const struct sl_agg_bound *a, void *acc, const void *other)       \
	{                                                                                          \
		struct acc_t *s = acc;                                                             \
		const struct acc_t *o = other;                                                     \
                                                                                                   \
		if (o->n && (!s->n || better(o->v, s->v))) {                                       \
			s->v = o->v;                                                               \
			s->n = 1;                                                                  \
		}                                                                                  \
	}

#define LESS(x, y)    ((x) < (y))
#define GREATER(x, y) ((x) > (y))

MINMAX_KERNELS(min_i64, int64_t, acc_i64, sl_row_i64, LESS)
MINMAX_KERNELS(max_i64, int64_t, acc_i64, sl_row_i64, GREATER)
MINMAX_KERNELS(min_f64, double, acc_f64, sl_row_f64, LESS)
MINMAX_KERNELS(max_f64, double, acc_f64, sl_row_f64, GREATER)

/* ---- FIRST / LAST_VALUE over fixed-width types: the raw slot ----------------------------- */

static void first_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_seq *s = acc;

	if (s->seq || sl_row_is_null(row, a->field))
		return;
	s->v = row->slot[a->field];
	s->seq = ++arrival;
}

static void last_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_seq *s = acc;

	if (sl_row_is_null(row, a->field))
		return;
	s->v = row->slot[a->field];
	s->seq = ++arrival;
}

static void first_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_seq *s = acc;
	const struct acc_seq *o = other;

	if (o->seq && (!s->seq || o->seq < s->seq))
		*s = *o;
}

static void last_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_seq *s = acc;
	const struct acc_seq *o = other;

	if (o->seq > s->seq)
		*s = *o;
}

static void seq_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
		       int field)
{
	const struct acc_seq *s = acc;

	if (s->seq)
		sl_rowb_set_i64(b, field, (int64_t)s->v);
	else
		sl_rowb_set_null(b, field);
}

/* ---- STRING values: MIN / MAX / FIRST / LAST_VALUE ---------------------------------------- */

/* Byte-wise unsigned order, as Flink's BinaryStringData.compareTo (UTF-8 code point order). */
static int str_cmp(const char *x, uint32_t xl, const char *y, uint32_t yl)
{
	int r = memcmp(x, y, xl < yl ? xl : yl);

	return r ? r : (xl > yl) - (xl < yl);
}

/* Stores x into s; allocates only when x is longer than any value s held. Returns false
 * (s unchanged, sl_agg_nomem set) on ENOMEM. */
static bool str_set(struct acc_str *s, const char *x, uint32_t len, uint64_t seq)
{
	if (len > s->cap || !s->p) {
		uint32_t cap = len < 16 ? 16 : len;
		char *p = realloc(s->p, cap);

		if (!p) {
			sl_agg_nomem = true;
			return false;
		}
		s->p = p;
		s->cap = cap;
	}
	memcpy(s->p, x, len);
	s->len = len;
	s->seq = seq;
	return true;
}

static void str_destroy(const struct sl_agg_bound *a, void *acc)
{
	struct acc_str *s = acc;

	free(s->p);
	memset(s, 0, sizeof(*s));
}

static void str_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
		       int field)
{
	const struct acc_str *s = acc;

	if (s->seq)
		sl_rowb_set_str(b, field, s->p, s->len);
	else
		sl_rowb_set_null(b, field);
}

static void min_str_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_str *s = acc;
	const char *x;
	uint32_t len;

	if (sl_row_is_null(row, a->field))
		return;
	x = sl_row_str(row, a->field, &len);
	if (!s->seq || str_cmp(x, len, s->p, s->len) < 0)
		str_set(s, x, len, 1);
}

static void max_str_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_str *s = acc;
	const char *x;
	uint32_t len;

	if (sl_row_is_null(row, a->field))
		return;
	x = sl_row_str(row, a->field, &len);
	if (!s->seq || str_cmp(x, len, s->p, s->len) > 0)
		str_set(s, x, len, 1);
}

static void min_str_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_str *s = acc;
	const struct acc_str *o = other;

	if (o->seq && (!s->seq || str_cmp(o->p, o->len, s->p, s->len) < 0))
		str_set(s, o->p, o->len, 1);
}

static void max_str_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_str *s = acc;
	const struct acc_str *o = other;

	if (o->seq && (!s->seq || str_cmp(o->p, o->len, s->p, s->len) > 0))
		str_set(s, o->p, o->len, 1);
}

static void first_str_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_str *s = acc;
	const char *x;
	uint32_t len;

	if (s->seq || sl_row_is_null(row, a->field))
		return;
	x = sl_row_str(row, a->field, &len);
	str_set(s, x, len, ++arrival);
}

static void last_str_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_str *s = acc;
	const char *x;
	uint32_t len;

	if (sl_row_is_null(row, a->field))
		return;
	x = sl_row_str(row, a->field, &len);
	str_set(s, x, len, ++arrival);
}

static void first_str_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_str *s = acc;
	const struct acc_str *o = other;

	if (o->seq && (!s->seq || o->seq < s->seq))
		str_set(s, o->p, o->len, o->seq);
}

static void last_str_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_str *s = acc;
	const struct acc_str *o = other;

	if (o->seq > s->seq)
		str_set(s, o->p, o->len, o->seq);
}

/* ---- LISTAGG: the values in arrival order --------------------------------------------------
 * The accumulator owns its values as [u32 length][bytes] entries back to back, grown by
 * doubling (O(1) amortised per input, an allocation only when it outgrows its memory); the
 * result joins them with the separator, O(bytes held) per result as Flink's ListAggFunction
 * joins its list. A merge appends the other's values after ours (cumulating windows, merged
 * sessions: time order, as Flink), or puts them first for a HOP window's slices (newest_first,
 * Flink's order there). */

struct acc_list {
	char *p;
	uint32_t len; /* bytes of entries at p */
	uint32_t cap; /* bytes allocated at p */
	uint32_t n;   /* values held */
	uint32_t rsv;
};

/* Appends `len` bytes of entries (`nvals` values); false on ENOMEM (sl_agg_nomem set, the
 * accumulator unchanged) or past 4 GiB. */
static bool list_append(struct acc_list *l, const void *entries, uint32_t len, uint32_t nvals)
{
	if ((uint64_t)l->len + len > UINT32_MAX / 2) {
		sl_agg_nomem = true;
		return false;
	}
	if (l->len + len > l->cap) {
		uint32_t cap = l->cap ? l->cap : 64;
		char *p;

		while (cap < l->len + len)
			cap *= 2;
		p = realloc(l->p, cap);
		if (!p) {
			sl_agg_nomem = true;
			return false;
		}
		l->p = p;
		l->cap = cap;
	}
	memcpy(l->p + l->len, entries, len);
	l->len += len;
	l->n += nvals;
	return true;
}

static void list_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_list *l = acc;
	const char *x;
	uint32_t len;
	char hdr[4];

	if (sl_row_is_null(row, a->field))
		return;
	x = sl_row_str(row, a->field, &len);
	memcpy(hdr, &len, 4);
	/* the length first, then the bytes: two appends, undone together on failure */
	if (!list_append(acc, hdr, 4, 0))
		return;
	if (!list_append(acc, x, len, 1))
		l->len -= 4;
}

static void list_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_list *l = acc;
	const struct acc_list *o = other;
	uint32_t had = l->len;

	if (!o->n || !list_append(acc, o->p, o->len, o->n) || !a->newest_first || !had)
		return;
	/* o's entries now follow ours: rotate them to the front, O(bytes held) */
	memmove(l->p + o->len, l->p, had);
	memcpy(l->p, o->p, o->len);
}

static void list_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
			int field)
{
	const struct acc_list *l = acc;
	uint64_t total;
	char *dst;

	if (!l->n) {
		sl_rowb_set_null(b, field);
		return;
	}
	total = (uint64_t)l->len - 4ull * l->n + (uint64_t)(l->n - 1) * a->sep_len;
	if (total > UINT32_MAX || !(dst = sl_rowb_str_space(b, field, (uint32_t)total))) {
		/* too long for the row: the builder's overflow fails the row, never a cut value */
		if (total > UINT32_MAX)
			b->overflow = true;
		return;
	}
	for (uint32_t off = 0, i = 0; off < l->len; i++) {
		uint32_t len;

		memcpy(&len, l->p + off, 4);
		if (i) {
			memcpy(dst, a->sep, a->sep_len);
			dst += a->sep_len;
		}
		memcpy(dst, l->p + off + 4, len);
		dst += len;
		off += 4 + len;
	}
}

static void list_destroy(const struct sl_agg_bound *a, void *acc)
{
	struct acc_list *l = acc;

	free(l->p);
	memset(l, 0, sizeof(*l));
}

/* The number of values, then the entries as one length-prefixed run of bytes. */
static int list_serialize(const struct sl_agg_bound *a, const void *acc, struct sl_snap_buf *out)
{
	const struct acc_list *l = acc;
	int rc = sl_snap_put_u32(out, l->n);

	if (rc || !l->n)
		return rc;
	return sl_snap_put_bytes(out, l->p, l->len);
}

static int list_deserialize(const struct sl_agg_bound *a, void *acc, struct sl_snap_reader *r)
{
	struct acc_list *l = acc;
	const void *p = NULL; /* set by sl_snap_get_bytes */
	uint32_t n, len = 0, seen = 0, off = 0;

	if (sl_snap_get_u32(r, &n))
		return r->error;
	if (!n)
		return 0;
	if (sl_snap_get_bytes(r, &p, &len))
		return r->error;
	/* entries must tile the bytes exactly and number n */
	while (off < len) {
		uint32_t vl;

		if (len - off < 4)
			return -EINVAL;
		memcpy(&vl, (const char *)p + off, 4);
		if (vl > len - off - 4)
			return -EINVAL;
		off += 4 + vl;
		seen++;
	}
	if (seen != n)
		return -EINVAL;
	if (!list_append(l, p, len, n)) {
		sl_agg_nomem = false; /* reported by the return code */
		return -ENOMEM;
	}
	return 0;
}

/* ---- COUNT(DISTINCT): an open-addressing set of value bytes -------------------------------
 * Fixed-width values are their 8 slot bytes (NaN made canonical, as Java's Double.equals
 * treats every NaN as one value), strings their bytes. Slots hold (hash, arena offset,
 * length + 1); the value bytes sit in one arena. Load <= 1/2; O(1) per input, an allocation
 * only when a new distinct value outgrows the slots or the arena. */

struct dslot {
	uint64_t hash;
	uint32_t off;
	uint32_t len1; /* length + 1; 0: empty slot */
};

struct dset {
	uint32_t n;    /* distinct values */
	uint32_t mask; /* slots - 1 */
	uint32_t used; /* arena bytes in use */
	uint32_t cap;  /* arena bytes */
	struct dslot *slot;
	uint8_t *arena;
};

static void dset_free(struct dset *d)
{
	if (!d)
		return;
	free(d->slot);
	free(d->arena);
	free(d);
}

static bool dset_grow(struct dset *d)
{
	uint32_t nmask = d->mask ? 2 * d->mask + 1 : 7;
	struct dslot *ns = calloc((size_t)nmask + 1, sizeof(*ns));

	if (!ns)
		return false;
	for (uint32_t i = 0; d->slot && i <= d->mask; i++) {
		uint32_t j;

		if (!d->slot[i].len1)
			continue;
		for (j = (uint32_t)d->slot[i].hash & nmask; ns[j].len1; j = (j + 1) & nmask)
			;
		ns[j] = d->slot[i];
	}
	free(d->slot);
	d->slot = ns;
	d->mask = nmask;
	return true;
}

/* Adds the value; returns false on ENOMEM (sl_agg_nomem set, set unchanged). */
static bool dset_add(struct dset *d, const void *x, uint32_t len, uint64_t hash)
{
	uint32_t j;

	for (j = d->slot ? (uint32_t)hash & d->mask : 0; d->slot && d->slot[j].len1;
	     j = (j + 1) & d->mask) {
		const struct dslot *s = &d->slot[j];

		if (s->hash == hash && s->len1 == len + 1 && !memcmp(d->arena + s->off, x, len))
			return true;
	}
	if (2 * (d->n + 1) > d->mask + 1) {
		if (!dset_grow(d))
			goto out_nomem;
		for (j = (uint32_t)hash & d->mask; d->slot[j].len1; j = (j + 1) & d->mask)
			;
	}
	if (d->used + len > d->cap || !d->arena) { /* an empty first value still gets one */
		uint32_t cap = d->cap ? d->cap : 64;
		uint8_t *na;

		while (cap < d->used + len)
			cap *= 2;
		na = realloc(d->arena, cap);
		if (!na)
			goto out_nomem;
		d->arena = na;
		d->cap = cap;
	}
	memcpy(d->arena + d->used, x, len);
	d->slot[j] = (struct dslot){ .hash = hash, .off = d->used, .len1 = len + 1 };
	d->used += len;
	d->n++;
	return true;

out_nomem:
	sl_agg_nomem = true;
	return false;
}

/* The bytes a value is told apart by (see above); points into row or into *tmp. */
static const void *distinct_bytes(const struct sl_agg_bound *a, const struct sl_row *row,
				  uint64_t *tmp, uint32_t *len)
{
	if (a->in_type == SL_TYPE_STRING)
		return sl_row_str(row, a->field, len);
	*tmp = row->slot[a->field];
	if ((a->in_type == SL_TYPE_DOUBLE || a->in_type == SL_TYPE_FLOAT) &&
	    sl_row_f64(row, a->field) != sl_row_f64(row, a->field))
		*tmp = 0x7ff8000000000000ull;
	*len = 8;
	return tmp;
}

static struct dset **dset_of(void *acc)
{
	return acc;
}

static struct dset *dset_get(void *acc)
{
	struct dset **p = dset_of(acc);

	if (!*p) {
		*p = calloc(1, sizeof(**p));
		if (!*p)
			sl_agg_nomem = true;
	}
	return *p;
}

static void distinct_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct dset *d;
	const void *x;
	uint64_t tmp;
	uint32_t len;

	if (sl_row_is_null(row, a->field) || !(d = dset_get(acc)))
		return;
	x = distinct_bytes(a, row, &tmp, &len);
	dset_add(d, x, len, sl_hash_bytes(x, len));
}

/* Set union: O(|other|); fixed-width values in the order other got them (the arena's). */
static void distinct_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	const struct dset *o = *(struct dset *const *)other;
	struct dset *d;

	if (!o || !o->n || !(d = dset_get(acc)))
		return;
	if (a->in_type != SL_TYPE_STRING) { /* in the order other's values came */
		for (uint32_t off = 0; off + 8 <= o->used; off += 8)
			if (!dset_add(d, o->arena + off, 8, sl_hash_bytes(o->arena + off, 8)))
				return;
		return;
	}
	for (uint32_t i = 0; i <= o->mask; i++) {
		const struct dslot *s = &o->slot[i];

		if (s->len1 && !dset_add(d, o->arena + s->off, s->len1 - 1, s->hash))
			return;
	}
}

static void distinct_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
			    int field)
{
	const struct dset *d = *(struct dset *const *)acc;

	sl_rowb_set_i64(b, field, d ? d->n : 0);
}

static void distinct_destroy(const struct sl_agg_bound *a, void *acc)
{
	dset_free(*dset_of(acc));
	*dset_of(acc) = NULL;
}

static int distinct_serialize(const struct sl_agg_bound *a, const void *acc,
			      struct sl_snap_buf *out);
static int distinct_deserialize(const struct sl_agg_bound *a, void *acc, struct sl_snap_reader *r);

/*
 * SUM(DISTINCT) / AVG(DISTINCT) (a->inner): the set above, and at result time the plain
 * kernel folded over its values in the order they were first added, through a one-field
 * row per value. The inner kernels are fixed-width (SUM and AVG of numbers): their
 * accumulators are plain bytes of at most SL_AGG_INNER_ACC_MAX, checked at bind. Cost: O(distinct
 * values) per result, where the plain kernel is O(1); the set's memory as COUNT(DISTINCT).
 */

static void distinct_fold_result(const struct sl_agg_bound *a, const void *acc,
				 struct sl_row_builder *b, int field)
{
	const struct dset *d = *(struct dset *const *)acc;
	uint64_t inner_acc[SL_AGG_INNER_ACC_MAX / 8] = { 0 };
	struct {
		struct sl_row r;
		uint64_t slot[1];
	} one = { .r = { .size = sizeof(one), .nfields = 1 } };
	struct sl_agg_bound ib = *a;

	ib.k = a->inner;
	ib.field = 0;
	ib.inner = NULL;
	for (uint32_t off = 0; d && off + 8 <= d->used; off += 8) {
		memcpy(&one.slot[0], d->arena + off, 8);
		a->inner->add(&ib, inner_acc, &one.r);
	}
	a->inner->result(&ib, inner_acc, b, field);
}

const struct sl_agg_kernel sl_agg_distinct_fold = {
	.acc_size = 8,
	.add = distinct_add,
	.merge = distinct_merge,
	.result = distinct_fold_result,
	.destroy = distinct_destroy,
	.serialize = distinct_serialize,
	.deserialize = distinct_deserialize,
};

/* ---- M2 (Welford): what STDDEV and VAR are computed from ------------------------------ */

/*
 * Flink's WelfordM2AggFunction step for step, so the doubles come out bit for bit: n may go
 * negative when a retraction arrives before its row (the state was cleaned), and an
 * accumulator with n <= 0 holds no mean.
 */
struct acc_m2 {
	int64_t n;
	double mean;
	double m2;
};

static double m2_input(const struct sl_agg_bound *a, const struct sl_row *row)
{
	return a->in_type == SL_TYPE_DOUBLE || a->in_type == SL_TYPE_FLOAT
		       ? sl_row_f64(row, a->field)
		       : (double)sl_row_i64(row, a->field);
}

static void m2_add(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_m2 *s = acc;
	double x, d;

	if (sl_row_is_null(row, a->field) || ++s->n <= 0)
		return;
	x = m2_input(a, row);
	d = x - s->mean;
	s->mean += d / (double)s->n;
	s->m2 += d * (x - s->mean);
}

static void m2_retract(const struct sl_agg_bound *a, void *acc, const struct sl_row *row)
{
	struct acc_m2 *s = acc;
	double x, d;

	if (sl_row_is_null(row, a->field))
		return;
	if (--s->n <= 0) {
		if (s->n == 0)
			s->mean = s->m2 = 0;
		return;
	}
	x = m2_input(a, row);
	d = x - s->mean;
	s->mean -= d / (double)s->n;
	s->m2 -= (x - s->mean) * d;
}

/* Chan's parallel update, in Flink's order of operations. */
static void m2_merge(const struct sl_agg_bound *a, void *acc, const void *other)
{
	struct acc_m2 *s = acc;
	const struct acc_m2 *o = other;
	int64_t n;
	double d;

	if (o->n <= 0) {
		s->n += o->n;
	} else if (s->n == 0) {
		*s = *o;
		return;
	} else {
		n = s->n + o->n;
		d = o->mean - s->mean;
		s->mean += (double)o->n / (double)n * d;
		s->m2 = s->m2 + o->m2 + (double)s->n * (double)o->n / (double)n * d * d;
		s->n = n;
		return;
	}
	if (s->n <= 0)
		s->mean = s->m2 = 0;
}

static void m2_result(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
		      int field)
{
	const struct acc_m2 *s = acc;

	if (s->n > 0 && s->m2 >= 0)
		sl_rowb_set_f64(b, field, s->m2);
	else
		sl_rowb_set_null(b, field);
}

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

/* ---- snapshots: serialize / deserialize -------------------------------------------------
 * Plain accumulators are their bytes. Deserializing checks what later arithmetic relies on
 * (input counts are never negative: AVG divides by them), so corrupt bytes cannot trap. */

static int plain_serialize(const struct sl_agg_bound *a, const void *acc, struct sl_snap_buf *out)
{
	return sl_snap_put(out, acc, sl_agg_acc_size(a));
}

/* Input counts of a real accumulator stay far below this; larger ones are corrupt, and would
 * overflow (undefined for signed integers) a few inputs later. */
#define COUNT_MAX ((int64_t)1 << 62)

static int count_deserialize(const struct sl_agg_bound *a, void *acc, struct sl_snap_reader *r)
{
	int64_t *n = acc;

	if (sl_snap_get(r, n, sizeof(*n)))
		return r->error;
	if (*n < -COUNT_MAX || *n > COUNT_MAX) {
		*n = 0;
		return -EINVAL;
	}
	return 0;
}

/* acc_i64 and acc_f64: a value and the count of non-NULL inputs. */
static int vn_deserialize(const struct sl_agg_bound *a, void *acc, struct sl_snap_reader *r)
{
	struct acc_i64 *s = acc;

	if (sl_snap_get(r, s, sizeof(*s)))
		return r->error;
	if (s->n < 0 || s->n > COUNT_MAX) {
		memset(s, 0, sizeof(*s));
		return -EINVAL;
	}
	return 0;
}

static int m2_deserialize(const struct sl_agg_bound *a, void *acc, struct sl_snap_reader *r)
{
	struct acc_m2 *s = acc;

	if (sl_snap_get(r, s, sizeof(*s)))
		return r->error;
	if (s->n < -COUNT_MAX || s->n > COUNT_MAX) {
		memset(s, 0, sizeof(*s));
		return -EINVAL;
	}
	return 0;
}

static int dec_deserialize(const struct sl_agg_bound *a, void *acc, struct sl_snap_reader *r)
{
	struct acc_dec *s = acc;
	sl_dec_t v, bound;

	if (sl_snap_get(r, s, sizeof(*s)))
		return r->error;
	v = dec_load(s);
	/* n inputs of fewer than 19 digits sum to less than n * 10^18: a larger sum is corrupt
	 * (and further adds could overflow 128 bits) */
	bound = (sl_dec_t)s->n * DEC18_LIMIT;
	if (s->n < 0 || s->n > COUNT_MAX || v > bound || v < -bound) {
		memset(s, 0, sizeof(*s));
		return -EINVAL;
	}
	return 0;
}

/* Arrival numbers grow by one per input on a thread: one past 2^62 is corrupt, and
 * refusing it keeps the counter far from wrapping to 0 (which means "no value"). */
#define ARRIVAL_MAX (1ull << 62)

/* Later inputs on this thread must order after every restored one (see agg.h). */
static void arrival_past(uint64_t seq)
{
	if (seq > arrival)
		arrival = seq;
}

static int seq_deserialize(const struct sl_agg_bound *a, void *acc, struct sl_snap_reader *r)
{
	struct acc_seq *s = acc;

	if (sl_snap_get(r, s, sizeof(*s)))
		return r->error;
	if (s->seq > ARRIVAL_MAX) {
		memset(s, 0, sizeof(*s));
		return -EINVAL;
	}
	arrival_past(s->seq);
	return 0;
}

/* The arrival number (0: no value), then the string when there is one. */
static int str_serialize(const struct sl_agg_bound *a, const void *acc, struct sl_snap_buf *out)
{
	const struct acc_str *s = acc;
	int rc = sl_snap_put_u64(out, s->seq);

	if (rc || !s->seq)
		return rc;
	return sl_snap_put_bytes(out, s->p, s->len);
}

static int str_deserialize(const struct sl_agg_bound *a, void *acc, struct sl_snap_reader *r)
{
	struct acc_str *s = acc;
	const void *p = NULL; /* set by sl_snap_get_bytes; gcc -O2 + ASan cannot tell */
	uint64_t seq;
	uint32_t len = 0;

	if (sl_snap_get_u64(r, &seq))
		return r->error;
	if (!seq)
		return 0;
	if (seq > ARRIVAL_MAX)
		return -EINVAL;
	if (sl_snap_get_bytes(r, &p, &len))
		return r->error;
	if (!str_set(s, p, len, seq)) {
		sl_agg_nomem = false; /* reported by the return code */
		return -ENOMEM;
	}
	arrival_past(seq);
	return 0;
}

/* The number of values, then each value's bytes (length-prefixed), in slot order. */
static int distinct_serialize(const struct sl_agg_bound *a, const void *acc,
			      struct sl_snap_buf *out)
{
	const struct dset *d = *(struct dset *const *)acc;
	int rc = sl_snap_put_u32(out, d ? d->n : 0);

	/* fixed-width values in the order they came (the arena's), so that a restored
	 * SUM/AVG(DISTINCT) of doubles adds them in the same order as the run before */
	if (d && a->in_type != SL_TYPE_STRING) {
		for (uint32_t off = 0; !rc && off + 8 <= d->used; off += 8)
			rc = sl_snap_put_bytes(out, d->arena + off, 8);
		return rc;
	}
	for (uint32_t i = 0; !rc && d && d->n && i <= d->mask; i++) {
		const struct dslot *s = &d->slot[i];

		if (s->len1)
			rc = sl_snap_put_bytes(out, d->arena + s->off, s->len1 - 1);
	}
	return rc;
}

/* O(n): the set is sized for n values up front, each value re-hashed and inserted. */
static int distinct_deserialize(const struct sl_agg_bound *a, void *acc, struct sl_snap_reader *r)
{
	struct dset *d;
	uint32_t n;

	if (sl_snap_get_u32(r, &n))
		return r->error;
	if (!n)
		return 0;
	/* every value takes at least its 4-byte length: bounds n before allocating for it */
	if (n > (r->len - r->pos) / 4)
		return r->error = -EINVAL;
	if (!(d = dset_get(acc)))
		goto out_nomem;
	while (2 * (uint64_t)n > (uint64_t)d->mask + 1)
		if (!dset_grow(d))
			goto out_nomem;
	for (uint32_t i = 0; i < n; i++) {
		const void *p;
		uint32_t len;

		if (sl_snap_get_bytes(r, &p, &len))
			return r->error;
		if (a->in_type != SL_TYPE_STRING && len != 8)
			return -EINVAL;
		if (!dset_add(d, p, len, sl_hash_bytes(p, len)))
			goto out_nomem;
	}
	return 0;

out_nomem:
	sl_agg_nomem = false; /* reported by the return code */
	return -ENOMEM;
}

/* User accumulators are fixed-size plain bytes (sl_agg_fn): copied as they are. */
static int user_deserialize(const struct sl_agg_bound *a, void *acc, struct sl_snap_reader *r)
{
	return sl_snap_get(r, acc, sl_agg_acc_size(a));
}

/* ---- the table -------------------------------------------------------------------------- */

#define KERNEL(size, out, add, retract, merge, result, destroy, ser, deser)                        \
	{                                                                                          \
		size, out, NULL, add, retract, merge, result, destroy, ser, deser                  \
	}

#define K_COUNT                                                                                    \
	KERNEL(8, SL_TYPE_BIGINT, count_add, count_retract, count_merge, count_result, NULL,       \
	       plain_serialize, count_deserialize)
#define K_SUM_I                                                                                    \
	KERNEL(16, SL_TYPE_BIGINT, sum_i64_add, sum_i64_retract, sum_i64_merge, opt_i64_result,    \
	       NULL, plain_serialize, vn_deserialize)
#define K_SUM_L                                                                                    \
	KERNEL(16, 0, sum_i64_add, sum_i64_retract, sum_i64_merge, opt_i64_result, NULL,           \
	       plain_serialize, vn_deserialize)
#define K_SUM_D                                                                                    \
	KERNEL(16, 0, sum_f64_add, sum_f64_retract, sum_f64_merge, opt_f64_result, NULL,           \
	       plain_serialize, vn_deserialize)
#define K_SUM_F                                                                                    \
	KERNEL(16, 0, sum_f32_add, sum_f32_retract, sum_f32_merge, opt_f64_result, NULL,           \
	       plain_serialize, vn_deserialize)
#define K_SUM_DEC                                                                                  \
	KERNEL(24, 0, sum_dec_add, sum_dec_retract, sum_dec_merge, sum_dec_result, NULL,           \
	       plain_serialize, dec_deserialize)
#define K_AVG_I                                                                                    \
	KERNEL(16, 0, sum_i64_add, sum_i64_retract, sum_i64_merge, avg_i64_result, NULL,           \
	       plain_serialize, vn_deserialize)
#define K_AVG_D                                                                                    \
	KERNEL(16, 0, sum_f64_add, sum_f64_retract, sum_f64_merge, avg_f64_result, NULL,           \
	       plain_serialize, vn_deserialize)
#define K_AVG_F                                                                                    \
	KERNEL(16, 0, sum_f64_add, sum_f64_retract, sum_f64_merge, avg_f32_result, NULL,           \
	       plain_serialize, vn_deserialize)
#define K_AVG_DEC                                                                                  \
	KERNEL(24, 0, sum_dec_add, sum_dec_retract, sum_dec_merge, avg_dec_result, NULL,           \
	       plain_serialize, dec_deserialize)
#define K_MIN_I                                                                                    \
	KERNEL(16, 0, min_i64_add, NULL, min_i64_merge, opt_i64_result, NULL, plain_serialize,     \
	       vn_deserialize)
#define K_MAX_I                                                                                    \
	KERNEL(16, 0, max_i64_add, NULL, max_i64_merge, opt_i64_result, NULL, plain_serialize,     \
	       vn_deserialize)
#define K_MIN_F                                                                                    \
	KERNEL(16, 0, min_f64_add, NULL, min_f64_merge, opt_f64_result, NULL, plain_serialize,     \
	       vn_deserialize)
#define K_MAX_F                                                                                    \
	KERNEL(16, 0, max_f64_add, NULL, max_f64_merge, opt_f64_result, NULL, plain_serialize,     \
	       vn_deserialize)
#define K_MIN_S                                                                                    \
	KERNEL(24, 0, min_str_add, NULL, min_str_merge, str_result, str_destroy, str_serialize,    \
	       str_deserialize)
#define K_MAX_S                                                                                    \
	KERNEL(24, 0, max_str_add, NULL, max_str_merge, str_result, str_destroy, str_serialize,    \
	       str_deserialize)
#define K_FIRST                                                                                    \
	KERNEL(16, 0, first_add, NULL, first_merge, seq_result, NULL, plain_serialize,             \
	       seq_deserialize)
#define K_LAST                                                                                     \
	KERNEL(16, 0, last_add, NULL, last_merge, seq_result, NULL, plain_serialize,               \
	       seq_deserialize)
#define K_FIRST_S                                                                                  \
	KERNEL(24, 0, first_str_add, NULL, first_str_merge, str_result, str_destroy,               \
	       str_serialize, str_deserialize)
#define K_LAST_S                                                                                   \
	KERNEL(24, 0, last_str_add, NULL, last_str_merge, str_result, str_destroy, str_serialize,  \
	       str_deserialize)
#define K_DISTINCT                                                                                 \
	KERNEL(8, SL_TYPE_BIGINT, distinct_add, NULL, distinct_merge, distinct_result,             \
	       distinct_destroy, distinct_serialize, distinct_deserialize)

#define K_M2                                                                                       \
	KERNEL(24, SL_TYPE_DOUBLE, m2_add, m2_retract, m2_merge, m2_result, NULL, plain_serialize, \
	       m2_deserialize)

#define K_LISTAGG                                                                                  \
	KERNEL(24, SL_TYPE_STRING, list_add, NULL, list_merge, list_result, list_destroy,          \
	       list_serialize, list_deserialize)

_Static_assert(sizeof(struct acc_list) == 24, "K_LISTAGG acc_size");
_Static_assert(sizeof(struct acc_m2) == 24, "K_M2 acc_size");
_Static_assert(sizeof(struct acc_str) == 24, "K_*_S acc_size");
_Static_assert(sizeof(struct acc_dec) == 24, "K_*_DEC acc_size");
_Static_assert(sizeof(struct acc_seq) == 16, "K_FIRST acc_size");

#define NTYPES (SL_TYPE_TIMESTAMP_LTZ + 1)
#define NKINDS (SL_AGG_LISTAGG + 1)

/* One kernel for every type of the row `ALL(k)`; strings get `s`. */
#define EVERY(k, s)                                                                                \
	{                                                                                          \
		[SL_TYPE_BOOL] = k, [SL_TYPE_INT] = k, [SL_TYPE_BIGINT] = k, [SL_TYPE_DOUBLE] = k, \
		[SL_TYPE_STRING] = s, [SL_TYPE_TIMESTAMP] = k, [SL_TYPE_FLOAT] = k,                \
		[SL_TYPE_DECIMAL] = k, [SL_TYPE_DATE] = k, [SL_TYPE_TIMESTAMP_LTZ] = k             \
	}

/* The orderable int64 slots and the double slots, for MIN/MAX. */
#define ORDERED(ki, kf, ks)                                                                        \
	{                                                                                          \
		[SL_TYPE_BOOL] = ki, [SL_TYPE_INT] = ki, [SL_TYPE_BIGINT] = ki,                    \
		[SL_TYPE_DOUBLE] = kf, [SL_TYPE_STRING] = ks, [SL_TYPE_TIMESTAMP] = ki,            \
		[SL_TYPE_FLOAT] = kf, [SL_TYPE_DECIMAL] = ki, [SL_TYPE_DATE] = ki,                 \
		[SL_TYPE_TIMESTAMP_LTZ] = ki                                                       \
	}

/* [kind][input type]; column 0 is used by the kinds that take no typed input. A zero cell
 * (add == NULL) is an unsupported combination. */
static const struct sl_agg_kernel kernels[NKINDS][NTYPES] = {
	[SL_AGG_COUNT_STAR] = {
		[0] = KERNEL(8, SL_TYPE_BIGINT, count_star_add, count_star_retract, count_merge,
			     count_result, NULL, plain_serialize, count_deserialize),
	},
	[SL_AGG_COUNT] = EVERY(K_COUNT, K_COUNT),
	[SL_AGG_SUM] = {
		[SL_TYPE_INT] = K_SUM_I, [SL_TYPE_BIGINT] = K_SUM_L, [SL_TYPE_DOUBLE] = K_SUM_D,
		[SL_TYPE_FLOAT] = K_SUM_F, [SL_TYPE_DECIMAL] = K_SUM_DEC,
	},
	[SL_AGG_AVG] = {
		[SL_TYPE_INT] = K_AVG_I, [SL_TYPE_BIGINT] = K_AVG_I, [SL_TYPE_DOUBLE] = K_AVG_D,
		[SL_TYPE_FLOAT] = K_AVG_F, [SL_TYPE_DECIMAL] = K_AVG_DEC,
	},
	[SL_AGG_MIN] = ORDERED(K_MIN_I, K_MIN_F, K_MIN_S),
	[SL_AGG_MAX] = ORDERED(K_MAX_I, K_MAX_F, K_MAX_S),
	[SL_AGG_USER] = {
		[0] = { 0, 0, user_init, user_add, NULL, user_merge, user_result, NULL,
			plain_serialize, user_deserialize },
	},
	[SL_AGG_COUNT_DISTINCT] = EVERY(K_DISTINCT, K_DISTINCT),
	[SL_AGG_FIRST_VALUE] = EVERY(K_FIRST, K_FIRST_S),
	[SL_AGG_LAST_VALUE] = EVERY(K_LAST, K_LAST_S),
	[SL_AGG_M2] = {
		[SL_TYPE_INT] = K_M2, [SL_TYPE_BIGINT] = K_M2, [SL_TYPE_DOUBLE] = K_M2,
		[SL_TYPE_FLOAT] = K_M2,
	},
	[SL_AGG_LISTAGG] = { [SL_TYPE_STRING] = K_LISTAGG },
};

/* SQL SUM(INT) is INT (Flink's IntSumAggFunction), the C API's is BIGINT. */
static const struct sl_agg_kernel sum_int_sql =
	KERNEL(16, SL_TYPE_INT, sum_i64_add, sum_i64_retract, sum_i64_merge, sum_i32_result, NULL,
	       plain_serialize, vn_deserialize);

const struct sl_agg_kernel *sl_agg_kernel_find(enum sl_agg_kind kind, enum sl_type in,
					       bool sql_types)
{
	const struct sl_agg_kernel *k;

	if (kind < SL_AGG_COUNT_STAR || kind >= NKINDS)
		return NULL;
	if (kind == SL_AGG_COUNT_STAR || kind == SL_AGG_USER)
		in = 0;
	else if (in < SL_TYPE_BOOL || in >= NTYPES)
		return NULL;
	if (sql_types && kind == SL_AGG_SUM && in == SL_TYPE_INT)
		return &sum_int_sql;
	k = &kernels[kind][in];
	return k->add ? k : NULL;
}

const char *sl_agg_kind_name(enum sl_agg_kind kind)
{
	static const char *const names[NKINDS] = {
		[SL_AGG_COUNT_STAR] = "COUNT(*)",
		[SL_AGG_COUNT] = "COUNT",
		[SL_AGG_SUM] = "SUM",
		[SL_AGG_AVG] = "AVG",
		[SL_AGG_MIN] = "MIN",
		[SL_AGG_MAX] = "MAX",
		[SL_AGG_USER] = "USER",
		[SL_AGG_COUNT_DISTINCT] = "COUNT(DISTINCT)",
		[SL_AGG_FIRST_VALUE] = "FIRST_VALUE",
		[SL_AGG_LAST_VALUE] = "LAST_VALUE",
		[SL_AGG_M2] = "M2",
		[SL_AGG_LISTAGG] = "LISTAGG",
	};

	if (kind < SL_AGG_COUNT_STAR || kind >= NKINDS)
		return "?";
	return names[kind];
}
