/*
 * schema.c - field names and types of a stream. Built at job construction, then read-only
 * and shared by every shard, so no synchronization is needed after sl_job_run() starts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/types.h>

struct sl_schema {
	int n;
	char *name[SL_SCHEMA_MAX_FIELDS];
	enum sl_type type[SL_SCHEMA_MAX_FIELDS];
	uint8_t prec[SL_SCHEMA_MAX_FIELDS];  /* DECIMAL digits; TIMESTAMP* fraction digits */
	uint8_t scale[SL_SCHEMA_MAX_FIELDS]; /* DECIMAL */
};

struct sl_schema *sl_schema_create(void)
{
	return calloc(1, sizeof(struct sl_schema));
}

void sl_schema_destroy(struct sl_schema *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++)
		free(s->name[i]);
	free(s);
}

int sl_schema_add(struct sl_schema *s, const char *name, enum sl_type type)
{
	if (s->n >= SL_SCHEMA_MAX_FIELDS || sl_schema_find(s, name) >= 0)
		return -EINVAL;
	if (type < SL_TYPE_BOOL || type > SL_TYPE_TIMESTAMP_LTZ)
		return -EINVAL;
	s->name[s->n] = strdup(name);
	if (!s->name[s->n])
		return -ENOMEM;
	s->type[s->n] = type;
	/* DECIMAL means DECIMAL(10, 0); a timestamp prints the milliseconds it holds */
	s->prec[s->n] = type == SL_TYPE_DECIMAL ? 10
			: type == SL_TYPE_TIMESTAMP || type == SL_TYPE_TIMESTAMP_LTZ
				? SL_TS_PREC_DEFAULT
				: 0;
	s->scale[s->n] = 0;
	return s->n++;
}

int sl_schema_add_decimal(struct sl_schema *s, const char *name, int precision, int scale)
{
	int i;

	if (precision < 1 || precision > SL_DECIMAL_MAX_PREC || scale < 0 || scale > precision)
		return -EINVAL;
	i = sl_schema_add(s, name, SL_TYPE_DECIMAL);
	if (i < 0)
		return i;
	s->prec[i] = (uint8_t)precision;
	s->scale[i] = (uint8_t)scale;
	return i;
}

int sl_schema_add_timestamp(struct sl_schema *s, const char *name, enum sl_type type, int precision)
{
	int i;

	if ((type != SL_TYPE_TIMESTAMP && type != SL_TYPE_TIMESTAMP_LTZ) || precision < 0 ||
	    precision > SL_TS_PREC_MAX)
		return -EINVAL;
	i = sl_schema_add(s, name, type);
	if (i >= 0)
		s->prec[i] = (uint8_t)precision;
	return i;
}

int sl_schema_add_like(struct sl_schema *s, const char *name, const struct sl_schema *from, int j)
{
	int i = sl_schema_add(s, name, from->type[j]);

	if (i >= 0) {
		s->prec[i] = from->prec[j];
		s->scale[i] = from->scale[j];
	}
	return i;
}

int sl_schema_precision(const struct sl_schema *s, int i)
{
	return s->prec[i];
}

int sl_schema_scale(const struct sl_schema *s, int i)
{
	return s->scale[i];
}

int sl_schema_nfields(const struct sl_schema *s)
{
	return s->n;
}

const char *sl_schema_name(const struct sl_schema *s, int i)
{
	return s->name[i];
}

enum sl_type sl_schema_type(const struct sl_schema *s, int i)
{
	return s->type[i];
}

int sl_schema_find(const struct sl_schema *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->name[i], name) == 0)
			return i;
	return -ENOENT;
}

struct sl_schema *sl_schema_clone(const struct sl_schema *s)
{
	struct sl_schema *c = sl_schema_create();

	if (!c)
		return NULL;
	for (int i = 0; i < s->n; i++) {
		if (sl_schema_add_like(c, s->name[i], s, i) < 0) {
			sl_schema_destroy(c);
			return NULL;
		}
	}
	return c;
}

const char *sl_type_name(enum sl_type t)
{
	switch (t) {
	case SL_TYPE_BOOL:
		return "BOOLEAN";
	case SL_TYPE_INT:
		return "INT";
	case SL_TYPE_BIGINT:
		return "BIGINT";
	case SL_TYPE_DOUBLE:
		return "DOUBLE";
	case SL_TYPE_STRING:
		return "STRING";
	case SL_TYPE_TIMESTAMP:
		return "TIMESTAMP(3)";
	case SL_TYPE_FLOAT:
		return "FLOAT";
	case SL_TYPE_DECIMAL:
		return "DECIMAL";
	case SL_TYPE_DATE:
		return "DATE";
	case SL_TYPE_TIMESTAMP_LTZ:
		return "TIMESTAMP_LTZ(3)";
	}
	return "?";
}
