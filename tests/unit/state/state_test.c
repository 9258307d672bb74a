/*
 * state_test.c - keyed value and map state: per-key isolation, entry counts, TTL in
 * processing time (expiry, refresh on write, zeroed re-creation, cleanup on access and in
 * foreach), map iteration of one key with removal and clear during the walk, a random run
 * against an oracle, bad ids; then operator.h's wrappers and timer calls on a hand-built ctx.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "hash.h"
#include "op.h"
#include "state.h"
#include "tests/test.h"
#include "timer.h"

/* No runtime here: a test clock stands in for the shard's (weak, so libsluice's real shard
 * functions win wherever they are linked in). */
static sl_ts_t test_now;

__attribute__((weak)) sl_ts_t sl_shard_now(const struct sl_shard *sh)
{
	return test_now;
}

__attribute__((weak)) int sl_shard_index(const struct sl_shard *sh)
{
	return 0;
}

__attribute__((weak)) int sl_shard_count(const struct sl_shard *sh)
{
	return 1;
}

enum { V = 0, VTTL, M, MTTL };

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

static void test_value(struct sl_kstate *ks)
{
	struct sl_kkey a = key("alice"), b = key("bob");
	uint64_t *v;

	T_ASSERT(sl_kstate_value_get(ks, V, &a, 0) == NULL);
	v = sl_kstate_value_put(ks, V, &a, 0);
	T_ASSERT(v && *v == 0);
	*v = 42;
	v = sl_kstate_value_put(ks, V, &b, 0);
	*v = 7;
	T_ASSERT(*(uint64_t *)sl_kstate_value_get(ks, V, &a, 0) == 42);
	T_ASSERT(*(uint64_t *)sl_kstate_value_get(ks, V, &b, 0) == 7);
	T_ASSERT(*(uint64_t *)sl_kstate_value_put(ks, V, &a, 0) == 42); /* put keeps the value */
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 2);
	sl_kstate_value_clear(ks, V, &a);
	sl_kstate_value_clear(ks, V, &a);
	T_ASSERT(sl_kstate_value_get(ks, V, &a, 0) == NULL);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 1);
	/* wrong kind, bad ids */
	T_ASSERT(sl_kstate_value_get(ks, M, &b, 0) == NULL);
	T_ASSERT(sl_kstate_value_put(ks, 9, &b, 0) == NULL);
	T_ASSERT(sl_kstate_value_get(ks, -1, &b, 0) == NULL);
	T_ASSERT(sl_kstate_map_put(ks, V, &b, "x", 1, 0) == NULL);
	sl_kstate_value_clear(ks, V, &b);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 0);
}

static void test_value_ttl(struct sl_kstate *ks)
{
	struct sl_kkey a = key("alice");
	uint64_t *v;

	v = sl_kstate_value_put(ks, VTTL, &a, 1000);
	v[0] = 5;
	v[1] = 6;
	T_ASSERT(sl_kstate_value_get(ks, VTTL, &a, 1099) == v);
	/* reads do not refresh (OnCreateAndWrite) */
	T_ASSERT(sl_kstate_value_get(ks, VTTL, &a, 1100) == NULL);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 0); /* cleaned on access */
	v = sl_kstate_value_put(ks, VTTL, &a, 2000);
	T_ASSERT(v[0] == 0 && v[1] == 0);
	v[0] = 9;
	T_ASSERT(sl_kstate_value_put(ks, VTTL, &a, 2050) == v); /* a write refreshes */
	T_ASSERT(sl_kstate_value_get(ks, VTTL, &a, 2149) == v && v[0] == 9);
	/* put on an expired, not yet cleaned value: a new, zeroed value */
	v = sl_kstate_value_put(ks, VTTL, &a, 2150);
	T_ASSERT(v[0] == 0);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 1);
	sl_kstate_value_clear(ks, VTTL, &a);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 0);
}

struct seen {
	int n;
	uint64_t sum;
	bool remove_odd;
	bool clear_at_2;
	struct sl_kstate *ks;
	const struct sl_kkey *k;
	int id;
};

static bool visit(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct seen *s = arg;
	uint64_t x;

	T_ASSERT(mklen == 8);
	memcpy(&x, mkey, 8);
	T_ASSERT(*(uint64_t *)value == x * 10);
	s->n++;
	s->sum += x;
	if (s->remove_odd && (x & 1))
		sl_kstate_map_remove(s->ks, s->id, s->k, &x, 8);
	if (s->clear_at_2 && s->n == 2)
		sl_kstate_map_clear(s->ks, s->id, s->k);
	return true;
}

static void test_map(struct sl_kstate *ks)
{
	struct sl_kkey a = key("alice"), b = key("bob");
	struct seen s;

	for (uint64_t x = 0; x < 100; x++) {
		*(uint64_t *)sl_kstate_map_put(ks, M, &a, &x, 8, 0) = x * 10;
		if (x < 10)
			*(uint64_t *)sl_kstate_map_put(ks, M, &b, &x, 8, 0) = x * 10;
	}
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 110);
	s = (struct seen){ .ks = ks, .k = &a, .id = M };
	sl_kstate_map_foreach(ks, M, &a, visit, &s, 0);
	T_ASSERT(s.n == 100 && s.sum == 4950);
	s = (struct seen){ .ks = ks, .k = &a, .id = M, .remove_odd = true };
	sl_kstate_map_foreach(ks, M, &a, visit, &s, 0);
	T_ASSERT(s.n == 100);
	s = (struct seen){ .ks = ks, .k = &a, .id = M };
	sl_kstate_map_foreach(ks, M, &a, visit, &s, 0);
	T_ASSERT(s.n == 50 && s.sum == 2450);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 60);
	uint64_t three = 3, four = 4;

	T_ASSERT(sl_kstate_map_get(ks, M, &a, &three, 8, 0) == NULL);
	T_ASSERT(*(uint64_t *)sl_kstate_map_get(ks, M, &a, &four, 8, 0) == 40);
	T_ASSERT(*(uint64_t *)sl_kstate_map_get(ks, M, &b, &three, 8, 0) == 30);
	/* clear during the walk: the walk stops finding entries, the map is gone after */
	s = (struct seen){ .ks = ks, .k = &a, .id = M, .clear_at_2 = true };
	sl_kstate_map_foreach(ks, M, &a, visit, &s, 0);
	T_ASSERT(s.n == 2);
	T_ASSERT(sl_kstate_map_get(ks, M, &a, &four, 8, 0) == NULL);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 10);
	s = (struct seen){ .ks = ks, .k = &a, .id = M };
	sl_kstate_map_foreach(ks, M, &a, visit, &s, 0);
	T_ASSERT(s.n == 0);
	/* removing every entry drops the map; a put re-creates it */
	for (uint64_t x = 0; x < 10; x++)
		sl_kstate_map_remove(ks, M, &b, &x, 8);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 0);
	T_ASSERT(sl_kstate_map_put(ks, M, &b, "k", 1, 0));
	sl_kstate_map_clear(ks, M, &b);
	sl_kstate_map_clear(ks, M, &b);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 0);
	/* a variable-length map key up to SL_KEY_MAX, not beyond */
	static uint8_t big[SL_KEY_MAX + 1];

	T_ASSERT(sl_kstate_map_put(ks, M, &b, big, SL_KEY_MAX, 0));
	T_ASSERT(sl_kstate_map_put(ks, M, &b, big, SL_KEY_MAX + 1, 0) == NULL);
	T_ASSERT(sl_kstate_map_get(ks, M, &b, big, SL_KEY_MAX, 0));
	sl_kstate_map_clear(ks, M, &b);
}

static void test_map_ttl(struct sl_kstate *ks)
{
	struct sl_kkey a = key("alice");
	struct seen s;

	for (uint64_t x = 0; x < 10; x++)
		*(uint64_t *)sl_kstate_map_put(ks, MTTL, &a, &x, 8, x < 5 ? 0 : 50) = x * 10;
	/* at 120 entries 0..4 (written at 0) are expired, 5..9 (written at 50) are not */
	uint64_t two = 2, seven = 7;

	T_ASSERT(sl_kstate_map_get(ks, MTTL, &a, &two, 8, 99));
	T_ASSERT(sl_kstate_map_get(ks, MTTL, &a, &two, 8, 120) == NULL);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 9);
	s = (struct seen){ .ks = ks, .k = &a, .id = MTTL };
	sl_kstate_map_foreach(ks, MTTL, &a, visit, &s, 120);
	T_ASSERT(s.n == 5 && s.sum == 5 + 6 + 7 + 8 + 9);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 5);
	T_ASSERT(*(uint64_t *)sl_kstate_map_get(ks, MTTL, &a, &seven, 8, 149) == 70);
	s = (struct seen){ .ks = ks, .k = &a, .id = MTTL };
	sl_kstate_map_foreach(ks, MTTL, &a, visit, &s, 150);
	T_ASSERT(s.n == 0);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 0);
	T_ASSERT(sl_kstate_map_get(ks, MTTL, &a, &seven, 8, 0) == NULL); /* map dropped */
}

/* Expired entries of keys nobody touches again go too: each put sweeps a few entries
 * (heap backend), so writes to one key clean a thousand others in a few hundred puts. */
static void test_ttl_sweep(void)
{
	int err;
	struct sl_kstate *ks = sl_kstate_create(descs, 4, 128, &err);
	struct sl_kkey hot = key("hot");
	char name[16];

	T_ASSERT(ks);
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof name, "k%d", i);
		struct sl_kkey k = key(name);

		sl_kstate_value_put(ks, VTTL, &k, 0);
		for (uint64_t x = 0; x < 3; x++)
			sl_kstate_map_put(ks, MTTL, &k, &x, 8, 0);
	}
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 4000);
	/* at 150 (TTL 100) all of them have expired; only "hot" is written from now on */
	for (int i = 0; i < 1000; i++) {
		uint64_t x = 0;

		sl_kstate_value_put(ks, VTTL, &hot, 150);
		sl_kstate_map_put(ks, MTTL, &hot, &x, 8, 150);
	}
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 2);
	/* entries written since are kept */
	T_ASSERT(sl_kstate_value_get(ks, VTTL, &hot, 200));
	sl_kstate_destroy(ks);
}

/* Random value and map operations over 50 keys against arrays. */
static void test_random(struct sl_kstate *ks)
{
	enum { NK = 50, NM = 20 };
	static int64_t val[NK];    /* -1 absent */
	static int64_t map[NK][NM];
	char names[NK][8];
	struct sl_kkey keys[NK];
	size_t want = 0;

	for (int k = 0; k < NK; k++) {
		memcpy(names[k], "key", 3);
		names[k][3] = (char)('A' + k % 26);
		names[k][4] = (char)('a' + k / 26);
		keys[k] = (struct sl_kkey){ sl_hash_bytes(names[k], 5), names[k], 5 };
		val[k] = -1;
		for (int m = 0; m < NM; m++)
			map[k][m] = -1;
	}
	for (int r = 0; r < 200000; r++) {
		int k = (int)(rnd() % NK), m = (int)(rnd() % NM), op = (int)(rnd() % 8);
		int64_t *p;

		switch (op) {
		case 0:
			p = sl_kstate_value_put(ks, V, &keys[k], 0);
			want += val[k] < 0;
			T_ASSERT(*p == (val[k] < 0 ? 0 : val[k]));
			*p = val[k] = (int64_t)(rnd() % 1000);
			break;
		case 1:
			want -= val[k] >= 0;
			sl_kstate_value_clear(ks, V, &keys[k]);
			val[k] = -1;
			break;
		case 2:
			p = sl_kstate_value_get(ks, V, &keys[k], 0);
			T_ASSERT(val[k] < 0 ? !p : *p == val[k]);
			break;
		case 3:
		case 4:
			p = sl_kstate_map_put(ks, M, &keys[k], &m, 4, 0);
			want += map[k][m] < 0;
			T_ASSERT(*p == (map[k][m] < 0 ? 0 : map[k][m]));
			*p = map[k][m] = (int64_t)(rnd() % 1000);
			break;
		case 5:
			want -= map[k][m] >= 0;
			sl_kstate_map_remove(ks, M, &keys[k], &m, 4);
			map[k][m] = -1;
			break;
		case 6:
			p = sl_kstate_map_get(ks, M, &keys[k], &m, 4, 0);
			T_ASSERT(map[k][m] < 0 ? !p : *p == map[k][m]);
			break;
		default:
			if (rnd() % 20 == 0) {
				for (int i = 0; i < NM; i++) {
					want -= map[k][i] >= 0;
					map[k][i] = -1;
				}
				sl_kstate_map_clear(ks, M, &keys[k]);
			}
			break;
		}
		T_ASSERT_EQ_I64(sl_kstate_entries(ks), want);
	}
}

/* operator.h's functions on a hand-built context, TTL through the (test) shard clock. */
static void test_ctx(struct sl_kstate *ks)
{
	struct sl_ctx ctx = { 0 };
	struct sl_timer t;
	uint64_t *v;

	ctx.kstate = ks;
	ctx.key = (const uint8_t *)"carol";
	ctx.klen = 5;
	ctx.hash = sl_hash_bytes("carol", 5);
	T_ASSERT(sl_value_get(&ctx, V) == NULL);
	v = sl_value_put(&ctx, V);
	*v = 11;
	T_ASSERT(sl_value_get(&ctx, V) == v);
	*(uint64_t *)sl_map_put(&ctx, M, "x", 1) = 10;
	T_ASSERT(*(uint64_t *)sl_map_get(&ctx, M, "x", 1) == 10);
	struct sl_kkey c = key("carol");

	T_ASSERT(sl_kstate_value_get(ks, V, &c, 0) == v);
	sl_map_remove(&ctx, M, "x", 1);
	T_ASSERT(sl_map_get(&ctx, M, "x", 1) == NULL);
	sl_map_put(&ctx, M, "y", 1);
	sl_map_clear(&ctx, M);
	sl_value_clear(&ctx, V);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 0);
	test_now = 500;
	v = sl_value_put(&ctx, VTTL);
	*v = 3;
	test_now = 599;
	T_ASSERT(sl_value_get(&ctx, VTTL) == v);
	sl_map_put(&ctx, MTTL, "z", 1);
	test_now = 600;
	T_ASSERT(sl_value_get(&ctx, VTTL) == NULL);
	T_ASSERT(sl_map_get(&ctx, MTTL, "z", 1) != NULL);
	test_now = 699;
	T_ASSERT(sl_map_get(&ctx, MTTL, "z", 1) == NULL);
	T_ASSERT_EQ_I64(sl_kstate_entries(ks), 0);

	T_ASSERT(sl_timer_event(&ctx, 5) == -EINVAL); /* no timer service */
	ctx.event_timers = sl_timers_create();
	ctx.proc_timers = sl_timers_create();
	T_ASSERT(sl_timer_event(&ctx, 5) == 0);
	T_ASSERT(sl_timer_event(&ctx, 5) == 0);
	T_ASSERT(sl_timer_event(&ctx, 3) == 0);
	T_ASSERT(sl_timer_proc(&ctx, 4) == 0);
	sl_timer_event_delete(&ctx, 3);
	T_ASSERT_EQ_I64(sl_timers_count(ctx.event_timers), 1);
	T_ASSERT(sl_timers_pop(ctx.event_timers, 10, &t));
	T_ASSERT(t.at == 5 && t.klen == 5 && memcmp(t.key, "carol", 5) == 0 && t.hash == ctx.hash);
	sl_timer_proc_delete(&ctx, 4);
	T_ASSERT_EQ_I64(sl_timers_count(ctx.proc_timers), 0);
	sl_timers_destroy(ctx.event_timers);
	sl_timers_destroy(ctx.proc_timers);
}

int main(void)
{
	static const struct sl_state_desc bad[] = { { "b", 7, 8, 0 } };
	int err;
	struct sl_kstate *ks = sl_kstate_create(descs, 4, 128, &err);

	T_ASSERT(ks && err == 0);
	T_ASSERT(sl_kstate_has_ttl(ks));
	T_ASSERT(sl_kstate_create(bad, 1, 128, &err) == NULL && err == -EINVAL);
	test_value(ks);
	test_value_ttl(ks);
	test_map(ks);
	test_map_ttl(ks);
	test_random(ks);
	test_ttl_sweep();
	T_ASSERT(sl_kstate_bytes(ks) > sl_kstate_entries(ks) * 8);
	sl_kstate_destroy(ks);
	ks = sl_kstate_create(descs, 4, 128, &err);
	T_ASSERT(ks);
	test_ctx(ks);
	sl_kstate_destroy(ks);
	sl_kstate_destroy(NULL);
	return T_EXIT_PASS;
}
