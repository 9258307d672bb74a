/*
 * explain.c - EXPLAIN / `sluice explain`: what each planned job will run, read from the job
 * graph itself (the same one sl_job_run() executes), so the text cannot drift from the plan.
 *
 * Per job: its stages (a stage starts at a source or a repartitioning), each stage's
 * operators in chain order, the exchange keys between stages, the state each operator keeps,
 * and the watermark path from every source (strategy, delay, emission, idleness).
 */
#include <inttypes.h>
#include <string.h>

#include "graph.h"
#include "plan_int.h"

/* The node's kind as checkpoints name it (graph.h), but SQL's calculations, which are
 * flat_maps, as "calc". */
static const char *node_kind(const struct sl_stream *n)
{
	return n->kind == SL_NODE_FLATMAP ? "calc" : sl_node_kind_name(n);
}

static void print_wm(FILE *f, const struct sl_stream *n)
{
	const struct sl_wm_strategy *w = &n->wm;

	switch (w->kind) {
	case SL_WM_NONE:
		fprintf(f, "no event time");
		return;
	case SL_WM_MONOTONOUS:
		fprintf(f, "watermark = max rowtime");
		break;
	case SL_WM_BOUNDED:
		fprintf(f, "watermark = max rowtime - %" PRId64 " ms", w->max_delay_ms);
		break;
	case SL_WM_CUSTOM:
		fprintf(f, "custom watermark");
		break;
	}
	if (w->interval_ms)
		fprintf(f, ", emitted every %" PRId64 " ms", w->interval_ms);
	else
		fprintf(f, ", emitted on every record that advances it");
	if (w->idle_timeout_ms)
		fprintf(f, ", split idle after %" PRId64 " ms", w->idle_timeout_ms);
	fprintf(f, ", rowtime from %s",
		w->ts_field >= 0 ? sl_schema_name(n->schema, w->ts_field) : "a computed column");
}

static void print_state(FILE *f, const struct sl_stream *n)
{
	if (n->kind == SL_NODE_KEYED && n->ops->explain)
		n->ops->explain(n->op_cfg, f);
	else
		fprintf(f, "stateless");
}

static void print_keys(FILE *f, const struct sl_stream *k)
{
	for (int i = 0; i < k->nfields; i++)
		fprintf(f, "%s%s", i ? ", " : "", sl_schema_name(k->schema, k->fields[i]));
}

static void explain_job(struct sl_job *job, const char *name, FILE *f)
{
	fprintf(f, "== job %s\n", name);
	if (sl_plan_build(job)) {
		fprintf(f, "   (cannot plan: %s)\n", sl_job_error(job)->msg);
		return;
	}
	for (int s = 0; s < job->nstages; s++) {
		const struct sl_stage *st = &job->stage[s];

		fprintf(f, "stage %d: ", s);
		if (st->input->kind == SL_NODE_SOURCE) {
			fprintf(f, "source %s\n", st->input->name);
			fprintf(f, "    time: ");
			print_wm(f, st->input);
			fprintf(f, "\n");
		} else {
			fprintf(f, "exchange by hash of (");
			print_keys(f, st->input);
			fprintf(f, ") from stage");
			for (int l = 0; l < st->nlanes; l++)
				fprintf(f, "%s %d", l ? "," : "", st->lanes[l]->in->stage);
			fprintf(f, "%s%s\n",
				st->nlanes > 1 ? " (keyed union; watermark = minimum)" : "",
				!st->input->xdef.combine
					? ", one phase: each key on its owner shard"
				: st->input->xdef.combine->timed
					? ", two-phase: rows pre-aggregated per key and slice on "
					  "each "
					  "sending shard"
					: ", two-phase: rows pre-aggregated per key on each "
					  "sending "
					  "shard for a mini-batch");
		}
		for (int i = 0; i < job->nnodes; i++) {
			const struct sl_stream *n = job->node[i];

			if (n->stage != s || n == st->input || n->kind == SL_NODE_KEYBY)
				continue;
			fprintf(f, "    %-13s %-28s ", node_kind(n), n->name);
			print_state(f, n);
			fprintf(f, "\n");
		}
	}
}

void sl_sql_explain_job(const struct sl_sql_script *s, int i, FILE *f)
{
	explain_job(sl_sql_job(s, i), sl_sql_job_title(s, i), f);
}

void sl_sql_explain(const struct sl_sql_script *s, FILE *f)
{
	for (int i = 0; i < sl_sql_njobs(s); i++)
		explain_job(sl_sql_job(s, i), sl_sql_job_title(s, i), f);
}
