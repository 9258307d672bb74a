/*
 * group_agg_local.c - the local stage of a two-stage updating GROUP BY (runtime/op.h,
 * struct sl_combiner_ops; DESIGN §5): on a sending shard, rows are combined per key into
 * partial accumulators (../partials.h, namespace 0) for at most the mini-batch latency or
 * until the mini-batch size of keys is held, then cross the exchange as partials that the
 * owner merges (group_agg.c, ga_merge_partial). Flink's MiniBatchLocalGroupAggFunction,
 * without its buffer of rows: rows are combined as they come.
 *
 * Untimed: a GROUP BY has no event-time windows, so a partial may wait across watermarks
 * and idle markers; barriers and end of input flush it (the exchange does).
 *
 * Cost: one probe and the aggregates' add per row on the sender; the owner pays one state
 * read-modify-write and one -U/+U per partial instead of per row.
 */
#include <errno.h>
#include <stdlib.h>

#include "agg.h"
#include "group_agg.h"
#include "op.h"
#include "partials.h"

struct local {
	const struct sl_ga_local *c;
	struct sl_partials *t;
};

static void *local_create(const void *cfg)
{
	const struct sl_ga_local *c = cfg;
	struct local *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->c = c;
	l->t = sl_partials_create(c->cap, c->block);
	if (!l->t) {
		free(l);
		return NULL;
	}
	return l;
}

static void local_destroy(void *lp)
{
	struct local *l = lp;

	if (!l)
		return;
	sl_partials_destroy(l->t);
	free(l);
}

/* Hot path: one probe, the aggregates' add. */
static int local_add(void *lp, uint64_t hash, const uint8_t *key, uint32_t klen, sl_ts_t ts,
		     const struct sl_row *row, sl_ts_t wm)
{
	struct local *l = lp;
	struct sl_partial_entry *e;
	uint32_t i;
	uint8_t *blk;
	int rc;

	(void)wm; /* untimed */
	rc = sl_partials_get(l->t, hash, 0, key, klen, &i);
	if (rc < 0)
		return rc;
	blk = sl_partials_block(l->t, i);
	for (int a = 0; a < l->c->naggs; a++)
		l->c->agg[a]->k->add(l->c->agg[a], blk + l->c->agg[a]->off, row);
	e = &l->t->e[i];
	e->nrows++;
	if (ts > e->ts)
		e->ts = ts;
	return 1;
}

static sl_ts_t local_next_flush(const void *lp)
{
	const struct local *l = lp;

	return l->t->n ? 0 : SL_TS_MAX;
}

static sl_ts_t local_max_delay(const void *cfg)
{
	const struct sl_ga_local *c = cfg;

	return c->delay_ms;
}

/* Each partial carries the greatest event time combined into it (the rows' results are
 * emitted at it). */
static void local_flush(void *lp, sl_partial_emit_fn emit, void *arg)
{
	struct local *l = lp;
	const struct sl_partials *t = l->t;

	for (uint32_t i = 0; i < t->n; i++) {
		const struct sl_partial_entry *e = &t->e[i];

		emit(arg, e->hash, sl_partials_key(t, i), e->klen, e->ts, sl_partials_block(t, i),
		     t->block, e->nrows);
	}
	sl_partials_reset(l->t);
}

const struct sl_combiner_ops sl_group_agg_combiner = {
	.timed = false,
	.create = local_create,
	.destroy = local_destroy,
	.add = local_add,
	.next_flush = local_next_flush,
	.max_delay = local_max_delay,
	.flush = local_flush,
};
