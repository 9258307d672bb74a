/*
 * api_json.c - the same counters as /metrics, as one JSON document for /api/metrics
 * (http.c): the job, then per operator its instances, per stage its backpressured time,
 * every exchange channel's stalls, the shards, checkpoints and the process. Times are in
 * ms as the engine counts them; a watermark not yet set is null, +inf is "+inf".
 */
#include <inttypes.h>

#include "snapshot.h"

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
		sl_obs_buf_printf(b, ",\"kind\":\"%s\",\"stage\":%d,\"instances\":[",
				  sl_obs_node_kind(s->job, n), sl_obs_node_stage(s->job, n));
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
			if (o->watermark == SL_TS_MIN)
				sl_obs_buf_printf(b, "null}");
			else if (o->watermark == SL_TS_MAX)
				sl_obs_buf_printf(b, "\"+inf\"}");
			else
				sl_obs_buf_printf(b, "%" PRId64 "}", o->watermark);
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
			sl_obs_buf_printf(b, "%s{\"shard\":%d,\"backpressured_ms\":%" PRIu64 "}",
					  first ? "" : ",", i,
					  s->stage_blocked_ms[st * s->nshards + i]);
			first = false;
		}
		sl_obs_buf_printf(b, "]}");
	}
	sl_obs_buf_printf(b, "],\"channels\":[");
	for (int k = 0; k < s->nrings; k++) {
		const struct sl_obs_ring *r = &s->ring[k];

		sl_obs_buf_printf(b,
				  "%s{\"stage\":%d,\"lane\":%d,\"from_shard\":%d,\"to_shard\":%d,"
				  "\"ring_full\":%" PRIu64 "}",
				  k ? "," : "", r->stage, r->lane, r->from, r->to, r->full);
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
	sl_obs_buf_printf(b, "],\"checkpoints\":{\"completed\":%" PRIu64 ",\"failed\":%" PRIu64 "}",
			  s->ckpt_completed, s->ckpt_failed);
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
		operators(b, s);
		stages(b, s);
		shards(b, s);
	}
	sl_obs_buf_printf(b, ",\"process\":{\"resident_memory_bytes\":%" PRIu64 "}}\n",
			  s->rss_bytes);
}
