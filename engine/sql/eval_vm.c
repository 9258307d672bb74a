/*
 * eval_vm.c - the interpreter of compiled SQL expression programs (see eval_int.h); the
 * value conversions and LIKE it calls are in eval_cvt.c.
 *
 * Per-record code: no allocation, no locks, no syscalls. Strings an instruction produces go
 * to ec->scratch, which the top-level eval call resets; when scratch runs out the result is
 * NULL and ec->errors counts it, like every other run-time failure (division by zero,
 * invalid CAST text, DECIMAL overflow). Invariant: a register whose `null` is set holds no
 * meaningful value, and every instruction either sets dst->null or writes a full value.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/udf.h>

#include "eval_int.h"

/* ---- strings -------------------------------------------------------------------------- */

/* ASCII and Latin-1 letters (U+00C0..U+00FE): what Flink jobs meet in practice. */
static void change_case(const char *s, uint32_t n, char *o, bool upper)
{
	for (uint32_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (upper && c >= 'a' && c <= 'z')
			c -= 32;
		else if (!upper && c >= 'A' && c <= 'Z')
			c += 32;
		else if (c == 0xc3 && i + 1 < n) {
			unsigned char d = (unsigned char)s[i + 1];

			o[i++] = (char)c;
			if (upper && d >= 0xa0 && d <= 0xbe && d != 0xb7)
				d -= 0x20;
			else if (!upper && d >= 0x80 && d <= 0x9e && d != 0x97)
				d += 0x20;
			c = d;
		}
		o[i] = (char)c;
	}
}

static bool in_set(const char *s, uint32_t n, const char *set, uint32_t sn)
{
	for (uint32_t i = 0; i < sn; i += cp_len((unsigned char)set[i])) {
		uint32_t k = cp_len((unsigned char)set[i]);

		if (k == n && i + k <= sn && !memcmp(s, set + i, n))
			return true;
	}
	return false;
}

static void trim(struct reg *d, const struct reg *a, const struct reg *chars, int mode)
{
	const char *s = a->s.p, *set = chars ? chars->s.p : " ";
	uint32_t n = a->s.len, sn = chars ? chars->s.len : 1;

	if (mode & 1) {
		while (n) {
			uint32_t k = cp_len((unsigned char)*s);

			if (k > n || !in_set(s, k, set, sn))
				break;
			s += k;
			n -= k;
		}
	}
	if (mode & 2) {
		while (n) {
			uint32_t k = 1;

			while (k < n && k < 4 && ((unsigned char)s[n - k] & 0xc0) == 0x80)
				k++;
			if (!in_set(s + n - k, k, set, sn))
				break;
			n -= k;
		}
	}
	d->null = false;
	d->s.p = s;
	d->s.len = n;
}

/* SUBSTRING(s, pos[, len]) as Flink: 1-based, 0 counts as 1, negative from the end, a
 * negative length is NULL. */
static void substr(struct reg *d, const struct reg *s, int64_t pos, int64_t len, bool has_len)
{
	uint32_t start, end;

	if (has_len && len < 0) {
		d->null = true;
		return;
	}
	d->null = false;
	if (pos > 0) {
		start = cp_offset(s->s.p, s->s.len, pos - 1);
	} else if (pos < 0) {
		int64_t nc = cp_count(s->s.p, s->s.len);

		if (nc + pos < 0) {
			d->s.p = s->s.p;
			d->s.len = 0;
			return;
		}
		start = cp_offset(s->s.p, s->s.len, nc + pos);
	} else {
		start = 0;
	}
	end = has_len ? start + cp_offset(s->s.p + start, s->s.len - start, len) : s->s.len;
	d->s.p = s->s.p + start;
	d->s.len = end - start;
}

static bool replace(struct reg *d, const struct reg *s, const struct reg *from,
		    const struct reg *to, struct sl_eval_ctx *ec)
{
	uint32_t cap, n = 0;
	const char *p = s->s.p, *end = s->s.p + s->s.len, *hit;
	char *o;

	if (!from->s.len) {
		*d = *s;
		return true;
	}
	cap = ec->scratch_cap - ec->scratch_used;
	o = ec->scratch + ec->scratch_used;
	while ((hit = memmem(p, (size_t)(end - p), from->s.p, from->s.len))) {
		uint32_t k = (uint32_t)(hit - p);

		if (n + k + to->s.len > cap)
			return false;
		memcpy(o + n, p, k);
		memcpy(o + n + k, to->s.p, to->s.len);
		n += k + to->s.len;
		p = hit + from->s.len;
	}
	if (n + (uint32_t)(end - p) > cap)
		return false;
	memcpy(o + n, p, (size_t)(end - p));
	n += (uint32_t)(end - p);
	ec->scratch_used += n;
	d->null = false;
	d->s.p = o;
	d->s.len = n;
	return true;
}

/* LOCATE(needle, hay[, start]): 1-based code point position, 0 when absent. */
static int64_t locate(const struct reg *needle, const struct reg *hay, int64_t start)
{
	uint32_t off;
	const char *hit;

	if (start < 1)
		return 0;
	off = cp_offset(hay->s.p, hay->s.len, start - 1);
	if (start > 1 && off >= hay->s.len && needle->s.len)
		return 0;
	hit = memmem(hay->s.p + off, hay->s.len - off, needle->s.p, needle->s.len);
	if (!hit)
		return 0;
	return cp_count(hay->s.p, (uint32_t)(hit - hay->s.p)) + 1;
}

/* Java's Character.isWhitespace for the bytes a UTF-8 string can hold them in. */
static bool java_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/*
 * SPLIT_INDEX(s, sep, idx): Flink's SqlFunctionUtils.splitIndex, the idx-th (from 0) of the
 * tokens commons-lang's splitBy[WholeSeparator]PreserveAllTokens cuts s into: every
 * separator ends a token, empty ones too; an empty separator splits at whitespace. NULL for
 * a negative or too large index, and for the empty string (no token). The result points
 * into s.
 */
static void split_index(struct reg *d, const struct reg *s, const char *sep, uint32_t seplen,
			int64_t idx)
{
	const char *p = s->s.p, *end = p + s->s.len;
	int64_t k = 0;

	d->null = true;
	if (idx < 0 || !s->s.len)
		return;
	for (;;) {
		const char *hit;

		if (seplen) {
			hit = memmem(p, (size_t)(end - p), sep, seplen);
		} else {
			for (hit = p; hit < end && !java_space((unsigned char)*hit); hit++)
				;
			if (hit == end)
				hit = NULL;
		}
		if (k == idx) {
			d->null = false;
			d->s.p = p;
			d->s.len = (uint32_t)((hit ? hit : end) - p);
			return;
		}
		if (!hit)
			return;
		p = hit + (seplen ? seplen : 1);
		k++;
	}
}

static void initcap(const char *s, uint32_t n, char *o)
{
	bool start = true;

	for (uint32_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c >= 0x80;

		if (start && c >= 'a' && c <= 'z')
			c -= 32;
		else if (!start && c >= 'A' && c <= 'Z')
			c += 32;
		o[i] = (char)c;
		start = !alnum;
	}
}

static int cmp_str(const struct reg *a, const struct reg *b)
{
	uint32_t n = a->s.len < b->s.len ? a->s.len : b->s.len;
	int c = memcmp(a->s.p, b->s.p, n);

	if (c)
		return c < 0 ? -1 : 1;
	return (a->s.len > b->s.len) - (a->s.len < b->s.len);
}

static bool in_list(const struct inlist *l, enum op op, const struct reg *a)
{
	for (int k = 0; k < l->n; k++) {
		switch (op) {
		case OP_IN_I:
			if (l->i[k] == a->i)
				return true;
			break;
		case OP_IN_F:
			if (l->f[k] == a->f)
				return true;
			break;
		case OP_IN_D:
			if (l->d[k] == a->d)
				return true;
			break;
		default:
			if (l->s[k].len == a->s.len && !memcmp(l->s[k].p, a->s.p, a->s.len))
				return true;
			break;
		}
	}
	return false;
}

/* HALF_UP rounding of an integer to a multiple of 10^k (k > 0), Java BigDecimal style. */
static bool round_i64(int64_t v, int k, int64_t *out)
{
	int64_t m, q, r;

	if (k > 18) {
		*out = 0;
		return true;
	}
	m = sl_eval_pow10_i64_[k];
	q = v / m;
	r = v % m;
	if (r >= (m + 1) / 2)
		q++;
	else if (-r >= (m + 1) / 2)
		q--;
	if (__builtin_mul_overflow(q, m, out))
		return false;
	return true;
}

static double round_f64(double x, int64_t n)
{
	double m, y;

	if (!isfinite(x) || n > 300)
		return x;
	m = pow(10.0, (double)(n < 0 ? -n : n));
	y = n >= 0 ? x * m : x / m;
	if (!isfinite(y))
		return x;
	y = round(y); /* half away from zero = HALF_UP */
	return n >= 0 ? y / m : y * m;
}

/* FLOOR (dir < 0) or CEIL (dir > 0) of a DECIMAL to scale 0 of type tr. */
static bool dec_floor_ceil(sl_dec_t v, struct sl_dec_type ta, struct sl_dec_type tr, int dir,
			   sl_dec_t *out)
{
	sl_dec_t m = pow10_dec(ta.scale), q = v / m, r = v % m;

	if (r && (dir < 0) == (v < 0))
		q += dir;
	if (sl_dec_rescale(q, (struct sl_dec_type){ 38, 0 }, tr, out))
		return false;
	return true;
}

/* ROUND(decimal, n) HALF_UP into tr; n < 0 rounds to tens, hundreds... */
static bool dec_round(sl_dec_t v, struct sl_dec_type ta, int64_t n, struct sl_dec_type tr,
		      sl_dec_t *out)
{
	sl_dec_t q, r, m;

	if (n >= 0)
		return sl_dec_rescale(v, ta, tr, out) == 0;
	if (ta.scale - n > 38) {
		*out = 0;
		return true;
	}
	/* one rounding step from the exact value: 154.80 to tens is 150, not 160 */
	m = pow10_dec((unsigned)(ta.scale - n));
	q = v / m;
	r = v % m;
	if (r >= (m + 1) / 2)
		q++;
	else if (-r >= (m + 1) / 2)
		q--;
	return sl_dec_rescale(q * pow10_dec((unsigned)-n), (struct sl_dec_type){ 38, 0 }, tr,
			      out) == 0;
}

static int64_t ts_floor(int64_t ms, int64_t unit, int64_t tz, bool ceil_)
{
	int64_t local = ms + tz;
	int64_t f = sl_eval_floor_div_(local, unit) * unit;

	if (ceil_ && f != local)
		f += unit;
	return f - tz;
}

static const struct tfmt default_ts_fmt = {
	.n = 11,
	.tok = {
		{ TF_YEAR, 4, 0, 0 }, { TF_LIT, 0, 0, 1 }, { TF_MONTH, 2, 0, 0 },
		{ TF_LIT, 0, 0, 1 }, { TF_DAY, 2, 0, 0 }, { TF_LIT, 0, 1, 1 },
		{ TF_HOUR, 2, 0, 0 }, { TF_LIT, 0, 2, 1 }, { TF_MINUTE, 2, 0, 0 },
		{ TF_LIT, 0, 2, 1 }, { TF_SECOND, 2, 0, 0 },
	},
	.lit = "- :",
	.nlit = 3,
};

/* The format of a time function: precompiled, from a register, or the default. */
static const struct tfmt *get_fmt(const struct insn *in, const struct reg *R, struct tfmt *tmp,
				  bool *null)
{
	*null = false;
	if (in->x.ptr)
		return in->x.ptr;
	if (in->b == NOREG && in->flag)
		return NULL; /* lenient default parse */
	if (in->b == NOREG)
		return &default_ts_fmt;
	if (R[in->b].null || sl_eval_tfmt_compile_(R[in->b].s.p, R[in->b].s.len, tmp)) {
		*null = true;
		return NULL;
	}
	return tmp;
}

static bool fmt_ts(struct reg *d, int64_t ms, const struct tfmt *f, struct sl_eval_ctx *ec)
{
	uint32_t cap = ec->scratch_cap - ec->scratch_used;
	char *o = ec->scratch + ec->scratch_used;
	int n = sl_eval_ts_format_fmt_(f, ms, o, cap);

	if (n < 0)
		return false;
	ec->scratch_used += (uint32_t)n;
	d->null = false;
	d->s.p = o;
	d->s.len = (uint32_t)n;
	return true;
}

/*
 * Calls a C function (sluice/udf.h) on its argument registers. A STRING result is written
 * into the free scratch and kept, or points into an argument; anything else is refused, as
 * is a failure the function reports: false, d NULL.
 */
static bool udf(const struct udf_call *call, const struct reg *R, struct reg *d,
		struct sl_eval_ctx *ec)
{
	const struct sl_udf *u = call->d;
	struct sl_udf_value args[SL_UDF_MAX_ARGS], res = { .is_null = true };
	uint32_t cap = ec->scratch_cap - ec->scratch_used;
	char *buf = ec->scratch + ec->scratch_used;

	for (uint32_t i = 0; i < u->nargs; i++) {
		const struct reg *r = &R[call->ops[i]];

		args[i].is_null = r->null;
		if (r->null && !(u->flags & SL_UDF_CALLED_ON_NULL)) {
			d->null = true;
			return true;
		}
		if (r->null)
			args[i].v.i = 0;
		else if (u->args[i] == SL_UDF_DOUBLE)
			args[i].v.d = r->f;
		else if (u->args[i] == SL_UDF_STRING)
			args[i].v.s.ptr = r->s.p, args[i].v.s.len = r->s.len;
		else
			args[i].v.i = r->i;
	}
	d->null = true;
	if (u->fn(args, &res, buf, cap) != 0)
		return false;
	if (res.is_null)
		return true;
	switch (u->result) {
	case SL_UDF_STRING: {
		const char *p = res.v.s.ptr;
		bool ok =
			p >= buf && res.v.s.len <= cap && (uint32_t)(p - buf) <= cap - res.v.s.len;

		if (ok) {
			ec->scratch_used += (uint32_t)(p - buf) + res.v.s.len;
		} else {
			for (uint32_t i = 0; i < u->nargs && !ok; i++)
				ok = u->args[i] == SL_UDF_STRING && !args[i].is_null &&
				     p >= args[i].v.s.ptr && res.v.s.len <= args[i].v.s.len &&
				     (uint32_t)(p - args[i].v.s.ptr) <=
					     args[i].v.s.len - res.v.s.len;
			if (!ok)
				return false;
		}
		d->s.p = p;
		d->s.len = res.v.s.len;
		break;
	}
	case SL_UDF_DOUBLE:
		d->f = res.v.d;
		break;
	case SL_UDF_INT:
		d->i = (int32_t)res.v.i;
		break;
	case SL_UDF_BOOLEAN:
		d->i = res.v.i != 0;
		break;
	default:
		d->i = res.v.i;
	}
	d->null = false;
	return true;
}

/* Marks d NULL and counts a run-time failure. */
#define FAIL()                                                                                     \
	do {                                                                                       \
		d->null = true;                                                                    \
		ec->errors++;                                                                      \
		goto next;                                                                         \
	} while (0)
/* Strict operators: any NULL operand makes the result NULL. */
#define NULL1()                                                                                    \
	do {                                                                                       \
		if (A->null) {                                                                     \
			d->null = true;                                                            \
			goto next;                                                                 \
		}                                                                                  \
	} while (0)
#define NULL2()                                                                                    \
	do {                                                                                       \
		if (A->null || B->null) {                                                          \
			d->null = true;                                                            \
			goto next;                                                                 \
		}                                                                                  \
	} while (0)

/* Operands by name; computed only where an instruction has them (NOREG is not an index). */
#define A (&R[in->a])
#define B (&R[in->b])

static const int32_t *ops_of(const int32_t *lists, const struct insn *in)
{
	return lists + in->x.list.off;
}

void sl_eval_run_(const struct insn *code, int from, int to, const int32_t *lists, struct reg *R,
		  const struct sl_row *row, struct sl_eval_ctx *ec)
{
	for (int pc = from; pc < to;) {
		const struct insn *in = &code[pc++];
		struct reg *d = &R[in->dst];

		switch ((enum op)in->op) {
		case OP_LOAD_I:
			d->null = (row->nulls >> in->a) & 1;
			d->i = (int64_t)row->slot[in->a];
			break;
		case OP_LOAD_F:
			d->null = (row->nulls >> in->a) & 1;
			memcpy(&d->f, &row->slot[in->a], 8);
			break;
		case OP_LOAD_D:
			d->null = (row->nulls >> in->a) & 1;
			d->d = (int64_t)row->slot[in->a];
			break;
		case OP_LOAD_S:
			d->null = (row->nulls >> in->a) & 1;
			d->s.len = (uint32_t)(row->slot[in->a] & 0xffffffffu);
			d->s.p = (const char *)row + (row->slot[in->a] >> 32);
			break;
		case OP_MOV:
			*d = *A;
			break;
		case OP_JMP:
			pc = (int)in->x.imm;
			break;
		case OP_JF:
			if (!A->null && !A->i) {
				d->null = false;
				d->i = 0;
				pc = (int)in->x.imm;
			}
			break;
		case OP_JT:
			if (!A->null && A->i) {
				d->null = false;
				d->i = 1;
				pc = (int)in->x.imm;
			}
			break;
		case OP_JNT:
			if (A->null || !A->i)
				pc = (int)in->x.imm;
			break;
		case OP_JNN:
			if (!A->null) {
				*d = *A;
				pc = (int)in->x.imm;
			}
			break;
		case OP_AND:
			if ((!A->null && !A->i) || (!B->null && !B->i)) {
				d->null = false;
				d->i = 0;
			} else if (A->null || B->null) {
				d->null = true;
			} else {
				d->null = false;
				d->i = 1;
			}
			break;
		case OP_OR:
			if ((!A->null && A->i) || (!B->null && B->i)) {
				d->null = false;
				d->i = 1;
			} else if (A->null || B->null) {
				d->null = true;
			} else {
				d->null = false;
				d->i = 0;
			}
			break;
		case OP_NOT:
			d->null = A->null;
			d->i = !A->i;
			break;
		case OP_IS: {
			bool t = !A->null && A->i, f = !A->null && !A->i;

			switch ((enum is_test)in->sub) {
			case IS_NULL:
				d->i = A->null;
				break;
			case IS_NOT_NULL:
				d->i = !A->null;
				break;
			case IS_TRUE:
				d->i = t;
				break;
			case IS_NOT_TRUE:
				d->i = !t;
				break;
			case IS_FALSE:
				d->i = f;
				break;
			case IS_NOT_FALSE:
				d->i = !f;
				break;
			}
			d->null = false;
			break;
		}
		case OP_ADD_I32:
			NULL2();
			d->null = false;
			d->i = (int32_t)((uint32_t)A->i + (uint32_t)B->i);
			break;
		case OP_SUB_I32:
			NULL2();
			d->null = false;
			d->i = (int32_t)((uint32_t)A->i - (uint32_t)B->i);
			break;
		case OP_MUL_I32:
			NULL2();
			d->null = false;
			d->i = (int32_t)((uint32_t)A->i * (uint32_t)B->i);
			break;
		case OP_DIV_I32:
			NULL2();
			if (!B->i)
				FAIL();
			d->null = false;
			d->i = B->i == -1 ? (int32_t)(0u - (uint32_t)A->i)
					  : (int32_t)A->i / (int32_t)B->i;
			break;
		case OP_MOD_I32:
			NULL2();
			if (!B->i)
				FAIL();
			d->null = false;
			d->i = B->i == -1 ? 0 : (int32_t)A->i % (int32_t)B->i;
			break;
		case OP_NEG_I32:
			NULL1();
			d->null = false;
			d->i = (int32_t)(0u - (uint32_t)A->i);
			break;
		case OP_ADD_I64:
			NULL2();
			d->null = false;
			d->i = (int64_t)((uint64_t)A->i + (uint64_t)B->i);
			break;
		case OP_SUB_I64:
			NULL2();
			d->null = false;
			d->i = (int64_t)((uint64_t)A->i - (uint64_t)B->i);
			break;
		case OP_MUL_I64:
			NULL2();
			d->null = false;
			d->i = (int64_t)((uint64_t)A->i * (uint64_t)B->i);
			break;
		case OP_DIV_I64:
			NULL2();
			if (!B->i)
				FAIL();
			d->null = false;
			d->i = B->i == -1 ? (int64_t)(0 - (uint64_t)A->i) : A->i / B->i;
			break;
		case OP_MOD_I64:
			NULL2();
			if (!B->i)
				FAIL();
			d->null = false;
			d->i = B->i == -1 ? 0 : A->i % B->i;
			break;
		case OP_NEG_I64:
			NULL1();
			d->null = false;
			d->i = (int64_t)(0 - (uint64_t)A->i);
			break;
		case OP_ADD_F32:
			NULL2();
			d->null = false;
			d->f = (double)(float)(A->f + B->f);
			break;
		case OP_SUB_F32:
			NULL2();
			d->null = false;
			d->f = (double)(float)(A->f - B->f);
			break;
		case OP_MUL_F32:
			NULL2();
			d->null = false;
			d->f = (double)((float)A->f * (float)B->f);
			break;
		case OP_DIV_F32:
			NULL2();
			d->null = false;
			d->f = (double)((float)A->f / (float)B->f);
			break;
		case OP_MOD_F32:
			NULL2();
			d->null = false;
			d->f = (double)fmodf((float)A->f, (float)B->f);
			break;
		case OP_ADD_F64:
			NULL2();
			d->null = false;
			d->f = A->f + B->f;
			break;
		case OP_SUB_F64:
			NULL2();
			d->null = false;
			d->f = A->f - B->f;
			break;
		case OP_MUL_F64:
			NULL2();
			d->null = false;
			d->f = A->f * B->f;
			break;
		case OP_DIV_F64:
			NULL2();
			d->null = false;
			d->f = A->f / B->f;
			break;
		case OP_MOD_F64:
			NULL2();
			d->null = false;
			d->f = fmod(A->f, B->f);
			break;
		case OP_NEG_F:
			NULL1();
			d->null = false;
			d->f = -A->f;
			break;
		case OP_ADD_D:
		case OP_SUB_D:
		case OP_MUL_D:
		case OP_DIV_D:
		case OP_MOD_D: {
			static int (*const fn[])(sl_dec_t, struct sl_dec_type, sl_dec_t,
						 struct sl_dec_type, struct sl_dec_type,
						 sl_dec_t *) = {
				sl_dec_add, sl_dec_sub, sl_dec_mul, sl_dec_div, sl_dec_mod,
			};
			sl_dec_t v;
			int rc;

			NULL2();
			if (in->flag) {
				/* exact by construction (see dec_exact in eval.c) */
				const struct sl_dec_type *t = &in->x.dec.tr;

				d->null = false;
				if (in->op == OP_MUL_D)
					d->d = A->d * B->d;
				else if (in->op == OP_ADD_D)
					d->d = A->d * pow10_dec(t->scale - in->x.dec.ta.scale) +
					       B->d * pow10_dec(t->scale - in->x.dec.tb.scale);
				else
					d->d = A->d * pow10_dec(t->scale - in->x.dec.ta.scale) -
					       B->d * pow10_dec(t->scale - in->x.dec.tb.scale);
				break;
			}
			rc = fn[in->op - OP_ADD_D](A->d, in->x.dec.ta, B->d, in->x.dec.tb,
						   in->x.dec.tr, &v);
			if (rc) {
				ec->overflows += rc == -ERANGE;
				FAIL();
			}
			d->null = false;
			d->d = v;
			break;
		}
		case OP_NEG_D:
			NULL1();
			d->null = false;
			d->d = -A->d;
			break;
		case OP_CMP_I: {
			int c;

			NULL2();
			c = (A->i > B->i) - (A->i < B->i);
			d->null = false;
			d->i = (in->sub >> (c + 1)) & 1;
			break;
		}
		case OP_CMP_F: {
			int c;

			NULL2();
			c = (A->f > B->f) - (A->f < B->f);
			d->null = false;
			d->i = (in->sub >> (c + 1)) & 1;
			break;
		}
		case OP_CMP_D: {
			int c;

			NULL2();
			c = in->flag ? (A->d > B->d) - (A->d < B->d)
				     : sl_dec_cmp(A->d, in->x.dec.ta, B->d, in->x.dec.tb);
			d->null = false;
			d->i = (in->sub >> (c + 1)) & 1;
			break;
		}
		case OP_CMP_S: {
			int c;

			NULL2();
			c = cmp_str(A, B);
			d->null = false;
			d->i = (in->sub >> (c + 1)) & 1;
			break;
		}
		case OP_CVT: {
			uint64_t ovf = ec->overflows;

			*d = *A;
			if (!sl_eval_cvt_(d, &in->x.cvt.from, &in->x.cvt.to, in->imm2, ec)) {
				if (in->flag)
					ec->overflows = ovf; /* TRY_CAST: NULL is what was asked */
				else
					ec->errors++;
			}
			break;
		}
		case OP_IN_I:
		case OP_IN_F:
		case OP_IN_D:
		case OP_IN_S: {
			const struct inlist *l = in->x.ptr;

			NULL1();
			if (in_list(l, (enum op)in->op, A)) {
				d->null = false;
				d->i = !in->sub;
			} else if (l->has_null) {
				d->null = true;
			} else {
				d->null = false;
				d->i = in->sub;
			}
			break;
		}
		case OP_LIKE: {
			struct like_pat dyn;
			const struct like_pat *lp = in->x.ptr;

			NULL2();
			if (!lp) {
				sl_eval_like_compile_(&dyn, B->s.p, B->s.len, '\\');
				lp = &dyn;
			}
			d->null = false;
			d->i = sl_eval_like_(lp, A->s.p, A->s.len) != in->sub;
			break;
		}
		case OP_CONCAT:
		case OP_CONCAT_WS: {
			const int32_t *ops = ops_of(lists, in);
			bool ws = in->op == OP_CONCAT_WS;
			uint32_t n = 0, cap;
			char *o;
			bool first = true;

			if (ws)
				NULL1();
			cap = ec->scratch_cap - ec->scratch_used;
			o = ec->scratch + ec->scratch_used;
			for (int k = 0; k < in->x.list.n; k++) {
				const struct reg *r = &R[ops[k]];

				if (r->null) {
					if (ws)
						continue;
					d->null = true;
					goto next;
				}
				if (ws && !first) {
					if (n + A->s.len > cap)
						FAIL();
					memcpy(o + n, A->s.p, A->s.len);
					n += A->s.len;
				}
				first = false;
				if (n + r->s.len > cap)
					FAIL();
				memcpy(o + n, r->s.p, r->s.len);
				n += r->s.len;
			}
			ec->scratch_used += n;
			d->null = false;
			d->s.p = o;
			d->s.len = n;
			break;
		}
		case OP_UPPER:
		case OP_LOWER:
		case OP_INITCAP: {
			char *o;

			NULL1();
			o = salloc(ec, A->s.len);
			if (!o)
				FAIL();
			if (in->op == OP_INITCAP)
				initcap(A->s.p, A->s.len, o);
			else
				change_case(A->s.p, A->s.len, o, in->op == OP_UPPER);
			d->null = false;
			d->s.p = o;
			d->s.len = A->s.len;
			break;
		}
		case OP_SUBSTR:
			NULL2();
			if (in->c != NOREG && R[in->c].null) {
				d->null = true;
				break;
			}
			substr(d, A, B->i, in->c != NOREG ? R[in->c].i : 0, in->c != NOREG);
			break;
		case OP_TRIM:
			NULL1();
			if (in->b != NOREG && B->null) {
				d->null = true;
				break;
			}
			trim(d, A, in->b != NOREG ? B : NULL, in->sub);
			break;
		case OP_CHAR_LEN:
			NULL1();
			d->null = false;
			d->i = cp_count(A->s.p, A->s.len);
			break;
		case OP_REPLACE:
			NULL2();
			if (R[in->c].null) {
				d->null = true;
				break;
			}
			if (!replace(d, A, B, &R[in->c], ec))
				FAIL();
			break;
		case OP_LOCATE:
			NULL2();
			if (in->c != NOREG && R[in->c].null) {
				d->null = true;
				break;
			}
			d->null = false;
			d->i = locate(A, B, in->c != NOREG ? R[in->c].i : 1);
			break;
		case OP_SPLIT_INDEX: {
			char ch[2];

			NULL2();
			if (R[in->c].null) {
				d->null = true;
				break;
			}
			if (in->sub) {
				/* a character 1..255 (a Java char: Latin-1, two UTF-8 bytes past
				 * 127) */
				if (B->i < 1 || B->i > 255) {
					d->null = true;
					break;
				}
				ch[0] = B->i < 128 ? (char)B->i : (char)(0xc0 | (B->i >> 6));
				ch[1] = (char)(0x80 | (B->i & 0x3f));
				split_index(d, A, ch, B->i < 128 ? 1 : 2, R[in->c].i);
			} else {
				split_index(d, A, B->s.p, B->s.len, R[in->c].i);
			}
			break;
		}
		case OP_ABS_I32:
			NULL1();
			d->null = false;
			d->i = A->i < 0 ? (int32_t)(0u - (uint32_t)A->i) : A->i;
			break;
		case OP_ABS_I64:
			NULL1();
			d->null = false;
			d->i = A->i < 0 ? (int64_t)(0 - (uint64_t)A->i) : A->i;
			break;
		case OP_ABS_F:
			NULL1();
			d->null = false;
			d->f = fabs(A->f);
			break;
		case OP_ABS_D:
			NULL1();
			d->null = false;
			d->d = A->d < 0 ? -A->d : A->d;
			break;
		case OP_ROUND_I: {
			int64_t v;

			NULL1();
			if (in->x.imm >= 0) {
				*d = *A;
				break;
			}
			if (!round_i64(A->i, (int)-in->x.imm, &v))
				FAIL();
			d->null = false;
			d->i = in->flag ? (int32_t)v : v;
			break;
		}
		case OP_ROUND_F:
			NULL1();
			d->null = false;
			d->f = round_f64(A->f, in->x.imm);
			if (in->flag)
				d->f = (double)(float)d->f;
			break;
		case OP_ROUND_D: {
			sl_dec_t v;

			NULL1();
			if (!dec_round(A->d, in->x.dec.ta, in->imm2, in->x.dec.tr, &v))
				FAIL();
			d->null = false;
			d->d = v;
			break;
		}
		case OP_FLOOR_F:
		case OP_CEIL_F:
			NULL1();
			d->null = false;
			d->f = in->op == OP_FLOOR_F ? floor(A->f) : ceil(A->f);
			break;
		case OP_FLOOR_D:
		case OP_CEIL_D: {
			sl_dec_t v;

			NULL1();
			if (!dec_floor_ceil(A->d, in->x.dec.ta, in->x.dec.tr,
					    in->op == OP_FLOOR_D ? -1 : 1, &v))
				FAIL();
			d->null = false;
			d->d = v;
			break;
		}
		case OP_MATH:
			NULL1();
			d->null = false;
			switch ((enum math_fn)in->sub) {
			case MATH_SQRT:
				d->f = sqrt(A->f);
				break;
			case MATH_LN:
				d->f = log(A->f);
				break;
			case MATH_LOG10:
				d->f = log10(A->f);
				break;
			case MATH_LOG2:
				d->f = log2(A->f);
				break;
			case MATH_EXP:
				d->f = exp(A->f);
				break;
			}
			break;
		case OP_POWER:
			NULL2();
			d->null = false;
			d->f = pow(A->f, B->f);
			break;
		case OP_TS_FLOOR:
			NULL1();
			d->null = false;
			d->i = ts_floor(A->i, in->x.imm, in->imm2, in->sub);
			break;
		case OP_TO_TS:
		case OP_TO_DATE:
		case OP_UNIX_TS: {
			struct tfmt tmp;
			const struct tfmt *f;
			bool fnull, ok;
			int64_t ms;

			NULL1();
			f = get_fmt(in, R, &tmp, &fnull);
			if (fnull) {
				d->null = true;
				break;
			}
			if (!f)
				ok = in->op == OP_TO_DATE
					     ? sl_eval_date_parse_(A->s.p, A->s.len, &ms)
					     : sl_eval_ts_parse_(A->s.p, A->s.len, &ms);
			else
				ok = sl_eval_ts_parse_fmt_(f, A->s.p, A->s.len, &ms);
			if (!ok) {
				/* Flink returns NULL for text that does not match, silently */
				d->null = true;
				break;
			}
			d->null = false;
			if (in->op == OP_TO_DATE)
				d->i = f ? sl_eval_floor_div_(ms, MS_PER_DAY) : ms;
			else if (in->op == OP_UNIX_TS)
				d->i = sl_eval_floor_div_(ms - in->imm2, 1000);
			else
				d->i = ms;
			break;
		}
		case OP_TO_LTZ: {
			int64_t v;

			NULL1();
			if (in->sub == 0) {
				if (__builtin_mul_overflow(A->i, in->x.imm, &v))
					FAIL();
			} else if (in->sub == 1) {
				sl_dec_t x = A->d * in->x.imm;
				sl_dec_t m = pow10_dec((unsigned)in->imm2);

				x /= m;
				if (x > INT64_MAX || x < INT64_MIN)
					FAIL();
				v = (int64_t)x;
			} else {
				if (!isfinite(A->f))
					FAIL();
				v = f64_to_i64(A->f * (double)in->x.imm);
			}
			d->null = false;
			d->i = v;
			break;
		}
		case OP_FROM_UNIXTIME:
		case OP_DATE_FMT: {
			struct tfmt tmp;
			const struct tfmt *f;
			bool fnull;
			int64_t ms = A->i;

			NULL1();
			f = get_fmt(in, R, &tmp, &fnull);
			if (fnull) {
				d->null = true;
				break;
			}
			if (in->op == OP_FROM_UNIXTIME &&
			    __builtin_mul_overflow(A->i, (int64_t)1000, &ms))
				FAIL();
			if (in->op == OP_FROM_UNIXTIME)
				ms += in->imm2;
			if (!fmt_ts(d, ms, f, ec))
				FAIL();
			break;
		}
		case OP_WATERMARK:
			d->null = !ec->has_watermark;
			d->i = ec->watermark;
			break;
		case OP_NOW:
			d->null = false;
			d->i = ec->proctime_ms + in->x.imm;
			if (in->sub)
				d->i = sl_eval_floor_div_(d->i, MS_PER_DAY);
			break;
		case OP_EXTRACT:
			NULL1();
			d->null = false;
			d->i = sl_eval_extract_(A->i, (enum ex_field)in->sub);
			break;
		case OP_UDF:
			if (!udf(in->x.ptr, R, d, ec))
				FAIL();
			break;
		case OP_REGEX:
			if (!sl_eval_regex_(in, A, B, in->c != NOREG ? &R[in->c] : NULL, d, ec))
				ec->errors++;
			break;
		case OP_IV_DAYS:
			NULL1();
			d->null = false;
			d->i = sl_eval_floor_div_(A->i, MS_PER_DAY);
			break;
		}
	next:;
	}
}
