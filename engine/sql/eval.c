/*
 * eval.c - compiles Flink SQL expression trees (expr.h) into flat programs (eval_int.h)
 * over a register file, and the entry points that run them (see eval.h).
 *
 * Compilation is one recursive pass. Each node first tries the scope's `match` columns
 * (aggregates, group keys, window properties the planner computed elsewhere), then compiles
 * to instructions that write one fresh register. Implicit casts become CVT instructions.
 * A subtree that reads no column and nothing time-dependent is run at once by the same
 * interpreter and replaced by a constant register (constant folding), unless running it
 * failed: then the code stays, so the failure is counted per record as it would be in Flink.
 * Branches (CASE, COALESCE, AND/OR short cuts) are jumps, so a guarded division
 * (CASE WHEN b <> 0 THEN a / b END) never counts an error.
 *
 * Invariants: temporaries are numbered in allocation order and a subtree only writes
 * temporaries it allocated, so folding a subtree can release them; constants are numbered
 * -1, -2, ... and compacted into one block at the end; DECIMAL values are 128-bit with
 * Flink's own result types inside a program and narrowed to DECIMAL(18, s) at the result.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval_cc.h"

/* Registers per program (constants + temporaries): the register file is a stack array of
 * this many 32-byte registers at most. Far above any hand-written expression. */
#define MAX_REGS 1024

/* ---- errors --------------------------------------------------------------------------- */

bool sl_compiler_fail(struct compiler *c, const struct sl_expr *e, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->failed)
		return false;
	c->failed = true;
	if (!c->errcap)
		return false;
	if (c->env && c->env->file)
		n = snprintf(c->err, c->errcap, "%s:%u:%u: ", c->env->file, e->line, e->col);
	else
		n = snprintf(c->err, c->errcap, "%u:%u: ", e->line, e->col);
	if (n >= 0 && (size_t)n < c->errcap) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errcap - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return false;
}

bool sl_compiler_nomem(struct compiler *c)
{
	if (!c->failed) {
		c->failed = true;
		if (c->errcap)
			snprintf(c->err, c->errcap, "out of memory");
	}
	return false;
}

/* ---- types ---------------------------------------------------------------------------- */

/* INT < BIGINT < DECIMAL < FLOAT < DOUBLE, as Flink widens. */
static int rank(const struct sl_sql_type *t)
{
	switch (t->type) {
	case SL_TYPE_INT:
		return 1;
	case SL_TYPE_BIGINT:
		return 2;
	case SL_TYPE_DECIMAL:
		return 3;
	case SL_TYPE_FLOAT:
		return 4;
	case SL_TYPE_DOUBLE:
		return 5;
	default:
		return 0;
	}
}

/* The DECIMAL that holds both (Flink's LogicalTypeMerging for CASE, IN, COALESCE). */
static struct sl_dec_type dec_union(struct sl_dec_type a, struct sl_dec_type b)
{
	int s = a.scale > b.scale ? a.scale : b.scale;
	int ia = a.prec - a.scale, ib = b.prec - b.scale;
	int p = (ia > ib ? ia : ib) + s;

	if (p > SL_DEC_MAX_PRECISION)
		p = SL_DEC_MAX_PRECISION;
	if (s > p)
		s = p;
	return (struct sl_dec_type){ (uint8_t)p, (uint8_t)s };
}

int sl_sql_type_name(const struct sl_sql_type *t, char *buf, size_t cap)
{
	if (t->null_type)
		return snprintf(buf, cap, "NULL");
	if (t->interval)
		return snprintf(buf, cap, "INTERVAL");
	switch (t->type) {
	case SL_TYPE_BOOL:
		return snprintf(buf, cap, "BOOLEAN");
	case SL_TYPE_INT:
		return snprintf(buf, cap, "INT");
	case SL_TYPE_BIGINT:
		return snprintf(buf, cap, "BIGINT");
	case SL_TYPE_FLOAT:
		return snprintf(buf, cap, "FLOAT");
	case SL_TYPE_DOUBLE:
		return snprintf(buf, cap, "DOUBLE");
	case SL_TYPE_DECIMAL:
		return snprintf(buf, cap, "DECIMAL(%d, %d)", t->prec, t->scale);
	case SL_TYPE_STRING:
		return snprintf(buf, cap, "STRING");
	case SL_TYPE_TIMESTAMP:
		return snprintf(buf, cap, "TIMESTAMP(%d)", t->prec);
	case SL_TYPE_TIMESTAMP_LTZ:
		return snprintf(buf, cap, "TIMESTAMP_LTZ(%d)", t->prec);
	case SL_TYPE_DATE:
		return snprintf(buf, cap, "DATE");
	}
	return snprintf(buf, cap, "?");
}

/* A type name for messages; two buffers so one message can name two types. */
const char *sl_compiler_type_name(const struct sl_sql_type *t, int which)
{
	static _Thread_local char buf[2][40];

	sl_sql_type_name(t, buf[which & 1], sizeof buf[0]);
	return buf[which & 1];
}

/* ---- program building ----------------------------------------------------------------- */

bool sl_compiler_own(struct compiler *c, void *ptr)
{
	struct sl_prog *p = c->p;

	if (!ptr)
		return sl_compiler_nomem(c);
	if (p->nowned == p->capowned) {
		int cap = p->capowned ? p->capowned * 2 : 8;
		void **a = realloc(p->owned, (size_t)cap * sizeof(*a));

		if (!a) {
			free(ptr);
			return sl_compiler_nomem(c);
		}
		p->owned = a;
		p->capowned = cap;
	}
	p->owned[p->nowned++] = ptr;
	return true;
}

bool sl_compiler_own_regex(struct compiler *c, struct sl_regex *re)
{
	struct sl_prog *p = c->p;

	if (p->nregex == p->capregex) {
		int cap = p->capregex ? p->capregex * 2 : 4;
		struct sl_regex **a = realloc(p->regex, (size_t)cap * sizeof(*a));

		if (!a) {
			sl_eval_regex_free_(re);
			return sl_compiler_nomem(c);
		}
		p->regex = a;
		p->capregex = cap;
	}
	p->regex[p->nregex++] = re;
	return true;
}

static struct insn *emit(struct compiler *c, enum op op, int32_t dst, int32_t a, int32_t b)
{
	struct sl_prog *p = c->p;
	struct insn *in;

	if (p->ncode == p->capcode) {
		int cap = p->capcode ? p->capcode * 2 : 32;
		struct insn *n = realloc(p->code, (size_t)cap * sizeof(*n));

		if (!n) {
			sl_compiler_nomem(c);
			return NULL;
		}
		p->code = n;
		p->capcode = cap;
	}
	in = &p->code[p->ncode++];
	memset(in, 0, sizeof(*in));
	in->op = (uint16_t)op;
	in->dst = dst;
	in->a = a;
	in->b = b;
	in->c = NOREG;
	return in;
}

static int32_t newtemp(struct compiler *c, const struct sl_expr *e)
{
	if (c->ntemps + c->ncv >= MAX_REGS) {
		sl_compiler_fail(c, e, "expression too large (more than %d values)", MAX_REGS);
		return 0;
	}
	if (c->ntemps + 1 > c->maxtemps)
		c->maxtemps = c->ntemps + 1;
	return c->ntemps++;
}

/* Adds a constant; string bytes are copied into the program. */
static int32_t newconst(struct compiler *c, const struct reg *v, bool is_string)
{
	struct reg r = *v;

	if (c->ncv == c->capcv) {
		int cap = c->capcv ? c->capcv * 2 : 16;
		struct reg *a = realloc(c->cv, (size_t)cap * sizeof(*a));

		if (!a) {
			sl_compiler_nomem(c);
			return -1;
		}
		c->cv = a;
		c->capcv = cap;
	}
	if (is_string && !r.null) {
		char *s = malloc(r.s.len + 1);

		if (!sl_compiler_own(c, s))
			return -1;
		memcpy(s, r.s.p, r.s.len);
		s[r.s.len] = 0;
		r.s.p = s;
	}
	c->cv[c->ncv++] = r;
	return -1 - (c->ncv - 1);
}

static bool const_null(struct compiler *c, struct sl_sql_type t, struct opnd *o)
{
	struct reg v = { .null = true };

	o->t = t;
	o->t.nullable = true;
	o->cst = true;
	o->r = newconst(c, &v, false);
	return !c->failed;
}

/*
 * Runs code[start..) now and replaces it by a constant, when the code reads no column and
 * no clock (c->nonconst unchanged since nc0) and did not fail.
 */
static void fold(struct compiler *c, int start, int t0, int nc0, struct opnd *o)
{
	struct sl_prog *p = c->p;
	struct sl_eval_ctx ec = { .scratch = c->scratch, .scratch_cap = SL_EVAL_SCRATCH };
	struct reg *file, v;
	int n = c->ncv + c->ntemps;

	if (c->failed || c->nonconst != nc0 || p->ncode == start || o->cst)
		return;
	file = calloc((size_t)n + 1, sizeof(*file));
	if (!file) {
		sl_compiler_nomem(c);
		return;
	}
	for (int k = 0; k < c->ncv; k++)
		file[c->ncv - 1 - k] = c->cv[k];
	sl_eval_run_(p->code, start, p->ncode, p->lists, file + c->ncv, NULL, &ec);
	v = file[c->ncv + o->r];
	free(file);
	if (ec.errors)
		return; /* keep the code: each record counts the failure, as Flink fails */
	p->ncode = start;
	c->ntemps = t0;
	o->r = newconst(c, &v, o->t.type == SL_TYPE_STRING);
	o->cst = true;
	o->t.nullable = v.null;
}

/* Converts o to type `to` (an implicit or explicit cast); try = no error count. */
bool sl_compiler_conv_ex(struct compiler *c, const struct sl_expr *e, struct opnd *o,
			 const struct sl_sql_type *to, uint32_t maxlen, bool try)
{
	struct vty from = vty_of(&o->t), tv = vty_of(to);
	int start = c->p->ncode, t0 = c->ntemps, nc0 = c->nonconst;
	bool was_const = o->cst; /* the input sits outside [start..): fold only constants */
	struct insn *in;
	int32_t d;

	tv.maxlen = maxlen;
	if (o->t.null_type) {
		bool n = o->t.nullable;

		o->t = *to;
		o->t.nullable = n;
		return true;
	}
	if (from.t == tv.t && from.prec == tv.prec && from.scale == tv.scale && !maxlen) {
		o->t.interval = to->interval;
		return true;
	}
	d = newtemp(c, e);
	in = emit(c, OP_CVT, d, o->r, NOREG);
	if (!in)
		return false;
	in->x.cvt.from = from;
	in->x.cvt.to = tv;
	in->imm2 = c->p->tz;
	in->flag = try;
	{
		bool n = o->t.nullable;

		o->t = *to;
		o->t.nullable = n;
	}
	o->r = d;
	o->cst = false;
	if (was_const)
		fold(c, start, t0, nc0, o);
	return !c->failed;
}

bool sl_compiler_conv(struct compiler *c, const struct sl_expr *e, struct opnd *o,
		      const struct sl_sql_type *to)
{
	return sl_compiler_conv_ex(c, e, o, to, 0, false);
}

bool sl_compiler_conv_t(struct compiler *c, const struct sl_expr *e, struct opnd *o, enum sl_type t)
{
	struct sl_sql_type to = mk(t, o->t.nullable);

	return sl_compiler_conv(c, e, o, &to);
}

struct insn *sl_compiler_emit(struct compiler *c, enum op op, int32_t dst, int32_t a, int32_t b)
{
	return emit(c, op, dst, a, b);
}

int32_t sl_compiler_newtemp(struct compiler *c, const struct sl_expr *e)
{
	return newtemp(c, e);
}

/* ---- the compiler --------------------------------------------------------------------- */

static bool compile(struct compiler *c, const struct sl_expr *e, struct opnd *o);

/* An argument of one type class: STRING, BOOLEAN; NULL literals take the type. */
bool sl_compiler_want(struct compiler *c, const struct sl_expr *e, struct opnd *o, enum sl_type t,
		      const char *what)
{
	if (o->t.null_type)
		return sl_compiler_conv_t(c, e, o, t);
	if (o->t.type != t || o->t.interval) {
		struct sl_sql_type wt = mk(t, false);

		return sl_compiler_fail(c, e, "%s expects %s, got %s", what,
					sl_compiler_type_name(&wt, 0),
					sl_compiler_type_name(&o->t, 1));
	}
	return true;
}

bool sl_compiler_want_int(struct compiler *c, const struct sl_expr *e, struct opnd *o,
			  const char *what)
{
	if (o->t.null_type)
		return sl_compiler_conv_t(c, e, o, SL_TYPE_BIGINT);
	if (!is_int(&o->t))
		return sl_compiler_fail(c, e, "%s expects an integer, got %s", what,
					sl_compiler_type_name(&o->t, 0));
	return true;
}

bool sl_compiler_want_num(struct compiler *c, const struct sl_expr *e, struct opnd *o,
			  const char *what)
{
	if (o->t.null_type)
		return sl_compiler_conv_t(c, e, o, SL_TYPE_DOUBLE);
	if (!is_num(&o->t))
		return sl_compiler_fail(c, e, "%s expects a number, got %s", what,
					sl_compiler_type_name(&o->t, 0));
	return true;
}

/* A constant integer argument (ROUND digits, TO_TIMESTAMP_LTZ precision). */
bool sl_compiler_const_int(struct compiler *c, const struct sl_expr *e, const struct opnd *o,
			   const char *what, int64_t *v)
{
	if (!o->cst || !is_int(&o->t) || constval(c, o->r)->null)
		return sl_compiler_fail(c, e, "%s must be an integer constant", what);
	*v = constval(c, o->r)->i;
	return true;
}

bool sl_compiler_arg(struct compiler *c, const struct sl_expr *e, uint32_t i, struct opnd *o)
{
	return compile(c, e->args[i], o);
}

struct insn *sl_compiler_emit_to(struct compiler *c, const struct sl_expr *e, enum op op, int32_t a,
				 int32_t b, struct sl_sql_type t, struct opnd *o)
{
	int32_t d = newtemp(c, e);
	struct insn *in = emit(c, op, d, a, b);

	o->r = d;
	o->t = t;
	o->cst = false;
	return c->failed ? NULL : in;
}

/* Comparison of x and y with `mask` ({<,=,>} bits that are TRUE), widening as SQL does. */
static bool compare(struct compiler *c, const struct sl_expr *e, uint8_t mask, struct opnd x,
		    struct opnd y, struct opnd *o)
{
	bool nullable = x.t.nullable || y.t.nullable;
	struct insn *in;
	enum op op;

	if (x.t.null_type && y.t.null_type)
		return const_null(c, mk(SL_TYPE_BOOL, true), o);
	if (x.t.null_type && !sl_compiler_conv(c, e, &x, &y.t))
		return false;
	if (y.t.null_type && !sl_compiler_conv(c, e, &y, &x.t))
		return false;
	if (is_num(&x.t) && is_num(&y.t)) {
		int r = rank(&x.t) > rank(&y.t) ? rank(&x.t) : rank(&y.t);

		if (r >= 4) {
			if (!sl_compiler_conv_t(c, e, &x, SL_TYPE_DOUBLE) ||
			    !sl_compiler_conv_t(c, e, &y, SL_TYPE_DOUBLE))
				return false;
			op = OP_CMP_F;
		} else if (r == 3) {
			struct sl_dec_type dx = dec_of(&x.t), dy = dec_of(&y.t);
			struct sl_sql_type tx, ty;

			/* a constant takes the other side's scale now, so records compare raw */
			if (y.cst && dy.scale < dx.scale && dy.prec + dx.scale - dy.scale <= 38)
				dy = (struct sl_dec_type){ (uint8_t)(dy.prec + dx.scale - dy.scale),
							   dx.scale };
			if (x.cst && dx.scale < dy.scale && dx.prec + dy.scale - dx.scale <= 38)
				dx = (struct sl_dec_type){ (uint8_t)(dx.prec + dy.scale - dx.scale),
							   dy.scale };
			tx = mk_dec(dx, x.t.nullable);
			ty = mk_dec(dy, y.t.nullable);
			if (!sl_compiler_conv(c, e, &x, &tx) || !sl_compiler_conv(c, e, &y, &ty))
				return false;
			op = OP_CMP_D;
		} else {
			op = OP_CMP_I;
		}
	} else if (is_str(&x.t) && is_str(&y.t)) {
		op = OP_CMP_S;
	} else if ((is_bool(&x.t) && is_bool(&y.t)) || (x.t.interval && y.t.interval)) {
		op = OP_CMP_I;
	} else if (is_time(&x.t) && (is_time(&y.t) || is_str(&y.t))) {
		/* text that is no date becomes NULL (counted): unless folded, it may */
		if (is_str(&y.t) && (!sl_compiler_conv(c, e, &y, &x.t) || !y.cst))
			nullable = true;
		if (c->failed)
			return false;
		if (x.t.type != y.t.type && (!sl_compiler_conv_t(c, e, &x, SL_TYPE_TIMESTAMP) ||
					     !sl_compiler_conv_t(c, e, &y, SL_TYPE_TIMESTAMP)))
			return false;
		op = OP_CMP_I;
	} else if (is_str(&x.t) && is_time(&y.t)) {
		if (!sl_compiler_conv(c, e, &x, &y.t) || !x.cst)
			nullable = true;
		if (c->failed)
			return false;
		op = OP_CMP_I;
	} else {
		return sl_compiler_fail(c, e, "cannot compare %s with %s",
					sl_compiler_type_name(&x.t, 0),
					sl_compiler_type_name(&y.t, 1));
	}
	in = sl_compiler_emit_to(c, e, op, x.r, y.r, mk(SL_TYPE_BOOL, nullable), o);
	if (!in)
		return false;
	in->sub = mask;
	if (op == OP_CMP_D) {
		in->x.dec.ta = dec_of(&x.t);
		in->x.dec.tb = dec_of(&y.t);
		in->flag = x.t.scale == y.t.scale; /* raw integer comparison */
	}
	return true;
}

static uint8_t cmp_mask(enum sl_expr_op op)
{
	switch (op) {
	case SL_EXPR_OP_EQ:
		return 2;
	case SL_EXPR_OP_NE:
		return 5;
	case SL_EXPR_OP_LT:
		return 1;
	case SL_EXPR_OP_LE:
		return 3;
	case SL_EXPR_OP_GT:
		return 4;
	default:
		return 6;
	}
}

static const char *op_name(enum sl_expr_op op)
{
	switch (op) {
	case SL_EXPR_OP_ADD:
		return "+";
	case SL_EXPR_OP_SUB:
		return "-";
	case SL_EXPR_OP_MUL:
		return "*";
	case SL_EXPR_OP_DIV:
		return "/";
	case SL_EXPR_OP_MOD:
		return "%";
	default:
		return "?";
	}
}

static bool const_nonzero(struct compiler *c, const struct opnd *o)
{
	const struct reg *v;

	if (!o->cst)
		return false;
	v = constval(c, o->r);
	if (v->null)
		return false;
	if (o->t.type == SL_TYPE_DECIMAL)
		return v->d != 0;
	return v->i != 0 && v->i != -1;
}

/*
 * True when Flink's result type of a + - * needed no precision adjustment: then the exact
 * result always fits it (|a| < 10^p1, |b| < 10^p2), so records skip the range checks and
 * the wide arithmetic of decimal.c and run as plain 128-bit integer operations.
 */
static bool dec_exact(enum sl_expr_op op, struct sl_dec_type a, struct sl_dec_type b,
		      struct sl_dec_type rt)
{
	int s = a.scale > b.scale ? a.scale : b.scale;
	int ia = a.prec - a.scale, ib = b.prec - b.scale;

	if (op == SL_EXPR_OP_MUL)
		return a.prec + b.prec + 1 <= SL_DEC_MAX_PRECISION && rt.scale == a.scale + b.scale;
	if (op == SL_EXPR_OP_ADD || op == SL_EXPR_OP_SUB)
		return (ia > ib ? ia : ib) + s + 1 <= SL_DEC_MAX_PRECISION && rt.scale == s;
	return false;
}

/* + - * / % over numbers, and TIMESTAMP/DATE +- INTERVAL. */
bool sl_compiler_arith(struct compiler *c, const struct sl_expr *e, enum sl_expr_op op,
		       struct opnd x, struct opnd y, struct opnd *o)
{
	bool nullable = x.t.nullable || y.t.nullable;
	bool addsub = op == SL_EXPR_OP_ADD || op == SL_EXPR_OP_SUB;
	int k = op == SL_EXPR_OP_ADD   ? 0
		: op == SL_EXPR_OP_SUB ? 1
		: op == SL_EXPR_OP_MUL ? 2
		: op == SL_EXPR_OP_DIV ? 3
				       : 4;
	struct insn *in;
	int r;

	if (x.t.null_type && y.t.null_type)
		return const_null(c, mk(SL_TYPE_INT, true), o);
	if (x.t.null_type && !sl_compiler_conv(c, e, &x, &y.t))
		return false;
	if (y.t.null_type && !sl_compiler_conv(c, e, &y, &x.t))
		return false;
	if (addsub && op == SL_EXPR_OP_ADD && x.t.interval && is_time(&y.t)) {
		struct opnd t = x;

		x = y;
		y = t;
	}
	if (addsub && is_time(&x.t) && y.t.interval) {
		struct sl_sql_type rt = x.t;

		if (x.t.type == SL_TYPE_DATE) {
			if (y.cst && !constval(c, y.r)->null &&
			    constval(c, y.r)->i % MS_PER_DAY == 0) {
				struct reg v = *constval(c, y.r);

				v.i /= MS_PER_DAY;
				y.r = newconst(c, &v, false);
			} else if (!sl_compiler_conv_t(c, e, &x, SL_TYPE_TIMESTAMP)) {
				return false;
			}
			rt = x.t;
		}
		rt.nullable = nullable;
		return sl_compiler_emit_to(c, e, op == SL_EXPR_OP_ADD ? OP_ADD_I64 : OP_SUB_I64,
					   x.r, y.r, rt, o) != NULL;
	}
	if (addsub && x.t.interval && y.t.interval) {
		struct sl_sql_type rt = x.t;

		rt.nullable = nullable;
		return sl_compiler_emit_to(c, e, op == SL_EXPR_OP_ADD ? OP_ADD_I64 : OP_SUB_I64,
					   x.r, y.r, rt, o) != NULL;
	}
	if (!is_num(&x.t) || !is_num(&y.t)) {
		if (is_time(&x.t) && is_time(&y.t) && op == SL_EXPR_OP_SUB)
			return sl_compiler_fail(
				c, e, "cannot subtract %s from %s: use TIMESTAMPDIFF",
				sl_compiler_type_name(&y.t, 0), sl_compiler_type_name(&x.t, 1));
		return sl_compiler_fail(c, e, "cannot apply '%s' to %s and %s", op_name(op),
					sl_compiler_type_name(&x.t, 0),
					sl_compiler_type_name(&y.t, 1));
	}
	r = rank(&x.t) > rank(&y.t) ? rank(&x.t) : rank(&y.t);
	if (r >= 4) {
		enum sl_type t = r == 5 ? SL_TYPE_DOUBLE : SL_TYPE_FLOAT;
		static const enum op f32[] = { OP_ADD_F32, OP_SUB_F32, OP_MUL_F32, OP_DIV_F32,
					       OP_MOD_F32 };
		static const enum op f64[] = { OP_ADD_F64, OP_SUB_F64, OP_MUL_F64, OP_DIV_F64,
					       OP_MOD_F64 };

		if (!sl_compiler_conv_t(c, e, &x, t) || !sl_compiler_conv_t(c, e, &y, t))
			return false;
		return sl_compiler_emit_to(c, e, (r == 5 ? f64 : f32)[k], x.r, y.r, mk(t, nullable),
					   o);
	}
	if (r == 3) {
		struct sl_dec_type ta = dec_of(&x.t), tb = dec_of(&y.t), rt;
		struct sl_sql_type tx = mk_dec(ta, x.t.nullable), ty = mk_dec(tb, y.t.nullable);

		switch (op) {
		case SL_EXPR_OP_ADD:
			rt = sl_dec_add_type(ta, tb);
			break;
		case SL_EXPR_OP_SUB:
			rt = sl_dec_sub_type(ta, tb);
			break;
		case SL_EXPR_OP_MUL:
			rt = sl_dec_mul_type(ta, tb);
			break;
		case SL_EXPR_OP_DIV:
			rt = sl_dec_div_type(ta, tb);
			break;
		default:
			rt = sl_dec_mod_type(ta, tb);
			break;
		}
		if (!sl_compiler_conv(c, e, &x, &tx) || !sl_compiler_conv(c, e, &y, &ty))
			return false;
		if (k >= 3 && !const_nonzero(c, &y))
			nullable = true;
		in = sl_compiler_emit_to(c, e, (enum op)(OP_ADD_D + k), x.r, y.r,
					 mk_dec(rt, nullable), o);
		if (!in)
			return false;
		in->x.dec.ta = ta;
		in->x.dec.tb = tb;
		in->x.dec.tr = rt;
		in->flag = dec_exact(op, ta, tb, rt);
		return true;
	}
	{
		static const enum op i32[] = { OP_ADD_I32, OP_SUB_I32, OP_MUL_I32, OP_DIV_I32,
					       OP_MOD_I32 };
		static const enum op i64[] = { OP_ADD_I64, OP_SUB_I64, OP_MUL_I64, OP_DIV_I64,
					       OP_MOD_I64 };
		enum sl_type t = r == 2 ? SL_TYPE_BIGINT : SL_TYPE_INT;

		if (k >= 3 && !const_nonzero(c, &y))
			nullable = true;
		return sl_compiler_emit_to(c, e, (r == 2 ? i64 : i32)[k], x.r, y.r, mk(t, nullable),
					   o);
	}
}

bool sl_sql_type_common(const struct sl_sql_type *a, const struct sl_sql_type *b,
			struct sl_sql_type *out)
{
	bool nullable = a->nullable || b->nullable;

	if (a->null_type || b->null_type) {
		*out = a->null_type ? *b : *a;
		out->nullable = true;
		return true;
	}
	if (is_num(a) && is_num(b)) {
		int r = rank(a) > rank(b) ? rank(a) : rank(b);

		if (r == 3)
			*out = mk_dec(dec_union(dec_of(a), dec_of(b)), nullable);
		else
			*out = mk(r == 5   ? SL_TYPE_DOUBLE
				  : r == 4 ? SL_TYPE_FLOAT
				  : r == 2 ? SL_TYPE_BIGINT
					   : SL_TYPE_INT,
				  nullable);
		return true;
	}
	if (a->type == b->type && a->interval == b->interval) {
		*out = *a;
		out->nullable = nullable;
		if (is_time(a) && b->prec > a->prec) /* Flink: the larger precision */
			out->prec = b->prec;
		return true;
	}
	if (is_time(a) && is_time(b)) {
		*out = mk(SL_TYPE_TIMESTAMP, nullable);
		return true;
	}
	return false;
}

/* The type both a and b convert to, for CASE, COALESCE, IF, IN lists. */
static bool common_type(struct compiler *c, const struct sl_expr *e, const struct sl_sql_type *a,
			const struct sl_sql_type *b, struct sl_sql_type *out)
{
	if (sl_sql_type_common(a, b, out))
		return true;
	return sl_compiler_fail(c, e, "incompatible types %s and %s", sl_compiler_type_name(a, 0),
				sl_compiler_type_name(b, 1));
}

/* Folds branch type b into the running type *t (the first branch just sets it). */
static bool merge_type(struct compiler *c, const struct sl_expr *e, struct sl_sql_type *t,
		       const struct sl_sql_type *b, bool first)
{
	if (first) {
		*t = *b;
		return true;
	}
	return common_type(c, e, t, b, t);
}

/* A MOV placeholder whose source is converted to the common type once it is known. */
struct branch {
	int insn; /* index of the MOV */
	struct opnd v;
	const struct sl_expr *e;
};

static bool patch_branches(struct compiler *c, struct branch *br, int n,
			   const struct sl_sql_type *t)
{
	for (int i = 0; i < n; i++) {
		struct opnd v = br[i].v;
		struct vty from = vty_of(&v.t), to = vty_of(t);
		struct insn *in;

		if (v.t.null_type ||
		    (from.t == to.t && from.prec == to.prec && from.scale == to.scale))
			continue;
		if (v.cst) {
			/* converted now, at the end of the code, and folded away again */
			if (!sl_compiler_conv(c, br[i].e, &v, t))
				return false;
			if (v.cst) {
				c->p->code[br[i].insn].a = v.r;
				continue;
			}
			return sl_compiler_fail(c, br[i].e, "cannot convert this %s constant to %s",
						sl_compiler_type_name(&br[i].v.t, 0),
						sl_compiler_type_name(t, 1));
		}
		in = &c->p->code[br[i].insn];
		in->op = OP_CVT;
		in->x.cvt.from = from;
		in->x.cvt.to = to;
		in->imm2 = c->p->tz;
	}
	return true;
}

/*
 * The shared body of CASE, IF and NULLIF: conds[i] (or operand = whens[i]) selects vals[i];
 * else_e (NULL: SQL NULL) otherwise. `nullif` is set for NULLIF's inverted shape.
 */
bool sl_compiler_case(struct compiler *c, const struct sl_expr *e, const struct sl_expr *operand,
		      struct sl_expr *const *pairs, uint32_t npairs, const struct sl_expr *else_e,
		      struct opnd *o)
{
	struct branch *br = calloc(npairs + 1, sizeof(*br));
	int *jmps = calloc(npairs + 1, sizeof(*jmps));
	struct opnd x = { 0 }, cond, v;
	struct sl_sql_type t = { .type = SL_TYPE_INT, .null_type = true, .nullable = true };
	int32_t d;
	bool ok = false;
	int nbr = 0;

	if (!br || !jmps) {
		sl_compiler_nomem(c);
		goto out_free;
	}
	d = newtemp(c, e);
	if (operand && !compile(c, operand, &x))
		goto out_free;
	for (uint32_t i = 0; i < npairs; i++) {
		int jnt;

		if (!compile(c, pairs[2 * i], &cond))
			goto out_free;
		if (operand && !compare(c, pairs[2 * i], 2, x, cond, &cond))
			goto out_free;
		if (!sl_compiler_want(c, pairs[2 * i], &cond, SL_TYPE_BOOL, "WHEN"))
			goto out_free;
		jnt = c->p->ncode;
		if (!emit(c, OP_JNT, 0, cond.r, NOREG) || !compile(c, pairs[2 * i + 1], &v))
			goto out_free;
		br[nbr] = (struct branch){ c->p->ncode, v, pairs[2 * i + 1] };
		if (!emit(c, OP_MOV, d, v.r, NOREG))
			goto out_free;
		jmps[nbr++] = c->p->ncode;
		if (!emit(c, OP_JMP, 0, 0, NOREG))
			goto out_free;
		c->p->code[jnt].x.imm = c->p->ncode;
		if (!merge_type(c, pairs[2 * i + 1], &t, &v.t, i == 0))
			goto out_free;
	}
	if (else_e) {
		if (!compile(c, else_e, &v))
			goto out_free;
		if (!merge_type(c, else_e, &t, &v.t, false))
			goto out_free;
	} else if (!const_null(c, t, &v)) {
		goto out_free;
	}
	br[nbr] = (struct branch){ c->p->ncode, v, else_e ? else_e : e };
	if (!emit(c, OP_MOV, d, v.r, NOREG))
		goto out_free;
	for (int i = 0; i < nbr; i++)
		c->p->code[jmps[i]].x.imm = c->p->ncode;
	t.nullable = !else_e;
	for (int i = 0; i <= nbr; i++)
		t.nullable |= br[i].v.t.nullable;
	if (!patch_branches(c, br, nbr + 1, &t))
		goto out_free;
	o->r = d;
	o->t = t;
	o->cst = false;
	ok = true;
out_free:
	free(br);
	free(jmps);
	return ok && !c->failed;
}

bool sl_compiler_coalesce(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	struct branch *br = calloc(e->nargs, sizeof(*br));
	int *jmps = calloc(e->nargs, sizeof(*jmps));
	struct sl_sql_type t = { .type = SL_TYPE_INT, .null_type = true, .nullable = true };
	bool all_nullable = true, ok = false;
	int32_t d;

	if (!br || !jmps) {
		sl_compiler_nomem(c);
		goto out_free;
	}
	d = newtemp(c, e);
	for (uint32_t i = 0; i < e->nargs; i++) {
		struct opnd v;
		int32_t tmp;

		if (!sl_compiler_arg(c, e, i, &v) || !merge_type(c, e->args[i], &t, &v.t, i == 0))
			goto out_free;
		all_nullable &= v.t.nullable;
		tmp = i + 1 < e->nargs ? newtemp(c, e) : d;
		br[i] = (struct branch){ c->p->ncode, v, e->args[i] };
		if (!emit(c, OP_MOV, tmp, v.r, NOREG))
			goto out_free;
		if (i + 1 < e->nargs) {
			jmps[i] = c->p->ncode;
			if (!emit(c, OP_JNN, d, tmp, NOREG))
				goto out_free;
		}
	}
	for (uint32_t i = 0; i + 1 < e->nargs; i++)
		c->p->code[jmps[i]].x.imm = c->p->ncode;
	t.nullable = all_nullable;
	if (!patch_branches(c, br, (int)e->nargs, &t))
		goto out_free;
	o->r = d;
	o->t = t;
	o->cst = false;
	ok = true;
out_free:
	free(br);
	free(jmps);
	return ok && !c->failed;
}

bool sl_compiler_nullif(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	struct opnd a, b, cond, nul;
	int jnt, jmp;
	int32_t d;

	if (!sl_compiler_arg(c, e, 0, &a) || !sl_compiler_arg(c, e, 1, &b) ||
	    !compare(c, e, 2, a, b, &cond))
		return false;
	d = newtemp(c, e);
	jnt = c->p->ncode;
	if (!emit(c, OP_JNT, 0, cond.r, NOREG) || !const_null(c, a.t, &nul) ||
	    !emit(c, OP_MOV, d, nul.r, NOREG))
		return false;
	jmp = c->p->ncode;
	if (!emit(c, OP_JMP, 0, 0, NOREG))
		return false;
	c->p->code[jnt].x.imm = c->p->ncode;
	if (!emit(c, OP_MOV, d, a.r, NOREG))
		return false;
	c->p->code[jmp].x.imm = c->p->ncode;
	o->r = d;
	o->t = a.t;
	o->t.nullable = true;
	o->cst = false;
	return true;
}

static bool compile_logic(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	bool and = e->op == SL_EXPR_OP_AND;
	struct opnd x, y;
	int jump;
	int32_t d;

	if (!sl_compiler_arg(c, e, 0, &x) ||
	    !sl_compiler_want(c, e->args[0], &x, SL_TYPE_BOOL, and? "AND" : "OR"))
		return false;
	d = newtemp(c, e);
	jump = c->p->ncode;
	if (!emit(c, and? OP_JF : OP_JT, d, x.r, NOREG))
		return false;
	if (!sl_compiler_arg(c, e, 1, &y) ||
	    !sl_compiler_want(c, e->args[1], &y, SL_TYPE_BOOL, and? "AND" : "OR"))
		return false;
	if (!emit(c, and? OP_AND : OP_OR, d, x.r, y.r))
		return false;
	c->p->code[jump].x.imm = c->p->ncode;
	o->r = d;
	o->t = mk(SL_TYPE_BOOL, x.t.nullable || y.t.nullable);
	o->cst = false;
	return true;
}

bool sl_compiler_concat(struct compiler *c, const struct sl_expr *e, struct opnd *sep,
			struct opnd *parts, uint32_t n, struct opnd *o)
{
	struct sl_prog *p = c->p;
	bool nullable = false;
	struct insn *in;

	if (p->nlists + (int)n > p->caplists) {
		int cap = (p->caplists ? p->caplists * 2 : 16) + (int)n;
		int32_t *a = realloc(p->lists, (size_t)cap * sizeof(*a));

		if (!a)
			return sl_compiler_nomem(c);
		p->lists = a;
		p->caplists = cap;
	}
	for (uint32_t i = 0; i < n; i++) {
		p->lists[p->nlists + (int)i] = parts[i].r;
		nullable |= parts[i].t.nullable;
	}
	if (sep)
		nullable = sep->t.nullable;
	in = sl_compiler_emit_to(c, e, sep ? OP_CONCAT_WS : OP_CONCAT, sep ? sep->r : 0, NOREG,
				 mk(SL_TYPE_STRING, nullable), o);
	if (!in)
		return false;
	in->x.list.off = p->nlists;
	in->x.list.n = (int32_t)n;
	p->nlists += (int)n;
	return true;
}

static bool compile_binary(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	struct opnd x, y;

	if (e->op == SL_EXPR_OP_AND || e->op == SL_EXPR_OP_OR)
		return compile_logic(c, e, o);
	if (!sl_compiler_arg(c, e, 0, &x) || !sl_compiler_arg(c, e, 1, &y))
		return false;
	switch (e->op) {
	case SL_EXPR_OP_EQ:
	case SL_EXPR_OP_NE:
	case SL_EXPR_OP_LT:
	case SL_EXPR_OP_LE:
	case SL_EXPR_OP_GT:
	case SL_EXPR_OP_GE:
		return compare(c, e, cmp_mask(e->op), x, y, o);
	case SL_EXPR_OP_CONCAT: {
		struct opnd parts[2];

		if (!sl_compiler_want(c, e->args[0], &x, SL_TYPE_STRING, "||") ||
		    !sl_compiler_want(c, e->args[1], &y, SL_TYPE_STRING, "||"))
			return false;
		parts[0] = x;
		parts[1] = y;
		return sl_compiler_concat(c, e, NULL, parts, 2, o);
	}
	default:
		return sl_compiler_arith(c, e, e->op, x, y, o);
	}
}

static bool compile_unary(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	struct opnd x;
	enum op op;

	if (!sl_compiler_arg(c, e, 0, &x))
		return false;
	if (e->op == SL_EXPR_OP_NOT) {
		if (!sl_compiler_want(c, e->args[0], &x, SL_TYPE_BOOL, "NOT"))
			return false;
		return sl_compiler_emit_to(c, e, OP_NOT, x.r, NOREG, mk(SL_TYPE_BOOL, x.t.nullable),
					   o);
	}
	if (x.t.null_type && !sl_compiler_conv_t(c, e, &x, SL_TYPE_INT))
		return false;
	if (!is_num(&x.t) && !x.t.interval)
		return sl_compiler_fail(c, e, "cannot apply unary '%s' to %s",
					e->op == SL_EXPR_OP_NEG ? "-" : "+",
					sl_compiler_type_name(&x.t, 0));
	if (e->op == SL_EXPR_OP_PLUS) {
		*o = x;
		return true;
	}
	switch (x.t.interval ? SL_TYPE_BIGINT : x.t.type) {
	case SL_TYPE_INT:
		op = OP_NEG_I32;
		break;
	case SL_TYPE_BIGINT:
		op = OP_NEG_I64;
		break;
	case SL_TYPE_DECIMAL:
		op = OP_NEG_D;
		break;
	default:
		op = OP_NEG_F;
		break;
	}
	return sl_compiler_emit_to(c, e, op, x.r, NOREG, x.t, o);
}

static bool compile_is(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	struct opnd x;
	struct insn *in;
	enum is_test t;

	if (!sl_compiler_arg(c, e, 0, &x))
		return false;
	if (e->is_what != SL_EXPR_IS_NULL &&
	    !sl_compiler_want(c, e->args[0], &x, SL_TYPE_BOOL, "IS"))
		return false;
	if (e->is_what == SL_EXPR_IS_NULL)
		t = e->negated ? IS_NOT_NULL : IS_NULL;
	else if (e->is_what == SL_EXPR_IS_TRUE)
		t = e->negated ? IS_NOT_TRUE : IS_TRUE;
	else
		t = e->negated ? IS_NOT_FALSE : IS_FALSE;
	in = sl_compiler_emit_to(c, e, OP_IS, x.r, NOREG, mk(SL_TYPE_BOOL, false), o);
	if (!in)
		return false;
	in->sub = (uint8_t)t;
	return true;
}

static bool compile_between(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	struct opnd x, lo, hi, a, b;

	if (!sl_compiler_arg(c, e, 0, &x) || !sl_compiler_arg(c, e, 1, &lo) ||
	    !sl_compiler_arg(c, e, 2, &hi) || !compare(c, e, 6, x, lo, &a) ||
	    !compare(c, e, 3, x, hi, &b))
		return false;
	if (!sl_compiler_emit_to(c, e, OP_AND, a.r, b.r,
				 mk(SL_TYPE_BOOL, a.t.nullable || b.t.nullable), o))
		return false;
	if (e->negated)
		return sl_compiler_emit_to(c, e, OP_NOT, o->r, NOREG, o->t, o) != NULL;
	return true;
}

/* IN over constants: the list converted once, the operand once, one scan per record. */
static bool compile_in(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	uint32_t n = e->nargs - 1;
	struct opnd x, *items = calloc(n ? n : 1, sizeof(*items));
	struct sl_sql_type t;
	struct inlist *l = NULL;
	bool all_const = true, ok = false, nullable;
	struct insn *in;
	enum op op;

	if (!items)
		return sl_compiler_nomem(c);
	if (!sl_compiler_arg(c, e, 0, &x))
		goto out_free;
	t = x.t;
	nullable = x.t.nullable;
	for (uint32_t i = 0; i < n; i++) {
		if (!sl_compiler_arg(c, e, i + 1, &items[i]))
			goto out_free;
		all_const &= items[i].cst;
		nullable |= items[i].t.nullable;
		if (all_const && !(is_time(&x.t) && is_str(&items[i].t)) &&
		    !common_type(c, e->args[i + 1], &t, &items[i].t, &t))
			goto out_free;
	}
	if (!all_const || t.null_type ||
	    (!is_num(&t) && !is_str(&t) && !is_bool(&t) && !is_time(&t) && !t.interval)) {
		/* x = a OR x = b OR ...: three-valued like the list form */
		struct opnd acc, eq;

		for (uint32_t i = 0; i < n; i++) {
			if (!compare(c, e->args[i + 1], 2, x, items[i], &eq))
				goto out_free;
			if (i && !sl_compiler_emit_to(
					 c, e, OP_OR, acc.r, eq.r,
					 mk(SL_TYPE_BOOL, acc.t.nullable || eq.t.nullable), &eq))
				goto out_free;
			acc = eq;
		}
		*o = acc;
		if (e->negated && !sl_compiler_emit_to(c, e, OP_NOT, o->r, NOREG, o->t, o))
			goto out_free;
		ok = true;
		goto out_free;
	}
	if (t.type == SL_TYPE_FLOAT)
		t.type = SL_TYPE_DOUBLE;
	if (!sl_compiler_conv(c, e, &x, &t))
		goto out_free;
	l = calloc(1, sizeof(*l));
	if (!sl_compiler_own(c, l))
		goto out_free;
	l->i = calloc(n, 16);
	if (!sl_compiler_own(c, l->i))
		goto out_free;
	for (uint32_t i = 0; i < n; i++) {
		struct reg *v;

		if (!sl_compiler_conv(c, e->args[i + 1], &items[i], &t))
			goto out_free;
		if (!items[i].cst) {
			sl_compiler_fail(c, e->args[i + 1], "cannot convert this IN value to %s",
					 sl_compiler_type_name(&t, 0));
			goto out_free;
		}
		v = constval(c, items[i].r);
		if (v->null) {
			l->has_null = true;
			continue;
		}
		switch (t.type) {
		case SL_TYPE_DOUBLE:
			l->f[l->n++] = v->f;
			break;
		case SL_TYPE_DECIMAL:
			l->d[l->n++] = v->d;
			break;
		case SL_TYPE_STRING:
			l->s[l->n].p = v->s.p;
			l->s[l->n++].len = v->s.len;
			break;
		default:
			l->i[l->n++] = v->i;
			break;
		}
	}
	op = t.type == SL_TYPE_DOUBLE	 ? OP_IN_F
	     : t.type == SL_TYPE_DECIMAL ? OP_IN_D
	     : t.type == SL_TYPE_STRING	 ? OP_IN_S
					 : OP_IN_I;
	in = sl_compiler_emit_to(c, e, op, x.r, NOREG, mk(SL_TYPE_BOOL, nullable), o);
	if (!in)
		goto out_free;
	in->x.ptr = l;
	in->sub = e->negated;
	ok = true;
out_free:
	free(items);
	return ok && !c->failed;
}

static bool compile_like(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	struct opnd x, pat;
	struct like_pat *lp = NULL;
	struct insn *in;

	if (!sl_compiler_arg(c, e, 0, &x) || !sl_compiler_arg(c, e, 1, &pat) ||
	    !sl_compiler_want(c, e->args[0], &x, SL_TYPE_STRING, "LIKE") ||
	    !sl_compiler_want(c, e->args[1], &pat, SL_TYPE_STRING, "LIKE"))
		return false;
	if (pat.cst && !constval(c, pat.r)->null) {
		const struct reg *v = constval(c, pat.r);

		lp = malloc(sizeof(*lp));
		if (!sl_compiler_own(c, lp))
			return false;
		/* Flink's LIKE treats backslash as the escape character */
		sl_eval_like_compile_(lp, v->s.p, v->s.len, '\\');
	}
	in = sl_compiler_emit_to(c, e, OP_LIKE, x.r, pat.r,
				 mk(SL_TYPE_BOOL, x.t.nullable || pat.t.nullable), o);
	if (!in)
		return false;
	in->x.ptr = lp;
	in->sub = e->negated;
	return true;
}

/* A TIMESTAMP literal's precision, as Flink types it: the fraction digits it spells. */
static int literal_prec(const char *text)
{
	const char *dot = strchr(text, '.');
	int n = 0;

	while (dot && dot[1 + n] >= '0' && dot[1 + n] <= '9')
		n++;
	return n > SL_TS_PREC_MAX ? SL_TS_PREC_MAX : n;
}

static bool compile_literal(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	struct reg v = { 0 };
	int64_t ms;

	o->cst = true;
	switch (e->kind) {
	case SL_EXPR_INT:
		v.i = e->ival;
		o->t = mk(e->ival <= INT32_MAX ? SL_TYPE_INT : SL_TYPE_BIGINT, false);
		break;
	case SL_EXPR_DECIMAL: {
		const char *s = e->text;
		int intd = 0, frac = 0, sig;
		bool point = false, lead = true;

		if (strpbrk(s, "eE")) {
			v.f = strtod(s, NULL);
			o->t = mk(SL_TYPE_DOUBLE, false);
			break;
		}
		for (; *s; s++) {
			if (*s == '.') {
				point = true;
			} else if (point) {
				frac++;
			} else if (!(lead && *s == '0')) {
				lead = false;
				intd++;
			}
		}
		sig = intd + frac;
		/* leading fraction zeros of 0.05 do not count: BigDecimal precision */
		if (!intd)
			for (s = strchr(e->text, '.') + 1; *s == '0' && sig > 1; s++)
				sig--;
		if (sig < frac)
			sig = frac;
		if (sig < 1)
			sig = 1;
		if (sig > SL_DEC_MAX_PRECISION)
			return sl_compiler_fail(c, e, "numeric literal %s has more than 38 digits",
						e->text);
		o->t = mk_dec((struct sl_dec_type){ (uint8_t)sig, (uint8_t)frac }, false);
		if (sl_dec_parse(e->text, strlen(e->text), dec_of(&o->t), &v.d))
			return sl_compiler_fail(c, e, "invalid numeric literal %s", e->text);
		break;
	}
	case SL_EXPR_STRING:
		v.s.p = e->text;
		v.s.len = (uint32_t)strlen(e->text);
		o->t = mk(SL_TYPE_STRING, false);
		break;
	case SL_EXPR_BOOL:
		v.i = e->ival != 0;
		o->t = mk(SL_TYPE_BOOL, false);
		break;
	case SL_EXPR_NULL:
		v.null = true;
		o->t = (struct sl_sql_type){ .type = SL_TYPE_INT,
					     .nullable = true,
					     .null_type = true };
		break;
	case SL_EXPR_INTERVAL:
		v.i = e->ival;
		o->t = mk(SL_TYPE_BIGINT, false);
		o->t.interval = true;
		break;
	case SL_EXPR_TIMESTAMP:
		if (!sl_eval_ts_parse_(e->text, (uint32_t)strlen(e->text), &ms))
			return sl_compiler_fail(c, e,
						"invalid TIMESTAMP literal '%s' (expected "
						"yyyy-MM-dd HH:mm:ss[.SSS])",
						e->text);
		v.i = ms;
		o->t = mk(SL_TYPE_TIMESTAMP, false);
		o->t.prec = literal_prec(e->text); /* '... 10:00:00' is a TIMESTAMP(0) */
		break;
	case SL_EXPR_DATE:
		if (!sl_eval_date_parse_(e->text, (uint32_t)strlen(e->text), &ms))
			return sl_compiler_fail(
				c, e, "invalid DATE literal '%s' (expected yyyy-MM-dd)", e->text);
		v.i = ms;
		o->t = mk(SL_TYPE_DATE, false);
		break;
	default:
		return sl_compiler_fail(c, e, "not a literal");
	}
	o->r = newconst(c, &v, e->kind == SL_EXPR_STRING);
	return !c->failed;
}

static bool compile_round_to(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	static const int64_t unit_ms[] = {
		[SL_EXPR_UNIT_SECOND] = 1000,
		[SL_EXPR_UNIT_MINUTE] = 60000,
		[SL_EXPR_UNIT_HOUR] = 3600000,
		[SL_EXPR_UNIT_DAY] = MS_PER_DAY,
	};
	bool ceil_ = !strcasecmp(e->text, "CEIL") || !strcasecmp(e->text, "CEILING");
	struct opnd x;
	struct insn *in;

	if (!sl_compiler_arg(c, e, 0, &x))
		return false;
	if (x.t.null_type && !sl_compiler_conv_t(c, e, &x, SL_TYPE_TIMESTAMP))
		return false;
	if (x.t.type != SL_TYPE_TIMESTAMP && x.t.type != SL_TYPE_TIMESTAMP_LTZ)
		return sl_compiler_fail(c, e->args[0],
					"%s(... TO unit) expects a TIMESTAMP, got %s", e->text,
					sl_compiler_type_name(&x.t, 0));
	if (e->unit < SL_EXPR_UNIT_SECOND || e->unit > SL_EXPR_UNIT_DAY)
		return sl_compiler_fail(c, e, "unknown time unit");
	in = sl_compiler_emit_to(c, e, OP_TS_FLOOR, x.r, NOREG, x.t, o);
	if (!in)
		return false;
	in->sub = ceil_;
	in->x.imm = unit_ms[e->unit];
	in->imm2 = x.t.type == SL_TYPE_TIMESTAMP_LTZ ? c->p->tz : 0;
	return true;
}

static bool compile_inner(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	switch (e->kind) {
	case SL_EXPR_INT:
	case SL_EXPR_DECIMAL:
	case SL_EXPR_STRING:
	case SL_EXPR_BOOL:
	case SL_EXPR_NULL:
	case SL_EXPR_INTERVAL:
	case SL_EXPR_TIMESTAMP:
	case SL_EXPR_DATE:
		return compile_literal(c, e, o);
	case SL_EXPR_COLUMN:
		return sl_compiler_resolve(c, e, o);
	case SL_EXPR_STAR:
		return sl_compiler_fail(c, e, "* is only allowed in COUNT(*)");
	case SL_EXPR_UNARY:
		return compile_unary(c, e, o);
	case SL_EXPR_BINARY:
		return compile_binary(c, e, o);
	case SL_EXPR_IS:
		return compile_is(c, e, o);
	case SL_EXPR_BETWEEN:
		return compile_between(c, e, o);
	case SL_EXPR_IN:
		if (e->sub)
			return sl_compiler_fail(c, e,
						"IN (SELECT ...) is supported as a window semi "
						"or anti join only: a WHERE condition of its own, "
						"correlated on window_start and window_end");
		return compile_in(c, e, o);
	case SL_EXPR_EXISTS:
		return sl_compiler_fail(c, e,
					"EXISTS (SELECT ...) is supported as a window semi or anti "
					"join only: a WHERE condition of its own, correlated on "
					"window_start and window_end");
	case SL_EXPR_LIKE:
		return compile_like(c, e, o);
	case SL_EXPR_CALL:
		return sl_compiler_call(c, e, o);
	case SL_EXPR_CASE:
		if (!e->nargs)
			return sl_compiler_fail(c, e, "CASE needs a WHEN");
		return sl_compiler_case(c, e, e->case_operand, e->args, e->nargs / 2, e->case_else,
					o);
	case SL_EXPR_CAST:
		return sl_compiler_cast(c, e, o);
	case SL_EXPR_ROUND_TO:
		return compile_round_to(c, e, o);
	case SL_EXPR_DESCRIPTOR:
		return sl_compiler_fail(c, e,
					"DESCRIPTOR is only allowed as a window function argument");
	case SL_EXPR_TABLE:
		return sl_compiler_fail(c, e,
					"TABLE is only allowed as a window function argument");
	}
	return sl_compiler_fail(c, e, "unsupported expression");
}

static bool compile(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	int start = c->p->ncode, t0 = c->ntemps, nc0 = c->nonconst;

	if (c->failed)
		return false;
	for (int i = 0; i < c->sc->ncols; i++) {
		const struct sl_sql_col *col = &c->sc->cols[i];

		if (col->match && sl_compiler_expr_equal(col->match, e))
			return sl_compiler_load_col(c, e, col, o);
	}
	/* The parser builds a + a + ... iteratively, so a long chain reaches here as a tree
	 * as deep as it is long; one frame per level would overflow the stack (an ASan build
	 * at a few thousand). Every level holds at least one value, so a tree deeper than the
	 * register file could not be compiled anyway: refuse it with the same words. */
	if (c->depth >= MAX_REGS)
		return sl_compiler_fail(c, e, "expression too large (more than %d values)",
					MAX_REGS);
	c->depth++;
	bool ok = compile_inner(c, e, o);
	c->depth--;
	if (!ok)
		return false;
	fold(c, start, t0, nc0, o);
	return !c->failed;
}

bool sl_compiler_compile(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	return compile(c, e, o);
}
