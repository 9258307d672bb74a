/*
 * heap_state.c - the heap backend of keyed value and map state, with TTL (state.c
 * dispatches sl_kstate_* here for kstates made without a RocksDB db).
 *
 * Layout: descriptor i owns kvtab tab[i], keyed by (operator key, namespace 0).
 *  - value state: the entry's value is [expires_at if TTL][user value];
 *  - map state: the entry's value is a pointer to this key's own kvtab of map entries
 *    (map key bytes -> [expires_at if TTL][user value]). A per-key table costs a few hundred
 *    bytes per key that has a map, but it gives what Flink's MapState promises: iteration
 *    and clearing of one key's map in O(its size), and map keys up to SL_KEY_MAX bytes
 *    (concatenating operator key and map key in one table would allow neither).
 *
 * Invariants: a key's inner map table exists iff its outer entry does; an emptied table is
 * dropped at once, except while a map foreach runs (it may be walking that very table):
 * then it stays, empty, until that foreach ends (for its own key) or the key's next map
 * removal; `entries` == live values + live map entries, expired ones included until removed.
 *
 * TTL is OnCreateAndWrite in processing time: put sets expires_at = now + ttl; get and
 * foreach treat now >= expires_at as absent and remove the entry on the spot. Entries
 * nobody touches again would stay forever that way (a join's rows of keys that never come
 * back: state growing with the input for all its TTL), so every put also looks at the next
 * SWEEP_PER_PUT entries of its descriptor, round and round, and removes the expired ones,
 * as Flink's heap backend cleans incrementally: a descriptor written n times a second is
 * swept whole every entries / (n * SWEEP_PER_PUT) seconds, for a few loads per put.
 *
 * Hot path: value get/put are one kvtab lookup; nothing is allocated except by the first
 * insertion of a key (and a map's first entry, which creates its table).
 *
 * Snapshots (sl_kstate_snapshot/restore, format at the "snapshots" section below) are a
 * sequential walk of the tables, copying live entries with their key group, so a restore can
 * keep the key groups a new instance owns after a change of parallelism; the descriptor
 * layout travels with them, so a job whose state does not match is refused by name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap.h"
#include "hash.h"
#include "key.h"
#include "kvtab.h"
#include "state_int.h"

struct sdesc {
	const char *name; /* borrowed from the job; "" if it had none */
	enum sl_state_kind kind;
	sl_ts_t ttl;  /* 0: none */
	uint32_t off; /* user value offset: 8 with TTL, else 0 */
	uint32_t value_size;
	struct sl_kvtab *tab;	    /* key -> value, or key -> struct mapref */
	struct sl_kvtab_iter sweep; /* TTL: where the incremental cleanup goes on (sweep_step) */
};

struct mapref {
	struct sl_kvtab *m;
};

/* A record block being written (snapshot format version 2, below); desc -1: none open. */
struct blk {
	int desc;
	size_t at; /* where its header starts in the buffer */
	uint64_t n;
	uint32_t kg_lo, kg_hi; /* key groups of its records: [kg_lo, kg_hi) */
};

/* A copy-on-write snapshot in progress (sl_heap_snapshot_begin/_step); out == NULL: none. */
struct cow_snap {
	struct sl_snap_buf *out; /* borrowed from the caller until the snapshot completes */
	sl_ts_t now;		 /* the barrier's processing time (TTL) */
	size_t sec;		 /* where the section starts in out */
	int cur;		 /* descriptor the walk is in; n: the walk is done */
	struct sl_kvtab_iter it;
	struct blk blk; /* the open record block */
};

struct heap_kstate {
	struct sl_kstate hdr; /* backend SL_STATE_HEAP: first, state.c casts */
	struct cow_snap cs;
	int n;
	uint32_t max_par;
	int iterating; /* map foreach calls in progress */
	size_t entries;
	char err[224]; /* why the last restore failed */
	struct sdesc d[];
};

static inline sl_ts_t *expiry(void *v)
{
	return (sl_ts_t *)v;
}

static inline bool expired(const struct sdesc *d, void *v, sl_ts_t now)
{
	return d->ttl && now >= *expiry(v);
}

static inline void touch(const struct sdesc *d, void *v, sl_ts_t now)
{
	if (d->ttl)
		*expiry(v) = now > SL_TS_MAX - d->ttl ? SL_TS_MAX : now + d->ttl;
}

static bool free_map(const struct sl_kv *kv, void *arg)
{
	sl_kvtab_destroy(((struct mapref *)kv->value)->m);
	return true;
}

void sl_heap_destroy(struct heap_kstate *ks)
{
	if (!ks)
		return;
	for (int i = 0; i < ks->n; i++) {
		if (!ks->d[i].tab)
			continue;
		if (ks->d[i].kind == SL_STATE_MAP)
			sl_kvtab_foreach(ks->d[i].tab, free_map, NULL);
		sl_kvtab_destroy(ks->d[i].tab);
	}
	free(ks);
}

struct heap_kstate *sl_heap_create(const struct sl_state_desc *descs, int n, uint32_t max_par,
				   int *err)
{
	struct heap_kstate *ks;

	*err = -EINVAL;
	if (n < 0 || (n > 0 && !descs))
		return NULL;
	for (int i = 0; i < n; i++) {
		if ((descs[i].kind != SL_STATE_VALUE && descs[i].kind != SL_STATE_MAP) ||
		    descs[i].ttl_ms < 0 || descs[i].value_size > (1u << 20))
			return NULL;
	}
	*err = -ENOMEM;
	ks = calloc(1, sizeof(*ks) + (size_t)n * sizeof(ks->d[0]));
	if (!ks)
		return NULL;
	ks->hdr.backend = SL_STATE_HEAP;
	ks->n = n;
	ks->max_par = max_par;
	for (int i = 0; i < n; i++) {
		struct sdesc *d = &ks->d[i];

		d->name = descs[i].name ? descs[i].name : "";
		d->kind = descs[i].kind;
		d->ttl = descs[i].ttl_ms;
		d->off = d->ttl ? 8 : 0;
		d->value_size = descs[i].value_size;
		d->tab = sl_kvtab_create(d->kind == SL_STATE_MAP ? sizeof(struct mapref)
								 : d->off + d->value_size,
					 max_par);
		if (!d->tab) {
			sl_heap_destroy(ks);
			return NULL;
		}
	}
	*err = 0;
	return ks;
}

size_t sl_heap_entries(const struct heap_kstate *ks)
{
	return ks->entries;
}

static bool add_map_bytes(const struct sl_kv *kv, void *arg)
{
	*(size_t *)arg += sl_kvtab_bytes(((struct mapref *)kv->value)->m);
	return true;
}

size_t sl_heap_bytes(const struct heap_kstate *ks)
{
	size_t b = sizeof(*ks);

	for (int i = 0; i < ks->n; i++) {
		b += sl_kvtab_bytes(ks->d[i].tab);
		if (ks->d[i].kind == SL_STATE_MAP)
			sl_kvtab_foreach(ks->d[i].tab, add_map_bytes, &b);
	}
	return b;
}

bool sl_heap_desc_ttl(const struct heap_kstate *ks, int id)
{
	return id >= 0 && id < ks->n && ks->d[id].ttl;
}

bool sl_heap_has_ttl(const struct heap_kstate *ks)
{
	for (int i = 0; i < ks->n; i++)
		if (ks->d[i].ttl)
			return true;
	return false;
}

static inline struct sdesc *desc(struct heap_kstate *ks, int id, enum sl_state_kind kind)
{
	if (id < 0 || id >= ks->n || ks->d[id].kind != kind)
		return NULL;
	return &ks->d[id];
}

static void cow_save(struct heap_kstate *ks, struct sdesc *d, void *v);
static void map_drop_if_empty(struct heap_kstate *ks, struct sdesc *d, struct mapref *r);

/* Before an existing entry (a value, or a key's map ref) changes or is handed out, while a
 * copy-on-write snapshot runs: copies it into the snapshot if the walk has not yet. */
static inline void cow(struct heap_kstate *ks, struct sdesc *d, void *v)
{
	if (__builtin_expect(ks->cs.out != NULL, 0))
		cow_save(ks, d, v);
}

/* Entries the incremental TTL cleanup looks at per put (Flink's heap backend: 5 per access). */
#define SWEEP_PER_PUT 4
/* A key's map entries looked at per visit of its map (the rest at the next lap). */
#define SWEEP_MAP_ENTRIES 16

/* Removes the expired entries of one key's map that a bounded look finds; drops the map if
 * that empties it. */
static void sweep_map(struct heap_kstate *ks, struct sdesc *d, struct mapref *r, sl_ts_t now)
{
	struct sl_kvtab_iter it;
	struct sl_kv kv;
	bool saved = false;

	sl_kvtab_iter_init(&it);
	for (int i = 0; i < SWEEP_MAP_ENTRIES && sl_kvtab_next(r->m, &it, &kv); i++) {
		if (!expired(d, kv.value, now))
			continue;
		if (!saved) {
			cow(ks, d, r); /* a running snapshot keeps the key's map as it was */
			saved = true;
		}
		sl_kvtab_remove_value(r->m, kv.value);
		ks->entries--;
	}
	if (saved)
		map_drop_if_empty(ks, d, r);
}

/*
 * The incremental TTL cleanup (see the top): the next SWEEP_PER_PUT entries of d, expired
 * ones removed. Entries never move in a kvtab (slabs), so the cursor stays valid across
 * insertions and removals. Not while a map foreach runs: it may be walking what would go.
 */
static void sweep_step(struct heap_kstate *ks, struct sdesc *d, sl_ts_t now)
{
	struct sl_kv kv;

	if (!d->ttl || ks->iterating)
		return;
	for (int i = 0; i < SWEEP_PER_PUT; i++) {
		if (!sl_kvtab_next(d->tab, &d->sweep, &kv)) {
			sl_kvtab_iter_init(&d->sweep); /* a lap done: the next starts over */
			return;
		}
		if (d->kind == SL_STATE_MAP) {
			sweep_map(ks, d, kv.value, now);
		} else if (expired(d, kv.value, now)) {
			cow(ks, d, kv.value);
			sl_kvtab_remove_value(d->tab, kv.value);
			ks->entries--;
		}
	}
}

/* ---- value state ------------------------------------------------------------------------ */

void *sl_heap_value_get(struct heap_kstate *ks, int id, const struct sl_kkey *k, sl_ts_t now)
{
	struct sdesc *d = desc(ks, id, SL_STATE_VALUE);
	uint8_t *v;

	if (!d)
		return NULL;
	v = sl_kvtab_get(d->tab, k->hash, k->key, k->klen, 0);
	if (!v)
		return NULL;
	cow(ks, d, v); /* the caller may write through the pointer */
	if (expired(d, v, now)) {
		sl_kvtab_remove_value(d->tab, v);
		ks->entries--;
		return NULL;
	}
	return v + d->off;
}

void *sl_heap_value_put(struct heap_kstate *ks, int id, const struct sl_kkey *k, sl_ts_t now)
{
	struct sdesc *d = desc(ks, id, SL_STATE_VALUE);
	uint8_t *v;
	bool created;

	if (!d)
		return NULL;
	sweep_step(ks, d, now); /* before the put: the pointer it returns stays valid */
	v = sl_kvtab_put(d->tab, k->hash, k->key, k->klen, 0, &created);
	if (!v)
		return NULL;
	if (created)
		ks->entries++;
	else
		cow(ks, d, v);
	if (!created && expired(d, v, now))
		memset(v + d->off, 0, d->value_size); /* a new value: zeroed, as documented */
	touch(d, v, now);
	return v + d->off;
}

void sl_heap_value_clear(struct heap_kstate *ks, int id, const struct sl_kkey *k)
{
	struct sdesc *d = desc(ks, id, SL_STATE_VALUE);
	void *v;

	if (!d)
		return;
	if (__builtin_expect(ks->cs.out != NULL, 0)) {
		v = sl_kvtab_get(d->tab, k->hash, k->key, k->klen, 0);
		if (v) {
			cow_save(ks, d, v);
			sl_kvtab_remove_value(d->tab, v);
			ks->entries--;
		}
		return;
	}
	if (sl_kvtab_remove(d->tab, k->hash, k->key, k->klen, 0))
		ks->entries--;
}

/* ---- map state -------------------------------------------------------------------------- */

/* Drops a key's map once it is empty, unless an iteration may be walking it. */
static void map_drop_if_empty(struct heap_kstate *ks, struct sdesc *d, struct mapref *r)
{
	if (ks->iterating || sl_kvtab_count(r->m))
		return;
	sl_kvtab_destroy(r->m);
	sl_kvtab_remove_value(d->tab, r);
}

void *sl_heap_map_get(struct heap_kstate *ks, int id, const struct sl_kkey *k, const void *mkey,
		      uint32_t mklen, sl_ts_t now)
{
	struct sdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mapref *r;
	uint8_t *v;

	if (!d)
		return NULL;
	r = sl_kvtab_get(d->tab, k->hash, k->key, k->klen, 0);
	if (!r)
		return NULL;
	v = sl_kvtab_get(r->m, sl_hash_bytes(mkey, mklen), mkey, mklen, 0);
	if (!v)
		return NULL;
	cow(ks, d, r);
	if (expired(d, v, now)) {
		sl_kvtab_remove_value(r->m, v);
		ks->entries--;
		map_drop_if_empty(ks, d, r);
		return NULL;
	}
	return v + d->off;
}

void *sl_heap_map_put(struct heap_kstate *ks, int id, const struct sl_kkey *k, const void *mkey,
		      uint32_t mklen, sl_ts_t now)
{
	struct sdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mapref *r;
	uint8_t *v;
	bool created;

	if (!d || mklen > SL_KEY_MAX)
		return NULL;
	sweep_step(ks, d, now); /* before the put: the pointer it returns stays valid */
	r = sl_kvtab_put(d->tab, k->hash, k->key, k->klen, 0, &created);
	if (!r)
		return NULL;
	if (created) {
		r->m = sl_kvtab_create(d->off + d->value_size, 1);
		if (!r->m) {
			sl_kvtab_remove_value(d->tab, r);
			return NULL;
		}
	} else {
		cow(ks, d, r);
	}
	v = sl_kvtab_put(r->m, sl_hash_bytes(mkey, mklen), mkey, mklen, 0, &created);
	if (!v) {
		map_drop_if_empty(ks, d, r);
		return NULL;
	}
	if (created)
		ks->entries++;
	else if (expired(d, v, now))
		memset(v + d->off, 0, d->value_size);
	touch(d, v, now);
	return v + d->off;
}

void sl_heap_map_remove(struct heap_kstate *ks, int id, const struct sl_kkey *k, const void *mkey,
			uint32_t mklen)
{
	struct sdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mapref *r;

	if (!d)
		return;
	r = sl_kvtab_get(d->tab, k->hash, k->key, k->klen, 0);
	if (!r)
		return;
	cow(ks, d, r);
	if (sl_kvtab_remove(r->m, sl_hash_bytes(mkey, mklen), mkey, mklen, 0))
		ks->entries--;
	map_drop_if_empty(ks, d, r);
}

struct walk {
	struct heap_kstate *ks;
	struct sdesc *d;
	struct sl_kvtab *m;
	sl_ts_t now;
	bool (*fn)(const void *mkey, uint32_t mklen, void *value, void *arg);
	void *arg;
};

static bool walk_one(const struct sl_kv *kv, void *arg)
{
	struct walk *w = arg;
	uint8_t *v = kv->value;

	if (expired(w->d, v, w->now)) {
		sl_kvtab_remove_value(w->m, v);
		w->ks->entries--;
		return true;
	}
	return w->fn(kv->key, kv->klen, v + w->d->off, w->arg);
}

void sl_heap_map_foreach(struct heap_kstate *ks, int id, const struct sl_kkey *k,
			 bool (*fn)(const void *mkey, uint32_t mklen, void *value, void *arg),
			 void *arg, sl_ts_t now)
{
	struct sdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mapref *r;
	struct walk w;

	if (!d)
		return;
	r = sl_kvtab_get(d->tab, k->hash, k->key, k->klen, 0);
	if (!r)
		return;
	cow(ks, d, r); /* fn may change values or remove entries */
	w = (struct walk){ ks, d, r->m, now, fn, arg };
	ks->iterating++;
	sl_kvtab_foreach(r->m, walk_one, &w);
	ks->iterating--;
	/* fn may have emptied (or cleared) this map; r is still ours: nothing removes outer
	 * entries while iterating */
	map_drop_if_empty(ks, d, r);
}

static bool remove_one(const struct sl_kv *kv, void *arg)
{
	struct walk *w = arg;

	sl_kvtab_remove_value(w->m, kv->value);
	w->ks->entries--;
	return true;
}

void sl_heap_map_clear(struct heap_kstate *ks, int id, const struct sl_kkey *k)
{
	struct sdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mapref *r;
	struct walk w;

	if (!d)
		return;
	r = sl_kvtab_get(d->tab, k->hash, k->key, k->klen, 0);
	if (!r)
		return;
	cow(ks, d, r);
	if (ks->iterating) {
		/* a foreach may be walking this table: empty it, keep it */
		w = (struct walk){ .ks = ks, .d = d, .m = r->m };
		sl_kvtab_foreach(r->m, remove_one, &w);
		return;
	}
	ks->entries -= sl_kvtab_count(r->m);
	sl_kvtab_destroy(r->m);
	sl_kvtab_remove_value(d->tab, r);
}

/* ---- snapshots -------------------------------------------------------------------------- */

/*
 * A keyed state section, version 2 (integers little-endian as in memory, snap.h):
 *
 *   u32 max_par, u32 ndesc
 *   ndesc x { bytes name, u32 kind (1 value, 2 map), u32 value_size, u32 ttl (0 or 1) }
 *   blocks to the end of the section: { u32 desc, u64 nrec, then nrec records of desc }
 *     value record  rec_hdr, key, value block
 *     map record    rec_hdr, key, u32 n (>= 1), n x { u32 mklen, map key, value block }
 *
 * Version 1 (still read; rocks_state.c writes it) has exactly ndesc blocks, in descriptor
 * order, of just { u64 nrec, records }. A block's key groups and length let a restore skip
 * the blocks of key groups it does not own without reading them: with the shard count
 * unchanged, each shard reads only its own old instance's records. Version 2's blocks may come in
 * any order and a descriptor may have many: a copy-on-write snapshot writes entries as its walk
 * reaches them and, between them, the ones a write was about to change (below).
 *
 * A value block is the table's own [expires_at if TTL][user value] bytes, copied whole. The
 * key hash is stored (not recomputed) so a restore places entries exactly as the runtime
 * hashed them; kg must equal sl_key_group(hash, max_par), which catches some corruption for
 * free. Map keys are hashed again on restore (state.c alone hashes them).
 *
 * Copy-on-write (sl_heap_snapshot_begin/_step): begin writes the layout and flips every
 * table's snapshot mark (kvtab.h), so every entry is "not yet copied"; then each step walks
 * on in slab order and copies the entries whose mark it takes. Until the walk ends, every
 * call that changes an existing entry or hands out a pointer into it (value get/put/clear,
 * every map call: their unit is the key's whole map) first takes the mark itself and copies
 * the entry as it was. Entries made during the snapshot carry the new mark and are left out.
 * So the section holds exactly the state at begin, and the shard never stops for more than
 * the entries it touches; the walk's steps run between record batches.
 *
 * Restore walks a section twice: a check pass that reads every record without touching the
 * state (any inconsistency is -EINVAL and nothing changed), then the pass that inserts.
 * Checking costs a parse, far less than the inserts it protects.
 */

/* Borrows n bytes of r in place, or returns NULL (r->error set) if fewer remain. */
static inline const uint8_t *take(struct sl_snap_reader *r, size_t n)
{
	const uint8_t *p;

	if (r->error)
		return NULL;
	if (n > r->len - r->pos) {
		r->error = -EINVAL;
		return NULL;
	}
	p = r->p + r->pos;
	r->pos += n;
	return p;
}

static inline uint32_t kind_code(enum sl_state_kind k)
{
	return k == SL_STATE_MAP ? KIND_MAP : KIND_VALUE;
}

/* Appends a record header, the key and `vlen` bytes of val with one bounds check. */
static void put_rec(struct sl_snap_buf *out, const struct sl_kv *kv, const void *val, uint32_t vlen)
{
	struct rec_hdr h = { kv->hash, kv->kg, 0, kv->klen };
	uint8_t *p = sl_snap_reserve(out, sizeof(h) + kv->klen + vlen);

	if (!p)
		return;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), kv->key, kv->klen);
	memcpy(p + sizeof(h) + kv->klen, val, vlen);
	out->len += sizeof(h) + kv->klen + vlen;
}

/* Appends one outer entry of d (a value, or a key's whole map) unless it expired at `now`
 * (a map: all of its entries). Returns true if a record was written. */
static bool put_entry(const struct sdesc *d, const struct sl_kv *kv, sl_ts_t now,
		      struct sl_snap_buf *out)
{
	uint32_t vlen = d->off + d->value_size;
	const struct sl_kvtab *m;
	struct sl_kvtab_iter mit;
	struct sl_kv mkv;
	size_t at = out->len, cnt_at;
	uint32_t cnt = 0;

	if (d->kind == SL_STATE_VALUE) {
		if (expired(d, kv->value, now))
			return false;
		put_rec(out, kv, kv->value, vlen);
		return !out->error;
	}
	m = ((const struct mapref *)kv->value)->m;
	put_rec(out, kv, &cnt, 4); /* the count, patched below */
	cnt_at = out->len - 4;
	sl_kvtab_iter_init(&mit);
	while (sl_kvtab_next(m, &mit, &mkv)) {
		uint8_t *p;

		if (expired(d, mkv.value, now))
			continue;
		p = sl_snap_reserve(out, 4 + mkv.klen + vlen);
		if (!p)
			break;
		memcpy(p, &mkv.klen, 4);
		memcpy(p + 4, mkv.key, mkv.klen);
		memcpy(p + 4 + mkv.klen, mkv.value, vlen);
		out->len += 4 + mkv.klen + vlen;
		cnt++;
	}
	if (out->error)
		return false;
	if (!cnt) { /* every entry expired: the key is left out whole */
		out->len = at;
		return false;
	}
	memcpy(out->data + cnt_at, &cnt, 4);
	return true;
}

static void put_layout(const struct heap_kstate *ks, struct sl_snap_buf *out)
{
	sl_snap_put_u32(out, ks->max_par);
	sl_snap_put_u32(out, (uint32_t)ks->n);
	for (int i = 0; i < ks->n; i++) {
		const struct sdesc *d = &ks->d[i];

		sl_snap_put_bytes(out, d->name, (uint32_t)strlen(d->name));
		sl_snap_put_u32(out, kind_code(d->kind));
		sl_snap_put_u32(out, d->value_size);
		sl_snap_put_u32(out, d->ttl ? 1 : 0);
	}
}

#define BLK_HDR 28u

static void blk_open(struct blk *b, struct sl_snap_buf *out, int desc)
{
	*b = (struct blk){ .desc = desc, .at = out->len, .kg_lo = UINT32_MAX };
	sl_snap_put_u32(out, (uint32_t)desc);
	sl_snap_put_u32(out, 0);
	sl_snap_put_u32(out, 0);
	sl_snap_put_u64(out, 0);
	sl_snap_put_u64(out, 0);
}

static void blk_count(struct blk *b, const struct sl_kv *kv)
{
	b->n++;
	if (kv->kg < b->kg_lo)
		b->kg_lo = kv->kg;
	if (kv->kg + 1u > b->kg_hi)
		b->kg_hi = kv->kg + 1u;
}

/* Fills in the open block's header. */
static void blk_close(struct blk *b, struct sl_snap_buf *out)
{
	uint64_t nbytes = out->len - b->at - BLK_HDR;

	if (b->desc < 0)
		return;
	if (!b->n)
		b->kg_lo = b->kg_hi = 0;
	if (!out->error) {
		memcpy(out->data + b->at + 4, &b->kg_lo, 4);
		memcpy(out->data + b->at + 8, &b->kg_hi, 4);
		memcpy(out->data + b->at + 12, &b->n, 8);
		memcpy(out->data + b->at + 20, &nbytes, 8);
	}
	b->desc = -1;
}

int sl_heap_snapshot(const struct heap_kstate *ks, sl_ts_t now, struct sl_snap_buf *out)
{
	size_t sec = sl_snap_sec_begin(out, KS_MAGIC, KS_VERSION);

	put_layout(ks, out);
	for (int i = 0; i < ks->n && !out->error; i++) {
		const struct sdesc *d = &ks->d[i];
		struct sl_kvtab_iter it;
		struct sl_kv kv;
		struct blk b;

		blk_open(&b, out, i);
		sl_kvtab_iter_init(&it);
		while (!out->error && sl_kvtab_next(d->tab, &it, &kv))
			if (put_entry(d, &kv, now, out))
				blk_count(&b, &kv);
		blk_close(&b, out);
	}
	sl_snap_sec_end(out, sec);
	return out->error;
}

/* The copy-on-write snapshot's records go into blocks: one stays open while records of its
 * descriptor follow each other; a record of another descriptor closes it. */
static void cow_put(struct heap_kstate *ks, int id, const struct sl_kv *kv)
{
	struct cow_snap *cs = &ks->cs;

	if (cs->blk.desc != id) {
		blk_close(&cs->blk, cs->out);
		blk_open(&cs->blk, cs->out, id);
	}
	if (put_entry(&ks->d[id], kv, cs->now, cs->out))
		blk_count(&cs->blk, kv);
}

static void cow_save(struct heap_kstate *ks, struct sdesc *d, void *v)
{
	struct sl_kv kv;

	if (!sl_kvtab_take_mark(d->tab, v))
		return; /* copied already, or made during this snapshot */
	sl_kvtab_entry(d->tab, v, &kv);
	cow_put(ks, (int)(d - ks->d), &kv);
}

/* After a snapshot that failed midway: every entry takes the current mark, as a completed
 * walk leaves them, so the next snapshot's flip makes every entry "not yet copied". */
static void settle_marks(struct heap_kstate *ks)
{
	for (int i = 0; i < ks->n; i++) {
		struct sl_kvtab_iter it;
		struct sl_kv kv;

		sl_kvtab_iter_init(&it);
		while (sl_kvtab_next(ks->d[i].tab, &it, &kv))
			sl_kvtab_take_mark(ks->d[i].tab, kv.value);
	}
}

int sl_heap_snapshot_begin(struct heap_kstate *ks, sl_ts_t now, struct sl_snap_buf *out)
{
	struct cow_snap *cs = &ks->cs;

	if (cs->out) {
		/* the caller did not finish the last one: it completes now, into its buffer */
		int rc = sl_heap_snapshot_step(ks, SIZE_MAX);

		if (rc < 0)
			return rc;
	}
	*cs = (struct cow_snap){ .out = out, .now = now, .blk = { .desc = -1 } };
	cs->sec = sl_snap_sec_begin(out, KS_MAGIC, KS_VERSION);
	put_layout(ks, out);
	sl_kvtab_iter_init(&cs->it);
	for (int i = 0; i < ks->n; i++)
		sl_kvtab_flip_mark(ks->d[i].tab);
	return ks->entries ? 1 : sl_heap_snapshot_step(ks, SIZE_MAX);
}

/* Entries the walk looks at per byte of budget at least: a table of entries copied already
 * still moves the walk on. */
#define WALK_VISITS_PER_KIB 16

int sl_heap_snapshot_step(struct heap_kstate *ks, size_t budget)
{
	struct cow_snap *cs = &ks->cs;
	struct sl_snap_buf *out = cs->out;
	size_t start, visits;
	struct sl_kv kv;
	int rc;

	if (!out)
		return 0;
	start = out->len;
	visits = budget / 1024 * WALK_VISITS_PER_KIB + 64;
	while (cs->cur < ks->n && !out->error) {
		struct sdesc *d = &ks->d[cs->cur];

		if (!sl_kvtab_next(d->tab, &cs->it, &kv)) {
			cs->cur++;
			sl_kvtab_iter_init(&cs->it);
			continue;
		}
		if (sl_kvtab_take_mark(d->tab, kv.value))
			cow_put(ks, cs->cur, &kv);
		if ((out->len - start >= budget || !--visits) && !out->error)
			return 1;
	}
	blk_close(&cs->blk, out);
	sl_snap_sec_end(out, cs->sec);
	rc = out->error;
	cs->out = NULL;
	if (rc)
		settle_marks(ks);
	return rc;
}

bool sl_heap_snapshot_pending(const struct heap_kstate *ks)
{
	return ks->cs.out != NULL;
}

static int refuse(struct heap_kstate *ks, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(struct heap_kstate *ks, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ks->err, sizeof(ks->err), fmt, ap);
	va_end(ap);
	return rc;
}

const char *sl_heap_error(const struct heap_kstate *ks)
{
	return ks->err;
}

static const char *shape(char *buf, size_t cap, uint32_t kind, uint32_t vsize, bool ttl)
{
	snprintf(buf, cap, "%s of %u-byte values%s", kind == KIND_MAP ? "map" : "value", vsize,
		 ttl ? " with TTL" : "");
	return buf;
}

/* Reads the layout and compares it with ks's descriptors, index by index. */
static int check_layout(struct heap_kstate *ks, struct sl_snap_reader *b)
{
	char s1[64], s2[64];
	uint32_t max_par, n;

	if (sl_snap_get_u32(b, &max_par) || sl_snap_get_u32(b, &n) || n > b->len / 16)
		return refuse(ks, -EINVAL, "state snapshot is corrupt: bad layout header");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t nlen, kind, vsize, ttl;
		const struct sdesc *d;
		const void *name;
		int nl;

		if (sl_snap_get_bytes(b, &name, &nlen) || nlen > NAME_LEN_MAX ||
		    sl_snap_get_u32(b, &kind) || sl_snap_get_u32(b, &vsize) ||
		    sl_snap_get_u32(b, &ttl) || (kind != KIND_VALUE && kind != KIND_MAP) || ttl > 1)
			return refuse(ks, -EINVAL,
				      "state snapshot is corrupt: bad state %u in layout", i);
		nl = nlen > 64 ? 64 : (int)nlen;
		if (i >= (uint32_t)ks->n)
			return refuse(
				ks, -EPROTO,
				"state layout differs: state %u '%.*s' (%s) is in the snapshot "
				"but not in the job (%d states)",
				i, nl, (const char *)name, shape(s1, sizeof(s1), kind, vsize, ttl),
				ks->n);
		d = &ks->d[i];
		if (strlen(d->name) != nlen || memcmp(d->name, name, nlen) ||
		    kind != kind_code(d->kind) || vsize != d->value_size || ttl != (d->ttl != 0))
			return refuse(
				ks, -EPROTO,
				"state layout differs at state %u: the snapshot has '%.*s' (%s), "
				"the job '%s' (%s)",
				i, nl, (const char *)name, shape(s1, sizeof(s1), kind, vsize, ttl),
				d->name,
				shape(s2, sizeof(s2), kind_code(d->kind), d->value_size,
				      d->ttl != 0));
	}
	if (n < (uint32_t)ks->n)
		return refuse(
			ks, -EPROTO,
			"state layout differs: state %u '%s' (%s) is in the job but not in the "
			"snapshot (%u states)",
			n, ks->d[n].name,
			shape(s1, sizeof(s1), kind_code(ks->d[n].kind), ks->d[n].value_size,
			      ks->d[n].ttl != 0),
			n);
	if (max_par != ks->max_par)
		return refuse(ks, -EPROTO,
			      "state snapshot has key groups of max parallelism %u, the job %u "
			      "(it cannot change between restores)",
			      max_par, ks->max_par);
	return 0;
}

static int put_value(struct heap_kstate *ks, struct sdesc *d, const struct rec_hdr *h,
		     const uint8_t *key, const uint8_t *val)
{
	bool created;
	uint8_t *v = sl_kvtab_put(d->tab, h->hash, key, h->klen, 0, &created);

	if (!v)
		return -ENOMEM;
	if (created)
		ks->entries++;
	memcpy(v, val, d->off + d->value_size);
	return 0;
}

/* *ref: the key's map once found or made (NULL before its first entry). */
static int put_map(struct heap_kstate *ks, struct sdesc *d, const struct rec_hdr *h,
		   const uint8_t *key, struct mapref **ref, const uint8_t *mkey, uint32_t mklen,
		   const uint8_t *val, uint32_t cnt)
{
	uint32_t vlen = d->off + d->value_size;
	bool created;
	uint8_t *v;

	if (!*ref) {
		*ref = sl_kvtab_put(d->tab, h->hash, key, h->klen, 0, &created);
		if (!*ref)
			return -ENOMEM;
		if (created) {
			(*ref)->m = sl_kvtab_create(vlen, 1);
			if (!(*ref)->m || sl_kvtab_reserve((*ref)->m, cnt)) {
				sl_kvtab_destroy((*ref)->m);
				sl_kvtab_remove_value(d->tab, *ref);
				*ref = NULL;
				return -ENOMEM;
			}
		}
	}
	v = sl_kvtab_put((*ref)->m, sl_hash_bytes(mkey, mklen), mkey, mklen, 0, &created);
	if (!v) {
		map_drop_if_empty(ks, d, *ref);
		return -ENOMEM;
	}
	if (created)
		ks->entries++;
	memcpy(v, val, vlen);
	return 0;
}

/* Reads the record at `a` (checked before) and starts fetching its slot in d's table: the
 * insert PF_AHEAD records later then finds it in cache instead of stalling on it. */
#define PF_AHEAD 16

static void prefetch_rec(const struct sdesc *d, struct sl_snap_reader *a, uint32_t lo, uint32_t hi)
{
	uint32_t vlen = d->off + d->value_size, cnt, mklen;
	const uint8_t *p = take(a, sizeof(struct rec_hdr));
	struct rec_hdr h;

	if (!p)
		return;
	memcpy(&h, p, sizeof(h));
	if (h.kg >= lo && h.kg < hi)
		sl_kvtab_prefetch(d->tab, h.hash, 0);
	take(a, h.klen);
	if (d->kind == SL_STATE_VALUE) {
		take(a, vlen);
		return;
	}
	if (sl_snap_get_u32(a, &cnt))
		return;
	for (uint32_t j = 0; j < cnt && !sl_snap_get_u32(a, &mklen); j++)
		take(a, (size_t)mklen + vlen);
}

/* One block of a descriptor's records: checks them all and counts those of key groups
 * [lo, hi) into *mine_n, or (apply) inserts those. Returns 0, -EINVAL (corrupt) or
 * -ENOMEM. */
static int restore_desc(struct heap_kstate *ks, struct sdesc *d, struct sl_snap_reader *b,
			uint64_t n, uint32_t lo, uint32_t hi, bool apply, uint64_t *mine_n)
{
	uint32_t vlen = d->off + d->value_size;
	struct sl_snap_reader ahead;
	uint64_t ai = 0;
	int rc;

	ahead = *b;
	for (; apply && ai < n && ai < PF_AHEAD; ai++)
		prefetch_rec(d, &ahead, lo, hi);
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *p = take(b, sizeof(struct rec_hdr)), *key, *val;
		struct mapref *ref = NULL;
		struct rec_hdr h;
		uint32_t cnt;
		bool mine;

		if (!p)
			return -EINVAL;
		if (apply && ai < n) {
			prefetch_rec(d, &ahead, lo, hi);
			ai++;
		}
		memcpy(&h, p, sizeof(h));
		if (h.rsv || h.klen > SL_KVTAB_KEY_MAX || h.kg >= ks->max_par ||
		    h.kg != sl_key_group(h.hash, ks->max_par))
			return -EINVAL;
		key = take(b, h.klen);
		if (!key)
			return -EINVAL;
		mine = h.kg >= lo && h.kg < hi;
		if (!apply) {
			*mine_n += mine;
			mine = false;
		}
		if (d->kind == SL_STATE_VALUE) {
			val = take(b, vlen);
			if (!val)
				return -EINVAL;
			if (mine && (rc = put_value(ks, d, &h, key, val)))
				return rc;
			continue;
		}
		if (sl_snap_get_u32(b, &cnt) || cnt == 0)
			return -EINVAL;
		for (uint32_t j = 0; j < cnt; j++) {
			const uint8_t *mkey;
			uint32_t mklen;

			if (sl_snap_get_u32(b, &mklen) || mklen > SL_KEY_MAX)
				return -EINVAL;
			mkey = take(b, mklen);
			val = take(b, vlen);
			if (!mkey || !val)
				return -EINVAL;
			if (mine && (rc = put_map(ks, d, &h, key, &ref, mkey, mklen, val, cnt)))
				return rc;
		}
	}
	return 0;
}

/* The record blocks of a section body from b's position to its end: version 1 has one per
 * descriptor in order, version 2 names each block's descriptor. *at: the descriptor being
 * read, for the error message. */
static int restore_blocks(struct heap_kstate *ks, struct sl_snap_reader *b, uint32_t ver,
			  uint32_t lo, uint32_t hi, bool apply, uint64_t *mine, int *at)
{
	int rc;

	for (int i = 0; ver == 1 && i < ks->n; i++) {
		uint64_t n;

		*at = i;
		if (sl_snap_get_u64(b, &n))
			return -EINVAL;
		if ((rc = restore_desc(ks, &ks->d[i], b, n, lo, hi, apply, &mine[i])))
			return rc;
	}
	while (ver >= 2 && b->pos < b->len) {
		uint32_t id, klo, khi;
		uint64_t n, nbytes;
		size_t end;

		*at = ks->n;
		if (sl_snap_get_u32(b, &id) || id >= (uint32_t)ks->n || sl_snap_get_u32(b, &klo) ||
		    sl_snap_get_u32(b, &khi) || sl_snap_get_u64(b, &n) ||
		    sl_snap_get_u64(b, &nbytes) || nbytes > b->len - b->pos)
			return -EINVAL;
		end = b->pos + (size_t)nbytes;
		if (!n || khi <= lo || klo >= hi) { /* none of its key groups are ours */
			b->pos = end;
			continue;
		}
		*at = (int)id;
		if ((rc = restore_desc(ks, &ks->d[id], b, n, lo, hi, apply, &mine[id])))
			return rc;
		if (b->pos != end)
			return -EINVAL;
	}
	*at = ks->n;
	return b->pos == b->len ? 0 : -EINVAL;
}

int sl_heap_restore(struct heap_kstate *ks, struct sl_snap_reader *r, uint32_t kg_lo,
		    uint32_t kg_hi)
{
	struct sl_snap_reader b;
	uint64_t *mine;
	uint32_t ver;
	size_t start;
	int rc, i = 0;

	ks->err[0] = '\0';
	rc = sl_snap_sec_open(r, KS_MAGIC, KS_VERSION, &b, &ver);
	if (rc == -EPROTO)
		return refuse(ks, rc,
			      "state snapshot format version %u is newer than this build's %u", ver,
			      KS_VERSION);
	if (rc)
		return refuse(ks, -EINVAL,
			      "state snapshot is corrupt: no keyed state section at "
			      "byte %zu",
			      r->pos);
	rc = check_layout(ks, &b);
	if (rc)
		goto out_corrupt_or_refused;
	mine = calloc((size_t)ks->n + 1, sizeof(*mine));
	if (!mine)
		return refuse(ks, -ENOMEM, "out of memory restoring state");
	start = b.pos;
	rc = restore_blocks(ks, &b, ver, kg_lo, kg_hi, false, mine, &i);
	/* size each table once for all of its entries in every block */
	for (int k = 0; !rc && k < ks->n; k++)
		if (sl_kvtab_reserve(ks->d[k].tab, (size_t)mine[k])) {
			i = k;
			rc = -ENOMEM;
		}
	if (!rc) {
		b.pos = start;
		rc = restore_blocks(ks, &b, ver, kg_lo, kg_hi, true, mine, &i);
	}
	free(mine);
	if (!rc)
		return 0;
	if (rc == -ENOMEM)
		return refuse(ks, rc, "out of memory restoring state %d '%s'", i, ks->d[i].name);
	if (i >= ks->n)
		refuse(ks, rc, "state snapshot is corrupt: bad record block at byte %zu of %zu",
		       b.pos, b.len);
	else
		refuse(ks, rc, "state snapshot is corrupt in state %d '%s' (byte %zu of %zu)", i,
		       ks->d[i].name, b.pos, b.len);
out_corrupt_or_refused:
	if (rc == -EINVAL)
		r->error = -EINVAL;
	return rc;
}

void sl_heap_foreach(const struct heap_kstate *ks, bool (*fn)(const struct sl_kentry *e, void *arg),
		     void *arg)
{
	for (int i = 0; i < ks->n; i++) {
		const struct sdesc *d = &ks->d[i];
		struct sl_kvtab_iter it, mit;
		struct sl_kv kv, mkv;

		sl_kvtab_iter_init(&it);
		while (sl_kvtab_next(d->tab, &it, &kv)) {
			struct sl_kentry e = { .id = i,
					       .kind = d->kind,
					       .hash = kv.hash,
					       .kg = kv.kg,
					       .key = kv.key,
					       .klen = kv.klen };

			if (d->kind == SL_STATE_VALUE) {
				e.expires = d->ttl ? *expiry(kv.value) : SL_TS_MAX;
				e.value = (const uint8_t *)kv.value + d->off;
				if (!fn(&e, arg))
					return;
				continue;
			}
			sl_kvtab_iter_init(&mit);
			while (sl_kvtab_next(((const struct mapref *)kv.value)->m, &mit, &mkv)) {
				e.mkey = mkv.key;
				e.mklen = mkv.klen;
				e.expires = d->ttl ? *expiry(mkv.value) : SL_TS_MAX;
				e.value = (const uint8_t *)mkv.value + d->off;
				if (!fn(&e, arg))
					return;
			}
		}
	}
}

int sl_heap_refuse_native(struct heap_kstate *ks)
{
	return refuse(ks, -EPROTO,
		      "the checkpoint holds this state in RocksDB's native format: restore it "
		      "with the rocksdb state backend, or change backends through a savepoint");
}
