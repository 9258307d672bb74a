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

#include <sluice/job.h>
#include <sluice/types.h>

#include "observe.h"

struct sl_job;
struct sl_obs_buf;

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
	uint64_t run_ns; /* time its loop has run */
	/* the detail it answered (or its final one); NULL: not asked, or no answer in time */
	struct sl_obs_detail *detail;
};

/* One stage instance's time (stage * nshards + shard). */
struct sl_obs_stage {
	uint64_t blocked_ms; /* backpressured stretches that ended (ms clock) */
	uint64_t busy_ns, bp_ns;
};

/* Per-second figures over the interval since the previous sample (struct sl_obs_prev),
 * or over the whole run at the first one. */
struct sl_obs_rate {
	double busy_ms, bp_ms, idle_ms; /* per second: Flink's busyTimeMsPerSecond ... */
};

#define SL_OBS_HOT_MAX	 16
#define SL_OBS_HOT_SHARE 0.01

struct sl_obs_snap {
	const struct sl_job *job; /* borrowed: names and the plan come from it */
	bool started;		  /* a run exists (else everything below is empty) */
	bool detailed;		  /* details were asked for */
	int nshards, nnodes, nstages, nrings;
	int64_t now_ms, start_ms;     /* wall clock now and at the run's start */
	struct sl_obs_shard *shard;   /* [shard] */
	struct sl_obs_op *op;	      /* [node * nshards + shard] */
	struct sl_obs_stage *stage;   /* [stage * nshards + shard] */
	struct sl_obs_rate *rate;     /* [stage * nshards + shard] (with a prev sample) */
	double *rec_in_s, *rec_out_s; /* [node * nshards + shard] records/s, likewise */
	struct sl_obs_ring *ring;     /* [nrings] */
	uint64_t ckpt_completed, ckpt_failed;
	uint64_t ckpt_bytes_total;
	int nhist; /* checkpoints in hist, oldest first */
	struct sl_ckpt_obs hist[SL_OBS_CKPT_HIST];
	uint64_t rss_bytes; /* process resident set, 0: unknown */
	/* the key_bys' hot keys at SL_OBS_HOT_SHARE or more of their records (sl_job_hot_keys) */
	int nhot;
	struct sl_job_hot_key hot[SL_OBS_HOT_MAX];
};

/* One exchange channel: the ring from shard `from` to shard `to` feeding `stage`. */
struct sl_obs_ring {
	int stage, lane, from, to;
	uint64_t full;	 /* times its producer found it full */
	uint64_t used;	 /* bytes in it now (published, not released) */
	uint64_t cap;	 /* its size in bytes */
	uint64_t frames; /* frames its producer committed */
};

/* The previous sample of a reader that shows rates (sluice status --watch, the page): the
 * run it was of, when, and the counters rates are taken against. Owned by the reader; one
 * thread at a time (the caller's lock). */
struct sl_obs_prev {
	const void *run; /* the run it belongs to; another run starts afresh */
	int64_t at_ms;
	int nshards, nnodes, nstages;
	uint64_t *run_ns, *busy_ns, *bp_ns; /* [shard], [stage * nshards + shard] x2 */
	uint64_t *in, *out;		    /* [node * nshards + shard] */
};
void sl_obs_prev_fini(struct sl_obs_prev *p);

/* Copies the counters of job's current run into snap (the caller's; free with
 * sl_obs_snap_fini). Any thread but a shard's; the job must outlive the call and the use
 * of snap (names are borrowed from it). Without `detail` it takes no lock and waits for
 * nothing; with it, it asks every shard for its detail (observe.h) under the run's
 * observer lock and waits up to SL_OBS_ASK_MS for the answers (a shard that does not
 * answer in time has none in this snapshot). prev (may be NULL): rates against it, and it
 * is moved on when older than half a second. 0 or -ENOMEM. */
#define SL_OBS_ASK_MS 1000
int sl_obs_snap_take(struct sl_job *job, struct sl_obs_snap *snap, bool detail,
		     struct sl_obs_prev *prev);
void sl_obs_snap_fini(struct sl_obs_snap *snap);

/* Node names and kinds for the renderers, so they need not know the graph's structs. */
const char *sl_obs_job_name(const struct sl_job *job);
const char *sl_obs_node_name(const struct sl_job *job, int node);
const char *sl_obs_node_kind(const struct sl_job *job, int node);
int sl_obs_node_stage(const struct sl_job *job, int node);
/* The node heading stage s (its source or key_by). */
const char *sl_obs_stage_input(const struct sl_job *job, int stage);
int sl_obs_stage_input_id(const struct sl_job *job, int stage);
/* The node feeding node's input (-1: none, a source) and, for a key_by or keyed union
 * heading a stage, the stage its lane `lane` comes from (-1: none). */
int sl_obs_node_input(const struct sl_job *job, int node);
int sl_obs_stage_lane_from(const struct sl_job *job, int stage, int lane);
int sl_obs_stage_nlanes(const struct sl_job *job, int stage);
bool sl_obs_stage_is_source(const struct sl_job *job, int stage);
/* A source's watermark strategy (NULL: node is not a source). */
const struct sl_wm_strategy *sl_obs_source_wm(const struct sl_job *job, int node);
/* The name of a source's event-time column ("?" when it is computed by a function). */
const char *sl_obs_source_ts_column(const struct sl_job *job, int node);
/* EXPLAIN WATERMARK FOR (explain_wm.c): appends to b what job shows of the watermark of
 * its sources named in tables[0..n) (case-insensitive). Returns how many it found, or -1
 * (out of memory). */
int sl_obs_explain_watermark(struct sl_job *job, const char *const *tables, int ntables,
			     struct sl_obs_buf *b);
/* Whether node keeps event-time state that waits for watermarks (keyed operators). */
bool sl_obs_node_is_keyed(const struct sl_job *job, int node);

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
/*
 * "Why has my window not fired?" (why.c): for each event-time operator with windows or
 * timers waiting, the instance that waits for the earliest one, and what holds its
 * watermark back: the chain of exchange channels up to the source split whose watermark is
 * the minimum, that split as its shard saw it, and what to do about it.
 */
#define SL_OBS_WHY_HOPS 8
struct sl_obs_why {
	int node, shard;       /* the operator instance */
	int waiting_instances; /* of this operator, with something waiting */
	uint64_t pending;      /* windows or timers waiting at this instance */
	sl_ts_t watermark;     /* its input watermark */
	sl_ts_t pending_at;    /* the earliest of them: fires at watermark >= this */
	int nhops;	       /* exchange channels crossed upstream */
	struct {
		int stage, lane, from_shard;
		sl_ts_t wm; /* the channel's watermark */
	} hop[SL_OBS_WHY_HOPS];
	bool has_split;		   /* held back by `split` (else: see cause) */
	int src_node, src_shard;   /* the source instance at the end of the chain */
	struct sl_split_obs split; /* the split holding the watermark back */
	char cause[320];	   /* one line: why the watermark is where it is */
	char remedy[400];	   /* one line: what would let the window fire */
};
/* Fills out[0..max) from a detailed snapshot; returns how many operators wait. */
int sl_obs_why(const struct sl_obs_snap *s, struct sl_obs_why *out, int max);
/* Appends the why entries as text, each a paragraph (status --why, the end of a run). */
void sl_obs_render_why_text(const struct sl_obs_snap *s, const struct sl_obs_why *w, int n,
			    struct sl_obs_buf *b);
/* The whole status as text (sluice status), with the why part when asked. */
void sl_obs_render_text(const struct sl_obs_snap *s, bool why, struct sl_obs_buf *b);

/* Event time as "2024-02-01 10:00:03.000" (UTC), "-inf", "+inf" into buf[32]. */
const char *sl_obs_fmt_ts(sl_ts_t ts, char buf[32]);

#endif
