/*
 * status.h - a job's status rendered for a reader outside the engine: the CLI's `sluice
 * status` (through the control socket, engine/cli/status.c) and the report at the end of
 * a run whose operators still hold windows (engine/main.c). The HTTP endpoint (http.c)
 * serves the same renderings.
 *
 * Threads: any but a shard's; the job must stay alive during the call.
 */
#ifndef SL_OBS_STATUS_H
#define SL_OBS_STATUS_H

#include <stddef.h>
#include <stdio.h>

struct sl_job;
struct sl_obs_prev;

enum sl_obs_view {
	SL_OBS_VIEW_TEXT,  /* the terminal view */
	SL_OBS_VIEW_WHY,   /* the terminal view and why windows have not fired */
	SL_OBS_VIEW_JSON,  /* the /api/status document */
	SL_OBS_VIEW_BRIEF, /* one line: name, state, seconds, records in, records in/s */
};

/* A reader's previous sample, for rates between two calls (NULL where none is kept). */
struct sl_obs_prev *sl_obs_prev_create(void);
void sl_obs_prev_destroy(struct sl_obs_prev *p);

/* Renders job's status as v into a malloc'd, NUL-terminated string (caller frees), its
 * length in *len; rates against prev (may be NULL; the caller keeps one thread on it at
 * a time). Asks the shards for their detail (waits up to a second). NULL: out of memory. */
char *sl_obs_status_render(struct sl_job *job, enum sl_obs_view v, struct sl_obs_prev *prev,
			   size_t *len);

/* After a run: when some operator still holds windows or timers (a job stopped before
 * its input ended, an unbounded source), prints to f why they did not fire, and returns
 * how many operators wait; 0 prints nothing. */
int sl_obs_report_open_windows(struct sl_job *job, FILE *f);

/* One progress line (no newline) into buf[cap]: records read so far and per second (against
 * prev), the sources' least watermark, and the share of their input read when every split
 * knows its end (files, bounded datagen). 0, or -ENOMEM. Asks the shards (see above). */
int sl_obs_progress_line(struct sl_job *job, struct sl_obs_prev *prev, char *buf, size_t cap);

/* EXPLAIN WATERMARK FOR: what job shows of the watermark of its sources named in
 * tables[0..n) (explain_wm.c), as a malloc'd string (caller frees; *found: how many such
 * sources it has, 0: none), or NULL: out of memory. */
char *sl_obs_explain_watermark_text(struct sl_job *job, const char *const *tables, int ntables,
				    int *found, size_t *len);

#endif
