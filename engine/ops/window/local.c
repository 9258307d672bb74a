/*
 * local.c - the local stage of a two-stage window aggregation (runtime/op.h, struct
 * sl_combiner_ops; DESIGN §5): what a sending shard runs before its exchange, so that the
 * rows of a key and slice cross the exchange as one partial accumulator block instead of
 * one frame each. Flink's local-global window aggregation (LocalSlicingWindowAggOperator),
 * without its mini-batch buffer: rows are combined as they come.
 *
 * Partials live in a bounded table (../partials.h) keyed by (key, slice end). A row is
 * combined only while no window of its slice can fire at the sender's watermark; otherwise
 * it goes raw and the owner treats it as the late or re-firing row it is.
 *
 * Cost: one probe and the aggregates' add per row on the sender, where the one-stage plan
 * pays a ring frame per row and the owner's lookup; a flush costs one frame per partial.
 * Memory: SL_PARTIALS_CAP x (40 + acc_size) bytes, a slot array and the keys' bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "partials.h"
#include "window_int.h"

struct local {
	const struct sl_window_cfg *c;
	struct sl_partials *t; /* namespace: slice end */
	sl_ts_t next_flush;    /* the smallest first-window end - 1 of the partials held */
};

const struct sl_combiner_ops *sl_window_combiner_of(const void *op_cfg, const void **local_cfg)
{
	const struct sl_window_cfg *c = op_cfg;

	*local_cfg = c;
	/* a processing-time window assigns by the owner's clock: no partials before it */
	return c->two_phase && !c->spec.proctime ? &sl_window_combiner : NULL;
}

static void *local_create(const void *op_cfg)
{
	const struct sl_window_cfg *c = op_cfg;
	struct local *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->c = c;
	l->next_flush = SL_TS_MAX;
	l->t = sl_partials_create(SL_PARTIALS_CAP, c->acc_size);
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
	const struct sl_window_cfg *c = l->c;
	sl_ts_t s_end = slice_end_of(c, ts), fire = first_end(c, s_end) - 1;
	uint32_t i;
	uint8_t *acc;
	int rc;

	if (fire <= wm)
		return 0; /* a window of its slice may have fired: the owner decides */
	rc = sl_partials_get(l->t, hash, s_end, key, klen, &i);
	if (rc < 0)
		return rc;
	acc = sl_partials_block(l->t, i);
	if (rc == 0) {
		if (c->has_init)
			for (int a = 0; a < c->naggs; a++)
				if (c->agg[a].k->init)
					c->agg[a].k->init(&c->agg[a], acc + c->agg[a].off);
		if (fire < l->next_flush)
			l->next_flush = fire;
	}
	for (int a = 0; a < c->naggs; a++)
		c->agg[a].k->add(&c->agg[a], acc + c->agg[a].off, row);
	l->t->e[i].nrows++;
	return 1;
}

static sl_ts_t local_next_flush(const void *lp)
{
	const struct local *l = lp;

	return l->next_flush;
}

/* Partials leave in insertion order; each carries an event time inside its slice. */
static void local_flush(void *lp, sl_partial_emit_fn emit, void *arg)
{
	struct local *l = lp;
	const struct sl_partials *t = l->t;

	for (uint32_t i = 0; i < t->n; i++) {
		const struct sl_partial_entry *e = &t->e[i];

		emit(arg, e->hash, sl_partials_key(t, i), e->klen, e->ns - 1,
		     sl_partials_block(t, i), t->block, e->nrows);
	}
	sl_partials_reset(l->t);
	l->next_flush = SL_TS_MAX;
}

const struct sl_combiner_ops sl_window_combiner = {
	.timed = true,
	.create = local_create,
	.destroy = local_destroy,
	.add = local_add,
	.next_flush = local_next_flush,
	.flush = local_flush,
};
