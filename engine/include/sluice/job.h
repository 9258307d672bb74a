/*
 * sluice/job.h - build a dataflow job (the DataStream equivalent) and run it.
 *
 * A job is a graph of streams. Every stream has a schema. key_by() marks a repartitioning:
 * the planner cuts the graph there into stages joined by an N x N exchange of SPSC rings;
 * everything else is chained into direct calls on one shard. Every shard runs one instance
 * of every stage.
 *
 * Threads: build and run a job from one thread. sl_job_stop() may be called from any
 * thread (or a signal handler) while sl_job_run() is running.
 *
 * Ownership: the job owns every stream, schema and spec passed to it (specs and schemas are
 * copied); callbacks' `arg` pointers are borrowed until sl_job_destroy().
 */
#ifndef SLUICE_JOB_H
#define SLUICE_JOB_H

#include <sluice/operator.h>
#include <sluice/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sl_job;
struct sl_stream;

/* Errors from job construction and running carry a one-line message naming the cause. */
struct sl_error {
	int code; /* -errno, 0 when no error */
	char msg[256];
};

/* ---- watermark strategies (DESIGN §4) ---------------------------------------------------- */

enum sl_wm_kind {
	SL_WM_NONE = 0,	  /* processing-time only: no event-time watermarks */
	SL_WM_BOUNDED,	  /* watermark = max event time seen - max_delay_ms */
	SL_WM_MONOTONOUS, /* watermark = max event time seen */
	SL_WM_CUSTOM,	  /* user generator below */
};

/* A custom generator keeps its own per-split state in `state` (state_size bytes, zeroed). */
struct sl_wm_custom {
	size_t state_size;
	void (*on_event)(void *state, sl_ts_t ts, const struct sl_row *row, void *arg);
	/* Returns the watermark to emit now, or SL_TS_MIN for none. */
	sl_ts_t (*on_periodic)(void *state, void *arg);
	void *arg;
};

struct sl_wm_strategy {
	enum sl_wm_kind kind;
	sl_ts_t max_delay_ms;	 /* SL_WM_BOUNDED */
	sl_ts_t idle_timeout_ms; /* a split silent this long is idle; 0 = never */
	sl_ts_t interval_ms;	 /* periodic emission interval; 0 = after every record */
	int ts_field;		 /* event time column (TIMESTAMP or BIGINT ms), -1: use assigner */
	sl_ts_t (*assign)(const struct sl_row *row, void *arg); /* when ts_field < 0 */
	void *assign_arg;
	struct sl_wm_custom custom;
	const char *ts_column; /* the event-time column's name, for EXPLAIN WATERMARK (borrowed
				* from the job's definition); NULL: unnamed */
};

/* ---- sources and sinks (custom connectors use these too) --------------------------------- */

struct sl_src_ctx;

/* Emits one record from the split being polled. `row` is copied before the call returns.
 * Returns 0, or -ENOSPC if the row is larger than a ring frame. Hot path. */
int sl_src_emit(struct sl_src_ctx *c, const struct sl_row *row);
/* Sends a record that could not be decoded to the job's dead-letter output and counts it.
 * `where` names the place (file:line, topic/partition/offset), `why` the cause. */
void sl_src_dead_letter(struct sl_src_ctx *c, const char *where, const char *why, const char *raw,
			size_t rawlen);
/* Counts n DECIMAL values the source made NULL because they did not fit their precision (in
 * the source operator's metrics; call once a poll, not per record). */
void sl_src_count_overflow(struct sl_src_ctx *c, uint64_t n);
/* The shard's scratch buffer for building one row (at least SL_ROW_SCRATCH bytes). */
void *sl_src_scratch(struct sl_src_ctx *c);
#define SL_ROW_SCRATCH 65536

enum { SL_SRC_EOF = -1000 }; /* poll(): this split is exhausted */

/* What a split has read, for observers (sluice status, --http): see sl_source_ops.progress. */
struct sl_src_progress {
	char name[128];	  /* what the split reads: "orders/2" (Kafka topic/partition), a path */
	const char *kind; /* "kafka partition", "file", "datagen split": static text */
	int64_t pos;	  /* offset after the last record taken / bytes / rows; -1: unknown */
	int64_t end;	  /* where it ends or the log ends now (file size, high watermark,
			   * rows to make); -1: unknown or unbounded */
	int64_t lag;	  /* records available and not read yet (Kafka consumer lag); -1 */
};

struct sl_source_ops {
	const char *name;
	/* Number of splits of this source at plan time (files, partitions, streams); only a
	 * source with discover() (below) has more later. */
	int (*nsplits)(const void *cfg);
	/* Opens split `split` on the calling shard. Returns per-split state or NULL with err set.
	 */
	void *(*open)(const void *cfg, int split, struct sl_error *err);
	/* Emits at most `max` records with sl_src_emit(). Returns how many it emitted, 0 when
	 * nothing is available now, SL_SRC_EOF when the split is finished, or -errno. */
	int (*poll)(void *split_state, struct sl_src_ctx *c, int max);
	void (*close)(void *split_state);
	/*
	 * Checkpoints, both optional (without them a restored job reads the split again from
	 * its start: not exactly-once). position: writes where the split would resume, just
	 * after the last record it emitted, into buf[0..cap) and sets *len; called between
	 * polls on the split's shard. seek: right after open on restore, continues from a
	 * position written by position(). Both return 0 or -errno.
	 */
	int (*position)(void *split_state, void *buf, size_t cap, size_t *len);
	int (*seek)(void *split_state, const void *pos, size_t len);
	/* Optional: the checkpoint whose position() this split wrote last is complete (its
	 * manifest is durable). On the split's shard, between polls. For side effects outside
	 * the exactly-once path only (Kafka: commit the offsets to the consumer group for
	 * monitoring); a checkpoint that failed is never announced. */
	void (*checkpoint_complete)(void *split_state, uint64_t ckpt);
	/*
	 * Optional: splits that may grow while the job runs (Kafka partitions and topics found
	 * after start). splits_grow: whether this cfg's splits may grow (an instance without a
	 * split then stays, idle, instead of ending). discover: on the coordinator thread (the
	 * thread of sl_job_run), about once a millisecond, never on a shard: returns the number
	 * of splits now, never fewer than before, or -errno (logged; the next call retries).
	 * The source itself decides when to ask its system (its interval) and may block then,
	 * up to its own metadata timeout. A new split k opens on shard k mod N like the others,
	 * between two polls and never while a checkpoint reads the shard's positions.
	 * restore_layout: on restore, before any split opens, one thread: the checkpoint held
	 * n splits of this source, pos[k] (len[k] bytes, without the event time) being split
	 * k's position, NULL for none. The source renumbers its splits so that split k is the
	 * one pos[k] names (its order may differ from a fresh plan's once splits were found
	 * later) and puts splits the checkpoint did not have after them. 0 or -errno, err set.
	 */
	bool (*splits_grow)(const void *cfg);
	int (*discover)(const void *cfg, int64_t now_ms);
	int (*restore_layout)(const void *cfg, int n, const void *const *pos, const size_t *len,
			      struct sl_error *err);
	/*
	 * A shard reads the splits of this source it owns one after another, in split order,
	 * instead of all at once: for splits that are pieces of one stream (a file's byte
	 * ranges, files in name order), where reading them at once would keep every piece's
	 * windows open. A split not started yet neither holds back nor sets the watermark.
	 */
	bool splits_in_order;
	/* Optional: what the split has read (struct sl_src_progress; the runtime sets every
	 * number to -1 first). On the split's shard, between polls, only when an observer asks
	 * (a few times a second at most), never per record; may ask its client for cached
	 * figures (librdkafka's watermark offsets) but never wait on the network. */
	void (*progress)(void *split_state, struct sl_src_progress *p);
	/* Optional: on restore, before any split opens, one thread: the checkpoint held n
	 * splits of this source; returns how many this run has. For a source whose split
	 * count nsplits() derives from the shard count (datagen): it keeps the first run's,
	 * so that a restore on another shard count continues the same stream. Without it a
	 * run has nsplits() splits. */
	int (*restored_nsplits)(const void *cfg, int n);
};

struct sl_sink_ops {
	const char *name;
	/* Opens this shard's instance (`shard` of `nshards`). Returns state or NULL, err set. */
	void *(*open)(const void *cfg, const struct sl_schema *schema, int shard, int nshards,
		      struct sl_error *err);
	/* Consumes one row. Hot path: no syscall per call, buffer instead. Returns 0 or -errno. */
	int (*write)(void *state, sl_ts_t ts, const struct sl_row *row);
	/* Called at end of input and before close; makes written rows durable/visible. */
	int (*flush)(void *state);
	void (*close)(void *state);
	/*
	 * Exactly-once (two-phase commit over checkpoints, DESIGN §7); all optional: a sink
	 * without them is at-least-once.
	 * precommit: checkpoint `ckpt`'s barrier reached this instance: make every row written
	 * so far durable but not yet visible, and describe in meta[0..cap) what commit must do
	 * (e.g. the renames of in-progress files), setting *len. Shard thread. 0 or -errno
	 * (-ENOSPC: meta too small).
	 * commit: checkpoint `ckpt` is complete (its manifest, holding every instance's meta,
	 * is durable): make that data visible. Also called during recovery, from any thread
	 * and with no instance open, for the metas of the checkpoint being restored, so it
	 * must be idempotent and need only cfg and meta. A sink that cannot finish a
	 * pre-committed epoch after a crash (a Kafka transaction dies with its producer)
	 * returns -ESTALE from that recovery-time commit when checkpoint `ckpt`'s output was
	 * not committed before the crash: recovery then restores the checkpoint before it
	 * (whose output was committed) and runs its commits instead.
	 * abort_pending: during recovery, before any instance opens: discard whatever
	 * instance `shard` of `nshards` wrote but did not get into a completed checkpoint
	 * (the commits of `ckpt`, 0 for none, have already run).
	 */
	int (*precommit)(void *state, uint64_t ckpt, void *meta, size_t cap, size_t *len);
	int (*commit)(const void *cfg, uint64_t ckpt, const void *meta, size_t len);
	int (*abort_pending)(const void *cfg, int shard, int nshards, uint64_t ckpt);
	/* True for a sink whose recovery-time commit may return -ESTALE: its commits run
	 * before every other sink's, at run time and in recovery, so a lost epoch is found
	 * before another sink has made that epoch's output visible. */
	bool commit_may_be_lost;
	/* Optional: the input watermark advanced to `wm` (shard thread, between writes), for a
	 * sink whose output depends on event-time progress (a partitioned filesystem sink's
	 * partition-time commit). */
	void (*watermark)(void *state, sl_ts_t wm);
};

/* ---- windows and aggregates (DESIGN §5) --------------------------------------------------- */

/*
 * Window kinds, as Flink's window TVFs. CUMULATE(step, max_size [, offset]) cuts time into
 * periods [p, p + max_size), p = offset + n * max_size, and gives each period the windows
 * [p, p + step), [p, p + 2 * step), ..., [p, p + max_size): every window starts at p, and a
 * record at ts is in each window of its period whose end is > ts.
 */
enum sl_win_kind { SL_WIN_TUMBLE = 1, SL_WIN_HOP, SL_WIN_SESSION, SL_WIN_CUMULATE };

/*
 * Where a window aggregation is computed, as Flink's table.optimizer.agg-phase-strategy:
 * ONE: on the key's owner shard only; TWO: also a local pre-aggregation on each sending
 * shard before the exchange (partials per key and slice, merged on the owner) whenever the
 * aggregates can merge; AUTO: TWO except where merging could change a result's bits
 * (SUM and AVG over FLOAT or DOUBLE: addition of floats is not associative). Sessions and
 * FIRST_VALUE, LAST_VALUE, COUNT(DISTINCT) and string MIN/MAX always run in one phase.
 */
enum sl_agg_phase {
	SL_AGG_PHASE_AUTO = 0,
	SL_AGG_PHASE_ONE,
	SL_AGG_PHASE_TWO,
};

struct sl_window_spec {
	enum sl_win_kind kind;
	sl_ts_t size_ms;   /* tumble, hop; cumulate: max_size, a multiple of slide_ms */
	sl_ts_t slide_ms;  /* hop; cumulate: step */
	sl_ts_t gap_ms;	   /* session */
	sl_ts_t offset_ms; /* tumble, hop, cumulate: window (cumulate: period) alignment */
	sl_ts_t allowed_lateness_ms;
	int late_tag; /* side-output tag for records beyond lateness, 0 = counted only */
	enum sl_agg_phase agg_phase; /* two-stage aggregation; 0 = SL_AGG_PHASE_AUTO */
	/* A processing-time window (Flink's windows over PROCTIME()): a record belongs to the
	 * windows of the shard's wall clock when it reaches the operator, and a window fires
	 * when that clock passes its end, not by the watermark. No late records; no two-stage
	 * aggregation. What is open at the end of input fires then (Flink drops it). */
	bool proctime;
};

enum sl_agg_kind {
	SL_AGG_COUNT_STAR = 1,
	SL_AGG_COUNT, /* non-NULL values of field */
	SL_AGG_SUM,
	SL_AGG_AVG,
	SL_AGG_MIN,
	SL_AGG_MAX,
	SL_AGG_USER,
	SL_AGG_COUNT_DISTINCT, /* distinct non-NULL values of field (BIGINT, 0 when none) */
	SL_AGG_FIRST_VALUE,    /* first non-NULL value in arrival order */
	SL_AGG_LAST_VALUE,     /* last non-NULL value in arrival order */
	SL_AGG_M2,	       /* sum of squared deviations from the mean of non-NULL numeric values
				* (DOUBLE, Welford's update as Flink's WelfordM2AggFunction; NULL when none):
				* SQL's STDDEV_* and VAR_* divide it by COUNT or COUNT - 1 */
	SL_AGG_LISTAGG,	       /* the non-NULL STRING values joined by `sep` in arrival order
				* (NULL when none), as Flink's LISTAGG */
};

/* A user aggregate: an accumulator of acc_size bytes with init/add/merge/result. For a
 * reduce function, write the reduced value into the accumulator and return it in result. */
struct sl_agg_fn {
	size_t acc_size;
	void (*init)(void *acc, void *arg);
	void (*add)(void *acc, const struct sl_row *row, void *arg);
	/* acc += other (required for hopping and session windows) */
	void (*merge)(void *acc, const void *other, void *arg);
	/* Writes the result into field `field` of the output row. */
	void (*result)(const void *acc, struct sl_row_builder *out, int field, void *arg);
	enum sl_type result_type;
	void *arg;
};

/*
 * One aggregate. Result types follow Flink SQL: COUNT* BIGINT; SUM(BIGINT) BIGINT,
 * SUM(FLOAT/DOUBLE) the input type, SUM(DECIMAL(p,s)) DECIMAL(18,s) (Flink: 38,s; NULL once
 * the sum leaves 18 digits, as Flink gives NULL on decimal overflow); AVG keeps the input
 * type (AVG(INT) divides with truncation) except AVG(DECIMAL(p,s)) = DECIMAL(18, max(6,s))
 * rounded HALF_UP; MIN/MAX/FIRST/LAST_VALUE keep the input type. NULL inputs are skipped;
 * a result with no non-NULL input is NULL (COUNT: 0). SUM(INT) is BIGINT in the C API and
 * INT (32-bit wrap-around, Java's int) with sql_types.
 */
struct sl_agg_spec {
	enum sl_agg_kind kind;
	int field;	       /* input field, -1 for COUNT(*) */
	const char *name;      /* output column name */
	struct sl_agg_fn user; /* SL_AGG_USER */
	bool sql_types;	       /* Flink SQL result types where the C API differs (SUM(INT)) */
	const char *sep;       /* SL_AGG_LISTAGG: the separator (borrowed; NULL: ",") */
	bool distinct;	       /* SL_AGG_SUM, SL_AGG_AVG: over the distinct non-NULL values
				* (SQL's SUM(DISTINCT x)); ignored by MIN and MAX */
};

/* ---- building ------------------------------------------------------------------------- */

/* Returns a new job or NULL on ENOMEM. */
struct sl_job *sl_job_create(const char *name);
void sl_job_destroy(struct sl_job *job);

/* Adds a source. `cfg` is borrowed until sl_job_destroy(); `schema` is copied. */
struct sl_stream *sl_job_source(struct sl_job *job, const char *name,
				const struct sl_source_ops *ops, const void *cfg,
				const struct sl_schema *schema, const struct sl_wm_strategy *wm);

/* Per-record user functions. `out` is a builder over the shard's scratch buffer with the
 * output schema's field count; the function fills it. Hot path: no allocation. */
typedef bool (*sl_filter_fn)(const struct sl_row *in, void *arg);
typedef void (*sl_map_fn)(const struct sl_row *in, struct sl_row_builder *out, void *arg);
/* A flat_map emits any number of rows with sl_emit(ctx, ...). */
typedef void (*sl_flat_map_fn)(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *in, void *arg);

struct sl_stream *sl_stream_filter(struct sl_stream *in, const char *name, sl_filter_fn fn,
				   void *arg);
struct sl_stream *sl_stream_map(struct sl_stream *in, const char *name, sl_map_fn fn, void *arg,
				const struct sl_schema *out);
/* Keeps the listed fields in order (a projection, no user code). */
struct sl_stream *sl_stream_project(struct sl_stream *in, const char *name, const int *fields,
				    int nfields);
struct sl_stream *sl_stream_flat_map(struct sl_stream *in, const char *name, sl_flat_map_fn fn,
				     void *arg, const struct sl_schema *out);
/* Repartitions by the listed key fields. Windows and process functions need a keyed input;
 * any other operator after key_by runs on the shard owning the record's key, as in Flink. */
struct sl_stream *sl_stream_key_by(struct sl_stream *in, const int *fields, int nfields);
/* A keyed union: the rows of every input (all with the same column types) repartitioned by the
 * same key fields into one keyed stream, as Flink's union followed by keyBy. Its watermark is
 * the minimum over every input. Two-input operators (a temporal join) use it with rows that
 * carry a side column. */
struct sl_stream *sl_stream_union_key_by(struct sl_stream *const *ins, int nins, const int *fields,
					 int nfields);

/* A keyed window aggregation. Output: key fields, window_start, window_end (TIMESTAMP), then
 * one column per aggregate. Must follow sl_stream_key_by(). */
struct sl_stream *sl_stream_window(struct sl_stream *keyed, const char *name,
				   const struct sl_window_spec *win, const struct sl_agg_spec *aggs,
				   int naggs);

/* A keyed process function (see operator.h) with output schema `out`. */
struct sl_stream *sl_stream_process(struct sl_stream *keyed, const char *name,
				    const struct sl_process_fn *fn, const struct sl_schema *out);

/* The rows an operator sent to side-output `tag` (late records of a window: the window's
 * input schema). */
struct sl_stream *sl_stream_side_output(struct sl_stream *of, int tag,
					const struct sl_schema *schema);

/* Ends a stream in a sink; `cfg` borrowed until sl_job_destroy(). Returns 0 or -errno. */
int sl_stream_sink(struct sl_stream *in, const char *name, const struct sl_sink_ops *ops,
		   const void *cfg);
/* As sl_stream_sink(), but the sink is given `schema` (copied) in place of the stream's own:
 * the same number of fields of the same types, precisions and scales, other names - a rename
 * (INSERT INTO a table whose columns the query names differently) that costs nothing per
 * row, where an operator would copy every row. Returns 0, -EINVAL (the fields differ) or
 * -errno. */
int sl_stream_sink_as(struct sl_stream *in, const char *name, const struct sl_sink_ops *ops,
		      const void *cfg, const struct sl_schema *schema);

/*
 * Names the operator of `s` for its state in checkpoints and savepoints, as Flink's
 * uid(): a restore matches each operator's state by this id (and the operator's kind and
 * columns), not by its place in the graph, so operators added or removed elsewhere leave it
 * where it is. Without a call the id is the operator's name (the second of two equal names
 * gets "#2"). 1-128 characters of [A-Za-z0-9_.-/ ]. Returns 0, -EINVAL, -ENOMEM.
 */
int sl_stream_uid(struct sl_stream *s, const char *uid);
/* How many operators (nodes) the job has so far: what sl_job_scope_uids counts from. */
int sl_job_nnodes(const struct sl_job *job);
/*
 * Gives every operator added since the job had `from` operators, and not named by
 * sl_stream_uid, the uid "<scope>/<name>" (characters outside the uid alphabet made '_'; a
 * sink's is "<scope>/sink"): how a SQL statement keeps its operators' state its own. `exclusive`:
 * -EEXIST when an earlier operator's uid already starts with "<scope>/". Returns 0, -EINVAL (scope
 * not a valid uid), -EEXIST, -ENOMEM.
 */
int sl_job_scope_uids(struct sl_job *job, int from, const char *scope, bool exclusive);

const struct sl_schema *sl_stream_schema(const struct sl_stream *s);
/* The first construction error of the job (a NULL stream was passed on, a bad field...). */
const struct sl_error *sl_job_error(const struct sl_job *job);

/* ---- running -------------------------------------------------------------------------- */

struct sl_run_opts {
	int nshards;	     /* 0: one per core in `cores`, or online CPUs */
	const char *cores;   /* "0-7", "0,2,4": pin shard i to the i-th listed core; NULL: no pin */
	uint32_t ring_bytes; /* per exchange ring; 0: 1 MiB */
	int max_parallelism; /* key groups; 0: 128 */
	const char *dead_letter_path; /* JSON lines of undecodable records; NULL: stderr */
	/* Checkpoints (DESIGN §7): start one every interval; 0: none. A checkpoint completes
	 * when its barrier has passed every operator of every shard; on_checkpoint (optional)
	 * then runs on the coordinator (the thread in sl_job_run) while the shards go on; a
	 * non-zero return counts the checkpoint as failed. */
	sl_ts_t checkpoint_interval_ms;
	/* Where completed checkpoints are written (state files, manifest; DESIGN §7), and
	 * sinks commit after each; NULL: checkpoints are only taken (tests, on_checkpoint). */
	const char *checkpoint_dir;
	int (*on_checkpoint)(struct sl_job *job, uint64_t ckpt, void *arg);
	void *checkpoint_arg;
	/* A checkpoint not acknowledged by every shard this long after it started is failed
	 * (0: 10 min, Flink's default); the next starts at least min_pause after one ends. */
	sl_ts_t checkpoint_timeout_ms;
	sl_ts_t checkpoint_min_pause_ms;
	/* Failed checkpoints in a row (an I/O error, a timeout; not a savepoint, not one the
	 * end of input overtook) tolerated before the job fails, as Flink's
	 * execution.checkpointing.tolerable-failed-checkpoints: 0 (Flink's default) fails it
	 * at the first; a completed checkpoint starts the count again; < 0: no limit. */
	int tolerable_failed_checkpoints;
	/* Accept sl_job_savepoint requests (a coordinator runs even without an interval). */
	bool savepoints;
	/* Restore this savepoint (a directory sl_job_savepoint wrote, or a checkpoint
	 * directory) instead of the newest checkpoint in checkpoint_dir. */
	const char *from_savepoint;
	/* When every complete checkpoint in checkpoint_dir is damaged, start from scratch
	 * (the damaged ones are kept as corrupt-chk-<n>) instead of refusing to start: their
	 * sinks may have committed output, which the new run then writes again. */
	bool start_fresh;
	/* State in the restored checkpoint or savepoint of an operator this job does not have
	 * (matched by uid, sl_stream_uid) is dropped, as Flink's --allowNonRestoredState,
	 * instead of refusing the restore. */
	bool allow_non_restored_state;
	/* State backend (DESIGN §6): NULL or "heap", or "rocksdb" (one DB per keyed operator
	 * and shard under state_dir, NULL: a temporary directory; native, incremental
	 * checkpoints) with state_memory bytes for all shards (0: 512 MiB): block cache and
	 * memtables. */
	const char *state_backend;
	size_t state_memory;
	const char *state_dir;
};

/*
 * Takes a savepoint of the running job (DESIGN §7): a checkpoint taken now, written whole
 * into a new directory under `dir` (created if missing) and kept until the user deletes it;
 * `sluice run --from-savepoint` restores it, on any shard count. stop: the sources stop
 * first (no window fires, as Flink's stop without --drain), the savepoint is the job's
 * final checkpoint, and sl_job_run returns after it. Thread-safe: call it from any thread
 * while sl_job_run runs with opts.savepoints; blocks until the savepoint is complete.
 * Returns 0 with its path in path[0..cap), or -errno with the reason in err[0..errcap).
 */
int sl_job_savepoint(struct sl_job *job, const char *dir, bool stop, char *path, size_t cap,
		     char *err, size_t errcap);

/* Plans and runs the job to completion (bounded input) or until sl_job_stop().
 * Returns 0 or -errno with sl_job_error() describing the failure. */
int sl_job_run(struct sl_job *job, const struct sl_run_opts *opts);
/* Asks a running job to finish: sources stop, in-flight windows are not fired. Called
 * before sl_job_run (or while it starts), it stops that run as soon as it has started; the
 * request ends with the run it stopped. */
void sl_job_stop(struct sl_job *job);

/* Counters summed over shards after (or during) a run. */
struct sl_job_stats {
	uint64_t records_in;	  /* from sources */
	uint64_t records_out;	  /* into sinks */
	uint64_t late_records;	  /* beyond allowed lateness, all window operators */
	uint64_t dead_letters;	  /* undecodable source records */
	uint64_t ring_full;	  /* times a producer found an exchange ring full (stalls) */
	uint64_t backpressure_ms; /* time stages spent unable to send, summed over shards */
	uint64_t checkpoints;	  /* completed checkpoints */
	uint64_t checkpoints_failed;
	uint64_t decimal_overflows; /* DECIMAL values made NULL, all operators */
	/* two-stage aggregation: rows combined on their sending shard, and the partials that
	 * crossed the exchanges instead of them */
	uint64_t records_combined;
	uint64_t partials;
};
void sl_job_stats(const struct sl_job *job, struct sl_job_stats *out);

/*
 * Hot keys: a key that carries a large share of the records a key_by sends, summed over
 * its senders' sketches (a sample of every 16th record). `share` is a guaranteed lower
 * bound of its share of the key_by's records, share_hi an upper bound. A key above
 * 1 / shards loads its owner shard more than an even spread would: aggregations split
 * into two phases absorb it on the senders; other keyed operators keep one owner per key.
 */
struct sl_job_hot_key {
	const char *op;	  /* the key_by's name (borrowed from the job) */
	const char *into; /* the keyed operator it feeds */
	bool two_phase;	  /* that operator runs a local stage on the senders */
	char key[160];	  /* "user_id=42", cut with "..." when longer */
	double share, share_hi;
};
/* Writes into out[0..max) the hot keys of every key_by of the job's run whose share is at
 * least min_share, largest first within each key_by. Returns how many. While it runs (any
 * thread: racy but whole reads) or after. */
int sl_job_hot_keys(const struct sl_job *job, double min_share, struct sl_job_hot_key *out,
		    int max);
/* Writes one line per operator (name, in, out, late, state entries, DECIMAL overflows when
 * there were some) and one per stage
 * (backpressured time, output ring stalls) to `f` (a FILE *). */
void sl_job_print_metrics(const struct sl_job *job, void *f);

#ifdef __cplusplus
}
#endif
#endif
