/*
 * plan_show.c - SHOW TABLES, SHOW VIEWS, SHOW USER FUNCTIONS, SHOW CREATE TABLE t and
 * DESCRIBE (DESC) t: the catalog printed as Flink 2.3 prints it (TableResult.print(), the
 * SQL client's tableau form), as text the CLI writes to stdout in the file's order among
 * the jobs' rows.
 *
 * Flink's tableau: every cell right-aligned in a column as wide as its widest cell (a
 * character counts one; Flink counts East Asian wide characters two, sluice does not),
 * boxed in +---+ lines, then "N rows in set", or only "Empty set". DESCRIBE's columns are
 * Flink's: name, type (its summary form, with *ROWTIME* / *PROCTIME* on time attributes),
 * null, key (PRI(a, b) on primary key columns), extras (AS expr of a computed column,
 * METADATA ...), watermark. Expressions are written back as Calcite writes them: names in
 * backquotes, operators with the fewest parentheses their precedence needs.
 *
 * Known differences: a computed column's type is sluice's, which has no VARCHAR(n) (Flink
 * keeps UPPER(VARCHAR(10)) a VARCHAR(10), sluice says STRING, and a string literal is
 * CHAR(n) there); a DECIMAL wider than 18 digits is narrowed to 18 digits, as sluice
 * computes it.
 *
 * Plan time only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query.h"
#include "plan_int.h"

/* ---- Flink's tableau -------------------------------------------------------------------- */

#define TAB_MAX_COLS 6

struct tab {
	int ncols, nrows;
	const char *head[TAB_MAX_COLS];
	char **cells; /* nrows * ncols, owned */
};

static size_t width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void border(FILE *f, const size_t *w, int n)
{
	for (int i = 0; i < n; i++) {
		fputc('+', f);
		for (size_t k = 0; k < w[i] + 2; k++)
			fputc('-', f);
	}
	fputs("+\n", f);
}

static void line(FILE *f, const size_t *w, const char *const *cells, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(f, "| %*s%s ", (int)(w[i] - width(cells[i])), "", cells[i]);
	fputs("|\n", f);
}

static void tab_print(FILE *f, const struct tab *t)
{
	size_t w[TAB_MAX_COLS];

	if (!t->nrows) {
		fputs("Empty set\n", f);
		return;
	}
	for (int i = 0; i < t->ncols; i++) {
		w[i] = width(t->head[i]);
		for (int r = 0; r < t->nrows; r++) {
			size_t k = width(t->cells[r * t->ncols + i]);

			w[i] = k > w[i] ? k : w[i];
		}
	}
	border(f, w, t->ncols);
	line(f, w, t->head, t->ncols);
	border(f, w, t->ncols);
	for (int r = 0; r < t->nrows; r++)
		line(f, w, (const char *const *)t->cells + r * t->ncols, t->ncols);
	border(f, w, t->ncols);
	fprintf(f, "%d row%s in set\n", t->nrows, t->nrows == 1 ? "" : "s");
}

/* Appends a row of ncols cells (copied). */
static int tab_add(struct tab *t, const char *const *cells)
{
	char **c = realloc(t->cells, sizeof(*c) * (size_t)(t->nrows + 1) * (size_t)t->ncols);

	if (!c)
		return -ENOMEM;
	t->cells = c;
	for (int i = 0; i < t->ncols; i++)
		if (!(c[t->nrows * t->ncols + i] = strdup(cells[i]))) {
			while (--i >= 0)
				free(c[t->nrows * t->ncols + i]);
			return -ENOMEM;
		}
	t->nrows++;
	return 0;
}

static void tab_fini(struct tab *t)
{
	for (int i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
}

/* ---- types and expressions as Flink writes them ------------------------------------------ */

static void put_ident(FILE *f, const char *s)
{
	fputc('`', f);
	for (; *s; s++)
		fputs(*s == '`' ? "``" : (char[]){ *s, 0 }, f);
	fputc('`', f);
}

/* `summary`: DESCRIBE's form (STRING, TIMESTAMP_LTZ(3)); else SHOW CREATE TABLE's, which
 * reads back as DDL (VARCHAR(2147483647), TIMESTAMP(3) WITH LOCAL TIME ZONE). */
static void put_type(FILE *f, const struct sl_ddl_type *t, bool summary, bool not_null)
{
	switch (t->kind) {
	case SL_DDL_BOOLEAN:
		fputs("BOOLEAN", f);
		break;
	case SL_DDL_INT:
		fputs("INT", f);
		break;
	case SL_DDL_BIGINT:
		fputs("BIGINT", f);
		break;
	case SL_DDL_FLOAT:
		fputs("FLOAT", f);
		break;
	case SL_DDL_DOUBLE:
		fputs("DOUBLE", f);
		break;
	case SL_DDL_DECIMAL:
		fprintf(f, "DECIMAL(%u, %u)", t->precision, t->scale);
		break;
	case SL_DDL_STRING:
		fputs(summary ? "STRING" : "VARCHAR(2147483647)", f);
		break;
	case SL_DDL_VARCHAR:
		fprintf(f, "VARCHAR(%u)", t->precision);
		break;
	case SL_DDL_TIMESTAMP:
		fprintf(f, "TIMESTAMP(%u)", t->precision);
		break;
	case SL_DDL_TIMESTAMP_LTZ:
		fprintf(f, summary ? "TIMESTAMP_LTZ(%u)" : "TIMESTAMP(%u) WITH LOCAL TIME ZONE",
			t->precision);
		break;
	case SL_DDL_DATE:
		fputs("DATE", f);
		break;
	case SL_DDL_ROW:
		fputs("ROW<", f);
		for (uint32_t i = 0; i < t->nfields; i++) {
			if (i)
				fputs(", ", f);
			put_ident(f, t->fields[i].name);
			fputc(' ', f);
			put_type(f, &t->fields[i].type, summary, t->fields[i].type.not_null);
		}
		fputc('>', f);
		break;
	}
	if (not_null)
		fputs(" NOT NULL", f);
}

/* A compiled (computed column's) type in DESCRIBE's form. */
static void put_sql_type(FILE *f, const struct sl_sql_type *t)
{
	char buf[64];

	if (t->type == SL_TYPE_TIMESTAMP_LTZ) {
		fprintf(f, "TIMESTAMP_LTZ(%d)", t->prec);
		return;
	}
	sl_sql_type_name(t, buf, sizeof buf);
	fputs(buf, f);
}

/* Calcite's operator precedences (SqlStdOperatorTable); a leaf binds tightest. */
enum {
	P_OR = 13,
	P_AND = 24,
	P_NOT = 26,
	P_IS = 28,
	P_CMP = 30,
	P_LIKE = 32,
	P_ADD = 40,
	P_MUL = 60,
	P_NEG = 80,
	P_LEAF = 1000
};

static int prec_of(const struct sl_expr *e)
{
	switch (e->kind) {
	case SL_EXPR_BINARY:
		switch (e->op) {
		case SL_EXPR_OP_OR:
			return P_OR;
		case SL_EXPR_OP_AND:
			return P_AND;
		case SL_EXPR_OP_ADD:
		case SL_EXPR_OP_SUB:
			return P_ADD;
		case SL_EXPR_OP_MUL:
		case SL_EXPR_OP_DIV:
		case SL_EXPR_OP_MOD:
		case SL_EXPR_OP_CONCAT:
			return P_MUL;
		default:
			return P_CMP;
		}
	case SL_EXPR_UNARY:
		return e->op == SL_EXPR_OP_NOT ? P_NOT : P_NEG;
	case SL_EXPR_IS:
		return P_IS;
	case SL_EXPR_BETWEEN:
	case SL_EXPR_IN:
	case SL_EXPR_LIKE:
		return P_LIKE;
	default:
		return P_LEAF;
	}
}

static const char *const op_texts[] = {
	[SL_EXPR_OP_OR] = "OR",	    [SL_EXPR_OP_AND] = "AND", [SL_EXPR_OP_NOT] = "NOT",
	[SL_EXPR_OP_EQ] = "=",	    [SL_EXPR_OP_NE] = "<>",   [SL_EXPR_OP_LT] = "<",
	[SL_EXPR_OP_LE] = "<=",	    [SL_EXPR_OP_GT] = ">",    [SL_EXPR_OP_GE] = ">=",
	[SL_EXPR_OP_CONCAT] = "||", [SL_EXPR_OP_ADD] = "+",   [SL_EXPR_OP_SUB] = "-",
	[SL_EXPR_OP_MUL] = "*",	    [SL_EXPR_OP_DIV] = "/",   [SL_EXPR_OP_MOD] = "%",
	[SL_EXPR_OP_NEG] = "-",	    [SL_EXPR_OP_PLUS] = "+",
};

static const char *unit_text(enum sl_expr_unit u)
{
	static const char *const units[] = { "", "SECOND", "MINUTE", "HOUR", "DAY" };

	return (unsigned)u < sizeof units / sizeof units[0] ? units[u] : "";
}

static void put_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		fputs(*s == '\'' ? "''" : (char[]){ *s, 0 }, f);
	fputc('\'', f);
}

static void put_upper(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s >= 'a' && *s <= 'z' ? *s - 32 : *s, f);
}

static void unparse(FILE *f, const struct sl_expr *e, int min_prec);

static void unparse_list(FILE *f, struct sl_expr *const *a, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", f);
		unparse(f, a[i], 0);
	}
}

/* e written so that it binds at least as tightly as min_prec needs. */
static void unparse(FILE *f, const struct sl_expr *e, int min_prec)
{
	int p = prec_of(e);
	bool paren = p < min_prec;

	if (paren)
		fputc('(', f);
	switch (e->kind) {
	case SL_EXPR_INT:
	case SL_EXPR_DECIMAL:
		fputs(e->text, f);
		break;
	case SL_EXPR_STRING:
		put_str(f, e->text);
		break;
	case SL_EXPR_BOOL:
		fputs(e->ival ? "TRUE" : "FALSE", f);
		break;
	case SL_EXPR_NULL:
		fputs("NULL", f);
		break;
	case SL_EXPR_INTERVAL:
		fputs("INTERVAL ", f);
		put_str(f, e->text);
		fprintf(f, " %s", unit_text(e->unit));
		break;
	case SL_EXPR_TIMESTAMP:
	case SL_EXPR_DATE:
		fputs(e->kind == SL_EXPR_DATE ? "DATE " : "TIMESTAMP ", f);
		put_str(f, e->text);
		break;
	case SL_EXPR_COLUMN:
		for (uint32_t i = 0; i < e->npath; i++) {
			if (i)
				fputc('.', f);
			put_ident(f, e->path[i]);
		}
		break;
	case SL_EXPR_STAR:
		fputc('*', f);
		break;
	case SL_EXPR_UNARY:
		fputs(e->op == SL_EXPR_OP_NOT ? "NOT " : op_texts[e->op], f);
		unparse(f, e->args[0], p);
		break;
	case SL_EXPR_BINARY: /* left-associative: the right operand binds tighter */
		unparse(f, e->args[0], p);
		fprintf(f, " %s ", op_texts[e->op] ? op_texts[e->op] : "?");
		unparse(f, e->args[1], p + 1);
		break;
	case SL_EXPR_IS:
		unparse(f, e->args[0], p + 1);
		fprintf(f, " IS %s%s", e->negated ? "NOT " : "",
			e->is_what == SL_EXPR_IS_NULL	? "NULL"
			: e->is_what == SL_EXPR_IS_TRUE ? "TRUE"
							: "FALSE");
		break;
	case SL_EXPR_BETWEEN:
		unparse(f, e->args[0], p + 1);
		fprintf(f, " %sBETWEEN ASYMMETRIC ", e->negated ? "NOT " : "");
		unparse(f, e->args[1], p + 1);
		fputs(" AND ", f);
		unparse(f, e->args[2], p + 1);
		break;
	case SL_EXPR_IN:
		unparse(f, e->args[0], p + 1);
		fprintf(f, " %sIN (", e->negated ? "NOT " : "");
		unparse_list(f, e->args + 1, e->nargs - 1);
		fputc(')', f);
		break;
	case SL_EXPR_LIKE:
		unparse(f, e->args[0], p + 1);
		fprintf(f, " %sLIKE ", e->negated ? "NOT " : "");
		unparse(f, e->args[1], p + 1);
		break;
	case SL_EXPR_CALL:
		put_upper(f, e->text);
		fputc('(', f);
		if (e->distinct)
			fputs("DISTINCT ", f);
		unparse_list(f, e->args, e->nargs);
		fputc(')', f);
		break;
	case SL_EXPR_CASE:
		fputs("CASE", f);
		if (e->case_operand) {
			fputc(' ', f);
			unparse(f, e->case_operand, 0);
		}
		for (uint32_t i = 0; i + 1 < e->nargs; i += 2) {
			fputs(" WHEN ", f);
			unparse(f, e->args[i], 0);
			fputs(" THEN ", f);
			unparse(f, e->args[i + 1], 0);
		}
		if (e->case_else) {
			fputs(" ELSE ", f);
			unparse(f, e->case_else, 0);
		}
		fputs(" END", f);
		break;
	case SL_EXPR_CAST:
		fputs("CAST(", f);
		unparse(f, e->args[0], 0);
		fputs(" AS ", f);
		put_type(f, &e->type, true, false);
		fputc(')', f);
		break;
	case SL_EXPR_ROUND_TO:
		put_upper(f, e->text);
		fputc('(', f);
		unparse(f, e->args[0], 0);
		fprintf(f, " TO %s)", unit_text(e->unit));
		break;
	default:
		fputs("?", f);
	}
	if (paren)
		fputc(')', f);
}

/* ---- the statements ----------------------------------------------------------------------- */

/* Text built with a memory stream; NULL (and the failure set) when it could not be. */
struct text {
	char *p;
	size_t n;
	FILE *f;
};

static int text_open(struct sl_sql_plan_ctx *c, struct text *t)
{
	t->p = NULL;
	t->f = open_memstream(&t->p, &t->n);
	return t->f ? 0 : sl_sql_plan_fail(c, 0, 0, "out of memory");
}

static char *text_close(struct text *t)
{
	if (fclose(t->f)) {
		free(t->p);
		return NULL;
	}
	return t->p;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* SHOW TABLES (views too, as Flink lists them) or SHOW VIEWS, sorted by name. */
static int show_names(struct sl_sql_plan_ctx *c, bool views_only, FILE *f)
{
	struct tab t = { .ncols = 1, .head = { views_only ? "view name" : "table name" } };
	const char **names = malloc(sizeof(*names) * (size_t)(c->ntables + c->nviews + 1));
	int n = 0, rc = 0;

	if (!names)
		return -ENOMEM;
	for (int i = 0; !views_only && i < c->ntables; i++)
		names[n++] = c->tables[i]->ddl->name;
	for (int i = 0; i < c->nviews; i++)
		names[n++] = c->views[i]->name;
	qsort(names, (size_t)n, sizeof(*names), by_name);
	for (int i = 0; i < n && !rc; i++)
		rc = tab_add(&t, &names[i]);
	if (!rc)
		tab_print(f, &t);
	tab_fini(&t);
	free(names);
	return rc;
}

/* SHOW USER FUNCTIONS: the file's C functions, named in lower case as Flink keeps them. */
static int show_functions(struct sl_sql_plan_ctx *c, FILE *f)
{
	struct tab t = { .ncols = 1, .head = { "function name" } };
	char **names = calloc((size_t)c->nudfs + 1, sizeof(*names));
	int rc = 0;

	if (!names)
		return -ENOMEM;
	for (int i = 0; i < c->nudfs && !rc; i++) {
		names[i] = strdup(c->udfs[i].name);
		if (!names[i])
			rc = -ENOMEM;
		for (char *p = names[i]; p && *p; p++)
			*p = *p >= 'A' && *p <= 'Z' ? (char)(*p + 32) : *p;
	}
	if (!rc)
		qsort(names, (size_t)c->nudfs, sizeof(*names), by_name);
	for (int i = 0; i < c->nudfs && !rc; i++)
		rc = tab_add(&t, (const char *const *)&names[i]);
	if (!rc)
		tab_print(f, &t);
	for (int i = 0; i < c->nudfs; i++)
		free(names[i]);
	free(names);
	tab_fini(&t);
	return rc;
}

static bool in_pk(const struct sl_ddl_table *d, const char *name)
{
	for (uint32_t k = 0; k < d->npk; k++)
		if (!strcmp(d->pk[k].name, name))
			return true;
	return false;
}

/* The computed column's expression and type, compiled over the physical columns (NOT NULL
 * where the DDL or the primary key says so, as Flink types them). */
static int computed_type(struct sl_sql_plan_ctx *c, const struct sl_sql_plan_table *t,
			 const struct sl_ddl_column *col, const struct sl_expr **e,
			 struct sl_sql_type *type)
{
	struct sl_sql_plan_rel *rel = calloc(1, sizeof(*rel));
	struct sl_prog *p;

	if (!rel)
		return sl_sql_plan_fail(c, 0, 0, "out of memory");
	for (int i = 0; i < t->nphys; i++) {
		struct sl_sql_col *pc = &rel->cols[rel->ncols++];

		pc->name = t->phys_name[i];
		pc->type = t->phys_type[i];
		pc->field = i;
		if (in_pk(t->ddl, pc->name))
			pc->type.nullable = false;
	}
	*e = sl_sql_plan_parse_span(c, &col->expr);
	p = *e ? sl_sql_plan_compile(c, *e, rel, type) : NULL;
	free(rel);
	if (!p)
		return -EINVAL;
	sl_prog_destroy(p);
	return 0;
}

static const char *const describe_head[] = { "name", "type", "null", "key", "extras", "watermark" };

static int describe(struct sl_sql_plan_ctx *c, const struct sl_sql_plan_table *t, FILE *f)
{
	const struct sl_ddl_table *d = t->ddl;
	struct tab tab = { .ncols = 6 };
	struct text key = { 0 };
	int rc = 0;

	memcpy(tab.head, describe_head, sizeof describe_head);
	if (d->npk) {
		if ((rc = text_open(c, &key)))
			return rc;
		fputs("PRI(", key.f);
		for (uint32_t k = 0; k < d->npk; k++)
			fprintf(key.f, "%s%s", k ? ", " : "", d->pk[k].name);
		fputc(')', key.f);
		if (!text_close(&key))
			return sl_sql_plan_fail(c, 0, 0, "out of memory");
	}
	for (uint32_t i = 0; i < d->ncols && !rc; i++) {
		const struct sl_ddl_column *col = &d->cols[i];
		bool pk = in_pk(d, col->name), not_null = pk || col->type.not_null;
		bool rowtime = d->has_watermark && !strcmp(d->wm_col.name, col->name);
		struct text ty, ex, wm;
		const char *cells[6];
		const struct sl_expr *e = NULL;
		struct sl_sql_type ct;

		if ((rc = text_open(c, &ty)))
			break;
		if ((rc = text_open(c, &ex))) {
			free(text_close(&ty));
			break;
		}
		if ((rc = text_open(c, &wm))) {
			free(text_close(&ty));
			free(text_close(&ex));
			break;
		}
		if (col->computed) {
			rc = computed_type(c, t, col, &e, &ct);
			if (!rc) {
				bool proc =
					e->kind == SL_EXPR_CALL && !strcasecmp(e->text, "PROCTIME");

				put_sql_type(ty.f, &ct);
				if (proc)
					fputs(" *PROCTIME*", ty.f);
				not_null = !ct.nullable;
				fputs("AS ", ex.f);
				unparse(ex.f, e, 0);
			}
		} else {
			put_type(ty.f, &col->type, true, false);
			if (col->metadata) {
				fputs("METADATA", ex.f);
				if (col->meta_key)
					fprintf(ex.f, " FROM '%s'", col->meta_key);
				if (col->is_virtual)
					fputs(" VIRTUAL", ex.f);
			}
		}
		if (rowtime && !rc) {
			const struct sl_ddl_span *sp = &d->wm_expr;
			const struct sl_expr *w = sl_sql_plan_parse_span(c, sp);

			fputs(" *ROWTIME*", ty.f);
			if (w)
				unparse(wm.f, w, 0);
			else
				rc = -EINVAL;
		}
		cells[0] = col->name;
		cells[1] = text_close(&ty);
		cells[2] = not_null ? "FALSE" : "TRUE";
		cells[3] = pk ? key.p : "";
		cells[4] = text_close(&ex);
		cells[5] = text_close(&wm);
		if (!rc && (!cells[1] || !cells[4] || !cells[5]))
			rc = sl_sql_plan_fail(c, 0, 0, "out of memory");
		if (!rc)
			rc = tab_add(&tab, cells);
		free((char *)cells[1]);
		free((char *)cells[4]);
		free((char *)cells[5]);
	}
	if (!rc)
		tab_print(f, &tab);
	tab_fini(&tab);
	free(key.p);
	return rc;
}

/*
 * DESCRIBE of a view: its columns as reading it gives them (names, types, time attributes),
 * planned into a job that is thrown away; what the planning keeps (programs, connectors)
 * goes with the script. No key, extras or watermark, as Flink shows a view.
 */
static int describe_view(struct sl_sql_plan_ctx *c, const struct sl_ddl_show *sh, FILE *f)
{
	struct sl_from from = { .kind = SL_FROM_TABLE, .line = sh->line, .col = sh->col };
	struct sl_job *job = sl_job_create("describe");
	struct sl_sql_plan_rel *rel = calloc(1, sizeof(*rel));
	struct tab tab = { .ncols = 6 };
	int rc;

	memcpy(tab.head, describe_head, sizeof describe_head);
	from.name = sh->name;
	if (!job || !rel) {
		rc = sl_sql_plan_fail(c, 0, 0, "out of memory");
		goto out_free;
	}
	rc = sl_sql_plan_from(c, job, &from, rel);
	for (int i = 0; i < rel->ncols && !rc; i++) {
		const struct sl_sql_col *col = &rel->cols[i];
		struct text ty;
		const char *cells[6];

		if (!col->name || col->name[0] == '$' || col->match)
			continue;
		if ((rc = text_open(c, &ty)))
			break;
		put_sql_type(ty.f, &col->type);
		fputs(col->rowtime ? " *ROWTIME*" : col->proctime ? " *PROCTIME*" : "", ty.f);
		cells[0] = col->name;
		cells[1] = text_close(&ty);
		cells[2] = col->type.nullable ? "TRUE" : "FALSE";
		cells[3] = cells[4] = cells[5] = "";
		rc = cells[1] ? tab_add(&tab, cells) : -ENOMEM;
		free((char *)cells[1]);
	}
	if (!rc)
		tab_print(f, &tab);
out_free:
	tab_fini(&tab);
	free(rel);
	sl_job_destroy(job);
	return rc;
}

static int by_key(const void *a, const void *b)
{
	return strcmp((*(const struct sl_ddl_option *const *)a)->key,
		      (*(const struct sl_ddl_option *const *)b)->key);
}

/* Flink's CREATE TABLE text (ResolvedCatalogTable -> DDL): the one cell of its result. */
static int create_text(struct sl_sql_plan_ctx *c, const struct sl_sql_plan_table *t, FILE *f)
{
	const struct sl_ddl_table *d = t->ddl;
	const struct sl_ddl_option **opts = malloc(sizeof(*opts) * (d->nopts + 1));
	bool first = true;

	if (!opts)
		return sl_sql_plan_fail(c, 0, 0, "out of memory");
	fprintf(f, "CREATE %sTABLE `default_catalog`.`default_database`.",
		d->temporary ? "TEMPORARY " : "");
	put_ident(f, d->name);
	fputs(" (\n", f);
	for (uint32_t i = 0; i < d->ncols; i++) {
		const struct sl_ddl_column *col = &d->cols[i];

		fputs(first ? "  " : ",\n  ", f);
		first = false;
		put_ident(f, col->name);
		if (col->computed) {
			const struct sl_expr *e = sl_sql_plan_parse_span(c, &col->expr);

			if (!e) {
				free(opts);
				return -EINVAL;
			}
			fputs(" AS ", f);
			unparse(f, e, 0);
			continue;
		}
		fputc(' ', f);
		put_type(f, &col->type, false, col->type.not_null || in_pk(d, col->name));
		if (col->metadata) {
			fputs(" METADATA", f);
			if (col->meta_key)
				fprintf(f, " FROM '%s'", col->meta_key);
			if (col->is_virtual)
				fputs(" VIRTUAL", f);
		}
	}
	if (d->has_watermark) {
		const struct sl_expr *w = sl_sql_plan_parse_span(c, &d->wm_expr);

		if (!w) {
			free(opts);
			return -EINVAL;
		}
		fputs(",\n  WATERMARK FOR ", f);
		put_ident(f, d->wm_col.name);
		fputs(" AS ", f);
		unparse(f, w, 0);
	}
	if (d->npk) {
		fputs(",\n  CONSTRAINT `PK", f);
		for (uint32_t k = 0; k < d->npk; k++)
			fprintf(f, "_%s", d->pk[k].name);
		fputs("` PRIMARY KEY (", f);
		for (uint32_t k = 0; k < d->npk; k++) {
			if (k)
				fputs(", ", f);
			put_ident(f, d->pk[k].name);
		}
		fputs(") NOT ENFORCED", f);
	}
	fputs("\n)\n", f);
	if (d->npart) {
		/* Flink's line between the columns and WITH */
		fputs("PARTITIONED BY (", f);
		for (uint32_t k = 0; k < d->npart; k++) {
			if (k)
				fputs(", ", f);
			put_ident(f, d->part[k].name);
		}
		fputs(")\n", f);
	}
	fputs("WITH (\n", f);
	for (uint32_t i = 0; i < d->nopts; i++)
		opts[i] = &d->opts[i];
	qsort(opts, d->nopts, sizeof(*opts), by_key);
	for (uint32_t i = 0; i < d->nopts; i++) {
		fputs("  ", f);
		put_str(f, opts[i]->key);
		fputs(" = ", f);
		put_str(f, opts[i]->value);
		fputs(i + 1 < d->nopts ? ",\n" : "\n", f);
	}
	fputs(")\n", f);
	free(opts);
	return 0;
}

static int show_create(struct sl_sql_plan_ctx *c, const struct sl_sql_plan_table *t, FILE *f)
{
	struct tab tab = { .ncols = 1, .head = { "result" } };
	struct text ddl;
	const char *cell;
	int rc;

	if ((rc = text_open(c, &ddl)))
		return rc;
	rc = create_text(c, t, ddl.f);
	cell = text_close(&ddl);
	if (!rc && !cell)
		rc = sl_sql_plan_fail(c, 0, 0, "out of memory");
	if (!rc)
		rc = tab_add(&tab, &cell);
	if (!rc)
		tab_print(f, &tab);
	tab_fini(&tab);
	free((char *)cell);
	return rc;
}

int sl_sql_plan_show(struct sl_sql_plan_ctx *c, const struct sl_ddl_show *sh)
{
	const struct sl_sql_plan_table *t = NULL;
	struct sl_sql_plan_info *info;
	struct text out;
	int rc;

	if (sh->name) {
		t = sl_sql_plan_find_table(c, sh->name);
		if (!t && sl_sql_plan_find_view(c, sh->name) && sh->what != SL_DDL_DESCRIBE)
			return sl_sql_plan_fail(c, sh->line, sh->col,
						"SHOW CREATE TABLE of view %s: it is not a table",
						sh->name);
		if (!t && !sl_sql_plan_find_view(c, sh->name))
			return sl_sql_plan_fail(c, sh->line, sh->col,
						"table %s does not exist (CREATE TABLE it first)",
						sh->name);
	}
	if ((rc = text_open(c, &out)))
		return rc;
	switch (sh->what) {
	case SL_DDL_SHOW_TABLES:
	case SL_DDL_SHOW_VIEWS:
		rc = show_names(c, sh->what == SL_DDL_SHOW_VIEWS, out.f);
		break;
	case SL_DDL_SHOW_USER_FUNCTIONS:
		rc = show_functions(c, out.f);
		break;
	case SL_DDL_DESCRIBE:
		rc = t ? describe(c, t, out.f) : describe_view(c, sh, out.f);
		break;
	case SL_DDL_SHOW_CREATE_TABLE:
		rc = show_create(c, t, out.f);
		break;
	}
	if (!text_close(&out) && !rc)
		rc = -ENOMEM;
	if (rc) {
		free(out.p);
		return rc == -ENOMEM ? sl_sql_plan_fail(c, 0, 0, "out of memory") : rc;
	}
	info = realloc(c->infos, sizeof(*info) * (size_t)(c->ninfos + 1));
	if (!info) {
		free(out.p);
		return sl_sql_plan_fail(c, 0, 0, "out of memory");
	}
	c->infos = info;
	c->infos[c->ninfos++] = (struct sl_sql_plan_info){ .text = out.p, .after = c->njobs };
	return 0;
}
