/*
 * expr_print.c - what is done with a parsed expression tree besides compiling it: freeing it
 * and printing it fully parenthesised (tests, EXPLAIN, and the planner's structural
 * equality of subtrees). See expr.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "query.h"

void sl_expr_destroy(struct sl_expr *e)
{
	if (!e)
		return;
	for (uint32_t i = 0; i < e->nargs; i++)
		sl_expr_destroy(e->args[i]);
	for (uint32_t i = 0; i < e->npath; i++)
		free(e->path[i]);
	if (!e->over_borrowed) {
		for (uint32_t i = 0; i < e->npartition; i++)
			sl_expr_destroy(e->partition[i]);
		for (uint32_t i = 0; i < e->norder; i++)
			sl_expr_destroy(e->order[i].expr);
		free(e->partition);
		free(e->order);
	}
	free(e->over_name);
	sl_expr_destroy(e->filter);
	sl_expr_destroy(e->case_operand);
	sl_expr_destroy(e->case_else);
	sl_query_destroy(e->sub);
	free(e->args);
	free(e->path);
	free(e->text);
	free(e);
}

/* snprintf-like output: n counts every byte wanted, buf gets what fits. */
struct out {
	char *buf;
	size_t cap;
	size_t n;
};

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->n < o->cap ? o->buf + o->n : NULL, o->n < o->cap ? o->cap - o->n : 0, fmt,
		      ap);
	va_end(ap);
	if (n > 0)
		o->n += (size_t)n;
}

static void put_string(struct out *o, const char *s)
{
	put(o, "'");
	for (; *s; s++)
		put(o, *s == '\'' ? "''" : "%c", *s);
	put(o, "'");
}

static const char *op_text(enum sl_expr_op op)
{
	static const char *const texts[] = {
		[SL_EXPR_OP_OR] = "OR",	    [SL_EXPR_OP_AND] = "AND", [SL_EXPR_OP_NOT] = "NOT",
		[SL_EXPR_OP_EQ] = "=",	    [SL_EXPR_OP_NE] = "<>",   [SL_EXPR_OP_LT] = "<",
		[SL_EXPR_OP_LE] = "<=",	    [SL_EXPR_OP_GT] = ">",    [SL_EXPR_OP_GE] = ">=",
		[SL_EXPR_OP_CONCAT] = "||", [SL_EXPR_OP_ADD] = "+",   [SL_EXPR_OP_SUB] = "-",
		[SL_EXPR_OP_MUL] = "*",	    [SL_EXPR_OP_DIV] = "/",   [SL_EXPR_OP_MOD] = "%",
		[SL_EXPR_OP_NEG] = "-",	    [SL_EXPR_OP_PLUS] = "+",
	};

	return texts[op] ? texts[op] : "?";
}

static const char *unit_text(enum sl_expr_unit u)
{
	switch (u) {
	case SL_EXPR_UNIT_SECOND:
		return "SECOND";
	case SL_EXPR_UNIT_MINUTE:
		return "MINUTE";
	case SL_EXPR_UNIT_HOUR:
		return "HOUR";
	case SL_EXPR_UNIT_DAY:
		return "DAY";
	default:
		return "?";
	}
}

static void put_type(struct out *o, const struct sl_ddl_type *t)
{
	switch (t->kind) {
	case SL_DDL_BOOLEAN:
		put(o, "BOOLEAN");
		break;
	case SL_DDL_INT:
		put(o, "INT");
		break;
	case SL_DDL_BIGINT:
		put(o, "BIGINT");
		break;
	case SL_DDL_FLOAT:
		put(o, "FLOAT");
		break;
	case SL_DDL_DOUBLE:
		put(o, "DOUBLE");
		break;
	case SL_DDL_DECIMAL:
		put(o, "DECIMAL(%u, %u)", t->precision, t->scale);
		break;
	case SL_DDL_STRING:
		put(o, "STRING");
		break;
	case SL_DDL_VARCHAR:
		put(o, "VARCHAR(%u)", t->precision);
		break;
	case SL_DDL_TIMESTAMP:
		put(o, "TIMESTAMP(%u)", t->precision);
		break;
	case SL_DDL_TIMESTAMP_LTZ:
		put(o, "TIMESTAMP_LTZ(%u)", t->precision);
		break;
	case SL_DDL_DATE:
		put(o, "DATE");
		break;
	default:
		put(o, "?");
		break;
	}
}

static void print(struct out *o, const struct sl_expr *e);

static void print_list(struct out *o, struct sl_expr *const *args, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			put(o, ", ");
		print(o, args[i]);
	}
}

/* A name as it must be written to read back the same: backquoted when reserved or odd. */
static void put_name(struct out *o, const char *name)
{
	struct sl_tok t = { .kind = SL_TOK_IDENT, .text = name, .len = (uint32_t)strlen(name) };
	bool plain = name[0] && !(name[0] >= '0' && name[0] <= '9') && !sl_expr_is_reserved(&t) &&
		     !sl_tok_is_kw(&t, "TRUE") && !sl_tok_is_kw(&t, "FALSE") &&
		     !sl_tok_is_kw(&t, "NULL");

	for (const char *c = name; *c && plain; c++)
		plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			(*c >= '0' && *c <= '9') || *c == '_';
	if (plain) {
		put(o, "%s", name);
		return;
	}
	put(o, "`");
	for (; *name; name++)
		put(o, *name == '`' ? "``" : "%c", *name);
	put(o, "`");
}

static void print_path(struct out *o, const struct sl_expr *e)
{
	for (uint32_t i = 0; i < e->npath; i++) {
		if (i)
			put(o, ".");
		put_name(o, e->path[i]);
	}
}

static void print_over(struct out *o, const struct sl_expr *e)
{
	if (e->over_name && !e->over_borrowed) { /* a WINDOW clause's, not bound yet */
		put(o, " OVER ");
		put_name(o, e->over_name);
		return;
	}
	put(o, " OVER (");
	if (e->npartition) {
		put(o, "PARTITION BY ");
		print_list(o, e->partition, e->npartition);
	}
	for (uint32_t i = 0; i < e->norder; i++) {
		put(o, i ? ", " : e->npartition ? " ORDER BY " : "ORDER BY ");
		print(o, e->order[i].expr);
		if (e->order[i].desc)
			put(o, " DESC");
	}
	if (e->frame) {
		put(o, e->frame == SL_FRAME_ROWS ? " ROWS BETWEEN " : " RANGE BETWEEN ");
		if (e->frame_lo < 0)
			put(o, "UNBOUNDED PRECEDING");
		else if (e->frame_lo == 0)
			put(o, "CURRENT ROW");
		else if (e->frame == SL_FRAME_ROWS)
			put(o, "%lld PRECEDING", (long long)e->frame_lo);
		else
			put(o, "INTERVAL '%lld' MILLISECOND PRECEDING", (long long)e->frame_lo);
		put(o, " AND CURRENT ROW");
	}
	put(o, ")");
}

static void print(struct out *o, const struct sl_expr *e)
{
	static const char *const is_texts[] = { "NULL", "TRUE", "FALSE" };
	const char *not = e->negated ? "NOT " : "";

	switch (e->kind) {
	case SL_EXPR_INT:
	case SL_EXPR_DECIMAL:
		put(o, "%s", e->text);
		break;
	case SL_EXPR_STRING:
		put_string(o, e->text);
		break;
	case SL_EXPR_BOOL:
		put(o, e->ival ? "TRUE" : "FALSE");
		break;
	case SL_EXPR_NULL:
		put(o, "NULL");
		break;
	case SL_EXPR_INTERVAL:
		put(o, "INTERVAL ");
		put_string(o, e->text);
		put(o, " %s", unit_text(e->unit));
		break;
	case SL_EXPR_TIMESTAMP:
	case SL_EXPR_DATE:
		put(o, e->kind == SL_EXPR_DATE ? "DATE " : "TIMESTAMP ");
		put_string(o, e->text);
		break;
	case SL_EXPR_COLUMN:
		print_path(o, e);
		break;
	case SL_EXPR_STAR:
		put(o, "*");
		break;
	case SL_EXPR_UNARY:
		put(o, e->op == SL_EXPR_OP_NOT ? "(NOT " : "(%s", op_text(e->op));
		print(o, e->args[0]);
		put(o, ")");
		break;
	case SL_EXPR_BINARY:
		put(o, "(");
		print(o, e->args[0]);
		put(o, " %s ", op_text(e->op));
		print(o, e->args[1]);
		put(o, ")");
		break;
	case SL_EXPR_IS:
		put(o, "(");
		print(o, e->args[0]);
		put(o, " IS %s%s)", not, is_texts[e->is_what]);
		break;
	case SL_EXPR_BETWEEN:
		put(o, "(");
		print(o, e->args[0]);
		put(o, " %sBETWEEN ", not );
		print(o, e->args[1]);
		put(o, " AND ");
		print(o, e->args[2]);
		put(o, ")");
		break;
	case SL_EXPR_IN:
		put(o, "(");
		print(o, e->args[0]);
		put(o, " %sIN (", not );
		/* a subquery by its place: two of them are one only when they are the same */
		if (e->sub)
			put(o, "SELECT at %u:%u", e->sub->line, e->sub->col);
		print_list(o, e->args + 1, e->nargs - 1);
		put(o, "))");
		break;
	case SL_EXPR_EXISTS:
		put(o, "EXISTS (SELECT at %u:%u)", e->sub ? e->sub->line : 0,
		    e->sub ? e->sub->col : 0);
		break;
	case SL_EXPR_LIKE:
		put(o, "(");
		print(o, e->args[0]);
		put(o, " %sLIKE ", not );
		print(o, e->args[1]);
		put(o, ")");
		break;
	case SL_EXPR_CALL:
		put_name(o, e->text);
		put(o, "(%s", e->distinct ? "DISTINCT " : "");
		print_list(o, e->args, e->nargs);
		put(o, ")");
		if (e->filter) {
			put(o, " FILTER (WHERE ");
			print(o, e->filter);
			put(o, ")");
		}
		if (e->over)
			print_over(o, e);
		break;
	case SL_EXPR_CASE:
		put(o, "CASE");
		if (e->case_operand) {
			put(o, " ");
			print(o, e->case_operand);
		}
		for (uint32_t i = 0; i + 1 < e->nargs; i += 2) {
			put(o, " WHEN ");
			print(o, e->args[i]);
			put(o, " THEN ");
			print(o, e->args[i + 1]);
		}
		if (e->case_else) {
			put(o, " ELSE ");
			print(o, e->case_else);
		}
		put(o, " END");
		break;
	case SL_EXPR_CAST:
		put(o, "CAST(");
		print(o, e->args[0]);
		put(o, " AS ");
		put_type(o, &e->type);
		put(o, ")");
		break;
	case SL_EXPR_ROUND_TO:
		put(o, "%s(", e->text);
		print(o, e->args[0]);
		put(o, " TO %s)", unit_text(e->unit));
		break;
	case SL_EXPR_DESCRIPTOR:
		put(o, "DESCRIPTOR(");
		print_list(o, e->args, e->nargs);
		put(o, ")");
		break;
	case SL_EXPR_TABLE:
		put(o, "TABLE ");
		print_path(o, e);
		break;
	}
}

size_t sl_expr_print(const struct sl_expr *e, char *buf, size_t cap)
{
	struct out o = { .buf = buf, .cap = cap };

	if (cap)
		buf[0] = 0;
	print(&o, e);
	return o.n;
}
