/*
 * eval_cast.c - compiles CAST(x AS type): the DDL type named in the CAST, which casts Flink
 * allows (the rest are refused when planning, naming both types), and which of them may
 * fail on a value and so make the result nullable. The conversion itself is the shared
 * CVT path (sl_compiler_conv_ex, eval_cvt.c at run time).
 */
#include "eval_cc.h"

static bool ddl_to_type(struct compiler *c, const struct sl_expr *e, const struct sl_ddl_type *d,
			struct sl_sql_type *t, uint32_t *maxlen)
{
	*maxlen = 0;
	switch (d->kind) {
	case SL_DDL_BOOLEAN:
		*t = mk(SL_TYPE_BOOL, true);
		return true;
	case SL_DDL_INT:
		*t = mk(SL_TYPE_INT, true);
		return true;
	case SL_DDL_BIGINT:
		*t = mk(SL_TYPE_BIGINT, true);
		return true;
	case SL_DDL_FLOAT:
		*t = mk(SL_TYPE_FLOAT, true);
		return true;
	case SL_DDL_DOUBLE:
		*t = mk(SL_TYPE_DOUBLE, true);
		return true;
	case SL_DDL_DECIMAL:
		*t = mk_dec((struct sl_dec_type){ (uint8_t)d->precision, (uint8_t)d->scale }, true);
		if (!sl_dec_type_valid(
			    (struct sl_dec_type){ (uint8_t)d->precision, (uint8_t)d->scale }))
			return sl_compiler_fail(c, e, "invalid DECIMAL(%u, %u)", d->precision,
						d->scale);
		return true;
	case SL_DDL_VARCHAR:
		*maxlen = d->precision ? d->precision : 1;
		/* fall through */
	case SL_DDL_STRING:
		*t = mk(SL_TYPE_STRING, true);
		return true;
	case SL_DDL_TIMESTAMP:
	case SL_DDL_TIMESTAMP_LTZ:
		*t = mk(d->kind == SL_DDL_TIMESTAMP ? SL_TYPE_TIMESTAMP : SL_TYPE_TIMESTAMP_LTZ,
			true);
		t->prec = (int)d->precision; /* fewer than 3 digits truncate (eval_cvt.c) */
		return true;
	case SL_DDL_DATE:
		*t = mk(SL_TYPE_DATE, true);
		return true;
	default:
		return sl_compiler_fail(c, e, "cannot CAST to a ROW type");
	}
}

/* Which CASTs exist (Flink 1.15+ rules, without the legacy numeric <-> TIMESTAMP ones). */
static bool cast_ok(const struct sl_sql_type *f, const struct sl_sql_type *t)
{
	if (f->interval)
		return t->interval || t->type == SL_TYPE_BIGINT;
	if (t->type == SL_TYPE_STRING || f->type == SL_TYPE_STRING)
		return true;
	if (is_num(t))
		return is_num(f) || is_bool(f) || (f->type == SL_TYPE_TIMESTAMP_LTZ && is_int(t));
	if (is_bool(t))
		return is_num(f) || is_bool(f);
	if (t->type == SL_TYPE_TIMESTAMP_LTZ)
		return is_time(f) || is_num(f);
	if (is_time(t))
		return is_time(f);
	return false;
}

/* Whether a CAST can meet a value it has no image for (NULL, counted). */
static bool cast_may_fail(const struct sl_sql_type *f, const struct sl_sql_type *t)
{
	if (f->null_type)
		return false;
	if (is_str(f))
		return !is_str(t);
	if (t->type == SL_TYPE_DECIMAL) {
		struct sl_dec_type d;

		if (!is_int(f) && f->type != SL_TYPE_DECIMAL)
			return true;
		d = dec_of(f);
		/* rounding 9.99 to one digit carries into a new integer digit */
		return t->prec - t->scale < d.prec - d.scale + (t->scale < d.scale);
	}
	return t->type == SL_TYPE_TIMESTAMP_LTZ && is_num(f);
}

bool sl_compiler_cast(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	struct sl_sql_type t;
	uint32_t maxlen;
	struct opnd x;
	bool nullable;

	if (!sl_compiler_arg(c, e, 0, &x) || !ddl_to_type(c, e, &e->type, &t, &maxlen))
		return false;
	if (!x.t.null_type && !cast_ok(&x.t, &t))
		return sl_compiler_fail(c, e, "cannot CAST %s to %s",
					sl_compiler_type_name(&x.t, 0),
					sl_compiler_type_name(&t, 1));
	nullable = x.t.nullable || cast_may_fail(&x.t, &t);
	if (!sl_compiler_conv_ex(c, e, &x, &t, maxlen, false))
		return false;
	*o = x;
	if (!o->cst)
		o->t.nullable = nullable;
	return true;
}
