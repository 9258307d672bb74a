/*
 * eval_kern.h - kernels: the shapes most WHERE clauses and projections compile to, run
 * without the interpreter (eval_kern.c picks them; the runner is inline here because it is
 * the whole per-row cost of such a program). Never included outside engine/sql.
 *
 *   KERN_CONJ     c1 AND c2 AND ... (up to SL_KERN_MAX_LEAVES), each ci a comparison of a
 *                 column with a constant: INT/BIGINT/BOOL/DATE/TIMESTAMP, DOUBLE/FLOAT or
 *                 STRING (<, <=, =, <>, >=, >). A single comparison is a CONJ of one.
 *   KERN_ARITH_F  a DOUBLE column plus, minus, times or divided by a constant (either side).
 *
 * A kernel gives the register the program would leave as its result, NULL semantics
 * included (SQL's three-valued AND: FALSE if any comparison is FALSE, else NULL if any
 * operand is NULL, else TRUE), so the code after it (conversions, NULL handling) is the
 * interpreter's. Cost: a few instructions a comparison, against ~40 an instruction for the
 * interpreter's dispatch, register file and constant copies.
 */
#ifndef SL_SQL_EVAL_KERN_H
#define SL_SQL_EVAL_KERN_H

#include <string.h>

#include "eval_int.h"

#define SL_KERN_MAX_LEAVES 8

enum kern_kind { KERN_NONE = 0, KERN_CONJ, KERN_ARITH_F };

/* One comparison of a column with a constant; the mask is the instruction's sub (bit 0: <,
 * bit 1: =, bit 2: > is TRUE), turned round when the constant was on the left. */
struct kern_leaf {
	uint16_t op; /* OP_CMP_I, OP_CMP_F or OP_CMP_S */
	uint8_t mask;
	int16_t col;
	union {
		int64_t i;
		double f;
		struct {
			const char *p; /* borrowed from the program's constants */
			uint32_t len;
		} s;
	} k;
};

struct kern {
	uint8_t kind; /* enum kern_kind */
	uint8_t n;    /* CONJ: leaves */
	uint16_t aop; /* ARITH_F: OP_ADD_F64, OP_SUB_F64, OP_MUL_F64 or OP_DIV_F64 */
	bool k_left;  /* ARITH_F: the constant is the left operand */
	int16_t col;  /* ARITH_F */
	double kf;    /* ARITH_F */
	struct kern_leaf leaf[SL_KERN_MAX_LEAVES];
};

struct sl_prog;
/* Looks at a finished program (constants packed) and fills p->kern when its code is one of
 * the shapes above; otherwise leaves it KERN_NONE. Plan time. */
void sl_eval_kern_pick_(struct sl_prog *p);

static inline int kern_cmp_str(const char *a, uint32_t an, const char *b, uint32_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	if (c)
		return c < 0 ? -1 : 1;
	return (an > bn) - (an < bn);
}

/* Whether leaf l is TRUE of a non-NULL column value. Hot path. */
static inline bool kern_leaf(const struct kern_leaf *l, const struct sl_row *row)
{
	uint64_t v = row->slot[l->col];
	int c;

	switch (l->op) {
	case OP_CMP_I:
		c = ((int64_t)v > l->k.i) - ((int64_t)v < l->k.i);
		break;
	case OP_CMP_F: {
		double f;

		memcpy(&f, &v, 8);
		c = (f > l->k.f) - (f < l->k.f); /* NaN compares 0, as the interpreter's */
		break;
	}
	default: {
		const char *s = (const char *)row + (v >> 32);
		uint32_t n = (uint32_t)(v & 0xffffffffu);

		if (l->mask == 2 || l->mask == 5) /* = and <>: equality alone decides */
			c = n == l->k.s.len && !memcmp(s, l->k.s.p, n) ? 0 : 1;
		else
			c = kern_cmp_str(s, n, l->k.s.p, l->k.s.len);
		break;
	}
	}
	return (l->mask >> (c + 1)) & 1;
}

/* The program's result register for row. Hot path. */
static inline void sl_eval_kern_run_(const struct kern *k, const struct sl_row *row, struct reg *r)
{
	bool null = false;

	if (k->kind == KERN_ARITH_F) {
		double x, a, b;

		if ((row->nulls >> k->col) & 1) {
			r->null = true;
			return;
		}
		memcpy(&x, &row->slot[k->col], 8);
		a = k->k_left ? k->kf : x;
		b = k->k_left ? x : k->kf;
		r->null = false;
		switch (k->aop) {
		case OP_ADD_F64:
			r->f = a + b;
			break;
		case OP_SUB_F64:
			r->f = a - b;
			break;
		case OP_MUL_F64:
			r->f = a * b;
			break;
		default:
			r->f = a / b;
			break;
		}
		return;
	}
	for (int j = 0; j < k->n; j++) {
		const struct kern_leaf *l = &k->leaf[j];

		if ((row->nulls >> l->col) & 1) {
			null = true;
			continue;
		}
		if (!kern_leaf(l, row)) {
			r->null = false;
			r->i = 0;
			return;
		}
	}
	r->null = null;
	r->i = !null;
}

#endif
