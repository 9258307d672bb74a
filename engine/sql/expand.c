/*
 * expand.c - the Expand operator (expand.h): nsets output rows per input row.
 *
 * Cost per input row: nsets rows built field by field in the output scratch and emitted;
 * no allocation. A changelog input keeps each row's kind, so a retraction retracts the
 * row of every set.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expand.h"
#include "op.h"

struct sl_expand {
	int nfields;
	int nsets;
	enum sl_type types[SL_SCHEMA_MAX_FIELDS];
	uint64_t masks[]; /* nsets */
};

struct sl_expand *sl_expand_create(const struct sl_schema *in, const uint64_t *null_masks,
				   int nsets)
{
	struct sl_expand *x = malloc(sizeof(*x) + (size_t)nsets * sizeof(uint64_t));

	if (!x)
		return NULL;
	x->nfields = sl_schema_nfields(in);
	x->nsets = nsets;
	for (int i = 0; i < x->nfields; i++)
		x->types[i] = sl_schema_type(in, i);
	memcpy(x->masks, null_masks, (size_t)nsets * sizeof(uint64_t));
	return x;
}

void sl_expand_destroy(void *x)
{
	free(x);
}

static void expand_row(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *in, void *arg)
{
	const struct sl_expand *x = arg;

	for (int s = 0; s < x->nsets; s++) {
		struct sl_row_builder *b = sl_ctx_out(ctx);
		const struct sl_row *row;

		for (int i = 0; i < x->nfields; i++)
			if (i < 64 && (x->masks[s] >> i & 1))
				sl_rowb_set_null(b, i);
			else
				sl_rowb_copy_field(b, i, in, i, x->types[i]);
		sl_rowb_set_i64(b, x->nfields, s);
		sl_rowb_set_kind(b, (enum sl_row_kind)in->kind);
		row = sl_rowb_finish(b);
		if (!row) { /* only an input within 8 bytes of the scratch row: never dropped */
			sl_shard_fail(
				ctx->shard, -E2BIG,
				"operator '%s': an expanded row is larger than the row scratch",
				ctx->def->name);
			return;
		}
		sl_emit(ctx, ts, row);
	}
}

struct sl_stream *sl_expand_stream(struct sl_stream *in, const char *name, struct sl_expand *x,
				   const struct sl_schema *out)
{
	return sl_stream_flat_map(in, name, expand_row, x, out);
}
