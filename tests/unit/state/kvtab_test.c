/*
 * kvtab_test.c - the heap state table against a plain array oracle: random put/get/remove
 * over keys of every size class and several namespaces, value pointer stability, removal by
 * value, foreach (with removal during the walk), key groups, growth to 1M keys, and keys that
 * share one home slot (one hash; one key with thousands of namespaces; overlapping runs)
 * with probe distances past the 255 the slots can store.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "kvtab.h"
#include "tests/test.h"

#define NKEYS 4000
#define NNS 3
#define MAXPAR 128

struct oracle {
	bool present;
	uint64_t v;  /* expected first 8 value bytes */
	void *ptr;   /* value pointer returned at insertion */
};

static struct oracle orc[NKEYS][NNS];
static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Key bytes for key id: lengths spread over every class, a few near the maximum. */
static uint32_t make_key(uint32_t id, uint8_t *buf)
{
	uint32_t len = id % 97 == 0 ? SL_KVTAB_KEY_MAX - (id % 5) : (id * 7) % 300;

	if (len < 4)
		len = 4;
	for (uint32_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(id * 31 + i * 17 + (id >> 8));
	memcpy(buf, &id, 4);
	return len;
}

static uint64_t ns_of(int n)
{
	return n == 0 ? 0 : (uint64_t)n * 1000;
}

struct walk {
	size_t n;
	bool ok;
	struct sl_kvtab *t;
	bool remove_odd;
};

static bool visit(const struct sl_kv *kv, void *arg)
{
	struct walk *w = arg;
	uint32_t id;
	int n;

	memcpy(&id, kv->key, 4);
	n = kv->ns == 0 ? 0 : (int)(kv->ns / 1000);
	if (id >= NKEYS || n >= NNS || !orc[id][n].present || orc[id][n].ptr != kv->value ||
	    memcmp(kv->value, &orc[id][n].v, 8) != 0 || kv->kg != sl_key_group(kv->hash, MAXPAR))
		w->ok = false;
	w->n++;
	if (w->remove_odd && (id & 1)) {
		sl_kvtab_remove_value(w->t, kv->value);
		orc[id][n].present = false;
	}
	return true;
}

static void check_all(struct sl_kvtab *t)
{
	uint8_t key[SL_KVTAB_KEY_MAX];
	size_t live = 0;

	for (uint32_t id = 0; id < NKEYS; id++) {
		uint32_t len = make_key(id, key);
		uint64_t h = sl_hash_bytes(key, len);

		for (int n = 0; n < NNS; n++) {
			void *v = sl_kvtab_get(t, h, key, len, ns_of(n));

			if (orc[id][n].present) {
				T_ASSERT(v == orc[id][n].ptr);
				T_ASSERT(memcmp(v, &orc[id][n].v, 8) == 0);
				live++;
			} else {
				T_ASSERT(v == NULL);
			}
		}
	}
	T_ASSERT_EQ_I64(sl_kvtab_count(t), live);
}

/* A table of either kind: home slots from the key hash, or spread by (key, ns). */
static struct sl_kvtab *make(bool spread, uint32_t value_size, uint32_t max_par)
{
	return spread ? sl_kvtab_create_spread(value_size, max_par)
		      : sl_kvtab_create(value_size, max_par);
}

static void test_random_oracle(bool spread)
{
	struct sl_kvtab *t = make(spread, 24, MAXPAR);
	uint8_t key[SL_KVTAB_KEY_MAX];
	struct sl_kv kv;

	T_ASSERT(t);
	memset(orc, 0, sizeof(orc));
	for (int round = 0; round < 400000; round++) {
		uint32_t id = (uint32_t)(rnd() % NKEYS), len = make_key(id, key);
		int n = (int)(rnd() % NNS);
		uint64_t h = sl_hash_bytes(key, len), op = rnd() % 10;
		struct oracle *o = &orc[id][n];
		bool created;

		if (op < 5) {
			uint64_t *v = sl_kvtab_put(t, h, key, len, ns_of(n), &created);

			T_ASSERT(v);
			T_ASSERT(created == !o->present);
			if (created) {
				T_ASSERT(v[0] == 0 && v[1] == 0 && v[2] == 0);
				o->ptr = v;
				o->present = true;
			} else {
				T_ASSERT(v == o->ptr);
			}
			v[0] = o->v = rnd();
		} else if (op < 8) {
			T_ASSERT(sl_kvtab_remove(t, h, key, len, ns_of(n)) == o->present);
			o->present = false;
		} else if (o->present) {
			sl_kvtab_entry(t, o->ptr, &kv);
			T_ASSERT(kv.hash == h && kv.ns == ns_of(n) && kv.klen == len);
			T_ASSERT(memcmp(kv.key, key, len) == 0 && kv.value == o->ptr);
			T_ASSERT(kv.kg == sl_key_group(h, MAXPAR));
			sl_kvtab_remove_value(t, o->ptr);
			o->present = false;
		} else {
			T_ASSERT(sl_kvtab_get(t, h, key, len, ns_of(n)) == NULL);
		}
		if (round % 50000 == 0)
			check_all(t);
	}
	check_all(t);

	struct walk w = { 0, true, t, false };
	size_t before = sl_kvtab_count(t);

	sl_kvtab_foreach(t, visit, &w);
	T_ASSERT(w.ok);
	T_ASSERT_EQ_I64(w.n, before);
	/* remove the odd ids while walking */
	w = (struct walk){ 0, true, t, true };
	sl_kvtab_foreach(t, visit, &w);
	T_ASSERT(w.ok);
	T_ASSERT_EQ_I64(w.n, before);
	check_all(t);
	T_ASSERT(sl_kvtab_bytes(t) > sl_kvtab_count(t) * 24);
	sl_kvtab_destroy(t);
}

static void test_limits(void)
{
	struct sl_kvtab *t = sl_kvtab_create(0, 1);
	static uint8_t big[SL_KVTAB_KEY_MAX + 1];
	bool created = true;
	void *v;

	T_ASSERT(t);
	T_ASSERT(sl_kvtab_put(t, 1, big, SL_KVTAB_KEY_MAX + 1, 0, &created) == NULL);
	T_ASSERT(!created);
	v = sl_kvtab_put(t, 1, big, SL_KVTAB_KEY_MAX, 0, &created);
	T_ASSERT(v && created);
	v = sl_kvtab_put(t, 1, big, 0, 0, &created); /* empty key, zero-size value */
	T_ASSERT(v && created);
	T_ASSERT(sl_kvtab_get(t, 1, big, 0, 0) == v);
	T_ASSERT_EQ_I64(sl_kvtab_count(t), 2);
	T_ASSERT(sl_kvtab_create(8, 0) == NULL);
	sl_kvtab_destroy(t);
	sl_kvtab_destroy(NULL);
}

/* Every key hashes to 7: one run far longer than the 255 a slot records. */
static void test_same_hash(void)
{
	enum { N = 1500 };
	struct sl_kvtab *t = sl_kvtab_create(8, 16);
	static bool in[N];

	T_ASSERT(t);
	for (uint32_t i = 0; i < N; i++) {
		bool c;
		uint32_t *v = sl_kvtab_put(t, 7, &i, 4, 0, &c);

		T_ASSERT(v && c);
		*v = i;
		in[i] = true;
	}
	for (int r = 0; r < 6000; r++) {
		uint32_t i = (uint32_t)(rnd() % N);
		bool c;

		if (rnd() & 1) {
			T_ASSERT(sl_kvtab_remove(t, 7, &i, 4, 0) == in[i]);
			in[i] = false;
		} else {
			uint32_t *v = sl_kvtab_put(t, 7, &i, 4, 0, &c);

			T_ASSERT(v && c == !in[i]);
			*v = i;
			in[i] = true;
		}
	}
	size_t live = 0;

	for (uint32_t i = 0; i < N; i++) {
		uint32_t *v = sl_kvtab_get(t, 7, &i, 4, 0);

		T_ASSERT((v != NULL) == in[i]);
		if (v) {
			T_ASSERT(*v == i);
			live++;
		}
	}
	T_ASSERT_EQ_I64(sl_kvtab_count(t), live);
	sl_kvtab_destroy(t);
}

/* One key with thousands of namespaces: in a plain table they all share the key's home
 * slot (one run, probes saturate); a spread table scatters them (short probes). */
static void test_many_ns(bool spread)
{
	enum { N = 3000 };
	struct sl_kvtab *t = make(spread, 8, 16);
	static bool in[N];
	const char key[] = "one-key";
	uint64_t h = sl_hash_bytes(key, 7);

	T_ASSERT(t);
	memset(in, 0, sizeof(in));
	for (int r = 0; r < 30000; r++) {
		uint64_t ns = rnd() % N;
		bool c;

		if (rnd() % 3 == 0) {
			T_ASSERT(sl_kvtab_remove(t, h, key, 7, ns * 1000) == in[ns]);
			in[ns] = false;
		} else {
			uint64_t *v = sl_kvtab_put(t, h, key, 7, ns * 1000, &c);

			T_ASSERT(v && c == !in[ns]);
			*v = ns;
			in[ns] = true;
		}
	}
	for (uint64_t ns = 0; ns < N; ns++) {
		uint64_t *v = sl_kvtab_get(t, h, key, 7, ns * 1000);

		T_ASSERT((v != NULL) == in[ns]);
		T_ASSERT(!v || *v == ns);
	}
	if (spread)
		T_ASSERT(sl_kvtab_max_probe(t) < 32);
	else
		T_ASSERT(sl_kvtab_max_probe(t) == 255);
	sl_kvtab_destroy(t);
}

/* Three keys with 2000 namespaces each and homes close together: runs that overlap and
 * reach past the 255 a slot stores, churned by inserts and deletes. */
static void test_overlapping_runs(bool spread)
{
	static bool in[3][2000];
	struct sl_kvtab *t = make(spread, 8, 1);
	size_t live = 0;

	T_ASSERT(t);
	memset(in, 0, sizeof(in));
	for (int r = 0; r < 400000; r++) {
		int k = (int)(rnd() % 3);
		uint64_t ns = rnd() % 2000, h = (uint64_t)k * 1000;
		uint8_t kb = (uint8_t)k;
		bool c;

		if (rnd() % 3) {
			T_ASSERT(sl_kvtab_put(t, h, &kb, 1, ns, &c));
			T_ASSERT(c == !in[k][ns]);
			live += c;
			in[k][ns] = true;
		} else {
			bool was = sl_kvtab_remove(t, h, &kb, 1, ns);

			T_ASSERT(was == in[k][ns]);
			live -= was;
			in[k][ns] = false;
		}
	}
	T_ASSERT_EQ_I64(sl_kvtab_count(t), live);
	sl_kvtab_destroy(t);
}

static void test_million(void)
{
	enum { N = 1000000 };
	struct sl_kvtab *t = sl_kvtab_create(8, MAXPAR);
	uint8_t key[9] = { 1 };
	size_t kgcount[MAXPAR] = { 0 };

	T_ASSERT(t);
	for (uint64_t i = 0; i < N; i++) {
		bool c;

		memcpy(key + 1, &i, 8);
		uint64_t *v = sl_kvtab_put(t, sl_hash_bytes(key, 9), key, 9, 0, &c);

		T_ASSERT(v && c);
		*v = i * 3;
	}
	T_ASSERT_EQ_I64(sl_kvtab_count(t), N);
	for (uint64_t i = 0; i < N; i++) {
		memcpy(key + 1, &i, 8);
		uint64_t h = sl_hash_bytes(key, 9);
		uint64_t *v = sl_kvtab_get(t, h, key, 9, 0);

		T_ASSERT(v && *v == i * 3);
		kgcount[sl_key_group(h, MAXPAR)]++;
		if (i % 2)
			T_ASSERT(sl_kvtab_remove(t, h, key, 9, 0));
	}
	for (int g = 0; g < MAXPAR; g++) /* key groups are roughly even */
		T_ASSERT(kgcount[g] > N / MAXPAR / 2 && kgcount[g] < N / MAXPAR * 2);
	T_ASSERT_EQ_I64(sl_kvtab_count(t), N / 2);
	for (uint64_t i = 0; i < N; i++) {
		memcpy(key + 1, &i, 8);
		uint64_t *v = sl_kvtab_get(t, sl_hash_bytes(key, 9), key, 9, 0);

		T_ASSERT((v != NULL) == (i % 2 == 0));
	}
	sl_kvtab_destroy(t);
}

/* Clear empties the table at once and its slabs are reused: after a clear, lookups of the
 * old entries miss, the same inserts again take no more memory, new values read as zero, and
 * iteration sees exactly the new entries. Mixed key classes and several rounds, half the
 * entries removed in between, so reused slabs hold stale free-list links. */
static void test_clear(bool spread)
{
	struct sl_kvtab *t = make(spread, 16, MAXPAR);
	uint8_t key[SL_KVTAB_KEY_MAX];
	size_t bytes = 0;

	T_ASSERT(t);
	for (int round = 0; round < 4; round++) {
		memset(orc, 0, sizeof(orc));
		for (uint32_t id = 0; id < NKEYS; id++) {
			uint32_t len = make_key(id, key);
			uint64_t h = sl_hash_bytes(key, len), *v;
			int n = (int)((id + (uint32_t)round) % NNS);
			bool created;

			v = sl_kvtab_put(t, h, key, len, ns_of(n), &created);
			T_ASSERT(v && created && v[0] == 0 && v[1] == 0);
			v[0] = orc[id][n].v = rnd();
			orc[id][n].ptr = v;
			orc[id][n].present = true;
			if (id % 2 && round % 2) {
				sl_kvtab_remove_value(t, v);
				orc[id][n].present = false;
			}
		}
		check_all(t);
		struct walk w = { 0, true, t, false };

		sl_kvtab_foreach(t, visit, &w);
		T_ASSERT(w.ok);
		T_ASSERT_EQ_I64(w.n, sl_kvtab_count(t));
		if (round == 0)
			bytes = sl_kvtab_bytes(t);
		else
			T_ASSERT_EQ_I64(sl_kvtab_bytes(t), bytes);
		sl_kvtab_clear(t);
		T_ASSERT_EQ_I64(sl_kvtab_count(t), 0);
		memset(orc, 0, sizeof(orc));
		check_all(t);
		w = (struct walk){ 0, true, t, false };
		sl_kvtab_foreach(t, visit, &w);
		T_ASSERT_EQ_I64(w.n, 0);
	}
	sl_kvtab_destroy(t);
}

int main(void)
{
	test_limits();
	for (int spread = 0; spread < 2; spread++) {
		test_random_oracle(spread);
		test_many_ns(spread);
		test_overlapping_runs(spread);
		test_clear(spread);
	}
	test_same_hash();
	test_million();
	return T_EXIT_PASS;
}
