/*
 * lookup.c - the lookup join (lookup.h).
 *
 * The table's rows live in one arena (copies, 8-aligned), each with the offset of the next
 * row of the same key; a heap table (kvtab) maps a key's encoded bytes to its first row.
 * A probe encodes its key (sl_key_encode, the form exchanges hash), looks it up and emits
 * one joined row per match. Cost per probe: one hash and one lookup, one row built per
 * match; no allocation. A key with a NULL field matches nothing, as in SQL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "key.h"
#include "kvtab.h"
#include "lookup.h"
#include "op.h"

#define NO_ROW UINT64_MAX

struct ref {
	uint64_t first; /* arena offset of the key's first row */
};

struct sl_lookup {
	int nl, nr, nkey;
	bool left_outer;
	int lkey[SL_LOOKUP_MAX_KEYS], rkey[SL_LOOKUP_MAX_KEYS];
	enum sl_type ktypes[SL_LOOKUP_MAX_KEYS];
	enum sl_type ltypes[SL_SCHEMA_MAX_FIELDS], rtypes[SL_SCHEMA_MAX_FIELDS];
	uint8_t *arena; /* [u64 next][row bytes, 8-aligned] ... */
	size_t used, cap, nrows;
	struct sl_kvtab *index;
};

struct sl_lookup *sl_lookup_create(const struct sl_schema *left, const int *lkey,
				   const struct sl_schema *right, const int *rkey, int nkey,
				   bool left_outer)
{
	struct sl_lookup *lk = calloc(1, sizeof(*lk));

	if (!lk || nkey < 1 || nkey > SL_LOOKUP_MAX_KEYS) {
		free(lk);
		return NULL;
	}
	lk->nl = sl_schema_nfields(left);
	lk->nr = sl_schema_nfields(right);
	lk->nkey = nkey;
	lk->left_outer = left_outer;
	for (int i = 0; i < nkey; i++) {
		lk->lkey[i] = lkey[i];
		lk->rkey[i] = rkey[i];
		lk->ktypes[i] = sl_schema_type(right, rkey[i]);
	}
	for (int i = 0; i < lk->nl; i++)
		lk->ltypes[i] = sl_schema_type(left, i);
	for (int i = 0; i < lk->nr; i++)
		lk->rtypes[i] = sl_schema_type(right, i);
	lk->index = sl_kvtab_create(sizeof(struct ref), 1);
	if (!lk->index) {
		free(lk);
		return NULL;
	}
	return lk;
}

void sl_lookup_destroy(void *p)
{
	struct sl_lookup *lk = p;

	if (!lk)
		return;
	sl_kvtab_destroy(lk->index);
	free(lk->arena);
	free(lk);
}

int sl_lookup_add(struct sl_lookup *lk, const struct sl_row *row)
{
	size_t need = 8 + ((row->size + 7) & ~(size_t)7);
	uint64_t next = NO_ROW;

	if (lk->used + need > lk->cap) {
		size_t cap = lk->cap ? lk->cap * 2 : 1 << 16;
		uint8_t *a;

		while (cap < lk->used + need)
			cap *= 2;
		a = realloc(lk->arena, cap);
		if (!a)
			return -ENOMEM;
		lk->arena = a;
		lk->cap = cap;
	}
	memcpy(lk->arena + lk->used, &next, 8);
	memcpy(lk->arena + lk->used + 8, row, row->size);
	lk->used += need;
	lk->nrows++;
	return 0;
}

static bool key_has_null(const struct sl_row *row, const int *fields, int n)
{
	for (int i = 0; i < n; i++)
		if (sl_row_is_null(row, fields[i]))
			return true;
	return false;
}

int sl_lookup_freeze(struct sl_lookup *lk)
{
	uint8_t key[SL_KEY_MAX];

	/* rows are linked in reverse arena order, then each chain is reversed once, so a
	 * key's matches come out in the table's order */
	for (size_t off = 0; off < lk->used;) {
		const struct sl_row *row = (const struct sl_row *)(lk->arena + off + 8);
		size_t step = 8 + ((row->size + 7) & ~(size_t)7);

		if (!key_has_null(row, lk->rkey, lk->nkey)) {
			uint32_t klen = sl_key_encode(row, lk->rkey, lk->ktypes, lk->nkey, key);
			bool created;
			struct ref *r = sl_kvtab_put(lk->index, sl_hash_bytes(key, klen), key, klen,
						     0, &created);

			if (!r)
				return -ENOMEM;
			memcpy(lk->arena + off, created ? &(uint64_t){ NO_ROW } : &r->first, 8);
			r->first = off;
		}
		off += step;
	}
	struct sl_kvtab_iter it;
	struct sl_kv kv;

	sl_kvtab_iter_init(&it);
	while (sl_kvtab_next(lk->index, &it, &kv)) {
		struct ref *r = kv.value;
		uint64_t prev = NO_ROW, cur = r->first;

		while (cur != NO_ROW) {
			uint64_t next;

			memcpy(&next, lk->arena + cur, 8);
			memcpy(lk->arena + cur, &prev, 8);
			prev = cur;
			cur = next;
		}
		r->first = prev;
	}
	return 0;
}

size_t sl_lookup_rows(const struct sl_lookup *lk)
{
	return lk->nrows;
}

static void emit_joined(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_lookup *lk,
			const struct sl_row *in, const struct sl_row *match)
{
	struct sl_row_builder *b = sl_ctx_out(ctx);
	const struct sl_row *row;

	for (int i = 0; i < lk->nl; i++)
		sl_rowb_copy_field(b, i, in, i, lk->ltypes[i]);
	for (int i = 0; i < lk->nr; i++)
		if (match)
			sl_rowb_copy_field(b, lk->nl + i, match, i, lk->rtypes[i]);
		else
			sl_rowb_set_null(b, lk->nl + i);
	sl_rowb_set_kind(b, (enum sl_row_kind)in->kind);
	row = sl_rowb_finish(b);
	if (!row) {
		sl_shard_fail(ctx->shard, -E2BIG,
			      "lookup join '%s': a joined row is larger than "
			      "the row scratch",
			      ctx->def->name);
		return;
	}
	sl_emit(ctx, ts, row);
}

static void lookup_row(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *in, void *arg)
{
	const struct sl_lookup *lk = arg;
	uint8_t key[SL_KEY_MAX];
	const struct ref *r = NULL;
	uint32_t klen;

	if (!key_has_null(in, lk->lkey, lk->nkey)) {
		klen = sl_key_encode(in, lk->lkey, lk->ktypes, lk->nkey, key);
		r = sl_kvtab_get(lk->index, sl_hash_bytes(key, klen), key, klen, 0);
	}
	if (!r) {
		if (lk->left_outer)
			emit_joined(ctx, ts, lk, in, NULL);
		return;
	}
	for (uint64_t off = r->first; off != NO_ROW;) {
		emit_joined(ctx, ts, lk, in, (const struct sl_row *)(lk->arena + off + 8));
		memcpy(&off, lk->arena + off, 8);
	}
}

struct sl_stream *sl_lookup_stream(struct sl_stream *in, const char *name, struct sl_lookup *lk,
				   const struct sl_schema *out)
{
	return sl_stream_flat_map(in, name, lookup_row, lk, out);
}
