/*
 * plan.c - cuts the logical graph into stages and gives every node its operator definition.
 *
 * A stage starts at every source and at every key_by (a repartitioning); every other node
 * runs in its input's stage, chained by direct calls (DESIGN §3). A key_by node yields two
 * operators: the exchange-out at the tail of the upstream stage and the receiver at the head
 * of its own stage. Nodes are created in topological order (an input exists before its
 * consumer), so one pass in creation order suffices.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "hash.h"

static const struct sl_op_ops *ops_of(const struct sl_stream *n)
{
	switch (n->kind) {
	case SL_NODE_SOURCE:
		return &sl_source_root_ops;
	case SL_NODE_FILTER:
		return &sl_filter_ops;
	case SL_NODE_MAP:
		return &sl_map_ops;
	case SL_NODE_PROJECT:
		return &sl_project_ops;
	case SL_NODE_FLATMAP:
		return &sl_flat_map_ops;
	case SL_NODE_KEYBY:
		return &sl_keyby_in_ops;
	case SL_NODE_KEYED:
		return n->ops;
	case SL_NODE_SIDE:
		return &sl_side_ops;
	case SL_NODE_SINK:
		return &sl_sink_ops_adapter;
	}
	return NULL;
}

static void set_key(struct sl_op_def *d, const struct sl_stream *keyby)
{
	d->nkey = keyby->nfields;
	for (int i = 0; i < keyby->nfields; i++) {
		d->key_fields[i] = keyby->fields[i];
		d->key_types[i] = sl_schema_type(keyby->schema, keyby->fields[i]);
	}
}

/*
 * Two-stage aggregation (op.h, struct sl_combiner_ops): an exchange runs the local stage of
 * the keyed operator behind it when that operator is the exchange's only consumer and its
 * config accepts the split. A keyed union's lanes stay raw (several exchanges feed one
 * operator there).
 */
static void plan_combiner(struct sl_job *job, struct sl_stream *by)
{
	struct sl_stream *only = NULL;
	int n = 0;

	by->xdef.combine = NULL;
	by->xdef.combine_cfg = NULL;
	if (by->merge_into || by->nlanes > 1)
		return;
	for (int j = 0; j < job->nnodes; j++)
		if (job->node[j]->in == by) {
			only = job->node[j];
			n++;
		}
	if (n != 1 || only->kind != SL_NODE_KEYED || !only->ops->combiner_of ||
	    !only->ops->merge_partial)
		return;
	by->xdef.combine = only->ops->combiner_of(only->op_cfg, &by->xdef.combine_cfg);
}

int sl_plan_build(struct sl_job *job)
{
	int nstages = 0, nsinks = 0;

	if (job->err.code)
		return job->err.code;
	if (job->nnodes == 0) {
		sl_job_set_error(job, -EINVAL, "job '%s' has no sources", job->name);
		return -EINVAL;
	}
	for (int s = 0; job->stage && s < job->nstages; s++)
		free(job->stage[s].lanes);
	free(job->stage);
	job->nstages = 0;
	job->stage = calloc((size_t)job->nnodes, sizeof(*job->stage));
	if (!job->stage) {
		sl_job_set_error(job, -ENOMEM, "out of memory planning the job");
		return -ENOMEM;
	}
	for (int i = 0; i < job->nnodes; i++) {
		struct sl_stream *n = job->node[i];
		struct sl_op_def *d = &n->def;

		if (n->kind == SL_NODE_KEYBY && n->merge_into) {
			/* another input of a keyed union: feeds the head's stage, lane n->lane */
			struct sl_stage *st = &job->stage[n->merge_into->stage];

			n->stage = n->merge_into->stage;
			st->lanes[n->lane] = n;
		} else if (n->kind == SL_NODE_SOURCE || n->kind == SL_NODE_KEYBY) {
			struct sl_stage *st = &job->stage[nstages];

			n->stage = nstages;
			st->id = nstages;
			st->input = n;
			st->nlanes = n->kind == SL_NODE_KEYBY ? n->nlanes : 0;
			if (st->nlanes) {
				st->lanes = calloc((size_t)st->nlanes, sizeof(*st->lanes));
				if (!st->lanes) {
					sl_job_set_error(job, -ENOMEM,
							 "out of memory planning the job");
					return -ENOMEM;
				}
				st->lanes[0] = n;
			}
			nstages++;
			job->nstages = nstages;
		} else {
			n->stage = n->in->stage;
		}
		nsinks += n->kind == SL_NODE_SINK;

		d->ops = ops_of(n);
		d->name = n->name;
		d->id = n->id;
		{
			char tok[300];

			sl_node_uid_token(job, n->id, tok, sizeof tok);
			d->state_id = (uint32_t)sl_hash_bytes(tok, (uint32_t)strlen(tok));
		}
		d->in_schema = n->in ? n->in->schema : NULL;
		d->out_schema = n->schema;
		d->cfg = n;
		if (n->kind == SL_NODE_KEYED)
			d->cfg = n->op_cfg;
		if (n->kind == SL_NODE_KEYBY) {
			d->in_schema = n->schema;
			set_key(d, n);
			n->xdef = *d;
			n->xdef.ops = &sl_exchange_out_ops;
			n->xdef.name = "exchange";
		} else if (n->kind == SL_NODE_KEYED) {
			set_key(d, n->in);
		}
	}
	job->nstages = nstages;
	for (int i = 0; i < job->nnodes; i++)
		if (job->node[i]->kind == SL_NODE_KEYBY)
			plan_combiner(job, job->node[i]);
	if (nsinks == 0) {
		sl_job_set_error(job, -EINVAL, "job '%s' has no sink: nothing would be written",
				 job->name);
		return -EINVAL;
	}
	return 0;
}
