/*
 * prometheus.c - a job's counters in the Prometheus text exposition format (0.0.4), as
 * /metrics serves them (http.c).
 *
 * Names follow Prometheus's conventions: a sluice_ prefix, base units (seconds, bytes),
 * counters ending in _total, one family per quantity with the instance in labels
 * (job, operator, shard, stage ...), HELP and TYPE once per family. Operators are
 * labelled by name; a name used by more than one node gets "#<node id>" so that no two
 * series collide. Shards not readable at this instant (wiring, unwiring) are left out
 * rather than shown as zeros, which Prometheus would take for a counter reset.
 */
#include <inttypes.h>
#include <string.h>

#include "snapshot.h"

struct family {
	const char *name, *type, *help;
};

static void header(struct sl_obs_buf *b, const struct family *f)
{
	sl_obs_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
}

static bool name_is_shared(const struct sl_job *job, int nnodes, int node)
{
	const char *name = sl_obs_node_name(job, node);

	for (int n = 0; n < nnodes; n++)
		if (n != node && !strcmp(sl_obs_node_name(job, n), name))
			return true;
	return false;
}

static void job_label(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	sl_obs_buf_printf(b, "job=\"");
	sl_obs_buf_escaped(b, sl_obs_job_name(s->job), false);
	sl_obs_buf_printf(b, "\"");
}

static void op_labels(struct sl_obs_buf *b, const struct sl_obs_snap *s, int node, int shard)
{
	sl_obs_buf_printf(b, "{");
	job_label(b, s);
	sl_obs_buf_printf(b, ",operator=\"");
	sl_obs_buf_escaped(b, sl_obs_node_name(s->job, node), false);
	if (name_is_shared(s->job, s->nnodes, node))
		sl_obs_buf_printf(b, "#%d", node);
	sl_obs_buf_printf(b, "\",shard=\"%d\"}", shard);
}

enum op_field { F_IN, F_OUT, F_LATE, F_STATE_ENTRIES, F_STATE_BYTES };

static uint64_t op_value(const struct sl_obs_op *o, enum op_field f)
{
	switch (f) {
	case F_IN:
		return o->in;
	case F_OUT:
		return o->out;
	case F_LATE:
		return o->late;
	case F_STATE_ENTRIES:
		return o->state_entries;
	case F_STATE_BYTES:
		return o->state_bytes;
	}
	return 0;
}

static void operators(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	static const struct family fams[] = {
		[F_IN] = { "sluice_operator_records_in_total", "counter",
			   "Records that entered the operator instance." },
		[F_OUT] = { "sluice_operator_records_out_total", "counter",
			    "Records the operator instance emitted." },
		[F_LATE] = { "sluice_operator_records_late_total", "counter",
			     "Records that arrived beyond the allowed lateness of their window." },
		[F_STATE_ENTRIES] = { "sluice_operator_state_entries", "gauge",
				      "Keyed state entries or open window slices held." },
		[F_STATE_BYTES] = { "sluice_operator_state_bytes", "gauge",
				    "Approximate bytes of keyed state held, as last counted." },
	};

	for (int f = F_IN; f <= F_STATE_BYTES; f++) {
		header(b, &fams[f]);
		for (int n = 0; n < s->nnodes; n++)
			for (int i = 0; i < s->nshards; i++) {
				if (!s->shard[i].seen)
					continue;
				sl_obs_buf_printf(b, "%s", fams[f].name);
				op_labels(b, s, n, i);
				sl_obs_buf_printf(b, " %" PRIu64 "\n",
						  op_value(&s->op[n * s->nshards + i], f));
			}
	}
	header(b, &(struct family){ "sluice_operator_watermark_seconds", "gauge",
				    "Event-time watermark at the operator's input (Unix time)." });
	for (int n = 0; n < s->nnodes; n++)
		for (int i = 0; i < s->nshards; i++) {
			sl_ts_t wm = s->op[n * s->nshards + i].watermark;

			if (!s->shard[i].seen || wm == SL_TS_MIN)
				continue; /* no watermark yet: no sample */
			sl_obs_buf_printf(b, "sluice_operator_watermark_seconds");
			op_labels(b, s, n, i);
			if (wm == SL_TS_MAX)
				sl_obs_buf_printf(b, " +Inf\n");
			else
				sl_obs_buf_printf(b, " %" PRId64 ".%03d\n", wm / 1000,
						  (int)((wm % 1000 + 1000) % 1000));
		}
}

static void stages(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	header(b, &(struct family){ "sluice_stage_backpressured_seconds_total", "counter",
				    "Time the stage instance could not send (outputs full)." });
	for (int st = 0; st < s->nstages; st++)
		for (int i = 0; i < s->nshards; i++) {
			uint64_t ms = s->stage_blocked_ms[st * s->nshards + i];

			if (!s->shard[i].seen)
				continue;
			sl_obs_buf_printf(b, "sluice_stage_backpressured_seconds_total{");
			job_label(b, s);
			sl_obs_buf_printf(b, ",stage=\"%d\",input=\"", st);
			sl_obs_buf_escaped(b, sl_obs_stage_input(s->job, st), false);
			sl_obs_buf_printf(b, "\",shard=\"%d\"} %" PRIu64 ".%03u\n", i, ms / 1000,
					  (unsigned)(ms % 1000));
		}
	header(b, &(struct family){
			  "sluice_exchange_ring_full_total", "counter",
			  "Times the producer of an exchange channel found its ring full." });
	for (int k = 0; k < s->nrings; k++) {
		const struct sl_obs_ring *r = &s->ring[k];

		sl_obs_buf_printf(b, "sluice_exchange_ring_full_total{");
		job_label(b, s);
		sl_obs_buf_printf(
			b,
			",stage=\"%d\",lane=\"%d\",from_shard=\"%d\",to_shard=\"%d\"} %" PRIu64
			"\n",
			r->stage, r->lane, r->from, r->to, r->full);
	}
}

static void shards(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	static const struct family fams[] = {
		{ "sluice_dead_letters_total", "counter",
		  "Undecodable records sent to the dead-letter output." },
		{ "sluice_shard_loop_turns_total", "counter", "Turns of the shard loop." },
		{ "sluice_shard_idle_loop_turns_total", "counter",
		  "Turns of the shard loop that found no work." },
	};

	for (int f = 0; f < 3; f++) {
		header(b, &fams[f]);
		for (int i = 0; i < s->nshards; i++) {
			const struct sl_obs_shard *sh = &s->shard[i];

			if (!sh->seen)
				continue;
			sl_obs_buf_printf(b, "%s{", fams[f].name);
			job_label(b, s);
			sl_obs_buf_printf(b, ",shard=\"%d\"} %" PRIu64 "\n", i,
					  f == 0   ? sh->dead_letters
					  : f == 1 ? sh->loops
						   : sh->idle_loops);
		}
	}
	header(b, &(struct family){ "sluice_checkpoints_completed_total", "counter",
				    "Checkpoints that completed (durable)." });
	sl_obs_buf_printf(b, "sluice_checkpoints_completed_total{");
	job_label(b, s);
	sl_obs_buf_printf(b, "} %" PRIu64 "\n", s->ckpt_completed);
	header(b, &(struct family){ "sluice_checkpoints_failed_total", "counter",
				    "Checkpoints that failed or timed out." });
	sl_obs_buf_printf(b, "sluice_checkpoints_failed_total{");
	job_label(b, s);
	sl_obs_buf_printf(b, "} %" PRIu64 "\n", s->ckpt_failed);
}

void sl_obs_render_prometheus(const struct sl_obs_snap *s, struct sl_obs_buf *b)
{
	if (s->started) {
		operators(b, s);
		stages(b, s);
		shards(b, s);
	}
	header(b, &(struct family){ "process_resident_memory_bytes", "gauge",
				    "Resident memory size in bytes." });
	sl_obs_buf_printf(b, "process_resident_memory_bytes %" PRIu64 "\n", s->rss_bytes);
}
