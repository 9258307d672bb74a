/*
 * calc.c - the SQL calc operator: an optional WHERE predicate and a projection of compiled
 * expressions, fused into one flat_map so a row is read once and one row is built.
 *
 * The compiled programs are shared read-only by all shards; each shard evaluates with its
 * own struct sl_eval_ctx (scratch for intermediate strings), padded to its own cache lines so
 * shards never write the same line. The row kind (+I/-U/+U/-D) passes through unchanged: a
 * projection of a changelog is a changelog.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"

struct shard_eval {
	struct sl_eval_ctx ec;
	char pad[64 - sizeof(struct sl_eval_ctx) % 64];
};

/* How an output column is made: most are expressions, but a plain column of the same type
 * is copied slot for slot, and the rowtime computed by the source is the record's time. */
enum out_kind { OUT_EVAL = 0, OUT_COPY, OUT_TS };

struct sl_calc {
	struct sl_prog *pred; /* NULL: every row passes */
	int nout;
	struct sl_prog **out;	      /* [nout] */
	struct sl_sql_type *out_type; /* [nout] */
	uint8_t *kind;		      /* [nout] enum out_kind */
	int *copy_from;		      /* [nout] input field of OUT_COPY */
	bool reads_clock; /* a program reads proctime or the watermark: set them per row */
	int nshards;
	struct shard_eval *ev; /* [nshards] */
	char *scratch;	       /* nshards * SL_EVAL_SCRATCH */
};

void sl_calc_destroy(void *p)
{
	struct sl_calc *c = p;

	if (!c)
		return;
	sl_prog_destroy(c->pred);
	for (int i = 0; i < c->nout; i++)
		sl_prog_destroy(c->out[i]);
	free(c->out);
	free(c->out_type);
	free(c->kind);
	free(c->copy_from);
	free(c->ev);
	free(c->scratch);
	free(c);
}

struct sl_calc *sl_calc_create(int nout, int nshards)
{
	struct sl_calc *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->nout = nout;
	c->nshards = nshards;
	c->out = calloc((size_t)nout + 1, sizeof(*c->out));
	c->out_type = calloc((size_t)nout + 1, sizeof(*c->out_type));
	c->kind = calloc((size_t)nout + 1, sizeof(*c->kind));
	c->copy_from = calloc((size_t)nout + 1, sizeof(*c->copy_from));
	c->ev = aligned_alloc(64, sizeof(*c->ev) * (size_t)nshards);
	c->scratch = malloc((size_t)nshards * SL_EVAL_SCRATCH);
	if (!c->out || !c->out_type || !c->kind || !c->copy_from || !c->ev || !c->scratch) {
		sl_calc_destroy(c);
		return NULL;
	}
	memset(c->ev, 0, sizeof(*c->ev) * (size_t)nshards);
	for (int i = 0; i < nshards; i++) {
		c->ev[i].ec.scratch = c->scratch + (size_t)i * SL_EVAL_SCRATCH;
		c->ev[i].ec.scratch_cap = SL_EVAL_SCRATCH;
	}
	return c;
}

void sl_calc_set_pred(struct sl_calc *c, struct sl_prog *pred)
{
	c->pred = pred;
	c->reads_clock |= pred && sl_prog_reads_clock(pred);
}

void sl_calc_set_out(struct sl_calc *c, int i, struct sl_prog *p, const struct sl_sql_type *t)
{
	c->out[i] = p;
	c->out_type[i] = *t;
	c->reads_clock |= p && sl_prog_reads_clock(p);
}

void sl_calc_set_copy(struct sl_calc *c, int i, int field)
{
	c->kind[i] = OUT_COPY;
	c->copy_from[i] = field;
}

void sl_calc_set_ts(struct sl_calc *c, int i)
{
	c->kind[i] = OUT_TS;
}

uint64_t sl_calc_errors(const struct sl_calc *c)
{
	uint64_t n = 0;

	for (int i = 0; i < c->nshards; i++)
		n += c->ev[i].ec.errors;
	return n;
}

static void calc_one(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *in, struct sl_calc *c,
		     struct sl_eval_ctx *ec)
{
	struct sl_row_builder *b;
	const struct sl_row *row;

	if (c->reads_clock) {
		/* two calls into the runtime a row: only for programs that look */
		ec->proctime_ms = sl_ctx_proctime(ctx);
		ec->watermark = sl_ctx_watermark(ctx);
		ec->has_watermark = ec->watermark != SL_TS_MIN;
	}
	if (c->pred && !sl_prog_eval_pred(c->pred, in, ec))
		return;
	if (c->nout < 0) {
		/* filter only */
		sl_emit(ctx, ts, in);
		return;
	}
	b = sl_ctx_out(ctx);
	for (int i = 0; i < c->nout; i++) {
		switch (c->kind[i]) {
		case OUT_COPY:
			sl_rowb_copy_field(b, i, in, c->copy_from[i], c->out_type[i].type);
			break;
		case OUT_TS:
			/* a NULL rowtime was placed at SL_TS_MIN by the source */
			if (ts == SL_TS_MIN)
				sl_rowb_set_null(b, i);
			else
				sl_rowb_set_i64(b, i, ts);
			break;
		default:
			sl_prog_eval_into(c->out[i], in, ec, &c->out_type[i], b, i);
			break;
		}
	}
	sl_rowb_set_kind(b, (enum sl_row_kind)in->kind);
	row = sl_rowb_finish(b);
	if (!row) {
		/* the projected row outgrew the scratch row: count it, never emit garbage */
		ec->errors++;
		return;
	}
	sl_emit(ctx, ts, row);
}

/* One row; DECIMAL results that did not fit (NULL, as Flink) count for this operator. */
static void calc_row(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *in, void *arg)
{
	struct sl_calc *c = arg;
	struct sl_eval_ctx *ec = &c->ev[sl_ctx_shard(ctx)].ec;
	uint64_t ovf = ec->overflows;

	calc_one(ctx, ts, in, c, ec);
	if (ec->overflows != ovf)
		sl_ctx_count_overflow(ctx, ec->overflows - ovf);
}

struct sl_stream *sl_calc_stream(struct sl_stream *in, const char *name, struct sl_calc *c,
				 const struct sl_schema *out)
{
	return sl_stream_flat_map(in, name, calc_row, c, out);
}
