/*
 * lookup.h - the lookup join's table and operator: a bounded table read whole before the
 * job starts (a full cache, as Flink's lookup sources keep one), then probed by every row
 * of the stream on its own shard, with no exchange and no state.
 *
 * Ownership: the planner creates the table (sl_lookup_create), fills it, then freezes it;
 * the job borrows it as the flat_map's argument and every shard reads it concurrently
 * (read-only after sl_lookup_freeze). Free it with sl_lookup_destroy after the job.
 */
#ifndef SL_SQL_LOOKUP_H
#define SL_SQL_LOOKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/job.h>

#define SL_LOOKUP_MAX_KEYS 8

struct sl_lookup;

/* A table of rows of schema `right` (copied) keyed by its fields rkey[0..nkey), probed by
 * rows of schema `left` through lkey[0..nkey) (same types, field by field); a row of the
 * join is left's fields then right's; left_outer pads a row without a match with NULLs.
 * NULL on ENOMEM. */
struct sl_lookup *sl_lookup_create(const struct sl_schema *left, const int *lkey,
				   const struct sl_schema *right, const int *rkey, int nkey,
				   bool left_outer);
void sl_lookup_destroy(void *lk);
/* Adds one row of the table (its kind ignored: the table is a snapshot). 0 or -ENOMEM. */
int sl_lookup_add(struct sl_lookup *lk, const struct sl_row *row);
/* Builds the index once every row is in. 0 or -ENOMEM. */
int sl_lookup_freeze(struct sl_lookup *lk);
size_t sl_lookup_rows(const struct sl_lookup *lk);
/* The join operator on `in` (rows of `left`); out is left's fields then right's. */
struct sl_stream *sl_lookup_stream(struct sl_stream *in, const char *name, struct sl_lookup *lk,
				   const struct sl_schema *out);

#endif
