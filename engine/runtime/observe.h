/*
 * observe.h - what a running job tells threads that are not its shards (the HTTP endpoint,
 * `sluice status`, the end-of-run report; engine/obs/ reads it), beyond the counters of
 * op.h: time per stage instance (busy, backpressured), barrier alignment, checkpoint
 * history, and a detail a shard fills in only when an observer asks: each split's
 * progress and watermark, each channel's watermark, each operator's earliest waiting
 * window or timer.
 *
 * Who writes what:
 *   struct sl_stage_obs, run_ns    the shard, once per loop turn (plain words, read
 *                                  racily: monotonic, aligned, one writer)
 *   struct sl_obs_detail           the shard, on request (sl_shard_obs_ask), into one of
 *                                  two buffers; the asker reads it once answered
 *   the final detail               the shard, after retracting its instances from
 *                                  observers and before freeing them; read once finished
 *   struct sl_ckpt_obs history     the coordinator, under run_obs->hist_lock
 *
 * Observers take run_obs->lock around ask + read, so at most one ask is in flight and a
 * buffer being read is never the one being written (observe.c says why).
 */
#ifndef SL_RUNTIME_OBSERVE_H
#define SL_RUNTIME_OBSERVE_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <sluice/job.h>

struct sl_shard;
struct sl_runtime;

#define SL_OBS_MAX_SPLITS 256 /* splits a shard describes in one detail */
#define SL_OBS_CKPT_HIST  16  /* checkpoints kept in the history */

/* One source split as its shard saw it. */
struct sl_split_obs {
	struct sl_src_progress p; /* the connector's view (progress hook); -1: unknown */
	int node;		  /* the source's node id */
	int split;		  /* its number k (runs on shard k mod N) */
	sl_ts_t max_ts;		  /* greatest event time it produced, SL_TS_MIN: none */
	sl_ts_t wm;		  /* its own watermark (watermark.h), SL_TS_MIN: none */
	sl_ts_t silent_ms;	  /* since its last record (or its opening) */
	bool idle, ended;
};

/* One input channel of an exchange stage instance. */
struct sl_chan_obs {
	sl_ts_t wm; /* last watermark it delivered */
	bool idle, ended, dead;
	bool blocked; /* holds a barrier: waits for the others (alignment) */
};

/* A stage instance's input time. */
struct sl_stage_detail {
	sl_ts_t wm_out; /* the watermark it handed its operators */
	bool idle;	/* its root is idle (every input is) */
	bool ended;
	int chan0, nchans; /* its channels in detail->chan (exchange stages) */
};

/* One operator instance's event-time state. */
struct sl_node_obs {
	sl_ts_t watermark;  /* its input watermark */
	sl_ts_t pending_at; /* earliest window end - 1 / timer waiting; SL_TS_MAX: none */
	uint64_t pending;   /* windows or timers waiting */
	bool idle;
};

/* A shard's answer to one ask: everything as of one moment of its loop. */
struct sl_obs_detail {
	sl_ts_t now;	 /* shard clock (wall ms) then */
	int nsplits;	 /* filled in split[] */
	int splits_more; /* splits beyond SL_OBS_MAX_SPLITS, not described */
	struct sl_split_obs split[SL_OBS_MAX_SPLITS];
	struct sl_stage_detail *stage; /* [nstages] */
	struct sl_chan_obs *chan;      /* channels of every exchange stage */
	struct sl_node_obs *node;      /* [nnodes] */
};

/* Time of one stage instance, counted by its shard. */
struct sl_stage_obs {
	uint64_t busy_ns;	 /* turns in which it consumed or polled something */
	uint64_t bp_ns;		 /* turns in which its outputs were full (backpressured) */
	uint64_t align_since_ns; /* first barrier of an alignment arrived; 0: none */
	uint64_t align_ns_last;	 /* how long the last alignment took */
	uint64_t align_ckpt;	 /* the checkpoint it belongs to */
};

struct sl_shard_obs {
	struct sl_stage_obs *stage;	   /* [nstages] */
	uint64_t run_ns;		   /* time the loop has run (monotonic), per turn */
	uint64_t t_start, t_mark;	   /* shard private: loop start, last clock read */
	alignas(64) _Atomic uint64_t ask;  /* observers: the newest ask */
	alignas(64) _Atomic uint64_t done; /* the shard: the newest ask answered */
	uint64_t seen;			   /* shard private: == done */
	bool has_final;			   /* the final detail was filled */
	struct sl_obs_detail detail[2];	   /* answer n is in detail[n & 1] */
	struct sl_obs_detail final;	   /* as the instances were at the end */
};

/* One checkpoint, as the coordinator saw it end. */
struct sl_ckpt_obs {
	uint64_t id;
	int rc; /* 0 completed, -errno failed */
	bool savepoint;
	int64_t end_ms;	      /* wall clock at its end */
	uint64_t duration_ms; /* barrier injected to complete */
	uint64_t align_us;    /* the longest alignment of any stage instance */
	uint64_t bytes;	      /* state files it wrote (native RocksDB files not counted) */
};

struct sl_run_obs {
	pthread_mutex_t lock;	   /* observers, around ask + read; never a shard */
	pthread_mutex_t hist_lock; /* the checkpoint history: coordinator and observers */
	int64_t start_ms;	   /* wall clock at the start of the run */
	uint64_t nckpt;		   /* checkpoints ended (history holds the last 16) */
	struct sl_ckpt_obs hist[SL_OBS_CKPT_HIST];
	uint64_t ckpt_bytes_total;
};

static inline int64_t sl_obs_wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static inline uint64_t sl_obs_clock_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Setup on the starting thread, before any shard runs / after all joined. 0 or -ENOMEM. */
int sl_run_obs_init(struct sl_runtime *rt);
void sl_run_obs_fini(struct sl_runtime *rt);

/* Shard thread, once a loop turn: answers an ask if there is a new one. */
void sl_shard_obs_poll(struct sl_shard *sh);
/* Shard thread, after sl_shard_obs_retract and before unwiring: the final detail. */
void sl_shard_obs_final(struct sl_shard *sh);

/* Observer (rt->obs->lock held): asks shard sh for a detail; returns the ask's number. */
uint64_t sl_shard_obs_ask(struct sl_shard *sh);
/* Observer (lock held): the detail answering ask n, or NULL while not answered. */
const struct sl_obs_detail *sl_shard_obs_answer(struct sl_shard *sh, uint64_t n);

/* Coordinator thread: checkpoint n ended with rc (0: completed) after started_ms. */
void sl_run_obs_ckpt(struct sl_runtime *rt, uint64_t n, int rc, bool savepoint, int64_t started_ms,
		     int64_t now_ms);

#endif
