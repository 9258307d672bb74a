/*
 * timer.c - the timer service: a binary min-heap in deterministic order plus a kvtab as the
 * de-duplication set.
 *
 * The set is a kvtab keyed by (key bytes ++ timer namespace, kvtab namespace = time) under
 * the hash hash ^ mix(time): a kvtab gives all namespaces of one hash one home slot, and one
 * key may hold thousands of timers, so the time goes into the hash. A timer is stored once,
 * its bytes live in a slab entry that never moves, and add/delete find it in O(1). The entry's
 * value is the timer's heap position, which lets delete take it out of the middle of the heap in
 * O(log n). Heap elements carry (at, hash) inline so sifting compares without touching entries;
 * only ties on both read the key bytes.
 *
 * Invariants: the heap and the set hold the same timers; for every heap index i,
 * pos_of(heap[i]) == i; heap[parent(i)] <= heap[i] in (at, hash, key bytes, ns) order, where
 * key bytes compare as memcmp with the shorter prefix first.
 *
 * Snapshots write the set (every timer once, with its key group); a restore re-adds them, so
 * the order they fire in is the same as before (it depends only on the timers).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snap.h"
#include "hash.h"
#include "kvtab.h"
#include "timer.h"

struct tval {
	uint32_t pos; /* index in the heap */
};

struct hent {
	sl_ts_t at;
	uint64_t hash;
	struct tval *v;
};

struct sl_timers {
	struct sl_kvtab *set;
	struct hent *heap;
	uint32_t n;
	uint32_t cap;
	uint8_t kbuf[SL_KVTAB_KEY_MAX];	  /* key ++ ns being looked up */
	uint8_t popkey[SL_KVTAB_KEY_MAX]; /* the key of the last popped timer */
};

struct sl_timers *sl_timers_create(void)
{
	struct sl_timers *tm = calloc(1, sizeof(*tm));

	if (!tm)
		return NULL;
	tm->set = sl_kvtab_create(sizeof(struct tval), 1);
	if (!tm->set) {
		free(tm);
		return NULL;
	}
	return tm;
}

void sl_timers_destroy(struct sl_timers *tm)
{
	if (!tm)
		return;
	sl_kvtab_destroy(tm->set);
	free(tm->heap);
	free(tm);
}

/* Builds key ++ ns in kbuf. Returns its length, or 0 if the key is too long. */
static uint32_t set_key(struct sl_timers *tm, const void *key, uint32_t klen, uint64_t ns)
{
	if (klen > SL_KVTAB_KEY_MAX - 8)
		return 0;
	memcpy(tm->kbuf, key, klen);
	memcpy(tm->kbuf + klen, &ns, 8);
	return klen + 8;
}

static inline uint64_t set_hash(uint64_t hash, sl_ts_t at)
{
	return hash ^ sl_hash_mix64((uint64_t)at);
}

/* a < b in firing order. */
static bool before(const struct sl_timers *tm, const struct hent *a, const struct hent *b)
{
	struct sl_kv ka, kb;
	uint32_t la, lb;
	uint64_t na, nb;
	int c;

	if (a->at != b->at)
		return a->at < b->at;
	if (a->hash != b->hash)
		return a->hash < b->hash;
	sl_kvtab_entry(tm->set, a->v, &ka);
	sl_kvtab_entry(tm->set, b->v, &kb);
	la = ka.klen - 8;
	lb = kb.klen - 8;
	c = memcmp(ka.key, kb.key, la < lb ? la : lb);
	if (c != 0)
		return c < 0;
	if (la != lb)
		return la < lb;
	memcpy(&na, ka.key + la, 8);
	memcpy(&nb, kb.key + lb, 8);
	return na < nb;
}

static inline void heap_set(struct sl_timers *tm, uint32_t i, struct hent e)
{
	tm->heap[i] = e;
	e.v->pos = i;
}

static void sift_up(struct sl_timers *tm, uint32_t i)
{
	struct hent e = tm->heap[i];

	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (!before(tm, &e, &tm->heap[p]))
			break;
		heap_set(tm, i, tm->heap[p]);
		i = p;
	}
	heap_set(tm, i, e);
}

static void sift_down(struct sl_timers *tm, uint32_t i)
{
	struct hent e = tm->heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= tm->n)
			break;
		if (c + 1 < tm->n && before(tm, &tm->heap[c + 1], &tm->heap[c]))
			c++;
		if (!before(tm, &tm->heap[c], &e))
			break;
		heap_set(tm, i, tm->heap[c]);
		i = c;
	}
	heap_set(tm, i, e);
}

/* Takes heap[i] out, keeping the heap order. */
static void heap_remove(struct sl_timers *tm, uint32_t i)
{
	tm->n--;
	if (i == tm->n)
		return;
	heap_set(tm, i, tm->heap[tm->n]);
	if (i > 0 && before(tm, &tm->heap[i], &tm->heap[(i - 1) / 2]))
		sift_up(tm, i);
	else
		sift_down(tm, i);
}

/* Makes room in the heap for n more timers. */
static int heap_reserve(struct sl_timers *tm, uint64_t n)
{
	uint64_t want = (uint64_t)tm->n + n;
	uint32_t nc = tm->cap ? tm->cap : 16;
	struct hent *h;

	if (want <= tm->cap)
		return 0;
	if (want > UINT32_MAX / 2)
		return -ENOMEM;
	while (nc < want)
		nc *= 2;
	h = realloc(tm->heap, (size_t)nc * sizeof(*h));
	if (!h)
		return -ENOMEM;
	tm->heap = h;
	tm->cap = nc;
	return 0;
}

int sl_timers_add(struct sl_timers *tm, sl_ts_t at, uint64_t hash, const void *key, uint32_t klen,
		  uint64_t ns)
{
	uint32_t len = set_key(tm, key, klen, ns);
	struct tval *v;
	bool created;

	if (!len)
		return -EINVAL;
	if (tm->n == tm->cap && heap_reserve(tm, 1))
		return -ENOMEM;
	v = sl_kvtab_put(tm->set, set_hash(hash, at), tm->kbuf, len, (uint64_t)at, &created);
	if (!v)
		return -ENOMEM;
	if (!created)
		return 0;
	tm->heap[tm->n] = (struct hent){ at, hash, v };
	v->pos = tm->n++;
	sift_up(tm, tm->n - 1);
	return 0;
}

void sl_timers_delete(struct sl_timers *tm, sl_ts_t at, uint64_t hash, const void *key,
		      uint32_t klen, uint64_t ns)
{
	uint32_t len = set_key(tm, key, klen, ns);
	struct tval *v;

	if (!len)
		return;
	v = sl_kvtab_get(tm->set, set_hash(hash, at), tm->kbuf, len, (uint64_t)at);
	if (!v)
		return;
	heap_remove(tm, v->pos);
	sl_kvtab_remove_value(tm->set, v);
}

bool sl_timers_pop(struct sl_timers *tm, sl_ts_t until, struct sl_timer *out)
{
	struct hent top;
	struct sl_kv kv;

	if (!tm->n || tm->heap[0].at > until)
		return false;
	top = tm->heap[0];
	sl_kvtab_entry(tm->set, top.v, &kv);
	out->at = top.at;
	out->hash = top.hash;
	out->klen = kv.klen - 8;
	memcpy(tm->popkey, kv.key, out->klen);
	memcpy(&out->ns, kv.key + out->klen, 8);
	out->key = tm->popkey;
	heap_remove(tm, 0);
	sl_kvtab_remove_value(tm->set, top.v);
	return true;
}

sl_ts_t sl_timers_next(const struct sl_timers *tm)
{
	return tm->n ? tm->heap[0].at : SL_TS_MAX;
}

size_t sl_timers_count(const struct sl_timers *tm)
{
	return tm->n;
}

/* ---- snapshots ----------------------------------------------------------------------------
 *
 * A timer section, version 1: u32 max_par, u32 0, u64 count, then count records
 *   { i64 at, u64 hash, u64 ns, u16 kg, u16 0, u32 klen, key bytes }.
 * Written in the set's slab order (sequential reads; the heap order is rebuilt on restore,
 * and firing order depends only on the timers themselves). Restore checks the whole section
 * first, then adds.
 */
#define TM_MAGIC   0x4d544c53u /* "SLTM" */
#define TM_VERSION 1u

struct trec {
	sl_ts_t at;
	uint64_t hash;
	uint64_t ns;
	uint16_t kg;
	uint16_t rsv;
	uint32_t klen;
};

_Static_assert(sizeof(struct trec) == 32, "a timer record header has no padding");

int sl_timers_snapshot(const struct sl_timers *tm, uint32_t max_par, struct sl_snap_buf *out)
{
	size_t sec = sl_snap_sec_begin(out, TM_MAGIC, TM_VERSION);
	struct sl_kvtab_iter it;
	struct sl_kv kv;

	sl_snap_put_u32(out, max_par);
	sl_snap_put_u32(out, 0);
	sl_snap_put_u64(out, tm->n);
	sl_kvtab_iter_init(&it);
	while (sl_kvtab_next(tm->set, &it, &kv)) {
		/* the set's key is key ++ ns under the hash hash ^ mix(at), see set_key */
		sl_ts_t at = (sl_ts_t)kv.ns;
		struct trec t = { .at = at,
				  .hash = kv.hash ^ sl_hash_mix64((uint64_t)at),
				  .klen = kv.klen - 8 };
		uint8_t *p = sl_snap_reserve(out, sizeof(t) + t.klen);

		if (!p)
			break;
		memcpy(&t.ns, kv.key + t.klen, 8);
		t.kg = (uint16_t)sl_key_group(t.hash, max_par);
		memcpy(p, &t, sizeof(t));
		memcpy(p + sizeof(t), kv.key, t.klen);
		out->len += sizeof(t) + t.klen;
	}
	sl_snap_sec_end(out, sec);
	return out->error;
}

/* Checks the records of a section body and counts those of key groups [lo, hi) into
 * *mine (apply false), or registers those (apply true). */
static int restore_pass(struct sl_timers *tm, struct sl_snap_reader *b, uint64_t n,
			uint32_t max_par, uint32_t lo, uint32_t hi, bool apply, uint64_t *mine)
{
	for (uint64_t i = 0; i < n; i++) {
		struct trec t;
		const void *key;
		int rc;

		if (sl_snap_get(b, &t, sizeof(t)) || t.rsv || t.klen > SL_KVTAB_KEY_MAX - 8 ||
		    t.kg >= max_par || t.kg != sl_key_group(t.hash, max_par) ||
		    t.klen > b->len - b->pos)
			return -EINVAL;
		key = b->p + b->pos;
		b->pos += t.klen;
		if (!apply) {
			*mine += t.kg >= lo && t.kg < hi;
		} else if (t.kg >= lo && t.kg < hi) {
			rc = sl_timers_add(tm, t.at, t.hash, key, t.klen, t.ns);
			if (rc)
				return rc;
		}
	}
	return b->pos == b->len ? 0 : -EINVAL;
}

int sl_timers_restore(struct sl_timers *tm, struct sl_snap_reader *r, uint32_t max_par,
		      uint32_t kg_lo, uint32_t kg_hi)
{
	struct sl_snap_reader b;
	uint32_t ver, mp, rsv;
	uint64_t n, mine = 0;
	size_t start;
	int rc;

	rc = sl_snap_sec_open(r, TM_MAGIC, TM_VERSION, &b, &ver);
	if (rc)
		return rc;
	if (sl_snap_get_u32(&b, &mp) || sl_snap_get_u32(&b, &rsv) || sl_snap_get_u64(&b, &n) ||
	    rsv || n > (b.len - b.pos) / sizeof(struct trec))
		return r->error = -EINVAL;
	if (mp != max_par)
		return -EPROTO;
	start = b.pos;
	rc = restore_pass(tm, &b, n, max_par, kg_lo, kg_hi, false, &mine);
	if (rc)
		return r->error = rc;
	/* room for all of them at once: no heap or set regrowth while adding */
	rc = heap_reserve(tm, mine);
	if (!rc)
		rc = sl_kvtab_reserve(tm->set, (size_t)mine);
	if (rc)
		return rc;
	b.pos = start;
	return restore_pass(tm, &b, n, max_par, kg_lo, kg_hi, true, &mine);
}
