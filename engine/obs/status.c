/*
 * status.c - the renderings of status.h over one detailed snapshot (snapshot.c): text,
 * text with the why paragraphs, JSON, one brief line; and the end-of-run report of
 * windows that never fired.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "status.h"

struct sl_obs_prev *sl_obs_prev_create(void)
{
	return calloc(1, sizeof(struct sl_obs_prev));
}

void sl_obs_prev_destroy(struct sl_obs_prev *p)
{
	sl_obs_prev_fini(p);
	free(p);
}

static void brief(const struct sl_obs_snap *s, struct sl_obs_buf *b)
{
	uint64_t in = 0;
	double in_s = 0;
	int finished = 0;

	for (int i = 0; i < s->nshards; i++)
		finished += s->shard[i].finished;
	for (int n = 0; s->started && n < s->nnodes; n++) {
		if (strcmp(sl_obs_node_kind(s->job, n), "source"))
			continue;
		for (int i = 0; i < s->nshards; i++) {
			in += s->op[n * s->nshards + i].in;
			in_s += s->rec_in_s[n * s->nshards + i];
		}
	}
	sl_obs_buf_printf(b, "%s\t%s\t%.1f\t%" PRIu64 "\t%.0f\n", sl_obs_job_name(s->job),
			  !s->started		   ? "starting"
			  : finished == s->nshards ? "finished"
						   : "running",
			  s->started ? (double)(s->now_ms - s->start_ms) / 1000.0 : 0.0, in, in_s);
}

char *sl_obs_status_render(struct sl_job *job, enum sl_obs_view v, struct sl_obs_prev *prev,
			   size_t *len)
{
	struct sl_obs_buf b = { 0 };
	struct sl_obs_snap snap;
	int rc = sl_obs_snap_take(job, &snap, v != SL_OBS_VIEW_BRIEF, prev);

	if (!rc) {
		switch (v) {
		case SL_OBS_VIEW_TEXT:
		case SL_OBS_VIEW_WHY:
			sl_obs_render_text(&snap, v == SL_OBS_VIEW_WHY, &b);
			break;
		case SL_OBS_VIEW_JSON:
			sl_obs_render_json(&snap, &b);
			break;
		case SL_OBS_VIEW_BRIEF:
			brief(&snap, &b);
			break;
		}
	}
	sl_obs_snap_fini(&snap);
	if (rc || b.oom || !b.p) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}

int sl_obs_report_open_windows(struct sl_job *job, FILE *f)
{
	struct sl_obs_buf b = { 0 };
	struct sl_obs_why w[32];
	struct sl_obs_snap snap;
	int n = 0;

	if (sl_obs_snap_take(job, &snap, true, NULL) == 0) {
		n = sl_obs_why(&snap, w, 32);
		if (n) {
			sl_obs_buf_printf(&b,
					  "sluice: %d operator%s still hold%s windows or timers "
					  "that never fired (the watermark did not reach them):\n",
					  n, n == 1 ? "" : "s", n == 1 ? "s" : "");
			sl_obs_render_why_text(&snap, w, n, &b);
		}
	}
	sl_obs_snap_fini(&snap);
	if (n && b.p && !b.oom)
		fwrite(b.p, 1, b.len, f);
	free(b.p);
	return n;
}

int sl_obs_progress_line(struct sl_job *job, struct sl_obs_prev *prev, char *buf, size_t cap)
{
	struct sl_obs_snap s;
	uint64_t in = 0;
	double in_s = 0;
	int64_t pos = 0, end = 0;
	bool ends = true, any = false;
	sl_ts_t wm = SL_TS_MAX;
	char t[32];
	int rc = sl_obs_snap_take(job, &s, true, prev);

	if (rc)
		return rc;
	buf[0] = 0;
	for (int n = 0; s.started && n < s.nnodes; n++) {
		if (!sl_obs_source_wm(job, n))
			continue;
		for (int i = 0; i < s.nshards; i++) {
			in += s.op[n * s.nshards + i].in;
			in_s += s.rec_in_s[n * s.nshards + i];
		}
	}
	for (int i = 0; i < s.nshards; i++) {
		const struct sl_obs_detail *d = s.shard[i].detail;

		for (int k = 0; d && k < d->nsplits; k++) {
			const struct sl_split_obs *sp = &d->split[k];

			any = true;
			if (!sp->ended && sp->wm < wm)
				wm = sp->wm;
			if (sp->p.end > 0 && sp->p.pos >= 0 &&
			    strcmp(sp->p.kind, "kafka partition")) {
				pos += sp->p.pos;
				end += sp->p.end;
			} else {
				ends = false;
			}
		}
	}
	if (s.started) {
		int n = snprintf(buf, cap, "sluice: %" PRIu64 " records, %.0f/s, watermark %s", in,
				 in_s, any && wm != SL_TS_MAX ? sl_obs_fmt_ts(wm, t) : "-");

		if (n > 0 && (size_t)n < cap && any && ends && end > 0)
			snprintf(buf + n, cap - (size_t)n, ", %.0f %% read",
				 100.0 * (double)pos / (double)end);
	}
	sl_obs_snap_fini(&s);
	return 0;
}
