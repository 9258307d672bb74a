/*
 * eval_cc.h - the expression compiler's internal interface (prefix sl_compiler_, state in
 * struct compiler), shared by the core (eval.c: scope, operators, casts, folding), column
 * resolution (eval_cols.c) and the function library (eval_fn.c). Plan time only.
 */
#ifndef SL_SQL_EVAL_CC_H
#define SL_SQL_EVAL_CC_H

#include "eval_int.h"
#include "eval_kern.h"

struct sl_prog {
	struct insn *code;
	int ncode, capcode;
	int32_t *lists; /* operand lists of CONCAT & co */
	int nlists, caplists;
	struct reg *consts; /* constant k at consts[nconst - 1 - k] */
	int nconst;
	int ntemps;
	int32_t result;		 /* register holding the result */
	struct sl_sql_type type; /* as reported to the planner */
	struct vty rty;		 /* of the result register */
	bool is_const;
	void **owned; /* strings, patterns, IN lists, formats */
	int nowned, capowned;
	struct sl_regex **regex; /* compiled literal patterns (PCRE2 code) */
	int nregex, capregex;
	int64_t tz;
	struct kern kern; /* KERN_NONE: interpreted (eval_kern.h) */
};

struct opnd {
	int32_t r;
	struct sl_sql_type t;
	bool cst; /* r is a constant register */
};

struct compiler {
	struct sl_prog *p;
	const struct sl_scope *sc;
	const struct sl_sql_env *env;
	char *err;
	size_t errcap;
	bool failed;
	struct reg *cv; /* constant values in creation order */
	int ncv, capcv;
	int ntemps, maxtemps;
	int nonconst;  /* column loads and clock reads emitted so far */
	int depth;     /* compile() frames on the stack, at most MAX_REGS */
	char *scratch; /* for folding */
};

/* A timestamp made here holds milliseconds: TIMESTAMP(3), as Flink's own time functions. */
static inline struct sl_sql_type mk(enum sl_type t, bool nullable)
{
	int prec = t == SL_TYPE_TIMESTAMP || t == SL_TYPE_TIMESTAMP_LTZ ? SL_TS_PREC_DEFAULT : 0;

	return (struct sl_sql_type){ .type = t, .prec = prec, .nullable = nullable };
}

static inline struct sl_sql_type mk_dec(struct sl_dec_type d, bool nullable)
{
	return (struct sl_sql_type){
		.type = SL_TYPE_DECIMAL, .prec = d.prec, .scale = d.scale, .nullable = nullable
	};
}

static inline struct vty vty_of(const struct sl_sql_type *t)
{
	return (struct vty){ .t = (uint8_t)t->type,
			     .prec = (uint8_t)t->prec,
			     .scale = (uint8_t)t->scale,
			     .interval = t->interval };
}

static inline bool is_num(const struct sl_sql_type *t)
{
	return !t->interval && !t->null_type &&
	       (t->type == SL_TYPE_INT || t->type == SL_TYPE_BIGINT || t->type == SL_TYPE_DECIMAL ||
		t->type == SL_TYPE_FLOAT || t->type == SL_TYPE_DOUBLE);
}

static inline bool is_int(const struct sl_sql_type *t)
{
	return !t->interval && !t->null_type &&
	       (t->type == SL_TYPE_INT || t->type == SL_TYPE_BIGINT);
}

static inline bool is_time(const struct sl_sql_type *t)
{
	return !t->null_type && (t->type == SL_TYPE_DATE || t->type == SL_TYPE_TIMESTAMP ||
				 t->type == SL_TYPE_TIMESTAMP_LTZ);
}

static inline bool is_str(const struct sl_sql_type *t)
{
	return !t->null_type && t->type == SL_TYPE_STRING;
}

static inline bool is_bool(const struct sl_sql_type *t)
{
	return !t->null_type && t->type == SL_TYPE_BOOL;
}

/* An exact numeric as DECIMAL: INT is DECIMAL(10, 0), BIGINT DECIMAL(19, 0). */
static inline struct sl_dec_type dec_of(const struct sl_sql_type *t)
{
	if (t->type == SL_TYPE_INT)
		return (struct sl_dec_type){ 10, 0 };
	if (t->type == SL_TYPE_BIGINT)
		return (struct sl_dec_type){ 19, 0 };
	return (struct sl_dec_type){ (uint8_t)t->prec, (uint8_t)t->scale };
}

static inline struct reg *constval(struct compiler *c, int32_t r)
{
	return &c->cv[-1 - r];
}

/* eval_cols.c: CURRENT_WATERMARK(rowtime column), e the call. */
bool sl_compiler_current_watermark(struct compiler *c, const struct sl_expr *e, struct opnd *o);

/* eval.c: errors, program building, conversions */
bool sl_compiler_fail(struct compiler *c, const struct sl_expr *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Takes ownership of ptr (freed with the program); false (and ptr freed) on ENOMEM/NULL. */
bool sl_compiler_own(struct compiler *c, void *ptr);
/* Takes ownership of a compiled pattern (freed with the program); false on ENOMEM. */
bool sl_compiler_own_regex(struct compiler *c, struct sl_regex *re);
/* Records "out of memory" (first error wins); returns false. */
bool sl_compiler_nomem(struct compiler *c);
/* Instruction and temporary allocation (eval.c) for the other compiler files. */
struct insn *sl_compiler_emit(struct compiler *c, enum op op, int32_t dst, int32_t a, int32_t b);
int32_t sl_compiler_newtemp(struct compiler *c, const struct sl_expr *e);
/* Column resolution (eval_cols.c): structural equality of trees (match columns), loading
 * a column into *o, and resolving a COLUMN node by name. */
bool sl_compiler_expr_equal(const struct sl_expr *a, const struct sl_expr *b);
/* Whether two calls have the same OVER window: partition, order and frame. */
bool sl_compiler_over_equal(const struct sl_expr *a, const struct sl_expr *b);
bool sl_compiler_load_col(struct compiler *c, const struct sl_expr *e, const struct sl_sql_col *col,
			  struct opnd *o);
bool sl_compiler_resolve(struct compiler *c, const struct sl_expr *e, struct opnd *o);
/* Compiles one subtree into *o (match columns first, then folding); eval.c. */
bool sl_compiler_compile(struct compiler *c, const struct sl_expr *e, struct opnd *o);
/* A type's SQL name for messages; `which` (0/1) picks one of two per-thread buffers. */
const char *sl_compiler_type_name(const struct sl_sql_type *t, int which);
int sl_compiler_edit_distance(const char *a, const char *b);
struct insn *sl_compiler_emit_to(struct compiler *c, const struct sl_expr *e, enum op op, int32_t a,
				 int32_t b, struct sl_sql_type t, struct opnd *o);
/* Casts o to `to` (CAST rules; try: failures are not counted); folds constants. */
bool sl_compiler_conv_ex(struct compiler *c, const struct sl_expr *e, struct opnd *o,
			 const struct sl_sql_type *to, uint32_t maxlen, bool try);
bool sl_compiler_conv(struct compiler *c, const struct sl_expr *e, struct opnd *o,
		      const struct sl_sql_type *to);
bool sl_compiler_conv_t(struct compiler *c, const struct sl_expr *e, struct opnd *o,
			enum sl_type t);

/* eval.c: argument checks (NULL literals take the wanted type) */
bool sl_compiler_arg(struct compiler *c, const struct sl_expr *e, uint32_t i, struct opnd *o);
bool sl_compiler_want(struct compiler *c, const struct sl_expr *e, struct opnd *o, enum sl_type t,
		      const char *what);
bool sl_compiler_want_int(struct compiler *c, const struct sl_expr *e, struct opnd *o,
			  const char *what);
bool sl_compiler_want_num(struct compiler *c, const struct sl_expr *e, struct opnd *o,
			  const char *what);
bool sl_compiler_const_int(struct compiler *c, const struct sl_expr *e, const struct opnd *o,
			   const char *what, int64_t *v);

/* eval.c: operators the function library reuses */
bool sl_compiler_arith(struct compiler *c, const struct sl_expr *e, enum sl_expr_op op,
		       struct opnd x, struct opnd y, struct opnd *o);
bool sl_compiler_case(struct compiler *c, const struct sl_expr *e, const struct sl_expr *operand,
		      struct sl_expr *const *pairs, uint32_t npairs, const struct sl_expr *else_e,
		      struct opnd *o);
bool sl_compiler_coalesce(struct compiler *c, const struct sl_expr *e, struct opnd *o);
bool sl_compiler_nullif(struct compiler *c, const struct sl_expr *e, struct opnd *o);
bool sl_compiler_concat(struct compiler *c, const struct sl_expr *e, struct opnd *sep,
			struct opnd *parts, uint32_t n, struct opnd *o);

/* eval_cast.c: CAST(x AS type) */
bool sl_compiler_cast(struct compiler *c, const struct sl_expr *e, struct opnd *o);

/* eval_fn.c: function calls, and the clock functions niladic names resolve to */
bool sl_compiler_call(struct compiler *c, const struct sl_expr *e, struct opnd *o);
bool sl_compiler_now(struct compiler *c, const struct sl_expr *e, enum sl_type t, struct opnd *o);

#endif
