/*
 * eval_cols.c - how an expression names a column: qualified and dot-joined flattened names,
 * `match` columns that stand for whole subtrees (structural equality), and the message for
 * an unknown or ambiguous name with the closest known one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval_cc.h"

/* ---- column resolution ---------------------------------------------------------------- */

static bool str_eq(const char *a, const char *b, bool nocase)
{
	if (!a || !b)
		return a == b;
	return nocase ? !strcasecmp(a, b) : !strcmp(a, b);
}

static bool list_equal(struct sl_expr *const *a, struct sl_expr *const *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!sl_compiler_expr_equal(a[i], b[i]))
			return false;
	return true;
}

/* Structural equality: what "same sl_expr_print() output, function names without case"
 * means, without printing every subtree. */
bool sl_compiler_expr_equal(const struct sl_expr *a, const struct sl_expr *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind || a->op != b->op || a->unit != b->unit ||
	    a->is_what != b->is_what || a->negated != b->negated || a->distinct != b->distinct ||
	    a->nargs != b->nargs || a->npath != b->npath || a->over != b->over ||
	    a->npartition != b->npartition || a->norder != b->norder || a->frame != b->frame ||
	    a->frame_lo != b->frame_lo)
		return false;
	/* a subquery is the same only as itself (its place, as sl_expr_print() says) */
	if (a->sub != b->sub)
		return false;
	if (!str_eq(a->text, b->text, a->kind == SL_EXPR_CALL || a->kind == SL_EXPR_ROUND_TO))
		return false;
	if ((a->kind == SL_EXPR_BOOL || a->kind == SL_EXPR_INTERVAL) && a->ival != b->ival)
		return false;
	for (uint32_t i = 0; i < a->npath; i++)
		if (strcmp(a->path[i], b->path[i]))
			return false;
	if (a->kind == SL_EXPR_CAST &&
	    (a->type.kind != b->type.kind || a->type.precision != b->type.precision ||
	     a->type.scale != b->type.scale))
		return false;
	if (!list_equal(a->args, b->args, a->nargs) ||
	    !sl_compiler_expr_equal(a->case_operand, b->case_operand) ||
	    !sl_compiler_expr_equal(a->case_else, b->case_else) ||
	    !sl_compiler_expr_equal(a->filter, b->filter))
		return false;
	return sl_compiler_over_equal(a, b);
}

bool sl_compiler_over_equal(const struct sl_expr *a, const struct sl_expr *b)
{
	if (a->npartition != b->npartition || a->norder != b->norder || a->frame != b->frame ||
	    a->frame_lo != b->frame_lo || !list_equal(a->partition, b->partition, a->npartition))
		return false;
	for (uint32_t i = 0; i < a->norder; i++)
		if (a->order[i].desc != b->order[i].desc ||
		    !sl_compiler_expr_equal(a->order[i].expr, b->order[i].expr))
			return false;
	return true;
}

bool sl_compiler_load_col(struct compiler *c, const struct sl_expr *e, const struct sl_sql_col *col,
			  struct opnd *o)
{
	enum op op;
	int32_t d;

	switch (col->type.type) {
	case SL_TYPE_FLOAT:
	case SL_TYPE_DOUBLE:
		op = OP_LOAD_F;
		break;
	case SL_TYPE_STRING:
		op = OP_LOAD_S;
		break;
	case SL_TYPE_DECIMAL:
		op = OP_LOAD_D;
		break;
	default:
		op = OP_LOAD_I;
		break;
	}
	if (col->field < 0 || col->field >= SL_SCHEMA_MAX_FIELDS)
		return sl_compiler_fail(c, e, "column has no input field (%d)", col->field);
	if (col->type.type == SL_TYPE_DECIMAL &&
	    (col->type.prec < 1 || col->type.prec > SL_DECIMAL_MAX_PREC || col->type.scale < 0 ||
	     col->type.scale > col->type.prec))
		return sl_compiler_fail(c, e, "column of type %s cannot be read from a row",
					sl_compiler_type_name(&col->type, 0));
	d = sl_compiler_newtemp(c, e);
	if (!sl_compiler_emit(c, op, d, col->field, NOREG))
		return false;
	c->nonconst++;
	o->r = d;
	o->t = col->type;
	o->t.null_type = false;
	o->cst = false;
	return !c->failed;
}

/*
 * CURRENT_WATERMARK(ts): the watermark of the operator evaluating the row, typed as the
 * rowtime column ts names (TIMESTAMP(3) or TIMESTAMP_LTZ(3), nullable: NULL before the
 * operator's first watermark), as Flink's. Not a constant (a clock read, for folding).
 */
bool sl_compiler_current_watermark(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	const struct sl_expr *a = e->nargs == 1 ? e->args[0] : NULL;
	struct opnd col;
	struct sl_sql_type t;
	bool rowtime = false;

	if (!a || a->kind != SL_EXPR_COLUMN)
		return sl_compiler_fail(c, e,
					"CURRENT_WATERMARK takes one rowtime column (declared "
					"with WATERMARK FOR)");
	/* the column's load (unused: the value is the watermark) says which field it is */
	if (!sl_compiler_resolve(c, a, &col))
		return false;
	for (int i = 0; i < c->sc->ncols; i++)
		if (c->sc->cols[i].field == c->p->code[c->p->ncode - 1].a && c->sc->cols[i].rowtime)
			rowtime = true;
	if (!rowtime)
		return sl_compiler_fail(
			c, a,
			"the argument of CURRENT_WATERMARK must be a rowtime column "
			"(declared with WATERMARK FOR), as in Flink");
	t = col.t;
	t.nullable = true;
	t.prec = SL_TS_PREC_DEFAULT;
	if (!sl_compiler_emit_to(c, e, OP_WATERMARK, NOREG, NOREG, t, o))
		return false;
	c->nonconst++;
	return true;
}

/* Levenshtein distance, capped for long names (plan time only). */
int sl_compiler_edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b);
	int row[65];

	if (la > 64 || lb > 64)
		return 1000;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int prev = row[0];

		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int cur = row[j];
			int ca = a[i - 1] | 0x20, cb = b[j - 1] | 0x20; /* case counts less */
			int sub = prev + (a[i - 1] == b[j - 1] ? 0 : ca == cb ? 0 : 1);
			int best = sub;

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

static void join_path(const struct sl_expr *e, uint32_t from, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = 0;
	for (uint32_t i = from; i < e->npath && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i > from ? "." : "", e->path[i]);
}

bool sl_compiler_resolve(struct compiler *c, const struct sl_expr *e, struct opnd *o)
{
	char full[512], rest[512], cand[512];
	const struct sl_sql_col *hit = NULL, *near = NULL;
	int nhit = 0, best = 1 << 30;

	join_path(e, 0, full, sizeof full);
	join_path(e, 1, rest, sizeof rest);
	for (int i = 0; i < c->sc->ncols; i++) {
		const struct sl_sql_col *col = &c->sc->cols[i];

		if (!col->name)
			continue;
		if (!strcmp(col->name, full) ||
		    (e->npath > 1 && col->qual && !strcmp(col->qual, e->path[0]) &&
		     !strcmp(col->name, rest))) {
			if (!hit || hit->field != col->field)
				nhit++;
			if (!hit)
				hit = col;
		}
	}
	if (nhit > 1) {
		const struct sl_sql_col *other = NULL;

		for (int i = 0; i < c->sc->ncols && !other; i++) {
			const struct sl_sql_col *col = &c->sc->cols[i];

			if (col->name && col != hit && col->field != hit->field &&
			    (!strcmp(col->name, full) ||
			     (e->npath > 1 && col->qual && !strcmp(col->qual, e->path[0]) &&
			      !strcmp(col->name, rest))))
				other = col;
		}
		return sl_compiler_fail(c, e,
					"column '%s' is ambiguous: it could be %s%s%s or %s%s%s; "
					"qualify it",
					full, hit->qual ? hit->qual : "", hit->qual ? "." : "",
					hit->name, other && other->qual ? other->qual : "",
					other && other->qual ? "." : "", other ? other->name : "?");
	}
	if (hit)
		return sl_compiler_load_col(c, e, hit, o);
	/* Niladic functions Flink writes without parentheses. */
	if (e->npath == 1) {
		if (!strcasecmp(full, "CURRENT_TIMESTAMP") ||
		    !strcasecmp(full, "CURRENT_ROW_TIMESTAMP"))
			return sl_compiler_now(c, e, SL_TYPE_TIMESTAMP_LTZ, o);
		if (!strcasecmp(full, "LOCALTIMESTAMP"))
			return sl_compiler_now(c, e, SL_TYPE_TIMESTAMP, o);
		if (!strcasecmp(full, "CURRENT_DATE"))
			return sl_compiler_now(c, e, SL_TYPE_DATE, o);
	}
	for (int i = 0; i < c->sc->ncols; i++) {
		const struct sl_sql_col *col = &c->sc->cols[i];
		size_t n = strlen(full);

		if (!col->name)
			continue;
		if (!strncmp(col->name, full, n) && col->name[n] == '.')
			return sl_compiler_fail(
				c, e,
				"column '%s' is a ROW: name one of its fields, such as "
				"'%s'",
				full, col->name);
		if (e->npath > 1 && col->qual && !strcmp(col->qual, e->path[0]) &&
		    !strncmp(col->name, rest, strlen(rest)) && col->name[strlen(rest)] == '.')
			return sl_compiler_fail(
				c, e,
				"column '%s' is a ROW: name one of its fields, such as "
				"'%s.%s'",
				full, col->qual, col->name);
	}
	for (int i = 0; i < c->sc->ncols; i++) {
		const struct sl_sql_col *col = &c->sc->cols[i];
		int dd;

		if (!col->name)
			continue;
		dd = sl_compiler_edit_distance(full, col->name);
		if (col->qual) {
			snprintf(cand, sizeof cand, "%s.%s", col->qual, col->name);
			int dq = sl_compiler_edit_distance(full, cand);

			if (dq < dd)
				dd = dq;
		}
		if (dd < best) {
			best = dd;
			near = col;
		}
	}
	if (near && best <= 1 + (int)strlen(full) / 4)
		return sl_compiler_fail(c, e, "unknown column '%s' (did you mean '%s'?)", full,
					near->name);
	return sl_compiler_fail(c, e, "unknown column '%s'", full);
}
