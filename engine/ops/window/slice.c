/*
 * slice.c - tumbling and hopping windows over slices (DESIGN §5).
 *
 * Time is cut into slices of length g = gcd(size, slide) aligned on the offset; a tumbling
 * window is the case slide = size = g. State holds one accumulator block per (key, slice),
 * namespace = slice end, so a record costs one hash lookup and the aggregates' add, whatever
 * size/slide is. Window [e - size, e) is the merge of its size/g slices, done at fire time.
 *
 * Firing without a timer per (key, window): every entry is linked, when created, into the
 * list of its slice end (`struct bucket`, kept sorted by slice end; kvtab entries never
 * move, so the list holds value pointers). When the watermark passes e - 1, the buckets of
 * e's slices are gathered, sorted by (key hash, key bytes, slice end) and each run of one
 * key is merged and emitted: O(n log n) per window, no per-record cost. A slice is dropped
 * with its bucket once the last window containing it is past end - 1 + lateness.
 *
 * Invariants: every window ending at or before fired_upto has fired, and fired_upto is the
 * last window end <= watermark + 1, so "window e fired" is exactly e - 1 <= watermark; a
 * live slice has at least one window with e - 1 + lateness > watermark.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state/kvtab.h"
#include "window_int.h"

/* Entry header: the next entry of the same slice end. */
struct sent {
	void *next;
};

static inline sl_ts_t slice_end_of(const struct sl_window_cfg *c, sl_ts_t ts)
{
	return ts - floor_mod(ts - c->spec.offset_ms, c->slice) + c->slice;
}

/* End of the first window containing the slice ending at s. */
static inline sl_ts_t first_end(const struct sl_window_cfg *c, sl_ts_t s)
{
	return s + floor_mod(c->spec.offset_ms - s, c->slide);
}

/* End of the last window containing the slice ending at s (starts at or before its start). */
static inline sl_ts_t last_end(const struct sl_window_cfg *c, sl_ts_t s)
{
	sl_ts_t x = s - c->slice + c->spec.size_ms;

	return x - floor_mod(x - c->spec.offset_ms, c->slide);
}

int slice_open(struct win *w, uint32_t max_par)
{
	w->hdr = sizeof(struct sent);
	w->tab = sl_kvtab_create(w->hdr + w->cfg->acc_size, max_par);
	if (!w->tab)
		return -ENOMEM;
	w->fired_upto = SL_TS_MIN;
	return 0;
}

void slice_close(struct win *w)
{
	sl_kvtab_destroy(w->tab);
	free(w->bkt);
	free(w->fe);
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

/* Links a new entry into the list of slice end s. Once per new (key, slice): the common
 * case is the newest bucket, else a binary search. Returns 0 or -ENOMEM. */
static int entry_link(struct win *w, void *v, sl_ts_t s)
{
	struct bucket *b;
	uint32_t i;

	if (w->nbkt && w->bkt[w->nbkt - 1].s_end == s) {
		i = w->nbkt - 1;
	} else {
		i = bucket_lower(w, s);
		if (i == w->nbkt || w->bkt[i].s_end != s) {
			if (w->nbkt == w->cap_bkt) {
				uint32_t cap = w->cap_bkt ? 2 * w->cap_bkt : 16;
				struct bucket *nb = realloc(w->bkt, cap * sizeof(*nb));

				if (!nb)
					return -ENOMEM;
				w->bkt = nb;
				w->cap_bkt = cap;
			}
			memmove(&w->bkt[i + 1], &w->bkt[i], (w->nbkt - i) * sizeof(*w->bkt));
			w->bkt[i] = (struct bucket){ .s_end = s };
			w->nbkt++;
		}
	}
	b = &w->bkt[i];
	((struct sent *)v)->next = b->head;
	b->head = v;
	b->n++;
	return 0;
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
			void *v = sl_kvtab_get(w->tab, ctx->hash, ctx->key, ctx->klen, (uint64_t)s);

			a = v ? accs_of(w, v) : NULL;
		}
		if (!a)
			continue;
		if (++n == 1) {
			first = a;
			continue;
		}
		if (n == 2) {
			win_acc_init(w, dst);
			win_acc_merge(w, dst, first);
		}
		win_acc_merge(w, dst, a);
	}
	return n > 1 ? dst : first;
}

/*
 * A record for slice s some of whose windows already fired but are within lateness: add it,
 * then re-fire each such window at once, -U/+U (or +I when the key had no data in it).
 * Windows not fired yet just see the updated slice when they fire.
 */
static void refire(struct win *w, struct sl_ctx *ctx, sl_ts_t s, void *acc, bool created,
		   const struct sl_row *row)
{
	const struct sl_window_cfg *c = w->cfg;
	sl_ts_t wm = ctx->watermark, hi = last_end(c, s);

	memcpy(w->save, acc, c->acc_size);
	win_acc_add(w, acc, row);
	for (sl_ts_t e = first_end(c, s); e <= hi && e - 1 <= wm; e += c->slide) {
		const void *old, *new;

		if (ts_add_sat(e - 1, c->lateness) <= wm)
			continue; /* beyond lateness: already cleaned and not re-emitted */
		old = window_acc(w, ctx, e, s, created ? NULL : w->save, w->tmp);
		new = window_acc(w, ctx, e, s, acc, w->tmp2);
		if (old)
			win_emit_update(w, ctx, e - c->spec.size_ms, e, old, new);
		else
			win_emit(w, ctx, e - c->spec.size_ms, e, new, SL_ROW_INSERT);
	}
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
}

/* Hot path: one kvtab lookup and the aggregates' add per in-order record. */
void slice_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	struct win *w = ctx->self;
	sl_ts_t wm = ctx->watermark;
	bool created;
	void *v, *acc;

	if (__builtin_expect(ts < w->c_lo || ts >= w->c_hi, 0))
		locate(w, ts);
	if (__builtin_expect(w->c_drop <= wm, 0)) {
		win_late(w, ctx, ts, row);
		return;
	}
	v = sl_kvtab_put(w->tab, ctx->hash, ctx->key, ctx->klen, (uint64_t)w->c_hi, &created);
	if (__builtin_expect(!v, 0)) {
		win_fail(ctx, -ENOMEM, "out of memory for window state");
		return;
	}
	acc = accs_of(w, v);
	if (created) {
		if (entry_link(w, v, w->c_hi)) {
			sl_kvtab_remove_value(w->tab, v);
			win_fail(ctx, -ENOMEM, "out of memory for window fire lists");
			return;
		}
		if (w->cfg->has_init)
			win_acc_init(w, acc);
		ctx->m.state_entries++;
	}
	if (__builtin_expect(w->c_fire <= wm, 0)) {
		refire(w, ctx, w->c_hi, acc, created, row);
		return;
	}
	win_acc_add(w, acc, row);
}

static int fire_cmp(const void *pa, const void *pb)
{
	const struct fire_ent *a = pa, *b = pb;
	int r;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	if (a->klen != b->klen)
		return a->klen < b->klen ? -1 : 1;
	r = memcmp(a->key, b->key, a->klen);
	if (r)
		return r;
	return a->s_end < b->s_end ? -1 : a->s_end > b->s_end;
}

static bool same_key(const struct fire_ent *a, const struct fire_ent *b)
{
	return a->hash == b->hash && a->klen == b->klen && !memcmp(a->key, b->key, a->klen);
}

/* Collects the entries of window e's slices into w->fe. Returns 0 or -ENOMEM. */
static int gather(struct win *w, sl_ts_t e)
{
	const struct sl_window_cfg *c = w->cfg;
	struct sl_kv kv;

	w->nfe = 0;
	for (uint32_t i = bucket_lower(w, e - c->spec.size_ms + 1);
	     i < w->nbkt && w->bkt[i].s_end <= e; i++) {
		const struct bucket *b = &w->bkt[i];

		if (w->nfe + b->n > w->cap_fe) {
			size_t cap = w->cap_fe ? w->cap_fe : 1024;
			struct fire_ent *nf;

			while (cap < w->nfe + b->n)
				cap *= 2;
			nf = realloc(w->fe, cap * sizeof(*nf));
			if (!nf)
				return -ENOMEM;
			w->fe = nf;
			w->cap_fe = cap;
		}
		for (void *v = b->head; v; v = ((struct sent *)v)->next) {
			sl_kvtab_entry(w->tab, v, &kv);
			w->fe[w->nfe++] = (struct fire_ent){ .hash = kv.hash, .s_end = b->s_end,
							     .v = v, .key = kv.key,
							     .klen = kv.klen };
		}
	}
	return 0;
}

/* Emits +I for every key with data in window [e - size, e), in (hash, key) order. */
static void fire_window(struct win *w, struct sl_ctx *ctx, sl_ts_t e)
{
	const struct sl_window_cfg *c = w->cfg;
	size_t i = 0, j;

	if (gather(w, e)) {
		win_fail(ctx, -ENOMEM, "out of memory firing a window");
		return;
	}
	qsort(w->fe, w->nfe, sizeof(*w->fe), fire_cmp);
	for (; i < w->nfe; i = j) {
		const void *acc = accs_of(w, w->fe[i].v);

		for (j = i + 1; j < w->nfe && same_key(&w->fe[i], &w->fe[j]); j++) {
			if (j == i + 1) {
				win_acc_init(w, w->tmp);
				win_acc_merge(w, w->tmp, acc);
				acc = w->tmp;
			}
			win_acc_merge(w, w->tmp, accs_of(w, w->fe[j].v));
		}
		ctx->key = w->fe[i].key;
		ctx->klen = w->fe[i].klen;
		ctx->hash = w->fe[i].hash;
		win_emit(w, ctx, e - c->spec.size_ms, e, acc, SL_ROW_INSERT);
	}
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

/* Drops the slices whose last window is past end - 1 + lateness. */
static void cleanup(struct win *w, struct sl_ctx *ctx, sl_ts_t wm)
{
	const struct sl_window_cfg *c = w->cfg;
	uint32_t n = 0;

	while (n < w->nbkt && ts_add_sat(last_end(c, w->bkt[n].s_end) - 1, c->lateness) <= wm) {
		void *v = w->bkt[n].head;

		while (v) {
			void *next = ((struct sent *)v)->next;

			sl_kvtab_remove_value(w->tab, v);
			v = next;
		}
		n++;
	}
	if (!n)
		return;
	memmove(w->bkt, w->bkt + n, (w->nbkt - n) * sizeof(*w->bkt));
	w->nbkt -= n;
	ctx->m.state_entries = sl_kvtab_count(w->tab);
}

void slice_on_watermark(struct sl_ctx *ctx, sl_ts_t wm)
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
		sl_ts_t last = (wm + 1) - floor_mod(wm + 1 - c->spec.offset_ms, c->slide);

		if (last > w->fired_upto)
			w->fired_upto = last;
	}
	cleanup(w, ctx, wm);
}
