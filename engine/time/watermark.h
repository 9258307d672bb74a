/*
 * watermark.h - the rules of event time (DESIGN.md, "Time"), in one place: how a split's
 * watermark follows from the event times it produced, when a split goes idle, and how an
 * instance's watermark follows from its inputs (a source instance's splits, an exchange
 * stage's channels): the minimum over the inputs that are neither idle nor ended, forwarded
 * only when it moves forward.
 *
 * Inline functions over plain values: the runtime keeps the splits and channels (runtime.h)
 * and calls these from the shard loop (source_rt.c for splits, shard.c for channels), then
 * hands the result to the operators (op.h). Nothing here allocates or reads a clock.
 */
#ifndef SL_TIME_WATERMARK_H
#define SL_TIME_WATERMARK_H

#include <stdbool.h>

#include <sluice/job.h>

/* The watermark of one split under `wm`: max_ts is the greatest event time the split has
 * produced (SL_TS_MIN: none yet), custom_wm the last result of a custom generator. Inline:
 * a source emitting watermarks on every record calls it per record. */
static inline sl_ts_t sl_wm_of_split(const struct sl_wm_strategy *wm, sl_ts_t max_ts,
				     sl_ts_t custom_wm)
{
	switch (wm->kind) {
	case SL_WM_BOUNDED:
		return max_ts == SL_TS_MIN ? SL_TS_MIN : max_ts - wm->max_delay_ms;
	case SL_WM_MONOTONOUS:
		return max_ts;
	case SL_WM_CUSTOM:
		return custom_wm;
	case SL_WM_NONE:
		break;
	}
	return SL_TS_MIN;
}

/* True when a live split that last produced a record at `last_active` (shard clock, ms) is
 * idle at `now`: it produced nothing for the strategy's idle timeout (none: never idle). */
static inline bool sl_wm_split_goes_idle(const struct sl_wm_strategy *wm, sl_ts_t now,
					 sl_ts_t last_active)
{
	return wm->idle_timeout_ms > 0 && now - last_active >= wm->idle_timeout_ms;
}

/*
 * The minimum over an instance's inputs. Start with sl_wm_min_init, add every input, then
 * read: `active` when some input is neither idle nor ended (its watermark counts in `min`),
 * `idle` when some input is idle. No active input: the instance is idle if some input is,
 * and its watermark does not move.
 */
struct sl_wm_min {
	sl_ts_t min;
	bool active;
	bool idle;
};

static inline void sl_wm_min_init(struct sl_wm_min *m)
{
	m->min = SL_TS_MAX;
	m->active = false;
	m->idle = false;
}

static inline void sl_wm_min_add(struct sl_wm_min *m, sl_ts_t wm, bool idle, bool ended)
{
	if (ended)
		return;
	if (idle) {
		m->idle = true;
		return;
	}
	m->active = true;
	if (wm < m->min)
		m->min = wm;
}

/* The watermark to forward from minimum m when `last` was forwarded before: a later one, or
 * SL_TS_MIN when nothing moves (watermarks only go forward; none is known yet). */
static inline sl_ts_t sl_wm_min_advance(const struct sl_wm_min *m, sl_ts_t last)
{
	return m->active && m->min > last && m->min != SL_TS_MIN ? m->min : SL_TS_MIN;
}

#endif
