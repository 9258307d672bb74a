/*
 * status_text.c - a job's status for a terminal (`sluice status`, engine/cli/status.c):
 * the same snapshot /api/status serves as JSON, as a few aligned blocks: the run, each
 * stage instance's time (busy / backpressured / idle per second, as Flink's Web UI shows
 * it), the operators, the splits, the exchange channels that are not empty or stalled,
 * the checkpoints, and with --why the "why has my window not fired" paragraphs (why.c).
 */
#include <inttypes.h>
#include <stdio.h>

#include "snapshot.h"

static void human_bytes(char *buf, size_t cap, uint64_t v)
{
	if (v >= (1ull << 30))
		snprintf(buf, cap, "%.1f GiB", (double)v / (double)(1ull << 30));
	else if (v >= (1ull << 20))
		snprintf(buf, cap, "%.1f MiB", (double)v / (double)(1ull << 20));
	else if (v >= 1024)
		snprintf(buf, cap, "%.1f KiB", (double)v / 1024.0);
	else
		snprintf(buf, cap, "%" PRIu64 " B", v);
}

static void run_line(const struct sl_obs_snap *s, struct sl_obs_buf *b)
{
	char rss[32];
	int finished = 0, seen = 0;

	for (int i = 0; i < s->nshards; i++) {
		seen += s->shard[i].seen;
		finished += s->shard[i].finished;
	}
	human_bytes(rss, sizeof rss, s->rss_bytes);
	sl_obs_buf_printf(b, "job '%s': %s for %.1f s, %d shard%s, resident %s\n",
			  sl_obs_job_name(s->job),
			  finished == s->nshards ? "finished"
			  : seen		 ? "running"
						 : "starting",
			  (double)(s->now_ms - s->start_ms) / 1000.0, s->nshards,
			  s->nshards == 1 ? "" : "s", rss);
}

static void stage_block(const struct sl_obs_snap *s, struct sl_obs_buf *b)
{
	sl_obs_buf_printf(b, "\nstage  shard  input                 busy  backpressured   idle  "
			     "(ms per second)\n");
	for (int st = 0; st < s->nstages; st++)
		for (int i = 0; i < s->nshards; i++) {
			const struct sl_obs_rate *r = &s->rate[st * s->nshards + i];

			if (!s->shard[i].seen)
				continue;
			sl_obs_buf_printf(b, "%5d  %5d  %-20.20s %5.0f  %13.0f  %5.0f\n", st, i,
					  sl_obs_stage_input(s->job, st), r->busy_ms, r->bp_ms,
					  r->idle_ms);
		}
}

static void op_block(const struct sl_obs_snap *s, struct sl_obs_buf *b)
{
	char t[32], by[32];

	sl_obs_buf_printf(b, "\noperator              kind      records in    /s   records out"
			     "    /s    late    state  watermark                waiting\n");
	for (int n = 0; n < s->nnodes; n++) {
		uint64_t in = 0, out = 0, late = 0, entries = 0, bytes = 0, waiting = 0;
		double in_s = 0, out_s = 0;
		sl_ts_t wm = SL_TS_MAX, wait_at = SL_TS_MAX;
		bool any_wm = false;

		for (int i = 0; i < s->nshards; i++) {
			const struct sl_obs_op *o = &s->op[n * s->nshards + i];
			const struct sl_obs_detail *d = s->shard[i].detail;
			sl_ts_t w = d ? d->node[n].watermark : o->watermark;

			if (!s->shard[i].seen)
				continue;
			in += o->in;
			out += o->out;
			late += o->late;
			entries += o->state_entries;
			bytes += o->state_bytes;
			in_s += s->rec_in_s[n * s->nshards + i];
			out_s += s->rec_out_s[n * s->nshards + i];
			/* the operator's watermark: the least of its instances' */
			if (w != SL_TS_MIN || d) {
				any_wm = true;
				if (w < wm)
					wm = w;
			}
			if (d && d->node[n].pending) {
				waiting += d->node[n].pending;
				if (d->node[n].pending_at < wait_at)
					wait_at = d->node[n].pending_at;
			}
		}
		human_bytes(by, sizeof by, bytes);
		sl_obs_buf_printf(b,
				  "%-20.20s  %-8s %11" PRIu64 " %5.0f %13" PRIu64 " %5.0f %7" PRIu64
				  " %8" PRIu64 "  %-23s",
				  sl_obs_node_name(s->job, n), sl_obs_node_kind(s->job, n), in,
				  in_s, out, out_s, late, entries,
				  any_wm ? sl_obs_fmt_ts(wm, t) : "-");
		if (waiting)
			sl_obs_buf_printf(b, "  %" PRIu64 " (first at %s)", waiting,
					  sl_obs_fmt_ts(wait_at, t));
		sl_obs_buf_printf(b, "\n");
	}
}

static void split_block(const struct sl_obs_snap *s, struct sl_obs_buf *b)
{
	char t[32];
	bool head = false;

	for (int i = 0; i < s->nshards; i++) {
		const struct sl_obs_detail *d = s->shard[i].detail;

		for (int k = 0; d && k < d->nsplits; k++) {
			const struct sl_split_obs *sp = &d->split[k];

			if (!head)
				sl_obs_buf_printf(
					b, "\nsplit  shard  what                              "
					   "position  read     lag  watermark"
					   "                silent  state\n");
			head = true;
			sl_obs_buf_printf(b, "%5d  %5d  %-32.32s %10" PRId64, sp->split, i,
					  sp->p.name, sp->p.pos);
			if (sp->p.end > 0 && sp->p.pos >= 0)
				sl_obs_buf_printf(b, "  %3.0f %%",
						  100.0 * (double)sp->p.pos / (double)sp->p.end);
			else
				sl_obs_buf_printf(b, "      -");
			if (sp->p.lag >= 0)
				sl_obs_buf_printf(b, " %7" PRId64, sp->p.lag);
			else
				sl_obs_buf_printf(b, "       -");
			sl_obs_buf_printf(b, "  %-23s %6.1f s  %s\n", sl_obs_fmt_ts(sp->wm, t),
					  (double)sp->silent_ms / 1000.0,
					  sp->ended  ? "ended"
					  : sp->idle ? "idle"
						     : "active");
		}
		if (d && d->splits_more)
			sl_obs_buf_printf(b, "       %5d  (%d more splits not shown)\n", i,
					  d->splits_more);
	}
}

static void chan_block(const struct sl_obs_snap *s, struct sl_obs_buf *b)
{
	bool head = false;

	for (int k = 0; k < s->nrings; k++) {
		const struct sl_obs_ring *r = &s->ring[k];

		if (!r->used && !r->full)
			continue;
		if (!head)
			sl_obs_buf_printf(b,
					  "\nchannel (stage lane from->to)      fill   stalls\n");
		head = true;
		sl_obs_buf_printf(b, "stage %d lane %d shard %d -> %d      %5.1f %% %8" PRIu64 "\n",
				  r->stage, r->lane, r->from, r->to,
				  r->cap ? 100.0 * (double)r->used / (double)r->cap : 0.0, r->full);
	}
}

static void ckpt_block(const struct sl_obs_snap *s, struct sl_obs_buf *b)
{
	char sz[32];

	if (!s->nhist && !s->ckpt_completed && !s->ckpt_failed)
		return;
	human_bytes(sz, sizeof sz, s->ckpt_bytes_total);
	sl_obs_buf_printf(b,
			  "\ncheckpoints: %" PRIu64 " completed, %" PRIu64 " failed, %s written\n",
			  s->ckpt_completed, s->ckpt_failed, sz);
	for (int k = s->nhist > 5 ? s->nhist - 5 : 0; k < s->nhist; k++) {
		const struct sl_ckpt_obs *c = &s->hist[k];

		human_bytes(sz, sizeof sz, c->bytes);
		sl_obs_buf_printf(
			b, "  #%-5" PRIu64 " %-9s %6" PRIu64 " ms  alignment %6.1f ms  %s%s\n",
			c->id, c->rc ? "failed" : "completed", c->duration_ms,
			(double)c->align_us / 1000.0, sz, c->savepoint ? "  savepoint" : "");
	}
}

void sl_obs_render_text(const struct sl_obs_snap *s, bool why, struct sl_obs_buf *b)
{
	struct sl_obs_why w[32];
	int n;

	if (!s->started) {
		sl_obs_buf_printf(b, "job '%s': not started yet\n",
				  s->job ? sl_obs_job_name(s->job) : "?");
		return;
	}
	run_line(s, b);
	stage_block(s, b);
	op_block(s, b);
	split_block(s, b);
	chan_block(s, b);
	ckpt_block(s, b);
	if (!why)
		return;
	n = sl_obs_why(s, w, 32);
	sl_obs_buf_printf(b, "\nwhy:\n");
	if (!n)
		sl_obs_buf_printf(b, "no operator has a window or timer waiting\n");
	sl_obs_render_why_text(s, w, n, b);
}
