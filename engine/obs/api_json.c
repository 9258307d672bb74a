/*
 * api_json.c - the same counters as /metrics, as one JSON document for /api/metrics and
 * /api/status (http.c, and `sluice status --json` through the control socket): the job,
 * then per operator its instances (and its input, so that a reader can draw the plan),
 * per stage its time (busy, backpressured, idle per second), every exchange channel's
 * fill and stalls, the shards, the checkpoint history and the process; a detailed
 * snapshot adds every split and the "why has my window not fired" entries (why.c).
 * Times are in ms as the engine counts them; a watermark not yet set is null, +inf is
 * "+inf", -inf "-inf".
 */
#include <inttypes.h>

#include "snapshot.h"

static void ts(struct sl_obs_buf *b, sl_ts_t t)
{
	if (t == SL_TS_MIN)
		sl_obs_buf_printf(b, "null");
	else if (t == SL_TS_MAX)
		sl_obs_buf_printf(b, "\"+inf\"");
	else
		sl_obs_buf_printf(b, "%" PRId64, t);
}

static void str(struct sl_obs_buf *b, const char *s)
{
	sl_obs_buf_printf(b, "\"");
	sl_obs_buf_escaped(b, s, true);
	sl_obs_buf_printf(b, "\"");
}

static void operators(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	sl_obs_buf_printf(b, ",\"operators\":[");
	for (int n = 0; n < s->nnodes; n++) {
		bool first = true;

		sl_obs_buf_printf(b, "%s{\"id\":%d,\"name\":", n ? "," : "", n);
		str(b, sl_obs_node_name(s->job, n));
		sl_obs_buf_printf(b, ",\"kind\":\"%s\",\"stage\":%d,\"input\":%d,\"instances\":[",
				  sl_obs_node_kind(s->job, n), sl_obs_node_stage(s->job, n),
				  sl_obs_node_input(s->job, n));
		for (int i = 0; i < s->nshards; i++) {
			const struct sl_obs_op *o = &s->op[n * s->nshards + i];

			if (!s->shard[i].seen)
				continue;
			sl_obs_buf_printf(b,
					  "%s{\"shard\":%d,\"records_in\":%" PRIu64
					  ",\"records_out\":%" PRIu64 ",\"records_late\":%" PRIu64
					  ",\"state_entries\":%" PRIu64 ",\"state_bytes\":%" PRIu64
					  ",\"watermark_ms\":",
					  first ? "" : ",", i, o->in, o->out, o->late,
					  o->state_entries, o->state_bytes);
			ts(b, o->watermark);
			sl_obs_buf_printf(
				b, ",\"records_in_per_s\":%.1f,\"records_out_per_s\":%.1f",
				s->rec_in_s[n * s->nshards + i], s->rec_out_s[n * s->nshards + i]);
			if (s->shard[i].detail) {
				const struct sl_node_obs *no = &s->shard[i].detail->node[n];

				/* the detail's watermark: also there once the shard finished */
				sl_obs_buf_printf(
					b, ",\"waiting\":%" PRIu64 ",\"earliest_waiting_ms\":",
					no->pending);
				ts(b, no->pending ? no->pending_at : SL_TS_MIN);
				sl_obs_buf_printf(b, ",\"input_watermark_ms\":");
				ts(b, no->watermark);
			}
			sl_obs_buf_printf(b, "}");
			first = false;
		}
		sl_obs_buf_printf(b, "]}");
	}
	sl_obs_buf_printf(b, "]");
}

static void stages(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	sl_obs_buf_printf(b, ",\"stages\":[");
	for (int st = 0; st < s->nstages; st++) {
		bool first = true;

		sl_obs_buf_printf(b, "%s{\"id\":%d,\"input\":", st ? "," : "", st);
		str(b, sl_obs_stage_input(s->job, st));
		sl_obs_buf_printf(b, ",\"instances\":[");
		for (int i = 0; i < s->nshards; i++) {
			if (!s->shard[i].seen)
				continue;
			const struct sl_obs_stage *o = &s->stage[st * s->nshards + i];
			const struct sl_obs_rate *r = &s->rate[st * s->nshards + i];

			sl_obs_buf_printf(b,
					  "%s{\"shard\":%d,\"backpressured_ms\":%" PRIu64
					  ",\"busy_ns\":%" PRIu64 ",\"backpressured_ns\":%" PRIu64
					  ",\"busy_ms_per_s\":%.1f,\"backpressured_ms_per_s\":%.1f"
					  ",\"idle_ms_per_s\":%.1f}",
					  first ? "" : ",", i, o->blocked_ms, o->busy_ns, o->bp_ns,
					  r->busy_ms, r->bp_ms, r->idle_ms);
			first = false;
		}
		sl_obs_buf_printf(b, "]}");
	}
	sl_obs_buf_printf(b, "],\"channels\":[");
	for (int k = 0; k < s->nrings; k++) {
		const struct sl_obs_ring *r = &s->ring[k];

		sl_obs_buf_printf(b,
				  "%s{\"stage\":%d,\"lane\":%d,\"from_shard\":%d,\"to_shard\":%d,"
				  "\"ring_full\":%" PRIu64 ",\"used_bytes\":%" PRIu64
				  ",\"capacity_bytes\":%" PRIu64 ",\"frames\":%" PRIu64 "}",
				  k ? "," : "", r->stage, r->lane, r->from, r->to, r->full, r->used,
				  r->cap, r->frames);
	}
	sl_obs_buf_printf(b, "]");
}

static void shards(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	bool first = true;

	sl_obs_buf_printf(b, ",\"shards\":[");
	for (int i = 0; i < s->nshards; i++) {
		const struct sl_obs_shard *sh = &s->shard[i];

		if (!sh->seen)
			continue;
		sl_obs_buf_printf(b,
				  "%s{\"shard\":%d,\"finished\":%s,\"dead_letters\":%" PRIu64
				  ",\"loop_turns\":%" PRIu64 ",\"idle_loop_turns\":%" PRIu64 "}",
				  first ? "" : ",", i, sh->finished ? "true" : "false",
				  sh->dead_letters, sh->loops, sh->idle_loops);
		first = false;
	}
	sl_obs_buf_printf(b,
			  "],\"checkpoints\":{\"completed\":%" PRIu64 ",\"failed\":%" PRIu64
			  ",\"written_bytes\":%" PRIu64 ",\"history\":[",
			  s->ckpt_completed, s->ckpt_failed, s->ckpt_bytes_total);
	for (int k = 0; k < s->nhist; k++) {
		const struct sl_ckpt_obs *c = &s->hist[k];

		sl_obs_buf_printf(b,
				  "%s{\"id\":%" PRIu64 ",\"ok\":%s,\"error\":%d,\"savepoint\":%s"
				  ",\"end_ms\":%" PRId64 ",\"duration_ms\":%" PRIu64
				  ",\"alignment_us\":%" PRIu64 ",\"size_bytes\":%" PRIu64 "}",
				  k ? "," : "", c->id, c->rc ? "false" : "true", -c->rc,
				  c->savepoint ? "true" : "false", c->end_ms, c->duration_ms,
				  c->align_us, c->bytes);
	}
	sl_obs_buf_printf(b, "]}");
}

static void splits(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	bool first = true;

	sl_obs_buf_printf(b, ",\"splits\":[");
	for (int i = 0; i < s->nshards; i++) {
		const struct sl_obs_detail *d = s->shard[i].detail;

		for (int k = 0; d && k < d->nsplits; k++) {
			const struct sl_split_obs *sp = &d->split[k];

			sl_obs_buf_printf(b, "%s{\"source\":", first ? "" : ",");
			str(b, sl_obs_node_name(s->job, sp->node));
			sl_obs_buf_printf(b, ",\"node\":%d,\"split\":%d,\"shard\":%d,\"name\":",
					  sp->node, sp->split, i);
			str(b, sp->p.name);
			sl_obs_buf_printf(b, ",\"kind\":");
			str(b, sp->p.kind ? sp->p.kind : "split");
			sl_obs_buf_printf(b,
					  ",\"position\":%" PRId64 ",\"end\":%" PRId64
					  ",\"lag\":%" PRId64 ",\"idle\":%s,\"ended\":%s"
					  ",\"silent_ms\":%" PRId64 ",\"max_event_time_ms\":",
					  sp->p.pos, sp->p.end, sp->p.lag,
					  sp->idle ? "true" : "false", sp->ended ? "true" : "false",
					  (int64_t)sp->silent_ms);
			ts(b, sp->max_ts);
			sl_obs_buf_printf(b, ",\"watermark_ms\":");
			ts(b, sp->wm);
			sl_obs_buf_printf(b, "}");
			first = false;
		}
	}
	sl_obs_buf_printf(b, "]");
}

static void why(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	struct sl_obs_why w[32];
	int n = sl_obs_why(s, w, 32);

	sl_obs_buf_printf(b, ",\"why\":[");
	for (int k = 0; k < n; k++) {
		sl_obs_buf_printf(b, "%s{\"operator\":", k ? "," : "");
		str(b, sl_obs_node_name(s->job, w[k].node));
		sl_obs_buf_printf(b,
				  ",\"node\":%d,\"shard\":%d,\"waiting\":%" PRIu64
				  ",\"waiting_instances\":%d,\"watermark_ms\":",
				  w[k].node, w[k].shard, w[k].pending, w[k].waiting_instances);
		ts(b, w[k].watermark);
		sl_obs_buf_printf(b, ",\"earliest_waiting_ms\":");
		ts(b, w[k].pending_at);
		sl_obs_buf_printf(b, ",\"channels\":[");
		for (int h = 0; h < w[k].nhops; h++) {
			sl_obs_buf_printf(b,
					  "%s{\"stage\":%d,\"lane\":%d,\"from_shard\":%d,"
					  "\"watermark_ms\":",
					  h ? "," : "", w[k].hop[h].stage, w[k].hop[h].lane,
					  w[k].hop[h].from_shard);
			ts(b, w[k].hop[h].wm);
			sl_obs_buf_printf(b, "}");
		}
		sl_obs_buf_printf(b, "],\"held_by\":");
		if (w[k].has_split) {
			const struct sl_split_obs *sp = &w[k].split;

			sl_obs_buf_printf(b, "{\"source\":");
			str(b, sl_obs_node_name(s->job, w[k].src_node));
			sl_obs_buf_printf(b, ",\"shard\":%d,\"split\":%d,\"name\":", w[k].src_shard,
					  sp->split);
			str(b, sp->p.name);
			sl_obs_buf_printf(b, ",\"kind\":");
			str(b, sp->p.kind ? sp->p.kind : "split");
			sl_obs_buf_printf(b,
					  ",\"silent_ms\":%" PRId64 ",\"lag\":%" PRId64
					  ",\"idle\":%s,\"watermark_ms\":",
					  (int64_t)sp->silent_ms, sp->p.lag,
					  sp->idle ? "true" : "false");
			ts(b, sp->wm);
			sl_obs_buf_printf(b, "}");
		} else {
			sl_obs_buf_printf(b, "null");
		}
		sl_obs_buf_printf(b, ",\"cause\":");
		str(b, w[k].cause);
		sl_obs_buf_printf(b, ",\"remedy\":");
		str(b, w[k].remedy);
		sl_obs_buf_printf(b, "}");
	}
	sl_obs_buf_printf(b, "]");
}

/* The key_bys' hot keys (hot_keys.h): shares are fractions of the key_by's records. */
static void hot_keys(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	sl_obs_buf_printf(b, ",\"hot_keys\":[");
	for (int i = 0; i < s->nhot; i++) {
		const struct sl_job_hot_key *h = &s->hot[i];

		sl_obs_buf_printf(b, "%s{\"operator\":", i ? "," : "");
		str(b, h->op);
		sl_obs_buf_printf(b, ",\"into\":");
		str(b, h->into);
		sl_obs_buf_printf(b, ",\"key\":");
		str(b, h->key);
		sl_obs_buf_printf(b, ",\"share\":%.4f,\"share_hi\":%.4f,\"two_phase\":%s}",
				  h->share, h->share_hi, h->two_phase ? "true" : "false");
	}
	sl_obs_buf_printf(b, "]");
}

void sl_obs_render_json(const struct sl_obs_snap *s, struct sl_obs_buf *b)
{
	sl_obs_buf_printf(b, "{\"job\":");
	if (s->job)
		str(b, sl_obs_job_name(s->job));
	else
		sl_obs_buf_printf(b, "null");
	sl_obs_buf_printf(b, ",\"started\":%s,\"shards_total\":%d", s->started ? "true" : "false",
			  s->nshards);
	if (s->started) {
		sl_obs_buf_printf(b, ",\"now_ms\":%" PRId64 ",\"start_ms\":%" PRId64, s->now_ms,
				  s->start_ms);
		operators(b, s);
		stages(b, s);
		shards(b, s);
		hot_keys(b, s);
		if (s->detailed) {
			splits(b, s);
			why(b, s);
		}
	}
	sl_obs_buf_printf(b, ",\"process\":{\"resident_memory_bytes\":%" PRIu64 "}}\n",
			  s->rss_bytes);
}
