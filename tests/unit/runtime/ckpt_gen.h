/*
 * ckpt_gen.h - the generated source of the checkpoint tests: NSPLITS splits of PER_SPLIT
 * rows (key = seq % NKEYS, seq), with position/seek so a restore resumes each split exactly.
 * The including test defines PER_SPLIT, NSPLITS and NKEYS first.
 */
#ifndef SL_TEST_CKPT_GEN_H
#define SL_TEST_CKPT_GEN_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/job.h>

#include "test.h"

static int gen_nsplits(const void *cfg)
{
	return NSPLITS;
}

static void *gen_open(const void *cfg, int split, struct sl_error *err)
{
	return calloc(1, sizeof(int64_t));
}

static int gen_poll(void *state, struct sl_src_ctx *c, int max)
{
	int64_t *next = state;
	int n = 0;

	if (*next == PER_SPLIT)
		return SL_SRC_EOF;
	while (n < max && *next < PER_SPLIT) {
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
	memcpy(buf, state, 8);
	*len = 8;
	return 0;
}

static int gen_seek(void *state, const void *pos, size_t len)
{
	if (len != 8)
		return -EINVAL;
	memcpy(state, pos, 8);
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
