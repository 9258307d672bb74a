/*
 * agg.h - aggregate kernels: one typed (accumulate, retract, merge, result, destroy) set per
 * (function, input type), looked up once at plan time and then called through the bound
 * aggregate on the per-record path. Shared by the window operator (add, merge), the updating
 * GROUP BY of ops/group_agg.c (add, retract) and, later, two-stage aggregation (DESIGN §5).
 *
 * Accumulators of built-in kernels are plain bytes whose all-zero state means "no input yet",
 * so a freshly inserted (zeroed) state entry needs no init call. User accumulators are
 * initialised through sl_agg_fn.init.
 *
 * Out-of-line accumulators: COUNT(DISTINCT) keeps a hash set, LISTAGG its values and
 * MIN/MAX/FIRST/LAST_VALUE of STRING keep the string, all in memory the accumulator points to
 * (allocated on the first value, grown on a new distinct value or a longer string, never per record
 * otherwise). Their kernels have `destroy`, which whoever drops such an accumulator must call
 * (window fired and purged, session merged away, scratch merges, operator close); a copy of one
 * must be made with init + merge (sl_agg_copy), never memcpy. Such accumulators live only in
 * memory of the shard that created them; updating GROUP BY keeps its variable-size data in
 * keyed map state instead (group_agg.c).
 *
 * Checkpoints: every kernel has serialize / deserialize (snapshot bytes, checkpoint/snap.h).
 * A deserialized accumulator owns fresh memory; FIRST/LAST_VALUE move the calling thread's
 * arrival counter past every restored arrival number, so values added after a restore (in a
 * new process, on another shard) still order after the restored ones.
 */
#ifndef SL_OPS_AGG_H
#define SL_OPS_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/job.h>

struct sl_agg_bound;
struct sl_snap_buf;
struct sl_snap_reader;

struct sl_agg_kernel {
	uint32_t acc_size; /* bytes of accumulator, 0: the user's acc_size */
	enum sl_type out;  /* result type, 0: the input type */
	/* Sets up an empty accumulator; NULL: all-zero bytes are the empty state. */
	void (*init)(const struct sl_agg_bound *a, void *acc);
	/* acc += the bound field of row (NULL inputs are skipped as SQL says). Hot path. */
	void (*add)(const struct sl_agg_bound *a, void *acc, const struct sl_row *row);
	/* acc -= row, for updating aggregates. NULL when the kernel cannot undo an input from
	 * its accumulator alone (MIN/MAX/FIRST/LAST_VALUE/COUNT DISTINCT: they need the
	 * multiset of inputs, which group_agg.c keeps in map state). */
	void (*retract)(const struct sl_agg_bound *a, void *acc, const struct sl_row *row);
	/* acc += other (slices of a hopping window, merged sessions); other is unchanged. */
	void (*merge)(const struct sl_agg_bound *a, void *acc, const void *other);
	/* Writes the result (NULL when no non-NULL input) into field `field` of b. */
	void (*result)(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
		       int field);
	/* Frees the accumulator's out-of-line memory and leaves it empty (all zero). NULL: the
	 * accumulator is plain bytes. */
	void (*destroy)(const struct sl_agg_bound *a, void *acc);
	/* Appends the accumulator to a checkpoint snapshot in a form that owns no pointer:
	 * plain accumulators as their bytes, COUNT(DISTINCT) as its values, strings as their
	 * bytes. Returns 0 or -ENOMEM. Shard thread, at a barrier. */
	int (*serialize)(const struct sl_agg_bound *a, const void *acc, struct sl_snap_buf *out);
	/* Reads one accumulator written by serialize into acc, which holds the empty state
	 * (all zero). Returns 0, -EINVAL (corrupt bytes: r->error set, or values no accumulator
	 * can hold) or -ENOMEM; on failure acc is still a valid accumulator for destroy. */
	int (*deserialize)(const struct sl_agg_bound *a, void *acc, struct sl_snap_reader *r);
};

/* One aggregate of an operator, bound to its input field and accumulator offset. */
struct sl_agg_bound {
	const struct sl_agg_kernel *k;
	enum sl_agg_kind kind;
	int field;		 /* input field, -1 for COUNT(*) */
	uint32_t off;		 /* byte offset of the accumulator in the operator's block */
	enum sl_type in_type;	 /* input column type (0 for COUNT(*) and USER) */
	enum sl_type out_type;	 /* output column type */
	int in_scale;		 /* DECIMAL input: scale */
	int out_prec, out_scale; /* DECIMAL output: precision <= 18 and scale; a TIMESTAMP
				  * output (MIN, MAX, ...): its input's fraction digits */
	struct sl_agg_fn user;	 /* SL_AGG_USER only */
	const char *sep;	 /* SL_AGG_LISTAGG: the separator (the spec's, borrowed) */
	uint32_t sep_len;
	bool newest_first; /* SL_AGG_LISTAGG: merge puts the other's values before ours (the
			    * slices of a HOP window, merged oldest first, as Flink orders them) */
	/* SUM(DISTINCT) / AVG(DISTINCT): the plain SUM or AVG kernel of the input type. k then
	 * keeps COUNT(DISTINCT)'s set of values and folds `inner` over it at result time;
	 * group_agg.c instead feeds `inner` a value when its count goes 0 -> 1 or 1 -> 0.
	 * NULL for every other aggregate. */
	const struct sl_agg_kernel *inner;
};

/* Returns the kernel for `kind` over an input of type `in` (ignored for COUNT(*) and USER),
 * or NULL when the combination is not supported (e.g. SUM over STRING). `sql_types` selects
 * Flink SQL's result type where the C API differs (SUM(INT) is INT, not BIGINT). */
const struct sl_agg_kernel *sl_agg_kernel_find(enum sl_agg_kind kind, enum sl_type in,
					       bool sql_types);

/*
 * Binds a built-in aggregate spec (not SL_AGG_USER) to input schema `in`: kernel, field,
 * input and output types, DECIMAL precision and scale. Leaves b->off alone. Returns 0, or
 * -EINVAL with a one-line reason in err (errcap bytes) naming the aggregate and the field.
 * Plan time.
 */
int sl_agg_bind(struct sl_agg_bound *b, const struct sl_agg_spec *spec, const struct sl_schema *in,
		char *err, size_t errcap);

/* Copies accumulator src into dst (dst holds no live accumulator): memcpy for plain kernels,
 * init + merge for out-of-line ones, so the two never share memory. */
void sl_agg_copy(const struct sl_agg_bound *a, void *dst, const void *src);

/* The bound aggregate's accumulator size (the kernel's, or the user's acc_size). */
uint32_t sl_agg_acc_size(const struct sl_agg_bound *a);
/* Appends a's output column to s as `name` (type, DECIMAL precision and scale, TIMESTAMP
 * fraction digits). Returns the field or -EINVAL / -ENOMEM. */
int sl_agg_schema_add(struct sl_schema *s, const char *name, const struct sl_agg_bound *a);

/*
 * Set by an out-of-line kernel on the calling thread when an allocation failed and the
 * input was not counted (the accumulator stays valid). Operators with out-of-line kernels
 * test and clear it after accumulating and fail the job: an aggregate never silently drops
 * a value.
 */
extern _Thread_local bool sl_agg_nomem;

/* SUM/AVG(DISTINCT)'s kernel: COUNT(DISTINCT)'s set of values, `inner` folded over it at
 * result time (agg.c); inner accumulators are plain bytes of at most SL_AGG_INNER_ACC_MAX. */
#define SL_AGG_INNER_ACC_MAX 64
extern const struct sl_agg_kernel sl_agg_distinct_fold;

/* Printable name of an aggregate kind ("SUM"), for error messages. */
const char *sl_agg_kind_name(enum sl_agg_kind kind);

#endif
