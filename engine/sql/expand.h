/*
 * expand.h - the Expand operator of GROUPING SETS, ROLLUP and CUBE (Flink's Expand): each
 * input row comes out once per grouping set, with the grouping columns outside that set
 * made NULL and the set's number appended as a BIGINT column ($e), so that one GROUP BY
 * over (grouping columns, $e) computes every set's groups apart.
 *
 * Ownership: the planner owns the struct (sl_expand_create / sl_expand_destroy) and the
 * job borrows it as the flat_map's argument. Stateless; any shard.
 */
#ifndef SL_SQL_EXPAND_H
#define SL_SQL_EXPAND_H

#include <stdint.h>

#include <sluice/job.h>

struct sl_expand;

/* An Expand of rows of `in` (nfields fields) into nsets rows: set i makes the fields in
 * null_masks[i] (bit f: field f, f < 64) NULL. NULL on ENOMEM. */
struct sl_expand *sl_expand_create(const struct sl_schema *in, const uint64_t *null_masks,
				   int nsets);
void sl_expand_destroy(void *x);
/* The operator on `in`, whose output schema is out (in's fields, then $e BIGINT). */
struct sl_stream *sl_expand_stream(struct sl_stream *in, const char *name, struct sl_expand *x,
				   const struct sl_schema *out);

#endif
