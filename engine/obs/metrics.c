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
#include <stdbool.h>
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

/* "name=value, name=value" of an encoded key, cut to cap - 1 bytes. */
static void key_text(const struct sl_stream *by, const struct sl_hot_key *k, char *out, size_t cap)
{
	const struct sl_op_def *d = &by->xdef;
	struct sl_schema *ks = sl_schema_create();
	uint64_t buf[SL_ROW_SCRATCH / 8];
	char row[512];
	struct sl_row_builder b;
	const struct sl_row *r = NULL;
	int rc = 0;

	if (k->klen > SL_HOT_KEY_BYTES || !ks) {
		snprintf(out, cap, "(a %u-byte key, hash %016" PRIx64 ")", k->klen, k->hash);
		sl_schema_destroy(ks);
		return;
	}
	for (int i = 0; i < d->nkey && !rc; i++) {
		int f = d->key_fields[i];

		rc = d->key_types[i] == SL_TYPE_DECIMAL
			     ? sl_schema_add_decimal(ks, sl_schema_name(d->in_schema, f),
						     sl_schema_precision(d->in_schema, f),
						     sl_schema_scale(d->in_schema, f))
			     : sl_schema_add(ks, sl_schema_name(d->in_schema, f), d->key_types[i]);
	}
	if (!rc) {
		sl_rowb_init(&b, buf, sizeof buf, d->nkey);
		for (int i = 0; i < d->nkey; i++)
			sl_key_decode_field(k->key, k->klen, i, d->key_types[i], &b, i);
		r = sl_rowb_finish(&b);
	}
	if (!r || sl_row_format(r, ks, row, sizeof row) >= (int)sizeof row) {
		snprintf(out, cap, "(hash %016" PRIx64 ")", k->hash);
	} else {
		/* +I[v1, v2] -> name=v1 or (name1, name2)=(v1, v2) */
		const char *v = strchr(row, '[') + 1;
		size_t n = strlen(v);

		if (n && v[n - 1] == ']')
			n--;
		if (d->nkey == 1) {
			snprintf(out, cap, "%s=%.*s", sl_schema_name(ks, 0), (int)n, v);
		} else {
			size_t o = 0;

			o += (size_t)snprintf(out + o, cap - o, "(");
			for (int i = 0; i < d->nkey && o < cap; i++)
				o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? ", " : "",
						      sl_schema_name(ks, i));
			if (o < cap)
				snprintf(out + o, cap - o, ")=(%.*s)", (int)n, v);
		}
	}
	if (strlen(out) == cap - 1 && cap > 4)
		memcpy(out + cap - 4, "...", 4);
	sl_schema_destroy(ks);
}

int sl_job_hot_keys(const struct sl_job *job, double min_share, struct sl_job_hot_key *out, int max)
{
	const struct sl_runtime *rt = job->rt;
	int nout = 0;

	if (!rt || !rt->shards || rt->nshards > 256)
		return 0;
	for (int n = 0; n < job->nnodes && nout < max; n++) {
		const struct sl_stream *by = job->node[n], *into = NULL;
		const struct sl_hot_keys *h[256];
		struct sl_hot_key top[8];
		uint64_t sampled;
		int k;

		if (by->kind != SL_NODE_KEYBY)
			continue;
		for (int i = 0; i < rt->nshards; i++)
			h[i] = rt->shards[i].hot ? &rt->shards[i].hot[n] : NULL;
		k = sl_hot_keys_top(h, rt->nshards, min_share, top, max - nout < 8 ? max - nout : 8,
				    &sampled);
		for (int j = 0; j < job->nnodes; j++)
			if (job->node[j]->in == by)
				into = job->node[j];
		for (int i = 0; i < k; i++) {
			struct sl_job_hot_key *o = &out[nout++];

			o->op = by->name;
			o->into = into ? into->name : "";
			o->two_phase = by->xdef.combine != NULL && rt->nshards > 1;
			o->share = top[i].share;
			o->share_hi = top[i].share_hi;
			key_text(by, &top[i], o->key, sizeof o->key);
		}
	}
	return nout;
}

/* Keys above this share of a key_by's records are named by --metrics. */
#define HOT_SHARE 0.05

static void print_hot_keys(const struct sl_job *job, FILE *f)
{
	struct sl_job_hot_key hk[32];
	int n = sl_job_hot_keys(job, HOT_SHARE, hk, 32);

	for (int i = 0; i < n; i++)
		fprintf(f, "hot key of %s: %s, %.1f-%.1f %% of its records (%s)\n", hk[i].op,
			hk[i].key, 100 * hk[i].share, 100 * hk[i].share_hi,
			hk[i].two_phase ? "absorbed by the two-phase aggregation"
					: "one owner shard");
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
	print_hot_keys(job, f);
}
