/*
 * rowset.c - a multiset of rows in map state (rowset.h): rows chunked into map keys,
 * written and removed chunk by chunk, and read back whole by a scan.
 *
 * A scan copies the map's entries out of state (keys and values: a later state call may
 * move what the backend returned), sorts them by (hash, chunk), and joins each run of one
 * hash into a row. Cost O(e log e) for the e entries under the key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rowset.h"

#define PREFIX 10u /* u64 row hash, u16 chunk */

/* One map entry, copied out of state. */
struct ent {
	size_t koff; /* its map key in scan.keys */
	uint32_t klen;
	uint16_t chunk;
	uint64_t h;
	struct sl_rowset_val v;
};

void *sl_rowset_vec_grow(struct sl_rowset_vec *v, size_t size, size_t n)
{
	if (v->n + n > v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 64;
		void *p;

		while (cap < v->n + n)
			cap *= 2;
		p = realloc(v->p, cap * size);
		if (!p)
			return NULL;
		v->p = p;
		v->cap = cap;
	}
	v->n += n;
	return (uint8_t *)v->p + size * (v->n - n);
}

void sl_rowset_scan_free(struct sl_rowset_scan *s)
{
	if (!s)
		return;
	free(s->ents.p);
	free(s->keys.p);
	free(s->rows.p);
	free(s->out.p);
	memset(s, 0, sizeof(*s));
}

static uint32_t chunk_key(uint8_t *key, uint64_t h, uint16_t i, const struct sl_row *row)
{
	uint32_t off = (uint32_t)i * SL_ROWSET_CHUNK;
	uint32_t n = row->size - off < SL_ROWSET_CHUNK ? row->size - off : SL_ROWSET_CHUNK;

	memcpy(key, &h, 8);
	memcpy(key + 8, &i, 2);
	memcpy(key + PREFIX, (const uint8_t *)row + off, n);
	return PREFIX + n;
}

int sl_rowset_store(struct sl_ctx *ctx, int id, const struct sl_row *row, uint64_t h,
		    const struct sl_rowset_val *v)
{
	uint8_t key[PREFIX + SL_ROWSET_CHUNK];

	for (uint32_t off = 0, i = 0; off < row->size; off += SL_ROWSET_CHUNK, i++) {
		struct sl_rowset_val *slot =
			sl_map_put(ctx, id, key, chunk_key(key, h, (uint16_t)i, row));

		if (!slot)
			return -ENOMEM;
		*slot = i ? (struct sl_rowset_val){ 0, 0 } : *v;
	}
	return 0;
}

void sl_rowset_remove(struct sl_ctx *ctx, int id, const struct sl_row *row, uint64_t h)
{
	uint8_t key[PREFIX + SL_ROWSET_CHUNK];

	for (uint32_t off = 0, i = 0; off < row->size; off += SL_ROWSET_CHUNK, i++)
		sl_map_remove(ctx, id, key, chunk_key(key, h, (uint16_t)i, row));
}

bool sl_rowset_get(struct sl_ctx *ctx, int id, const struct sl_row *row, uint64_t h,
		   struct sl_rowset_val *v)
{
	uint8_t key[PREFIX + SL_ROWSET_CHUNK];
	const struct sl_rowset_val *slot = sl_map_get(ctx, id, key, chunk_key(key, h, 0, row));

	if (!slot)
		return false;
	*v = *slot;
	return true;
}

struct collecting {
	struct sl_rowset_scan *s;
	bool nomem;
};

static bool collect(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct collecting *c = arg;
	struct ent *e;
	uint8_t *k;

	if (mklen <= PREFIX)
		return true; /* not a rowset's; cannot happen */
	e = sl_rowset_vec_grow(&c->s->ents, sizeof(*e), 1);
	k = e ? sl_rowset_vec_grow(&c->s->keys, 1, mklen) : NULL;
	if (!k) {
		c->nomem = true;
		return false;
	}
	memcpy(k, mkey, mklen);
	e->koff = (size_t)(k - (uint8_t *)c->s->keys.p);
	e->klen = mklen;
	memcpy(&e->h, mkey, 8);
	memcpy(&e->chunk, (const uint8_t *)mkey + 8, 2);
	memcpy(&e->v, value, sizeof(e->v));
	return true;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return (x->chunk > y->chunk) - (x->chunk < y->chunk);
}

int sl_rowset_scan(struct sl_ctx *ctx, int id, struct sl_rowset_scan *s)
{
	struct collecting cl = { s, false };
	const struct ent *e;

	s->ents.n = s->keys.n = s->rows.n = s->out.n = 0;
	sl_map_foreach(ctx, id, collect, &cl);
	if (cl.nomem)
		return -ENOMEM;
	if (s->ents.n > 1)
		qsort(s->ents.p, s->ents.n, sizeof(struct ent), cmp_ent);
	e = s->ents.p;
	for (size_t i = 0; i < s->ents.n;) {
		size_t k = i, len = 0;
		bool whole = true;
		struct sl_rowset_row *r;
		uint8_t *dst;

		while (k < s->ents.n && e[k].h == e[i].h) {
			whole &= e[k].chunk == k - i;
			len += e[k].klen - PREFIX;
			k++;
		}
		if (!whole || len < SL_ROW_HDR || len > SL_ROW_SCRATCH || len % 8 ||
		    e[i].v.count < 1) {
			i = k;
			continue;
		}
		dst = sl_rowset_vec_grow(&s->rows, 1, len);
		if (!dst)
			return -ENOMEM;
		for (size_t c = i, o = 0; c < k; c++) {
			memcpy(dst + o, (uint8_t *)s->keys.p + e[c].koff + PREFIX,
			       e[c].klen - PREFIX);
			o += e[c].klen - PREFIX;
		}
		if (((const struct sl_row *)dst)->size != len) {
			s->rows.n -= len;
			i = k;
			continue;
		}
		r = sl_rowset_vec_grow(&s->out, sizeof(*r), 1);
		if (!r)
			return -ENOMEM;
		*r = (struct sl_rowset_row){ .off = (size_t)(dst - (uint8_t *)s->rows.p),
					     .len = (uint32_t)len,
					     .h = e[i].h,
					     .v = e[i].v };
		i = k;
	}
	return 0;
}
