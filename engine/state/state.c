/*
 * state.c - keyed state's one interface (state.h) over its backends.
 *
 * Dispatch: each kstate starts with struct sl_kstate naming its backend (state_int.h);
 * every sl_kstate_* call here is one branch on it and a direct call into heap_state.c or
 * rocks_state.c. The heap stays the first branch: it is the common case and the only one
 * whose per-call cost is a few nanoseconds, so the branch is what it pays for the choice.
 */
#include <errno.h>
#include <string.h>

#include "state_int.h"

#define HEAP(ks)     ((struct heap_kstate *)(ks))
#define ROCKS(ks)    ((struct rocks_kstate *)(ks))
#define CHEAP(ks)    ((const struct heap_kstate *)(ks))
#define CROCKS(ks)   ((const struct rocks_kstate *)(ks))
#define IS_ROCKS(ks) ((ks)->backend == SL_STATE_ROCKSDB)

struct sl_kstate *sl_kstate_create(const struct sl_state_desc *descs, int n, uint32_t max_par,
				   int *err)
{
	return (struct sl_kstate *)sl_heap_create(descs, n, max_par, err);
}

struct sl_kstate *sl_kstate_create_in(struct sl_rocks_db *db, uint32_t op_uid,
				      const struct sl_state_desc *descs, int n, uint32_t max_par,
				      int *err)
{
	if (!db)
		return (struct sl_kstate *)sl_heap_create(descs, n, max_par, err);
	return (struct sl_kstate *)sl_rocks_kstate_create(db, op_uid, descs, n, max_par, err);
}

enum sl_state_backend_kind sl_kstate_backend(const struct sl_kstate *ks)
{
	return ks->backend;
}

void sl_kstate_destroy(struct sl_kstate *ks)
{
	if (!ks)
		return;
	if (IS_ROCKS(ks))
		sl_rocks_kstate_destroy(ROCKS(ks));
	else
		sl_heap_destroy(HEAP(ks));
}

size_t sl_kstate_entries(const struct sl_kstate *ks)
{
	if (IS_ROCKS(ks))
		return sl_rocks_kstate_entries(CROCKS(ks));
	return sl_heap_entries(CHEAP(ks));
}

size_t sl_kstate_bytes(const struct sl_kstate *ks)
{
	if (IS_ROCKS(ks))
		return sl_rocks_kstate_bytes(CROCKS(ks));
	return sl_heap_bytes(CHEAP(ks));
}

bool sl_kstate_desc_ttl(const struct sl_kstate *ks, int id)
{
	return IS_ROCKS(ks) ? sl_rocks_kstate_desc_ttl(CROCKS(ks), id)
			    : sl_heap_desc_ttl(CHEAP(ks), id);
}

bool sl_kstate_has_ttl(const struct sl_kstate *ks)
{
	if (IS_ROCKS(ks))
		return sl_rocks_kstate_has_ttl(CROCKS(ks));
	return sl_heap_has_ttl(CHEAP(ks));
}

void *sl_kstate_value_get(struct sl_kstate *ks, int id, const struct sl_kkey *k, sl_ts_t now)
{
	if (IS_ROCKS(ks))
		return sl_rocks_kstate_value_get(ROCKS(ks), id, k, now);
	return sl_heap_value_get(HEAP(ks), id, k, now);
}

void *sl_kstate_value_put(struct sl_kstate *ks, int id, const struct sl_kkey *k, sl_ts_t now)
{
	if (IS_ROCKS(ks))
		return sl_rocks_kstate_value_put(ROCKS(ks), id, k, now);
	return sl_heap_value_put(HEAP(ks), id, k, now);
}

void sl_kstate_value_clear(struct sl_kstate *ks, int id, const struct sl_kkey *k)
{
	if (IS_ROCKS(ks))
		sl_rocks_kstate_value_clear(ROCKS(ks), id, k);
	else
		sl_heap_value_clear(HEAP(ks), id, k);
}

void *sl_kstate_map_get(struct sl_kstate *ks, int id, const struct sl_kkey *k, const void *mkey,
			uint32_t mklen, sl_ts_t now)
{
	if (IS_ROCKS(ks))
		return sl_rocks_kstate_map_get(ROCKS(ks), id, k, mkey, mklen, now);
	return sl_heap_map_get(HEAP(ks), id, k, mkey, mklen, now);
}

void *sl_kstate_map_put(struct sl_kstate *ks, int id, const struct sl_kkey *k, const void *mkey,
			uint32_t mklen, sl_ts_t now)
{
	if (IS_ROCKS(ks))
		return sl_rocks_kstate_map_put(ROCKS(ks), id, k, mkey, mklen, now);
	return sl_heap_map_put(HEAP(ks), id, k, mkey, mklen, now);
}

void sl_kstate_map_remove(struct sl_kstate *ks, int id, const struct sl_kkey *k, const void *mkey,
			  uint32_t mklen)
{
	if (IS_ROCKS(ks))
		sl_rocks_kstate_map_remove(ROCKS(ks), id, k, mkey, mklen);
	else
		sl_heap_map_remove(HEAP(ks), id, k, mkey, mklen);
}

void sl_kstate_map_foreach(struct sl_kstate *ks, int id, const struct sl_kkey *k,
			   bool (*fn)(const void *mkey, uint32_t mklen, void *value, void *arg),
			   void *arg, sl_ts_t now)
{
	if (IS_ROCKS(ks))
		sl_rocks_kstate_map_foreach(ROCKS(ks), id, k, fn, arg, now);
	else
		sl_heap_map_foreach(HEAP(ks), id, k, fn, arg, now);
}

void sl_kstate_map_clear(struct sl_kstate *ks, int id, const struct sl_kkey *k)
{
	if (IS_ROCKS(ks))
		sl_rocks_kstate_map_clear(ROCKS(ks), id, k);
	else
		sl_heap_map_clear(HEAP(ks), id, k);
}

int sl_kstate_snapshot(const struct sl_kstate *ks, sl_ts_t now, struct sl_snap_buf *out)
{
	if (IS_ROCKS(ks))
		return sl_rocks_kstate_snapshot(CROCKS(ks), now, out);
	return sl_heap_snapshot(CHEAP(ks), now, out);
}

int sl_kstate_snapshot_begin(struct sl_kstate *ks, sl_ts_t now, struct sl_snap_buf *out)
{
	if (IS_ROCKS(ks))
		return sl_rocks_kstate_snapshot(CROCKS(ks), now, out);
	return sl_heap_snapshot_begin(HEAP(ks), now, out);
}

int sl_kstate_snapshot_step(struct sl_kstate *ks, size_t budget)
{
	if (IS_ROCKS(ks))
		return 0;
	return sl_heap_snapshot_step(HEAP(ks), budget);
}

bool sl_kstate_snapshot_pending(const struct sl_kstate *ks)
{
	return !IS_ROCKS(ks) && sl_heap_snapshot_pending(CHEAP(ks));
}

int sl_kstate_snapshot_native(const struct sl_kstate *ks, uint32_t kg_lo, uint32_t kg_hi,
			      struct sl_snap_buf *out)
{
	if (!IS_ROCKS(ks))
		return -EINVAL;
	return sl_rocks_kstate_snapshot_native(CROCKS(ks), kg_lo, kg_hi, out);
}

/* The section under r is a native checkpoint's (peeked, r does not move). */
static bool native_section(const struct sl_snap_reader *r)
{
	uint32_t magic;

	if (r->len - r->pos < 4)
		return false;
	memcpy(&magic, r->p + r->pos, 4);
	return magic == KN_MAGIC;
}

int sl_kstate_restore(struct sl_kstate *ks, struct sl_snap_reader *r, uint32_t kg_lo,
		      uint32_t kg_hi)
{
	bool native = native_section(r);

	if (IS_ROCKS(ks))
		return native ? sl_rocks_kstate_restore_native(ROCKS(ks), r, kg_lo, kg_hi)
			      : sl_rocks_kstate_restore(ROCKS(ks), r, kg_lo, kg_hi);
	if (native)
		return sl_heap_refuse_native(HEAP(ks));
	return sl_heap_restore(HEAP(ks), r, kg_lo, kg_hi);
}

const char *sl_kstate_error(const struct sl_kstate *ks)
{
	if (IS_ROCKS(ks))
		return sl_rocks_kstate_error(CROCKS(ks));
	return sl_heap_error(CHEAP(ks));
}

void sl_kstate_foreach(const struct sl_kstate *ks, bool (*fn)(const struct sl_kentry *e, void *arg),
		       void *arg)
{
	if (IS_ROCKS(ks))
		sl_rocks_kstate_foreach(CROCKS(ks), fn, arg);
	else
		sl_heap_foreach(CHEAP(ks), fn, arg);
}
