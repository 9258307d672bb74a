/*
 * runtime.h - a running job: shards (one pinned thread each), their stage instances, and the
 * exchange rings between them.
 *
 * Ownership: the runtime owns shards and rings; each shard owns its operator instances and
 * everything they allocate (allocated and freed on the shard's thread, in its jemalloc arena).
 * Rings are created by the starting thread before any shard runs and freed after all joined.
 */
#ifndef SL_RUNTIME_RUNTIME_H
#define SL_RUNTIME_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>

#include "graph.h"
#include "hot_keys.h"
#include "observe.h"
#include "ring.h"
#include "doorbell.h"
#include "source.h"

/* One input channel of an exchange stage: the ring from one upstream shard. */
struct sl_chan {
	struct sl_ring *ring;
	sl_ts_t wm; /* last watermark received on this channel */
	bool idle;
	bool ended;
	bool dead;    /* its sender owns no source split: never carries data (see wire.c) */
	bool blocked; /* delivered the barrier of checkpoint `barrier`: not read until the
		       * stage has it from every channel (alignment, DESIGN §7) */
	uint64_t barrier;
};

/* One split of a source, polled by the shard that owns it. */
struct sl_split_inst {
	struct sl_src_ctx sctx; /* first: the connector's view of this split */
	struct sl_stage_inst *si;
	void *state;	     /* the connector's split state */
	sl_ts_t max_ts;	     /* greatest event time seen */
	sl_ts_t custom_wm;   /* SL_WM_CUSTOM: last periodic result */
	sl_ts_t last_active; /* shard clock at the last record */
	bool idle;
	bool ended;
	void *custom_state;	/* SL_WM_CUSTOM generator state */
	struct sl_snap_buf pos; /* position at the last checkpoint's barrier */
	uint64_t pos_ckpt;
};

struct sl_stage_inst {
	const struct sl_stage *st;
	struct sl_shard *sh;
	struct sl_ctx *root; /* source root or keyed-exchange receiver */
	bool ended;
	uint32_t pending;      /* frames the stage's exchange-outs hold back */
	sl_ts_t wm_out;	       /* watermark handed to root so far */
	sl_ts_t blocked_since; /* shard clock when its outputs filled up, 0: not */
	uint64_t blocked_ms;   /* time spent backpressured (metric) */

	/* source stages */
	struct sl_split_inst *splits;
	int nsplits;
	int total_splits; /* splits of the source (all shards') opened for */
	bool grows;	  /* its splits may grow (sl_source_ops.splits_grow) */
	const struct sl_wm_strategy *wm;
	sl_ts_t next_wm_at; /* shard clock of the next periodic watermark */

	/* exchange stages */
	struct sl_chan *chans;
	int nchans;
	uint64_t ckpt_done; /* last checkpoint whose barrier passed this stage */
};

struct sl_shard {
	struct sl_runtime *rt;
	int index;
	int cpu; /* pinned core, -1: not pinned */
	pthread_t thread;
	struct sl_ctx *ctx;	      /* [node id] operator instances; KEYBY: receiver */
	struct sl_ctx *xctx;	      /* [node id] KEYBY sender (exchange-out) instances */
	struct sl_stage_inst *si;     /* [stage id] */
	struct sl_ctx *proctime_list; /* instances with wants_proctime */
	sl_ts_t now;		      /* wall clock (ms), read once per loop turn */
	uint64_t dead_letters;
	uint64_t loops;		    /* loop turns (metric) */
	uint64_t idle_loops;	    /* turns with no work (metric) */
	uint64_t bell_moves;	    /* ring_moves() at the last wake of the peers */
	int error;		    /* -errno of this shard's failure */
	void *src_scratch;	    /* SL_ROW_SCRATCH bytes for sources */
	struct sl_op_metrics *m;    /* [node id] final metrics, kept after the run */
	struct sl_hot_keys *hot;    /* [node id] key_by senders' heavy hitters, kept after it */
	uint64_t *stage_blocked_ms; /* [stage id] backpressured time, kept after the run */
	/* checkpoints: the newest requested checkpoint this shard has started, and the newest
	 * whose barrier has passed every stage instance of this shard (published to the
	 * coordinator; its snapshots are then readable until the next request) */
	uint64_t ckpt_seen;
	uint64_t ckpt_announced; /* newest completed checkpoint told to the sources */
	_Atomic uint64_t ckpt_acked;
	_Atomic bool input_done;	/* every stage ended: waiting for the final checkpoint */
	struct sl_rocks_db **state_dbs; /* [node id] RocksDB backend: each keyed operator
					 * instance's DB (opened, and restored from a native
					 * checkpoint, before wiring); NULL: heap */
	/* checkpoint files: the shard's own writer (a checkpoint directory is set) and the
	 * state files of checkpoint files_ckpt, read by the coordinator once acknowledged */
	struct sl_uring_writer *writer;
	struct sl_shard_file *files; /* [nnodes] */
	int nfiles;
	int files_pending;
	uint64_t files_ckpt;
	_Atomic bool finished; /* the shard loop has returned */
	/* heap state held by this shard's instances (memory_guard.c): written by the shard
	 * every 100 ms, read by a shard that finds itself over its share */
	_Atomic uint64_t heap_bytes;
	sl_ts_t mem_next; /* the clock reading of its next measurement */
	/* observers on other threads (observe.c): may they read ctx/xctx/si now, and how
	 * many are reading */
	_Atomic int obs_state; /* SL_SHARD_OBS_* */
	_Atomic unsigned obs_readers;
	struct sl_shard_obs *obs; /* time per stage, details on request (observe.h) */
};

enum {
	SL_SHARD_OBS_NONE = 0, /* not wired yet */
	SL_SHARD_OBS_LIVE,     /* wired: instances readable inside observe_begin/end */
	SL_SHARD_OBS_GONE,     /* unwiring or unwired: read sh->m once finished */
};

/* One state file a shard wrote for a checkpoint. */
struct sl_shard_file {
	int node;
	char rel[64]; /* name in chk-<n>/ */
	uint64_t size;
	uint32_t crc32c;
	int error;		    /* 0, or why it is not on disk */
	struct sl_rocks_db *native; /* the operator's db, when it also took a native
				     * checkpoint into chk-<n>/op<node>-s<shard>/ */
};

/* A savepoint asked for by sl_job_savepoint (another thread), served by the coordinator. */
struct sl_savepoint_req {
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool pending; /* posted, not yet taken by the coordinator */
	bool active;  /* taken: the next checkpoint goes to `dir` too */
	bool done;
	bool stop;     /* stop the job after it (sources stop first) */
	uint64_t ckpt; /* the checkpoint serving it, 0: not started */
	int rc;
	char dir[4096];	 /* target directory (parent of the savepoint) */
	char path[4096]; /* the savepoint written */
	char err[256];
};

struct sl_runtime {
	struct sl_job *job;
	int nshards;
	uint32_t max_par;
	uint32_t ring_bytes;
	struct sl_shard *shards;
	struct sl_doorbell *bells; /* [shard]: an idle shard sleeps on its bell (doorbell.h) */
	struct sl_ring **rings;	   /* [lane][from][to], lanes of stage s from lane_base[s];
				    * source stages have none */
	int *lane_base;		   /* [stage] */
	int nlanes;		   /* lanes of all stages */
	int dl_fd;		   /* dead-letter output */
	bool dl_close;
	_Atomic bool abort;		/* a shard failed: everyone leaves at once */
	_Atomic uint64_t ckpt_req;	/* newest checkpoint the coordinator asked for */
	_Atomic uint64_t ckpt_consumed; /* newest checkpoint the coordinator is done reading */
	_Atomic uint64_t ckpt_complete; /* newest checkpoint that completed (durable) */
	bool checkpointing;		/* a coordinator runs (checkpoints or savepoints) */
	_Atomic bool coordinating;	/* ... and is running now */
	_Atomic bool final_ckpt;	/* a final checkpoint follows the end of input */
	_Atomic bool final_done;	/* the coordinator takes no more checkpoints */
	struct sl_savepoint_req sp;
	struct sl_state_env *state_env; /* RocksDB backend (state/backend.h); NULL: heap */
	uint64_t heap_limit;		/* bytes of state the heap may hold (memory_guard.c) */
	bool heap_limit_given;		/* ... from --state-memory, not the default */
	/* 64 random bits of this run in its state file names (sl_ckpt_state_name), so an
	 * old run of the job that went on (a zombie) never writes a name the new run uses
	 * in the same chk-<n>; set before the shards start */
	uint64_t ckpt_run;
	char state_tmp[256]; /* a working directory we made and remove at the end */
	int state_lock;	     /* its owner lock (sl_state_workdir_create) */
	uint64_t ckpt_completed, ckpt_failed;
	uint64_t ckpt_base;		  /* checkpoint ids continue after this one */
	struct sl_ckpt_ctl *ckpt_ctl;	  /* the checkpoint directory, when there is one */
	int *src_nsplits;		  /* [node]: the splits a source starts with (its
					   * nsplits, or a restore's restored_nsplits); set
					   * before the shards start, read-only after */
	_Atomic int *src_splits;	  /* [node]: a growing source's splits now (the
					   * coordinator's sl_source_discover writes, the
					   * shards' sl_source_stage_tick reads) */
	struct sl_ckpt_store *ckpt_store; /* its store (borrowed from ckpt_ctl; NULL: none):
					   * shards name their native state directories with it */
	_Atomic uint64_t ckpt_savepoint;  /* the checkpoint that is also a savepoint, 0: none;
					   * stored before that checkpoint's ckpt_req release */
	pthread_mutex_t err_lock;	  /* first error wins (error path only) */
	struct sl_run_obs *obs;		  /* for observers: history, their lock (observe.h) */
};

/* The ring from shard `from` to shard `to` carrying input `lane` of stage `stage` (lane 0
 * but for a keyed union). */
static inline struct sl_ring *sl_rt_ring_lane(struct sl_runtime *rt, int stage, int lane, int from,
					      int to)
{
	size_t l = (size_t)rt->lane_base[stage] + (size_t)lane;

	return rt->rings[(l * (size_t)rt->nshards + (size_t)from) * (size_t)rt->nshards +
			 (size_t)to];
}

static inline struct sl_ring *sl_rt_ring(struct sl_runtime *rt, int stage, int from, int to)
{
	return sl_rt_ring_lane(rt, stage, 0, from, to);
}

struct sl_wm_min;

/* Hands a stage's input time, the minimum over its inputs (time/watermark.h), to its root:
 * idleness, and the watermark when it moves forward (shard.c). */
void sl_stage_input_time(struct sl_stage_inst *si, const struct sl_wm_min *m);

/* The shard loop (shard.c). */
void *sl_shard_main(void *arg);
/* Builds this shard's operator instances and stage instances (wire.c). 0 or -errno. */
int sl_shard_wire(struct sl_shard *sh);
void sl_shard_unwire(struct sl_shard *sh);

/* Source stages (source_rt.c). */
int sl_source_stage_open(struct sl_stage_inst *si);
int sl_source_stage_poll(struct sl_stage_inst *si);
void sl_source_stage_tick(struct sl_stage_inst *si);
void sl_source_stage_stop(struct sl_stage_inst *si);
/* Starts checkpoint `ckpt` at a source instance: split positions, then the barrier. */
void sl_source_stage_barrier(struct sl_stage_inst *si, uint64_t ckpt);
void sl_source_stage_close(struct sl_stage_inst *si);
/* Checkpoint `ckpt` completed: tells the splits whose position it holds. */
void sl_source_stage_complete(struct sl_stage_inst *si, uint64_t ckpt);
/* Coordinator thread: asks every source whose splits grow for its count now and publishes
 * a larger one in rt->src_splits for the shards. Returns whether any source grows. */
bool sl_source_discover(struct sl_runtime *rt, int64_t now_ms);

/* Exchange-outs (exchange.c): move held-back frames into rings. Returns frames moved. */
int sl_exchange_drain(struct sl_ctx *xctx);
int sl_exchange_open(struct sl_ctx *ctx, struct sl_stage_inst *owner, int to_stage, int lane);

/* Writes one undecodable record to the dead-letter output and counts it (error path). */
void sl_dead_letter_write(struct sl_shard *sh, const char *where, const char *why, const char *raw,
			  size_t rawlen);

/* Bytes of a record shown in its dead letter (a longer one is cut and its length given). */
#define SL_DEAD_LETTER_RAW_MAX 4096
/* Room sl_dead_letter_format() needs, whatever it is given. */
#define SL_DEAD_LETTER_MAX                                                                         \
	(6 * (1536 + SL_DEAD_LETTER_RAW_MAX) + 4 * SL_DEAD_LETTER_RAW_MAX / 3 + 256)

/*
 * Writes one dead-letter line, '\n' included, into buf[SL_DEAD_LETTER_MAX]
 * (dead_letter.c):
 *   {"where":"path:line","why":"cause","raw":"record"[,"raw_base64":"..."][,"raw_len":N]}
 * Always one valid JSON object (RFC 8259 escapes, UTF-8 only: bytes of raw that are not
 * UTF-8 show as U+FFFD and raw_base64 then holds the exact bytes); raw is cut at
 * SL_DEAD_LETTER_RAW_MAX bytes (raw_len then says how long it was), where and why at 1 KiB
 * and 512 bytes. Any argument may be NULL. Returns the length. No allocation; any thread.
 */
size_t sl_dead_letter_format(char *buf, const char *where, const char *why, const char *raw,
			     size_t rawlen);

void sl_runtime_destroy(struct sl_runtime *rt);

/*
 * Observers (observe.c): a thread that is not a shard reads a run's live counters between
 * _observe_begin and _observe_end; the writer side publishes before and retracts (waiting
 * for readers to leave) before freeing. No lock; readers copy and leave at once.
 */
/* Shard thread: the instances are wired (publish) / about to be unwired (retract). */
void sl_shard_obs_publish(struct sl_shard *sh);
void sl_shard_obs_retract(struct sl_shard *sh);
/* Any other thread: true when sh's instances may be read until sl_shard_observe_end;
 * false: nothing to read (not wired yet, or gone), no _end. */
bool sl_shard_observe_begin(struct sl_shard *sh);
void sl_shard_observe_end(struct sl_shard *sh);
/* The running thread: rt is set up for observers / is about to be freed. */
void sl_job_obs_publish(struct sl_job *job, struct sl_runtime *rt);
void sl_job_obs_retract(struct sl_job *job);
/* Any other thread: the run readable until sl_job_observe_end, or NULL (none, no _end). */
struct sl_runtime *sl_job_observe_begin(struct sl_job *job);
void sl_job_observe_end(struct sl_job *job);

/* memory_guard.c: the default heap state limit, 3/4 of the memory this process may have
 * (its cgroup's limit, else physical memory); and the check a shard runs each loop
 * turn (it acts every 100 ms): fails the job when the heap state of all shards is over
 * rt->heap_limit, naming the largest holder. */
uint64_t sl_mem_guard_default_limit(void);
void sl_mem_guard_check(struct sl_shard *sh);

#endif
