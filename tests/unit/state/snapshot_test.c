/*
 * snapshot_test.c - snapshot and restore of keyed state (state.c) and timers (timer.c).
 *
 * Checks, comparing whole states by iterating them (sl_kstate_foreach, timers by popping):
 *  - round trip: random values, maps and TTL entries through snapshot -> restore into a
 *    fresh state equal the original's live entries; entries expired at snapshot time are
 *    not written; a second snapshot of the restored state is byte-identical;
 *  - rescaling: three instances (key-group ranges of 3 shards) snapshotted and restored into
 *    two hold every entry and every timer exactly once, each in the instance owning its key
 *    group;
 *  - corrupt input: the snapshot cut at every byte offset is refused and leaves the state
 *    empty; random byte flips (and flips with the section lengths kept plausible) never
 *    crash (run under ASan/UBSan) and give an error with nothing restored or a state that
 *    is consistent (its own snapshot restores to the same entries);
 *  - layout mismatch: another value size, kind, TTL, name, descriptor count, max
 *    parallelism or a newer format is refused with -EPROTO and a message naming the state;
 *  - copy-on-write snapshots (sl_kstate_snapshot_begin/_step): with random changes through
 *    every call between small steps (new keys, writes through get and put pointers, clears,
 *    map removals and foreach, TTL entries removed on access), the section restores to
 *    exactly the state a plain snapshot took at begin; three snapshots in a row, so the
 *    marks of one do not leak into the next;
 *  - throughput of snapshot and restore for 1M value entries and 1M map entries (printed).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snap.h"
#include "hash.h"
#include "state.h"
#include "tests/test.h"
#include "timer.h"

#define MAX_PAR 128u

enum { V = 0, VT, M, MT, NDESC };

static const struct sl_state_desc descs[NDESC] = {
	{ "v", SL_STATE_VALUE, 8, 0 },
	{ "vt", SL_STATE_VALUE, 20, 100 },
	{ "m", SL_STATE_MAP, 8, 0 },
	{ "mt", SL_STATE_MAP, 16, 100 },
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct sl_kstate *make(const struct sl_state_desc *d, int n, uint32_t max_par)
{
	int err;
	struct sl_kstate *ks = sl_kstate_create(d, n, max_par, &err);

	T_ASSERT(ks && err == 0);
	return ks;
}

/* A key of 1..48 bytes (now and then a long one), from an index. */
static uint32_t key_of(uint64_t i, uint8_t *buf)
{
	uint32_t n = 1 + (uint32_t)(sl_hash_mix64(i) % 48);

	if (i % 97 == 0)
		n = 300;
	for (uint32_t j = 0; j < n; j++)
		buf[j] = (uint8_t)(sl_hash_mix64(i * 131 + j) >> 7);
	memcpy(buf, &i, n < 8 ? n : 8);
	return n;
}

/* Fills ks with random state: values, maps, TTL entries written at times in [0, 300). */
static void populate(struct sl_kstate *ks, int nkeys, int ops)
{
	uint8_t kb[512], mk[64];

	for (int i = 0; i < ops; i++) {
		uint64_t ki = rnd() % (uint64_t)nkeys;
		uint32_t kl = key_of(ki, kb);
		struct sl_kkey k = { sl_hash_bytes(kb, kl), kb, kl };
		sl_ts_t now = (sl_ts_t)(rnd() % 300);
		int id = (int)(rnd() % NDESC);
		uint32_t mkl = 1 + (uint32_t)(rnd() % 20);
		uint8_t *v;

		for (uint32_t j = 0; j < mkl; j++)
			mk[j] = (uint8_t)(rnd() % 4);
		if (descs[id].kind == SL_STATE_VALUE)
			v = sl_kstate_value_put(ks, id, &k, now);
		else
			v = sl_kstate_map_put(ks, id, &k, mk, mkl, now);
		T_ASSERT(v);
		for (uint32_t j = 0; j < descs[id].value_size; j++)
			v[j] = (uint8_t)rnd();
		if (rnd() % 10 == 0) {
			if (descs[id].kind == SL_STATE_VALUE)
				sl_kstate_value_clear(ks, id, &k);
			else
				sl_kstate_map_remove(ks, id, &k, mk, mkl);
		}
	}
}

/* ---- states as sorted lists of entry strings ------------------------------------------ */

struct list {
	char **s;
	size_t n, cap;
	sl_ts_t live_at; /* keep entries with expires > live_at */
	uint32_t kg_lo, kg_hi;
	bool bad_kg; /* an entry outside [kg_lo, kg_hi) or with a wrong key group */
};

static void push(struct list *l, char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->s = realloc(l->s, l->cap * sizeof(*l->s));
		T_ASSERT(l->s);
	}
	l->s[l->n++] = s;
}

static void hex(char *o, const uint8_t *p, uint32_t n)
{
	static const char d[] = "0123456789abcdef";

	for (uint32_t i = 0; i < n; i++) {
		*o++ = d[p[i] >> 4];
		*o++ = d[p[i] & 15];
	}
	*o = '\0';
}

static bool collect(const struct sl_kentry *e, void *arg)
{
	struct list *l = arg;
	uint32_t vs = descs[e->id].value_size;
	char *s, *o;

	if (e->expires <= l->live_at)
		return true;
	if (e->kg < l->kg_lo || e->kg >= l->kg_hi || e->kg != sl_key_group(e->hash, MAX_PAR) ||
	    e->hash != sl_hash_bytes(e->key, e->klen))
		l->bad_kg = true;
	s = malloc(64 + 2 * ((size_t)e->klen + e->mklen + vs));
	T_ASSERT(s);
	o = s + sprintf(s, "%d %lld ", e->id, (long long)e->expires);
	hex(o, e->key, e->klen);
	o += 2 * e->klen;
	*o++ = ' ';
	if (e->mkey) {
		hex(o, e->mkey, e->mklen);
		o += 2 * e->mklen;
	}
	*o++ = ' ';
	hex(o, e->value, vs);
	push(l, s);
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct list list_of(const struct sl_kstate *ks, sl_ts_t live_at, uint32_t lo, uint32_t hi)
{
	struct list l = { .live_at = live_at, .kg_lo = lo, .kg_hi = hi };

	sl_kstate_foreach(ks, collect, &l);
	qsort(l.s, l.n, sizeof(*l.s), cmp_str);
	return l;
}

static void list_free(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->s[i]);
	free(l->s);
	memset(l, 0, sizeof(*l));
}

static void list_eq(const struct list *a, const struct list *b)
{
	T_ASSERT_EQ_I64(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		if (strcmp(a->s[i], b->s[i])) {
			fprintf(stderr, "entry %zu differs:\n  %s\n  %s\n", i, a->s[i], b->s[i]);
			exit(T_EXIT_FAIL);
		}
	}
}

/* Key groups of shard s among n: contiguous (hash.h). */
static void range_of(uint32_t s, uint32_t n, uint32_t *lo, uint32_t *hi)
{
	*lo = MAX_PAR;
	*hi = 0;
	for (uint32_t kg = 0; kg < MAX_PAR; kg++) {
		if (sl_key_group_shard(kg, MAX_PAR, n) != s)
			continue;
		if (kg < *lo)
			*lo = kg;
		*hi = kg + 1;
	}
}

/* ---- round trip and rescale ----------------------------------------------------------- */

static void test_round_trip(void)
{
	struct sl_kstate *a = make(descs, NDESC, MAX_PAR), *b = make(descs, NDESC, MAX_PAR);
	struct sl_snap_buf s1, s2;
	struct sl_snap_reader r;
	struct list la, lb, all;
	const sl_ts_t now = 250; /* TTL 100: entries written before 150 have expired */

	populate(a, 3000, 40000);
	sl_snap_init(&s1);
	sl_snap_init(&s2);
	T_ASSERT(sl_kstate_snapshot(a, now, &s1) == 0);
	sl_snap_reader_init(&r, s1.data, s1.len);
	T_ASSERT(sl_kstate_restore(b, &r, 0, MAX_PAR) == 0);
	T_ASSERT(r.pos == s1.len && r.error == 0);
	T_ASSERT(strcmp(sl_kstate_error(b), "") == 0);

	la = list_of(a, now, 0, MAX_PAR);
	lb = list_of(b, SL_TS_MIN, 0, MAX_PAR); /* everything restored */
	all = list_of(a, SL_TS_MIN, 0, MAX_PAR);
	T_ASSERT(!la.bad_kg && !lb.bad_kg);
	T_ASSERT(la.n > 1000 && all.n > la.n); /* some expired ones were left out */
	list_eq(&la, &lb);
	T_ASSERT_EQ_I64(sl_kstate_entries(b), lb.n);

	/* the restored state reads like the original through the normal API */
	{
		uint8_t kb[512];
		int hits = 0;

		for (uint64_t i = 0; i < 3000; i++) {
			uint32_t kl = key_of(i, kb);
			struct sl_kkey k = { sl_hash_bytes(kb, kl), kb, kl };
			uint64_t *x = sl_kstate_value_get(a, V, &k, now);
			uint64_t *y = sl_kstate_value_get(b, V, &k, now);

			T_ASSERT((x == NULL) == (y == NULL));
			if (x) {
				T_ASSERT(*x == *y);
				hits++;
			}
		}
		T_ASSERT(hits > 100);
	}

	/* snapshot of the restored state: the same entries, so the same bytes once the walk
	 * order is the same -- compare by content, the walk order may differ */
	T_ASSERT(sl_kstate_snapshot(b, now, &s2) == 0);
	T_ASSERT_EQ_I64(s2.len, s1.len);

	list_free(&la);
	list_free(&lb);
	list_free(&all);
	sl_snap_free(&s1);
	sl_snap_free(&s2);
	sl_kstate_destroy(a);
	sl_kstate_destroy(b);
}

static void test_rescale(void)
{
	struct sl_kstate *orig = make(descs, NDESC, MAX_PAR), *old[3], *neu[2];
	struct sl_snap_buf all, snap;
	struct sl_snap_reader r;
	struct list lo_, ln[2];
	uint32_t lo, hi;
	const sl_ts_t now = 200;
	size_t total = 0;

	populate(orig, 4000, 30000);
	sl_snap_init(&all);
	sl_snap_init(&snap);
	T_ASSERT(sl_kstate_snapshot(orig, now, &all) == 0);
	/* three old instances, each with its key groups of the original */
	for (uint32_t s = 0; s < 3; s++) {
		old[s] = make(descs, NDESC, MAX_PAR);
		range_of(s, 3, &lo, &hi);
		sl_snap_reader_init(&r, all.data, all.len);
		T_ASSERT(sl_kstate_restore(old[s], &r, lo, hi) == 0);
		total += sl_kstate_entries(old[s]);
		/* their snapshots one after another, as the coordinator hands them over */
		T_ASSERT(sl_kstate_snapshot(old[s], now, &snap) == 0);
	}
	/* two new instances: each reads all three snapshots, keeping its own key groups */
	for (uint32_t s = 0; s < 2; s++) {
		neu[s] = make(descs, NDESC, MAX_PAR);
		range_of(s, 2, &lo, &hi);
		sl_snap_reader_init(&r, snap.data, snap.len);
		for (int i = 0; i < 3; i++)
			T_ASSERT(sl_kstate_restore(neu[s], &r, lo, hi) == 0);
		T_ASSERT(r.pos == r.len);
		ln[s] = list_of(neu[s], SL_TS_MIN, lo, hi);
		T_ASSERT(!ln[s].bad_kg);
		T_ASSERT(ln[s].n > 0);
	}
	lo_ = list_of(orig, now, 0, MAX_PAR);
	T_ASSERT_EQ_I64(total, lo_.n);
	{
		/* the union of the two, sorted, is the original: each entry exactly once */
		struct list u = { 0 };

		for (int s = 0; s < 2; s++)
			for (size_t i = 0; i < ln[s].n; i++)
				push(&u, ln[s].s[i]);
		qsort(u.s, u.n, sizeof(*u.s), cmp_str);
		list_eq(&lo_, &u);
		free(u.s);
	}
	for (int s = 0; s < 2; s++) {
		list_free(&ln[s]);
		sl_kstate_destroy(neu[s]);
	}
	for (int s = 0; s < 3; s++)
		sl_kstate_destroy(old[s]);
	list_free(&lo_);
	sl_snap_free(&all);
	sl_snap_free(&snap);
	sl_kstate_destroy(orig);
}

/* ---- corrupt input -------------------------------------------------------------------- */

/* A state restored from damaged bytes must be whole: its own snapshot restores to the same
 * entries and its counter matches. */
static void check_consistent(struct sl_kstate *ks)
{
	struct sl_kstate *c = make(descs, NDESC, MAX_PAR);
	struct sl_snap_buf b;
	struct sl_snap_reader r;
	struct list l1, l2;

	l1 = list_of(ks, SL_TS_MIN, 0, MAX_PAR);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), l1.n);
	sl_snap_init(&b);
	T_ASSERT(sl_kstate_snapshot(ks, SL_TS_MIN, &b) == 0);
	sl_snap_reader_init(&r, b.data, b.len);
	T_ASSERT(sl_kstate_restore(c, &r, 0, MAX_PAR) == 0);
	l2 = list_of(c, SL_TS_MIN, 0, MAX_PAR);
	list_eq(&l1, &l2);
	list_free(&l1);
	list_free(&l2);
	sl_snap_free(&b);
	sl_kstate_destroy(c);
}

static void test_corrupt(void)
{
	struct sl_kstate *a = make(descs, NDESC, MAX_PAR), *b;
	struct sl_snap_buf s;
	struct sl_snap_reader r;
	uint8_t *copy;
	int ok = 0, refused = 0;

	populate(a, 12, 40);
	sl_snap_init(&s);
	T_ASSERT(sl_kstate_snapshot(a, 0, &s) == 0);
	T_ASSERT(s.len > 200 && s.len < 4096);
	copy = malloc(s.len);
	T_ASSERT(copy);

	/* every truncation: refused, nothing restored. The copy is exactly `len` bytes on the
	 * heap so ASan sees any read past it. */
	for (size_t len = 0; len < s.len; len++) {
		uint8_t *cut = malloc(len ? len : 1);

		memcpy(cut, s.data, len);
		b = make(descs, NDESC, MAX_PAR);
		sl_snap_reader_init(&r, cut, len);
		T_ASSERT(sl_kstate_restore(b, &r, 0, MAX_PAR) == -EINVAL);
		T_ASSERT(r.error == -EINVAL && sl_kstate_entries(b) == 0);
		T_ASSERT(strstr(sl_kstate_error(b), "corrupt"));
		sl_kstate_destroy(b);
		free(cut);
	}

	/* random flips of 1-4 bytes */
	for (int t = 0; t < 20000; t++) {
		int nflip = 1 + (int)(rnd() % 4), rc;

		memcpy(copy, s.data, s.len);
		for (int f = 0; f < nflip; f++) {
			size_t at = rnd() % s.len;

			/* half the time spare the section header, so the body parser is exercised
			 */
			if (t % 2 && at < 16)
				at += 16;
			copy[at] ^= (uint8_t)(1 + rnd() % 255);
		}
		b = make(descs, NDESC, MAX_PAR);
		sl_snap_reader_init(&r, copy, s.len);
		rc = sl_kstate_restore(b, &r, 0, MAX_PAR);
		T_ASSERT(rc == 0 || rc == -EINVAL || rc == -EPROTO);
		if (rc) {
			T_ASSERT(sl_kstate_entries(b) == 0);
			T_ASSERT(sl_kstate_error(b)[0] != '\0');
			refused++;
		} else {
			check_consistent(b);
			ok++;
		}
		sl_kstate_destroy(b);
	}
	/* flips inside values restore (changed) values; flips elsewhere are caught */
	T_ASSERT(ok > 0 && refused > 0);
	printf("byte flips: %d restored (the flips hit key or value bytes), %d refused\n", ok,
	       refused);
	free(copy);
	sl_snap_free(&s);
	sl_kstate_destroy(a);
}

/* ---- layout mismatch ------------------------------------------------------------------ */

static void expect_refused(const struct sl_snap_buf *s, const struct sl_state_desc *d, int n,
			   uint32_t max_par, const char *needle)
{
	struct sl_kstate *b = make(d, n, max_par);
	struct sl_snap_reader r;

	sl_snap_reader_init(&r, s->data, s->len);
	T_ASSERT_EQ_I64(sl_kstate_restore(b, &r, 0, max_par), -EPROTO);
	T_ASSERT(sl_kstate_entries(b) == 0);
	if (!strstr(sl_kstate_error(b), needle)) {
		fprintf(stderr, "message '%s' lacks '%s'\n", sl_kstate_error(b), needle);
		exit(T_EXIT_FAIL);
	}
	printf("refused: %s\n", sl_kstate_error(b));
	sl_kstate_destroy(b);
}

static void test_layout(void)
{
	struct sl_kstate *a = make(descs, NDESC, MAX_PAR);
	struct sl_state_desc d[NDESC + 1];
	struct sl_snap_buf s;
	uint32_t v;

	populate(a, 50, 200);
	sl_snap_init(&s);
	T_ASSERT(sl_kstate_snapshot(a, 0, &s) == 0);

	memcpy(d, descs, sizeof(descs));
	d[VT].value_size = 24;
	expect_refused(&s, d, NDESC, MAX_PAR, "'vt'");
	memcpy(d, descs, sizeof(descs));
	d[M].kind = SL_STATE_VALUE;
	expect_refused(&s, d, NDESC, MAX_PAR, "'m'");
	memcpy(d, descs, sizeof(descs));
	d[MT].ttl_ms = 0;
	expect_refused(&s, d, NDESC, MAX_PAR, "'mt'");
	memcpy(d, descs, sizeof(descs));
	d[V].name = "w";
	expect_refused(&s, d, NDESC, MAX_PAR, "'w'");
	expect_refused(&s, descs, NDESC - 1, MAX_PAR, "'mt'"); /* one fewer in the job */
	memcpy(d, descs, sizeof(descs));
	d[NDESC] = (struct sl_state_desc){ "extra", SL_STATE_MAP, 4, 0 };
	expect_refused(&s, d, NDESC + 1, MAX_PAR, "'extra'");
	expect_refused(&s, descs, NDESC, 256, "max parallelism 128");
	/* a TTL of another length is fine: expiry times are absolute */
	{
		struct sl_kstate *b;
		struct sl_snap_reader r;

		memcpy(d, descs, sizeof(descs));
		d[VT].ttl_ms = 5000;
		b = make(d, NDESC, MAX_PAR);
		sl_snap_reader_init(&r, s.data, s.len);
		T_ASSERT(sl_kstate_restore(b, &r, 0, MAX_PAR) == 0);
		T_ASSERT_EQ_I64(sl_kstate_entries(b), sl_kstate_entries(a));
		sl_kstate_destroy(b);
	}
	/* a newer format version */
	memcpy(&v, s.data + 4, 4);
	v++;
	memcpy(s.data + 4, &v, 4);
	expect_refused(&s, descs, NDESC, MAX_PAR, "version 3");
	sl_snap_free(&s);
	sl_kstate_destroy(a);
}

/* ---- copy-on-write snapshots ---------------------------------------------------------- */

static bool scribble(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	memset(value, (int)(uintptr_t)arg, 8);
	return true;
}

/* One random change of ks through the state calls, at processing time now. */
static void mutate(struct sl_kstate *ks, int nkeys, sl_ts_t now)
{
	uint8_t kb[512], mk[64];
	uint32_t kl = key_of(rnd() % (uint64_t)nkeys, kb), mkl = 1 + (uint32_t)(rnd() % 20);
	struct sl_kkey k = { sl_hash_bytes(kb, kl), kb, kl };
	int id = (int)(rnd() % NDESC);
	bool val = descs[id].kind == SL_STATE_VALUE;
	uint8_t *v = NULL;

	for (uint32_t j = 0; j < mkl; j++)
		mk[j] = (uint8_t)(rnd() % 4);
	switch (rnd() % 5) {
	case 0: /* put */
		v = val ? sl_kstate_value_put(ks, id, &k, now)
			: sl_kstate_map_put(ks, id, &k, mk, mkl, now);
		break;
	case 1: /* write through a get pointer */
		v = val ? sl_kstate_value_get(ks, id, &k, now)
			: sl_kstate_map_get(ks, id, &k, mk, mkl, now);
		break;
	case 2:
		if (val)
			sl_kstate_value_clear(ks, id, &k);
		else
			sl_kstate_map_remove(ks, id, &k, mk, mkl);
		return;
	case 3:
		if (val)
			sl_kstate_value_clear(ks, id, &k);
		else
			sl_kstate_map_clear(ks, id, &k);
		return;
	default:
		if (!val)
			sl_kstate_map_foreach(ks, id, &k, scribble, (void *)(uintptr_t)(rnd() & 255),
					      now);
		return;
	}
	if (v)
		for (uint32_t j = 0; j < descs[id].value_size; j++)
			v[j] = (uint8_t)rnd();
}

static struct list restored_list(const struct sl_snap_buf *b)
{
	struct sl_kstate *x = make(descs, NDESC, MAX_PAR);
	struct sl_snap_reader r;
	struct list l;

	sl_snap_reader_init(&r, b->data, b->len);
	T_ASSERT(sl_kstate_restore(x, &r, 0, MAX_PAR) == 0);
	T_ASSERT(r.pos == b->len);
	l = list_of(x, SL_TS_MIN, 0, MAX_PAR);
	sl_kstate_destroy(x);
	return l;
}

static void test_cow(void)
{
	for (int round = 0; round < 4; round++) {
		struct sl_kstate *a = make(descs, NDESC, MAX_PAR);
		sl_ts_t now = 250;

		populate(a, 3000, 30000);
		for (int epoch = 0; epoch < 3; epoch++, now += 40) {
			struct sl_snap_buf ref, cow;
			struct list lr, lc;
			int rc, steps = 0;

			sl_snap_init(&ref);
			sl_snap_init(&cow);
			T_ASSERT(sl_kstate_snapshot(a, now, &ref) == 0);
			rc = sl_kstate_snapshot_begin(a, now, &cow);
			while (rc == 1) {
				T_ASSERT(sl_kstate_snapshot_pending(a));
				/* times past `now`: TTL entries live at begin expire and go on access */
				for (int j = (int)(rnd() % 60); j > 0; j--)
					mutate(a, 4000, now + (sl_ts_t)(rnd() % 150));
				rc = sl_kstate_snapshot_step(a, 1 + rnd() % 6000);
				steps++;
			}
			T_ASSERT(rc == 0);
			T_ASSERT(!sl_kstate_snapshot_pending(a));
			T_ASSERT(steps > 20);
			lr = restored_list(&ref);
			lc = restored_list(&cow);
			T_ASSERT(lr.n > 500);
			list_eq(&lr, &lc);
			list_free(&lr);
			list_free(&lc);
			sl_snap_free(&ref);
			sl_snap_free(&cow);
			for (int j = 0; j < 2000; j++) /* changes between snapshots */
				mutate(a, 4000, now);
		}
		sl_kstate_destroy(a);
	}
}

/* ---- timers --------------------------------------------------------------------------- */

struct tlist {
	struct sl_timer *t;
	uint8_t (*k)[64];
	size_t n;
};

/* Pops every timer (in firing order), copying keys. */
static struct tlist drain(struct sl_timers *tm)
{
	struct tlist l = { 0 };
	size_t cap = sl_timers_count(tm) + 1;
	struct sl_timer t;

	l.t = calloc(cap, sizeof(*l.t));
	l.k = calloc(cap, sizeof(*l.k));
	T_ASSERT(l.t && l.k);
	while (sl_timers_pop(tm, SL_TS_MAX, &t)) {
		T_ASSERT(l.n < cap && t.klen <= 64);
		memcpy(l.k[l.n], t.key, t.klen);
		l.t[l.n] = t;
		l.t[l.n].key = l.k[l.n];
		l.n++;
	}
	return l;
}

static int cmp_timer(const void *a, const void *b)
{
	const struct sl_timer *x = a, *y = b;
	int c;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	c = memcmp(x->key, y->key, x->klen < y->klen ? x->klen : y->klen);
	if (c || x->klen != y->klen)
		return c ? c : (x->klen < y->klen ? -1 : 1);
	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static void tlist_eq(const struct tlist *a, const struct tlist *b)
{
	T_ASSERT_EQ_I64(a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		T_ASSERT(cmp_timer(&a->t[i], &b->t[i]) == 0);
}

static void tlist_free(struct tlist *l)
{
	free(l->t);
	free(l->k);
}

static struct sl_timers *random_timers(int n)
{
	struct sl_timers *tm = sl_timers_create();
	uint8_t kb[512];

	T_ASSERT(tm);
	for (int i = 0; i < n; i++) {
		uint32_t kl = key_of(rnd() % 500, kb) % 60 + 1;

		T_ASSERT(sl_timers_add(tm, (sl_ts_t)(rnd() % 1000) - 500, sl_hash_bytes(kb, kl), kb,
				       kl, rnd() % 3) == 0);
	}
	return tm;
}

static void test_timers(void)
{
	struct sl_timers *a = random_timers(5000), *b = sl_timers_create(), *old[3], *neu[2];
	struct sl_snap_buf s, s3;
	struct sl_snap_reader r;
	struct tlist la, lb, ln[2], u;
	uint32_t lo, hi;

	sl_snap_init(&s);
	sl_snap_init(&s3);
	T_ASSERT(sl_timers_snapshot(a, MAX_PAR, &s) == 0);
	sl_snap_reader_init(&r, s.data, s.len);
	T_ASSERT(sl_timers_restore(b, &r, MAX_PAR, 0, MAX_PAR) == 0);
	T_ASSERT(r.pos == s.len);
	T_ASSERT_EQ_I64(sl_timers_count(b), sl_timers_count(a));

	/* 1 -> 3 -> 2 instances */
	for (uint32_t i = 0; i < 3; i++) {
		old[i] = sl_timers_create();
		range_of(i, 3, &lo, &hi);
		sl_snap_reader_init(&r, s.data, s.len);
		T_ASSERT(sl_timers_restore(old[i], &r, MAX_PAR, lo, hi) == 0);
		T_ASSERT(sl_timers_snapshot(old[i], MAX_PAR, &s3) == 0);
	}
	for (uint32_t i = 0; i < 2; i++) {
		neu[i] = sl_timers_create();
		range_of(i, 2, &lo, &hi);
		sl_snap_reader_init(&r, s3.data, s3.len);
		for (int j = 0; j < 3; j++)
			T_ASSERT(sl_timers_restore(neu[i], &r, MAX_PAR, lo, hi) == 0);
		ln[i] = drain(neu[i]);
		for (size_t j = 0; j < ln[i].n; j++) {
			uint32_t kg = sl_key_group(ln[i].t[j].hash, MAX_PAR);

			T_ASSERT(kg >= lo && kg < hi);
		}
	}
	la = drain(a);
	lb = drain(b);
	tlist_eq(&la, &lb); /* same timers, same firing order */
	u.n = ln[0].n + ln[1].n;
	u.t = calloc(u.n, sizeof(*u.t));
	T_ASSERT(u.t);
	memcpy(u.t, ln[0].t, ln[0].n * sizeof(*u.t));
	memcpy(u.t + ln[0].n, ln[1].t, ln[1].n * sizeof(*u.t));
	qsort(u.t, u.n, sizeof(*u.t), cmp_timer);
	u.k = NULL;
	tlist_eq(&la, &u);

	/* another max parallelism is refused */
	sl_snap_reader_init(&r, s.data, s.len);
	T_ASSERT(sl_timers_restore(b, &r, 64, 0, 64) == -EPROTO);
	T_ASSERT(sl_timers_count(b) == 0);

	/* corrupt: every cut refused with nothing added, flips never crash */
	{
		struct sl_timers *small = random_timers(8), *c;
		struct sl_snap_buf t;
		uint8_t *copy;

		sl_snap_init(&t);
		T_ASSERT(sl_timers_snapshot(small, MAX_PAR, &t) == 0);
		copy = malloc(t.len);
		T_ASSERT(copy);
		for (size_t len = 0; len < t.len; len++) {
			uint8_t *cut = malloc(len ? len : 1);

			memcpy(cut, t.data, len);
			c = sl_timers_create();
			sl_snap_reader_init(&r, cut, len);
			T_ASSERT(sl_timers_restore(c, &r, MAX_PAR, 0, MAX_PAR) == -EINVAL);
			T_ASSERT(sl_timers_count(c) == 0);
			sl_timers_destroy(c);
			free(cut);
		}
		for (int i = 0; i < 20000; i++) {
			int rc;

			memcpy(copy, t.data, t.len);
			copy[16 + rnd() % (t.len - 16)] ^= (uint8_t)(1 + rnd() % 255);
			c = sl_timers_create();
			sl_snap_reader_init(&r, copy, t.len);
			rc = sl_timers_restore(c, &r, MAX_PAR, 0, MAX_PAR);
			T_ASSERT(rc == 0 || rc == -EINVAL || rc == -EPROTO);
			if (rc)
				T_ASSERT(sl_timers_count(c) == 0);
			else
				T_ASSERT(sl_timers_count(c) <= 8);
			sl_timers_destroy(c);
		}
		free(copy);
		sl_snap_free(&t);
		sl_timers_destroy(small);
	}

	for (int i = 0; i < 2; i++) {
		tlist_free(&ln[i]);
		sl_timers_destroy(neu[i]);
	}
	for (int i = 0; i < 3; i++)
		sl_timers_destroy(old[i]);
	free(u.t);
	tlist_free(&la);
	tlist_free(&lb);
	sl_snap_free(&s);
	sl_snap_free(&s3);
	sl_timers_destroy(a);
	sl_timers_destroy(b);
}

/* ---- throughput ----------------------------------------------------------------------- */

/* CPU time of this thread: the figures stay meaningful on a machine busy with other work
 * (page faults are counted; time spent waiting for the CPU is not). */
static double secs(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void bench_one(const char *what, const struct sl_state_desc *d, int id, uint64_t nkeys,
		      uint32_t per_key)
{
	struct sl_kstate *a = make(d, 1, MAX_PAR), *b = make(d, 1, MAX_PAR);
	struct sl_snap_buf s;
	struct sl_snap_reader r;
	double t0, t1, t2, tb, best = 1e9;
	size_t n;

	tb = secs();
	for (uint64_t i = 0; i < nkeys; i++) {
		struct sl_kkey k = { sl_hash_bytes(&i, 8), &i, 8 };

		for (uint32_t j = 0; j < per_key; j++) {
			uint64_t *v = per_key == 1 ? sl_kstate_value_put(a, id, &k, 0)
						   : sl_kstate_map_put(a, id, &k, &j, 4, 0);

			T_ASSERT(v);
			v[0] = i;
		}
	}
	tb = secs() - tb;
	n = sl_kstate_entries(a);
	sl_snap_init(&s);
	/* best of three: the first also pays the buffer's growth, later ones reuse it */
	for (int rep = 0; rep < 3; rep++) {
		sl_snap_reset(&s);
		t0 = secs();
		T_ASSERT(sl_kstate_snapshot(a, 0, &s) == 0);
		t1 = secs() - t0;
		if (t1 < best)
			best = t1;
	}
	t1 = secs();
	sl_snap_reader_init(&r, s.data, s.len);
	T_ASSERT(sl_kstate_restore(b, &r, 0, MAX_PAR) == 0);
	t2 = secs() - t1;
	T_ASSERT_EQ_I64(sl_kstate_entries(b), n);
	printf("%s: %zu entries, %.1f MB: snapshot %.1f ms CPU = %.0f MB/s, %.1f M entries/s; "
	       "restore %.1f ms = %.1f M entries/s (building it by puts: %.1f ms)\n",
	       what, n, (double)s.len / 1e6, best * 1e3, (double)s.len / 1e6 / best,
	       (double)n / 1e6 / best, t2 * 1e3, (double)n / 1e6 / t2, tb * 1e3);
	sl_snap_free(&s);
	sl_kstate_destroy(a);
	sl_kstate_destroy(b);
}

static void bench(void)
{
	static const struct sl_state_desc v[] = { { "count", SL_STATE_VALUE, 16, 0 } };
	static const struct sl_state_desc m[] = { { "set", SL_STATE_MAP, 8, 0 } };

	bench_one("value state, 8-byte keys, 16-byte values", v, 0, 1000000, 1);
	bench_one("map state, 100k keys x 10 map entries", m, 0, 100000, 10);
}

int main(int argc, char **argv)
{
	test_round_trip();
	test_rescale();
	test_corrupt();
	test_layout();
	test_cow();
	test_timers();
	if (argc < 2 || strcmp(argv[1], "--no-bench"))
		bench();
	return T_EXIT_PASS;
}
