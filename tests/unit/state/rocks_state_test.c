/*
 * rocks_state_test.c - keyed state on the RocksDB backend behaves as on the heap: value and
 * map semantics, TTL (never returned once expired; dropped by the compaction filter), a
 * random run against a heap kstate as the oracle with a cache small enough that entries are
 * evicted and read back all the time (writes through a get pointer included), two operator
 * instances sharing one db, and snapshots crossing backends both ways (heap -> rocks,
 * rocks -> heap, rocks -> rocks rescaled by key groups).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "rocks_common.h"

#define MAX_PAR 128

enum { V = 0, VTTL, M, MTTL, NDESC };

static const struct sl_state_desc descs[] = {
	{ "v", SL_STATE_VALUE, 8, 0 },
	{ "vttl", SL_STATE_VALUE, 16, 100 },
	{ "m", SL_STATE_MAP, 8, 0 },
	{ "mttl", SL_STATE_MAP, 8, 100 },
};

static struct sl_kkey key(const char *s)
{
	uint32_t n = (uint32_t)strlen(s);

	return (struct sl_kkey){ sl_hash_bytes(s, n), s, n };
}

static uint64_t rng = 0x1234567887654321ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct sl_kstate *mk(struct sl_rocks_db *db, uint32_t uid)
{
	int err;
	struct sl_kstate *ks = sl_kstate_create_in(db, uid, descs, NDESC, MAX_PAR, &err);

	T_ASSERT(ks && err == 0);
	return ks;
}

static bool count_cb(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	(*(int *)arg)++;
	return true;
}

static bool drop_odd(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	void **ctx = arg;
	struct sl_kstate *ks = ctx[0];
	const struct sl_kkey *k = ctx[1];

	if (*(uint64_t *)value & 1)
		sl_kstate_map_remove(ks, M, k, mkey, mklen);
	else
		*(uint64_t *)value += 100; /* a write through the foreach's pointer */
	return true;
}

static void test_basics(struct sl_rocks_db *db)
{
	struct sl_kstate *ks = mk(db, 1);
	struct sl_kkey a = key("alice"), b = key("bob");
	sl_ts_t t0 = wall_now();
	uint64_t *v;
	int n = 0;
	void *ctx[2] = { ks, &a };

	T_ASSERT(sl_kstate_value_get(ks, V, &a, 0) == NULL);
	v = sl_kstate_value_put(ks, V, &a, 0);
	T_ASSERT(v && *v == 0);
	*v = 42;
	*(uint64_t *)sl_kstate_value_put(ks, V, &b, 0) = 7;
	T_ASSERT(*(uint64_t *)sl_kstate_value_get(ks, V, &a, 0) == 42);
	T_ASSERT(*(uint64_t *)sl_kstate_value_put(ks, V, &a, 0) == 42);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 2);
	T_ASSERT(sl_rocks_db_flush(db) == 0);
	sl_kstate_value_clear(ks, V, &a);
	sl_kstate_value_clear(ks, V, &a);
	T_ASSERT(sl_kstate_value_get(ks, V, &a, 0) == NULL);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 1);
	/* a wrong kind or id gives nothing */
	T_ASSERT(sl_kstate_value_get(ks, M, &a, 0) == NULL);
	T_ASSERT(sl_kstate_map_put(ks, V, &a, "x", 1, 0) == NULL);
	T_ASSERT(sl_kstate_value_put(ks, 9, &a, 0) == NULL);

	/* maps */
	for (uint64_t i = 0; i < 10; i++)
		*(uint64_t *)sl_kstate_map_put(ks, M, &a, &i, 8, 0) = i;
	T_ASSERT(sl_rocks_db_flush(db) == 0);
	sl_kstate_map_foreach(ks, M, &a, drop_odd, ctx, 0);
	sl_kstate_map_foreach(ks, M, &a, count_cb, &n, 0);
	T_ASSERT_EQ_I64(n, 5);
	for (uint64_t i = 0; i < 10; i++) {
		uint64_t *x = sl_kstate_map_get(ks, M, &a, &i, 8, 0);

		T_ASSERT((x != NULL) == !(i & 1));
		T_ASSERT(!x || *x == i + 100);
	}
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 1 + 5);
	sl_kstate_map_clear(ks, M, &a);
	n = 0;
	sl_kstate_map_foreach(ks, M, &a, count_cb, &n, 0);
	T_ASSERT_EQ_I64(n, 0);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 1);

	/* TTL: OnCreateAndWrite in processing time; never returned once expired */
	v = sl_kstate_value_put(ks, VTTL, &a, t0);
	v[0] = 5;
	T_ASSERT(sl_kstate_value_get(ks, VTTL, &a, t0 + 99) != NULL);
	T_ASSERT(sl_kstate_value_get(ks, VTTL, &a, t0 + 100) == NULL);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 1);
	v = sl_kstate_value_put(ks, VTTL, &a, t0 + 100);
	T_ASSERT(v && v[0] == 0); /* recreated, zeroed */
	*(uint64_t *)sl_kstate_map_put(ks, MTTL, &a, "k", 1, t0) = 1;
	T_ASSERT(sl_rocks_db_flush(db) == 0);
	T_ASSERT(sl_kstate_map_get(ks, MTTL, &a, "k", 1, t0 + 150) == NULL);
	sl_kstate_destroy(ks);
}

/* The same random operations on a heap kstate and a rocks one, compared on every read and
 * by content at the end. The db's cache budget is far below the state, so most keys are
 * evicted and read back between touches. */
static void test_random(struct sl_rocks_db *db)
{
	struct sl_kstate *h = sl_kstate_create(descs, NDESC, MAX_PAR, &(int){ 0 });
	struct sl_kstate *r = mk(db, 2);
	sl_ts_t now = wall_now();
	const int nk = 60000;
	char kb[32];
	struct dump dh, dr;

	T_ASSERT(h);
	for (int step = 0; step < 600000; step++) {
		int k = (int)(rnd() % nk), op = (int)(rnd() % 12), id = (int)(rnd() % NDESC);
		uint64_t mk8 = rnd() % 6, x = rnd();
		struct sl_kkey kk;
		uint64_t *p, *q;

		snprintf(kb, sizeof(kb), "key-%d", k);
		kk = key(kb);
		if (step % 1000 == 0)
			now += 7;
		if (descs[id].kind == SL_STATE_VALUE) {
			switch (op % 4) {
			case 0:
			case 1:
				p = sl_kstate_value_put(h, id, &kk, now);
				q = sl_kstate_value_put(r, id, &kk, now);
				T_ASSERT(p && q && *p == *q);
				*p = *q = x;
				break;
			case 2:
				p = sl_kstate_value_get(h, id, &kk, now);
				q = sl_kstate_value_get(r, id, &kk, now);
				T_ASSERT((p == NULL) == (q == NULL));
				if (p) {
					T_ASSERT(*p == *q);
					*p += 1; /* through the get pointer: must be kept */
					*q += 1;
				}
				break;
			default:
				sl_kstate_value_clear(h, id, &kk);
				sl_kstate_value_clear(r, id, &kk);
			}
		} else {
			int cnt_h = 0, cnt_r = 0;

			switch (op % 6) {
			case 0:
			case 1:
				p = sl_kstate_map_put(h, id, &kk, &mk8, 8, now);
				q = sl_kstate_map_put(r, id, &kk, &mk8, 8, now);
				T_ASSERT(p && q && *p == *q);
				*p = *q = x;
				break;
			case 2:
				p = sl_kstate_map_get(h, id, &kk, &mk8, 8, now);
				q = sl_kstate_map_get(r, id, &kk, &mk8, 8, now);
				T_ASSERT((p == NULL) == (q == NULL));
				if (p) {
					T_ASSERT(*p == *q);
					*p ^= 0xff;
					*q ^= 0xff;
				}
				break;
			case 3:
				sl_kstate_map_remove(h, id, &kk, &mk8, 8);
				sl_kstate_map_remove(r, id, &kk, &mk8, 8);
				break;
			case 4:
				sl_kstate_map_foreach(h, id, &kk, count_cb, &cnt_h, now);
				sl_kstate_map_foreach(r, id, &kk, count_cb, &cnt_r, now);
				T_ASSERT_EQ_I64(cnt_h, cnt_r);
				break;
			default:
				if (rnd() % 8 == 0) {
					sl_kstate_map_clear(h, id, &kk);
					sl_kstate_map_clear(r, id, &kk);
				}
			}
		}
		if (step % 150000 == 0)
			T_ASSERT(sl_rocks_db_flush(db) == 0);
	}
	dh = dump_of(h, descs, NDESC, now, 0, MAX_PAR);
	dr = dump_of(r, descs, NDESC, now, 0, MAX_PAR);
	T_ASSERT(dh.n > 20000);
	dump_eq(&dh, &dr);
	dump_free(&dh);
	dump_free(&dr);
	T_ASSERT(sl_rocks_db_error(db)[0] == '\0');
	sl_kstate_destroy(h);
	sl_kstate_destroy(r);
}

/* Two instances on one db see only their own state. */
static void test_isolation(struct sl_rocks_db *db)
{
	struct sl_kstate *a = mk(db, 10), *b = mk(db, 11);
	struct sl_kkey k = key("same");
	int err;

	T_ASSERT(sl_kstate_create_in(db, 10, descs, NDESC, MAX_PAR, &err) == NULL);
	T_ASSERT(err == -EINVAL);
	*(uint64_t *)sl_kstate_value_put(a, V, &k, 0) = 1;
	T_ASSERT(sl_rocks_db_flush(db) == 0);
	T_ASSERT(sl_kstate_value_get(b, V, &k, 0) == NULL);
	*(uint64_t *)sl_kstate_value_put(b, V, &k, 0) = 2;
	T_ASSERT(sl_rocks_db_flush(db) == 0);
	T_ASSERT(*(uint64_t *)sl_kstate_value_get(a, V, &k, 0) == 1);
	sl_kstate_destroy(a);
	sl_kstate_destroy(b);
}

static void populate(struct sl_kstate *ks, int nkeys, sl_ts_t now)
{
	char kb[32];

	for (int i = 0; i < nkeys; i++) {
		struct sl_kkey k;
		uint64_t *v;

		snprintf(kb, sizeof(kb), "p%d", i);
		k = key(kb);
		*(uint64_t *)sl_kstate_value_put(ks, V, &k, now) = (uint64_t)i;
		v = sl_kstate_value_put(ks, VTTL, &k, i % 3 ? now : now - 200); /* 1/3 expired */
		v[0] = (uint64_t)i * 3;
		v[1] = 9;
		for (uint64_t j = 0; j < (uint64_t)(i % 4); j++) {
			*(uint64_t *)sl_kstate_map_put(ks, M, &k, &j, 8, now) = j + (uint64_t)i;
			*(uint64_t *)sl_kstate_map_put(ks, MTTL, &k, &j, 8, now) = j;
		}
	}
}

static void restore_into(struct sl_kstate *dst, const struct sl_kstate *src, sl_ts_t now,
			 uint32_t lo, uint32_t hi)
{
	struct sl_snap_buf s;
	struct sl_snap_reader rd;

	sl_snap_init(&s);
	T_ASSERT(sl_kstate_snapshot(src, now, &s) == 0);
	sl_snap_reader_init(&rd, s.data, s.len);
	T_ASSERT(sl_kstate_restore(dst, &rd, lo, hi) == 0);
	T_ASSERT(rd.pos == s.len);
	sl_snap_free(&s);
}

/* heap -> rocks -> heap, and rocks split in two by key groups: the same entries. */
static void test_snapshots(struct sl_rocks_db *db)
{
	sl_ts_t now = wall_now();
	struct sl_kstate *h = sl_kstate_create(descs, NDESC, MAX_PAR, &(int){ 0 });
	struct sl_kstate *h2 = sl_kstate_create(descs, NDESC, MAX_PAR, &(int){ 0 });
	struct sl_kstate *r = mk(db, 20), *ra = mk(db, 21), *rb = mk(db, 22);
	struct dump d0, d1, d2, da, db_, d0a, d0b;
	struct sl_snap_buf s;
	struct sl_snap_reader rd;

	populate(h, 20000, now);
	restore_into(r, h, now, 0, MAX_PAR);
	restore_into(h2, r, now, 0, MAX_PAR);
	restore_into(ra, r, now, 0, 50);
	restore_into(rb, r, now, 50, MAX_PAR);
	d0 = dump_of(h, descs, NDESC, now, 0, MAX_PAR);
	d1 = dump_of(r, descs, NDESC, now, 0, MAX_PAR);
	d2 = dump_of(h2, descs, NDESC, now, 0, MAX_PAR);
	T_ASSERT(d0.n > 30000);
	dump_eq(&d0, &d1);
	dump_eq(&d0, &d2);
	da = dump_of(ra, descs, NDESC, now, 0, MAX_PAR);
	db_ = dump_of(rb, descs, NDESC, now, 0, MAX_PAR);
	d0a = dump_of(h, descs, NDESC, now, 0, 50);
	d0b = dump_of(h, descs, NDESC, now, 50, MAX_PAR);
	dump_eq(&da, &d0a);
	dump_eq(&db_, &d0b);
	T_ASSERT(da.n > 0 && db_.n > 0);
	T_ASSERT_EQ_I64(sl_kstate_entries(ra) + sl_kstate_entries(rb), sl_kstate_entries(r));

	/* the restored rocks state answers like the original */
	for (int i = 0; i < 20000; i += 7) {
		char kb[32];
		struct sl_kkey k;
		uint64_t *x, *y;

		snprintf(kb, sizeof(kb), "p%d", i);
		k = key(kb);
		x = sl_kstate_value_get(h, VTTL, &k, now);
		y = sl_kstate_value_get(r, VTTL, &k, now);
		T_ASSERT((x == NULL) == (y == NULL) && (x == NULL) == (i % 3 == 0));
		T_ASSERT(!x || (x[0] == y[0] && x[1] == y[1]));
	}

	/* a layout mismatch is refused by name, as on the heap */
	{
		static const struct sl_state_desc other[] = {
			{ "v", SL_STATE_VALUE, 16, 0 },
		};
		int err;
		struct sl_kstate *bad = sl_kstate_create_in(db, 23, other, 1, MAX_PAR, &err);

		sl_snap_init(&s);
		T_ASSERT(sl_kstate_snapshot(h, now, &s) == 0);
		sl_snap_reader_init(&rd, s.data, s.len);
		T_ASSERT(sl_kstate_restore(bad, &rd, 0, MAX_PAR) == -EPROTO);
		T_ASSERT(strstr(sl_kstate_error(bad), "'v'"));
		T_ASSERT_EQ_I64(sl_kstate_entries(bad), 0);
		sl_snap_free(&s);
		sl_kstate_destroy(bad);
	}
	dump_free(&d0);
	dump_free(&d1);
	dump_free(&d2);
	dump_free(&da);
	dump_free(&db_);
	dump_free(&d0a);
	dump_free(&d0b);
	sl_kstate_destroy(h);
	sl_kstate_destroy(h2);
	sl_kstate_destroy(r);
	sl_kstate_destroy(ra);
	sl_kstate_destroy(rb);
}

static bool count_all(const struct sl_kentry *e, void *arg)
{
	(*(size_t *)arg)++;
	return true;
}

/* Entries expired by the wall clock leave RocksDB at compaction, untouched by anyone. */
static void test_ttl_compaction(struct sl_rocks_db *db)
{
	struct sl_kstate *ks = mk(db, 30);
	sl_ts_t now = wall_now();
	size_t n = 0;
	char kb[32];

	for (int i = 0; i < 1000; i++) {
		struct sl_kkey k;

		snprintf(kb, sizeof(kb), "t%d", i);
		k = key(kb);
		/* half expired an hour ago by the wall clock, half live for an hour */
		sl_kstate_value_put(ks, VTTL, &k, i % 2 ? now + 3600 * 1000 : now - 3600 * 1000);
	}
	sl_kstate_foreach(ks, count_all, &n); /* foreach shows expired entries too */
	T_ASSERT_EQ_I64(n, 1000);
	T_ASSERT(sl_rocks_db_compact(db) == 0);
	n = 0;
	sl_kstate_foreach(ks, count_all, &n);
	T_ASSERT_EQ_I64(n, 500);
	sl_kstate_destroy(ks);
}

int main(void)
{
	char *dir = tmp_dir("rocks-state");
	/* 16 MiB: 4 MiB of entry cache, far below the random test's state */
	struct sl_state_env *env = rocks_env(dir, 16u << 20, 1);
	struct sl_rocks_db *db = rocks_db(env, 0);

	test_basics(db);
	test_isolation(db);
	test_random(db);
	test_snapshots(db);
	test_ttl_compaction(db);
	sl_rocks_db_close(db);
	sl_state_env_close(env);
	rm_rf(dir);
	free(dir);
	return T_EXIT_PASS;
}
