/*
 * snapshot.h - one consistent-enough copy of a job's counters, taken from another thread
 * while it runs (or after), for the HTTP endpoint's renderers (prometheus.c, api_json.c).
 * Internal to the obs layer.
 */
#ifndef SL_OBS_SNAPSHOT_H
#define SL_OBS_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/types.h>

struct sl_job;

/* One operator instance (node x shard). */
struct sl_obs_op {
	uint64_t in, out, late;
	uint64_t state_entries;
	uint64_t state_bytes; /* as last updated by the operator (approximate) */
	sl_ts_t watermark;    /* input watermark, SL_TS_MIN: none yet */
};

/* One shard's own figures. `seen` is false while its instances are neither readable nor
 * final (before wiring, and during unwiring): then none of its series is shown. */
struct sl_obs_shard {
	bool seen;
	bool finished; /* the figures are final */
	uint64_t dead_letters;
	uint64_t loops, idle_loops;
};

struct sl_obs_snap {
	const struct sl_job *job; /* borrowed: names and the plan come from it */
	bool started;		  /* a run exists (else everything below is empty) */
	int nshards, nnodes, nstages, nrings;
	struct sl_obs_shard *shard; /* [shard] */
	struct sl_obs_op *op;	    /* [node * nshards + shard] */
	uint64_t *stage_blocked_ms; /* [stage * nshards + shard], finished stretches */
	struct sl_obs_ring *ring;   /* [nrings] */
	uint64_t ckpt_completed, ckpt_failed;
	uint64_t rss_bytes; /* process resident set, 0: unknown */
};

/* One exchange channel: the ring from shard `from` to shard `to` feeding `stage`. */
struct sl_obs_ring {
	int stage, lane, from, to;
	uint64_t full; /* times its producer found it full */
};

/* Copies the counters of job's current run into snap (the caller's; free with
 * sl_obs_snap_fini). Any thread but a shard's; the job must outlive the call and the use
 * of snap (names are borrowed from it). Takes no lock; waits for nothing. 0 or -ENOMEM. */
int sl_obs_snap_take(struct sl_job *job, struct sl_obs_snap *snap);
void sl_obs_snap_fini(struct sl_obs_snap *snap);

/* Node names and kinds for the renderers, so they need not know the graph's structs. */
const char *sl_obs_job_name(const struct sl_job *job);
const char *sl_obs_node_name(const struct sl_job *job, int node);
const char *sl_obs_node_kind(const struct sl_job *job, int node);
int sl_obs_node_stage(const struct sl_job *job, int node);
/* The node heading stage s (its source or key_by). */
const char *sl_obs_stage_input(const struct sl_job *job, int stage);

/* A growable text buffer for the renderers (HTTP thread: malloc is fine here). */
struct sl_obs_buf {
	char *p;
	size_t len, cap;
	bool oom; /* an append failed: the text is incomplete */
};
void sl_obs_buf_printf(struct sl_obs_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends s with `"`, `\` and newlines escaped: a Prometheus label value or a JSON string
 * body (control characters as \u00XX for JSON when json is set). */
void sl_obs_buf_escaped(struct sl_obs_buf *b, const char *s, bool json);

/* The Prometheus text exposition (format 0.0.4) / the JSON document of snap into b. */
void sl_obs_render_prometheus(const struct sl_obs_snap *snap, struct sl_obs_buf *b);
void sl_obs_render_json(const struct sl_obs_snap *snap, struct sl_obs_buf *b);

#endif
