/*
 * graph.h - the logical job graph the public builder API creates (one node per stream), and
 * the plan that cuts it into stages.
 *
 * The job owns every node. Nodes are immutable once sl_job_run() starts; the plan derived
 * from them is shared read-only by all shards.
 */
#ifndef SL_RUNTIME_GRAPH_H
#define SL_RUNTIME_GRAPH_H

#include <stdatomic.h>

#include "op.h"

enum sl_node_kind {
	SL_NODE_SOURCE = 1,
	SL_NODE_FILTER,
	SL_NODE_MAP,
	SL_NODE_PROJECT,
	SL_NODE_FLATMAP,
	SL_NODE_KEYBY,
	SL_NODE_KEYED, /* a keyed operator: its table and config come with the node */
	SL_NODE_SIDE,
	SL_NODE_SINK,
};

struct sl_stream {
	struct sl_job *job;
	enum sl_node_kind kind;
	int id;
	char *name;
	/* the operator's id for its state in checkpoints (sl_stream_uid; NULL: its name),
	 * owned */
	char *uid;
	struct sl_stream *in;	  /* upstream node, NULL for sources */
	struct sl_schema *schema; /* output schema (owned) */
	int stage;		  /* assigned by the planner */
	/* KEYBY of a keyed union: the first input's node heads the stage and has nlanes > 1;
	 * every other input has its own KEYBY node with merge_into = the head and lane = its
	 * input index. Their exchange-outs write the head stage's rings of that lane. */
	struct sl_stream *merge_into;
	int lane;
	int nlanes;

	/* kind-specific */
	const struct sl_source_ops *src_ops;
	const struct sl_sink_ops *sink_ops;
	const void *cfg;	  /* connector config (borrowed) */
	struct sl_wm_strategy wm; /* source */
	void *fn;		  /* filter/map/flat_map function */
	void *arg;
	int fields[SL_SCHEMA_MAX_FIELDS]; /* project fields / key fields */
	int nfields;
	int side_tag; /* SIDE */
	/* KEYED: the operator's table and its plan-time config, owned by the node and freed
	 * with cfg_free. The runtime knows operators only through these. */
	const struct sl_op_ops *ops;
	void *op_cfg;
	void (*cfg_free)(void *cfg);

	/* operator definitions built by the planner */
	struct sl_op_def def;  /* this node's operator */
	struct sl_op_def xdef; /* KEYBY: the sender side (exchange-out) */
};

struct sl_stage {
	int id;
	struct sl_stream *input;  /* a SOURCE or a KEYBY node */
	struct sl_stream **lanes; /* KEYBY stages: the KEYBY node of each input lane */
	int nlanes;		  /* 1 but for a keyed union */
};

struct sl_runtime;

struct sl_job {
	char *name;
	struct sl_stream **node;
	int nnodes;
	int cap;
	struct sl_error err;
	struct sl_stage *stage;
	int nstages;
	_Atomic bool stop;     /* sl_job_stop(): any thread */
	struct sl_runtime *rt; /* the last run, kept for stats until destroy */
	/* the run observers may read (runtime/observe.c), and how many are reading it */
	struct sl_runtime *_Atomic obs_rt;
	_Atomic unsigned obs_readers;
};

/*
 * Adds a keyed operator after `keyed` (a key_by stream): `ops` runs on every shard with
 * `cfg` as its def's cfg; the node owns cfg and frees it with cfg_free (may be NULL) when the
 * job is destroyed, also when this call fails. `out` is copied. This is how the operators
 * below the runtime (windows, process functions) join a graph without the graph knowing
 * them. Returns the node, or NULL with the job's error set.
 */
struct sl_stream *sl_stream_keyed_op(struct sl_stream *keyed, const char *name,
				     const struct sl_op_ops *ops, void *cfg,
				     void (*cfg_free)(void *cfg), const struct sl_schema *out);

/* True when `keyed` can feed a keyed operator (a key_by stream of a job without errors);
 * else false with the job's error set, naming `what`. */
bool sl_stream_check_keyed(struct sl_stream *keyed, const char *what);

/* True when the node's operator keeps keyed state (gets a RocksDB of its own there). */
static inline bool sl_node_keeps_keyed_state(const struct sl_stream *n)
{
	return n->kind == SL_NODE_KEYED && n->ops->keyed_state;
}

/* What kind of operator the node is, as job ids and messages say it ("source", "window"). */
const char *sl_node_kind_name(const struct sl_stream *s);
/* "<kind>:<uid>" of node i of job, with "#<k>" after the uid for the k-th node of the same
 * kind and uid (k >= 2): how checkpoints name it (op_match.h), unique within the job. */
void sl_node_uid_token(const struct sl_job *job, int i, char *out, size_t cap);

/* True when `uid` is a valid operator id (sl_stream_uid): 1-128 of [A-Za-z0-9_.-/ ]. */
bool sl_uid_valid(const char *uid);

/* Builds op definitions and stages. Returns 0 or -EINVAL with job->err set. */
int sl_plan_build(struct sl_job *job);

/* Identity operators with a role: the source root, a side-output tap, the receiving side of
 * a keyed exchange (sets the current key of its targets). */
extern const struct sl_op_ops sl_source_root_ops;
extern const struct sl_op_ops sl_side_ops;
extern const struct sl_op_ops sl_keyby_in_ops;
extern const struct sl_op_ops sl_exchange_out_ops;
extern const struct sl_op_ops sl_filter_ops;
extern const struct sl_op_ops sl_map_ops;
extern const struct sl_op_ops sl_project_ops;
extern const struct sl_op_ops sl_flat_map_ops;
extern const struct sl_op_ops sl_sink_ops_adapter;

/* Flushes a sink instance if it wrote rows since its last flush (shard idle). */
void sl_sink_flush(struct sl_ctx *ctx);

void sl_job_set_error(struct sl_job *job, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
