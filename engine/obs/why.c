/*
 * why.c - "why has my window not fired?": from a detailed snapshot (snapshot.c), for every
 * event-time operator with windows or timers waiting, what holds its watermark back and
 * what would let it move.
 *
 * An operator instance's watermark is the minimum over its stage's inputs that are neither
 * idle nor ended (engine/time/watermark.h): the exchange channels from every upstream
 * shard, and at a source instance its splits. So the holder is found by walking that
 * minimum upstream, one shard's detail at a time:
 *
 *   operator (node, shard i) -> its stage on shard i
 *     exchange stage: the live channel with the least watermark, from shard j, lane l
 *       -> the stage feeding lane l, on shard j (repeat)
 *     source stage: the live split with the least watermark: the holder
 *
 * A stopped job's channels have all ended; its report follows the least of them. Each
 * shard's detail is of its own moment, so the chain is a little stale at each hop;
 * the figures shown are those the shards reported. What to do depends on the split: one
 * that never produced (an empty or missing partition), one silent without an idle
 * timeout (Flink's table.exec.source.idle-timeout), one behind (consumer lag), or one
 * simply not far enough in event time (the WATERMARK delay).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "snapshot.h"

#define SILENT_MS 1000 /* a split this silent counts as "silent" in the causes */

static const struct sl_obs_detail *detail_of(const struct sl_obs_snap *s, int shard)
{
	return shard >= 0 && shard < s->nshards ? s->shard[shard].detail : NULL;
}

/* The live split of source node `src` with the least watermark on one shard, or NULL. */
static const struct sl_split_obs *least_split(const struct sl_obs_detail *d, int src, bool *any)
{
	const struct sl_split_obs *best = NULL;

	*any = false;
	for (int k = 0; k < d->nsplits; k++) {
		const struct sl_split_obs *sp = &d->split[k];

		if (sp->node != src)
			continue;
		*any = true;
		if (sp->ended || sp->idle)
			continue;
		if (!best || sp->wm < best->wm)
			best = sp;
	}
	return best;
}

static void fmt_ms(char *buf, size_t cap, sl_ts_t ms)
{
	if (ms < 10000)
		snprintf(buf, cap, "%" PRId64 " ms", (int64_t)ms);
	else
		snprintf(buf, cap, "%.1f s", (double)ms / 1000.0);
}

/* What the split holding the watermark back means, and what to do. */
static void explain_split(const struct sl_obs_snap *s, struct sl_obs_why *w)
{
	const struct sl_split_obs *sp = &w->split;
	const struct sl_wm_strategy *wm = sl_obs_source_wm(s->job, w->src_node);
	sl_ts_t idle_ms = wm ? wm->idle_timeout_ms : 0;
	sl_ts_t delay = wm && wm->kind == SL_WM_BOUNDED ? wm->max_delay_ms : 0;
	char t1[32], t2[32], d1[32], d2[32];

	fmt_ms(d1, sizeof d1, sp->silent_ms);
	fmt_ms(d2, sizeof d2, idle_ms);
	if (sp->max_ts == SL_TS_MIN) {
		snprintf(w->cause, sizeof w->cause,
			 "%s %s of source '%s' has produced no record in the %s since it opened, "
			 "so it has no watermark and holds every window back",
			 sp->p.kind, sp->p.name, sl_obs_node_name(s->job, w->src_node), d1);
		if (!idle_ms)
			snprintf(w->remedy, sizeof w->remedy,
				 "an empty or missing partition: give it data, or SET "
				 "'table.exec.source.idle-timeout' = '30 s' so that a split silent "
				 "that long stops holding the watermark back");
		else
			snprintf(w->remedy, sizeof w->remedy,
				 "it counts as idle once silent for %s "
				 "(table.exec.source.idle-timeout)",
				 d2);
		return;
	}
	if (sp->silent_ms >= SILENT_MS && (!idle_ms || sp->silent_ms < idle_ms)) {
		snprintf(w->cause, sizeof w->cause,
			 "%s %s of source '%s' has been silent for %s: its watermark stays at %s "
			 "(newest event %s)",
			 sp->p.kind, sp->p.name, sl_obs_node_name(s->job, w->src_node), d1,
			 sl_obs_fmt_ts(sp->wm, t1), sl_obs_fmt_ts(sp->max_ts, t2));
		if (!idle_ms)
			snprintf(w->remedy, sizeof w->remedy,
				 "no idle timeout is set: SET 'table.exec.source.idle-timeout' = "
				 "'30 s' (or less) so that a split silent that long stops holding "
				 "the watermark back, as Flink does");
		else
			snprintf(w->remedy, sizeof w->remedy,
				 "it counts as idle once silent for %s "
				 "(table.exec.source.idle-timeout), then the others move on",
				 d2);
		return;
	}
	if (sp->wm != SL_TS_MIN && sp->wm >= w->pending_at) {
		sl_ts_t every = wm ? wm->interval_ms : 0;

		fmt_ms(d1, sizeof d1, every);
		snprintf(w->cause, sizeof w->cause,
			 "%s %s of source '%s' has a watermark of %s already, past the window; "
			 "it has not reached the operator yet",
			 sp->p.kind, sp->p.name, sl_obs_node_name(s->job, w->src_node),
			 sl_obs_fmt_ts(sp->wm, t1));
		snprintf(w->remedy, sizeof w->remedy,
			 "nothing to do: the next periodic watermark (every %s, "
			 "pipeline.auto-watermark-interval) carries it downstream and the window "
			 "fires",
			 d1);
		return;
	}
	if (sp->p.lag > 0) {
		snprintf(w->cause, sizeof w->cause,
			 "%s %s of source '%s' is behind: %" PRId64
			 " records not read yet; its watermark is %s",
			 sp->p.kind, sp->p.name, sl_obs_node_name(s->job, w->src_node), sp->p.lag,
			 sl_obs_fmt_ts(sp->wm, t1));
		snprintf(w->remedy, sizeof w->remedy,
			 "it is catching up: the window fires once it has read past %s%s",
			 sl_obs_fmt_ts(w->pending_at + delay, t2),
			 " (more shards, or less work per record, read faster)");
		return;
	}
	snprintf(w->cause, sizeof w->cause,
		 "%s %s of source '%s' is the slowest input in event time: newest event %s, "
		 "its watermark %s",
		 sp->p.kind, sp->p.name, sl_obs_node_name(s->job, w->src_node),
		 sl_obs_fmt_ts(sp->max_ts, t1), sl_obs_fmt_ts(sp->wm, t2));
	if (delay > 0) {
		fmt_ms(d1, sizeof d1, delay);
		snprintf(w->remedy, sizeof w->remedy,
			 "the window fires once an event at or after %s arrives on it: the "
			 "WATERMARK delay of %s keeps the watermark that far behind the newest "
			 "event (a smaller delay fires sooner, and counts more rows late)",
			 sl_obs_fmt_ts(w->pending_at + delay, t1), d1);
	} else {
		snprintf(w->remedy, sizeof w->remedy,
			 "the window fires once an event at or after %s arrives on it",
			 sl_obs_fmt_ts(w->pending_at, t1));
	}
}

/* Walks the minimum upstream from (node, shard) and fills the chain and the holder. */
static void trace(const struct sl_obs_snap *s, struct sl_obs_why *w)
{
	int stage = sl_obs_node_stage(s->job, w->node), shard = w->shard;

	for (int depth = 0; depth <= SL_OBS_WHY_HOPS; depth++) {
		const struct sl_obs_detail *d = detail_of(s, shard);

		if (!d) {
			snprintf(w->cause, sizeof w->cause,
				 "shard %d did not describe itself in time (busy in a long call?)",
				 shard);
			return;
		}
		if (sl_obs_stage_is_source(s->job, stage)) {
			int src = sl_obs_stage_input_id(s->job, stage);
			bool any;
			const struct sl_split_obs *sp;

			w->src_node = src;
			w->src_shard = shard;
			sp = least_split(d, src, &any);
			if (sp) {
				w->has_split = true;
				w->split = *sp;
				explain_split(s, w);
			} else {
				snprintf(w->cause, sizeof w->cause,
					 "source '%s' on shard %d has %s",
					 sl_obs_node_name(s->job, src), shard,
					 any ? "only idle or finished splits: nothing moves its "
					       "watermark"
					     : "no split: it waits for one (partition discovery)");
				snprintf(w->remedy, sizeof w->remedy,
					 "new records on its splits move the watermark");
			}
			return;
		}
		const struct sl_stage_detail *sd = &d->stage[stage];
		int best = -1, ns = s->nshards;

		/* the live channels' minimum; once all ended (a stopped job's report), the
		 * one that delivered the least is what the operator was left with */
		for (int pass = 0; pass < 2 && best < 0; pass++)
			for (int c = 0; c < sd->nchans; c++) {
				const struct sl_chan_obs *ch = &d->chan[sd->chan0 + c];

				if (ch->dead || ch->idle || ch->ended != (pass == 1))
					continue;
				if (best < 0 || ch->wm < d->chan[sd->chan0 + best].wm)
					best = c;
			}
		if (best < 0) {
			snprintf(w->cause, sizeof w->cause,
				 "every input channel of stage %d on shard %d is idle or ended",
				 stage, shard);
			snprintf(w->remedy, sizeof w->remedy,
				 "new records on the sources move the watermark");
			return;
		}
		if (w->nhops < SL_OBS_WHY_HOPS) {
			w->hop[w->nhops].stage = stage;
			w->hop[w->nhops].lane = best / ns;
			w->hop[w->nhops].from_shard = best % ns;
			w->hop[w->nhops].wm = d->chan[sd->chan0 + best].wm;
			w->nhops++;
		}
		stage = sl_obs_stage_lane_from(s->job, stage, best / ns);
		shard = best % ns;
		if (stage < 0)
			return;
	}
}

int sl_obs_why(const struct sl_obs_snap *s, struct sl_obs_why *out, int max)
{
	int k = 0;

	if (!s->started || !s->detailed)
		return 0;
	for (int n = 0; n < s->nnodes && k < max; n++) {
		struct sl_obs_why *w = &out[k];
		int waiting = 0, pick = -1;

		for (int i = 0; i < s->nshards; i++) {
			const struct sl_obs_detail *d = s->shard[i].detail;
			const struct sl_node_obs *o = d ? &d->node[n] : NULL;

			if (!o || !o->pending || o->pending_at == SL_TS_MAX)
				continue;
			waiting++;
			if (pick < 0 || o->pending_at < s->shard[pick].detail->node[n].pending_at)
				pick = i;
		}
		if (pick < 0)
			continue;
		memset(w, 0, sizeof(*w));
		w->node = n;
		w->shard = pick;
		w->waiting_instances = waiting;
		w->pending = s->shard[pick].detail->node[n].pending;
		w->pending_at = s->shard[pick].detail->node[n].pending_at;
		w->watermark = s->shard[pick].detail->node[n].watermark;
		w->src_node = w->src_shard = -1;
		trace(s, w);
		k++;
	}
	return k;
}

void sl_obs_render_why_text(const struct sl_obs_snap *s, const struct sl_obs_why *w, int n,
			    struct sl_obs_buf *b)
{
	char t1[32], t2[32];

	for (int k = 0; k < n; k++, w++) {
		sl_obs_buf_printf(b,
				  "'%s' (shard %d) has %" PRIu64
				  " window%s or timer%s waiting; the earliest fires at watermark "
				  "%s, its watermark is %s%s\n",
				  sl_obs_node_name(s->job, w->node), w->shard, w->pending,
				  w->pending == 1 ? "" : "s", w->pending == 1 ? "" : "s",
				  sl_obs_fmt_ts(w->pending_at, t1), sl_obs_fmt_ts(w->watermark, t2),
				  w->waiting_instances > 1 ? " (and other shards wait too)" : "");
		for (int h = 0; h < w->nhops; h++)
			sl_obs_buf_printf(b,
					  "  held back by the exchange channel from shard %d into "
					  "stage %d (lane %d), watermark %s\n",
					  w->hop[h].from_shard, w->hop[h].stage, w->hop[h].lane,
					  sl_obs_fmt_ts(w->hop[h].wm, t1));
		if (w->has_split)
			sl_obs_buf_printf(
				b, "  held back by split %d: %s %s (source '%s', shard %d)\n",
				w->split.split, w->split.p.kind, w->split.p.name,
				sl_obs_node_name(s->job, w->src_node), w->src_shard);
		if (w->cause[0])
			sl_obs_buf_printf(b, "  why: %s\n", w->cause);
		if (w->remedy[0])
			sl_obs_buf_printf(b, "  remedy: %s\n", w->remedy);
	}
}
