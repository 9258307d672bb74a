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

static void stage_labels(struct sl_obs_buf *b, const struct sl_obs_snap *s, int st, int shard)
{
	sl_obs_buf_printf(b, "{");
	job_label(b, s);
	sl_obs_buf_printf(b, ",stage=\"%d\",input=\"", st);
	sl_obs_buf_escaped(b, sl_obs_stage_input(s->job, st), false);
	sl_obs_buf_printf(b, "\",shard=\"%d\"}", shard);
}

/* Busy time as a counter, and Flink's three per-second figures as ratios (Prometheus wants
 * base units; rates since the endpoint's previous sample, snapshot.c). */
static void stage_times(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	static const struct family fams[] = {
		{ "sluice_stage_busy_seconds_total", "counter",
		  "Time the stage instance spent consuming or polling input." },
		{ "sluice_stage_busy_ratio", "gauge",
		  "Share of time the stage instance was busy lately (x1000: Flink's "
		  "busyTimeMsPerSecond)." },
		{ "sluice_stage_backpressured_ratio", "gauge",
		  "Share of time the stage instance could not send, outputs full (x1000: "
		  "backPressuredTimeMsPerSecond)." },
		{ "sluice_stage_idle_ratio", "gauge",
		  "Share of time the stage instance had no input (x1000: idleTimeMsPerSecond)." },
	};

	for (int f = 0; f < 4; f++) {
		header(b, &fams[f]);
		for (int st = 0; st < s->nstages; st++)
			for (int i = 0; i < s->nshards; i++) {
				int k = st * s->nshards + i;

				if (!s->shard[i].seen)
					continue;
				sl_obs_buf_printf(b, "%s", fams[f].name);
				stage_labels(b, s, st, i);
				if (f == 0)
					sl_obs_buf_printf(b, " %.9f\n",
							  (double)s->stage[k].busy_ns / 1e9);
				else
					sl_obs_buf_printf(b, " %.4f\n",
							  (f == 1   ? s->rate[k].busy_ms
							   : f == 2 ? s->rate[k].bp_ms
								    : s->rate[k].idle_ms) /
								  1000.0);
			}
	}
}

static void ring_fill(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	static const struct family fams[] = {
		{ "sluice_exchange_ring_used_bytes", "gauge",
		  "Bytes waiting in an exchange channel's ring." },
		{ "sluice_exchange_ring_capacity_bytes", "gauge",
		  "Size of an exchange channel's ring." },
		{ "sluice_exchange_frames_total", "counter",
		  "Frames (records, watermarks, barriers) sent on an exchange channel." },
	};

	for (int f = 0; f < 3; f++) {
		header(b, &fams[f]);
		for (int k = 0; k < s->nrings; k++) {
			const struct sl_obs_ring *r = &s->ring[k];

			sl_obs_buf_printf(b, "%s{", fams[f].name);
			job_label(b, s);
			sl_obs_buf_printf(
				b,
				",stage=\"%d\",lane=\"%d\",from_shard=\"%d\",to_shard=\"%d\"} "
				"%" PRIu64 "\n",
				r->stage, r->lane, r->from, r->to,
				f == 0	 ? r->used
				: f == 1 ? r->cap
					 : r->frames);
		}
	}
}

static void seconds(struct sl_obs_buf *b, sl_ts_t ms)
{
	if (ms == SL_TS_MAX)
		sl_obs_buf_printf(b, " +Inf\n");
	else
		sl_obs_buf_printf(b, " %" PRId64 ".%03d\n", ms / 1000,
				  (int)((ms % 1000 + 1000) % 1000));
}

/* Per split (a detailed snapshot only): where it is, its lag, watermark and idleness. */
static void split_series(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	static const struct family fams[] = {
		{ "sluice_source_split_position", "gauge",
		  "Where the split is: Kafka offset, bytes of the file, rows made." },
		{ "sluice_source_split_end", "gauge",
		  "Where the split ends now: high watermark, file size, rows to make." },
		{ "sluice_source_split_lag_records", "gauge",
		  "Records available on the split and not read yet (Kafka consumer lag)." },
		{ "sluice_source_split_watermark_seconds", "gauge",
		  "The split's own watermark (Unix time)." },
		{ "sluice_source_split_idle", "gauge",
		  "1 when the split counts as idle (table.exec.source.idle-timeout)." },
		{ "sluice_source_split_silent_seconds", "gauge",
		  "Time since the split's last record." },
	};

	for (int f = 0; f < 6; f++) {
		header(b, &fams[f]);
		for (int i = 0; i < s->nshards; i++) {
			const struct sl_obs_detail *d = s->shard[i].detail;

			for (int k = 0; d && k < d->nsplits; k++) {
				const struct sl_split_obs *sp = &d->split[k];
				int64_t v = f == 0 ? sp->p.pos : f == 1 ? sp->p.end : sp->p.lag;

				if ((f <= 2 && v < 0) || (f == 3 && sp->wm == SL_TS_MIN))
					continue; /* unknown: no sample */
				sl_obs_buf_printf(b, "%s{", fams[f].name);
				job_label(b, s);
				sl_obs_buf_printf(b, ",source=\"");
				sl_obs_buf_escaped(b, sl_obs_node_name(s->job, sp->node), false);
				sl_obs_buf_printf(b, "\",split=\"%d\",name=\"", sp->split);
				sl_obs_buf_escaped(b, sp->p.name, false);
				sl_obs_buf_printf(b, "\"}");
				if (f <= 2)
					sl_obs_buf_printf(b, " %" PRId64 "\n", v);
				else if (f == 3)
					seconds(b, sp->wm);
				else if (f == 4)
					sl_obs_buf_printf(b, " %d\n", sp->idle ? 1 : 0);
				else
					seconds(b, sp->silent_ms);
			}
		}
	}
	header(b, &(struct family){ "sluice_operator_waiting_windows", "gauge",
				    "Windows or event-time timers the operator instance holds "
				    "waiting for the watermark." });
	for (int n = 0; n < s->nnodes; n++)
		for (int i = 0; i < s->nshards; i++) {
			const struct sl_obs_detail *d = s->shard[i].detail;

			if (!d || !s->shard[i].seen || !sl_obs_node_is_keyed(s->job, n))
				continue;
			sl_obs_buf_printf(b, "sluice_operator_waiting_windows");
			op_labels(b, s, n, i);
			sl_obs_buf_printf(b, " %" PRIu64 "\n", d->node[n].pending);
		}
}

/* Wall clock minus watermark: how far event time trails now (meaningful when events are
 * stamped near real time, as Kafka's usually are). */
static void watermark_lag(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	header(b, &(struct family){ "sluice_operator_watermark_lag_seconds", "gauge",
				    "Wall clock minus the operator's input watermark." });
	for (int n = 0; n < s->nnodes; n++)
		for (int i = 0; i < s->nshards; i++) {
			sl_ts_t wm = s->op[n * s->nshards + i].watermark;

			if (!s->shard[i].seen || wm == SL_TS_MIN || wm == SL_TS_MAX)
				continue;
			sl_obs_buf_printf(b, "sluice_operator_watermark_lag_seconds");
			op_labels(b, s, n, i);
			sl_obs_buf_printf(b, " %.3f\n", (double)(s->now_ms - wm) / 1000.0);
		}
}

static void stages(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	header(b, &(struct family){ "sluice_stage_backpressured_seconds_total", "counter",
				    "Time the stage instance could not send (outputs full)." });
	for (int st = 0; st < s->nstages; st++)
		for (int i = 0; i < s->nshards; i++) {
			uint64_t ms = s->stage[st * s->nshards + i].blocked_ms;

			if (!s->shard[i].seen)
				continue;
			sl_obs_buf_printf(b, "sluice_stage_backpressured_seconds_total{");
			job_label(b, s);
			sl_obs_buf_printf(b, ",stage=\"%d\",input=\"", st);
			sl_obs_buf_escaped(b, sl_obs_stage_input(s->job, st), false);
			sl_obs_buf_printf(b, "\",shard=\"%d\"} %" PRIu64 ".%03u\n", i, ms / 1000,
					  (unsigned)(ms % 1000));
		}
	stage_times(b, s);
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
	ring_fill(b, s);
}

/* The last checkpoint that completed: how long, its alignment, its size; bytes so far. */
static void checkpoints(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	const struct sl_ckpt_obs *last = NULL;
	static const struct family fams[] = {
		{ "sluice_checkpoint_last_duration_seconds", "gauge",
		  "Barrier injected to complete, of the last completed checkpoint." },
		{ "sluice_checkpoint_last_alignment_seconds", "gauge",
		  "The longest barrier alignment of any stage instance in the last completed "
		  "checkpoint." },
		{ "sluice_checkpoint_last_size_bytes", "gauge",
		  "State files written by the last completed checkpoint." },
	};

	for (int k = s->nhist - 1; k >= 0 && !last; k--)
		if (!s->hist[k].rc)
			last = &s->hist[k];
	header(b, &(struct family){ "sluice_checkpoint_written_bytes_total", "counter",
				    "State file bytes written by completed checkpoints." });
	sl_obs_buf_printf(b, "sluice_checkpoint_written_bytes_total{");
	job_label(b, s);
	sl_obs_buf_printf(b, "} %" PRIu64 "\n", s->ckpt_bytes_total);
	if (!last)
		return;
	for (int f = 0; f < 3; f++) {
		header(b, &fams[f]);
		sl_obs_buf_printf(b, "%s{", fams[f].name);
		job_label(b, s);
		if (f == 0)
			sl_obs_buf_printf(b, "} %.3f\n", (double)last->duration_ms / 1000.0);
		else if (f == 1)
			sl_obs_buf_printf(b, "} %.6f\n", (double)last->align_us / 1e6);
		else
			sl_obs_buf_printf(b, "} %" PRIu64 "\n", last->bytes);
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
	checkpoints(b, s);
}

/* The key_bys' heavy hitters (hot_keys.h): a gauge per key, its guaranteed share. */
static void hot_keys(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	header(b, &(struct family){ "sluice_hot_key_share", "gauge",
				    "Share of a key_by's records carried by one key (lower bound, "
				    "sampled; keys at 1 % or more)." });
	for (int i = 0; i < s->nhot; i++) {
		const struct sl_job_hot_key *h = &s->hot[i];

		sl_obs_buf_printf(b, "sluice_hot_key_share{");
		job_label(b, s);
		sl_obs_buf_printf(b, ",operator=\"");
		sl_obs_buf_escaped(b, h->op, false);
		sl_obs_buf_printf(b, "\",key=\"");
		sl_obs_buf_escaped(b, h->key, false);
		sl_obs_buf_printf(b, "\",two_phase=\"%s\"} %.4f\n", h->two_phase ? "true" : "false",
				  h->share);
	}
}

void sl_obs_render_prometheus(const struct sl_obs_snap *s, struct sl_obs_buf *b)
{
	if (s->started) {
		operators(b, s);
		watermark_lag(b, s);
		stages(b, s);
		shards(b, s);
		hot_keys(b, s);
		if (s->detailed)
			split_series(b, s);
	}
	header(b, &(struct family){ "process_resident_memory_bytes", "gauge",
				    "Resident memory size in bytes." });
	sl_obs_buf_printf(b, "process_resident_memory_bytes %" PRIu64 "\n", s->rss_bytes);
}
