/*
 * basic_ops.c - the stateless operators (filter, map, project, flat_map), the sink adapter
 * and the identity operators that mark roles in a chain (source root, side-output tap).
 *
 * All per-record hooks here are on the hot path: one call into user code or the connector,
 * no allocation; the output row is built in the instance's own scratch buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "fault.h"
#include "runtime.h"

static void identity_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	sl_emit(ctx, ts, row);
}

const struct sl_op_ops sl_source_root_ops = {
	.name = "source",
	.process = identity_process,
};

const struct sl_op_ops sl_side_ops = {
	.name = "side-output",
	.process = identity_process,
};

static void filter_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	const struct sl_stream *n = ctx->def->cfg;

	if (((sl_filter_fn)n->fn)(row, n->arg))
		sl_emit(ctx, ts, row);
}

const struct sl_op_ops sl_filter_ops = {
	.name = "filter",
	.process = filter_process,
};

static void emit_built(struct sl_ctx *ctx, sl_ts_t ts, struct sl_row_builder *b)
{
	const struct sl_row *out = sl_rowb_finish(b);

	if (!out) {
		sl_shard_fail(ctx->shard, -ENOSPC, "operator '%s': output row larger than %d bytes",
			      ctx->def->name, SL_ROW_SCRATCH);
		return;
	}
	sl_emit(ctx, ts, out);
}

static void map_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	const struct sl_stream *n = ctx->def->cfg;
	struct sl_row_builder *b = sl_ctx_out(ctx);

	sl_rowb_set_kind(b, (enum sl_row_kind)row->kind);
	((sl_map_fn)n->fn)(row, b, n->arg);
	emit_built(ctx, ts, b);
}

const struct sl_op_ops sl_map_ops = {
	.name = "map",
	.process = map_process,
};

static void project_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	const struct sl_stream *n = ctx->def->cfg;
	struct sl_row_builder *b = sl_ctx_out(ctx);

	sl_rowb_set_kind(b, (enum sl_row_kind)row->kind);
	for (int i = 0; i < n->nfields; i++)
		sl_rowb_copy_field(b, i, row, n->fields[i], sl_schema_type(n->schema, i));
	emit_built(ctx, ts, b);
}

const struct sl_op_ops sl_project_ops = {
	.name = "project",
	.process = project_process,
};

static void flat_map_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	const struct sl_stream *n = ctx->def->cfg;

	((sl_flat_map_fn)n->fn)(ctx, ts, row, n->arg);
}

const struct sl_op_ops sl_flat_map_ops = {
	.name = "flat_map",
	.process = flat_map_process,
};

/* ---- sinks ----------------------------------------------------------------------------
 * The adapter between the chain and a connector's sink ops. It remembers whether rows were
 * written since the last flush, so the shard can flush when it runs out of input: buffered
 * sinks then add no latency to an idle pipeline, and a busy one still writes in big chunks.
 */

struct sink_inst {
	void *state;
	bool dirty;
	bool ended; /* end of input reached */
};

static int sink_open(struct sl_ctx *ctx)
{
	const struct sl_stream *n = ctx->def->cfg;
	struct sl_error err = { 0 };
	struct sink_inst *si = calloc(1, sizeof(*si));

	if (!si)
		return -ENOMEM;
	ctx->self = si;
	si->state = n->sink_ops->open(n->cfg, n->schema, sl_shard_index(ctx->shard),
				      sl_shard_count(ctx->shard), &err);
	if (!si->state) {
		sl_shard_fail(ctx->shard, err.code ? err.code : -EIO, "sink '%s': %s", n->name,
			      err.msg[0] ? err.msg : "open failed");
		return err.code ? err.code : -EIO;
	}
	return 0;
}

static void sink_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	const struct sl_stream *n = ctx->def->cfg;
	struct sink_inst *si = ctx->self;
	int rc = n->sink_ops->write(si->state, ts, row);

	si->dirty = true;
	if (rc < 0)
		sl_shard_fail(ctx->shard, rc, "sink '%s': write failed: %s", n->name,
			      strerror(-rc));
}

static void sink_watermark(struct sl_ctx *ctx, sl_ts_t wm)
{
	const struct sl_stream *n = ctx->def->cfg;
	struct sink_inst *si = ctx->self;

	if (si && si->state && n->sink_ops->watermark)
		n->sink_ops->watermark(si->state, wm);
}

void sl_sink_flush(struct sl_ctx *ctx)
{
	const struct sl_stream *n = ctx->def->cfg;
	struct sink_inst *si = ctx->self;
	int rc;

	if (!si || !si->state || !si->dirty || !n->sink_ops->flush)
		return;
	/* an exactly-once sink publishes only through checkpoint commits: flushing it when the
	 * shard runs idle would make rows visible that a restore would write again */
	if (n->sink_ops->precommit && !si->ended)
		return;
	si->dirty = false;
	rc = n->sink_ops->flush(si->state);
	if (rc < 0)
		sl_shard_fail(ctx->shard, rc, "sink '%s': flush failed: %s", n->name,
			      strerror(-rc));
}

static void sink_end(struct sl_ctx *ctx)
{
	const struct sl_stream *n = ctx->def->cfg;
	struct sink_inst *si = ctx->self;

	if (!si)
		return;
	si->dirty = true; /* a final flush even if nothing was written */
	/* with a final checkpoint to come, an exactly-once sink's last rows wait for its
	 * commit: publishing them now would leave them visible and unrecorded if the process
	 * died before that checkpoint, and a restart would write them again */
	if (n->sink_ops->precommit && sl_shard_final_checkpoint(ctx->shard))
		return;
	si->ended = true;
	sl_sink_flush(ctx);
}

/*
 * Checkpoint barrier at a sink: an exactly-once sink pre-commits (its meta, what commit must
 * do, becomes this instance's snapshot bytes for the manifest); any other sink flushes, so
 * rows before the barrier are out once the checkpoint completes (at-least-once).
 */
#define SINK_META_MAX 65536

static int sink_snapshot(struct sl_ctx *ctx, uint64_t ckpt, struct sl_snap_buf *out)
{
	const struct sl_stream *n = ctx->def->cfg;
	struct sink_inst *si = ctx->self;
	size_t len = 0;
	void *meta;
	int rc;

	if (!si || !si->state)
		return 0;
	if (!n->sink_ops->precommit) {
		si->dirty = true;
		sl_sink_flush(ctx);
		return 0;
	}
	/* room for the meta, written in place by the sink */
	meta = sl_snap_reserve(out, SINK_META_MAX);
	if (!meta)
		return out->error;
	rc = n->sink_ops->precommit(si->state, ckpt, meta, SINK_META_MAX, &len);
	if (rc < 0)
		return rc;
	sl_fault_point("sink-precommit", ckpt);
	out->len += len;
	si->dirty = false;
	return 0;
}

static void sink_close(struct sl_ctx *ctx)
{
	const struct sl_stream *n = ctx->def->cfg;
	struct sink_inst *si = ctx->self;

	if (!si)
		return;
	if (si->state && n->sink_ops->close)
		n->sink_ops->close(si->state);
	free(si);
	ctx->self = NULL;
}

const struct sl_op_ops sl_sink_ops_adapter = {
	.name = "sink",
	.open = sink_open,
	.process = sink_process,
	.on_watermark = sink_watermark,
	.on_end = sink_end,
	.close = sink_close,
	.snapshot = sink_snapshot,
};
