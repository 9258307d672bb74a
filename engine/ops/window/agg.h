/*
 * agg.h - aggregate kernels: one typed (accumulate, merge, result) triple per (function,
 * input type), looked up once at plan time and then called through the bound aggregate on the
 * per-record path. Shared by the window operator and, later, updating GROUP BY and two-stage
 * aggregation (DESIGN §5), which is why retract has a place in the table.
 *
 * Accumulators of built-in kernels are plain bytes whose all-zero state means "no input yet",
 * so a freshly inserted (zeroed) state entry needs no init call. User accumulators are
 * initialised through sl_agg_fn.init.
 */
#ifndef SL_OPS_WINDOW_AGG_H
#define SL_OPS_WINDOW_AGG_H

#include <stdint.h>

#include <sluice/job.h>

struct sl_agg_bound;

struct sl_agg_kernel {
	uint32_t acc_size;  /* bytes of accumulator, 0: the user's acc_size */
	enum sl_type out;   /* result type, 0: the input type */
	/* Sets up an empty accumulator; NULL: all-zero bytes are the empty state. */
	void (*init)(const struct sl_agg_bound *a, void *acc);
	/* acc += the bound field of row (NULL inputs are skipped as SQL says). Hot path. */
	void (*add)(const struct sl_agg_bound *a, void *acc, const struct sl_row *row);
	/* Reserved for updating aggregations: acc -= row. NULL while unsupported. */
	void (*retract)(const struct sl_agg_bound *a, void *acc, const struct sl_row *row);
	/* acc += other (slices of a hopping window, merged sessions). */
	void (*merge)(const struct sl_agg_bound *a, void *acc, const void *other);
	/* Writes the result (NULL when no non-NULL input) into field `field` of b. */
	void (*result)(const struct sl_agg_bound *a, const void *acc, struct sl_row_builder *b,
		       int field);
};

/* One aggregate of an operator, bound to its input field and accumulator offset. */
struct sl_agg_bound {
	const struct sl_agg_kernel *k;
	int field;                /* input field, -1 for COUNT(*) */
	uint32_t off;             /* byte offset of the accumulator in the operator's block */
	enum sl_type out_type;    /* output column type */
	struct sl_agg_fn user;    /* SL_AGG_USER only */
};

/* Returns the kernel for `kind` over an input of type `in` (ignored for COUNT(*) and USER),
 * or NULL when the combination is not supported (e.g. SUM over STRING). */
const struct sl_agg_kernel *sl_agg_kernel_find(enum sl_agg_kind kind, enum sl_type in);

/* Printable name of an aggregate kind ("SUM"), for error messages. */
const char *sl_agg_kind_name(enum sl_agg_kind kind);

#endif
