/*
 * sluice/types.h - event time, field types, schemas and rows.
 *
 * A row is one contiguous, 8-byte aligned byte block: a header, one 8-byte slot per field
 * (integers, doubles, booleans and timestamps by value; strings as offset and length), and
 * an inline variable part holding string bytes. The same bytes travel through rings, sit in
 * state and are read by operators, so nothing is pointer-chased or copied field by field.
 *
 *   +--------+--------+------+------+---------+----------------------+-----------------+
 *   | size32 | nfld16 | kind | rsv  | nulls64 | slot[0] .. slot[n-1] | string bytes... |
 *   +--------+--------+------+------+---------+----------------------+-----------------+
 *
 * Rows are never mutated after sl_rowb_finish(); whoever holds a `const struct sl_row *`
 * borrows it for the duration of the call it was passed to, unless a function says otherwise.
 */
#ifndef SLUICE_TYPES_H
#define SLUICE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Event or processing time in milliseconds since the Unix epoch. */
typedef int64_t sl_ts_t;
#define SL_TS_MIN INT64_MIN /* "no watermark yet" */
#define SL_TS_MAX INT64_MAX /* end of input: fires every window */

enum sl_type {
	SL_TYPE_BOOL = 1,
	SL_TYPE_INT, /* 32-bit in SQL terms, stored in a 64-bit slot */
	SL_TYPE_BIGINT,
	SL_TYPE_DOUBLE,
	SL_TYPE_STRING,
	SL_TYPE_TIMESTAMP,     /* milliseconds since the epoch, TIMESTAMP(3) */
	SL_TYPE_FLOAT,	       /* FLOAT (32-bit): a double slot holding a float-rounded value */
	SL_TYPE_DECIMAL,       /* DECIMAL(p,s): the unscaled int64 value; p <= 18 digits (see
				* sl_schema_add_decimal); scale in the schema */
	SL_TYPE_DATE,	       /* days since 1970-01-01 */
	SL_TYPE_TIMESTAMP_LTZ, /* TIMESTAMP_LTZ(3): epoch ms, an instant; printed in UTC */
};

/* The largest DECIMAL precision a slot holds exactly (int64 unscaled value). */
#define SL_DECIMAL_MAX_PREC 18

/* Changelog kind of a row, printed as +I, -U, +U, -D. */
enum sl_row_kind {
	SL_ROW_INSERT = 0,
	SL_ROW_UPDATE_BEFORE = 1,
	SL_ROW_UPDATE_AFTER = 2,
	SL_ROW_DELETE = 3,
};

#define SL_SCHEMA_MAX_FIELDS 64 /* one bit each in the row's null mask */

/* A schema: field names and types. Built once at job construction; immutable afterwards,
 * shared read-only by all shards. */
struct sl_schema;

/* Returns a new empty schema or NULL on ENOMEM. Caller frees with sl_schema_destroy(). */
struct sl_schema *sl_schema_create(void);
void sl_schema_destroy(struct sl_schema *s);
/* Appends a field (name copied). Returns its index, or -EINVAL (duplicate name, too many
 * fields) or -ENOMEM. */
int sl_schema_add(struct sl_schema *s, const char *name, enum sl_type type);
int sl_schema_nfields(const struct sl_schema *s);
const char *sl_schema_name(const struct sl_schema *s, int i);
enum sl_type sl_schema_type(const struct sl_schema *s, int i);
/* Appends a DECIMAL(precision, scale) field: 1 <= precision <= SL_DECIMAL_MAX_PREC,
 * 0 <= scale <= precision. Returns its index or -EINVAL / -ENOMEM. */
int sl_schema_add_decimal(struct sl_schema *s, const char *name, int precision, int scale);
/* A timestamp slot holds milliseconds: TIMESTAMP(p) with p > 3 prints zeros past them, and a
 * CAST to p < 3 truncates the value. What sl_schema_add gives a TIMESTAMP[_LTZ] field. */
#define SL_TS_PREC_DEFAULT 3
#define SL_TS_PREC_MAX	   9
/* Appends a TIMESTAMP or TIMESTAMP_LTZ field of `precision` fraction digits (0..9), which
 * sl_row_format prints. Returns its index or -EINVAL / -ENOMEM. */
int sl_schema_add_timestamp(struct sl_schema *s, const char *name, enum sl_type type,
			    int precision);
/* Appends field `j` of `from` under `name`: its type, precision and scale. Returns its index
 * or -EINVAL / -ENOMEM. */
int sl_schema_add_like(struct sl_schema *s, const char *name, const struct sl_schema *from, int j);
/* DECIMAL precision and scale of field i; a TIMESTAMP[_LTZ]'s fraction digits as precision
 * (0 for other types). */
int sl_schema_precision(const struct sl_schema *s, int i);
int sl_schema_scale(const struct sl_schema *s, int i);
/* Returns the field index of `name`, or -ENOENT. */
int sl_schema_find(const struct sl_schema *s, const char *name);
/* Returns a deep copy or NULL on ENOMEM. */
struct sl_schema *sl_schema_clone(const struct sl_schema *s);
const char *sl_type_name(enum sl_type t);

struct sl_row {
	uint32_t size; /* total bytes including header and string bytes, multiple of 8 */
	uint16_t nfields;
	uint8_t kind; /* enum sl_row_kind */
	uint8_t rsv;
	uint64_t nulls;	 /* bit i set: field i is NULL */
	uint64_t slot[]; /* one per field */
};

#define SL_ROW_HDR ((uint32_t)sizeof(struct sl_row))

static inline bool sl_row_is_null(const struct sl_row *r, int i)
{
	return (r->nulls >> i) & 1;
}

static inline int64_t sl_row_i64(const struct sl_row *r, int i)
{
	return (int64_t)r->slot[i];
}

static inline double sl_row_f64(const struct sl_row *r, int i)
{
	double d;
	memcpy(&d, &r->slot[i], sizeof d);
	return d;
}

static inline bool sl_row_bool(const struct sl_row *r, int i)
{
	return r->slot[i] != 0;
}

/* Returns the string's bytes (not NUL-terminated) and stores its length in *len. */
static inline const char *sl_row_str(const struct sl_row *r, int i, uint32_t *len)
{
	*len = (uint32_t)(r->slot[i] & 0xffffffffu);
	return (const char *)r + (r->slot[i] >> 32);
}

/*
 * Row builder: writes a row into caller memory. Set fields in any order (unset fields are
 * NULL), strings are appended to the variable part as they are set. Nothing is allocated.
 */
struct sl_row_builder {
	struct sl_row *row; /* the row being built, at the start of buf */
	uint32_t cap;	    /* bytes available at row */
	uint32_t used;	    /* header + slots + string bytes so far */
	bool overflow;	    /* a set did not fit: finish() fails with -ENOSPC */
};

/* Starts a row with `nfields` NULL fields in `buf` (8-byte aligned, `cap` bytes). The
 * fixed-width setters are inline: they run several times per record on every chain. */
static inline void sl_rowb_init(struct sl_row_builder *b, void *buf, uint32_t cap, int nfields)
{
	uint32_t need = SL_ROW_HDR + 8u * (uint32_t)nfields;

	b->row = (struct sl_row *)buf;
	b->cap = cap;
	b->used = need;
	b->overflow = need > cap;
	if (b->overflow)
		return;
	b->row->size = 0;
	b->row->nfields = (uint16_t)nfields;
	b->row->kind = SL_ROW_INSERT;
	b->row->rsv = 0;
	b->row->nulls = nfields >= 64 ? ~0ull : ((1ull << nfields) - 1);
	for (int i = 0; i < nfields; i++)
		b->row->slot[i] = 0;
}

static inline void sl_rowb_set_slot_(struct sl_row_builder *b, int i, uint64_t v)
{
	if (b->overflow)
		return;
	b->row->slot[i] = v;
	b->row->nulls &= ~(1ull << i);
}

static inline void sl_rowb_set_i64(struct sl_row_builder *b, int i, int64_t v)
{
	sl_rowb_set_slot_(b, i, (uint64_t)v);
}

static inline void sl_rowb_set_f64(struct sl_row_builder *b, int i, double v)
{
	uint64_t u;

	memcpy(&u, &v, 8);
	sl_rowb_set_slot_(b, i, u);
}

static inline void sl_rowb_set_bool(struct sl_row_builder *b, int i, bool v)
{
	sl_rowb_set_slot_(b, i, v ? 1 : 0);
}

void sl_rowb_set_str(struct sl_row_builder *b, int i, const char *s, uint32_t len);
/* Makes field `i` a string of `len` bytes and returns where to write them (before the next
 * set or finish), for a string assembled from pieces; NULL when it does not fit (finish()
 * then fails). */
char *sl_rowb_str_space(struct sl_row_builder *b, int i, uint32_t len);
static inline void sl_rowb_set_null(struct sl_row_builder *b, int i)
{
	if (b->overflow)
		return;
	b->row->slot[i] = 0;
	b->row->nulls |= 1ull << i;
}

/* Copies field `j` of `src` (of type `t`: value, string or NULL) into field `i`. */
void sl_rowb_copy_field(struct sl_row_builder *b, int i, const struct sl_row *src, int j,
			enum sl_type t);
static inline void sl_rowb_set_kind(struct sl_row_builder *b, enum sl_row_kind k)
{
	if (!b->overflow)
		b->row->kind = (uint8_t)k;
}

/* Seals the row. Returns the row, or NULL if it did not fit in the buffer. */
const struct sl_row *sl_rowb_finish(struct sl_row_builder *b);

/* Writes `+I[a, b, c]` (Flink's changelog notation) for `r` into buf, NUL-terminated.
 * Returns the length written, or the length needed if it exceeds `cap` (like snprintf). */
int sl_row_format(const struct sl_row *r, const struct sl_schema *s, char *buf, size_t cap);

/* Writes a double the way Java's Double.toString does for Flink (shortest round trip, at
 * least one decimal: 1.0, 0.1, 1.0E10). Returns characters written. */
int sl_double_format(double v, char *buf, size_t cap);

/* Writes a float the way Java's Float.toString does (shortest digits that read back as the
 * same float). Returns characters written. */
int sl_float_format(float v, char *buf, size_t cap);

/* Writes an unscaled decimal with `scale` fraction digits ("-12.30"). Returns characters
 * written. */
int sl_decimal_format(int64_t unscaled, int scale, char *buf, size_t cap);

/* Writes a date (days since the epoch) as 2024-01-31. Returns characters written. */
int sl_date_format(int64_t days, char *buf, size_t cap);

/* Formats a timestamp as `2024-01-31 04:19:31.784` (UTC). Returns characters written. */
int sl_ts_format(sl_ts_t ts, char *buf, size_t cap);
/* The same with `prec` fraction digits, as Flink prints a TIMESTAMP(prec): none for 0, the
 * milliseconds cut for 1 and 2, zeros past them for 4 to 9. */
int sl_ts_format_prec(sl_ts_t ts, int prec, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
