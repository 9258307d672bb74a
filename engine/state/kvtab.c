/*
 * kvtab.c - the heap state table: Robin Hood open addressing over 8-byte slots, entries in
 * slabs that never move.
 *
 * Slots are {meta, ref}: meta holds a 24-bit tag (high bits of the combined hash) and the
 * slot's probe distance (8 bits, saturating at 255); ref names an entry (0 = empty slot). A
 * lookup reads one slot line and touches an entry only when the tag matches, so a lookup is
 * about two cache misses (slot, entry) whatever the load. Robin Hood ordering lets a miss
 * stop as soon as it meets a slot closer to its home than the probe is, and deletion shifts
 * the following run back by one (no tombstones, so a table never degrades with churn).
 *
 * The home slot comes from the key hash alone and the tag from hc = hash ^ mix(ns), so the
 * tag tells a key's namespaces apart without touching their entries, and a key's
 * namespaces share one run: a few extra 8-byte slot compares for a key with a few live
 * namespaces. A table made with sl_kvtab_create_spread() takes the home slot from (key,
 * ns) instead (home_of), for a table where one key holds many namespaces at once. Slice
 * windows had one table for all their slices: two sources that drift apart in event time
 * hold thousands of slices per key open, and sharing one run every insert walked the whole
 * run (a 1M-row job took 12.8 s, 97 % in place(), against 1.2 s for 300K rows); they now
 * keep a table per slice (slice.c). Its callers know the namespace when they prefetch, so
 * the spread costs nothing. Distances saturate at 255
 * rather than forcing growth, so even a caller's constant hash only makes probes long.
 *
 * Entries: {hash, ns, klen, kg, class, live} + value + key bytes, in slabs per key-size
 * class (exact 8-byte steps up to 64 bytes of key, then powers of two). A slab is one
 * block of up to 65536 entries and is never moved or freed before the table, which is why
 * value pointers stay valid until their entry is removed. Freed entries go to their class's
 * free list and are reused first. ref = (slab << SLAB_BITS | index) + 1.
 *
 * Invariants:
 *  - every live entry is named by exactly one slot; count == number of live entries;
 *  - Robin Hood: along a run, dist(i + 1) <= dist(i) + 1, so an entry is never beyond a
 *    slot that is closer to its own home than the entry would be (that is where a probe
 *    may stop); a stored distance of 255 means "255 or more" and never stops a probe;
 *  - count <= grow_at < capacity, so a probe always meets an empty slot.
 * Growth doubles the slot array and re-inserts by walking the slabs (sequential reads;
 * entries themselves stay put).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hash.h"
#include "key.h"
#include "kvtab.h"

#define SLAB_BITS  16		     /* up to 64K-entry slabs: big enough for huge pages */
#define SLAB_MAX   (1u << SLAB_BITS) /* entries in the largest slab */
#define SLAB_FIRST 4u		     /* entries in a class's first slab */
#define NSLABS_MAX (1u << (32 - SLAB_BITS))
#define NCLS	   13
#define DIST_MAX   255u
#define MIN_SLOTS  8u

_Static_assert(SL_KVTAB_KEY_MAX >= SL_KEY_MAX + 8, "room for the timer namespace suffix");

struct slot {
	uint32_t meta; /* tag << 8 | probe distance (saturated at 255) */
	uint32_t ref;  /* 0: empty */
};

struct entry {
	uint64_t hash; /* key hash; next free ref while on the free list */
	uint64_t ns;
	uint32_t klen;
	uint16_t kg;
	uint8_t cls;
	/* LIVE | the entry's snapshot mark (MARK or 0); 0 when free */
	uint8_t live;
	/* value (vsize bytes, 8-aligned), then key bytes (class capacity) */
};

#define LIVE 1u
#define MARK 2u

#define ENTRY_HDR ((uint32_t)sizeof(struct entry))
_Static_assert(sizeof(struct entry) == 24, "entry header is three words");

struct slab {
	uint8_t *mem;
	uint32_t esize; /* bytes per entry */
	uint32_t cap;	/* entries */
	uint32_t used;	/* entries carved so far (live or free) */
	uint32_t cls;
};

struct kclass {
	uint32_t free; /* head of the free list (ref), 0 if empty */
	uint32_t cur;  /* slab being carved + 1, 0 if none */
	uint32_t ncap; /* entries allocated in this class's slabs so far */
};

struct sl_kvtab {
	struct slot *slots;
	uint32_t mask; /* capacity - 1 */
	uint32_t count;
	uint32_t grow_at; /* grow when count would exceed this (80% load) */
	uint32_t vsize;	  /* value bytes, rounded up to 8 */
	uint32_t value_size;
	uint32_t max_par;
	uint8_t mark; /* the mark new entries get: MARK or 0 (sl_kvtab_flip_mark) */
	bool spread;  /* home slot from (hash, ns), not hash alone (sl_kvtab_create_spread) */
	struct slab *slabs;
	uint32_t nslabs;
	uint32_t slabs_cap;
	size_t slab_bytes;
	struct kclass cls[NCLS];
};

/* Key capacity of each class: 0..64 in steps of 8, then 128, 256, 512, SL_KVTAB_KEY_MAX. */
static const uint32_t cls_cap[NCLS] = {
	0, 8, 16, 24, 32, 40, 48, 56, 64, 128, 256, 512, (SL_KVTAB_KEY_MAX + 7) & ~7u
};

static inline uint32_t class_of(uint32_t klen)
{
	if (klen <= 64)
		return (klen + 7) >> 3;
	if (klen <= 128)
		return 9;
	if (klen <= 256)
		return 10;
	if (klen <= 512)
		return 11;
	return 12;
}

static inline uint64_t combine(uint64_t hash, uint64_t ns)
{
	/* Fibonacci hashing: the high bits (the tag) of ns * phi differ for nearby namespaces;
	 * ns == 0 keeps hc == hash */
	return hash ^ (ns * 0x9e3779b97f4a7c15ull);
}

/* The hash whose low bits pick the home slot of (key hash, ns). The tag comes from the
 * high bits of combine(), so a second, independent mix of ns keeps tag and home apart. */
static inline uint64_t home_of(const struct sl_kvtab *t, uint64_t hash, uint64_t ns)
{
	return t->spread ? hash ^ sl_hash_mix64(ns + 1) : hash;
}

static inline uint32_t tag_of(uint64_t hc)
{
	return (uint32_t)(hc >> 40);
}

static inline uint32_t sdist(struct slot s)
{
	return s.meta & 0xff;
}

static inline uint32_t stag(struct slot s)
{
	return s.meta >> 8;
}

static inline uint32_t cap_dist(uint32_t d)
{
	return d < DIST_MAX ? d : DIST_MAX;
}

static inline struct entry *deref(const struct sl_kvtab *t, uint32_t ref)
{
	const struct slab *s = &t->slabs[(ref - 1) >> SLAB_BITS];

	return (struct entry *)(s->mem + (size_t)((ref - 1) & (SLAB_MAX - 1)) * s->esize);
}

static inline uint64_t entry_home(const struct sl_kvtab *t, const struct entry *e)
{
	return home_of(t, e->hash, e->ns);
}

static inline uint8_t *entry_value(struct entry *e)
{
	return (uint8_t *)e + ENTRY_HDR;
}

static inline uint8_t *entry_key(const struct sl_kvtab *t, struct entry *e)
{
	return (uint8_t *)e + ENTRY_HDR + t->vsize;
}

static inline struct entry *value_entry(const void *value)
{
	return (struct entry *)((uint8_t *)value - ENTRY_HDR);
}

/*
 * Big blocks (slot arrays, large slabs) come straight from mmap with transparent huge pages
 * requested before the first touch: lookups land at random in tables far larger than the
 * TLB covers with 4 KiB pages, and in a VM every TLB miss is a two-level page walk (the
 * keyed benchmark's profile showed the prefetches themselves stalling). malloc'd memory
 * is touched (zeroed) before a hint could apply, hence mmap. The hint may be refused (THP
 * off): only speed depends on it.
 */
#define BIG_BLOCK (2u << 20)

static void *block_alloc(size_t n, bool zero)
{
	void *p;

	if (n < BIG_BLOCK)
		return zero ? calloc(1, n) : malloc(n);
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n, MADV_HUGEPAGE);
	return p; /* anonymous mappings read as zero */
}

static void block_free(void *p, size_t n)
{
	if (!p)
		return;
	if (n < BIG_BLOCK)
		free(p);
	else
		munmap(p, n);
}

static struct slot *slots_alloc(uint32_t cap)
{
	return block_alloc((size_t)cap * sizeof(struct slot), true);
}

struct sl_kvtab *sl_kvtab_create(uint32_t value_size, uint32_t max_par)
{
	struct sl_kvtab *t;

	if (max_par == 0 || max_par > 65536)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->slots = slots_alloc(MIN_SLOTS);
	if (!t->slots) {
		free(t);
		return NULL;
	}
	t->mask = MIN_SLOTS - 1;
	t->grow_at = MIN_SLOTS * 4 / 5;
	t->value_size = value_size;
	t->vsize = (value_size + 7) & ~7u;
	t->max_par = max_par;
	return t;
}

struct sl_kvtab *sl_kvtab_create_spread(uint32_t value_size, uint32_t max_par)
{
	struct sl_kvtab *t = sl_kvtab_create(value_size, max_par);

	if (t)
		t->spread = true;
	return t;
}

void sl_kvtab_destroy(struct sl_kvtab *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->nslabs; i++)
		block_free(t->slabs[i].mem, (size_t)t->slabs[i].cap * t->slabs[i].esize);
	free(t->slabs);
	block_free(t->slots, (size_t)(t->mask + 1) * sizeof(struct slot));
	free(t);
}

/* Places ref, whose key is known absent, starting at its home. Robin Hood on true
 * distances: a carried slot takes the place of any slot closer to its own home. A stored
 * 255 is resolved through the entry's hash (rare), so the order holds exactly and a stored
 * distance is always min(true distance, 255), which is what lookups' early stop relies on. */
static void place(const struct sl_kvtab *t, struct slot *slots, uint32_t mask, uint64_t home,
		  uint32_t tag, uint32_t ref)
{
	uint32_t i = (uint32_t)home & mask, d = 0;
	struct slot carry = { tag << 8, ref };

	for (;; d++, i = (i + 1) & mask) {
		struct slot s = slots[i];
		uint32_t sd;

		if (!s.ref) {
			carry.meta = (carry.meta & ~0xffu) | cap_dist(d);
			slots[i] = carry;
			return;
		}
		sd = sdist(s);
		if (sd == DIST_MAX && d >= DIST_MAX)
			sd = (i - (uint32_t)entry_home(t, deref(t, s.ref))) & mask;
		if (sd < d) {
			carry.meta = (carry.meta & ~0xffu) | cap_dist(d);
			slots[i] = carry;
			carry = s;
			d = sd;
		}
	}
}

static int grow(struct sl_kvtab *t)
{
	uint32_t cap = (t->mask + 1) * 2;
	struct slot *ns;

	if (cap == 0 || cap > (1u << 31))
		return -ENOMEM;
	ns = slots_alloc(cap);
	if (!ns)
		return -ENOMEM;
	/* walk the slabs, not the old slots: sequential reads of the entries' hashes */
	for (uint32_t si = 0; si < t->nslabs; si++) {
		const struct slab *s = &t->slabs[si];

		for (uint32_t k = 0; k < s->used; k++) {
			struct entry *e = (struct entry *)(s->mem + (size_t)k * s->esize);

			if (e->live)
				place(t, ns, cap - 1, entry_home(t, e),
				      tag_of(combine(e->hash, e->ns)), ((si << SLAB_BITS) | k) + 1);
		}
	}
	block_free(t->slots, (size_t)(t->mask + 1) * sizeof(struct slot));
	t->slots = ns;
	t->mask = cap - 1;
	t->grow_at = (uint32_t)((uint64_t)cap * 4 / 5);
	return 0;
}

static int slab_new(struct sl_kvtab *t, uint32_t cls)
{
	struct kclass *c = &t->cls[cls];
	uint32_t n = c->ncap < SLAB_FIRST ? SLAB_FIRST : c->ncap;
	uint32_t esize = ENTRY_HDR + t->vsize + cls_cap[cls];
	struct slab *s;

	if (n > SLAB_MAX)
		n = SLAB_MAX;
	if (t->nslabs == NSLABS_MAX)
		return -ENOMEM;
	if (t->nslabs == t->slabs_cap) {
		uint32_t nc = t->slabs_cap ? t->slabs_cap * 2 : 4;
		struct slab *a = realloc(t->slabs, nc * sizeof(*a));

		if (!a)
			return -ENOMEM;
		t->slabs = a;
		t->slabs_cap = nc;
	}
	s = &t->slabs[t->nslabs];
	s->mem = block_alloc((size_t)n * esize, false);
	if (!s->mem)
		return -ENOMEM;
	s->esize = esize;
	s->cap = n;
	s->used = 0;
	s->cls = cls;
	t->slab_bytes += (size_t)n * esize;
	c->ncap += n;
	c->cur = ++t->nslabs;
	return 0;
}

/*
 * Starts fetching the free entry that the class's next allocation will pop, for writing.
 * The free list runs through the entries in the order they were removed, which for a fired
 * slice is hash order: random over the slabs. Without this every pop is a dependent miss
 * (reading the popped entry's link, then writing its header into the same line), which was
 * two thirds of sl_kvtab_put's samples in the 1M-key tumbling benchmark. One pop ahead is
 * enough when inserts are a few records apart, which is when they are many. An entry may
 * straddle two lines: both are fetched.
 */
static inline void prefetch_entry_w(const struct sl_kvtab *t, uint32_t ref)
{
	const struct slab *s = &t->slabs[(ref - 1) >> SLAB_BITS];
	const uint8_t *e = s->mem + (size_t)((ref - 1) & (SLAB_MAX - 1)) * s->esize;

	__builtin_prefetch(e, 1);
	__builtin_prefetch(e + s->esize - 1, 1);
}

/* Returns the ref of a fresh entry of class cls, or 0 on ENOMEM. */
static uint32_t entry_alloc(struct sl_kvtab *t, uint32_t cls)
{
	struct kclass *c = &t->cls[cls];
	struct slab *s;
	uint32_t ref;

	if (c->free) {
		ref = c->free;
		c->free = (uint32_t)deref(t, ref)->hash;
		if (c->free)
			prefetch_entry_w(t, c->free);
		return ref;
	}
	if (!c->cur || t->slabs[c->cur - 1].used == t->slabs[c->cur - 1].cap) {
		/* after sl_kvtab_clear the class's emptied slabs come first, in slab order */
		uint32_t i = c->cur;

		while (i < t->nslabs && (t->slabs[i].cls != cls || t->slabs[i].used))
			i++;
		if (i < t->nslabs)
			c->cur = i + 1;
		else if (slab_new(t, cls) < 0)
			return 0;
	}
	s = &t->slabs[c->cur - 1];
	return (((c->cur - 1) << SLAB_BITS) | s->used++) + 1;
}

static void entry_free(struct sl_kvtab *t, struct entry *e, uint32_t ref)
{
	struct kclass *c = &t->cls[e->cls];

	e->live = 0;
	e->hash = c->free;
	c->free = ref;
}

/* Finds (key, ns): returns its slot index, or -1. Hot path. */
static inline int64_t find(const struct sl_kvtab *t, uint64_t hash, uint32_t tag, const void *key,
			   uint32_t klen, uint64_t ns)
{
	uint32_t mask = t->mask, i = (uint32_t)home_of(t, hash, ns) & mask;
	const struct slot *slots = t->slots;

	for (uint32_t d = 0;; d++, i = (i + 1) & mask) {
		struct slot s = slots[i];

		if (!s.ref || sdist(s) < cap_dist(d))
			return -1;
		if (stag(s) == tag) {
			struct entry *e = deref(t, s.ref);

			if (e->hash == hash && e->ns == ns && e->klen == klen &&
			    sl_kvtab_key_eq(entry_key(t, e), key, klen))
				return i;
		}
	}
}

void *sl_kvtab_get(struct sl_kvtab *t, uint64_t hash, const void *key, uint32_t klen, uint64_t ns)
{
	int64_t i = find(t, hash, tag_of(combine(hash, ns)), key, klen, ns);

	return i < 0 ? NULL : entry_value(deref(t, t->slots[i].ref));
}

void *sl_kvtab_put(struct sl_kvtab *t, uint64_t hash, const void *key, uint32_t klen, uint64_t ns,
		   bool *created)
{
	uint32_t tag = tag_of(combine(hash, ns));
	int64_t i = find(t, hash, tag, key, klen, ns);
	struct entry *e;
	uint32_t ref, cls;

	if (i >= 0) {
		*created = false;
		return entry_value(deref(t, t->slots[i].ref));
	}
	*created = false;
	if (klen > SL_KVTAB_KEY_MAX)
		return NULL;
	if (t->count >= t->grow_at && grow(t) < 0)
		return NULL;
	cls = class_of(klen);
	ref = entry_alloc(t, cls);
	if (!ref)
		return NULL;
	e = deref(t, ref);
	e->hash = hash;
	e->ns = ns;
	e->klen = klen;
	e->kg = (uint16_t)sl_key_group(hash, t->max_par);
	e->cls = (uint8_t)cls;
	e->live = (uint8_t)(LIVE | t->mark);
	memset(entry_value(e), 0, t->vsize);
	if (klen)
		memcpy(entry_key(t, e), key, klen);
	place(t, t->slots, t->mask, home_of(t, hash, ns), tag, ref);
	t->count++;
	*created = true;
	return entry_value(e);
}

/* Empties slot i and shifts the run after it back by one. */
static void slot_delete(struct sl_kvtab *t, uint32_t i)
{
	uint32_t mask = t->mask;
	struct slot *slots = t->slots;

	for (;;) {
		uint32_t j = (i + 1) & mask;
		struct slot s = slots[j];
		uint32_t d;

		if (!s.ref || sdist(s) == 0)
			break;
		d = sdist(s);
		if (d == DIST_MAX) {
			/* saturated: the true distance needs the entry's hash (rare) */
			struct entry *e = deref(t, s.ref);

			d = (j - (uint32_t)entry_home(t, e)) & mask;
		}
		s.meta = (s.meta & ~0xffu) | cap_dist(d - 1);
		slots[i] = s;
		i = j;
	}
	slots[i] = (struct slot){ 0, 0 };
}

bool sl_kvtab_remove(struct sl_kvtab *t, uint64_t hash, const void *key, uint32_t klen, uint64_t ns)
{
	int64_t i = find(t, hash, tag_of(combine(hash, ns)), key, klen, ns);
	uint32_t ref;

	if (i < 0)
		return false;
	ref = t->slots[i].ref;
	entry_free(t, deref(t, ref), ref);
	slot_delete(t, (uint32_t)i);
	t->count--;
	return true;
}

void sl_kvtab_remove_value(struct sl_kvtab *t, void *value)
{
	struct entry *e = value_entry(value);
	uint32_t mask = t->mask, i = (uint32_t)entry_home(t, e) & mask;
	uint32_t tag = tag_of(combine(e->hash, e->ns));

	/* the entry is live, so its slot is on its probe path: compare refs by address */
	for (;; i = (i + 1) & mask) {
		struct slot s = t->slots[i];

		if (s.ref && stag(s) == tag && deref(t, s.ref) == e) {
			entry_free(t, e, s.ref);
			slot_delete(t, i);
			t->count--;
			return;
		}
	}
}

void sl_kvtab_entry(const struct sl_kvtab *t, const void *value, struct sl_kv *kv)
{
	struct entry *e = value_entry(value);

	kv->hash = e->hash;
	kv->ns = e->ns;
	kv->klen = e->klen;
	kv->kg = e->kg;
	kv->key = entry_key(t, e);
	kv->value = entry_value(e);
}

void sl_kvtab_flip_mark(struct sl_kvtab *t)
{
	t->mark ^= MARK;
}

bool sl_kvtab_take_mark(struct sl_kvtab *t, void *value)
{
	struct entry *e = value_entry(value);

	if ((e->live & MARK) == t->mark)
		return false;
	e->live = (uint8_t)(LIVE | t->mark);
	return true;
}

void sl_kvtab_prefetch(const struct sl_kvtab *t, uint64_t hash, uint64_t ns)
{
	__builtin_prefetch(&t->slots[(uint32_t)home_of(t, hash, ns) & t->mask]);
}

void sl_kvtab_prefetch_entry(const struct sl_kvtab *t, uint64_t hash, uint64_t ns)
{
	uint32_t mask = t->mask, i = (uint32_t)home_of(t, hash, ns) & mask;
	uint32_t tag = tag_of(combine(hash, ns));

	/* the first tag match is the entry in all but ~2^-24 of cases; prefetch only that */
	for (uint32_t d = 0; d < 16; d++, i = (i + 1) & mask) {
		struct slot s = t->slots[i];

		if (!s.ref || sdist(s) < d)
			return;
		if (stag(s) == tag) {
			/* every line of the entry: header, value and key are all read (a 48-byte
			 * entry spans two lines half the time, a session directory's ~100) */
			const struct slab *sb = &t->slabs[(s.ref - 1) >> SLAB_BITS];
			const uint8_t *e = (const uint8_t *)deref(t, s.ref);
			uintptr_t a = (uintptr_t)e & ~(uintptr_t)63,
				  z = (uintptr_t)e + sb->esize - 1;

			for (int n = 0; a <= z && n < 4; a += 64, n++)
				__builtin_prefetch((const void *)a);
			return;
		}
	}
}

void sl_kvtab_clear(struct sl_kvtab *t)
{
	/* a sequential write of the slot array (the ceiling loop of keyed_bench clears its
	 * table the same way), where removing n entries one by one is n random reads of an
	 * entry and its slot run */
	memset(t->slots, 0, (size_t)(t->mask + 1) * sizeof(struct slot));
	for (uint32_t i = 0; i < t->nslabs; i++)
		t->slabs[i].used = 0;
	for (uint32_t c = 0; c < NCLS; c++) {
		t->cls[c].free = 0;
		t->cls[c].cur = 0;
	}
	t->count = 0;
}

int sl_kvtab_reserve(struct sl_kvtab *t, size_t n)
{
	while ((size_t)t->count + n > t->grow_at) {
		int rc = grow(t);

		if (rc)
			return rc;
	}
	return 0;
}

size_t sl_kvtab_count(const struct sl_kvtab *t)
{
	return t->count;
}

uint32_t sl_kvtab_max_probe(const struct sl_kvtab *t)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i <= t->mask; i++)
		if (t->slots[i].ref && sdist(t->slots[i]) > m)
			m = sdist(t->slots[i]);
	return m;
}

size_t sl_kvtab_bytes(const struct sl_kvtab *t)
{
	return sizeof(*t) + (size_t)(t->mask + 1) * sizeof(struct slot) + t->slab_bytes +
	       (size_t)t->slabs_cap * sizeof(struct slab);
}

void sl_kvtab_foreach(struct sl_kvtab *t, bool (*fn)(const struct sl_kv *kv, void *arg), void *arg)
{
	struct sl_kv kv;

	/* Slab order, re-reading the slab table each step: removals (and inserts, which may
	 * grow it) during the walk cannot invalidate it. */
	for (uint32_t si = 0; si < t->nslabs; si++) {
		for (uint32_t k = 0; k < t->slabs[si].used; k++) {
			struct slab *s = &t->slabs[si];
			struct entry *e = (struct entry *)(s->mem + (size_t)k * s->esize);

			if (!e->live)
				continue;
			sl_kvtab_entry(t, entry_value(e), &kv);
			if (!fn(&kv, arg))
				return;
		}
	}
}

bool sl_kvtab_next(const struct sl_kvtab *t, struct sl_kvtab_iter *it, struct sl_kv *kv)
{
	for (; it->slab < t->nslabs; it->slab++, it->idx = 0) {
		const struct slab *s = &t->slabs[it->slab];

		while (it->idx < s->used) {
			struct entry *e = (struct entry *)(s->mem + (size_t)it->idx++ * s->esize);

			if (e->live) {
				sl_kvtab_entry(t, entry_value(e), kv);
				return true;
			}
		}
	}
	return false;
}
