/*
 * eval_cc.h - the expression compiler's internal interface, shared by the core (eval.c:
 * scope, operators, casts, folding) and the function library (eval_fn.c). Plan time only.
 */
#ifndef SL_SQL_EVAL_CC_H
#define SL_SQL_EVAL_CC_H

#include "eval_int.h"

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
	int64_t tz;
};

struct opnd {
	int32_t r;
	struct sl_sql_type t;
	bool cst; /* r is a constant register */
};

struct cc {
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
	char *scratch; /* for folding */
};

static inline struct sl_sql_type mk(enum sl_type t, bool nullable)
{
	return (struct sl_sql_type){ .type = t, .nullable = nullable };
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

static inline struct reg *constval(struct cc *c, int32_t r)
{
	return &c->cv[-1 - r];
}

/* eval.c: errors, program building, conversions */
bool sl_cc_fail(struct cc *c, const struct sl_expr *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Takes ownership of ptr (freed with the program); false (and ptr freed) on ENOMEM/NULL. */
bool sl_cc_own(struct cc *c, void *ptr);
/* Records "out of memory" (first error wins); returns false. */
bool sl_cc_nomem(struct cc *c);
/* Instruction and temporary allocation (eval.c) for the other compiler files. */
struct insn *sl_cc_emit(struct cc *c, enum op op, int32_t dst, int32_t a, int32_t b);
int32_t sl_cc_newtemp(struct cc *c, const struct sl_expr *e);
/* Column resolution (eval_cols.c): structural equality of trees (match columns), loading
 * a column into *o, and resolving a COLUMN node by name. */
bool sl_cc_expr_equal(const struct sl_expr *a, const struct sl_expr *b);
bool sl_cc_load_col(struct cc *c, const struct sl_expr *e, const struct sl_sql_col *col,
		    struct opnd *o);
bool sl_cc_resolve(struct cc *c, const struct sl_expr *e, struct opnd *o);
/* Compiles one subtree into *o (match columns first, then folding); eval.c. */
bool sl_cc_compile(struct cc *c, const struct sl_expr *e, struct opnd *o);
/* A type's SQL name for messages; `which` (0/1) picks one of two per-thread buffers. */
const char *sl_cc_tname(const struct sl_sql_type *t, int which);
int sl_cc_edit_distance(const char *a, const char *b);
struct insn *sl_cc_emit_to(struct cc *c, const struct sl_expr *e, enum op op, int32_t a, int32_t b,
			   struct sl_sql_type t, struct opnd *o);
/* Casts o to `to` (CAST rules; try: failures are not counted); folds constants. */
bool sl_cc_conv_ex(struct cc *c, const struct sl_expr *e, struct opnd *o,
		   const struct sl_sql_type *to, uint32_t maxlen, bool try);
bool sl_cc_conv(struct cc *c, const struct sl_expr *e, struct opnd *o,
		const struct sl_sql_type *to);
bool sl_cc_conv_t(struct cc *c, const struct sl_expr *e, struct opnd *o, enum sl_type t);

/* eval.c: argument checks (NULL literals take the wanted type) */
bool sl_cc_arg(struct cc *c, const struct sl_expr *e, uint32_t i, struct opnd *o);
bool sl_cc_want(struct cc *c, const struct sl_expr *e, struct opnd *o, enum sl_type t,
		const char *what);
bool sl_cc_want_int(struct cc *c, const struct sl_expr *e, struct opnd *o, const char *what);
bool sl_cc_want_num(struct cc *c, const struct sl_expr *e, struct opnd *o, const char *what);
bool sl_cc_const_int(struct cc *c, const struct sl_expr *e, const struct opnd *o, const char *what,
		     int64_t *v);

/* eval.c: operators the function library reuses */
bool sl_cc_arith(struct cc *c, const struct sl_expr *e, enum sl_expr_op op, struct opnd x,
		 struct opnd y, struct opnd *o);
bool sl_cc_case(struct cc *c, const struct sl_expr *e, const struct sl_expr *operand,
		struct sl_expr *const *pairs, uint32_t npairs, const struct sl_expr *else_e,
		struct opnd *o);
bool sl_cc_coalesce(struct cc *c, const struct sl_expr *e, struct opnd *o);
bool sl_cc_nullif(struct cc *c, const struct sl_expr *e, struct opnd *o);
bool sl_cc_concat(struct cc *c, const struct sl_expr *e, struct opnd *sep, struct opnd *parts,
		  uint32_t n, struct opnd *o);

/* eval_fn.c: function calls, and the clock functions niladic names resolve to */
bool sl_cc_call(struct cc *c, const struct sl_expr *e, struct opnd *o);
bool sl_cc_now(struct cc *c, const struct sl_expr *e, enum sl_type t, struct opnd *o);

#endif
