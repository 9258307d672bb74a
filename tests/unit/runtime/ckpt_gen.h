/*
 * ckpt_gen.h - the generated source of the checkpoint tests: NSPLITS splits of PER_SPLIT
 * rows (key = seq % NKEYS, seq), with position/seek so a restore resumes each split exactly.
 * The including test defines PER_SPLIT, NSPLITS and NKEYS first.
 *
 * With CKPT_GEN_STEP defined, a split emits at most CKPT_GEN_STEP rows more after each
 * completed checkpoint (the test's on_checkpoint calls ckpt_gen_checkpointed), counted from
 * where the run started: checkpoints then fall mid-input however fast or slow the machine
 * runs, instead of depending on the clock.
 */
#ifndef SL_TEST_CKPT_GEN_H
#define SL_TEST_CKPT_GEN_H

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/job.h>

#include "test.h"

struct gen_split {
	int64_t next;
	int64_t base; /* where this run started: 0, or the restored position */
};

#ifdef CKPT_GEN_STEP
static _Atomic int64_t gen_checkpoints; /* completed in this run */

static void ckpt_gen_checkpointed(void)
{
	atomic_fetch_add(&gen_checkpoints, 1);
}

static void ckpt_gen_reset(void)
{
	atomic_store(&gen_checkpoints, 0);
}
#endif

static int gen_nsplits(const void *cfg)
{
	return NSPLITS;
}

static void *gen_open(const void *cfg, int split, struct sl_error *err)
{
	return calloc(1, sizeof(struct gen_split));
}

static int gen_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct gen_split *g = state;
	int64_t *next = &g->next, limit = PER_SPLIT;
	int n = 0;

#ifdef CKPT_GEN_STEP
	limit = g->base + (atomic_load(&gen_checkpoints) + 1) * CKPT_GEN_STEP;
	if (limit > PER_SPLIT)
		limit = PER_SPLIT;
#endif
	if (*next == PER_SPLIT)
		return SL_SRC_EOF;
	while (n < max && *next < limit) {
		struct sl_row_builder b;

		sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 2);
		sl_rowb_set_i64(&b, 0, *next % NKEYS);
		sl_rowb_set_i64(&b, 1, *next);
		T_ASSERT(sl_src_emit(c, sl_rowb_finish(&b)) == 0);
		(*next)++;
		n++;
	}
	return n;
}

static int gen_position(void *state, void *buf, size_t cap, size_t *len)
{
	memcpy(buf, &((struct gen_split *)state)->next, 8);
	*len = 8;
	return 0;
}

static int gen_seek(void *state, const void *pos, size_t len)
{
	if (len != 8)
		return -EINVAL;
	memcpy(&((struct gen_split *)state)->next, pos, 8);
	((struct gen_split *)state)->base = ((struct gen_split *)state)->next;
	return 0;
}

static void gen_close(void *state)
{
	free(state);
}

static const struct sl_source_ops gen_ops = {
	.name = "gen", .nsplits = gen_nsplits, .open = gen_open, .poll = gen_poll,
	.close = gen_close, .position = gen_position, .seek = gen_seek,
};

#endif
