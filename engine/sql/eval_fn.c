/*
 * eval_fn.c - the SQL function library of the expression compiler: name lookup (with
 * Flink's aggregate and window functions refused where they are not computed), argument
 * checks, result types (Flink's, e.g. ROUND(DECIMAL(p, s), r)), and the instructions each
 * function compiles to. Plan time only; the kernels are in eval_vm.c.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/udf.h>

#include "eval_cc.h"

static bool need_args(struct compiler *c, const struct sl_expr *e, uint32_t min, uint32_t max,
		      const char *name)
{
	if (e->nargs < min || e->nargs > max) {
		if (min == max)
			return sl_compiler_fail(c, e, "%s expects %u argument%s, got %u", name, min,
						min == 1 ? "" : "s", e->nargs);
		return sl_compiler_fail(c, e, "%s expects %u to %u arguments, got %u", name, min,
					max, e->nargs);
	}
	return true;
}

struct fn;
typedef bool (*fn_compile)(struct compiler *c, const struct sl_expr *e, const struct fn *f,
			   struct opnd *o);

struct fn {
	const char *name;
	uint8_t min, max; /* argument counts; max 255 = any */
	uint8_t id;	  /* opcode or sub-function, per compile function */
	fn_compile compile;
};

bool sl_compiler_now(struct compiler *c, const struct sl_expr *e, enum sl_type t, struct opnd *o)
{
	struct insn *in = sl_compiler_emit_to(c, e, OP_NOW, 0, NOREG, mk(t, false), o);

	if (!in)
		return false;
	c->nonconst++;
	in->x.imm = t == SL_TYPE_TIMESTAMP_LTZ ? 0 : c->p->tz;
	in->sub = t == SL_TYPE_DATE;
	return true;
}

static bool fn_now(struct compiler *c, const struct sl_expr *e, const struct fn *f, struct opnd *o)
{
	return sl_compiler_now(c, e, (enum sl_type)f->id, o);
}

static bool fn_watermark(struct compiler *c, const struct sl_expr *e, const struct fn *f,
			 struct opnd *o)
{
	return sl_compiler_current_watermark(c, e, o);
}

static bool fn_str1(struct compiler *c, const struct sl_expr *e, const struct fn *f, struct opnd *o)
{
	struct opnd x;

	if (!sl_compiler_arg(c, e, 0, &x) ||
	    !sl_compiler_want(c, e->args[0], &x, SL_TYPE_STRING, f->name))
		return false;
	return sl_compiler_emit_to(
		       c, e, (enum op)f->id, x.r, NOREG,
		       mk(f->id == OP_CHAR_LEN ? SL_TYPE_INT : SL_TYPE_STRING, x.t.nullable),
		       o) != NULL;
}

static bool fn_concat(struct compiler *c, const struct sl_expr *e, const struct fn *f,
		      struct opnd *o)
{
	struct opnd parts[64], sep;
	uint32_t first = f->id ? 1 : 0;

	if (e->nargs - first > 64)
		return sl_compiler_fail(c, e, "%s takes at most 64 strings", f->name);
	if (f->id && (!sl_compiler_arg(c, e, 0, &sep) ||
		      !sl_compiler_want(c, e->args[0], &sep, SL_TYPE_STRING, f->name)))
		return false;
	for (uint32_t i = first; i < e->nargs; i++)
		if (!sl_compiler_arg(c, e, i, &parts[i - first]) ||
		    !sl_compiler_want(c, e->args[i], &parts[i - first], SL_TYPE_STRING, f->name))
			return false;
	return sl_compiler_concat(c, e, f->id ? &sep : NULL, parts, e->nargs - first, o);
}

static bool fn_substr(struct compiler *c, const struct sl_expr *e, const struct fn *f,
		      struct opnd *o)
{
	struct opnd s, pos, len = { .r = NOREG };
	struct insn *in;

	if (!sl_compiler_arg(c, e, 0, &s) ||
	    !sl_compiler_want(c, e->args[0], &s, SL_TYPE_STRING, f->name) ||
	    !sl_compiler_arg(c, e, 1, &pos) || !sl_compiler_want_int(c, e->args[1], &pos, f->name))
		return false;
	if (e->nargs > 2 && (!sl_compiler_arg(c, e, 2, &len) ||
			     !sl_compiler_want_int(c, e->args[2], &len, f->name)))
		return false;
	in = sl_compiler_emit_to(c, e, OP_SUBSTR, s.r, pos.r,
				 mk(SL_TYPE_STRING, s.t.nullable || pos.t.nullable || e->nargs > 2),
				 o);
	if (!in)
		return false;
	in->c = len.r;
	return true;
}

static bool fn_trim(struct compiler *c, const struct sl_expr *e, const struct fn *f, struct opnd *o)
{
	struct opnd s, chars = { .r = NOREG };
	struct insn *in;
	bool nullable;

	if (!sl_compiler_arg(c, e, 0, &s) ||
	    !sl_compiler_want(c, e->args[0], &s, SL_TYPE_STRING, f->name))
		return false;
	if (e->nargs > 1 && (!sl_compiler_arg(c, e, 1, &chars) ||
			     !sl_compiler_want(c, e->args[1], &chars, SL_TYPE_STRING, f->name)))
		return false;
	nullable = s.t.nullable || (e->nargs > 1 && chars.t.nullable);
	in = sl_compiler_emit_to(c, e, OP_TRIM, s.r, chars.r, mk(SL_TYPE_STRING, nullable), o);
	if (!in)
		return false;
	in->sub = f->id;
	return true;
}

static bool fn_replace(struct compiler *c, const struct sl_expr *e, const struct fn *f,
		       struct opnd *o)
{
	struct opnd a[3];
	struct insn *in;

	for (uint32_t i = 0; i < 3; i++)
		if (!sl_compiler_arg(c, e, i, &a[i]) ||
		    !sl_compiler_want(c, e->args[i], &a[i], SL_TYPE_STRING, f->name))
			return false;
	in = sl_compiler_emit_to(
		c, e, OP_REPLACE, a[0].r, a[1].r,
		mk(SL_TYPE_STRING, a[0].t.nullable || a[1].t.nullable || a[2].t.nullable), o);
	if (!in)
		return false;
	in->c = a[2].r;
	return true;
}

/* SPLIT_INDEX(s, sep STRING | character code INT, idx INT) -> STRING (NULL out of range) */
static bool fn_split_index(struct compiler *c, const struct sl_expr *e, const struct fn *f,
			   struct opnd *o)
{
	struct opnd s, sep, idx;
	struct insn *in;
	bool code;

	if (!sl_compiler_arg(c, e, 0, &s) ||
	    !sl_compiler_want(c, e->args[0], &s, SL_TYPE_STRING, f->name) ||
	    !sl_compiler_arg(c, e, 1, &sep))
		return false;
	code = is_int(&sep.t);
	if (!code && !sl_compiler_want(c, e->args[1], &sep, SL_TYPE_STRING, f->name))
		return false;
	if (!sl_compiler_arg(c, e, 2, &idx) || !sl_compiler_want_int(c, e->args[2], &idx, f->name))
		return false;
	in = sl_compiler_emit_to(c, e, OP_SPLIT_INDEX, s.r, sep.r, mk(SL_TYPE_STRING, true), o);
	if (!in)
		return false;
	in->c = idx.r;
	in->sub = code;
	return true;
}

/*
 * REGEXP(s, re) -> BOOLEAN, REGEXP_EXTRACT(s, re[, group INT]) and REGEXP_REPLACE(s, re,
 * with) -> STRING (NULL when the pattern fails at run time, as Flink's). A literal pattern
 * compiles here, once, and one that does not compile is refused with PCRE2's reason, where
 * Flink would give NULL (or FALSE) for every record: the call could never give a value, and
 * it is where a Java-only construct shows.
 */
static bool fn_regexp(struct compiler *c, const struct sl_expr *e, const struct fn *f,
		      struct opnd *o)
{
	struct opnd s, re, x = { .r = NOREG };
	const struct reg *v;
	struct sl_regex *rx;
	struct insn *in;
	char why[200];

	if (!sl_compiler_arg(c, e, 0, &s) ||
	    !sl_compiler_want(c, e->args[0], &s, SL_TYPE_STRING, f->name) ||
	    !sl_compiler_arg(c, e, 1, &re) ||
	    !sl_compiler_want(c, e->args[1], &re, SL_TYPE_STRING, f->name))
		return false;
	if (e->nargs > 2) {
		if (!sl_compiler_arg(c, e, 2, &x))
			return false;
		if (f->id == RE_EXTRACT
			    ? !sl_compiler_want_int(c, e->args[2], &x, f->name)
			    : !sl_compiler_want(c, e->args[2], &x, SL_TYPE_STRING, f->name))
			return false;
	}
	in = sl_compiler_emit_to(c, e, OP_REGEX, s.r, re.r,
				 mk(f->id == RE_MATCH ? SL_TYPE_BOOL : SL_TYPE_STRING,
				    f->id == RE_MATCH ? s.t.nullable || re.t.nullable : true),
				 o);
	if (!in)
		return false;
	in->sub = f->id;
	in->c = x.r;
	if (!re.cst || (v = constval(c, re.r))->null)
		return true; /* compiled per record (or NULL: the result is NULL) */
	rx = sl_eval_regex_compile_(v->s.p, v->s.len, why, sizeof why);
	if (!rx)
		return sl_compiler_fail(c, e->args[1],
					"%s: the regular expression '%.*s' does not compile: %s",
					f->name, (int)v->s.len, v->s.p, why);
	if (!sl_compiler_own_regex(c, rx))
		return false;
	in->x.ptr = rx;
	return true;
}

static bool fn_locate(struct compiler *c, const struct sl_expr *e, const struct fn *f,
		      struct opnd *o)
{
	struct opnd a, b, s = { .r = NOREG };
	struct insn *in;

	if (!sl_compiler_arg(c, e, 0, &a) ||
	    !sl_compiler_want(c, e->args[0], &a, SL_TYPE_STRING, f->name) ||
	    !sl_compiler_arg(c, e, 1, &b) ||
	    !sl_compiler_want(c, e->args[1], &b, SL_TYPE_STRING, f->name))
		return false;
	if (e->nargs > 2 &&
	    (!sl_compiler_arg(c, e, 2, &s) || !sl_compiler_want_int(c, e->args[2], &s, f->name)))
		return false;
	in = sl_compiler_emit_to(
		c, e, OP_LOCATE, a.r, b.r,
		mk(SL_TYPE_INT, a.t.nullable || b.t.nullable || (e->nargs > 2 && s.t.nullable)), o);
	if (!in)
		return false;
	in->c = s.r;
	return true;
}

static bool fn_if(struct compiler *c, const struct sl_expr *e, const struct fn *f, struct opnd *o)
{
	return sl_compiler_case(c, e, NULL, e->args, 1, e->args[2], o);
}

static bool fn_coalesce(struct compiler *c, const struct sl_expr *e, const struct fn *f,
			struct opnd *o)
{
	return sl_compiler_coalesce(c, e, o);
}

static bool fn_nullif(struct compiler *c, const struct sl_expr *e, const struct fn *f,
		      struct opnd *o)
{
	return sl_compiler_nullif(c, e, o);
}

static bool fn_mod(struct compiler *c, const struct sl_expr *e, const struct fn *f, struct opnd *o)
{
	struct opnd x, y;

	if (!sl_compiler_arg(c, e, 0, &x) || !sl_compiler_arg(c, e, 1, &y))
		return false;
	return sl_compiler_arith(c, e, SL_EXPR_OP_MOD, x, y, o);
}

static bool fn_abs(struct compiler *c, const struct sl_expr *e, const struct fn *f, struct opnd *o)
{
	struct opnd x;
	enum op op;

	if (!sl_compiler_arg(c, e, 0, &x) || !sl_compiler_want_num(c, e->args[0], &x, f->name))
		return false;
	op = x.t.type == SL_TYPE_INT	   ? OP_ABS_I32
	     : x.t.type == SL_TYPE_BIGINT  ? OP_ABS_I64
	     : x.t.type == SL_TYPE_DECIMAL ? OP_ABS_D
					   : OP_ABS_F;
	return sl_compiler_emit_to(c, e, op, x.r, NOREG, x.t, o) != NULL;
}

/* Flink's findRoundDecimalType: ROUND(DECIMAL(p, s), r), FLOOR and CEIL (r = 0). */
static struct sl_dec_type round_type(struct sl_dec_type t, int64_t r)
{
	int p;

	if (r >= t.scale)
		return t;
	if (r < 0) {
		p = 1 + t.prec - t.scale;
		return (struct sl_dec_type){ (uint8_t)(p > 38 ? 38 : p), 0 };
	}
	p = 1 + t.prec - t.scale + (int)r;
	return (struct sl_dec_type){ (uint8_t)(p > 38 ? 38 : p), (uint8_t)r };
}

static bool fn_round(struct compiler *c, const struct sl_expr *e, const struct fn *f,
		     struct opnd *o)
{
	struct opnd x, n;
	int64_t digits = 0;
	struct insn *in;

	if (!sl_compiler_arg(c, e, 0, &x) || !sl_compiler_want_num(c, e->args[0], &x, f->name))
		return false;
	if (e->nargs > 1 &&
	    (!sl_compiler_arg(c, e, 1, &n) ||
	     !sl_compiler_const_int(c, e->args[1], &n, "ROUND's digit count", &digits)))
		return false;
	if (digits < -64 || digits > 64)
		return sl_compiler_fail(c, e->args[1],
					"ROUND's digit count must be within -64..64");
	if (x.t.type == SL_TYPE_DECIMAL) {
		struct sl_dec_type ta = dec_of(&x.t), tr = round_type(ta, digits);

		in = sl_compiler_emit_to(c, e, OP_ROUND_D, x.r, NOREG, mk_dec(tr, x.t.nullable), o);
		if (!in)
			return false;
		in->x.dec.ta = ta;
		in->x.dec.tr = tr;
		in->imm2 = digits;
		return true;
	}
	in = sl_compiler_emit_to(c, e, is_int(&x.t) ? OP_ROUND_I : OP_ROUND_F, x.r, NOREG,
				 mk(x.t.type, x.t.nullable || (is_int(&x.t) && digits < 0)), o);
	if (!in)
		return false;
	in->x.imm = digits;
	in->flag = x.t.type == SL_TYPE_INT || x.t.type == SL_TYPE_FLOAT;
	return true;
}

static bool fn_floor_ceil(struct compiler *c, const struct sl_expr *e, const struct fn *f,
			  struct opnd *o)
{
	bool ceil_ = f->id;
	struct opnd x;
	struct insn *in;

	if (!sl_compiler_arg(c, e, 0, &x) || !sl_compiler_want_num(c, e->args[0], &x, f->name))
		return false;
	if (is_int(&x.t) || (x.t.type == SL_TYPE_DECIMAL && x.t.scale == 0)) {
		*o = x;
		return true;
	}
	if (x.t.type == SL_TYPE_DECIMAL) {
		struct sl_dec_type ta = dec_of(&x.t), tr = round_type(ta, 0);

		in = sl_compiler_emit_to(c, e, ceil_ ? OP_CEIL_D : OP_FLOOR_D, x.r, NOREG,
					 mk_dec(tr, x.t.nullable), o);
		if (!in)
			return false;
		in->x.dec.ta = ta;
		in->x.dec.tr = tr;
		return true;
	}
	return sl_compiler_emit_to(c, e, ceil_ ? OP_CEIL_F : OP_FLOOR_F, x.r, NOREG, x.t, o) !=
	       NULL;
}

static bool fn_math(struct compiler *c, const struct sl_expr *e, const struct fn *f, struct opnd *o)
{
	struct opnd x, y;
	struct insn *in;

	if (!sl_compiler_arg(c, e, 0, &x) || !sl_compiler_want_num(c, e->args[0], &x, f->name) ||
	    !sl_compiler_conv_t(c, e, &x, SL_TYPE_DOUBLE))
		return false;
	if (f->id == 255) { /* POWER */
		if (!sl_compiler_arg(c, e, 1, &y) ||
		    !sl_compiler_want_num(c, e->args[1], &y, f->name) ||
		    !sl_compiler_conv_t(c, e, &y, SL_TYPE_DOUBLE))
			return false;
		return sl_compiler_emit_to(c, e, OP_POWER, x.r, y.r,
					   mk(SL_TYPE_DOUBLE, x.t.nullable || y.t.nullable),
					   o) != NULL;
	}
	if (f->id == 254) { /* LOG(x) = LN(x); LOG(b, x) = LN(x) / LN(b) */
		struct opnd lb;

		if (e->nargs == 2) {
			if (!sl_compiler_arg(c, e, 1, &y) ||
			    !sl_compiler_want_num(c, e->args[1], &y, f->name) ||
			    !sl_compiler_conv_t(c, e, &y, SL_TYPE_DOUBLE))
				return false;
			in = sl_compiler_emit_to(c, e, OP_MATH, x.r, NOREG, x.t, &lb);
			if (!in)
				return false;
			in->sub = MATH_LN;
			x = y;
		}
		in = sl_compiler_emit_to(c, e, OP_MATH, x.r, NOREG, x.t, o);
		if (!in)
			return false;
		in->sub = MATH_LN;
		if (e->nargs == 2)
			return sl_compiler_emit_to(
				c, e, OP_DIV_F64, o->r, lb.r,
				mk(SL_TYPE_DOUBLE, o->t.nullable || lb.t.nullable), o);
		return true;
	}
	in = sl_compiler_emit_to(c, e, OP_MATH, x.r, NOREG, x.t, o);
	if (!in)
		return false;
	in->sub = f->id;
	return true;
}

/* A format argument: precompiled when constant, else read per record. */
static bool fmt_arg(struct compiler *c, const struct sl_expr *e, uint32_t i, const char *name,
		    struct insn *in, const struct opnd *fo)
{
	struct tfmt *tf;
	const struct reg *v;

	if (!fo->cst) {
		in->b = fo->r;
		return true;
	}
	v = constval(c, fo->r);
	if (v->null) {
		in->b = fo->r; /* NULL format: NULL result, per record */
		return true;
	}
	tf = malloc(sizeof(*tf));
	if (!sl_compiler_own(c, tf))
		return false;
	if (sl_eval_tfmt_compile_(v->s.p, v->s.len, tf))
		return sl_compiler_fail(c, e->args[i],
					"unsupported date/time format '%.*s' (known: yyyy yy "
					"MM M dd d HH H hh h mm ss S..S a, 'text')",
					(int)v->s.len, v->s.p);
	in->x.ptr = tf;
	return true;
}

static bool fn_parse_time(struct compiler *c, const struct sl_expr *e, const struct fn *f,
			  struct opnd *o)
{
	enum op op = (enum op)f->id;
	enum sl_type t = op == OP_TO_DATE   ? SL_TYPE_DATE
			 : op == OP_UNIX_TS ? SL_TYPE_BIGINT
					    : SL_TYPE_TIMESTAMP;
	struct opnd s, fo;
	struct insn *in;

	if (op == OP_UNIX_TS && e->nargs == 0) {
		/* UNIX_TIMESTAMP(): now, in seconds */
		struct sl_sql_type bt = mk(SL_TYPE_BIGINT, false);

		return sl_compiler_now(c, e, SL_TYPE_TIMESTAMP_LTZ, o) &&
		       sl_compiler_conv(c, e, o, &bt);
	}
	if (!sl_compiler_arg(c, e, 0, &s) ||
	    !sl_compiler_want(c, e->args[0], &s, SL_TYPE_STRING, f->name))
		return false;
	if (e->nargs > 1 && (!sl_compiler_arg(c, e, 1, &fo) ||
			     !sl_compiler_want(c, e->args[1], &fo, SL_TYPE_STRING, f->name)))
		return false;
	in = sl_compiler_emit_to(c, e, op, s.r, NOREG, mk(t, true), o);
	if (!in)
		return false;
	in->imm2 = c->p->tz;
	if (e->nargs > 1)
		return fmt_arg(c, e, 1, f->name, in, &fo);
	in->flag = 1;
	return true;
}

static bool fn_to_ltz(struct compiler *c, const struct sl_expr *e, const struct fn *f,
		      struct opnd *o)
{
	struct opnd x, pr;
	int64_t prec = 3;
	struct insn *in;

	if (!sl_compiler_arg(c, e, 0, &x) || !sl_compiler_want_num(c, e->args[0], &x, f->name))
		return false;
	if (e->nargs > 1 &&
	    (!sl_compiler_arg(c, e, 1, &pr) ||
	     !sl_compiler_const_int(c, e->args[1], &pr, "TO_TIMESTAMP_LTZ's precision", &prec)))
		return false;
	if (prec != 0 && prec != 3)
		return sl_compiler_fail(c, e->args[1],
					"TO_TIMESTAMP_LTZ's precision must be 0 (seconds) or "
					"3 (milliseconds), got %lld",
					(long long)prec);
	/* seconds that overflow milliseconds, NaN, 1e308: NULL, counted */
	in = sl_compiler_emit_to(
		c, e, OP_TO_LTZ, x.r, NOREG,
		mk(SL_TYPE_TIMESTAMP_LTZ, x.t.nullable || !is_int(&x.t) || prec == 0), o);
	if (!in)
		return false;
	in->sub = is_int(&x.t) ? 0 : x.t.type == SL_TYPE_DECIMAL ? 1 : 2;
	in->x.imm = prec == 0 ? 1000 : 1;
	in->imm2 = x.t.type == SL_TYPE_DECIMAL ? x.t.scale : 0;
	return true;
}

static bool fn_format_time(struct compiler *c, const struct sl_expr *e, const struct fn *f,
			   struct opnd *o)
{
	enum op op = (enum op)f->id;
	struct opnd x, fo;
	struct insn *in;

	if (!sl_compiler_arg(c, e, 0, &x))
		return false;
	if (op == OP_FROM_UNIXTIME) {
		if (!sl_compiler_want_int(c, e->args[0], &x, f->name))
			return false;
	} else if (is_str(&x.t)) {
		struct sl_sql_type ts = mk(SL_TYPE_TIMESTAMP, true);

		if (!sl_compiler_conv_ex(c, e->args[0], &x, &ts, 0, true))
			return false;
		x.t.nullable = true;
	} else if (x.t.null_type || is_time(&x.t)) {
		if (!sl_compiler_conv_t(c, e->args[0], &x, SL_TYPE_TIMESTAMP))
			return false;
	} else {
		return sl_compiler_fail(c, e->args[0], "%s expects a TIMESTAMP or STRING, got %s",
					f->name, sl_compiler_type_name(&x.t, 0));
	}
	if (e->nargs > 1 && (!sl_compiler_arg(c, e, 1, &fo) ||
			     !sl_compiler_want(c, e->args[1], &fo, SL_TYPE_STRING, f->name)))
		return false;
	/* a format read per record may be invalid; seconds * 1000 may overflow */
	in = sl_compiler_emit_to(
		c, e, op, x.r, NOREG,
		mk(SL_TYPE_STRING, x.t.nullable || op == OP_FROM_UNIXTIME ||
					   (e->nargs > 1 && (fo.t.nullable || !fo.cst))),
		o);
	if (!in)
		return false;
	in->imm2 = c->p->tz;
	if (e->nargs > 1)
		return fmt_arg(c, e, 1, f->name, in, &fo);
	return true;
}

static bool fn_extract(struct compiler *c, const struct sl_expr *e, const struct fn *f,
		       struct opnd *o)
{
	struct opnd x;
	struct insn *in;

	if (!sl_compiler_arg(c, e, 0, &x))
		return false;
	if (!x.t.null_type && !is_time(&x.t))
		return sl_compiler_fail(c, e->args[0], "%s expects a DATE or TIMESTAMP, got %s",
					f->name, sl_compiler_type_name(&x.t, 0));
	if (!sl_compiler_conv_t(c, e->args[0], &x, SL_TYPE_TIMESTAMP))
		return false;
	in = sl_compiler_emit_to(c, e, OP_EXTRACT, x.r, NOREG, mk(SL_TYPE_BIGINT, x.t.nullable), o);
	if (!in)
		return false;
	in->sub = f->id;
	return true;
}

static const struct fn fns[] = {
	{ "UPPER", 1, 1, OP_UPPER, fn_str1 },
	{ "LOWER", 1, 1, OP_LOWER, fn_str1 },
	{ "INITCAP", 1, 1, OP_INITCAP, fn_str1 },
	{ "CHAR_LENGTH", 1, 1, OP_CHAR_LEN, fn_str1 },
	{ "CHARACTER_LENGTH", 1, 1, OP_CHAR_LEN, fn_str1 },
	{ "CONCAT", 1, 255, 0, fn_concat },
	{ "CONCAT_WS", 2, 255, 1, fn_concat },
	{ "SUBSTRING", 2, 3, 0, fn_substr },
	{ "SUBSTR", 2, 3, 0, fn_substr },
	{ "TRIM", 1, 2, 3, fn_trim },
	{ "BTRIM", 1, 2, 3, fn_trim },
	{ "LTRIM", 1, 2, 1, fn_trim },
	{ "RTRIM", 1, 2, 2, fn_trim },
	{ "REPLACE", 3, 3, 0, fn_replace },
	{ "LOCATE", 2, 3, 0, fn_locate },
	{ "SPLIT_INDEX", 3, 3, 0, fn_split_index },
	{ "REGEXP", 2, 2, RE_MATCH, fn_regexp },
	{ "REGEXP_EXTRACT", 2, 3, RE_EXTRACT, fn_regexp },
	{ "REGEXP_REPLACE", 3, 3, RE_REPLACE, fn_regexp },
	{ "IF", 3, 3, 0, fn_if },
	{ "COALESCE", 1, 255, 0, fn_coalesce },
	{ "IFNULL", 2, 2, 0, fn_coalesce },
	{ "NULLIF", 2, 2, 0, fn_nullif },
	{ "MOD", 2, 2, 0, fn_mod },
	{ "ABS", 1, 1, 0, fn_abs },
	{ "ROUND", 1, 2, 0, fn_round },
	{ "FLOOR", 1, 1, 0, fn_floor_ceil },
	{ "CEIL", 1, 1, 1, fn_floor_ceil },
	{ "CEILING", 1, 1, 1, fn_floor_ceil },
	{ "POWER", 2, 2, 255, fn_math },
	{ "POW", 2, 2, 255, fn_math },
	{ "SQRT", 1, 1, MATH_SQRT, fn_math },
	{ "LN", 1, 1, MATH_LN, fn_math },
	{ "LOG10", 1, 1, MATH_LOG10, fn_math },
	{ "LOG2", 1, 1, MATH_LOG2, fn_math },
	{ "LOG", 1, 2, 254, fn_math },
	{ "EXP", 1, 1, MATH_EXP, fn_math },
	{ "TO_TIMESTAMP", 1, 2, OP_TO_TS, fn_parse_time },
	{ "TO_DATE", 1, 2, OP_TO_DATE, fn_parse_time },
	{ "UNIX_TIMESTAMP", 0, 2, OP_UNIX_TS, fn_parse_time },
	{ "TO_TIMESTAMP_LTZ", 1, 2, 0, fn_to_ltz },
	{ "FROM_UNIXTIME", 1, 2, OP_FROM_UNIXTIME, fn_format_time },
	{ "DATE_FORMAT", 2, 2, OP_DATE_FMT, fn_format_time },
	{ "NOW", 0, 0, SL_TYPE_TIMESTAMP_LTZ, fn_now },
	{ "CURRENT_TIMESTAMP", 0, 0, SL_TYPE_TIMESTAMP_LTZ, fn_now },
	{ "PROCTIME", 0, 0, SL_TYPE_TIMESTAMP_LTZ, fn_now },
	{ "CURRENT_WATERMARK", 1, 1, 0, fn_watermark },
	{ "LOCALTIMESTAMP", 0, 0, SL_TYPE_TIMESTAMP, fn_now },
	{ "CURRENT_DATE", 0, 0, SL_TYPE_DATE, fn_now },
	{ "YEAR", 1, 1, EX_YEAR, fn_extract },
	{ "QUARTER", 1, 1, EX_QUARTER, fn_extract },
	{ "MONTH", 1, 1, EX_MONTH, fn_extract },
	{ "WEEK", 1, 1, EX_WEEK, fn_extract },
	{ "DAYOFMONTH", 1, 1, EX_DAY, fn_extract },
	{ "DAYOFYEAR", 1, 1, EX_DOY, fn_extract },
	{ "DAYOFWEEK", 1, 1, EX_DOW, fn_extract },
	{ "HOUR", 1, 1, EX_HOUR, fn_extract },
	{ "MINUTE", 1, 1, EX_MINUTE, fn_extract },
	{ "SECOND", 1, 1, EX_SECOND, fn_extract },
};

static const char *const aggregates[] = {
	"COUNT",
	"SUM",
	"SUM0",
	"AVG",
	"MIN",
	"MAX",
	"FIRST_VALUE",
	"LAST_VALUE",
	"LISTAGG",
	"COLLECT",
	"STDDEV_POP",
	"STDDEV_SAMP",
	"VAR_POP",
	"VAR_SAMP",
	"STDDEV",
	"VARIANCE",
	"APPROX_COUNT_DISTINCT",
	NULL,
};

static const char *const windowfns[] = {
	"ROW_NUMBER",
	"RANK",
	"DENSE_RANK",
	"PERCENT_RANK",
	"CUME_DIST",
	"NTILE",
	"LAG",
	"LEAD",
	"TUMBLE",
	"HOP",
	"SESSION",
	"CUMULATE",
	"TUMBLE_START",
	"TUMBLE_END",
	"TUMBLE_ROWTIME",
	"TUMBLE_PROCTIME",
	"HOP_START",
	"HOP_END",
	"HOP_ROWTIME",
	"HOP_PROCTIME",
	"SESSION_START",
	"SESSION_END",
	"SESSION_ROWTIME",
	"SESSION_PROCTIME",
	NULL,
};

static bool in_names(const char *const *names, const char *s)
{
	for (; *names; names++)
		if (!strcasecmp(*names, s))
			return true;
	return false;
}

bool sl_sql_is_builtin_function(const char *name)
{
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (!strcasecmp(fns[i].name, name))
			return true;
	return in_names(aggregates, name) || in_names(windowfns, name) ||
	       !strcasecmp(name, "CAST") || !strcasecmp(name, "TRY_CAST") ||
	       !strcasecmp(name, "EXTRACT") || !strcasecmp(name, "POSITION");
}

static_assert(sizeof(((struct udf_call *)0)->ops) / sizeof(int32_t) == SL_UDF_MAX_ARGS,
	      "a call record holds every argument a descriptor may declare");

static enum sl_type udf_sql_type(enum sl_udf_type t)
{
	switch (t) {
	case SL_UDF_BOOLEAN:
		return SL_TYPE_BOOL;
	case SL_UDF_INT:
		return SL_TYPE_INT;
	case SL_UDF_BIGINT:
		return SL_TYPE_BIGINT;
	case SL_UDF_DOUBLE:
		return SL_TYPE_DOUBLE;
	default:
		return SL_TYPE_STRING;
	}
}

/*
 * A call of a C function: each argument converted to the declared type where SQL widens
 * implicitly (INT to BIGINT, any number to DOUBLE), anything else refused naming the
 * library. The result may be NULL (a failure of the function is). Never folded, even over
 * constants: the function need not be deterministic.
 */
static bool call_udf(struct compiler *c, const struct sl_expr *e, const struct sl_sql_udf *u,
		     struct opnd *o)
{
	const struct sl_udf *d = u->d;
	struct udf_call *call;
	struct insn *in;

	if (e->nargs != d->nargs)
		return sl_compiler_fail(c, e, "%s (%s) takes %u argument%s, got %u", u->name,
					u->target, d->nargs, d->nargs == 1 ? "" : "s", e->nargs);
	call = calloc(1, sizeof(*call));
	if (!sl_compiler_own(c, call))
		return false;
	call->d = d;
	for (uint32_t i = 0; i < e->nargs; i++) {
		enum sl_type want = udf_sql_type(d->args[i]);
		struct opnd a;
		bool widen;

		if (!sl_compiler_arg(c, e, i, &a))
			return false;
		widen = (want == SL_TYPE_BIGINT && a.t.type == SL_TYPE_INT && is_int(&a.t)) ||
			(want == SL_TYPE_DOUBLE && is_num(&a.t));
		if (!a.t.null_type && !widen && (a.t.type != want || a.t.interval)) {
			struct sl_sql_type wt = mk(want, false);

			return sl_compiler_fail(c, e->args[i],
						"argument %u of %s is %s, but %s declares %s",
						i + 1, u->name, sl_compiler_type_name(&a.t, 0),
						u->target, sl_compiler_type_name(&wt, 1));
		}
		if (!sl_compiler_conv_t(c, e->args[i], &a, want))
			return false;
		call->ops[i] = a.r;
	}
	in = sl_compiler_emit_to(c, e, OP_UDF, NOREG, NOREG, mk(udf_sql_type(d->result), true), o);
	if (!in)
		return false;
	c->nonconst++;
	in->x.ptr = call;
	return true;
}

bool sl_compiler_call(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	const struct fn *near = NULL;
	int best = 1 << 30;

	if (in_names(aggregates, e->text))
		return sl_compiler_fail(c, e, "aggregate function %s is not allowed here", e->text);
	if (in_names(windowfns, e->text))
		return sl_compiler_fail(c, e, "window function %s is not allowed here", e->text);
	if (e->over)
		return sl_compiler_fail(c, e, "OVER window of %s is not allowed here", e->text);
	if (e->filter)
		return sl_compiler_fail(c, e, "FILTER applies to aggregate functions only, not %s",
					e->text);
	if (e->distinct)
		return sl_compiler_fail(
			c, e, "DISTINCT applies to aggregate functions only, not %s", e->text);
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
		const struct fn *f = &fns[i];
		int d;

		if (!strcasecmp(f->name, e->text)) {
			if (!need_args(c, e, f->min, f->max == 255 ? 1u << 30 : f->max, f->name))
				return false;
			for (uint32_t k = 0; k < e->nargs; k++)
				if (e->args[k]->kind == SL_EXPR_STAR)
					return sl_compiler_fail(c, e->args[k],
								"* is not a value of %s", f->name);
			return f->compile(c, e, f, o);
		}
		d = sl_compiler_edit_distance(e->text, f->name);
		if (d < best) {
			best = d;
			near = f;
		}
	}
	for (int i = 0; c->env && i < c->env->nudfs; i++)
		if (!strcasecmp(c->env->udfs[i].name, e->text))
			return call_udf(c, e, &c->env->udfs[i], o);
	if (!strcasecmp(e->text, "TRY_CAST") || !strcasecmp(e->text, "EXTRACT") ||
	    !strcasecmp(e->text, "POSITION"))
		return sl_compiler_fail(c, e, "%s is not supported by the expression parser yet",
					e->text);
	if (near && best <= 1 + (int)strlen(e->text) / 3)
		return sl_compiler_fail(c, e, "unknown function %s (did you mean %s?)", e->text,
					near->name);
	return sl_compiler_fail(c, e, "unknown function %s", e->text);
}
