/*
 * eval_kern.c - recognizes the programs a kernel can run (see eval_kern.h), after the
 * compiler has finished them, by reading their code: the kernels are therefore exactly what
 * the interpreter would compute, whatever the SQL text looked like, and the compiler knows
 * nothing of them.
 *
 * A conjunction compiles to comparisons (LOAD of a column, CMP with a constant), joined by
 * AND, each AND's left side preceded by a JF that skips to just after it when the left side
 * is FALSE (compile_logic in eval.c). The reader follows the code in order, tracking what
 * each temporary holds (a column, or a set of comparisons ANDed), and gives up on any other
 * instruction, a constant that is NULL, a JF that does not skip to its own AND, or a read of
 * a value that a JF may have skipped. Plan time, O(code).
 */
#include "eval_cc.h"

#define KERN_MAX_TEMPS 64

enum hold { H_NONE, H_COL, H_CONJ };

struct temp {
	uint8_t hold;	 /* enum hold */
	uint16_t load;	 /* H_COL: the LOAD op */
	int32_t col;	 /* H_COL */
	uint32_t leaves; /* H_CONJ: bit j = leaf j */
	int written;	 /* pc of the last write */
};

struct skip {
	int from, to; /* a JF at `from` may skip to `to` */
};

static const struct reg *konst(const struct sl_prog *p, int32_t r)
{
	return r < 0 && r != NOREG && p->nconst + r >= 0 ? &p->consts[p->nconst + r] : NULL;
}

/* Whether temporary r may be read at pc: written, and not inside code a JF may skip. */
static bool readable(const struct temp *t, int32_t r, int pc, const struct skip *sk, int nsk)
{
	if (r < 0 || r >= KERN_MAX_TEMPS || t[r].hold == H_NONE)
		return false;
	for (int k = 0; k < nsk; k++)
		if (sk[k].to <= pc && t[r].written > sk[k].from && t[r].written < sk[k].to - 1)
			return false;
	return true;
}

/* Swaps the < and > bits of a comparison mask: "5 < x" is "x > 5". */
static uint8_t flip(uint8_t m)
{
	return (uint8_t)((m & 2) | ((m & 1) << 2) | ((m & 4) >> 2));
}

static bool add_leaf(const struct sl_prog *p, struct kern *k, struct temp *t, const struct insn *in,
		     int pc, const struct skip *sk, int nsk)
{
	static const uint16_t load_of[] = {
		[OP_CMP_I] = OP_LOAD_I, [OP_CMP_F] = OP_LOAD_F, [OP_CMP_S] = OP_LOAD_S
	};
	const struct reg *c;
	struct kern_leaf *l;
	int32_t colr;
	uint8_t mask;

	if ((c = konst(p, in->b)) && readable(t, in->a, pc, sk, nsk)) {
		colr = in->a;
		mask = in->sub;
	} else if ((c = konst(p, in->a)) && readable(t, in->b, pc, sk, nsk)) {
		colr = in->b;
		mask = flip(in->sub);
	} else {
		return false;
	}
	if (c->null || t[colr].hold != H_COL || t[colr].load != load_of[in->op] ||
	    k->n == SL_KERN_MAX_LEAVES || t[colr].col >= 64)
		return false;
	l = &k->leaf[k->n];
	l->op = in->op;
	l->mask = mask;
	l->col = (int16_t)t[colr].col;
	if (in->op == OP_CMP_I)
		l->k.i = c->i;
	else if (in->op == OP_CMP_F)
		l->k.f = c->f;
	else
		l->k.s.p = c->s.p, l->k.s.len = c->s.len;
	t[in->dst].hold = H_CONJ;
	t[in->dst].leaves = 1u << k->n;
	k->n++;
	return true;
}

static bool pick_conj(const struct sl_prog *p, struct kern *k)
{
	struct temp t[KERN_MAX_TEMPS] = { 0 };
	struct skip sk[SL_KERN_MAX_LEAVES];
	int nsk = 0;

	for (int pc = 0; pc < p->ncode; pc++) {
		const struct insn *in = &p->code[pc];

		if (in->dst < 0 || in->dst >= KERN_MAX_TEMPS)
			return false;
		switch (in->op) {
		case OP_LOAD_I:
		case OP_LOAD_F:
		case OP_LOAD_S:
			t[in->dst].hold = H_COL;
			t[in->dst].load = in->op;
			t[in->dst].col = in->a;
			break;
		case OP_CMP_I:
		case OP_CMP_F:
		case OP_CMP_S:
			if (!add_leaf(p, k, t, in, pc, sk, nsk))
				return false;
			break;
		case OP_JF: {
			int to = (int)in->x.imm;
			const struct insn *and =
				to >= pc + 2 && to <= p->ncode ? &p->code[to - 1] : NULL;

			if (!readable(t, in->a, pc, sk, nsk) || t[in->a].hold != H_CONJ ||
			    !and || and->op != OP_AND || and->dst != in->dst || and->a != in->a ||
			    nsk == SL_KERN_MAX_LEAVES)
				return false;
			sk[nsk++] = (struct skip){ pc, to };
			continue; /* dst is written by its AND */
		}
		case OP_AND:
			if (!readable(t, in->a, pc, sk, nsk) || !readable(t, in->b, pc, sk, nsk) ||
			    t[in->a].hold != H_CONJ || t[in->b].hold != H_CONJ)
				return false;
			t[in->dst].leaves = t[in->a].leaves | t[in->b].leaves;
			t[in->dst].hold = H_CONJ;
			break;
		default:
			return false;
		}
		t[in->dst].written = pc;
	}
	/* every comparison must be part of the result, or the kernel would test one the
	 * program ignores */
	return k->n && readable(t, p->result, p->ncode, sk, nsk) && t[p->result].hold == H_CONJ &&
	       t[p->result].leaves == (1u << k->n) - 1;
}

static bool pick_arith(const struct sl_prog *p, struct kern *k)
{
	const struct insn *ld = &p->code[0], *op = &p->code[1];
	const struct reg *c;

	if (p->ncode != 2 || ld->op != OP_LOAD_F || ld->a >= 64 || ld->dst < 0 ||
	    p->rty.t != SL_TYPE_DOUBLE || op->dst != p->result ||
	    (op->op != OP_ADD_F64 && op->op != OP_SUB_F64 && op->op != OP_MUL_F64 &&
	     op->op != OP_DIV_F64))
		return false;
	if (op->a == ld->dst && (c = konst(p, op->b)))
		k->k_left = false;
	else if (op->b == ld->dst && (c = konst(p, op->a)))
		k->k_left = true;
	else
		return false;
	if (c->null)
		return false;
	k->aop = op->op;
	k->col = (int16_t)ld->a;
	k->kf = c->f;
	return true;
}

void sl_eval_kern_pick_(struct sl_prog *p)
{
	struct kern k = { 0 };

	p->kern.kind = KERN_NONE;
	if (p->ncode < 2 || p->ntemps > KERN_MAX_TEMPS)
		return;
	if (p->rty.t == SL_TYPE_BOOL && pick_conj(p, &k)) {
		k.kind = KERN_CONJ;
		p->kern = k;
		return;
	}
	k = (struct kern){ 0 };
	if (pick_arith(p, &k)) {
		k.kind = KERN_ARITH_F;
		p->kern = k;
	}
}
