/*
 * metrics.c - what a job's counters say (DESIGN.md, "Observability"): sl_job_stats() sums
 * them for the job and sl_job_print_metrics() prints them per operator and stage, as
 * `sluice run --metrics` shows at the end of a run.
 *
 * The counters are the shards' own (runtime.h: each shard writes only its own operator
 * instances' sl_op_metrics and stage times; rings count their own stalls): this layer only
 * reads them, so observing a job costs its record path nothing. Read after the run, or
 * racily while it runs (relaxed loads of monotonic counters).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "runtime.h"

void sl_job_stats(const struct sl_job *job, struct sl_job_stats *out)
{
	const struct sl_runtime *rt = job->rt;

	memset(out, 0, sizeof(*out));
	if (!rt || !rt->shards)
		return;
	out->checkpoints = rt->ckpt_completed;
	out->checkpoints_failed = rt->ckpt_failed;
	for (int i = 0; i < rt->nshards; i++) {
		out->dead_letters += rt->shards[i].dead_letters;
		for (int s = 0; s < job->nstages; s++)
			out->backpressure_ms += rt->shards[i].stage_blocked_ms[s];
	}
	for (size_t k = 0; rt->rings && k < (size_t)rt->nlanes * rt->nshards * rt->nshards; k++)
		if (rt->rings[k])
			out->ring_full += atomic_load_explicit(&rt->rings[k]->prod_full,
							       memory_order_relaxed);
	for (int n = 0; n < job->nnodes; n++) {
		const struct sl_stream *node = job->node[n];

		for (int i = 0; i < rt->nshards; i++) {
			const struct sl_op_metrics *m = &rt->shards[i].m[n];

			if (node->kind == SL_NODE_SOURCE)
				out->records_in += m->in;
			if (node->kind == SL_NODE_SINK)
				out->records_out += m->in;
			out->late_records += m->late;
			out->decimal_overflows += m->overflow;
			out->records_combined += m->combined;
			out->partials += m->partials;
		}
	}
}

void sl_job_print_metrics(const struct sl_job *job, void *f)
{
	const struct sl_runtime *rt = job->rt;

	if (!rt || !rt->shards)
		return;
	for (int n = 0; n < job->nnodes; n++) {
		const struct sl_stream *node = job->node[n];
		struct sl_op_metrics sum = { 0 };

		for (int i = 0; i < rt->nshards; i++) {
			const struct sl_op_metrics *m = &rt->shards[i].m[n];

			sum.in += m->in;
			sum.out += m->out;
			sum.late += m->late;
			sum.overflow += m->overflow;
			sum.state_entries += m->state_entries;
			sum.state_bytes += m->state_bytes;
			sum.ckpt_bytes += m->ckpt_bytes;
			sum.combined += m->combined;
			sum.partials += m->partials;
		}
		fprintf(f,
			"operator %-20s stage %d in %" PRIu64 " out %" PRIu64 " late %" PRIu64
			" state %" PRIu64,
			node->name, node->stage, sum.in, sum.out, sum.late, sum.state_entries);
		/* sizes only where there are some: stateless operators keep their short line */
		if (sum.state_bytes)
			fprintf(f, " (%" PRIu64 " bytes)", sum.state_bytes);
		if (sum.ckpt_bytes)
			fprintf(f, " checkpointed %" PRIu64 " bytes", sum.ckpt_bytes);
		if (sum.overflow)
			fprintf(f, " overflow %" PRIu64, sum.overflow);
		if (sum.combined)
			fprintf(f, " combined %" PRIu64 " rows into %" PRIu64 " partials",
				sum.combined, sum.partials);
		fputc('\n', f);
	}
	for (int s = 0; s < job->nstages; s++) {
		uint64_t blocked = 0, full = 0;

		for (int i = 0; i < rt->nshards; i++)
			blocked += rt->shards[i].stage_blocked_ms[s];
		/* stalls of the rings feeding the next stages out of s */
		for (int t = 0; t < job->nstages; t++) {
			for (int l = 0; l < job->stage[t].nlanes; l++) {
				if (job->stage[t].lanes[l]->in->stage != s)
					continue;
				for (int a = 0; a < rt->nshards; a++)
					for (int b = 0; b < rt->nshards; b++)
						full += atomic_load_explicit(
							&sl_rt_ring_lane((struct sl_runtime *)rt, t,
									 l, a, b)
								 ->prod_full,
							memory_order_relaxed);
			}
		}
		fprintf(f,
			"stage %d (%s) backpressured %" PRIu64 " ms over all shards, output "
			"rings full %" PRIu64 " times\n",
			s, job->stage[s].input->name, blocked, full);
	}
}
