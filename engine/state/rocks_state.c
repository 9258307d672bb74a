/*
 * rocks_state.c - keyed value and map state kept in RocksDB, behind a write-back entry cache
 * (the RocksDB backend of state.h).
 *
 * RocksDB layout (one DB per keyed operator instance, backend.h says why; op_uid names the
 * operator within it):
 *
 *   key   [kg u16 BE][op_uid u32 BE][desc id | RK_TTL_BIT][hash u64 BE][klen u16 BE][key]
 *         [map key]                                                  (map entries only)
 *   value [expires_at sl_ts_t if TTL][user value]                   (the "block")
 *
 * The key group leads, so a shard's key groups are one contiguous key range (rescaling
 * keeps or drops ranges) and a kstate's entries of one key group and descriptor are one
 * prefix. The key length makes one key's map entries a prefix of their own (a key that is a
 * prefix of another key cannot mix in).
 *
 * The cache: reading RocksDB for every record would cost microseconds per record, so each
 * descriptor has a kvtab (kvtab.h) of recently used entries:
 *  - value descriptor: key -> [struct chdr][block];
 *  - map descriptor: key -> struct mref, which holds the key's whole map (loaded by one
 *    prefix scan on first touch) in its own kvtab, map key -> [struct chdr][block]; so map
 *    iteration, clear and absence are answered from memory.
 * A miss costs one RocksDB Get (or prefix scan) and caches the answer, absence included
 * (F_ABSENT), so get-then-put of a new key reads RocksDB once.
 *
 * Entry flags and what write-back does with them (write-back = on eviction and at
 * sl_rocks_db_flush, into the db's write batch):
 *
 *                 F_ABSENT   F_INDB   F_DIRTY   write-back
 *   live, new        0          0        1       Put, then INDB, clean
 *   live, stored     0          1        0/1     Put if dirty or its bytes changed
 *   tombstone        1          1        1       Delete, then a clean absent entry
 *   absent           1          0        0       nothing (a negative cache entry)
 *
 * "Its bytes changed": operators may write through a pointer returned by get (operator.h
 * keeps it valid until the next state call), so a clean entry carries the hash of the
 * bytes RocksDB holds (chdr.sum) and write-back compares. That costs a hash of each clean
 * entry at eviction and flush, not a Put per read.
 *
 * Eviction is CLOCK over the kvtab's slab order (F_REF set on every touch, cleared by the
 * hand; entries never move, so the hand is just a position). It runs at the start of a
 * call, never during a map foreach, and skips each descriptor's last returned entry (pin),
 * so a value pointer handed out stays valid until the next call as operator.h promises, and
 * map keys and values seen in a foreach stay put while the operator works on them.
 * Budget: the db's share of the env's entry cache budget, divided by its live kstates;
 * charged per entry as kvtab entry + slot + key + header + block (ENTRY_COST).
 *
 * TTL: as the heap backend (OnCreateAndWrite, processing time, expired never returned; an
 * expired entry seen by a call is removed then). Entries nobody touches are dropped by the
 * env's compaction filter, which compares their expiry with the wall clock.
 *
 * entries: exact for what this kstate wrote, read and restored; entries a compaction filter
 * dropped are counted until a restart. State loaded by sl_rocks_db_load is counted by a
 * scan of the db on the kstate's first use (count_pending), unless a native restore brings
 * the count its checkpoint recorded for exactly this key-group range (same shard count):
 * a scan of a gigabyte of state costs seconds of recovery.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "key.h"
#include "kvtab.h"
#include "state_int.h"

#define F_REF	 1u
#define F_DIRTY	 2u
#define F_ABSENT 4u
#define F_INDB	 8u

#define RK_KEY_MAX	(RK_HDR + SL_KEY_MAX + SL_KEY_MAX)
#define ENTRY_COST	48u  /* kvtab entry header, its slot at 80% load, chdr */
#define MAP_COST	256u /* an inner kvtab of a map */
#define WB_COMMIT_BYTES ((size_t)4 << 20)

struct chdr {
	uint32_t flags;
	uint32_t rsv;
	uint64_t sum; /* hash of the block as RocksDB holds it (F_INDB and not F_DIRTY) */
};

struct mref {
	uint32_t flags;	    /* F_REF */
	uint32_t live;	    /* entries not absent */
	struct sl_kvtab *m; /* map key -> chdr + block; NULL while the map is empty */
	size_t bytes;	    /* cache bytes charged for m */
};

struct rdesc {
	const char *name;
	enum sl_state_kind kind;
	sl_ts_t ttl;
	uint32_t off; /* 8 with TTL, else 0 */
	uint32_t value_size;
	uint32_t blen;	      /* off + value_size */
	uint8_t code;	      /* id | RK_TTL_BIT if TTL */
	struct sl_kvtab *tab; /* value: key -> chdr + block; map: key -> struct mref */
	struct sl_kvtab_iter hand;
	void *pin; /* last entry handed out: not evicted */
};

struct rocks_kstate {
	struct sl_kstate hdr; /* backend SL_STATE_ROCKSDB: first, state.c casts */
	struct sl_rocks_db *db;
	struct rocks_kstate *next; /* db->kstates */
	uint32_t op_uid;
	uint32_t max_par;
	int n;
	int iterating;	    /* map foreach calls in progress: no eviction */
	int evict_at;	    /* descriptor the eviction hand is on */
	bool count_pending; /* loaded state not counted yet (see entries above) */
	size_t entries;
	size_t cbytes; /* cache bytes charged */
	size_t budget;
	char err[224];
	uint8_t kbuf[RK_KEY_MAX]; /* key encoding scratch */
	struct rdesc d[];
};

static inline void *blk(void *h)
{
	return (uint8_t *)h + sizeof(struct chdr);
}

static inline struct chdr *hdr_of(void *block)
{
	return (struct chdr *)((uint8_t *)block - sizeof(struct chdr));
}

static inline bool expired(const struct rdesc *d, const void *block, sl_ts_t now)
{
	sl_ts_t e;

	if (!d->ttl)
		return false;
	memcpy(&e, block, 8);
	return now >= e;
}

static inline void touch(const struct rdesc *d, void *block, sl_ts_t now)
{
	sl_ts_t e;

	if (!d->ttl)
		return;
	e = now > SL_TS_MAX - d->ttl ? SL_TS_MAX : now + d->ttl;
	memcpy(block, &e, 8);
}

static inline void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static inline uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* The RocksDB key of (d, key[, mkey]) into buf; returns its length. */
static uint32_t enc_key(uint8_t *buf, const struct rocks_kstate *ks, const struct rdesc *d,
			uint64_t hash, const void *key, uint32_t klen, const void *mkey,
			uint32_t mklen)
{
	put_be(buf, sl_key_group(hash, ks->max_par), 2);
	put_be(buf + 2, ks->op_uid, 4);
	buf[6] = d->code;
	put_be(buf + 7, hash, 8);
	put_be(buf + 15, klen, 2);
	memcpy(buf + RK_HDR, key, klen);
	if (mklen)
		memcpy(buf + RK_HDR + klen, mkey, mklen);
	return RK_HDR + klen + mklen;
}

static void enc_prefix(uint8_t *buf, const struct rocks_kstate *ks, const struct rdesc *d,
		       uint32_t kg)
{
	put_be(buf, kg, 2);
	put_be(buf + 2, ks->op_uid, 4);
	buf[6] = d->code;
}

static int refuse(struct rocks_kstate *ks, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(struct rocks_kstate *ks, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ks->err, sizeof(ks->err), fmt, ap);
	va_end(ap);
	return rc;
}

/* ---- write-back --------------------------------------------------------------------------- */

/* Queues what entry h (key bytes in kb[0..kl)) needs written; updates its flags. */
static void wb_entry(struct rocks_kstate *ks, const struct rdesc *d, struct chdr *h,
		     const uint8_t *kb, uint32_t kl)
{
	struct sl_rocks_db *db = ks->db;
	uint64_t sum;

	if (h->flags & F_ABSENT) {
		if ((h->flags & (F_DIRTY | F_INDB)) == (F_DIRTY | F_INDB))
			rocksdb_writebatch_delete(db->wb, (const char *)kb, kl);
		h->flags &= ~(F_DIRTY | F_INDB);
		return;
	}
	sum = sl_hash_bytes(blk(h), d->blen);
	if (!(h->flags & F_DIRTY) && sum == h->sum)
		return;
	rocksdb_writebatch_put(db->wb, (const char *)kb, kl, blk(h), d->blen);
	h->sum = sum;
	h->flags = (h->flags & ~F_DIRTY) | F_INDB;
}

static void wb_value(struct rocks_kstate *ks, const struct rdesc *d, const struct sl_kv *kv)
{
	uint32_t kl = enc_key(ks->kbuf, ks, d, kv->hash, kv->key, kv->klen, NULL, 0);

	wb_entry(ks, d, kv->value, ks->kbuf, kl);
}

/* Writes a key's map entries back; tombstones, once deleted, leave the table. */
static void wb_map(struct rocks_kstate *ks, const struct rdesc *d, const struct sl_kv *kv)
{
	struct mref *r = kv->value;
	struct sl_kvtab_iter it;
	struct sl_kv mkv;

	if (!r->m)
		return;
	sl_kvtab_iter_init(&it);
	while (sl_kvtab_next(r->m, &it, &mkv)) {
		struct chdr *h = mkv.value;
		uint32_t kl =
			enc_key(ks->kbuf, ks, d, kv->hash, kv->key, kv->klen, mkv.key, mkv.klen);

		wb_entry(ks, d, h, ks->kbuf, kl);
		if ((h->flags & F_ABSENT) && !ks->iterating) {
			r->bytes -= ENTRY_COST + mkv.klen + d->blen;
			ks->cbytes -= ENTRY_COST + mkv.klen + d->blen;
			sl_kvtab_remove_value(r->m, h);
		}
	}
}

static int maybe_commit(struct rocks_kstate *ks)
{
	if (sl_rocks_wb_bytes(ks->db->wb) < WB_COMMIT_BYTES)
		return 0;
	return sl_rocks_commit(ks->db);
}

int sl_rocks_kstate_writeback(struct rocks_kstate *ks)
{
	for (int i = 0; i < ks->n; i++) {
		struct rdesc *d = &ks->d[i];
		struct sl_kvtab_iter it;
		struct sl_kv kv;
		int rc;

		sl_kvtab_iter_init(&it);
		while (sl_kvtab_next(d->tab, &it, &kv)) {
			if (d->kind == SL_STATE_MAP)
				wb_map(ks, d, &kv);
			else
				wb_value(ks, d, &kv);
			rc = maybe_commit(ks);
			if (rc)
				return rc;
		}
	}
	return sl_rocks_commit(ks->db);
}

/* ---- eviction ----------------------------------------------------------------------------- */

static size_t map_cost(const struct mref *r, uint32_t klen)
{
	return ENTRY_COST + klen + r->bytes;
}

/* Evicts one entry of d if the hand allows: returns the bytes freed (0: kept or at end,
 * *end set at the end of the table). */
static size_t evict_one(struct rocks_kstate *ks, struct rdesc *d, bool *end)
{
	struct sl_kv kv;
	size_t freed;
	uint32_t *flags;

	if (!sl_kvtab_next(d->tab, &d->hand, &kv)) {
		sl_kvtab_iter_init(&d->hand);
		*end = true;
		return 0;
	}
	flags = kv.value; /* chdr.flags and mref.flags both come first */
	if (kv.value == d->pin)
		return 0;
	if (*flags & F_REF) {
		*flags &= ~F_REF;
		return 0;
	}
	if (d->kind == SL_STATE_MAP) {
		struct mref *r = kv.value;

		wb_map(ks, d, &kv);
		freed = map_cost(r, kv.klen);
		sl_kvtab_destroy(r->m);
	} else {
		wb_value(ks, d, &kv);
		freed = ENTRY_COST + kv.klen + d->blen;
	}
	sl_kvtab_remove_value(d->tab, kv.value);
	ks->cbytes -= freed;
	return freed;
}

/* Brings the cache down to 7/8 of its budget: evicting in batches makes one write batch of
 * many entries instead of one Put per miss. Bounded: each descriptor's table is walked at
 * most twice (one pass clears reference bits, the next evicts). */
static void evict(struct rocks_kstate *ks)
{
	size_t target = ks->budget - ks->budget / 8;
	int ends = 0;

	while (ks->cbytes > target && ends < 2 * ks->n + 2) {
		struct rdesc *d = &ks->d[ks->evict_at];
		bool end = false;

		for (int i = 0; i < 64 && !end && ks->cbytes > target; i++)
			evict_one(ks, d, &end);
		if (end) {
			ends++;
			ks->evict_at = (ks->evict_at + 1) % ks->n;
		}
	}
	sl_rocks_commit(ks->db);
}

static inline void maybe_evict(struct rocks_kstate *ks)
{
	if (ks->cbytes > ks->budget && !ks->iterating)
		evict(ks);
}

/* ---- lookups ------------------------------------------------------------------------------ */

static void fill_loaded(const struct rdesc *d, struct chdr *h, const void *val)
{
	memcpy(blk(h), val, d->blen);
	h->flags = F_INDB | F_REF;
	h->sum = sl_hash_bytes(blk(h), d->blen);
}

/* The cached entry of a value key, read from RocksDB on a miss (absence cached too). NULL
 * on ENOMEM or a RocksDB error (sticky in the db). */
static struct chdr *value_entry(struct rocks_kstate *ks, struct rdesc *d, const struct sl_kkey *k)
{
	struct sl_rocks_db *db = ks->db;
	rocksdb_pinnableslice_t *ps;
	struct chdr *h;
	char *msg = NULL;
	uint32_t kl;
	bool created;

	maybe_evict(ks);
	h = sl_kvtab_get(d->tab, k->hash, k->key, k->klen, 0);
	if (h) {
		h->flags |= F_REF;
		return h;
	}
	if (db->error)
		return NULL;
	kl = enc_key(ks->kbuf, ks, d, k->hash, k->key, k->klen, NULL, 0);
	ps = rocksdb_get_pinned(db->db, db->ro, (const char *)ks->kbuf, kl, &msg);
	if (msg) {
		sl_rocks_fail(db, "get", msg);
		return NULL;
	}
	h = sl_kvtab_put(d->tab, k->hash, k->key, k->klen, 0, &created);
	if (!h) {
		rocksdb_pinnableslice_destroy(ps);
		return NULL;
	}
	if (ps) {
		size_t vl;
		const char *v = rocksdb_pinnableslice_value(ps, &vl);

		if (vl == d->blen) {
			fill_loaded(d, h, v);
		} else {
			/* a value of another size cannot be ours: the db is not what we wrote */
			snprintf(db->msg, sizeof(db->msg),
				 "state '%s': stored value of %zu bytes, "
				 "expected %u",
				 d->name, vl, d->blen);
			db->error = -EIO;
			rocksdb_pinnableslice_destroy(ps);
			sl_kvtab_remove_value(d->tab, h);
			return NULL;
		}
		rocksdb_pinnableslice_destroy(ps);
	} else {
		h->flags = F_ABSENT | F_REF;
	}
	ks->cbytes += ENTRY_COST + k->klen + d->blen;
	return h;
}

/* Loads all map entries under prefix kb[0..kl) into r. 0 or -errno. */
static int map_load(struct rocks_kstate *ks, const struct rdesc *d, struct mref *r, uint32_t kl)
{
	struct sl_rocks_db *db = ks->db;
	rocksdb_iterator_t *it = rocksdb_create_iterator(db->db, db->ro);
	char *msg = NULL;
	int rc = 0;

	for (rocksdb_iter_seek(it, (const char *)ks->kbuf, kl); rocksdb_iter_valid(it);
	     rocksdb_iter_next(it)) {
		size_t ksz, vl;
		const uint8_t *key = (const uint8_t *)rocksdb_iter_key(it, &ksz);
		const char *v;
		struct chdr *h;
		uint32_t mkl;
		bool created;

		if (ksz < kl || memcmp(key, ks->kbuf, kl))
			break;
		v = rocksdb_iter_value(it, &vl);
		mkl = (uint32_t)(ksz - kl);
		if (vl != d->blen || mkl > SL_KEY_MAX) {
			snprintf(db->msg, sizeof(db->msg),
				 "state '%s': stored map entry of %zu "
				 "bytes, expected %u",
				 d->name, vl, d->blen);
			rc = db->error = -EIO;
			break;
		}
		if (!r->m && !(r->m = sl_kvtab_create(sizeof(struct chdr) + d->blen, 1))) {
			rc = -ENOMEM;
			break;
		}
		h = sl_kvtab_put(r->m, sl_hash_bytes(key + kl, mkl), key + kl, mkl, 0, &created);
		if (!h) {
			rc = -ENOMEM;
			break;
		}
		fill_loaded(d, h, v);
		r->live++;
		r->bytes += ENTRY_COST + mkl + d->blen;
	}
	if (!rc) {
		rocksdb_iter_get_error(it, &msg);
		if (msg)
			rc = sl_rocks_fail(db, "map scan", msg);
	}
	rocksdb_iter_destroy(it);
	return rc;
}

/* The cached map of a key, loaded whole on a miss. NULL on ENOMEM or a RocksDB error. */
static struct mref *map_entry(struct rocks_kstate *ks, struct rdesc *d, const struct sl_kkey *k)
{
	struct mref *r;
	uint32_t kl;
	bool created;

	maybe_evict(ks);
	r = sl_kvtab_get(d->tab, k->hash, k->key, k->klen, 0);
	if (r) {
		r->flags |= F_REF;
		d->pin = r;
		return r;
	}
	if (ks->db->error)
		return NULL;
	r = sl_kvtab_put(d->tab, k->hash, k->key, k->klen, 0, &created);
	if (!r)
		return NULL;
	r->flags = F_REF;
	r->bytes = MAP_COST;
	kl = enc_key(ks->kbuf, ks, d, k->hash, k->key, k->klen, NULL, 0);
	if (map_load(ks, d, r, kl)) {
		sl_kvtab_destroy(r->m);
		sl_kvtab_remove_value(d->tab, r);
		return NULL;
	}
	ks->cbytes += map_cost(r, k->klen);
	d->pin = r;
	return r;
}

/* ---- create / destroy --------------------------------------------------------------------- */

void sl_rocks_kstate_rebudget(struct sl_rocks_db *db)
{
	size_t each = db->env->kcache_db / (size_t)(db->nks ? db->nks : 1);

	for (struct rocks_kstate *ks = db->kstates; ks; ks = ks->next)
		ks->budget = each;
}

void sl_rocks_kstate_destroy(struct rocks_kstate *ks)
{
	struct rocks_kstate **pp;

	if (!ks)
		return;
	/* cached writes are kept: the db outlives its kstates until closed */
	if (!ks->db->error)
		sl_rocks_kstate_writeback(ks);
	for (pp = &ks->db->kstates; *pp; pp = &(*pp)->next) {
		if (*pp == ks) {
			*pp = ks->next;
			ks->db->nks--;
			break;
		}
	}
	sl_rocks_kstate_rebudget(ks->db);
	for (int i = 0; i < ks->n; i++) {
		struct rdesc *d = &ks->d[i];
		struct sl_kvtab_iter it;
		struct sl_kv kv;

		if (!d->tab)
			continue;
		if (d->kind == SL_STATE_MAP) {
			sl_kvtab_iter_init(&it);
			while (sl_kvtab_next(d->tab, &it, &kv))
				sl_kvtab_destroy(((struct mref *)kv.value)->m);
		}
		sl_kvtab_destroy(d->tab);
	}
	free(ks);
}

/* Counts the entries of ks in db (after a load). */
static size_t count_stored(struct rocks_kstate *ks)
{
	struct sl_rocks_db *db = ks->db;
	rocksdb_iterator_t *it = rocksdb_create_iterator(db->db, db->ro_scan);
	uint8_t pre[RK_PREFIX];
	size_t n = 0;

	for (int i = 0; i < ks->n; i++) {
		for (uint32_t kg = 0; kg < ks->max_par; kg++) {
			enc_prefix(pre, ks, &ks->d[i], kg);
			for (rocksdb_iter_seek(it, (const char *)pre, RK_PREFIX);
			     rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
				size_t kl;
				const char *key = rocksdb_iter_key(it, &kl);

				if (kl < RK_PREFIX || memcmp(key, pre, RK_PREFIX))
					break;
				n++;
			}
		}
	}
	rocksdb_iter_destroy(it);
	return n;
}

struct rocks_kstate *sl_rocks_kstate_create(struct sl_rocks_db *db, uint32_t op_uid,
					    const struct sl_state_desc *descs, int n,
					    uint32_t max_par, int *err)
{
	struct rocks_kstate *ks;

	*err = -EINVAL;
	if (n < 0 || n > 127 || (n > 0 && !descs) || max_par < 1 || max_par > 65536)
		return NULL;
	for (int i = 0; i < n; i++) {
		if ((descs[i].kind != SL_STATE_VALUE && descs[i].kind != SL_STATE_MAP) ||
		    descs[i].ttl_ms < 0 || descs[i].value_size > (1u << 20))
			return NULL;
	}
	for (ks = db->kstates; ks; ks = ks->next)
		if (ks->op_uid == op_uid)
			return NULL;
	*err = -ENOMEM;
	ks = calloc(1, sizeof(*ks) + (size_t)n * sizeof(ks->d[0]));
	if (!ks)
		return NULL;
	ks->hdr.backend = SL_STATE_ROCKSDB;
	ks->db = db;
	ks->op_uid = op_uid;
	ks->max_par = max_par;
	ks->n = n;
	for (int i = 0; i < n; i++) {
		struct rdesc *d = &ks->d[i];

		d->name = descs[i].name ? descs[i].name : "";
		d->kind = descs[i].kind;
		d->ttl = descs[i].ttl_ms;
		d->off = d->ttl ? 8 : 0;
		d->value_size = descs[i].value_size;
		d->blen = d->off + d->value_size;
		d->code = (uint8_t)(i | (d->ttl ? RK_TTL_BIT : 0));
		d->tab = sl_kvtab_create(d->kind == SL_STATE_MAP ? sizeof(struct mref)
								 : sizeof(struct chdr) + d->blen,
					 max_par);
		if (!d->tab) {
			for (int j = 0; j < i; j++)
				sl_kvtab_destroy(ks->d[j].tab);
			free(ks);
			return NULL;
		}
		sl_kvtab_iter_init(&d->hand);
	}
	ks->count_pending = db->loaded;
	ks->next = db->kstates;
	db->kstates = ks;
	db->nks++;
	db->written = true;
	sl_rocks_kstate_rebudget(db);
	*err = 0;
	return ks;
}

static void settle(struct rocks_kstate *ks);

size_t sl_rocks_kstate_entries(const struct rocks_kstate *ks)
{
	/* const in the interface: counting changes no state */
	if (__builtin_expect(ks->count_pending, 0))
		settle((struct rocks_kstate *)ks);
	return ks->entries;
}

int sl_rocks_kstate_writeback_all(struct sl_rocks_db *db)
{
	for (struct rocks_kstate *ks = db->kstates; ks && !db->error; ks = ks->next)
		sl_rocks_kstate_writeback(ks);
	return db->error;
}

size_t sl_rocks_kstate_cache_bytes_all(const struct sl_rocks_db *db)
{
	size_t b = 0;

	for (const struct rocks_kstate *ks = db->kstates; ks; ks = ks->next)
		b += ks->cbytes;
	return b;
}

/* The db's live bytes shared out by entries would be guesswork: this kstate's own figure
 * is its cache; sl_rocks_db_bytes() gives the db's whole. */
size_t sl_rocks_kstate_bytes(const struct rocks_kstate *ks)
{
	return sizeof(*ks) + ks->cbytes;
}

bool sl_rocks_kstate_has_ttl(const struct rocks_kstate *ks)
{
	for (int i = 0; i < ks->n; i++)
		if (ks->d[i].ttl)
			return true;
	return false;
}

bool sl_rocks_kstate_desc_ttl(const struct rocks_kstate *ks, int id)
{
	return id >= 0 && id < ks->n && ks->d[id].ttl;
}

/* Counts loaded state before anything changes it. */
static void settle(struct rocks_kstate *ks)
{
	ks->count_pending = false;
	ks->entries += count_stored(ks);
}

static inline struct rdesc *desc(struct rocks_kstate *ks, int id, enum sl_state_kind kind)
{
	if (__builtin_expect(ks->count_pending, 0))
		settle(ks);
	if (id < 0 || id >= ks->n || ks->d[id].kind != kind)
		return NULL;
	return &ks->d[id];
}

/* ---- value state -------------------------------------------------------------------------- */

/* Makes a live entry absent: a tombstone if RocksDB may hold it. */
static void kill(struct rocks_kstate *ks, struct chdr *h)
{
	h->flags = (h->flags & (F_INDB | F_REF)) | F_ABSENT | ((h->flags & F_INDB) ? F_DIRTY : 0);
	ks->entries--;
}

void *sl_rocks_kstate_value_get(struct rocks_kstate *ks, int id, const struct sl_kkey *k,
				sl_ts_t now)
{
	struct rdesc *d = desc(ks, id, SL_STATE_VALUE);
	struct chdr *h;

	if (!d)
		return NULL;
	h = value_entry(ks, d, k);
	if (!h || (h->flags & F_ABSENT))
		return NULL;
	if (expired(d, blk(h), now)) {
		kill(ks, h);
		return NULL;
	}
	d->pin = h;
	return (uint8_t *)blk(h) + d->off;
}

void *sl_rocks_kstate_value_put(struct rocks_kstate *ks, int id, const struct sl_kkey *k,
				sl_ts_t now)
{
	struct rdesc *d = desc(ks, id, SL_STATE_VALUE);
	struct chdr *h;

	if (!d)
		return NULL;
	h = value_entry(ks, d, k);
	if (!h)
		return NULL;
	if (h->flags & F_ABSENT) {
		memset(blk(h), 0, d->blen);
		h->flags &= ~F_ABSENT;
		ks->entries++;
	} else if (expired(d, blk(h), now)) {
		memset((uint8_t *)blk(h) + d->off, 0, d->value_size);
	}
	h->flags |= F_DIRTY;
	touch(d, blk(h), now);
	d->pin = h;
	return (uint8_t *)blk(h) + d->off;
}

void sl_rocks_kstate_value_clear(struct rocks_kstate *ks, int id, const struct sl_kkey *k)
{
	struct rdesc *d = desc(ks, id, SL_STATE_VALUE);
	struct chdr *h;

	if (!d)
		return;
	h = value_entry(ks, d, k);
	if (h && !(h->flags & F_ABSENT))
		kill(ks, h);
}

/* ---- map state ---------------------------------------------------------------------------- */

/* Removes a live map entry: kept as a tombstone if RocksDB may hold it, else dropped (not
 * while a foreach may be walking the table: then it stays as a clean absent entry). */
static void map_kill(struct rocks_kstate *ks, const struct rdesc *d, struct mref *r, struct chdr *h,
		     uint32_t mklen)
{
	kill(ks, h);
	r->live--;
	if ((h->flags & F_INDB) || ks->iterating)
		return;
	r->bytes -= ENTRY_COST + mklen + d->blen;
	ks->cbytes -= ENTRY_COST + mklen + d->blen;
	sl_kvtab_remove_value(r->m, h);
}

void *sl_rocks_kstate_map_get(struct rocks_kstate *ks, int id, const struct sl_kkey *k,
			      const void *mkey, uint32_t mklen, sl_ts_t now)
{
	struct rdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mref *r;
	struct chdr *h;

	if (!d || !(r = map_entry(ks, d, k)) || !r->m)
		return NULL;
	h = sl_kvtab_get(r->m, sl_hash_bytes(mkey, mklen), mkey, mklen, 0);
	if (!h || (h->flags & F_ABSENT))
		return NULL;
	if (expired(d, blk(h), now)) {
		map_kill(ks, d, r, h, mklen);
		return NULL;
	}
	return (uint8_t *)blk(h) + d->off;
}

void *sl_rocks_kstate_map_put(struct rocks_kstate *ks, int id, const struct sl_kkey *k,
			      const void *mkey, uint32_t mklen, sl_ts_t now)
{
	struct rdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mref *r;
	struct chdr *h;
	bool created;

	if (!d || mklen > SL_KEY_MAX || !(r = map_entry(ks, d, k)))
		return NULL;
	if (!r->m && !(r->m = sl_kvtab_create(sizeof(struct chdr) + d->blen, 1)))
		return NULL;
	h = sl_kvtab_put(r->m, sl_hash_bytes(mkey, mklen), mkey, mklen, 0, &created);
	if (!h)
		return NULL;
	if (created) {
		h->flags = F_ABSENT;
		r->bytes += ENTRY_COST + mklen + d->blen;
		ks->cbytes += ENTRY_COST + mklen + d->blen;
	}
	if (h->flags & F_ABSENT) {
		memset(blk(h), 0, d->blen);
		h->flags &= ~F_ABSENT;
		r->live++;
		ks->entries++;
	} else if (expired(d, blk(h), now)) {
		memset((uint8_t *)blk(h) + d->off, 0, d->value_size);
	}
	h->flags |= F_DIRTY;
	touch(d, blk(h), now);
	return (uint8_t *)blk(h) + d->off;
}

void sl_rocks_kstate_map_remove(struct rocks_kstate *ks, int id, const struct sl_kkey *k,
				const void *mkey, uint32_t mklen)
{
	struct rdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mref *r;
	struct chdr *h;

	if (!d || !(r = map_entry(ks, d, k)) || !r->m)
		return;
	h = sl_kvtab_get(r->m, sl_hash_bytes(mkey, mklen), mkey, mklen, 0);
	if (h && !(h->flags & F_ABSENT))
		map_kill(ks, d, r, h, mklen);
}

struct walk {
	struct rocks_kstate *ks;
	struct rdesc *d;
	struct mref *r;
	sl_ts_t now;
	bool (*fn)(const void *mkey, uint32_t mklen, void *value, void *arg);
	void *arg;
};

static bool walk_one(const struct sl_kv *kv, void *arg)
{
	struct walk *w = arg;
	struct chdr *h = kv->value;

	if (h->flags & F_ABSENT)
		return true;
	if (expired(w->d, blk(h), w->now)) {
		map_kill(w->ks, w->d, w->r, h, kv->klen);
		return true;
	}
	return w->fn(kv->key, kv->klen, (uint8_t *)blk(h) + w->d->off, w->arg);
}

void sl_rocks_kstate_map_foreach(struct rocks_kstate *ks, int id, const struct sl_kkey *k,
				 bool (*fn)(const void *mkey, uint32_t mklen, void *value,
					    void *arg),
				 void *arg, sl_ts_t now)
{
	struct rdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mref *r;
	struct walk w;

	if (!d || !(r = map_entry(ks, d, k)) || !r->m)
		return;
	w = (struct walk){ ks, d, r, now, fn, arg };
	ks->iterating++;
	sl_kvtab_foreach(r->m, walk_one, &w);
	ks->iterating--;
	d->pin = r; /* fn may have touched other keys of d: this map's entries stay put */
}

static bool clear_one(const struct sl_kv *kv, void *arg)
{
	struct walk *w = arg;
	struct chdr *h = kv->value;

	if (!(h->flags & F_ABSENT))
		map_kill(w->ks, w->d, w->r, h, kv->klen);
	return true;
}

void sl_rocks_kstate_map_clear(struct rocks_kstate *ks, int id, const struct sl_kkey *k)
{
	struct rdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mref *r;
	struct walk w;

	if (!d || !(r = map_entry(ks, d, k)) || !r->m)
		return;
	w = (struct walk){ .ks = ks, .d = d, .r = r };
	sl_kvtab_foreach(r->m, clear_one, &w);
}

/* ---- whole-state scans: snapshot and foreach ---------------------------------------------- */

/*
 * Both first write the cache back (the state is logically unchanged, hence the const
 * interface), then walk RocksDB per descriptor and key group in key order: a key's map
 * entries are adjacent there. The scan does not fill the block cache (it would evict the
 * hot working set for data read once).
 */
struct scan {
	const struct rocks_kstate *ks;
	const struct rdesc *d;
	rocksdb_iterator_t *it;
	uint32_t kg;
	/* the entry under the iterator */
	uint64_t hash;
	const uint8_t *key, *mkey;
	uint32_t klen, mklen;
	const uint8_t *val;
	bool done;
};

/* Moves s to the next entry of descriptor s->d (or done). Returns false at the end. */
static bool scan_next(struct scan *s, bool first)
{
	uint8_t pre[RK_PREFIX];

	if (!first && rocksdb_iter_valid(s->it))
		rocksdb_iter_next(s->it);
	for (;;) {
		if (first) {
			if (s->kg >= s->ks->max_par)
				return !(s->done = true);
			enc_prefix(pre, s->ks, s->d, s->kg);
			rocksdb_iter_seek(s->it, (const char *)pre, RK_PREFIX);
			first = false;
		}
		enc_prefix(pre, s->ks, s->d, s->kg);
		if (rocksdb_iter_valid(s->it)) {
			size_t kl, vl;
			const uint8_t *k = (const uint8_t *)rocksdb_iter_key(s->it, &kl);

			if (kl >= RK_HDR && !memcmp(k, pre, RK_PREFIX)) {
				s->hash = get_be(k + 7, 8);
				s->klen = (uint32_t)get_be(k + 15, 2);
				s->val = (const uint8_t *)rocksdb_iter_value(s->it, &vl);
				if (RK_HDR + s->klen > kl || s->klen > SL_KVTAB_KEY_MAX ||
				    vl != s->d->blen)
					return !(s->done = true); /* not ours: stop */
				s->key = k + RK_HDR;
				s->mkey = s->key + s->klen;
				s->mklen = (uint32_t)(kl - RK_HDR - s->klen);
				return true;
			}
		}
		s->kg++;
		first = true;
	}
}

static void scan_flush(const struct rocks_kstate *ks)
{
	/* const in the interface: writing the cache back changes no state */
	struct rocks_kstate *w = (struct rocks_kstate *)ks;

	if (!ks->db->error)
		sl_rocks_kstate_writeback(w);
}

static void put_block(struct sl_snap_buf *out, const void *p, size_t n)
{
	uint8_t *q = sl_snap_reserve(out, n);

	if (!q)
		return;
	memcpy(q, p, n);
	out->len += n;
}

static uint64_t snap_desc(const struct rocks_kstate *ks, const struct rdesc *d, sl_ts_t now,
			  struct sl_snap_buf *out, rocksdb_iterator_t *it)
{
	struct scan s = { .ks = ks, .d = d, .it = it };
	bool more = scan_next(&s, true);
	uint64_t n = 0;

	while (more && !out->error) {
		struct rec_hdr h = { s.hash, (uint16_t)s.kg, 0, s.klen };
		size_t at = out->len, cnt_at;
		uint64_t hash = s.hash;
		uint32_t klen = s.klen, cnt = 0;
		uint8_t kcopy[SL_KVTAB_KEY_MAX];

		if (d->kind == SL_STATE_VALUE) {
			if (!expired(d, s.val, now)) {
				put_block(out, &h, sizeof(h));
				put_block(out, s.key, s.klen);
				put_block(out, s.val, d->blen);
				n++;
			}
			more = scan_next(&s, false);
			continue;
		}
		/* a map: every entry of this key, adjacent */
		memcpy(kcopy, s.key, klen);
		put_block(out, &h, sizeof(h));
		put_block(out, s.key, s.klen);
		put_block(out, &cnt, 4);
		cnt_at = out->len - 4;
		do {
			if (!expired(d, s.val, now)) {
				put_block(out, &s.mklen, 4);
				put_block(out, s.mkey, s.mklen);
				put_block(out, s.val, d->blen);
				cnt++;
			}
			more = scan_next(&s, false);
		} while (more && s.hash == hash && s.klen == klen && !memcmp(s.key, kcopy, klen));
		if (out->error)
			break;
		if (!cnt) {
			out->len = at;
			continue;
		}
		memcpy(out->data + cnt_at, &cnt, 4);
		n++;
	}
	return n;
}

/* The layout a section starts with: max parallelism, then each descriptor. */
static void put_layout(const struct rocks_kstate *ks, struct sl_snap_buf *out)
{
	sl_snap_put_u32(out, ks->max_par);
	sl_snap_put_u32(out, (uint32_t)ks->n);
	for (int i = 0; i < ks->n; i++) {
		const struct rdesc *d = &ks->d[i];

		sl_snap_put_bytes(out, d->name, (uint32_t)strlen(d->name));
		sl_snap_put_u32(out, d->kind == SL_STATE_MAP ? KIND_MAP : KIND_VALUE);
		sl_snap_put_u32(out, d->value_size);
		sl_snap_put_u32(out, d->ttl ? 1 : 0);
	}
}

int sl_rocks_kstate_snapshot(const struct rocks_kstate *ks, sl_ts_t now, struct sl_snap_buf *out)
{
	size_t sec;
	rocksdb_iterator_t *it;

	scan_flush(ks);
	if (ks->db->error)
		return ks->db->error;
	it = rocksdb_create_iterator(ks->db->db, ks->db->ro_scan);
	sec = sl_snap_sec_begin(out, KS_MAGIC, KS_VERSION_1);
	put_layout(ks, out);
	for (int i = 0; i < ks->n && !out->error; i++) {
		size_t at = out->len;
		uint64_t n;

		sl_snap_put_u64(out, 0);
		n = snap_desc(ks, &ks->d[i], now, out, it);
		if (out->error)
			break;
		memcpy(out->data + at, &n, 8);
	}
	rocksdb_iter_destroy(it);
	sl_snap_sec_end(out, sec);
	return out->error;
}

void sl_rocks_kstate_foreach(const struct rocks_kstate *ks,
			     bool (*fn)(const struct sl_kentry *e, void *arg), void *arg)
{
	rocksdb_iterator_t *it;
	uint8_t *vbuf = NULL;

	scan_flush(ks);
	it = rocksdb_create_iterator(ks->db->db, ks->db->ro_scan);
	for (int i = 0; i < ks->n; i++) {
		const struct rdesc *d = &ks->d[i];
		struct scan s = { .ks = ks, .d = d, .it = it };
		uint8_t *nb = realloc(vbuf, d->blen + 8);

		if (!nb)
			break;
		vbuf = nb;
		for (bool more = scan_next(&s, true); more; more = scan_next(&s, false)) {
			struct sl_kentry e = { .id = i,
					       .kind = d->kind,
					       .hash = s.hash,
					       .kg = s.kg,
					       .key = s.key,
					       .klen = s.klen };

			/* an aligned copy: RocksDB's value bytes may sit at any address */
			memcpy(vbuf, s.val, d->blen);
			if (d->kind == SL_STATE_MAP) {
				e.mkey = s.mkey;
				e.mklen = s.mklen;
			}
			e.expires = SL_TS_MAX;
			if (d->ttl)
				memcpy(&e.expires, vbuf, 8);
			e.value = vbuf + d->off;
			if (!fn(&e, arg))
				goto out;
		}
	}
out:
	free(vbuf);
	rocksdb_iter_destroy(it);
}

/* ---- restore ------------------------------------------------------------------------------ */

struct restore_put {
	struct rocks_kstate *ks;
	size_t n;
	int rc;
};

static bool restore_one(const struct sl_kentry *e, void *arg)
{
	struct restore_put *p = arg;
	struct rocks_kstate *ks = p->ks;
	const struct rdesc *d = &ks->d[e->id];
	uint8_t block[8];
	uint32_t kl = enc_key(ks->kbuf, ks, d, e->hash, e->key, e->klen, e->mkey, e->mklen);

	if (d->ttl) {
		memcpy(block, &e->expires, 8);
		/* [expiry][value]: two slices, one Put */
		rocksdb_writebatch_putv(ks->db->wb, 1, (const char *[]){ (const char *)ks->kbuf },
					(const size_t[]){ kl }, 2,
					(const char *[]){ (const char *)block, e->value },
					(const size_t[]){ 8, d->value_size });
	} else {
		rocksdb_writebatch_put(ks->db->wb, (const char *)ks->kbuf, kl, e->value,
				       d->value_size);
	}
	p->n++;
	p->rc = maybe_commit(ks);
	return p->rc == 0;
}

/*
 * The section is restored into a heap kstate first (it checks the layout and every record,
 * gives the same one-line errors, and keeps only key groups [kg_lo, kg_hi)), then copied
 * into RocksDB in write batches. Memory: the kept entries twice for a moment (the snapshot
 * bytes are in memory anyway); the cache is written back and emptied first so no cached
 * entry can shadow a restored one.
 */
int sl_rocks_kstate_restore(struct rocks_kstate *ks, struct sl_snap_reader *r, uint32_t kg_lo,
			    uint32_t kg_hi)
{
	struct sl_state_desc *descs = calloc((size_t)ks->n + 1, sizeof(*descs));
	struct restore_put p = { .ks = ks };
	struct heap_kstate *tmp;
	int rc;

	ks->err[0] = '\0';
	if (ks->count_pending)
		settle(ks);
	if (!descs)
		return refuse(ks, -ENOMEM, "out of memory restoring state");
	for (int i = 0; i < ks->n; i++)
		descs[i] = (struct sl_state_desc){ ks->d[i].name, ks->d[i].kind,
						   ks->d[i].value_size, ks->d[i].ttl };
	tmp = sl_heap_create(descs, ks->n, ks->max_par, &rc);
	free(descs);
	if (!tmp)
		return refuse(ks, rc, "out of memory restoring state");
	rc = sl_heap_restore(tmp, r, kg_lo, kg_hi);
	if (rc) {
		refuse(ks, rc, "%s", sl_heap_error(tmp));
		goto out;
	}
	rc = sl_rocks_kstate_writeback(ks);
	if (rc) {
		refuse(ks, rc, "state backend failed: %s", ks->db->msg);
		goto out;
	}
	for (int i = 0; i < ks->n; i++) {
		struct rdesc *d = &ks->d[i];

		if (d->kind == SL_STATE_MAP) {
			struct sl_kvtab_iter it;
			struct sl_kv kv;

			sl_kvtab_iter_init(&it);
			while (sl_kvtab_next(d->tab, &it, &kv))
				sl_kvtab_destroy(((struct mref *)kv.value)->m);
		}
		sl_kvtab_destroy(d->tab);
		d->tab = sl_kvtab_create(d->kind == SL_STATE_MAP ? sizeof(struct mref)
								 : sizeof(struct chdr) + d->blen,
					 ks->max_par);
		d->pin = NULL;
		sl_kvtab_iter_init(&d->hand);
		if (!d->tab) {
			rc = refuse(ks, -ENOMEM, "out of memory restoring state");
			ks->db->error = -ENOMEM;
			snprintf(ks->db->msg, sizeof(ks->db->msg), "out of memory");
			goto out;
		}
	}
	ks->cbytes = 0;
	sl_heap_foreach(tmp, restore_one, &p);
	rc = p.rc ? p.rc : sl_rocks_commit(ks->db);
	if (rc)
		refuse(ks, rc, "state backend failed: %s", ks->db->msg);
	ks->entries += p.n;
out:
	sl_heap_destroy(tmp);
	return rc;
}

const char *sl_rocks_kstate_error(const struct rocks_kstate *ks)
{
	return ks->err;
}

/* ---- native checkpoints --------------------------------------------------------------------
 *
 * The entries of a native checkpoint are the db's RocksDB checkpoint directory; the
 * operator's snapshot file keeps only this section, the layout, so a restore into a job
 * whose state descriptors changed is refused as with the logical format.
 */
int sl_rocks_kstate_snapshot_native(const struct rocks_kstate *ks, uint32_t kg_lo, uint32_t kg_hi,
				    struct sl_snap_buf *out)
{
	size_t sec = sl_snap_sec_begin(out, KN_MAGIC, KN_VERSION);

	put_layout(ks, out);
	sl_snap_put_u64(out, sl_rocks_kstate_entries(ks));
	sl_snap_put_u32(out, kg_lo);
	sl_snap_put_u32(out, kg_hi);
	sl_snap_sec_end(out, sec);
	return out->error;
}

int sl_rocks_kstate_restore_native(struct rocks_kstate *ks, struct sl_snap_reader *r,
				   uint32_t kg_lo, uint32_t kg_hi)
{
	struct sl_snap_reader b;
	uint32_t ver, max_par, n, kind, vsize, ttl, nlen, olo, ohi;
	uint64_t entries;
	const void *name;
	int rc;

	ks->err[0] = '\0';
	rc = sl_snap_sec_open(r, KN_MAGIC, KN_VERSION, &b, &ver);
	if (rc)
		return refuse(ks, rc,
			      rc == -EPROTO ? "native state section of a newer format"
					    : "native state section is corrupt");
	if (sl_snap_get_u32(&b, &max_par) || sl_snap_get_u32(&b, &n))
		return refuse(ks, -EINVAL, "native state section is corrupt");
	if (max_par != ks->max_par)
		return refuse(ks, -EPROTO, "checkpoint has max parallelism %u, the job %u", max_par,
			      ks->max_par);
	if (n != (uint32_t)ks->n)
		return refuse(ks, -EPROTO, "checkpoint has %u state descriptors, the job %d", n,
			      ks->n);
	for (int i = 0; i < ks->n; i++) {
		const struct rdesc *d = &ks->d[i];

		if (sl_snap_get_bytes(&b, &name, &nlen) || sl_snap_get_u32(&b, &kind) ||
		    sl_snap_get_u32(&b, &vsize) || sl_snap_get_u32(&b, &ttl))
			return refuse(ks, -EINVAL, "native state section is corrupt");
		if (nlen != strlen(d->name) || memcmp(name, d->name, nlen) ||
		    kind != (d->kind == SL_STATE_MAP ? KIND_MAP : KIND_VALUE) ||
		    vsize != d->value_size || ttl != (d->ttl ? 1u : 0u))
			return refuse(ks, -EPROTO,
				      "state '%s' (descriptor %d) differs from the "
				      "checkpoint's",
				      d->name, i);
	}
	if (sl_snap_get_u64(&b, &entries) || sl_snap_get_u32(&b, &olo) || sl_snap_get_u32(&b, &ohi))
		return refuse(ks, -EINVAL, "native state section is corrupt");
	/* the entries came with sl_rocks_db_load, before this kstate was made */
	if (!ks->db->loaded)
		return refuse(ks, -EINVAL, "native state: its checkpoint directory was not loaded");
	/* the old instance had exactly these key groups: its count is this one's */
	if (ks->count_pending && olo == kg_lo && ohi == kg_hi) {
		ks->count_pending = false;
		ks->entries = (size_t)entries;
	}
	return 0;
}
