/*
 * expr.h - one Flink SQL expression parsed into a tree, with the line:col of every node,
 * for the query parser (SELECT lists, WHERE, GROUP BY, window TVF arguments) and the DDL's
 * computed columns and watermarks.
 *
 * Plan time only: nodes are malloc'ed, strings are NUL-terminated copies, and one
 * sl_expr_destroy() frees a whole tree. Precedence, lowest first: OR; AND; NOT; comparison
 * (= <> != < <= > >=, IS [NOT] NULL|TRUE|FALSE, [NOT] BETWEEN, [NOT] IN, [NOT] LIKE, left
 * associative); ||; + -; * / %; unary + -; primary. IN (SELECT ...) and EXISTS (SELECT ...)
 * hold a subquery, parsed by the query parser through the cursor's hook (cursor.h).
 */
#ifndef SL_SQL_EXPR_H
#define SL_SQL_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cursor.h"
#include "ddl.h"
#include "lexer.h"

enum sl_expr_kind {
	SL_EXPR_INT,	 /* ival; text as written */
	SL_EXPR_DECIMAL, /* text as written (1.5, .5, 1e3): typed by the planner */
	SL_EXPR_STRING,	 /* text = value with '' undone */
	SL_EXPR_BOOL,	 /* ival = 0 or 1 */
	SL_EXPR_NULL,
	SL_EXPR_INTERVAL,   /* text = the quoted count, unit, ival = length in ms */
	SL_EXPR_TIMESTAMP,  /* TIMESTAMP 'text' (not checked here) */
	SL_EXPR_DATE,	    /* DATE 'text' */
	SL_EXPR_COLUMN,	    /* path[0..npath): a.b.c is a column and field accesses */
	SL_EXPR_STAR,	    /* the * of COUNT(*) */
	SL_EXPR_UNARY,	    /* op args[0] */
	SL_EXPR_BINARY,	    /* args[0] op args[1] */
	SL_EXPR_IS,	    /* args[0] IS [NOT] is_what; negated for NOT */
	SL_EXPR_BETWEEN,    /* args[0] [NOT] BETWEEN args[1] AND args[2] */
	SL_EXPR_IN,	    /* args[0] [NOT] IN (args[1..nargs)), or IN (sub) */
	SL_EXPR_EXISTS,	    /* EXISTS (sub) */
	SL_EXPR_LIKE,	    /* args[0] [NOT] LIKE args[1] */
	SL_EXPR_CALL,	    /* text(args), distinct for f(DISTINCT x); name as written; over */
	SL_EXPR_CASE,	    /* CASE [case_operand] WHEN args[2i] THEN args[2i+1] [ELSE case_else] */
	SL_EXPR_CAST,	    /* CAST(args[0] AS type) */
	SL_EXPR_ROUND_TO,   /* text = FLOOR|CEIL (as written), args[0], unit */
	SL_EXPR_DESCRIPTOR, /* DESCRIPTOR(args): COLUMN nodes, window TVF argument */
	SL_EXPR_TABLE,	    /* TABLE path: window TVF argument */
};

enum sl_expr_op {
	SL_EXPR_OP_NONE = 0,
	SL_EXPR_OP_OR,
	SL_EXPR_OP_AND,
	SL_EXPR_OP_NOT,
	SL_EXPR_OP_EQ,
	SL_EXPR_OP_NE,
	SL_EXPR_OP_LT,
	SL_EXPR_OP_LE,
	SL_EXPR_OP_GT,
	SL_EXPR_OP_GE,
	SL_EXPR_OP_CONCAT,
	SL_EXPR_OP_ADD,
	SL_EXPR_OP_SUB,
	SL_EXPR_OP_MUL,
	SL_EXPR_OP_DIV,
	SL_EXPR_OP_MOD,
	SL_EXPR_OP_NEG,
	SL_EXPR_OP_PLUS,
};

enum sl_expr_unit {
	SL_EXPR_UNIT_NONE = 0,
	SL_EXPR_UNIT_SECOND,
	SL_EXPR_UNIT_MINUTE,
	SL_EXPR_UNIT_HOUR,
	SL_EXPR_UNIT_DAY,
};

enum sl_expr_is {
	SL_EXPR_IS_NULL,
	SL_EXPR_IS_TRUE,
	SL_EXPR_IS_FALSE,
};

/* One ORDER BY key of an OVER window. */
struct sl_expr_order {
	struct sl_expr *expr;
	bool desc;
};

struct sl_expr {
	enum sl_expr_kind kind;
	uint32_t line, col; /* of the node's first token (operator nodes: the operator) */
	enum sl_expr_op op;
	enum sl_expr_unit unit;
	enum sl_expr_is is_what;
	bool negated;  /* IS NOT, NOT BETWEEN, NOT IN, NOT LIKE */
	bool distinct; /* COUNT(DISTINCT x) */
	int64_t ival;
	char *text;
	char **path; /* COLUMN, TABLE */
	uint32_t npath;
	struct sl_expr **args;
	uint32_t nargs;
	struct sl_expr *case_operand; /* CASE x WHEN ..., else NULL */
	struct sl_expr *case_else;    /* NULL when there is no ELSE */
	struct sl_ddl_type type;      /* CAST */
	struct sl_expr *filter;	      /* CALL agg(...) FILTER (WHERE filter), else NULL */
	/* CALL f(...) OVER (PARTITION BY partition ORDER BY order): ROW_NUMBER() dedup */
	bool over;
	struct sl_expr **partition;
	uint32_t npartition;
	struct sl_expr_order *order;
	uint32_t norder;
	/* OVER (... ROWS|RANGE BETWEEN lo PRECEDING AND CURRENT ROW): the frame, NONE when
	 * absent (Flink's default, RANGE UNBOUNDED PRECEDING, is the planner's); frame_lo is
	 * -1 for UNBOUNDED, else a row count (ROWS) or milliseconds (RANGE INTERVAL) */
	enum sl_expr_frame { SL_FRAME_NONE = 0, SL_FRAME_ROWS, SL_FRAME_RANGE } frame;
	int64_t frame_lo;
	/* OVER w: the name of a WINDOW w AS (...) of the query; once bound (query.c) the
	 * partition and order above are borrowed from that definition, which owns them */
	char *over_name;
	bool over_borrowed;
	struct sl_query *sub; /* IN (SELECT ...), EXISTS (SELECT ...): the subquery (owned) */
};

/*
 * Parses one expression starting at c->tok. On success returns the tree (caller frees with
 * sl_expr_destroy) and leaves c on the first token that cannot continue the expression, so
 * a list parser can check for ','. On failure returns NULL with the cursor's error set (a
 * one-line "line:col: expected ..., found '...'").
 */
struct sl_expr *sl_expr_parse(struct sl_cur *c);

/* Parses an OVER window's specification, "( [PARTITION BY ...] [ORDER BY ... [frame]] )",
 * at c->tok into holder's partition, order and frame (a WINDOW w AS (...) definition).
 * 0, or -errno with the cursor's error set. */
int sl_expr_parse_window_spec(struct sl_cur *c, struct sl_expr *holder);

/* Parses src[0..len) as exactly one expression (anything after it is an error). */
struct sl_expr *sl_expr_parse_str(const char *src, size_t len, char *err, size_t errcap);

/* True for a keyword that cannot stand as a bare identifier (the printer backquotes names
 * spelled like one). */
bool sl_expr_is_reserved(const struct sl_tok *t);

/*
 * Node building for the parsers that make expression nodes of their own (query.c: the
 * window TVF's TABLE and DESCRIPTOR arguments), errors recorded in c:
 * sl_expr_new       returns a zeroed node of `kind` placed at `at`, or NULL (ENOMEM);
 * sl_expr_add_arg   appends child to e->args and returns 0, or -ENOMEM with child freed;
 *                   a NULL child (its parse failed and said why) returns -EINVAL;
 * sl_expr_add_path  appends the name of IDENT t to e->path: 0 or -ENOMEM.
 */
struct sl_expr *sl_expr_new(struct sl_cur *c, enum sl_expr_kind kind, const struct sl_tok *at);
int sl_expr_add_arg(struct sl_cur *c, struct sl_expr *e, struct sl_expr *child);
int sl_expr_add_path(struct sl_cur *c, struct sl_expr *e, const struct sl_tok *t);

/* Frees a tree; accepts NULL. */
void sl_expr_destroy(struct sl_expr *e);

/*
 * Renders e fully parenthesised ("((a + (b * c)) = d)") into buf, NUL-terminated; for
 * tests and EXPLAIN. Returns the length, or the length needed if it exceeds cap.
 */
size_t sl_expr_print(const struct sl_expr *e, char *buf, size_t cap);

#endif
