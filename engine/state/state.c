/*
 * state.c - keyed value and map state on the heap, with TTL, and the current key's timers.
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
 * foreach treat now >= expires_at as absent and remove the entry on the spot.
 *
 * Hot path: value get/put are one kvtab lookup; nothing is allocated except by the first
 * insertion of a key (and a map's first entry, which creates its table).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/op.h"
#include "kvtab.h"
#include "state.h"
#include "time/timer.h"

struct sdesc {
	enum sl_state_kind kind;
	sl_ts_t ttl;          /* 0: none */
	uint32_t off;         /* user value offset: 8 with TTL, else 0 */
	uint32_t value_size;
	struct sl_kvtab *tab; /* key -> value, or key -> struct mapref */
};

struct mapref {
	struct sl_kvtab *m;
};

struct sl_kstate {
	int n;
	uint32_t max_par;
	int iterating;  /* map foreach calls in progress */
	size_t entries;
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

void sl_kstate_destroy(struct sl_kstate *ks)
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

struct sl_kstate *sl_kstate_create(const struct sl_state_desc *descs, int n, uint32_t max_par,
				   int *err)
{
	struct sl_kstate *ks;

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
	ks->n = n;
	ks->max_par = max_par;
	for (int i = 0; i < n; i++) {
		struct sdesc *d = &ks->d[i];

		d->kind = descs[i].kind;
		d->ttl = descs[i].ttl_ms;
		d->off = d->ttl ? 8 : 0;
		d->value_size = descs[i].value_size;
		d->tab = sl_kvtab_create(d->kind == SL_STATE_MAP ? sizeof(struct mapref)
								 : d->off + d->value_size,
					 max_par);
		if (!d->tab) {
			sl_kstate_destroy(ks);
			return NULL;
		}
	}
	*err = 0;
	return ks;
}

size_t sl_kstate_entries(const struct sl_kstate *ks)
{
	return ks->entries;
}

static bool add_map_bytes(const struct sl_kv *kv, void *arg)
{
	*(size_t *)arg += sl_kvtab_bytes(((struct mapref *)kv->value)->m);
	return true;
}

size_t sl_kstate_bytes(const struct sl_kstate *ks)
{
	size_t b = sizeof(*ks);

	for (int i = 0; i < ks->n; i++) {
		b += sl_kvtab_bytes(ks->d[i].tab);
		if (ks->d[i].kind == SL_STATE_MAP)
			sl_kvtab_foreach(ks->d[i].tab, add_map_bytes, &b);
	}
	return b;
}

bool sl_kstate_has_ttl(const struct sl_kstate *ks)
{
	for (int i = 0; i < ks->n; i++)
		if (ks->d[i].ttl)
			return true;
	return false;
}

static inline struct sdesc *desc(struct sl_kstate *ks, int id, enum sl_state_kind kind)
{
	if (id < 0 || id >= ks->n || ks->d[id].kind != kind)
		return NULL;
	return &ks->d[id];
}

/* ---- value state ------------------------------------------------------------------------ */

void *sl_kstate_value_get(struct sl_kstate *ks, int id, const struct sl_kkey *k, sl_ts_t now)
{
	struct sdesc *d = desc(ks, id, SL_STATE_VALUE);
	uint8_t *v;

	if (!d)
		return NULL;
	v = sl_kvtab_get(d->tab, k->hash, k->key, k->klen, 0);
	if (!v)
		return NULL;
	if (expired(d, v, now)) {
		sl_kvtab_remove_value(d->tab, v);
		ks->entries--;
		return NULL;
	}
	return v + d->off;
}

void *sl_kstate_value_put(struct sl_kstate *ks, int id, const struct sl_kkey *k, sl_ts_t now)
{
	struct sdesc *d = desc(ks, id, SL_STATE_VALUE);
	uint8_t *v;
	bool created;

	if (!d)
		return NULL;
	v = sl_kvtab_put(d->tab, k->hash, k->key, k->klen, 0, &created);
	if (!v)
		return NULL;
	if (created)
		ks->entries++;
	else if (expired(d, v, now))
		memset(v + d->off, 0, d->value_size); /* a new value: zeroed, as documented */
	touch(d, v, now);
	return v + d->off;
}

void sl_kstate_value_clear(struct sl_kstate *ks, int id, const struct sl_kkey *k)
{
	struct sdesc *d = desc(ks, id, SL_STATE_VALUE);

	if (d && sl_kvtab_remove(d->tab, k->hash, k->key, k->klen, 0))
		ks->entries--;
}

/* ---- map state -------------------------------------------------------------------------- */

/* Drops a key's map once it is empty, unless an iteration may be walking it. */
static void map_drop_if_empty(struct sl_kstate *ks, struct sdesc *d, struct mapref *r)
{
	if (ks->iterating || sl_kvtab_count(r->m))
		return;
	sl_kvtab_destroy(r->m);
	sl_kvtab_remove_value(d->tab, r);
}

void *sl_kstate_map_get(struct sl_kstate *ks, int id, const struct sl_kkey *k,
			const void *mkey, uint32_t mklen, sl_ts_t now)
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
	if (expired(d, v, now)) {
		sl_kvtab_remove_value(r->m, v);
		ks->entries--;
		map_drop_if_empty(ks, d, r);
		return NULL;
	}
	return v + d->off;
}

void *sl_kstate_map_put(struct sl_kstate *ks, int id, const struct sl_kkey *k,
			const void *mkey, uint32_t mklen, sl_ts_t now)
{
	struct sdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mapref *r;
	uint8_t *v;
	bool created;

	if (!d || mklen > SL_KEY_MAX)
		return NULL;
	r = sl_kvtab_put(d->tab, k->hash, k->key, k->klen, 0, &created);
	if (!r)
		return NULL;
	if (created) {
		r->m = sl_kvtab_create(d->off + d->value_size, 1);
		if (!r->m) {
			sl_kvtab_remove_value(d->tab, r);
			return NULL;
		}
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

void sl_kstate_map_remove(struct sl_kstate *ks, int id, const struct sl_kkey *k,
			  const void *mkey, uint32_t mklen)
{
	struct sdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mapref *r;

	if (!d)
		return;
	r = sl_kvtab_get(d->tab, k->hash, k->key, k->klen, 0);
	if (!r)
		return;
	if (sl_kvtab_remove(r->m, sl_hash_bytes(mkey, mklen), mkey, mklen, 0))
		ks->entries--;
	map_drop_if_empty(ks, d, r);
}

struct walk {
	struct sl_kstate *ks;
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

void sl_kstate_map_foreach(struct sl_kstate *ks, int id, const struct sl_kkey *k,
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

void sl_kstate_map_clear(struct sl_kstate *ks, int id, const struct sl_kkey *k)
{
	struct sdesc *d = desc(ks, id, SL_STATE_MAP);
	struct mapref *r;
	struct walk w;

	if (!d)
		return;
	r = sl_kvtab_get(d->tab, k->hash, k->key, k->klen, 0);
	if (!r)
		return;
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

/* ---- operator.h: the current key of ctx ------------------------------------------------- */

static inline struct sl_kkey cur(const struct sl_ctx *ctx)
{
	return (struct sl_kkey){ ctx->hash, ctx->key, ctx->klen };
}

/* Processing time only for descriptors with a TTL: a plain lookup reads no clock. */
static inline sl_ts_t now_for(const struct sl_ctx *ctx, int id)
{
	const struct sl_kstate *ks = ctx->kstate;

	return id >= 0 && id < ks->n && ks->d[id].ttl ? sl_ctx_proctime(ctx) : 0;
}

void *sl_value_get(struct sl_ctx *ctx, int id)
{
	struct sl_kkey k = cur(ctx);

	return sl_kstate_value_get(ctx->kstate, id, &k, now_for(ctx, id));
}

void *sl_value_put(struct sl_ctx *ctx, int id)
{
	struct sl_kkey k = cur(ctx);

	return sl_kstate_value_put(ctx->kstate, id, &k, now_for(ctx, id));
}

void sl_value_clear(struct sl_ctx *ctx, int id)
{
	struct sl_kkey k = cur(ctx);

	sl_kstate_value_clear(ctx->kstate, id, &k);
}

void *sl_map_get(struct sl_ctx *ctx, int id, const void *mkey, uint32_t mklen)
{
	struct sl_kkey k = cur(ctx);

	return sl_kstate_map_get(ctx->kstate, id, &k, mkey, mklen, now_for(ctx, id));
}

void *sl_map_put(struct sl_ctx *ctx, int id, const void *mkey, uint32_t mklen)
{
	struct sl_kkey k = cur(ctx);

	return sl_kstate_map_put(ctx->kstate, id, &k, mkey, mklen, now_for(ctx, id));
}

void sl_map_remove(struct sl_ctx *ctx, int id, const void *mkey, uint32_t mklen)
{
	struct sl_kkey k = cur(ctx);

	sl_kstate_map_remove(ctx->kstate, id, &k, mkey, mklen);
}

void sl_map_foreach(struct sl_ctx *ctx, int id,
		    bool (*fn)(const void *mkey, uint32_t mklen, void *value, void *arg), void *arg)
{
	struct sl_kkey k = cur(ctx);

	sl_kstate_map_foreach(ctx->kstate, id, &k, fn, arg, now_for(ctx, id));
}

void sl_map_clear(struct sl_ctx *ctx, int id)
{
	struct sl_kkey k = cur(ctx);

	sl_kstate_map_clear(ctx->kstate, id, &k);
}

/* ---- operator.h: timers of the current key ----------------------------------------------- */

int sl_timer_event(struct sl_ctx *ctx, sl_ts_t at)
{
	if (!ctx->event_timers)
		return -EINVAL;
	return sl_timers_add(ctx->event_timers, at, ctx->hash, ctx->key, ctx->klen, 0);
}

int sl_timer_proc(struct sl_ctx *ctx, sl_ts_t at)
{
	if (!ctx->proc_timers)
		return -EINVAL;
	return sl_timers_add(ctx->proc_timers, at, ctx->hash, ctx->key, ctx->klen, 0);
}

void sl_timer_event_delete(struct sl_ctx *ctx, sl_ts_t at)
{
	if (ctx->event_timers)
		sl_timers_delete(ctx->event_timers, at, ctx->hash, ctx->key, ctx->klen, 0);
}

void sl_timer_proc_delete(struct sl_ctx *ctx, sl_ts_t at)
{
	if (ctx->proc_timers)
		sl_timers_delete(ctx->proc_timers, at, ctx->hash, ctx->key, ctx->klen, 0);
}
