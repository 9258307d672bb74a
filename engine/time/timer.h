/*
 * timer.h - the timer service of one operator instance on one shard (one for event time,
 * one for processing time).
 *
 * Timers are (time, key, namespace); registering the same triple twice keeps one. They pop
 * in (time, key hash, key bytes, namespace) order, so firing is deterministic across runs.
 * A binary heap ordered by that tuple plus a hash set for de-duplication and deletion:
 * O(log n) add and pop, O(1) duplicate check.
 *
 * Threads: owned by one shard; every call from that shard's thread.
 */
#ifndef SL_TIME_TIMER_H
#define SL_TIME_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include <sluice/types.h>

struct sl_timers;

struct sl_timer {
	sl_ts_t at;
	uint64_t hash;
	uint64_t ns;
	uint32_t klen;
	const uint8_t *key; /* valid until the next call on this timer service */
};

/* Returns an empty service or NULL on ENOMEM. Caller frees with sl_timers_destroy(). */
struct sl_timers *sl_timers_create(void);
void sl_timers_destroy(struct sl_timers *tm);

/* Registers a timer. Returns 0 (also when it already existed) or -ENOMEM/-EINVAL. */
int sl_timers_add(struct sl_timers *tm, sl_ts_t at, uint64_t hash, const void *key, uint32_t klen,
		  uint64_t ns);
/* Deletes a timer if present. */
void sl_timers_delete(struct sl_timers *tm, sl_ts_t at, uint64_t hash, const void *key,
		      uint32_t klen, uint64_t ns);
/* Pops the earliest timer with at <= until into *out. Returns false when there is none. */
bool sl_timers_pop(struct sl_timers *tm, sl_ts_t until, struct sl_timer *out);
/* Time of the earliest timer, or SL_TS_MAX when empty. */
sl_ts_t sl_timers_next(const struct sl_timers *tm);
size_t sl_timers_count(const struct sl_timers *tm);

struct sl_snap_buf;
struct sl_snap_reader;

/*
 * Appends every timer to `out` as one snapshot section (state/state.h's framing): time,
 * key hash, namespace, key group (sl_key_group(hash, max_par)) and key bytes. Cost: one walk
 * of the timers in memory order and a copy. Returns 0 or -ENOMEM (out->error).
 */
int sl_timers_snapshot(const struct sl_timers *tm, uint32_t max_par, struct sl_snap_buf *out);
/*
 * Reads one section written by sl_timers_snapshot and registers the timers whose key group
 * is in [kg_lo, kg_hi) (rescaling: once per old instance), skipping the others; they then
 * fire exactly as they would have in the old instance, in the same order. The section is
 * checked whole first, so an error leaves tm as it was (but for -ENOMEM midway). Returns 0,
 * -EINVAL (corrupt; r->error set), -EPROTO (a newer format version or another max_par), or
 * -ENOMEM.
 */
int sl_timers_restore(struct sl_timers *tm, struct sl_snap_reader *r, uint32_t max_par,
		      uint32_t kg_lo, uint32_t kg_hi);

#endif
