/*
 * slice.c - tumbling, hopping and cumulating windows over slices (DESIGN §5).
 *
 * Time is cut into slices of length g = gcd(size, slide) aligned on the offset; a tumbling
 * window is the case slide = size = g. Window starts are offset + k * slide, as Flink
 * assigns them, so ends are offset + size + k * slide (cfg->end_off). State holds one accumulator
 * block per (key, slice), namespace = slice end, so a record costs one hash lookup and the
 * aggregates' add, whatever size/slide is. Window [e - size, e) is the merge of its size/g slices,
 * done at fire time.
 *
 * Cumulating windows (Flink's CUMULATE) use the same machinery with g = slide = step: every
 * slice end is a window end, and window e starts at the start p(e) of its period
 * [p, p + max_size) instead of at e - size. A slice's first window is its own end, its last
 * its period's end:
 *
 *     period [p, p + 3g)     slices   [p, p+g)  [p+g, p+2g)  [p+2g, p+3g)
 *     window [p, p + g)               ====
 *     window [p, p + 2g)              ====      ====
 *     window [p, p + 3g)              ====      ====         ====
 *
 * Window e merges the (e - p(e)) / g slices from p(e) to e, so a key costs O(k) merges per
 * window and O(k^2) per period, k = max_size / step: fine for the usual k <= 100. Flink folds
 * each fired slice into the period's first slice instead (O(k) a period), but then a window
 * that already fired can no longer be rebuilt for a late re-fire; slices are kept until the
 * period's last window is past lateness, as hopping slices are.
 *
 * Firing without a timer per (key, window): every entry is appended, when created, with its
 * hash to the array of its slice end (`struct bucket`, buckets sorted by slice end; kvtab
 * entries never move, so value pointers are kept). The first window that needs a slice sorts
 * that array once by (key hash, key bytes), touching no entry; firing window e is a k-way
 * merge of the runs of its k = size/g slices, in which a key's slices come out adjacent and
 * are merged. Cost: O(n log n) once per slice plus O(n log k) per window, nothing per record.
 * A slice is dropped with its bucket once the last window containing it is past
 * end - 1 + lateness.
 *
 * Each slice has its own kvtab (the bucket's), since all of a slice's entries die together:
 * dropping a slice clears its table in one sequential pass and keeps it for a later slice
 * (up to two spares), where one shared table paid a random entry read and a slot-run shift
 * per entry removed, its free list then handed out entries in random slab order, and a key
 * with many open slices (two inputs drifting apart) shared one probe run. A record finds
 * its slice's table through the cached bucket index (w->c_bkt), so this adds nothing per
 * record.
 *
 * Checkpoints (snapshot.c has the header): the body is the buckets in slice-end order, each
 * its slice end, entry count and entries (key group, key, accumulator block). Restoring
 * appends each kept entry to its bucket unsorted; the first firing sorts it, so the output
 * order ((hash, key) within a window) is the uninterrupted run's.
 *
 * Invariants: every window ending at or before fired_upto has fired, and fired_upto is the
 * last window end <= watermark + 1, so "window e fired" is exactly e - 1 <= watermark; a
 * live slice has at least one window with e - 1 + lateness > watermark.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap.h"
#include "kvtab.h"
#include "window_int.h"

/* How many entries ahead firing and cleanup prefetch: enough misses in flight to cover
 * memory latency, few enough to stay in L1. */
#define PREFETCH 8

/* Start of window e: its period's start for cumulating windows. One test of a constant per
 * window fired or slice located, never per record. */
static inline sl_ts_t win_start(const struct sl_window_cfg *c, sl_ts_t e)
{
	if (c->cum)
		return (e - 1) - floor_mod(e - 1 - c->spec.offset_ms, c->spec.size_ms);
	return e - c->spec.size_ms;
}

/* End of the last window containing the slice ending at s (starts at or before its start). */
static inline sl_ts_t last_end(const struct sl_window_cfg *c, sl_ts_t s)
{
	sl_ts_t x;

	if (c->cum)
		return win_start(c, s) + c->spec.size_ms;
	x = s - c->slice + c->spec.size_ms;

	return x - floor_mod(x - c->end_off, c->slide);
}

#define SLICE_NONE UINT32_MAX /* w->c_bkt: the cached slice has no bucket yet */

/* Records ahead of the current one are nearly always in its slice (in-order input), whose
 * table is cached: no division per prefetch. A record of another slice is not prefetched
 * (its bucket may not exist yet); it costs its misses once. */
static void slice_prefetch(const struct win *w, uint64_t hash, sl_ts_t ts, int stage)
{
	const struct sl_kvtab *tab;

	if (ts < w->c_lo || ts >= w->c_hi || w->c_bkt == SLICE_NONE)
		return;
	tab = w->bkt[w->c_bkt].tab;
	if (stage == 0)
		sl_kvtab_prefetch(tab, hash, (uint64_t)w->c_hi);
	else
		sl_kvtab_prefetch_entry(tab, hash, (uint64_t)w->c_hi);
}

static int slice_open(struct win *w, uint32_t max_par)
{
	w->hdr = 0;    /* the accumulators are the whole value (at least 8 bytes: no aggregates) */
	(void)max_par; /* each slice's table is made with w->max_par when the slice opens */
	w->c_bkt = SLICE_NONE;
	w->fired_upto = SL_TS_MIN;
	return 0;
}

/* Frees what the accumulators of a bucket's entries own (every live entry is in exactly
 * one bucket). */
static void bucket_release(struct win *w, struct bucket *b)
{
	for (uint32_t j = 0; w->cfg->has_dyn && j < b->nrun; j++)
		sl_win_acc_destroy(w, accs_of(w, b->run[j].v));
}

static void slice_close(struct win *w)
{
	for (uint32_t i = 0; i < w->nbkt; i++) {
		bucket_release(w, &w->bkt[i]);
		sl_kvtab_destroy(w->bkt[i].tab);
		free(w->bkt[i].run);
	}
	for (uint32_t i = 0; i < w->nspare; i++)
		sl_kvtab_destroy(w->spare[i]);
	w->nspare = 0;
	free(w->bkt);
	free(w->heap);
	free(w->grp);
	free(w->sort_tmp);
	free(w->radix_count);
}

/* Index of the first bucket with s_end >= s. */
static uint32_t bucket_lower(const struct win *w, sl_ts_t s)
{
	uint32_t lo = 0, hi = w->nbkt;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (w->bkt[mid].s_end < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index of the bucket of slice end s, or SLICE_NONE. The common case is the newest. */
static uint32_t bucket_find(const struct win *w, sl_ts_t s)
{
	uint32_t i;

	if (w->nbkt && w->bkt[w->nbkt - 1].s_end == s)
		return w->nbkt - 1;
	i = bucket_lower(w, s);
	return i < w->nbkt && w->bkt[i].s_end == s ? i : SLICE_NONE;
}

/* A table for a new slice: a spare one (cleared, already grown to a slice's size: no
 * rehashing while it refills), else a new one. */
static struct sl_kvtab *tab_get(struct win *w)
{
	if (w->nspare)
		return w->spare[--w->nspare];
	return sl_kvtab_create(w->cfg->acc_size ? w->cfg->acc_size : 8, w->max_par);
}

/* Takes the table of a dropped slice (its accumulators released): kept cleared for the next
 * slice while fewer than two wait (tumbling needs one, hopping one per slide), else freed. */
static void tab_put(struct win *w, struct sl_kvtab *t)
{
	if (w->nspare < sizeof w->spare / sizeof w->spare[0]) {
		sl_kvtab_clear(t);
		w->spare[w->nspare++] = t;
	} else {
		sl_kvtab_destroy(t);
	}
}

/* Opens the bucket of slice end s (absent) with an empty table; keeps the cached bucket
 * index pointing at its bucket. Returns its index, or SLICE_NONE on ENOMEM. */
static uint32_t bucket_add(struct win *w, sl_ts_t s)
{
	uint32_t i = bucket_lower(w, s);
	struct sl_kvtab *t;

	if (w->nbkt == w->cap_bkt) {
		uint32_t cap = w->cap_bkt ? 2 * w->cap_bkt : 16;
		struct bucket *nb = realloc(w->bkt, cap * sizeof(*nb));

		if (!nb)
			return SLICE_NONE;
		w->bkt = nb;
		w->cap_bkt = cap;
	}
	t = tab_get(w);
	if (!t)
		return SLICE_NONE;
	memmove(&w->bkt[i + 1], &w->bkt[i], (w->nbkt - i) * sizeof(*w->bkt));
	w->bkt[i] = (struct bucket){ .s_end = s, .tab = t };
	w->nbkt++;
	if (w->c_bkt != SLICE_NONE && w->c_bkt >= i)
		w->c_bkt++;
	return i;
}

/* Appends a new entry of bucket b to its fire list. Once per new (key, slice); amortized
 * O(1) growth. Returns 0 or -ENOMEM. */
static int entry_link(struct win *w, struct bucket *b, void *v, uint64_t hash)
{
	if (b->nrun == b->cap) {
		uint32_t cap = b->cap ? 2 * b->cap : 64;
		struct fref *run = realloc(b->run, cap * sizeof(*run));

		if (!run)
			return -ENOMEM;
		w->run_bytes += (size_t)(cap - b->cap) * sizeof(*run);
		b->run = run;
		b->cap = cap;
	}
	b->run[b->nrun++] = (struct fref){ .hash = hash, .v = v };
	return 0;
}

/* The current key's value in slice s, or NULL. */
static void *slice_get(struct win *w, const struct sl_ctx *ctx, sl_ts_t s)
{
	uint32_t i = bucket_find(w, s);

	if (i == SLICE_NONE)
		return NULL;
	return sl_kvtab_get(w->bkt[i].tab, ctx->hash, ctx->key, ctx->klen, (uint64_t)s);
}

/*
 * The accumulator of window [e - size, e) for the current key: NULL when the key has no
 * slice in it, the slice's own block when it has one, else the merge into `dst`. The slice
 * ending at `s_over` is read from `over` (NULL: treated as absent) instead of the table.
 * O(size / g) lookups: only for late updates, never on the in-order path.
 */
static const void *window_acc(struct win *w, struct sl_ctx *ctx, sl_ts_t e, sl_ts_t s_over,
			      const void *over, void *dst)
{
	const struct sl_window_cfg *c = w->cfg;
	const void *first = NULL, *a;
	int n = 0;

	for (sl_ts_t s = e - c->spec.size_ms + c->slice; s <= e; s += c->slice) {
		if (s == s_over) {
			a = over;
		} else {
			void *v = slice_get(w, ctx, s);

			a = v ? accs_of(w, v) : NULL;
		}
		if (!a)
			continue;
		if (++n == 1) {
			first = a;
			continue;
		}
		if (n == 2) {
			sl_win_acc_init(w, dst);
			sl_win_acc_merge(w, dst, first);
		}
		sl_win_acc_merge(w, dst, a);
	}
	return n > 1 ? dst : first;
}

/* Merges the current key's slice ending at t, if it has one, into both a and b; counts it. */
static void merge_slice2(struct win *w, struct sl_ctx *ctx, sl_ts_t t, void *a, void *b, int *n)
{
	void *v = slice_get(w, ctx, t);

	if (!v)
		return;
	sl_win_acc_merge(w, a, accs_of(w, v));
	sl_win_acc_merge(w, b, accs_of(w, v));
	(*n)++;
}

/*
 * refire() for cumulating windows: their windows are prefixes of one period, so the old and
 * the new result are built once, slice by slice, and each window extends the previous one:
 * O(k) lookups and merges for the late record rather than O(k) per window.
 */
/* acc += the input: a row, or a partial of the local stage (local.c) when part is set. */
static inline void acc_apply(const struct win *w, void *acc, const struct sl_row *row,
			     const void *part)
{
	if (part)
		sl_win_acc_merge(w, acc, part);
	else
		sl_win_acc_add(w, acc, row);
}

static void refire_cum(struct win *w, struct sl_ctx *ctx, sl_ts_t s, void *acc, bool created,
		       const struct sl_row *row, const void *part)
{
	const struct sl_window_cfg *c = w->cfg;
	sl_ts_t wm = ctx->watermark, p = win_start(c, s), hi = p + c->spec.size_ms;
	int n_old = 0; /* slices the key had in the window before this record */

	sl_win_acc_copy(w, w->save, acc);
	acc_apply(w, acc, row, part);
	sl_win_acc_init(w, w->tmp);
	sl_win_acc_init(w, w->tmp2);
	for (sl_ts_t t = p + c->slice; t < s; t += c->slice)
		merge_slice2(w, ctx, t, w->tmp, w->tmp2, &n_old);
	if (!created) {
		sl_win_acc_merge(w, w->tmp, w->save);
		n_old++;
	}
	sl_win_acc_merge(w, w->tmp2, acc);
	for (sl_ts_t e = s; e <= hi && e - 1 <= wm; e += c->slide) {
		if (e != s)
			merge_slice2(w, ctx, e, w->tmp, w->tmp2, &n_old);
		if (ts_add_sat(e - 1, c->lateness) <= wm)
			continue; /* beyond lateness: not re-emitted */
		if (n_old)
			sl_win_emit_update(w, ctx, p, e, w->tmp, w->tmp2);
		else
			sl_win_emit(w, ctx, p, e, w->tmp2, SL_ROW_INSERT);
	}
	sl_win_acc_destroy(w, w->tmp);
	sl_win_acc_destroy(w, w->tmp2);
	sl_win_acc_destroy(w, w->save);
}

/*
 * A record for slice s some of whose windows already fired but are within lateness: add it,
 * then re-fire each such window at once, -U/+U (or +I when the key had no data in it).
 * Windows not fired yet just see the updated slice when they fire.
 */
static void refire(struct win *w, struct sl_ctx *ctx, sl_ts_t s, void *acc, bool created,
		   const struct sl_row *row, const void *part)
{
	const struct sl_window_cfg *c = w->cfg;
	sl_ts_t wm = ctx->watermark, hi = last_end(c, s);

	if (c->cum) {
		refire_cum(w, ctx, s, acc, created, row, part);
		return;
	}
	sl_win_acc_copy(w, w->save, acc);
	acc_apply(w, acc, row, part);
	for (sl_ts_t e = first_end(c, s); e <= hi && e - 1 <= wm; e += c->slide) {
		const void *old, *new;

		if (ts_add_sat(e - 1, c->lateness) <= wm)
			continue; /* beyond lateness: already cleaned and not re-emitted */
		old = window_acc(w, ctx, e, s, created ? NULL : w->save, w->tmp);
		new = window_acc(w, ctx, e, s, acc, w->tmp2);
		if (old)
			sl_win_emit_update(w, ctx, e - c->spec.size_ms, e, old, new);
		else
			sl_win_emit(w, ctx, e - c->spec.size_ms, e, new, SL_ROW_INSERT);
		/* merged scratch blocks (hop windows) own copies: free them */
		if (old == w->tmp)
			sl_win_acc_destroy(w, w->tmp);
		if (new == w->tmp2)
			sl_win_acc_destroy(w, w->tmp2);
	}
	sl_win_acc_destroy(w, w->save);
}

/* Slow part of slice_process: the slice of ts and its window bounds (three divisions). */
static void locate(struct win *w, sl_ts_t ts)
{
	const struct sl_window_cfg *c = w->cfg;
	sl_ts_t s = slice_end_of(c, ts);

	w->c_lo = s - c->slice;
	w->c_hi = s;
	w->c_fire = first_end(c, s) - 1;
	w->c_drop = ts_add_sat(last_end(c, s) - 1, c->lateness);
	w->c_bkt = bucket_find(w, s);
}

/*
 * The current key's entry in the cached slice (w->c_hi), made (and linked to the fire list)
 * if absent: *created says so. NULL on ENOMEM, the job failed with the reason.
 */
static void *slice_entry(struct win *w, struct sl_ctx *ctx, bool *created)
{
	struct bucket *b;
	void *v;

	if (__builtin_expect(w->c_bkt == SLICE_NONE, 0)) {
		w->c_bkt = bucket_add(w, w->c_hi);
		if (w->c_bkt == SLICE_NONE) {
			sl_win_fail(ctx, -ENOMEM, "out of memory for window state");
			return NULL;
		}
	}
	b = &w->bkt[w->c_bkt];
	v = sl_kvtab_put(b->tab, ctx->hash, ctx->key, ctx->klen, (uint64_t)w->c_hi, created);
	if (__builtin_expect(!v, 0)) {
		sl_win_fail(ctx, -ENOMEM, "out of memory for window state");
		return NULL;
	}
	if (*created) {
		if (entry_link(w, b, v, ctx->hash)) {
			sl_kvtab_remove_value(b->tab, v);
			sl_win_fail(ctx, -ENOMEM, "out of memory for window fire lists");
			return NULL;
		}
		if (w->cfg->has_init)
			sl_win_acc_init(w, accs_of(w, v));
		ctx->m.state_entries++;
	}
	return v;
}

/* Hot path: one kvtab lookup and the aggregates' add per in-order record. */
static void slice_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	struct win *w = ctx->self;
	sl_ts_t wm = ctx->watermark;
	bool created;
	void *v, *acc;

	if (__builtin_expect(ts < w->c_lo || ts >= w->c_hi, 0))
		locate(w, ts);
	if (__builtin_expect(w->c_drop <= wm, 0)) {
		sl_win_late(w, ctx, ts, row);
		return;
	}
	v = slice_entry(w, ctx, &created);
	if (__builtin_expect(!v, 0))
		return;
	acc = accs_of(w, v);
	if (__builtin_expect(w->c_fire <= wm, 0)) {
		refire(w, ctx, w->c_hi, acc, created, row, NULL);
		return;
	}
	sl_win_acc_add(w, acc, row);
}

/*
 * A partial of the local stage: slice_process with a merge for the add. Its sender flushed
 * it before forwarding a watermark that could fire its slice (runtime/op.h), so it finds
 * its windows open; a re-fire is handled all the same, but a partial for a slice already
 * dropped cannot be split back into late rows for the late-data table, so it fails the job
 * naming the broken rule rather than losing the rows.
 */
void sl_win_slice_merge_partial(struct sl_ctx *ctx, sl_ts_t ts, const void *part, uint32_t nrows)
{
	struct win *w = ctx->self;
	sl_ts_t wm = ctx->watermark;
	bool created;
	void *v, *acc;

	if (ts < w->c_lo || ts >= w->c_hi)
		locate(w, ts);
	if (w->c_drop <= wm) {
		char what[160];

		snprintf(what, sizeof what,
			 "a partial of %u rows for slice [%" PRId64 ", %" PRId64
			 ") arrived after its windows were dropped (watermark %" PRId64 ")",
			 nrows, w->c_lo, w->c_hi, wm);
		sl_win_fail(ctx, -EPROTO, what);
		return;
	}
	v = slice_entry(w, ctx, &created);
	if (!v)
		return;
	acc = accs_of(w, v);
	if (w->c_fire <= wm) {
		refire(w, ctx, w->c_hi, acc, created, NULL, part);
		return;
	}
	sl_win_acc_merge(w, acc, part);
}

/* Orders entries (a of table ta, b of tb) by key hash, then key bytes (equal hashes of
 * different keys are rare). */
static int ref_cmp(const struct sl_kvtab *ta, const struct fref *a, const struct sl_kvtab *tb,
		   const struct fref *b)
{
	struct sl_kv ka, kb;
	int r;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	if (a->v == b->v)
		return 0;
	sl_kvtab_entry(ta, a->v, &ka);
	sl_kvtab_entry(tb, b->v, &kb);
	if (ka.klen != kb.klen)
		return ka.klen < kb.klen ? -1 : 1;
	r = memcmp(ka.key, kb.key, ka.klen);
	return r;
}

static int ref_qcmp(const void *a, const void *b, void *tab)
{
	return ref_cmp(tab, a, tab, b);
}

#define RADIX_MIN  1024 /* below this a comparison sort is cheaper than a counting pass */
#define SMALL_SORT 32	/* a top-digit bucket up to this sorts by insertion, beyond by qsort */

/* Insertion sort of a few entries in ref_cmp order (which reads entries only on a tie). */
static void insertion_sort(const struct sl_kvtab *tab, struct fref *a, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct fref x = a[i];
		uint32_t j = i;

		for (; j > 0 && ref_cmp(tab, &a[j - 1], tab, &x) > 0; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/* MSD radix sort of a run by hash: one counting pass and one scatter on the top 16 bits,
 * then each of the 2^16 buckets (n / 65536 entries on average, uniform hashes) sorted in
 * cache in ref_cmp order, so the order is exactly ref_cmp's. It replaced a 16-bit LSD sort
 * whose four scatter passes each wrote to 2^16 places at once: about a cache miss per entry
 * and pass (30-35 % of slice_on_watermark in the 1M-key tumbling profile); qsort_r before
 * that was O(n log n) indirect compares (11 % in glibc's msort). A bucket larger than
 * SMALL_SORT (skewed hashes) is sorted by qsort_r, so no input makes it quadratic. Returns
 * false (run untouched) when scratch memory is short. */
static bool radix_sort(struct win *w, const struct sl_kvtab *tab, struct fref *a, uint32_t n)
{
	uint32_t *cnt, sum = 0, lo = 0;
	struct fref *tmp;

	if (n > w->cap_sort) {
		struct fref *nb = realloc(w->sort_tmp, (size_t)n * sizeof(*nb));

		if (!nb)
			return false;
		w->sort_tmp = nb;
		w->cap_sort = n;
	}
	if (!w->radix_count && !(w->radix_count = malloc(65536 * sizeof(uint32_t))))
		return false;
	cnt = w->radix_count;
	tmp = w->sort_tmp;
	memset(cnt, 0, 65536 * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++)
		cnt[a[i].hash >> 48]++;
	for (uint32_t d = 0; d < 65536; d++) {
		uint32_t c = cnt[d];

		cnt[d] = sum;
		sum += c;
	}
	for (uint32_t i = 0; i < n; i++)
		tmp[cnt[a[i].hash >> 48]++] = a[i];
	/* cnt[d] is now the end of bucket d, the start of d + 1 */
	for (uint32_t d = 0; d < 65536; d++) {
		uint32_t m = cnt[d] - lo;

		if (m > SMALL_SORT)
			qsort_r(tmp + lo, m, sizeof(*tmp), ref_qcmp, (void *)tab);
		else if (m > 1)
			insertion_sort(tab, tmp + lo, m);
		lo = cnt[d];
	}
	memcpy(a, tmp, (size_t)n * sizeof(*a));
	return true;
}

/* Sorts a bucket's entries: O(n) once per slice, again only if late records added entries
 * after it was sorted. Reads only the bucket's array, never the entries (but on a tie). */
static void bucket_sort(struct win *w, struct bucket *b)
{
	if (b->nsorted == b->nrun)
		return;
	if (b->nrun < RADIX_MIN || !radix_sort(w, b->tab, b->run, b->nrun))
		qsort_r(b->run, b->nrun, sizeof(*b->run), ref_qcmp, b->tab);
	b->nsorted = b->nrun;
}

/* Heap order: hash, then slice. Keys sharing a hash are told apart per group, below. */
static bool cur_less(const struct fcur *a, const struct fcur *b)
{
	if (a->p->hash != b->p->hash)
		return a->p->hash < b->p->hash;
	return a->bi < b->bi;
}

static void heap_down(struct fcur *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t m = i, l = 2 * i + 1, r = l + 1;
		struct fcur t;

		if (l < n && cur_less(&h[l], &h[m]))
			m = l;
		if (r < n && cur_less(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Emits the window's row for the key of `first` from the merged accumulator `acc`. */
static void emit_key(struct win *w, struct sl_ctx *ctx, sl_ts_t start, sl_ts_t e,
		     const struct fcur *first, const void *acc)
{
	struct sl_kv kv;

	sl_kvtab_entry(first->tab, first->p->v, &kv);
	ctx->key = kv.key;
	ctx->klen = kv.klen;
	ctx->hash = kv.hash;
	sl_win_emit(w, ctx, start, e, acc, SL_ROW_INSERT);
}

static int grp_qcmp(const void *pa, const void *pb)
{
	const struct fcur *a = pa, *b = pb;
	int r = ref_cmp(a->tab, a->p, b->tab, b->p);

	return r ? r : (a->bi > b->bi) - (a->bi < b->bi);
}

/* Whether the entries g[0..n) of one hash are all of one key (all but ~2^-64 of groups):
 * each entry's key is read once against the first's. Hopping windows merge ~size/slide
 * entries per key; comparing every pair through ref_cmp, twice, was 17 % of the 1M-key hop
 * profile (sl_kvtab_entry and memcmp calls). */
static bool one_key(const struct fcur *g, uint32_t n)
{
	struct sl_kv k0, ki;

	if (n < 2)
		return true;
	sl_kvtab_entry(g[0].tab, g[0].p->v, &k0);
	for (uint32_t i = 1; i < n; i++) {
		sl_kvtab_entry(g[i].tab, g[i].p->v, &ki);
		if (ki.klen != k0.klen || !sl_kvtab_key_eq(ki.key, k0.key, k0.klen))
			return false;
	}
	return true;
}

/* Emits the rows of one key hash's entries g[0..n) (in slice order per key): normally one
 * key, whose slices are merged; keys colliding on the hash are split by key bytes. */
static void emit_group(struct win *w, struct sl_ctx *ctx, sl_ts_t start, sl_ts_t e, struct fcur *g,
		       uint32_t n)
{
	if (one_key(g, n)) {
		const void *acc = accs_of(w, g[0].p->v);

		if (n > 1) {
			sl_win_acc_init(w, w->tmp);
			for (uint32_t i = 0; i < n; i++)
				sl_win_acc_merge(w, w->tmp, accs_of(w, g[i].p->v));
			acc = w->tmp;
		}
		emit_key(w, ctx, start, e, &g[0], acc);
		if (acc == w->tmp)
			sl_win_acc_destroy(w, w->tmp);
		return;
	}
	qsort(g, n, sizeof(*g), grp_qcmp);
	for (uint32_t i = 0, j; i < n; i = j) {
		const void *acc = accs_of(w, g[i].p->v);

		for (j = i + 1; j < n && ref_cmp(g[i].tab, g[i].p, g[j].tab, g[j].p) == 0; j++) {
			if (j == i + 1) {
				sl_win_acc_init(w, w->tmp);
				sl_win_acc_merge(w, w->tmp, acc);
				acc = w->tmp;
			}
			sl_win_acc_merge(w, w->tmp, accs_of(w, g[j].p->v));
		}
		emit_key(w, ctx, start, e, &g[i], acc);
		if (acc == w->tmp)
			sl_win_acc_destroy(w, w->tmp);
	}
}

/* Grows a cursor array to hold n. Returns 0 or -ENOMEM. */
static int cur_reserve(struct fcur **a, uint32_t *cap, uint32_t n)
{
	struct fcur *na;
	uint32_t c = *cap ? *cap : 16;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	na = realloc(*a, c * sizeof(*na));
	if (!na)
		return -ENOMEM;
	*a = na;
	*cap = c;
	return 0;
}

/*
 * Emits +I for every key with data in window [start, e), in (hash, key) order: a k-way
 * merge of the sorted runs of its k slices, O(n log k), in which the entries of one key come
 * out adjacent (same hash) and are merged. Tumbling windows (k = 1) walk the one run.
 */
static void fire_window(struct win *w, struct sl_ctx *ctx, sl_ts_t e)
{
	const struct sl_window_cfg *c = w->cfg;
	sl_ts_t start = win_start(c, e);
	uint32_t i0 = bucket_lower(w, start + 1), k = 0;
	struct fcur *h;

	for (uint32_t i = i0; i < w->nbkt && w->bkt[i].s_end <= e; i++, k++)
		bucket_sort(w, &w->bkt[i]);
	if (cur_reserve(&w->heap, &w->cap_heap, k) || cur_reserve(&w->grp, &w->cap_grp, k))
		goto out_nomem;
	h = w->heap;
	for (uint32_t i = 0; i < k; i++) {
		const struct bucket *b = &w->bkt[i0 + i];

		h[i] = (struct fcur){
			.p = b->run, .end = b->run + b->nrun, .tab = b->tab, .bi = i
		};
	}
	for (uint32_t i = 0; i < k;) /* drop empty runs, then heapify */
		if (h[i].p == h[i].end)
			h[i] = h[--k];
		else
			i++;
	for (uint32_t i = k / 2; i-- > 0;)
		heap_down(h, k, i);
	while (k) {
		uint64_t hash = h[0].p->hash;
		uint32_t n = 0;

		do {
			if (n == w->cap_grp && cur_reserve(&w->grp, &w->cap_grp, n + 1))
				goto out_nomem;
			w->grp[n++] = (struct fcur){ .p = h[0].p, .tab = h[0].tab, .bi = h[0].bi };
			if (h[0].p + PREFETCH < h[0].end)
				__builtin_prefetch(h[0].p[PREFETCH].v);
			if (++h[0].p == h[0].end)
				h[0] = h[--k];
			heap_down(h, k, 0);
		} while (k && h[0].p->hash == hash);
		emit_group(w, ctx, start, e, w->grp, n);
	}
	return;

out_nomem:
	sl_win_fail(ctx, -ENOMEM, "out of memory firing a window");
}

/* The earliest window after fired_upto that holds data, or SL_TS_MAX when none. */
static sl_ts_t next_window(const struct win *w)
{
	const struct sl_window_cfg *c = w->cfg;

	for (uint32_t i = 0; i < w->nbkt; i++) {
		sl_ts_t s = w->bkt[i].s_end, e;

		if (last_end(c, s) <= w->fired_upto)
			continue; /* only kept for lateness */
		e = first_end(c, s);
		if (w->fired_upto != SL_TS_MIN && e <= w->fired_upto)
			e = w->fired_upto + c->slide;
		return e;
	}
	return SL_TS_MAX;
}

/* Observers: the earliest window that holds data and has not fired, and how many window
 * ends still wait (every slice end with a window after fired_upto). O(slice ends). */
static void slice_pending(const struct win *w, sl_ts_t *at, uint64_t *n)
{
	const struct sl_window_cfg *c = w->cfg;
	sl_ts_t e = next_window(w);

	*at = e == SL_TS_MAX ? SL_TS_MAX : e - 1;
	*n = 0;
	for (uint32_t i = 0; i < w->nbkt; i++)
		*n += last_end(c, w->bkt[i].s_end) > w->fired_upto;
}

static void slice_measure(const struct win *w, uint64_t *entries, size_t *bytes)
{
	*entries = 0;
	*bytes = 0;
	for (uint32_t i = 0; i < w->nbkt; i++) {
		*entries += sl_kvtab_count(w->bkt[i].tab);
		*bytes += sl_kvtab_bytes(w->bkt[i].tab);
	}
	for (uint32_t i = 0; i < w->nspare; i++)
		*bytes += sl_kvtab_bytes(w->spare[i]);
}

/* Drops the slices whose last window is past end - 1 + lateness. */
static void cleanup(struct win *w, struct sl_ctx *ctx, sl_ts_t wm)
{
	const struct sl_window_cfg *c = w->cfg;
	uint32_t n = 0;

	uint64_t entries;
	size_t bytes;

	while (n < w->nbkt && ts_add_sat(last_end(c, w->bkt[n].s_end) - 1, c->lateness) <= wm) {
		struct bucket *b = &w->bkt[n++];

		/* the whole slice goes: its table is cleared at once, not entry by entry */
		if (w->cfg->has_dyn)
			for (uint32_t i = 0; i < b->nrun; i++) {
				/* random entries: fetch ahead to overlap the misses */
				if (i + PREFETCH < b->nrun)
					__builtin_prefetch(b->run[i + PREFETCH].v);
				sl_win_acc_destroy(w, accs_of(w, b->run[i].v));
			}
		tab_put(w, b->tab);
		w->run_bytes -= (size_t)b->cap * sizeof(*b->run);
		free(b->run);
	}
	if (!n)
		return;
	memmove(w->bkt, w->bkt + n, (w->nbkt - n) * sizeof(*w->bkt));
	w->nbkt -= n;
	/* bucket indices moved: the next record locates its slice again */
	w->c_lo = w->c_hi = 0;
	w->c_bkt = SLICE_NONE;
	slice_measure(w, &entries, &bytes);
	ctx->m.state_entries = entries;
}

static void slice_on_watermark(struct sl_ctx *ctx, sl_ts_t wm)
{
	struct win *w = ctx->self;
	const struct sl_window_cfg *c = w->cfg;

	for (;;) {
		sl_ts_t e = next_window(w);

		if (e == SL_TS_MAX || e - 1 > wm)
			break;
		fire_window(w, ctx, e);
		w->fired_upto = e;
	}
	if (wm == SL_TS_MAX) {
		w->fired_upto = SL_TS_MAX;
	} else {
		sl_ts_t last = (wm + 1) - floor_mod(wm + 1 - c->end_off, c->slide);

		if (last > w->fired_upto)
			w->fired_upto = last;
	}
	cleanup(w, ctx, wm);
}

/* One pass over the fire lists: O(entries), a random read of each entry (prefetched ahead as
 * cleanup does) and a copy of its key and block. */
static int slice_snapshot(struct win *w, struct sl_snap_buf *out)
{
	sl_snap_put_u32(out, w->nbkt);
	for (uint32_t i = 0; i < w->nbkt; i++) {
		const struct bucket *b = &w->bkt[i];

		sl_snap_put_u64(out, (uint64_t)b->s_end);
		sl_snap_put_u32(out, b->nrun);
		for (uint32_t j = 0; j < b->nrun; j++) {
			struct sl_kv kv;

			if (j + PREFETCH < b->nrun)
				__builtin_prefetch(b->run[j + PREFETCH].v);
			sl_kvtab_entry(b->tab, b->run[j].v, &kv);
			sl_win_snap_put_key(out, kv.kg, kv.key, kv.klen);
			if (sl_win_acc_serialize(w, accs_of(w, b->run[j].v), out))
				return out->error;
		}
	}
	return out->error;
}

/* Inserts one restored (key, slice) block, moving what acc owns into the table. */
static int restore_entry(struct win *w, uint64_t hash, const uint8_t *key, uint32_t klen, sl_ts_t s,
			 void *acc)
{
	uint32_t i = bucket_find(w, s);
	struct bucket *b;
	bool created;
	void *v;

	if (i == SLICE_NONE && (i = bucket_add(w, s)) == SLICE_NONE)
		return -ENOMEM;
	b = &w->bkt[i];
	v = sl_kvtab_put(b->tab, hash, key, klen, (uint64_t)s, &created);
	if (!v)
		return -ENOMEM;
	if (!created)
		return -EINVAL; /* the same (key, slice) twice */
	if (entry_link(w, b, v, hash)) {
		sl_kvtab_remove_value(b->tab, v);
		return -ENOMEM;
	}
	/* a move, not a copy: acc is forgotten by the caller, so nothing is shared */
	memcpy(accs_of(w, v), acc, w->cfg->acc_size);
	return 0;
}

static int slice_restore(struct win *w, struct sl_snap_reader *r, uint32_t kg_lo, uint32_t kg_hi)
{
	const struct sl_window_cfg *c = w->cfg;
	uint32_t nbkt;

	if (sl_snap_get_u32(r, &nbkt))
		return r->error;
	for (uint32_t i = 0; i < nbkt; i++) {
		uint64_t s_end;
		uint32_t n;

		sl_snap_get_u64(r, &s_end);
		if (sl_snap_get_u32(r, &n))
			return r->error;
		if (!sl_win_snap_ts_ok((sl_ts_t)s_end) ||
		    floor_mod((sl_ts_t)s_end - c->spec.offset_ms, c->slice))
			return -EINVAL; /* not a slice end of this window */
		for (uint32_t j = 0; j < n; j++) {
			const uint8_t *key;
			uint32_t kg, klen;
			uint64_t hash;
			int rc;

			rc = sl_win_snap_get_key(w, r, &kg, &key, &klen, &hash);
			if (rc || (rc = sl_win_acc_deserialize(w, w->tmp, r)))
				return rc;
			if (kg < kg_lo || kg >= kg_hi) {
				sl_win_acc_destroy(w, w->tmp); /* another instance's key group */
				continue;
			}
			rc = restore_entry(w, hash, key, klen, (sl_ts_t)s_end, w->tmp);
			if (rc) {
				sl_win_acc_destroy(w, w->tmp);
				return rc;
			}
		}
	}
	w->c_lo = w->c_hi = 0; /* the slice cache is recomputed on the next record */
	w->c_bkt = SLICE_NONE;
	return 0;
}

const struct sl_win_kind_ops sl_win_slices = {
	.open = slice_open,
	.close = slice_close,
	.process = slice_process,
	.prefetch = slice_prefetch,
	.on_watermark = slice_on_watermark,
	.snapshot = slice_snapshot,
	.restore = slice_restore,
	.pending = slice_pending,
	.measure = slice_measure,
};
