/*
 * calc.h - the SQL calc operator (WHERE + projection of compiled expressions in one pass).
 *
 * Ownership: a calc owns the programs set into it; the job borrows the calc as the flat_map's
 * argument, so free it (sl_calc_destroy) only after the job is destroyed.
 */
#ifndef SL_SQL_CALC_H
#define SL_SQL_CALC_H

#include <stdint.h>

#include <sluice/job.h>

#include "eval.h"

struct sl_calc;

/* A calc with nout output columns (-1: a filter that passes rows through unchanged) for a
 * job running on nshards shards. NULL on ENOMEM. */
struct sl_calc *sl_calc_create(int nout, int nshards);
void sl_calc_destroy(void *c);
void sl_calc_set_pred(struct sl_calc *c, struct sl_prog *pred);
/* Output column i is p's value converted to t. */
void sl_calc_set_out(struct sl_calc *c, int i, struct sl_prog *p, const struct sl_sql_type *t);
/* Output column i is input field `field` copied as is (a plain column reference of the
 * same type; the program set for it stays for EXPLAIN and is not run). */
void sl_calc_set_copy(struct sl_calc *c, int i, int field);
/* Output column i is the record's event time (the rowtime the source computed with the same
 * expression). */
void sl_calc_set_ts(struct sl_calc *c, int i);
/* Rows whose evaluation failed (counted, never emitted as garbage). */
uint64_t sl_calc_errors(const struct sl_calc *c);
/* Adds the calc after `in` with output schema `out` (ignored for a filter: pass in's). */
struct sl_stream *sl_calc_stream(struct sl_stream *in, const char *name, struct sl_calc *c,
				 const struct sl_schema *out);

#endif
