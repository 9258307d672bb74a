/*
 * ddl.c - job file to statements; SET and CREATE TABLE parsed, the rest kept as spans
 * (see ddl.h).
 *
 * A recursive-descent parser over the token cursor (cursor.h), whose conventions it
 * follows; two-token lookahead (WATERMARK FOR, CREATE TEMPORARY TABLE, ROW <) copies the
 * lexer, which is a plain value.
 * Invariants: every allocation is linked into the script before it is filled, so a failure
 * anywhere frees everything through sl_ddl_destroy(); the first error wins and later ones
 * are not written (err holds the message of the token where parsing stopped).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "ddl.h"

/* Offsets of a token including its quotes (STRING and `name` text excludes them). */
static uint32_t tok_start(const struct sl_cur *p, const struct sl_tok *t)
{
	bool q = t->kind == SL_TOK_STRING || (t->kind == SL_TOK_IDENT && t->quoted);

	return (uint32_t)(t->text - p->lx.src) - (q ? 1 : 0);
}

static uint32_t tok_end(const struct sl_cur *p, const struct sl_tok *t)
{
	bool q = t->kind == SL_TOK_STRING || (t->kind == SL_TOK_IDENT && t->quoted);

	return (uint32_t)(t->text - p->lx.src) + t->len + (q ? 1 : 0);
}

/* Takes an identifier into *name (and its place); `what` names it in the error. */
static int take_name(struct sl_cur *p, struct sl_ddl_name *name, const char *what)
{
	if (p->tok.kind != SL_TOK_IDENT)
		return sl_cur_expected(p, what);
	name->line = p->tok.line;
	name->col = p->tok.col;
	name->name = sl_cur_ident_dup(p, &p->tok);
	if (!name->name)
		return -ENOMEM;
	sl_cur_advance(p);
	return 0;
}

static int take_string(struct sl_cur *p, char **out, const char *what)
{
	if (p->tok.kind != SL_TOK_STRING)
		return sl_cur_expected(p, what);
	*out = sl_cur_text_dup(p, &p->tok);
	if (!*out)
		return -ENOMEM;
	sl_cur_advance(p);
	return 0;
}

static void type_fini(struct sl_ddl_type *ty)
{
	for (uint32_t i = 0; i < ty->nfields; i++) {
		free(ty->fields[i].name);
		type_fini(&ty->fields[i].type);
	}
	free(ty->fields);
}

/* Parses "(n)" into *v when present; returns 1 if it was, 0 if not, -errno on error. */
static int opt_param(struct sl_cur *p, uint32_t *v, uint32_t lo, uint32_t hi, const char *what)
{
	char *end;
	unsigned long x;

	if (!sl_cur_accept_op(p, "("))
		return 0;
	if (p->tok.kind != SL_TOK_INTEGER)
		return sl_cur_expected(p, what);
	x = strtoul(p->tok.text, &end, 10);
	if (x < lo || x > hi)
		return sl_cur_fail_at(p, p->tok.line, p->tok.col,
				      "%s must be between %u and %u, found %.*s", what, lo, hi,
				      (int)p->tok.len, p->tok.text);
	*v = (uint32_t)x;
	sl_cur_advance(p);
	return 1;
}

static int parse_type(struct sl_cur *p, struct sl_ddl_type *ty, int depth);

/* ROW<name TYPE, ...> or ROW(name TYPE, ...); cur is the '<' or '('. */
static int parse_row(struct sl_cur *p, struct sl_ddl_type *ty, int depth)
{
	const char *close = sl_cur_is_op(p, "<") ? ">" : ")";
	char what[64];
	int rc;

	sl_cur_advance(p);
	snprintf(what, sizeof what, "'%s' or ',' after ROW field", close);
	for (;;) {
		struct sl_ddl_field *f =
			sl_cur_append(p, (void **)&ty->fields, &ty->nfields, sizeof *f);
		struct sl_ddl_name n = { 0 };

		if (!f)
			return -ENOMEM;
		rc = take_name(p, &n, "a ROW field name");
		f->name = n.name;
		f->line = n.line;
		f->col = n.col;
		if (rc)
			return rc;
		for (uint32_t i = 0; i + 1 < ty->nfields; i++)
			if (!strcmp(ty->fields[i].name, f->name))
				return sl_cur_fail_at(p, f->line, f->col,
						      "duplicate ROW field '%s'", f->name);
		rc = parse_type(p, &f->type, depth + 1);
		if (rc)
			return rc;
		if (sl_cur_is_op(p, close))
			break;
		rc = sl_cur_expect_op(p, ",", what);
		if (rc)
			return rc;
	}
	sl_cur_advance(p);
	return 0;
}

static const char type_names[] = "a type (BOOLEAN, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, "
				 "STRING, VARCHAR, TIMESTAMP, TIMESTAMP_LTZ, DATE, ROW)";

/* TYPE [NOT NULL | NULL]; depth bounds ROW nesting so hostile input cannot blow the stack. */
static int parse_type(struct sl_cur *p, struct sl_ddl_type *ty, int depth)
{
	int rc = 0;

	ty->line = p->tok.line;
	ty->col = p->tok.col;
	if (depth > 32)
		return sl_cur_fail_at(p, ty->line, ty->col, "ROW types nested deeper than 32");
	if (p->tok.kind != SL_TOK_IDENT || p->tok.quoted)
		return sl_cur_expected(p, type_names);
	if (sl_cur_is_kw(p, "BOOLEAN")) {
		ty->kind = SL_DDL_BOOLEAN;
	} else if (sl_cur_is_kw(p, "INT") || sl_cur_is_kw(p, "INTEGER")) {
		ty->kind = SL_DDL_INT;
	} else if (sl_cur_is_kw(p, "BIGINT")) {
		ty->kind = SL_DDL_BIGINT;
	} else if (sl_cur_is_kw(p, "FLOAT")) {
		ty->kind = SL_DDL_FLOAT;
	} else if (sl_cur_is_kw(p, "DOUBLE")) {
		ty->kind = SL_DDL_DOUBLE;
		sl_cur_advance(p);
		sl_cur_accept_kw(p, "PRECISION");
		goto nullability;
	} else if (sl_cur_is_kw(p, "DECIMAL") || sl_cur_is_kw(p, "DEC") ||
		   sl_cur_is_kw(p, "NUMERIC")) {
		ty->kind = SL_DDL_DECIMAL;
		ty->precision = 10;
		sl_cur_advance(p);
		rc = opt_param(p, &ty->precision, 1, 38, "DECIMAL precision");
		if (rc < 0)
			return rc;
		if (rc == 1 && sl_cur_is_op(p, ",")) {
			sl_cur_advance(p);
			if (p->tok.kind != SL_TOK_INTEGER)
				return sl_cur_expected(p, "DECIMAL scale");
			ty->scale = (uint32_t)strtoul(p->tok.text, NULL, 10);
			if (p->tok.len > 2 || ty->scale > ty->precision)
				return sl_cur_fail_at(p, p->tok.line, p->tok.col,
						      "DECIMAL scale must "
						      "be between 0 and the precision %u",
						      ty->precision);
			sl_cur_advance(p);
		}
		if (rc == 1 &&
		    (rc = sl_cur_expect_op(p, ")", "')' after DECIMAL precision and scale")))
			return rc;
		goto nullability;
	} else if (sl_cur_is_kw(p, "STRING")) {
		ty->kind = SL_DDL_STRING;
	} else if (sl_cur_is_kw(p, "VARCHAR")) {
		ty->kind = SL_DDL_VARCHAR;
		ty->precision = 1;
		sl_cur_advance(p);
		rc = opt_param(p, &ty->precision, 1, INT32_MAX, "VARCHAR length");
		if (rc == 1)
			rc = sl_cur_expect_op(p, ")", "')' after VARCHAR length");
		if (rc < 0)
			return rc;
		goto nullability;
	} else if (sl_cur_is_kw(p, "TIMESTAMP") || sl_cur_is_kw(p, "TIMESTAMP_LTZ")) {
		ty->kind = sl_cur_is_kw(p, "TIMESTAMP") ? SL_DDL_TIMESTAMP : SL_DDL_TIMESTAMP_LTZ;
		ty->precision = 6;
		sl_cur_advance(p);
		rc = opt_param(p, &ty->precision, 0, 9, "TIMESTAMP precision");
		if (rc == 1)
			rc = sl_cur_expect_op(p, ")", "')' after TIMESTAMP precision");
		if (rc < 0)
			return rc;
		if (ty->kind == SL_DDL_TIMESTAMP && sl_cur_is_kw(p, "WITH")) {
			struct sl_tok t = sl_cur_peek(p);

			/* WITH here is a time zone, never the table's WITH: that follows ')' */
			if (!sl_tok_is_kw(&t, "LOCAL"))
				return sl_cur_expected(p, "LOCAL TIME ZONE after TIMESTAMP WITH");
			sl_cur_advance(p);
			sl_cur_advance(p);
			if ((rc = sl_cur_expect_kw(p, "TIME", "TIME ZONE after WITH LOCAL")) ||
			    (rc = sl_cur_expect_kw(p, "ZONE", "ZONE after WITH LOCAL TIME")))
				return rc;
			ty->kind = SL_DDL_TIMESTAMP_LTZ;
		}
		goto nullability;
	} else if (sl_cur_is_kw(p, "DATE")) {
		ty->kind = SL_DDL_DATE;
	} else if (sl_cur_is_kw(p, "ROW")) {
		ty->kind = SL_DDL_ROW;
		sl_cur_advance(p);
		if (!sl_cur_is_op(p, "<") && !sl_cur_is_op(p, "("))
			return sl_cur_expected(p, "'<' or '(' after ROW");
		rc = parse_row(p, ty, depth);
		if (rc)
			return rc;
		goto nullability;
	} else {
		return sl_cur_expected(p, type_names);
	}
	sl_cur_advance(p);
nullability:
	if (sl_cur_accept_kw(p, "NOT")) {
		rc = sl_cur_expect_kw(p, "NULL", "NULL after NOT");
		ty->not_null = true;
	} else {
		sl_cur_accept_kw(p, "NULL");
	}
	return rc;
}

/*
 * Records the expression starting at cur up to the next ',' or ')' outside parentheses,
 * brackets and ROW/ARRAY/MAP<...> angle brackets, without consuming that stopper.
 */
static int scan_expr(struct sl_cur *p, struct sl_ddl_span *span, const char *after)
{
	struct sl_tok open[64]; /* unclosed ( and [, for the error message */
	struct sl_tok last = { 0 };
	uint32_t depth = 0, angle = 0;
	bool any = false;

	span->line = p->tok.line;
	span->col = p->tok.col;
	span->start = tok_start(p, &p->tok);
	for (;; sl_cur_advance(p)) {
		const struct sl_tok *t = &p->tok;

		if (t->kind == SL_TOK_ERROR)
			return sl_cur_expected(p, "");
		if (t->kind == SL_TOK_EOF || sl_cur_is_op(p, ";")) {
			if (depth)
				return sl_cur_fail_at(
					p, t->line, t->col,
					"expected '%s' to close '%.1s' at %u:%u, found %s",
					*open[depth - 1].text == '(' ? ")" : "]",
					open[depth - 1].text, open[depth - 1].line,
					open[depth - 1].col,
					t->kind == SL_TOK_EOF ? "end of input" : "';'");
			break;
		}
		/* WITH never appears in a scalar expression outside a CAST's parentheses: seen
		 * at the top, a ')' before the table's options is missing; stop to say so */
		if (!depth && !angle &&
		    (sl_cur_is_op(p, ",") || sl_cur_is_op(p, ")") || sl_cur_is_kw(p, "WITH")))
			break;
		if (sl_cur_is_op(p, "(") || sl_cur_is_op(p, "[")) {
			if (depth == sizeof open / sizeof open[0])
				return sl_cur_fail_at(p, t->line, t->col,
						      "expression nested deeper than 64 brackets");
			open[depth++] = *t;
		} else if (sl_cur_is_op(p, ")") || sl_cur_is_op(p, "]")) {
			if (!depth || *open[depth - 1].text != (sl_cur_is_op(p, ")") ? '(' : '['))
				return sl_cur_expected(
					p, depth   ? (*open[depth - 1].text == '(' ? "')'" : "']'")
					   : angle ? "'>'"
						   : "an operand or ','");
			depth--;
		} else if (!depth && (sl_cur_is_kw(p, "ROW") || sl_cur_is_kw(p, "ARRAY") ||
				      sl_cur_is_kw(p, "MAP") || sl_cur_is_kw(p, "MULTISET"))) {
			/* angles matter only at the top: inside brackets no ',' stops the scan */
			struct sl_tok n = sl_cur_peek(p);

			if (sl_tok_is_op(&n, "<")) {
				last = n;
				sl_cur_advance(p);
				angle++;
				any = true;
				continue;
			}
		} else if (!depth && angle && sl_cur_is_op(p, ">")) {
			angle--;
		}
		last = *t;
		any = true;
	}
	if (!any)
		return sl_cur_expected(p, after);
	span->end = tok_end(p, &last);
	return 0;
}

static int parse_options(struct sl_cur *p, struct sl_ddl_table *tb)
{
	int rc;

	if ((rc = sl_cur_expect_op(p, "(", "'(' after WITH")))
		return rc;
	if (sl_cur_accept_op(p, ")")) {
		return 0;
	}
	for (;;) {
		struct sl_ddl_option *o =
			sl_cur_append(p, (void **)&tb->opts, &tb->nopts, sizeof *o);

		if (!o)
			return -ENOMEM;
		o->line = p->tok.line;
		o->col = p->tok.col;
		if ((rc = take_string(p, &o->key, "an option key as 'string'")))
			return rc;
		for (uint32_t i = 0; i + 1 < tb->nopts; i++)
			if (!strcmp(tb->opts[i].key, o->key))
				return sl_cur_fail_at(p, o->line, o->col, "duplicate option '%s'",
						      o->key);
		if ((rc = sl_cur_expect_op(p, "=", "'=' after option key")) ||
		    (rc = take_string(p, &o->value, "an option value as 'string'")))
			return rc;
		if (sl_cur_is_op(p, ")"))
			break;
		if ((rc = sl_cur_expect_op(p, ",", "')' or ',' after option")))
			return rc;
	}
	sl_cur_advance(p);
	return 0;
}

static int parse_pk(struct sl_cur *p, struct sl_ddl_table *tb, const struct sl_tok *at)
{
	int rc;

	if (tb->pk)
		return sl_cur_fail_at(p, at->line, at->col, "a table has one PRIMARY KEY");
	if ((rc = sl_cur_expect_kw(p, "PRIMARY", "PRIMARY KEY")) ||
	    (rc = sl_cur_expect_kw(p, "KEY", "KEY after PRIMARY")) ||
	    (rc = sl_cur_expect_op(p, "(", "'(' after PRIMARY KEY")))
		return rc;
	for (;;) {
		struct sl_ddl_name *n = sl_cur_append(p, (void **)&tb->pk, &tb->npk, sizeof *n);

		if (!n)
			return -ENOMEM;
		if ((rc = take_name(p, n, "a key column name")))
			return rc;
		if (sl_cur_is_op(p, ")"))
			break;
		if ((rc = sl_cur_expect_op(p, ",", "')' or ',' after key column")))
			return rc;
	}
	sl_cur_advance(p);
	if ((rc = sl_cur_expect_kw(p, "NOT",
				   "NOT ENFORCED after PRIMARY KEY (Flink does not enforce "
				   "keys)")) ||
	    (rc = sl_cur_expect_kw(p, "ENFORCED", "ENFORCED after NOT")))
		return rc;
	return 0;
}

/* `PARTITIONED BY (c1, c2)` between the column list and WITH: the directory levels of a
 * filesystem table, in order (the names are checked against the columns in check_refs). */
static int parse_partitioned(struct sl_cur *p, struct sl_ddl_table *tb)
{
	int rc;

	sl_cur_advance(p);
	if ((rc = sl_cur_expect_kw(p, "BY", "BY after PARTITIONED")) ||
	    (rc = sl_cur_expect_op(p, "(", "'(' after PARTITIONED BY")))
		return rc;
	for (;;) {
		struct sl_ddl_name *n = sl_cur_append(p, (void **)&tb->part, &tb->npart, sizeof *n);

		if (!n)
			return -ENOMEM;
		if ((rc = take_name(p, n, "a partition column name")))
			return rc;
		if (sl_cur_is_op(p, ")"))
			break;
		if ((rc = sl_cur_expect_op(p, ",", "')' or ',' after partition column")))
			return rc;
	}
	sl_cur_advance(p);
	return 0;
}

/* `col TYPE PRIMARY KEY NOT ENFORCED`: the column alone is the key. */
static int parse_pk_inline(struct sl_cur *p, struct sl_ddl_table *tb, const struct sl_ddl_column *c,
			   const struct sl_tok *at)
{
	struct sl_ddl_name *n;
	int rc;

	if (tb->pk)
		return sl_cur_fail_at(p, at->line, at->col, "a table has one PRIMARY KEY");
	if ((rc = sl_cur_expect_kw(p, "PRIMARY", "PRIMARY KEY")) ||
	    (rc = sl_cur_expect_kw(p, "KEY", "KEY after PRIMARY")))
		return rc;
	n = sl_cur_append(p, (void **)&tb->pk, &tb->npk, sizeof *n);
	if (!n)
		return -ENOMEM;
	n->line = c->line;
	n->col = c->col;
	n->name = malloc(strlen(c->name) + 1);
	if (!n->name)
		return sl_cur_nomem(p);
	strcpy(n->name, c->name);
	if ((rc = sl_cur_expect_kw(p, "NOT",
				   "NOT ENFORCED after PRIMARY KEY (Flink does not enforce "
				   "keys)")) ||
	    (rc = sl_cur_expect_kw(p, "ENFORCED", "ENFORCED after NOT")))
		return rc;
	return 0;
}

static int parse_column(struct sl_cur *p, struct sl_ddl_table *tb)
{
	struct sl_ddl_column *c = sl_cur_append(p, (void **)&tb->cols, &tb->ncols, sizeof *c);
	struct sl_ddl_name n = { 0 };
	struct sl_tok at;
	int rc;

	if (!c)
		return -ENOMEM;
	rc = take_name(p, &n, "a column name, WATERMARK or PRIMARY KEY");
	c->name = n.name;
	c->line = n.line;
	c->col = n.col;
	if (rc)
		return rc;
	for (uint32_t i = 0; i + 1 < tb->ncols; i++)
		if (!strcmp(tb->cols[i].name, c->name))
			return sl_cur_fail_at(p, c->line, c->col, "duplicate column '%s'", c->name);
	if (sl_cur_accept_kw(p, "AS")) {
		c->computed = true;
		return scan_expr(p, &c->expr, "an expression after AS");
	}
	if ((rc = parse_type(p, &c->type, 0)))
		return rc;
	if (sl_cur_is_kw(p, "METADATA")) {
		/* Flink's metadata column: the connector fills it (Kafka: timestamp, partition,
		 * offset, topic, ...) */
		sl_cur_advance(p);
		c->metadata = true;
		if (sl_cur_accept_kw(p, "FROM")) {
			if ((rc = take_string(p, &c->meta_key, "a metadata key after FROM")))
				return rc;
		}
		if (sl_cur_accept_kw(p, "VIRTUAL")) {
			c->is_virtual = true;
		}
	}
	at = p->tok;
	if (sl_cur_is_kw(p, "PRIMARY"))
		return parse_pk_inline(p, tb, c, &at);
	return 0;
}

static int parse_watermark(struct sl_cur *p, struct sl_ddl_table *tb)
{
	int rc;

	if (tb->has_watermark)
		return sl_cur_fail_at(p, p->tok.line, p->tok.col, "a table has one WATERMARK");
	tb->has_watermark = true;
	sl_cur_advance(p); /* WATERMARK */
	if ((rc = sl_cur_expect_kw(p, "FOR", "FOR after WATERMARK")) ||
	    (rc = take_name(p, &tb->wm_col, "the rowtime column after WATERMARK FOR")) ||
	    (rc = sl_cur_expect_kw(p, "AS", "AS after WATERMARK FOR column")))
		return rc;
	return scan_expr(p, &tb->wm_expr, "a watermark expression after AS");
}

static const struct sl_ddl_column *find_col(const struct sl_ddl_table *tb, const char *name)
{
	for (uint32_t i = 0; i < tb->ncols; i++)
		if (!strcmp(tb->cols[i].name, name))
			return &tb->cols[i];
	return NULL;
}

/* Names in WATERMARK FOR, PRIMARY KEY and PARTITIONED BY must be columns; checked once all are
 * known. */
static int check_refs(struct sl_cur *p, const struct sl_ddl_table *tb)
{
	const struct sl_ddl_column *c;

	if (tb->has_watermark && !find_col(tb, tb->wm_col.name))
		return sl_cur_fail_at(p, tb->wm_col.line, tb->wm_col.col,
				      "WATERMARK FOR names '%s', which is not a column of %s",
				      tb->wm_col.name, tb->name);
	for (uint32_t i = 0; i < tb->npk; i++) {
		c = find_col(tb, tb->pk[i].name);
		if (!c)
			return sl_cur_fail_at(p, tb->pk[i].line, tb->pk[i].col,
					      "PRIMARY KEY names '%s', which is not a column of %s",
					      tb->pk[i].name, tb->name);
		if (c->computed)
			return sl_cur_fail_at(p, tb->pk[i].line, tb->pk[i].col,
					      "PRIMARY KEY column '%s' is computed", c->name);
	}
	for (uint32_t i = 0; i < tb->npart; i++) {
		c = find_col(tb, tb->part[i].name);
		if (!c)
			return sl_cur_fail_at(
				p, tb->part[i].line, tb->part[i].col,
				"PARTITIONED BY names '%s', which is not a column of %s",
				tb->part[i].name, tb->name);
		if (c->computed || c->metadata)
			return sl_cur_fail_at(p, tb->part[i].line, tb->part[i].col,
					      "PARTITIONED BY column '%s' is %s", c->name,
					      c->computed ? "computed" : "a metadata column");
		for (uint32_t k = 0; k < i; k++)
			if (!strcmp(tb->part[k].name, tb->part[i].name))
				return sl_cur_fail_at(p, tb->part[i].line, tb->part[i].col,
						      "PARTITIONED BY names '%s' twice",
						      tb->part[i].name);
	}
	return 0;
}

/* Dotted name (catalog.db.table) joined with '.'. */
static int parse_table_name(struct sl_cur *p, struct sl_ddl_table *tb)
{
	size_t n = 0;

	for (;;) {
		char *part, *s;

		if (p->tok.kind != SL_TOK_IDENT)
			return sl_cur_expected(p, "a table name");
		part = sl_cur_ident_dup(p, &p->tok);
		if (!part)
			return -ENOMEM;
		s = realloc(tb->name, n + strlen(part) + 2);
		if (!s) {
			free(part);
			return sl_cur_nomem(p);
		}
		tb->name = s;
		if (n)
			s[n++] = '.';
		strcpy(s + n, part);
		n += strlen(part);
		free(part);
		sl_cur_advance(p);
		if (!sl_cur_accept_op(p, "."))
			return 0;
	}
}

/* cur is CREATE; TEMPORARY and TABLE were seen by the caller's lookahead. */
static int parse_create_table(struct sl_cur *p, struct sl_ddl_table *tb)
{
	bool with = false;
	int rc;

	sl_cur_advance(p);
	if (sl_cur_accept_kw(p, "TEMPORARY"))
		tb->temporary = true;
	sl_cur_advance(p); /* TABLE */
	if (sl_cur_accept_kw(p, "IF")) {
		if ((rc = sl_cur_expect_kw(p, "NOT", "NOT EXISTS after IF")) ||
		    (rc = sl_cur_expect_kw(p, "EXISTS", "EXISTS after IF NOT")))
			return rc;
		tb->if_not_exists = true;
	}
	if ((rc = parse_table_name(p, tb)) ||
	    (rc = sl_cur_expect_op(p, "(", "'(' and the column definitions after the table name")))
		return rc;
	for (;;) {
		const char *what = "')' or ',' after column definition";
		struct sl_tok next = sl_cur_peek(p);

		if (sl_cur_is_kw(p, "WATERMARK") && sl_tok_is_kw(&next, "FOR")) {
			rc = parse_watermark(p, tb);
			what = "')' or ',' after WATERMARK";
		} else if (sl_cur_is_kw(p, "PRIMARY") && sl_tok_is_kw(&next, "KEY")) {
			struct sl_tok at = p->tok;

			rc = parse_pk(p, tb, &at);
			what = "')' or ',' after PRIMARY KEY";
		} else if (sl_cur_is_kw(p, "CONSTRAINT") && next.kind == SL_TOK_IDENT) {
			struct sl_tok at = p->tok;

			sl_cur_advance(p);
			sl_cur_advance(p);
			rc = parse_pk(p, tb, &at);
			what = "')' or ',' after PRIMARY KEY";
		} else {
			rc = parse_column(p, tb);
			if (!rc && tb->cols[tb->ncols - 1].computed)
				what = "')' or ',' after computed column";
		}
		if (rc)
			return rc;
		if (sl_cur_is_op(p, ")"))
			break;
		if ((rc = sl_cur_expect_op(p, ",", what)))
			return rc;
	}
	sl_cur_advance(p);
	if (sl_cur_is_kw(p, "PARTITIONED") && (rc = parse_partitioned(p, tb)))
		return rc;
	if (sl_cur_accept_kw(p, "WITH")) {
		with = true;
		if ((rc = parse_options(p, tb)))
			return rc;
	}
	if (!sl_cur_is_op(p, ";") && p->tok.kind != SL_TOK_EOF)
		return sl_cur_expected(
			p, with ? "';' after CREATE TABLE"
				: "PARTITIONED BY, WITH (...) or ';' after the columns");
	return check_refs(p, tb);
}

/*
 * cur is CREATE, and FUNCTION follows (after TEMPORARY [SYSTEM]). Flink's form, where the
 * class name is the shared object and its descriptor; LANGUAGE is required and must be C,
 * since a Java class cannot be loaded here.
 */
static int parse_create_function(struct sl_cur *p, struct sl_ddl_function *fn)
{
	int rc;

	sl_cur_advance(p);
	if (sl_cur_accept_kw(p, "TEMPORARY")) {
		fn->temporary = true;
		sl_cur_accept_kw(p, "SYSTEM");
	}
	sl_cur_advance(p); /* FUNCTION */
	if (sl_cur_accept_kw(p, "IF")) {
		if ((rc = sl_cur_expect_kw(p, "NOT", "NOT EXISTS after IF")) ||
		    (rc = sl_cur_expect_kw(p, "EXISTS", "EXISTS after IF NOT")))
			return rc;
		fn->if_not_exists = true;
	}
	if ((rc = take_name(p, &fn->name, "a function name")))
		return rc;
	if (sl_cur_is_op(p, "."))
		return sl_cur_expected(p, "AS after the function name (catalogs and databases are "
					  "not supported)");
	if ((rc = sl_cur_expect_kw(p, "AS", "AS 'path/lib.so:symbol' after the function name")))
		return rc;
	fn->line = p->tok.line;
	fn->col = p->tok.col;
	if ((rc = take_string(p, &fn->target, "'path/lib.so:symbol' after AS")))
		return rc;
	if (!sl_cur_is_kw(p, "LANGUAGE"))
		return sl_cur_expected(p, "LANGUAGE C (functions are loaded from a shared object)");
	sl_cur_advance(p);
	if (!sl_cur_is_kw(p, "C"))
		return sl_cur_expected(p, "C after LANGUAGE (Java, Scala and Python functions "
					  "cannot be loaded)");
	sl_cur_advance(p);
	if (!sl_cur_is_op(p, ";") && p->tok.kind != SL_TOK_EOF)
		return sl_cur_expected(p, "';' after LANGUAGE C");
	return 0;
}

/* cur is SHOW (followed by TABLES, VIEWS, USER FUNCTIONS or CREATE TABLE) or DESCRIBE /
 * DESC. */
static int parse_show(struct sl_cur *p, struct sl_ddl_show *sh)
{
	struct sl_ddl_table name = { 0 };
	bool describe = sl_cur_is_kw(p, "DESCRIBE") || sl_cur_is_kw(p, "DESC");
	int rc;

	sl_cur_advance(p);
	if (describe) {
		sh->what = SL_DDL_DESCRIBE;
	} else if (sl_cur_accept_kw(p, "TABLES")) {
		sh->what = SL_DDL_SHOW_TABLES;
	} else if (sl_cur_accept_kw(p, "VIEWS")) {
		sh->what = SL_DDL_SHOW_VIEWS;
	} else if (sl_cur_accept_kw(p, "USER")) {
		sl_cur_advance(p); /* FUNCTIONS */
		sh->what = SL_DDL_SHOW_USER_FUNCTIONS;
	} else {
		sl_cur_advance(p); /* CREATE */
		if ((rc = sl_cur_expect_kw(p, "TABLE", "TABLE after SHOW CREATE")))
			return rc;
		sh->what = SL_DDL_SHOW_CREATE_TABLE;
	}
	if (sh->what == SL_DDL_DESCRIBE || sh->what == SL_DDL_SHOW_CREATE_TABLE) {
		sh->line = p->tok.line;
		sh->col = p->tok.col;
		if ((rc = parse_table_name(p, &name)))
			return rc;
		sh->name = name.name;
	}
	if (!sl_cur_is_op(p, ";") && p->tok.kind != SL_TOK_EOF)
		return sl_cur_expected(p, sh->name ? "';' after the table name" : "';'");
	return 0;
}

static int parse_set(struct sl_cur *p, struct sl_ddl_stmt *st)
{
	int rc;

	sl_cur_advance(p);
	if ((rc = take_string(p, &st->set.key, "a 'key' after SET")) ||
	    (rc = sl_cur_expect_op(p, "=", "'=' after SET 'key'")) ||
	    (rc = take_string(p, &st->set.value, "a 'value' after SET 'key' =")))
		return rc;
	if (!sl_cur_is_op(p, ";") && p->tok.kind != SL_TOK_EOF)
		return sl_cur_expected(p, "';' after SET 'key' = 'value'");
	return 0;
}

/*
 * Statements the query parser reads later: scan to the ';' ending them. A statement set
 * (EXECUTE STATEMENT SET BEGIN ... END, or BEGIN STATEMENT SET; ... END) holds inner ';'s,
 * so it runs to the ';' after its END.
 */
static int skip_other(struct sl_cur *p)
{
	bool in_set = sl_cur_is_kw(p, "BEGIN");
	bool ended = false;

	if (sl_cur_is_kw(p, "EXECUTE") || sl_cur_is_kw(p, "EXPLAIN")) {
		struct sl_lexer save = p->lx;
		struct sl_tok n = sl_lexer_next(&save);

		/* EXPLAIN [PLAN FOR] [EXECUTE] STATEMENT SET BEGIN ... END holds them too */
		while (sl_tok_is_kw(&n, "PLAN") || sl_tok_is_kw(&n, "FOR") ||
		       sl_tok_is_kw(&n, "EXECUTE"))
			n = sl_lexer_next(&save);
		in_set = sl_tok_is_kw(&n, "STATEMENT");
	}
	for (;;) {
		if (p->tok.kind == SL_TOK_ERROR)
			return sl_cur_expected(p, "");
		if (p->tok.kind == SL_TOK_EOF) {
			if (in_set && !ended)
				return sl_cur_expected(p, "END closing the statement set");
			return 0;
		}
		if (sl_cur_is_op(p, ";") && (!in_set || ended))
			return 0;
		if (in_set && sl_cur_is_kw(p, "END"))
			ended = true;
		sl_cur_advance(p);
	}
}

static const char *const other_heads[] = {
	"CREATE", "INSERT", "SELECT", "WITH",	  "EXPLAIN", "EXECUTE", "BEGIN", "VALUES", "DROP",
	"ALTER",  "USE",    "SHOW",   "DESCRIBE", "DESC",    "RESET",	"LOAD",	 "UNLOAD",
};

static bool is_other_head(const struct sl_cur *p)
{
	for (size_t i = 0; i < sizeof other_heads / sizeof other_heads[0]; i++)
		if (sl_cur_is_kw(p, other_heads[i]))
			return true;
	return false;
}

/* SHOW TABLES, SHOW VIEWS, SHOW USER FUNCTIONS, SHOW CREATE TABLE: the SHOWs parsed here (others
 * are refused later, as statements the query parser does not know). */
static bool show_head(const struct sl_cur *p)
{
	struct sl_lexer save = p->lx;
	struct sl_tok t1 = sl_lexer_next(&save);
	struct sl_tok t2 = sl_lexer_next(&save);

	return sl_tok_is_kw(&t1, "TABLES") || sl_tok_is_kw(&t1, "VIEWS") ||
	       (sl_tok_is_kw(&t1, "USER") && sl_tok_is_kw(&t2, "FUNCTIONS")) ||
	       (sl_tok_is_kw(&t1, "CREATE") && sl_tok_is_kw(&t2, "TABLE"));
}

static int parse_stmt(struct sl_cur *p, struct sl_ddl_stmt *st)
{
	struct sl_tok first = p->tok;
	int rc;

	st->span.line = first.line;
	st->span.col = first.col;
	st->span.start = tok_start(p, &first);
	if (sl_cur_is_kw(p, "SET")) {
		st->kind = SL_DDL_SET;
		rc = parse_set(p, st);
	} else if (sl_cur_is_kw(p, "CREATE")) {
		struct sl_lexer save = p->lx;
		struct sl_tok t1 = sl_lexer_next(&save);
		struct sl_tok t2 = sl_lexer_next(&save);

		struct sl_tok t3 = sl_lexer_next(&save);

		if (sl_tok_is_kw(&t1, "TABLE") ||
		    (sl_tok_is_kw(&t1, "TEMPORARY") && sl_tok_is_kw(&t2, "TABLE"))) {
			st->kind = SL_DDL_CREATE_TABLE;
			rc = parse_create_table(p, &st->table);
		} else if (sl_tok_is_kw(&t1, "FUNCTION") ||
			   (sl_tok_is_kw(&t1, "TEMPORARY") &&
			    (sl_tok_is_kw(&t2, "FUNCTION") ||
			     (sl_tok_is_kw(&t2, "SYSTEM") && sl_tok_is_kw(&t3, "FUNCTION"))))) {
			st->kind = SL_DDL_CREATE_FUNCTION;
			rc = parse_create_function(p, &st->fn);
		} else {
			st->kind = SL_DDL_OTHER;
			rc = skip_other(p);
		}
	} else if (sl_cur_is_kw(p, "DESCRIBE") || sl_cur_is_kw(p, "DESC") ||
		   (sl_cur_is_kw(p, "SHOW") && show_head(p))) {
		st->kind = SL_DDL_SHOW;
		rc = parse_show(p, &st->show);
	} else if (is_other_head(p)) {
		st->kind = SL_DDL_OTHER;
		rc = skip_other(p);
	} else {
		return sl_cur_expected(p,
				       "a statement (SET, CREATE, INSERT, SELECT, EXPLAIN, ...)");
	}
	if (rc)
		return rc;
	st->span.end = tok_end(p, &p->prev);
	return 0;
}

struct sl_ddl_script *sl_ddl_parse(const char *src, size_t len, char *err, size_t errcap)
{
	struct sl_ddl_script *s = calloc(1, sizeof *s);
	struct sl_cur p;

	sl_cur_init(&p, src, len, 1, 1, err, errcap);
	if (!s) {
		sl_cur_nomem(&p);
		return NULL;
	}
	while (p.tok.kind != SL_TOK_EOF) {
		struct sl_ddl_stmt *st;

		if (sl_cur_is_op(&p, ";")) { /* empty statement */
			sl_cur_advance(&p);
			continue;
		}
		st = sl_cur_append(&p, (void **)&s->stmts, &s->nstmts, sizeof *st);
		if (!st || parse_stmt(&p, st))
			goto out_destroy;
		if (sl_cur_is_op(&p, ";"))
			sl_cur_advance(&p);
	}
	return s;

out_destroy:
	sl_ddl_destroy(s);
	return NULL;
}

static void table_fini(struct sl_ddl_table *tb)
{
	free(tb->name);
	for (uint32_t i = 0; i < tb->ncols; i++) {
		free(tb->cols[i].name);
		free(tb->cols[i].meta_key);
		type_fini(&tb->cols[i].type);
	}
	free(tb->cols);
	free(tb->wm_col.name);
	for (uint32_t i = 0; i < tb->npk; i++)
		free(tb->pk[i].name);
	free(tb->pk);
	for (uint32_t i = 0; i < tb->npart; i++)
		free(tb->part[i].name);
	free(tb->part);
	for (uint32_t i = 0; i < tb->nopts; i++) {
		free(tb->opts[i].key);
		free(tb->opts[i].value);
	}
	free(tb->opts);
}

void sl_ddl_destroy(struct sl_ddl_script *script)
{
	if (!script)
		return;
	for (uint32_t i = 0; i < script->nstmts; i++) {
		struct sl_ddl_stmt *st = &script->stmts[i];

		if (st->kind == SL_DDL_SET) {
			free(st->set.key);
			free(st->set.value);
		} else if (st->kind == SL_DDL_CREATE_TABLE) {
			table_fini(&st->table);
		} else if (st->kind == SL_DDL_SHOW) {
			free(st->show.name);
		} else if (st->kind == SL_DDL_CREATE_FUNCTION) {
			free(st->fn.name.name);
			free(st->fn.target);
		}
	}
	free(script->stmts);
	free(script);
}
