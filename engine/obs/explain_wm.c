/*
 * explain_wm.c - EXPLAIN WATERMARK FOR <table or view> (a sluice extension; the planner
 * resolves the name to the tables it reads, engine/sql/planner.c): for the job that runs
 * or just ran with those tables, how their watermark is made (the WATERMARK clause as the
 * source runs it: the column, the delay, the idle timeout, how often it is emitted),
 * where it is now split by split, what each event-time operator downstream holds, and
 * the "why has my window not fired" entries that lead to these tables (why.c).
 *
 * Reads one detailed snapshot (snapshot.c): live details while the job runs (through the
 * control socket), the shards' final ones once it has ended.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "snapshot.h"
#include "status.h"

static bool named(const char *name, const char *const *tables, int n)
{
	for (int k = 0; k < n; k++)
		if (!strcasecmp(name, tables[k]))
			return true;
	return false;
}

static void strategy(struct sl_obs_buf *b, const struct sl_obs_snap *s, int node)
{
	const struct sl_wm_strategy *wm = sl_obs_source_wm(s->job, node);
	const char *col = sl_obs_source_ts_column(s->job, node);

	sl_obs_buf_printf(b, "table '%s': ", sl_obs_node_name(s->job, node));
	switch (wm->kind) {
	case SL_WM_BOUNDED:
		sl_obs_buf_printf(b, "WATERMARK FOR %s AS %s - %" PRId64 " ms", col, col,
				  (int64_t)wm->max_delay_ms);
		break;
	case SL_WM_MONOTONOUS:
		sl_obs_buf_printf(b, "WATERMARK FOR %s AS %s (ascending)", col, col);
		break;
	case SL_WM_CUSTOM:
		sl_obs_buf_printf(b, "a custom watermark generator");
		break;
	case SL_WM_NONE:
		sl_obs_buf_printf(b, "no WATERMARK: no event time, no window fires on it\n");
		return;
	}
	sl_obs_buf_printf(b, "; emitted %s", wm->interval_ms ? "periodically" : "on every event");
	if (wm->interval_ms)
		sl_obs_buf_printf(b, " (every %" PRId64 " ms)", (int64_t)wm->interval_ms);
	if (wm->idle_timeout_ms)
		sl_obs_buf_printf(b, "; a split silent for %" PRId64 " ms is idle\n",
				  (int64_t)wm->idle_timeout_ms);
	else
		sl_obs_buf_printf(b, "; no idle timeout: a silent split holds it back\n");
}

static void splits(struct sl_obs_buf *b, const struct sl_obs_snap *s, int node)
{
	char t1[32], t2[32];

	for (int i = 0; i < s->nshards; i++) {
		const struct sl_obs_detail *d = s->shard[i].detail;
		int st = sl_obs_node_stage(s->job, node);

		if (!d) {
			sl_obs_buf_printf(b, "  shard %d: no description (it did not answer)\n", i);
			continue;
		}
		sl_obs_buf_printf(b, "  shard %d: the source's watermark %s%s\n", i,
				  sl_obs_fmt_ts(d->stage[st].wm_out, t1),
				  d->stage[st].idle ? " (idle)" : "");
		for (int k = 0; k < d->nsplits; k++) {
			const struct sl_split_obs *sp = &d->split[k];

			if (sp->node != node)
				continue;
			sl_obs_buf_printf(b,
					  "    split %d %s %s: newest event %s, watermark %s, "
					  "silent %.1f s, %s\n",
					  sp->split, sp->p.kind, sp->p.name,
					  sl_obs_fmt_ts(sp->max_ts, t1), sl_obs_fmt_ts(sp->wm, t2),
					  (double)sp->silent_ms / 1000.0,
					  sp->ended  ? "ended"
					  : sp->idle ? "idle"
						     : "active");
		}
	}
}

static void operators(struct sl_obs_buf *b, const struct sl_obs_snap *s)
{
	char t1[32], t2[32];

	for (int n = 0; n < s->nnodes; n++) {
		if (!sl_obs_node_is_keyed(s->job, n))
			continue;
		for (int i = 0; i < s->nshards; i++) {
			const struct sl_obs_detail *d = s->shard[i].detail;

			if (!d)
				continue;
			sl_obs_buf_printf(b, "  operator '%s' shard %d: watermark %s",
					  sl_obs_node_name(s->job, n), i,
					  sl_obs_fmt_ts(d->node[n].watermark, t1));
			if (d->node[n].pending)
				sl_obs_buf_printf(b, ", %" PRIu64 " waiting, the earliest at %s",
						  d->node[n].pending,
						  sl_obs_fmt_ts(d->node[n].pending_at, t2));
			sl_obs_buf_printf(b, "\n");
		}
	}
}

int sl_obs_explain_watermark(struct sl_job *job, const char *const *tables, int ntables,
			     struct sl_obs_buf *b)
{
	struct sl_obs_why w[32];
	struct sl_obs_snap snap;
	int found = 0, n, shown = 0;

	if (sl_obs_snap_take(job, &snap, true, NULL))
		return -1;
	for (int node = 0; node < snap.nnodes; node++) {
		if (!sl_obs_source_wm(job, node) ||
		    !named(sl_obs_node_name(job, node), tables, ntables))
			continue;
		if (!found++)
			sl_obs_buf_printf(b, "job '%s' (%s):\n", sl_obs_job_name(job),
					  snap.started ? "its last run" : "not run yet");
		strategy(b, &snap, node);
		if (snap.started)
			splits(b, &snap, node);
	}
	if (found && snap.started) {
		operators(b, &snap);
		n = sl_obs_why(&snap, w, 32);
		for (int k = 0; k < n; k++) {
			if (w[k].src_node < 0 ||
			    !named(sl_obs_node_name(job, w[k].src_node), tables, ntables))
				continue;
			if (!shown++)
				sl_obs_buf_printf(b, "why:\n");
			sl_obs_render_why_text(&snap, &w[k], 1, b);
		}
		if (!shown)
			sl_obs_buf_printf(b, "no window or timer waits on these tables\n");
	}
	sl_obs_snap_fini(&snap);
	return found;
}

char *sl_obs_explain_watermark_text(struct sl_job *job, const char *const *tables, int ntables,
				    int *found, size_t *len)
{
	struct sl_obs_buf b = { 0 };

	*found = sl_obs_explain_watermark(job, tables, ntables, &b);
	if (*found < 0 || b.oom) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p ? b.p : calloc(1, 1);
}
