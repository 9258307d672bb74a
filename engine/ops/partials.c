/*
 * partials.c - the local stage's bounded table of partial aggregates (partials.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "partials.h"

struct sl_partials *sl_partials_create(uint32_t cap, uint32_t block)
{
	struct sl_partials *t = calloc(1, sizeof(*t));
	uint32_t nslot = 2;

	if (!t)
		return NULL;
	while (nslot < 2 * cap)
		nslot *= 2;
	t->cap = cap;
	t->block = block;
	t->mask = nslot - 1;
	t->slot = calloc(nslot, sizeof(*t->slot));
	t->e = calloc(cap, sizeof(*t->e));
	t->acc = calloc(cap, block ? block : 1);
	t->kcap = (size_t)cap * 16;
	t->keys = malloc(t->kcap);
	if (!t->slot || !t->e || !t->acc || !t->keys) {
		sl_partials_destroy(t);
		return NULL;
	}
	return t;
}

void sl_partials_destroy(struct sl_partials *t)
{
	if (!t)
		return;
	free(t->slot);
	free(t->e);
	free(t->acc);
	free(t->keys);
	free(t);
}

static uint32_t slot_of(const struct sl_partials *t, uint64_t hash, int64_t ns)
{
	uint64_t h = hash ^ ((uint64_t)ns * 0x9E3779B97F4A7C15ull);

	return (uint32_t)(h ^ (h >> 29)) & t->mask;
}

int sl_partials_get(struct sl_partials *t, uint64_t hash, int64_t ns, const uint8_t *key,
		    uint32_t klen, uint32_t *index)
{
	uint32_t at = slot_of(t, hash, ns), i;

	for (;; at = (at + 1) & t->mask) {
		uint32_t s = t->slot[at];
		const struct sl_partial_entry *e;

		if (!s)
			break;
		e = &t->e[s - 1];
		if (e->hash == hash && e->ns == ns && e->klen == klen &&
		    memcmp(t->keys + e->koff, key, klen) == 0) {
			*index = s - 1;
			return 1;
		}
	}
	if (t->n == t->cap)
		return -ENOSPC;
	if (t->kused + klen > t->kcap) {
		size_t cap = t->kcap * 2;
		uint8_t *nk;

		while (cap < t->kused + klen)
			cap *= 2;
		nk = realloc(t->keys, cap);
		if (!nk)
			return -ENOMEM;
		t->keys = nk;
		t->kcap = cap;
	}
	i = t->n++;
	t->e[i] = (struct sl_partial_entry){ .hash = hash,
					     .ns = ns,
					     .koff = (uint32_t)t->kused,
					     .klen = klen,
					     .slot = at,
					     .ts = INT64_MIN };
	memcpy(t->keys + t->kused, key, klen);
	t->kused += klen;
	t->slot[at] = i + 1;
	memset(sl_partials_block(t, i), 0, t->block);
	*index = i;
	return 0;
}

void sl_partials_reset(struct sl_partials *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		t->slot[t->e[i].slot] = 0;
	t->n = 0;
	t->kused = 0;
}
