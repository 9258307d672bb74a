/*
 * rocks_common.h - helpers of the RocksDB state tests: a temporary directory, an env and db
 * over it, and a sorted dump of a kstate's live entries to compare two kstates by content
 * whatever their backend.
 */
#ifndef SL_TESTS_ROCKS_COMMON_H
#define SL_TESTS_ROCKS_COMMON_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hash.h"
#include "snap.h"
#include "backend.h"
#include "state.h"
#include "tests/test.h"

static inline sl_ts_t wall_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (sl_ts_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static inline void rm_rf(const char *p)
{
	nftw(p, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static inline char *tmp_dir(const char *tag)
{
	char tmpl[256];
	char *d;

	snprintf(tmpl, sizeof(tmpl), "%s/sluice-%s-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", tag);
	d = mkdtemp(tmpl);
	T_ASSERT(d);
	return strdup(d);
}

static inline struct sl_state_env *rocks_env(const char *dir, size_t mem, int nshards)
{
	struct sl_state_env_opts o = { SL_STATE_ROCKSDB, mem, dir, nshards, 1 };
	struct sl_state_env *env;
	char err[256];
	int rc = sl_state_env_open(&o, &env, err, sizeof(err));

	if (rc)
		fprintf(stderr, "env open: %d %s\n", rc, err);
	T_ASSERT(rc == 0 && env);
	return env;
}

static inline struct sl_rocks_db *rocks_db(struct sl_state_env *env, int shard)
{
	struct sl_rocks_db *db;
	char err[256];
	int rc = sl_rocks_db_open(env, shard, 0, &db, err, sizeof(err));

	if (rc)
		fprintf(stderr, "db open: %d %s\n", rc, err);
	T_ASSERT(rc == 0 && db);
	return db;
}

/* ---- dumps ---- */

struct dump {
	char **rec; /* [id u8][klen u32][key][mklen u32][mkey][value] */
	size_t n, cap;
	sl_ts_t now;
	uint32_t kg_lo, kg_hi;
	uint32_t vsize[16];
};

static bool dump_one(const struct sl_kentry *e, void *arg)
{
	struct dump *d = arg;
	size_t n = 1 + 4 + e->klen + 4 + e->mklen + d->vsize[e->id];
	char *p;

	if (e->expires <= d->now || e->kg < d->kg_lo || e->kg >= d->kg_hi)
		return true;
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 1024;
		d->rec = realloc(d->rec, d->cap * sizeof(*d->rec));
		T_ASSERT(d->rec);
	}
	p = d->rec[d->n++] = malloc(n);
	T_ASSERT(p);
	*p++ = (char)e->id;
	memcpy(p, &e->klen, 4);
	memcpy(p + 4, e->key, e->klen);
	p += 4 + e->klen;
	memcpy(p, &e->mklen, 4);
	if (e->mklen)
		memcpy(p + 4, e->mkey, e->mklen);
	p += 4 + e->mklen;
	memcpy(p, e->value, d->vsize[e->id]);
	return true;
}

static int cmp_rec(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	uint32_t xl, yl, xm, ym;
	int c;

	if (x[0] != y[0])
		return x[0] - y[0];
	memcpy(&xl, x + 1, 4);
	memcpy(&yl, y + 1, 4);
	c = memcmp(x + 5, y + 5, xl < yl ? xl : yl);
	if (c || xl != yl)
		return c ? c : (xl < yl ? -1 : 1);
	memcpy(&xm, x + 5 + xl, 4);
	memcpy(&ym, y + 5 + yl, 4);
	c = memcmp(x + 9 + xl, y + 9 + yl, xm < ym ? xm : ym);
	if (c || xm != ym)
		return c ? c : (xm < ym ? -1 : 1);
	return 0;
}

/* Live entries (expires > now) of key groups [lo, hi), sorted by (id, key, map key). */
static inline struct dump dump_of(const struct sl_kstate *ks, const struct sl_state_desc *descs,
				  int n, sl_ts_t now, uint32_t lo, uint32_t hi)
{
	struct dump d = { .now = now, .kg_lo = lo, .kg_hi = hi };

	for (int i = 0; i < n; i++)
		d.vsize[i] = descs[i].value_size;
	sl_kstate_foreach(ks, dump_one, &d);
	qsort(d.rec, d.n, sizeof(char *), cmp_rec);
	return d;
}

static inline void dump_eq(const struct dump *a, const struct dump *b)
{
	T_ASSERT_EQ_I64(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		/* records are sorted by key, so equal dumps match index by index */
		const char *x = a->rec[i], *y = b->rec[i];
		uint32_t kl, ml;

		T_ASSERT(cmp_rec(&x, &y) == 0);
		memcpy(&kl, x + 1, 4);
		memcpy(&ml, x + 5 + kl, 4);
		T_ASSERT(memcmp(x + 9 + kl + ml, y + 9 + kl + ml, a->vsize[(int)x[0]]) == 0);
	}
}

static inline void dump_free(struct dump *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->rec[i]);
	free(d->rec);
}

#endif
