/*
 * eval_kern_test.c - the expression kernels (engine/sql/eval_kern.h) against the
 * interpreter: each expression of the shapes they take must get its kernel, each of the
 * shapes they refuse must not, and on random rows (NULLs, NaN, -0.0, integer limits, strings
 * that share prefixes) every result - value and NULL - must be the interpreter's, through
 * sl_prog_eval, sl_prog_eval_pred and sl_prog_eval_into. The interpreter's answer comes from
 * a copy of the program with its kernel taken away. A fixed seed: the same rows every run.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval_cc.h"
#include "eval.h"
#include "test.h"

enum { F_I, F_B, F_F, F_G, F_S, F_T, F_FLAG, F_NFIELDS };

static struct sl_sql_col cols[F_NFIELDS];
static struct sl_scope scope = { cols, F_NFIELDS };

static void setup(void)
{
	static const char *const names[] = { "i", "b", "f", "g", "s", "t", "flag" };
	static const enum sl_type types[] = { SL_TYPE_INT,   SL_TYPE_BIGINT, SL_TYPE_DOUBLE,
					      SL_TYPE_FLOAT, SL_TYPE_STRING, SL_TYPE_TIMESTAMP,
					      SL_TYPE_BOOL };

	for (int k = 0; k < F_NFIELDS; k++) {
		cols[k].name = names[k];
		cols[k].field = k;
		cols[k].type = (struct sl_sql_type){
			.type = types[k],
			.prec = types[k] == SL_TYPE_TIMESTAMP ? SL_TS_PREC_DEFAULT : 0,
			.nullable = true,
		};
	}
}

static uint64_t rng = 7;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static unsigned below(unsigned n)
{
	return (unsigned)(next() % n);
}

static uint64_t rowbuf[256];

static const struct sl_row *random_row(void)
{
	static const int64_t ints[] = { 0,
					1,
					-1,
					5,
					6,
					4,
					100,
					-100,
					INT32_MAX,
					INT32_MIN,
					INT64_MAX,
					INT64_MIN,
					1704067200000LL };
	static const double dbls[] = { 0.0,   -0.0,   5.0,	5.000000001, 4.99, 1.5,	 -1.5,
				       1e300, -1e300, INFINITY, -INFINITY,   NAN,  0.92, 100.0 };
	static const char *const strs[] = { "void", "voi",     "voids",	  "paid", "",
					    "Void", "pending", "shipped", "a",	  "\xc3\xa9" };
	struct sl_row_builder b;

	sl_rowb_init(&b, rowbuf, sizeof rowbuf, F_NFIELDS);
	for (int k = 0; k < F_NFIELDS; k++) {
		if (below(6) == 0)
			continue; /* NULL */
		switch (k) {
		case F_I:
			sl_rowb_set_i64(&b, k, below(2) ? (int32_t)next() % 200 : (int32_t)next());
			break;
		case F_B:
		case F_T:
			sl_rowb_set_i64(&b, k, below(2) ? ints[below(13)] : (int64_t)next());
			break;
		case F_F:
			sl_rowb_set_f64(
				&b, k, below(2) ? dbls[below(14)] : (double)(int)below(2000) / 100);
			break;
		case F_G:
			sl_rowb_set_f64(&b, k, (double)(float)dbls[below(14)]);
			break;
		case F_S: {
			const char *s = strs[below(10)];

			sl_rowb_set_str(&b, k, s, (uint32_t)strlen(s));
			break;
		}
		default:
			sl_rowb_set_bool(&b, k, below(2));
			break;
		}
	}
	T_ASSERT(sl_rowb_finish(&b));
	return (const struct sl_row *)rowbuf;
}

static struct sl_prog *compile(const char *src, struct sl_sql_type *t)
{
	char err[256];
	struct sl_expr *e = sl_expr_parse_str(src, strlen(src), err, sizeof err);
	struct sl_prog *p;

	if (!e) {
		fprintf(stderr, "parse of '%s' failed: %s\n", src, err);
		exit(T_EXIT_FAIL);
	}
	p = sl_prog_compile(e, &scope, NULL, t, err, sizeof err);
	if (!p) {
		fprintf(stderr, "compile of '%s' failed: %s\n", src, err);
		exit(T_EXIT_FAIL);
	}
	sl_expr_destroy(e);
	return p;
}

static bool same_val(const struct sl_val *a, const struct sl_val *b, enum sl_type t)
{
	if (a->null || b->null)
		return a->null == b->null;
	if (t == SL_TYPE_DOUBLE || t == SL_TYPE_FLOAT)
		return !memcmp(&a->f, &b->f, sizeof a->f) || (isnan(a->f) && isnan(b->f));
	return a->i == b->i;
}

static char scratch[4096];

/* src must (want_kern) or must not get a kernel; either way its results are the VM's. */
static void check(const char *src, int want_kern)
{
	struct sl_sql_type t, to;
	struct sl_prog *p = compile(src, &t);
	struct sl_prog vm = *p;
	struct sl_eval_ctx ec = { .scratch = scratch, .scratch_cap = sizeof scratch };
	_Alignas(8) char ob1[256], ob2[256];

	if ((p->kern.kind != KERN_NONE) != (want_kern != KERN_NONE) ||
	    (want_kern && p->kern.kind != want_kern)) {
		fprintf(stderr, "'%s': kernel %d, expected %d\n", src, p->kern.kind, want_kern);
		exit(T_EXIT_FAIL);
	}
	vm.kern.kind = KERN_NONE;
	to = t;
	for (int n = 0; n < 20000; n++) {
		const struct sl_row *row = random_row();
		struct sl_val a, b;
		struct sl_row_builder b1, b2;

		sl_prog_eval(p, row, &ec, &a);
		sl_prog_eval(&vm, row, &ec, &b);
		if (!same_val(&a, &b, t.type)) {
			fprintf(stderr, "'%s' row %d: kernel %s %lld/%g, interpreter %s %lld/%g\n",
				src, n, a.null ? "NULL" : "", (long long)a.i, a.f,
				b.null ? "NULL" : "", (long long)b.i, b.f);
			exit(T_EXIT_FAIL);
		}
		T_ASSERT(sl_prog_eval_pred(p, row, &ec) == sl_prog_eval_pred(&vm, row, &ec) ||
			 t.type != SL_TYPE_BOOL);
		sl_rowb_init(&b1, ob1, sizeof ob1, 1);
		sl_rowb_init(&b2, ob2, sizeof ob2, 1);
		sl_prog_eval_into(p, row, &ec, &to, &b1, 0);
		sl_prog_eval_into(&vm, row, &ec, &to, &b2, 0);
		T_ASSERT(b1.row->nulls == b2.row->nulls && b1.row->slot[0] == b2.row->slot[0]);
	}
	T_ASSERT(ec.errors == 0);
	sl_prog_destroy(p);
}

int main(void)
{
	static const struct {
		const char *src;
		int kern;
	} cases[] = {
		/* the shapes the kernels take */
		{ "s <> 'void' AND f > 5", KERN_CONJ },
		{ "f > 5", KERN_CONJ },
		{ "5 < f", KERN_CONJ },
		{ "s = 'paid'", KERN_CONJ },
		{ "'paid' = s", KERN_CONJ },
		{ "s < 'paid'", KERN_CONJ },
		{ "s >= 'void'", KERN_CONJ },
		{ "b >= 100 AND b <= 1704067200000", KERN_CONJ },
		{ "t > TIMESTAMP '2024-01-01 00:00:00' AND b <> 0", KERN_CONJ },
		{ "(f > 1 AND s <> 'a') AND (b < 7 AND f <= 100)", KERN_CONJ },
		{ "f > 1 AND (s <> 'a' AND (b < 7 AND f <> 0.92))", KERN_CONJ },
		{ "b BETWEEN 4 AND 100", KERN_CONJ },
		{ "f = 0", KERN_CONJ },
		{ "g > 0.5", KERN_NONE }, /* FLOAT: the column is widened first */
		{ "flag = TRUE", KERN_CONJ },
		{ "f * 0.92", KERN_ARITH_F },
		{ "0.92 * f", KERN_ARITH_F },
		{ "f + 1.5", KERN_ARITH_F },
		{ "f - 2", KERN_ARITH_F },
		{ "100 - f", KERN_ARITH_F },
		{ "f / 3", KERN_ARITH_F },
		{ "1 / f", KERN_ARITH_F },
		/* shapes they leave to the interpreter (the results still compared) */
		{ "s <> 'void' OR f > 5", KERN_NONE },
		{ "NOT (f > 5)", KERN_NONE },
		{ "f > b", KERN_NONE },
		{ "i + 1 > 5", KERN_NONE },
		{ "f > 5 AND f IS NOT NULL", KERN_NONE },
		{ "f * 2 * 3", KERN_NONE },
		{ "b * 2", KERN_NONE },
		{ "f > 5 AND (s = 'a' OR s = 'void')", KERN_NONE },
		{ "f > CAST(NULL AS DOUBLE)", KERN_NONE },
	};

	setup();
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
		check(cases[k].src, cases[k].kern);
	return T_EXIT_PASS;
}
