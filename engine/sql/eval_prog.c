/*
 * eval_prog.c - the program a compilation produced: finishing it (the constants packed into
 * one block after the code), and the entry points that run it on rows (eval.h). The
 * evaluation functions are the hot path: one interpreter loop (eval_vm.c), or the kernel of
 * a program of a common shape (eval_kern.h), no allocation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/udf.h>

#include "eval_cc.h"

/* ---- finishing ------------------------------------------------------------------------ */

/* Keeps only the constants the final code reads, in one block (see eval_int.h). */
static bool pack_consts(struct compiler *c)
{
	struct sl_prog *p = c->p;
	int32_t *map = malloc(((size_t)c->ncv + 1) * sizeof(*map));
	int n = 0;

#define REMAP(x)                                                                                   \
	do {                                                                                       \
		if ((x) < 0 && (x) != NOREG) {                                                     \
			if (map[-1 - (x)] < 0)                                                     \
				map[-1 - (x)] = n++;                                               \
			(x) = -1 - map[-1 - (x)];                                                  \
		}                                                                                  \
	} while (0)

	if (!map)
		return sl_compiler_nomem(c);
	for (int k = 0; k < c->ncv; k++)
		map[k] = -1;
	for (int i = 0; i < p->ncode; i++) {
		struct insn *in = &p->code[i];
		bool ops = in->op != OP_LOAD_I && in->op != OP_LOAD_F && in->op != OP_LOAD_D &&
			   in->op != OP_LOAD_S && in->op != OP_NOW && in->op != OP_WATERMARK &&
			   in->op != OP_JMP;

		if (ops) {
			REMAP(in->a);
			REMAP(in->b);
			REMAP(in->c);
		}
		if (in->op == OP_CONCAT || in->op == OP_CONCAT_WS)
			for (int k = 0; k < in->x.list.n; k++)
				REMAP(p->lists[in->x.list.off + k]);
		if (in->op == OP_UDF) { /* the program's own call record (sl_compiler_own) */
			struct udf_call *call = (struct udf_call *)in->x.ptr;

			for (uint32_t k = 0; k < call->d->nargs; k++)
				REMAP(call->ops[k]);
		}
	}
	REMAP(p->result);
#undef REMAP
	p->consts = calloc((size_t)n + 1, sizeof(*p->consts));
	if (!p->consts) {
		free(map);
		return sl_compiler_nomem(c);
	}
	for (int k = 0; k < c->ncv; k++)
		if (map[k] >= 0)
			p->consts[n - 1 - map[k]] = c->cv[k];
	p->nconst = n;
	free(map);
	return true;
}

struct sl_prog *sl_prog_compile(const struct sl_expr *e, const struct sl_scope *sc,
				const struct sl_sql_env *env, struct sl_sql_type *type, char *err,
				size_t errcap)
{
	static const struct sl_scope empty;
	struct compiler c = { .sc = sc ? sc : &empty, .env = env, .err = err, .errcap = errcap };
	struct opnd o;

	if (errcap)
		err[0] = 0;
	c.p = calloc(1, sizeof(*c.p));
	c.scratch = malloc(SL_EVAL_SCRATCH);
	if (!c.p || !c.scratch) {
		sl_compiler_nomem(&c);
		goto out_fail;
	}
	c.p->tz = env ? env->local_tz_offset_ms : 0;
	if (!e) {
		sl_compiler_nomem(&c);
		goto out_fail;
	}
	if (!sl_compiler_compile(&c, e, &o))
		goto out_fail;
	/*
	 * DECIMAL results wider than a row slot become DECIMAL(18, s) with Flink's scale, so
	 * they print as Flink prints them, NULL (counted) when a value does not fit. A scale
	 * above 18 (SUM(x) / COUNT(*) is DECIMAL(38, 22)) shrinks as Flink's own precision
	 * adjustment would at 18 digits: keep the integer digits, but never below scale 6.
	 */
	if (o.t.type == SL_TYPE_DECIMAL && o.t.prec > SL_DECIMAL_MAX_PREC) {
		int s = o.t.scale;

		if (s > SL_DECIMAL_MAX_PREC) {
			int keep = SL_DECIMAL_MAX_PREC - (o.t.prec - o.t.scale);

			s = keep > SL_DEC_MIN_ADJUSTED_SCALE ? keep : SL_DEC_MIN_ADJUSTED_SCALE;
		}
		struct sl_sql_type t =
			mk_dec((struct sl_dec_type){ SL_DECIMAL_MAX_PREC, (uint8_t)s }, true);

		if (!sl_compiler_conv(&c, e, &o, &t))
			goto out_fail;
		if (!o.cst)
			o.t.nullable = true;
	}
	c.p->result = o.r;
	c.p->type = o.t;
	c.p->rty = vty_of(&o.t);
	c.p->ntemps = c.maxtemps;
	c.p->is_const = c.nonconst == 0;
	if (!pack_consts(&c))
		goto out_fail;
	sl_eval_kern_pick_(c.p);
	if (type)
		*type = o.t;
	free(c.cv);
	free(c.scratch);
	return c.p;
out_fail:
	if (!c.failed)
		sl_compiler_nomem(&c);
	free(c.cv);
	free(c.scratch);
	sl_prog_destroy(c.p);
	return NULL;
}

void sl_prog_destroy(struct sl_prog *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nowned; i++)
		free(p->owned[i]);
	free(p->owned);
	for (int i = 0; i < p->nregex; i++)
		sl_eval_regex_free_(p->regex[i]);
	free(p->regex);
	free(p->code);
	free(p->lists);
	free(p->consts);
	free(p);
}

bool sl_prog_is_const(const struct sl_prog *p)
{
	return p->is_const;
}

bool sl_prog_reads_clock(const struct sl_prog *p)
{
	for (int i = 0; i < p->ncode; i++)
		if (p->code[i].op == OP_NOW || p->code[i].op == OP_WATERMARK)
			return true;
	return false;
}

/* ---- evaluation (hot path) ------------------------------------------------------------ */

/* The program's result register for row `in`: its kernel's, or the interpreter's. */
static inline void run(const struct sl_prog *p, const struct sl_row *in, struct sl_eval_ctx *ec,
		       struct reg *r)
{
	if (p->kern.kind != KERN_NONE) {
		sl_eval_kern_run_(&p->kern, in, r);
		return;
	}
	struct reg file[p->nconst + p->ntemps + 1];

	/* a handful of constants: a loop beats a libc call here */
	for (int k = 0; k < p->nconst; k++)
		file[k] = p->consts[k];
	ec->scratch_used = 0;
	sl_eval_run_(p->code, 0, p->ncode, p->lists, file + p->nconst, in, ec);
	*r = file[p->nconst + p->result];
}

void sl_prog_eval(const struct sl_prog *p, const struct sl_row *in, struct sl_eval_ctx *ec,
		  struct sl_val *out)
{
	struct reg res;
	const struct reg *r = &res;

	run(p, in, ec, &res);
	out->null = r->null;
	switch (p->rty.t) {
	case SL_TYPE_FLOAT:
	case SL_TYPE_DOUBLE:
		out->f = r->f;
		break;
	case SL_TYPE_STRING:
		out->s.p = r->s.p;
		out->s.len = r->s.len;
		break;
	case SL_TYPE_DECIMAL:
		out->i = (int64_t)r->d;
		break;
	default:
		out->i = r->i;
		break;
	}
	if (r->null)
		memset(&out->s, 0, sizeof(out->s));
}

bool sl_prog_eval_pred(const struct sl_prog *p, const struct sl_row *in, struct sl_eval_ctx *ec)
{
	struct reg r;

	run(p, in, ec, &r);
	return !r.null && r.i;
}

void sl_prog_eval_into(const struct sl_prog *p, const struct sl_row *in, struct sl_eval_ctx *ec,
		       const struct sl_sql_type *to, struct sl_row_builder *out, int field)
{
	struct reg r;
	struct vty tv = vty_of(to);

	run(p, in, ec, &r);
	if (r.null || p->type.null_type) {
		sl_rowb_set_null(out, field);
		return;
	}
	if (tv.t != p->rty.t || tv.prec != p->rty.prec || tv.scale != p->rty.scale) {
		if (!sl_eval_cvt_(&r, &p->rty, &tv, p->tz, ec)) {
			ec->errors++;
			sl_rowb_set_null(out, field);
			return;
		}
	}
	switch (tv.t) {
	case SL_TYPE_FLOAT:
	case SL_TYPE_DOUBLE:
		sl_rowb_set_f64(out, field, r.f);
		break;
	case SL_TYPE_STRING:
		sl_rowb_set_str(out, field, r.s.p, r.s.len);
		break;
	case SL_TYPE_DECIMAL:
		if (r.d > INT64_MAX || r.d < INT64_MIN) {
			ec->errors++;
			ec->overflows++;
			sl_rowb_set_null(out, field);
			return;
		}
		sl_rowb_set_i64(out, field, (int64_t)r.d);
		break;
	default:
		sl_rowb_set_i64(out, field, r.i);
		break;
	}
}
