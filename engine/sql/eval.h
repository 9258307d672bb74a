/*
 * eval.h - SQL expressions compiled at plan time into programs that run on rows without
 * allocating: type checking, implicit casts, function resolution and constant folding happen
 * once in sl_prog_compile(); evaluation walks a flat array of typed instructions over a
 * register file, with string results in caller-provided scratch memory.
 *
 * Ownership: a compiled program is immutable and shared read-only by every shard; each shard
 * (operator instance) brings its own struct sl_eval_ctx. The expression tree and the scope
 * are borrowed only during compilation.
 */
#ifndef SL_SQL_EVAL_H
#define SL_SQL_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/types.h>

#include "expr.h"

/* The static type of a value: a column type, DECIMAL precision/scale, and whether it may be
 * NULL. INTERVAL values (INTERVAL '5' SECOND, ts1 - ts2 is not supported) have
 * type SL_TYPE_BIGINT with interval = true and hold milliseconds. The NULL literal has
 * null_type = true until context gives it a type. */
struct sl_sql_type {
	enum sl_type type;
	int prec, scale; /* DECIMAL */
	bool nullable;
	bool interval;
	bool null_type;
};

/*
 * What a column is of the window a window TVF or a window aggregation put its row in, as
 * Flink's window properties: window_start, window_end, window_time, and the TVF's own time
 * column (still a time attribute in Flink, though the stream's event time is window_time).
 */
enum sl_sql_win_prop {
	SL_SQL_WIN_NONE = 0,
	SL_SQL_WIN_START,
	SL_SQL_WIN_END,
	SL_SQL_WIN_TIME,
	SL_SQL_WIN_TIMECOL,
};

struct sl_window_spec;

/*
 * A column an expression may name. `qual` is the table name or alias it can be qualified
 * with (NULL: none); `name` is the column name, with nested ROW fields flattened into
 * dot-joined names ("payload.after.id"), so `payload.after.id` and `o.payload.after.id`
 * resolve to a leaf. `field` is the index of the input row's field that holds it.
 *
 * `match`, when set, makes the column stand for an expression instead of a name: any
 * subtree structurally equal to `match` (same printed form, function names compared without
 * case) compiles to this column. The planner uses it for aggregates (`AVG(x)` over the
 * aggregate's output field), group keys and window properties (TUMBLE_START(ts, ...)).
 * Names of `match` columns are not visible to plain column references unless `name` is set.
 */
struct sl_sql_col {
	const char *qual;
	const char *name;
	struct sl_sql_type type;
	int field;
	const struct sl_expr *match;
	bool rowtime;  /* the column is an event-time attribute (for the planner) */
	bool proctime; /* PROCTIME() attribute */
	/* For the planner: what the column is of a window (window Top-N, deduplication and
	 * joins need a window's bounds), and that window, owned by the plan (NULL: none). */
	enum sl_sql_win_prop win_prop;
	const struct sl_window_spec *win;
};

struct sl_scope {
	const struct sl_sql_col *cols;
	int ncols;
};

struct sl_udf;

/* A function of CREATE FUNCTION ... LANGUAGE C: its SQL name, the library's descriptor
 * (sluice/udf.h) and 'path:symbol' for messages; all borrowed from the planner. */
struct sl_sql_udf {
	const char *name;
	const struct sl_udf *d;
	const char *target;
};

/* Settings that change what expressions mean. */
struct sl_sql_env {
	int64_t local_tz_offset_ms;    /* table.local-time-zone as a fixed offset; 0 = UTC */
	const char *file;	       /* job file name for messages (may be NULL) */
	const struct sl_sql_udf *udfs; /* the file's C functions so far, looked up after the
					* built-in ones */
	int nudfs;
};

/* Whether `name` is a built-in function (or aggregate or window function), any case. */
bool sl_sql_is_builtin_function(const char *name);

struct sl_prog;

/*
 * Compiles `e` against `sc`. On success returns the program and its result type in *type.
 * On failure returns NULL with "FILE:LINE:COL: what is wrong" in err: unknown column or
 * function (with the closest known name when there is one), ambiguous column, wrong argument
 * count or types, aggregate or window function where none is allowed. Never crashes on any
 * tree sl_expr_parse() can produce.
 */
struct sl_prog *sl_prog_compile(const struct sl_expr *e, const struct sl_scope *sc,
				const struct sl_sql_env *env, struct sl_sql_type *type, char *err,
				size_t errcap);
void sl_prog_destroy(struct sl_prog *p);

/* True when the program reads no column and calls nothing time-dependent (PROCTIME()). */
bool sl_prog_is_const(const struct sl_prog *p);
/* Whether p reads the processing time or the watermark of its struct sl_eval_ctx (NOW(),
 * CURRENT_WATERMARK...): a caller whose programs do not may leave them unset. */
bool sl_prog_reads_clock(const struct sl_prog *p);

/* Per-shard evaluation state: scratch for intermediate strings, processing time. */
struct sl_eval_ctx {
	char *scratch;	       /* caller memory, reused for every evaluation */
	uint32_t scratch_cap;  /* SL_EVAL_SCRATCH bytes is plenty for sane rows */
	uint32_t scratch_used; /* reset by every top-level eval call */
	int64_t proctime_ms;   /* PROCTIME(), CURRENT_TIMESTAMP */
	/* CURRENT_WATERMARK(): the evaluating operator's watermark, when it has one (the
	 * operators that evaluate SQL set it, a zeroed context has none: NULL) */
	int64_t watermark;
	bool has_watermark;
	uint64_t errors;    /* evaluations that failed at run time (string too long for
			     * scratch, invalid CAST text in a non-TRY cast): counted, result
			     * NULL */
	uint64_t overflows; /* of which DECIMAL results beyond their precision (also
			     * inside a TRY_CAST's operand, not the TRY_CAST itself) */
};
#define SL_EVAL_SCRATCH 65536

/* A value produced by a program. Strings point into the input row or into ctx scratch and
 * stay valid until the next eval call with the same ctx. */
struct sl_val {
	bool null;
	union {
		int64_t i; /* BOOL (0/1), INT, BIGINT, DECIMAL unscaled, TIMESTAMP*, DATE,
			    * INTERVAL */
		double f;  /* FLOAT, DOUBLE */
		struct {
			const char *p;
			uint32_t len;
		} s;
	};
};

/* Evaluates p over `in`. Hot path: no allocation, no syscalls. */
void sl_prog_eval(const struct sl_prog *p, const struct sl_row *in, struct sl_eval_ctx *ec,
		  struct sl_val *out);
/* Evaluates a predicate: true only when the result is TRUE (NULL is false, as in WHERE). */
bool sl_prog_eval_pred(const struct sl_prog *p, const struct sl_row *in, struct sl_eval_ctx *ec);
/*
 * Evaluates p and stores the result into field `field` of `out`, converted to `to` (the
 * field's declared type: implicit widening as SQL allows, DECIMAL rescaled HALF_UP; a value
 * that does not fit becomes NULL and counts in ec->errors).
 */
void sl_prog_eval_into(const struct sl_prog *p, const struct sl_row *in, struct sl_eval_ctx *ec,
		       const struct sl_sql_type *to, struct sl_row_builder *out, int field);

/* The type both a and b convert to, as CASE, COALESCE and VALUES columns take it (numbers
 * widen, DECIMALs to one holding both, the larger TIMESTAMP precision). False when none. */
bool sl_sql_type_common(const struct sl_sql_type *a, const struct sl_sql_type *b,
			struct sl_sql_type *out);

/* Writes the SQL spelling of a type ("DECIMAL(10, 2)", "TIMESTAMP(3)") for messages. */
int sl_sql_type_name(const struct sl_sql_type *t, char *buf, size_t cap);

#endif
