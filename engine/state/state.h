/*
 * state.h - keyed state of one operator instance on one shard (the heap backend behind the
 * value/map functions of sluice/operator.h).
 *
 * One kvtab per state descriptor, keyed by the operator's current key in namespace 0. Map
 * state keeps, per key, a small kvtab of its map entries, so one key's map can be iterated
 * and cleared without scanning other keys. TTL (descriptor ttl_ms > 0) follows Flink's
 * OnCreateAndWrite: a value or map entry expires ttl_ms of processing time after its last
 * put, is never returned after that, and is removed when it is next touched.
 *
 * The functions below take the key and the processing time explicitly; operator.h's
 * sl_value_* / sl_map_* call them with ctx->key and sl_ctx_proctime(ctx) (read only for
 * descriptors with a TTL). Threads: owned by one shard, every call from its thread.
 */
#ifndef SL_STATE_STATE_H
#define SL_STATE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/operator.h>

struct sl_kstate;

/* The current key as state sees it. */
struct sl_kkey {
	uint64_t hash;
	const void *key;
	uint32_t klen;
};

/* Returns state for descriptors descs[0..n) (copied; names borrowed until destroy), key
 * groups in [0, max_par); or NULL with *err = -EINVAL (bad descriptor) or -ENOMEM. Caller
 * frees with sl_kstate_destroy(), which accepts NULL. */
struct sl_kstate *sl_kstate_create(const struct sl_state_desc *descs, int n, uint32_t max_par,
				   int *err);
void sl_kstate_destroy(struct sl_kstate *ks);
/* Entries held: one per value, one per map entry (expired ones until they are touched). */
size_t sl_kstate_entries(const struct sl_kstate *ks);
/* Approximate bytes held. */
size_t sl_kstate_bytes(const struct sl_kstate *ks);
/* True if some descriptor has a TTL (the operator then needs the processing time). */
bool sl_kstate_has_ttl(const struct sl_kstate *ks);
/* True if descriptor `id` has a TTL: only then do its calls need the processing time. */
bool sl_kstate_desc_ttl(const struct sl_kstate *ks, int id);

/* The operations behind operator.h; `now` is processing time in ms (ignored without TTL).
 * A bad id or a descriptor of the other kind gives NULL / does nothing. */
void *sl_kstate_value_get(struct sl_kstate *ks, int id, const struct sl_kkey *k, sl_ts_t now);
void *sl_kstate_value_put(struct sl_kstate *ks, int id, const struct sl_kkey *k, sl_ts_t now);
void sl_kstate_value_clear(struct sl_kstate *ks, int id, const struct sl_kkey *k);
void *sl_kstate_map_get(struct sl_kstate *ks, int id, const struct sl_kkey *k, const void *mkey,
			uint32_t mklen, sl_ts_t now);
void *sl_kstate_map_put(struct sl_kstate *ks, int id, const struct sl_kkey *k, const void *mkey,
			uint32_t mklen, sl_ts_t now);
void sl_kstate_map_remove(struct sl_kstate *ks, int id, const struct sl_kkey *k, const void *mkey,
			  uint32_t mklen);
/* fn may remove entries of this map and change values; entries it puts may or may not be
 * visited. Expired entries are removed, not visited. */
void sl_kstate_map_foreach(struct sl_kstate *ks, int id, const struct sl_kkey *k,
			   bool (*fn)(const void *mkey, uint32_t mklen, void *value, void *arg),
			   void *arg, sl_ts_t now);
void sl_kstate_map_clear(struct sl_kstate *ks, int id, const struct sl_kkey *k);

/* ---- snapshots (DESIGN §7) -------------------------------------------------------------- */

struct sl_snap_buf;
struct sl_snap_reader;

/*
 * Appends every live entry to `out` as one section: the layout (max parallelism, each
 * descriptor's name, kind, value size and whether it has a TTL), then per descriptor its
 * entries with key hash, key group, key bytes, expiry (TTL descriptors) and value; map
 * entries grouped under their key. Entries expired at processing time `now` are left out
 * (without TTL `now` is not read). Cost: one sequential walk of the tables and a copy of the
 * bytes; no allocation but the buffer's growth. Returns 0 or -ENOMEM (out->error).
 */
int sl_kstate_snapshot(const struct sl_kstate *ks, sl_ts_t now, struct sl_snap_buf *out);
/*
 * The same section, taken copy-on-write (heap backend; DESIGN §7): begin appends the layout
 * and returns at once, 1 while the rest is to come (0 when it is already complete, or
 * -ENOMEM); each step then appends about `budget` more bytes and returns 1, until it
 * completes the section and returns 0 (or -ENOMEM). Meanwhile the state may be used and
 * changed as usual: an entry is copied as it was at begin before its first change, so the
 * section holds exactly the state at begin. Until it completes, `out` is borrowed and
 * nothing else may be appended to it. The RocksDB backend writes its whole section in
 * begin and returns 0. pending: a begun snapshot has not completed yet.
 */
int sl_kstate_snapshot_begin(struct sl_kstate *ks, sl_ts_t now, struct sl_snap_buf *out);
int sl_kstate_snapshot_step(struct sl_kstate *ks, size_t budget);
bool sl_kstate_snapshot_pending(const struct sl_kstate *ks);
/*
 * Reads one section written by sl_kstate_snapshot or _begin and inserts the entries whose key group
 * is in [kg_lo, kg_hi) (rescaling: call once per old instance's section), skipping the others. The
 * section is checked whole before anything is inserted, so an error leaves ks as it was (but for
 * -ENOMEM midway). Returns 0; -EPROTO when the snapshot does not fit this state: a different
 * descriptor list (name, kind, value size, TTL on or off), max parallelism or a newer format
 * version; -EINVAL for corrupt bytes; -ENOMEM. sl_kstate_error() then says why in one line, naming
 * the descriptor.
 */
int sl_kstate_restore(struct sl_kstate *ks, struct sl_snap_reader *r, uint32_t kg_lo,
		      uint32_t kg_hi);
/* The reason the last failed restore gave, or "" (valid until the next restore). */
const char *sl_kstate_error(const struct sl_kstate *ks);

/* One entry as sl_kstate_foreach shows it. */
struct sl_kentry {
	int id; /* descriptor */
	enum sl_state_kind kind;
	uint64_t hash; /* the operator key's hash */
	uint32_t kg;   /* its key group */
	const uint8_t *key;
	uint32_t klen;
	const uint8_t *mkey; /* map entries: the map key; NULL for values */
	uint32_t mklen;
	sl_ts_t expires;   /* processing time it expires at; SL_TS_MAX without TTL */
	const void *value; /* value_size bytes */
};

/* Visits every entry, expired ones included, descriptor by descriptor; read-only, and the
 * state must not change during the walk. fn returns false to stop. For tests and tools. */
void sl_kstate_foreach(const struct sl_kstate *ks, bool (*fn)(const struct sl_kentry *e, void *arg),
		       void *arg);

#endif
