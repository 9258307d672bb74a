/*
 * agg_bind.c - binding an aggregate spec to its input (agg.h): kernel, field, types,
 * DECIMAL precision and scale, DISTINCT as a fold over a set; the accumulator's size,
 * copy and output column. Plan time, except sl_agg_copy. Split out of agg.c, which holds
 * the kernels themselves.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agg.h"
#include "decimal.h"

int sl_agg_bind(struct sl_agg_bound *b, const struct sl_agg_spec *a, const struct sl_schema *in,
		char *err, size_t errcap)
{
	int nin = sl_schema_nfields(in);
	enum sl_type t = 0;

	if (!a->name || !a->name[0]) {
		snprintf(err, errcap, "aggregate %s has no output name", sl_agg_kind_name(a->kind));
		return -EINVAL;
	}
	if (a->kind == SL_AGG_USER || a->kind < SL_AGG_COUNT_STAR || a->kind > SL_AGG_LISTAGG) {
		snprintf(err, errcap, "'%s': not a built-in aggregate (kind %d)", a->name,
			 (int)a->kind);
		return -EINVAL;
	}
	b->field = -1;
	if (a->kind != SL_AGG_COUNT_STAR) {
		if (a->field < 0 || a->field >= nin) {
			snprintf(err, errcap, "%s '%s' refers to field %d of %d",
				 sl_agg_kind_name(a->kind), a->name, a->field, nin);
			return -EINVAL;
		}
		t = sl_schema_type(in, a->field);
		b->field = a->field;
	}
	b->k = sl_agg_kernel_find(a->kind, t, a->sql_types);
	if (!b->k) {
		snprintf(err, errcap, "%s over %s field '%s' is not supported",
			 sl_agg_kind_name(a->kind), sl_type_name(t), sl_schema_name(in, a->field));
		return -EINVAL;
	}
	b->inner = NULL;
	if (a->distinct && (a->kind == SL_AGG_SUM || a->kind == SL_AGG_AVG)) {
		/* a string value is not 8 slot bytes: the fold reads the set as such */
		if (t == SL_TYPE_STRING || b->k->init || b->k->destroy ||
		    b->k->acc_size > SL_AGG_INNER_ACC_MAX) {
			snprintf(err, errcap, "%s(DISTINCT) over %s field '%s' is not supported",
				 sl_agg_kind_name(a->kind), sl_type_name(t),
				 sl_schema_name(in, a->field));
			return -EINVAL;
		}
		b->inner = b->k;
		b->k = &sl_agg_distinct_fold;
	}
	b->kind = a->kind;
	b->sep = a->sep ? a->sep : ",";
	b->sep_len = (uint32_t)strlen(b->sep);
	b->in_type = t;
	b->out_type = b->inner ? (b->inner->out ? b->inner->out : t) : b->k->out ? b->k->out : t;
	b->in_scale = b->out_prec = b->out_scale = 0;
	if ((b->out_type == SL_TYPE_TIMESTAMP || b->out_type == SL_TYPE_TIMESTAMP_LTZ) &&
	    b->out_type == t)
		b->out_prec = sl_schema_precision(in, a->field);
	if (b->out_type == SL_TYPE_DECIMAL) {
		b->in_scale = sl_schema_scale(in, a->field);
		b->out_prec = sl_schema_precision(in, a->field);
		b->out_scale = b->in_scale;
		if (a->kind == SL_AGG_SUM) {
			b->out_prec = SL_DECIMAL_MAX_PREC;
		} else if (a->kind == SL_AGG_AVG) {
			b->out_prec = SL_DECIMAL_MAX_PREC;
			b->out_scale = b->in_scale > SL_DEC_MIN_ADJUSTED_SCALE
					       ? b->in_scale
					       : SL_DEC_MIN_ADJUSTED_SCALE;
		}
	}
	return 0;
}

int sl_agg_schema_add(struct sl_schema *s, const char *name, const struct sl_agg_bound *a)
{
	if (a->out_type == SL_TYPE_DECIMAL)
		return sl_schema_add_decimal(s, name, a->out_prec, a->out_scale);
	if ((a->out_type == SL_TYPE_TIMESTAMP || a->out_type == SL_TYPE_TIMESTAMP_LTZ) &&
	    a->out_type == a->in_type)
		return sl_schema_add_timestamp(s, name, a->out_type, a->out_prec);
	return sl_schema_add(s, name, a->out_type);
}

uint32_t sl_agg_acc_size(const struct sl_agg_bound *a)
{
	return a->k->acc_size ? a->k->acc_size : (uint32_t)a->user.acc_size;
}

void sl_agg_copy(const struct sl_agg_bound *a, void *dst, const void *src)
{
	uint32_t size = sl_agg_acc_size(a);

	if (!a->k->destroy) {
		memcpy(dst, src, size);
		return;
	}
	memset(dst, 0, size);
	a->k->merge(a, dst, src);
}
