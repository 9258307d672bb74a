/*
 * eval_int.h - internals shared by the expression compiler (eval.c), its interpreter
 * (eval_vm.c) and the date/time helpers (eval_time.c). Never included outside engine/sql.
 *
 * A program is a flat array of instructions over a register file of struct reg. Constants
 * live at negative register indices (-1 - k for constant k) and temporaries at 0..ntemps-1,
 * so one memcpy of the constant block before the temporaries sets up an evaluation and the
 * instructions never ask which kind of register they read.
 */
#ifndef SL_SQL_EVAL_INT_H
#define SL_SQL_EVAL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "decimal.h"
#include "eval.h"

/* One register. DECIMAL values are 128-bit inside programs (Flink's own precision up to 38
 * digits), narrowed to the 18 digits a row slot holds only where a value leaves. */
struct reg {
	union {
		int64_t i;  /* BOOL, INT, BIGINT, DATE, TIMESTAMP*, INTERVAL */
		double f;   /* FLOAT (float-rounded), DOUBLE */
		sl_dec_t d; /* DECIMAL unscaled; scale in the instruction */
		struct {
			const char *p;
			uint32_t len;
		} s;
	};
	bool null;
};

/* A run-time type, compact enough to sit in an instruction (conversions). */
struct vty {
	uint8_t t;    /* enum sl_type */
	uint8_t prec; /* DECIMAL; TIMESTAMP* fraction digits */
	uint8_t scale;
	uint8_t interval; /* BIGINT holding an INTERVAL in ms */
	uint32_t maxlen;  /* VARCHAR(n) on CAST: truncate to n code points; 0 = unbounded */
};

enum op {
	OP_LOAD_I,
	OP_LOAD_F,
	OP_LOAD_D,
	OP_LOAD_S,
	OP_MOV,
	OP_JMP, /* pc = imm */
	OP_JF,	/* a FALSE: dst = FALSE, pc = imm (AND short cut) */
	OP_JT,	/* a TRUE: dst = TRUE, pc = imm (OR short cut) */
	OP_JNT, /* a not TRUE: pc = imm (CASE WHEN) */
	OP_JNN, /* a not NULL: dst = a, pc = imm (COALESCE) */
	OP_AND,
	OP_OR,
	OP_NOT,
	OP_IS, /* sub: enum is_test */
	OP_ADD_I32,
	OP_SUB_I32,
	OP_MUL_I32,
	OP_DIV_I32,
	OP_MOD_I32,
	OP_NEG_I32,
	OP_ADD_I64,
	OP_SUB_I64,
	OP_MUL_I64,
	OP_DIV_I64,
	OP_MOD_I64,
	OP_NEG_I64,
	OP_ADD_F32,
	OP_SUB_F32,
	OP_MUL_F32,
	OP_DIV_F32,
	OP_MOD_F32,
	OP_ADD_F64,
	OP_SUB_F64,
	OP_MUL_F64,
	OP_DIV_F64,
	OP_MOD_F64,
	OP_NEG_F,
	OP_ADD_D,
	OP_SUB_D,
	OP_MUL_D,
	OP_DIV_D,
	OP_MOD_D,
	OP_NEG_D,
	OP_CMP_I,
	OP_CMP_F,
	OP_CMP_D,
	OP_CMP_S, /* sub: mask of {<, =, >} that is TRUE */
	OP_CVT,	  /* x.cvt; flag: TRY (no error count) */
	OP_IN_I,
	OP_IN_F,
	OP_IN_D,
	OP_IN_S,      /* x.ptr: struct inlist; sub: NOT IN */
	OP_LIKE,      /* x.ptr: struct like_pat or NULL (pattern in b); sub: NOT LIKE */
	OP_CONCAT,    /* x.list */
	OP_CONCAT_WS, /* a = separator, x.list */
	OP_UPPER,
	OP_LOWER,
	OP_INITCAP,
	OP_SUBSTR, /* a, b = start, c = length or NOREG */
	OP_TRIM,   /* sub: 1 leading, 2 trailing, 3 both; b = characters or NOREG (space) */
	OP_CHAR_LEN,
	OP_REPLACE,
	OP_LOCATE,	/* a = needle, b = haystack, c = start or NOREG */
	OP_SPLIT_INDEX, /* a = string, b = separator (sub 1: a character code), c = index */
	OP_ABS_I32,
	OP_ABS_I64,
	OP_ABS_F,
	OP_ABS_D,
	OP_ROUND_I, /* imm = digits (negative: tens, hundreds...) */
	OP_ROUND_F,
	OP_ROUND_D, /* x.dec: ta = operand, tr = result; imm2 = digits */
	OP_FLOOR_F,
	OP_CEIL_F,
	OP_FLOOR_D,
	OP_CEIL_D,
	OP_MATH, /* sub: enum math_fn */
	OP_POWER,
	OP_TS_FLOOR, /* sub: 0 floor, 1 ceil; imm = unit ms; imm2 = tz offset */
	OP_TO_TS,    /* a = text; x.ptr = struct tfmt, or NULL: b = pattern register, or
		      * b = NOREG and flag = lenient default parse */
	OP_TO_DATE,
	OP_UNIX_TS,	  /* a = text -> epoch seconds in the session zone */
	OP_TO_LTZ,	  /* a numeric: sub = 0 int, 1 decimal (scale in imm2), 2 double;
			   * imm = ms per unit (1000 or 1) */
	OP_FROM_UNIXTIME, /* a = epoch seconds -> STRING in the session zone */
	OP_DATE_FMT,	  /* a = TIMESTAMP (local wall clock ms) -> STRING */
	OP_NOW,		  /* ec->proctime_ms + imm (0: instant; tz: local wall clock); sub: days */
	OP_WATERMARK,	  /* ec->watermark, NULL without one (CURRENT_WATERMARK) */
	OP_EXTRACT,	  /* a = TIMESTAMP wall clock ms; sub = enum ex_field */
	OP_IV_DAYS,	  /* a = INTERVAL ms -> whole days (floor) */
	OP_UDF,		  /* x.ptr = struct udf_call */
	OP_REGEX,	  /* sub: enum re_fn; a = string, b = pattern, x.ptr = struct sl_regex
			   * when the pattern is a literal; c = group / replacement or NOREG */
};

enum re_fn { RE_MATCH, RE_EXTRACT, RE_REPLACE };
enum is_test { IS_NULL, IS_NOT_NULL, IS_TRUE, IS_NOT_TRUE, IS_FALSE, IS_NOT_FALSE };
enum math_fn { MATH_SQRT, MATH_LN, MATH_LOG10, MATH_LOG2, MATH_EXP };
enum ex_field {
	EX_YEAR,
	EX_QUARTER,
	EX_MONTH,
	EX_WEEK,
	EX_DAY,
	EX_HOUR,
	EX_MINUTE,
	EX_SECOND,
	EX_DOW,
	EX_DOY,
	EX_MILLISECOND,
};

struct insn {
	uint16_t op;
	uint8_t sub;
	uint8_t flag;
	int32_t dst, a, b, c;
	int64_t imm2; /* second immediate: tz offset, decimal scale */
	union {
		int64_t imm;
		struct {
			struct sl_dec_type ta, tb, tr;
		} dec;
		struct {
			struct vty from, to;
		} cvt;
		struct {
			int32_t off, n; /* into the program's operand list */
		} list;
		const void *ptr;
	} x;
};

/* A constant IN list, converted at compile time to the operand's type. */
struct inlist {
	int n;
	bool has_null;
	union {
		int64_t *i;
		double *f;
		sl_dec_t *d;
		struct {
			const char *p;
			uint32_t len;
		} * s;
	};
};

/* A call of a C function (sluice/udf.h): its descriptor and argument registers, each of
 * the declared type. */
struct udf_call {
	const struct sl_udf *d;
	int32_t ops[16]; /* SL_UDF_MAX_ARGS */
};

/* A compiled LIKE pattern: the common shapes get a single memcmp/memmem. */
enum like_kind { LIKE_EXACT, LIKE_PREFIX, LIKE_SUFFIX, LIKE_CONTAINS, LIKE_GENERAL };
struct like_pat {
	enum like_kind kind;
	const char *lit; /* EXACT/PREFIX/SUFFIX/CONTAINS: the literal; GENERAL: the pattern */
	uint32_t len;
	char esc; /* escape character of GENERAL patterns, 0 = none */
};

/* A Java DateTimeFormatter-style pattern (yyyy MM dd HH mm ss SSS, 'quoted' text). */
enum tf_kind {
	TF_LIT,
	TF_YEAR,
	TF_MONTH,
	TF_DAY,
	TF_HOUR,
	TF_HOUR12,
	TF_MINUTE,
	TF_SECOND,
	TF_FRAC,
	TF_AMPM,
};
#define TF_MAX_TOK 32
struct tfmt {
	uint8_t n;
	struct {
		uint8_t kind;
		uint8_t width; /* letters written: yyyy = 4, SSS = 3 */
		uint16_t off;  /* TF_LIT: text in lit[] */
		uint16_t len;
	} tok[TF_MAX_TOK];
	char lit[128];
	uint16_t nlit;
};

#define MS_PER_DAY 86400000LL
/* An absent optional operand (SUBSTRING without a length...): constants are negative. */
#define NOREG INT32_MIN

/* eval_time.c */
int64_t sl_eval_days_from_civil_(int64_t y, unsigned m, unsigned d);
void sl_eval_civil_from_days_(int64_t days, int64_t *y, unsigned *m, unsigned *d);
int64_t sl_eval_floor_div_(int64_t a, int64_t b);
/* 0, or -EINVAL for a pattern letter we do not know. */
int sl_eval_tfmt_compile_(const char *pat, uint32_t len, struct tfmt *f);
/* Lenient yyyy-MM-dd[( |T)HH:mm[:ss[.fraction]]], blanks around: wall clock ms. */
bool sl_eval_ts_parse_(const char *s, uint32_t len, int64_t *ms);
/* yyyy-MM-dd with blanks around: days. */
bool sl_eval_date_parse_(const char *s, uint32_t len, int64_t *days);
bool sl_eval_ts_parse_fmt_(const struct tfmt *f, const char *s, uint32_t len, int64_t *ms);
/* Writes ms (wall clock) per f into buf; returns bytes, or -1 when cap is too small. */
int sl_eval_ts_format_fmt_(const struct tfmt *f, int64_t ms, char *buf, uint32_t cap);
/* yyyy-MM-dd HH:mm:ss[.S...] with `prec` fraction digits (0..9, zeros past the
 * milliseconds) and yyyy-MM-dd without stdio: returns bytes written. */
int sl_eval_ts_print_(int64_t ms, int prec, char *buf);
int sl_eval_date_print_(int64_t days, char *buf);
int64_t sl_eval_extract_(int64_t ms, enum ex_field f);

/* eval_regex.c: a pattern compiled (and JIT-compiled) at plan time, or NULL with PCRE2's
 * reason in err; the kernel of OP_REGEX: false when it failed (d as Flink gives it: NULL,
 * or FALSE for REGEXP), for the caller to count. x is the third operand or NULL. */
struct sl_regex;
struct sl_regex *sl_eval_regex_compile_(const char *pat, uint32_t len, char *err, size_t errcap);
void sl_eval_regex_free_(struct sl_regex *re);
bool sl_eval_regex_(const struct insn *in, const struct reg *a, const struct reg *b,
		    const struct reg *x, struct reg *d, struct sl_eval_ctx *ec);

/* eval_vm.c */
void sl_eval_run_(const struct insn *code, int from, int to, const int32_t *lists, struct reg *R,
		  const struct sl_row *row, struct sl_eval_ctx *ec);
/* Converts r in place from `from` to `to` (CAST semantics, tz = session offset). Returns
 * false (r NULL) when the value has no image in `to`; the caller counts the error. */
bool sl_eval_cvt_(struct reg *r, const struct vty *from, const struct vty *to, int64_t tz,
		  struct sl_eval_ctx *ec);
bool sl_eval_like_(const struct like_pat *lp, const char *s, uint32_t n);
void sl_eval_like_compile_(struct like_pat *lp, const char *pat, uint32_t len, char esc);

/* ---- helpers shared by the interpreter (eval_vm.c) and the conversions (eval_cvt.c) ---- */

extern const int64_t sl_eval_pow10_i64_[19];
extern const sl_dec_t sl_eval_pow10_dec_[39]; /* 10^0 .. 10^38 */

static inline sl_dec_t pow10_dec(unsigned n)
{
	return sl_eval_pow10_dec_[n > 38 ? 38 : n];
}

static inline int64_t f64_to_i64(double f)
{
	if (f != f)
		return 0;
	if (f >= 9223372036854775807.0)
		return INT64_MAX;
	if (f <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)f;
}

static inline char *salloc(struct sl_eval_ctx *ec, uint32_t n)
{
	char *p;

	if (n > ec->scratch_cap - ec->scratch_used)
		return NULL;
	p = ec->scratch + ec->scratch_used;
	ec->scratch_used += n;
	return p;
}

/* Gives back the unused tail of the last salloc (exact sizes are known only after). */
static inline void sshrink(struct sl_eval_ctx *ec, uint32_t unused)
{
	ec->scratch_used -= unused;
}

static inline uint32_t cp_len(unsigned char b)
{
	return b < 0xc0 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
}

/* Byte offset of the code point `n` (0-based) in s, or len when s is shorter. */
static inline uint32_t cp_offset(const char *s, uint32_t len, int64_t n)
{
	uint32_t i = 0;

	while (n > 0 && i < len) {
		i += cp_len((unsigned char)s[i]);
		n--;
	}
	return i < len ? i : len;
}

static inline uint32_t cp_count(const char *s, uint32_t len)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

#endif
