/*
 * query.h - the statements of a job file that are not DDL (SELECT, INSERT, CREATE VIEW,
 * EXPLAIN, statement sets) parsed into a tree for the planner.
 *
 * Plan time only: nodes are malloc'ed, strings are NUL-terminated copies with quotes undone,
 * and one sl_stmt_destroy() frees a whole statement. Every node carries the line:col of its
 * first token so the planner can name the place of an error.
 */
#ifndef SL_SQL_QUERY_H
#define SL_SQL_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ddl.h"
#include "expr.h"

struct sl_query;

/* One item of a SELECT list: `expr [AS alias]`, or `*` / `t.*` (star, star_qual). */
struct sl_select_item {
	struct sl_expr *expr; /* NULL for a star */
	char *alias;	      /* NULL when not written */
	bool star;
	char *star_qual; /* `t.*`: "t"; plain `*`: NULL */
	uint32_t line, col;
};

enum sl_from_kind {
	SL_FROM_TABLE,	  /* name [AS] alias */
	SL_FROM_SUBQUERY, /* ( query ) [AS] alias */
	SL_FROM_TVF,	  /* TABLE(fn(args)) [AS] alias: window TVFs; call->kind == SL_EXPR_CALL */
	SL_FROM_JOIN,	  /* left JOIN right ON cond */
};

enum sl_join_kind {
	SL_JOIN_INNER,
	SL_JOIN_LEFT,
	SL_JOIN_RIGHT,
	SL_JOIN_FULL,
	SL_JOIN_CROSS, /* `a, b` or CROSS JOIN: no condition */
};

struct sl_from {
	enum sl_from_kind kind;
	uint32_t line, col;
	char *alias; /* NULL when not written */
	/* `AS t (c1, c2, ...)`: new names of the item's columns in order, else NULL */
	char **alias_cols;
	uint32_t nalias_cols;
	/* TABLE */
	char *name; /* dotted parts joined with '.' */
	/* TABLE on the right of a join: FOR SYSTEM_TIME AS OF expr (temporal join), else NULL */
	struct sl_expr *system_time;
	/* SUBQUERY */
	struct sl_query *sub;
	/* TVF: the call, e.g. TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND); arguments
	 * may be named (`SIZE => INTERVAL ...`): see arg_names. SESSION's `TABLE t PARTITION
	 * BY k` (or `PARTITION BY (k1, k2)`) puts the keys in that TABLE node's partition[] */
	struct sl_expr *call;
	char **arg_names; /* [call->nargs], NULL entries for positional arguments;
			   * the array itself is NULL when no argument is named */
	/* JOIN */
	enum sl_join_kind join;
	struct sl_from *left;
	struct sl_from *right;
	struct sl_expr *on; /* NULL for CROSS */
};

/* ORDER BY item of a query (only printed/rejected by the planner for unbounded input). */
struct sl_order_item {
	struct sl_expr *expr;
	bool desc;
};

/* WITH name [(cols)] AS (query): a common table expression, a view scoped to the query it
 * heads (and that query's subqueries); a later one of the same WITH sees the earlier ones. */
struct sl_cte {
	char *name;
	char **cols; /* the column list, NULL when not written */
	uint32_t ncols;
	struct sl_query *query;
	uint32_t line, col; /* of the name */
};

/* A SELECT block, or a UNION ALL of blocks (set_op != NONE: left/right are queries). */
enum sl_set_op { SL_SET_NONE = 0, SL_SET_UNION_ALL, SL_SET_UNION };

struct sl_query {
	uint32_t line, col;
	enum sl_set_op set_op;
	struct sl_query *left, *right; /* set_op != NONE */
	struct sl_cte *ctes;	       /* the WITH heading this query, in order; NULL if none */
	uint32_t nctes;
	/* VALUES (e, ...), ...: the rows of a VALUES term (no items, no FROM), every row of
	 * the same arity (the parser checks); NULL for a SELECT */
	struct sl_values_row {
		struct sl_expr **vals;
		uint32_t nvals;
		uint32_t line, col;
	} * values;
	uint32_t nvalues;

	bool distinct; /* SELECT DISTINCT */
	struct sl_select_item *items;
	uint32_t nitems;
	struct sl_from *from;  /* NULL for SELECT without FROM (VALUES-less literal) */
	struct sl_expr *where; /* NULL when absent */
	struct sl_expr **group_by;
	uint32_t ngroup_by;
	/* GROUP BY with GROUPING SETS, ROLLUP or CUBE: group_by holds each grouping
	 * expression once and every set is a mask over it (bit i: group_by[i]); ngsets 0 is a
	 * plain GROUP BY (one set, all of them) */
	uint64_t *gsets;
	uint32_t ngsets;
	struct sl_expr *having;
	/* WINDOW name AS (spec), ...: each spec an expression node holding only its OVER
	 * fields, owned here; OVER name calls of the items borrow them */
	struct sl_window_def {
		char *name;
		struct sl_expr *spec;
	} * windows;
	uint32_t nwindows;
	struct sl_order_item *order_by; /* applies to the whole query (after a union too) */
	uint32_t norder_by;
	int64_t limit; /* -1 when absent */
	/* a UID('name') hint after SELECT (owned; NULL when absent), and where it is */
	char *uid;
	uint32_t uid_line, uid_col;
};

enum sl_stmt_kind {
	SL_STMT_SELECT,	       /* bare query: print the changelog */
	SL_STMT_INSERT,	       /* INSERT INTO target [(cols)] query */
	SL_STMT_CREATE_VIEW,   /* CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(cols)] AS query */
	SL_STMT_EXPLAIN,       /* EXPLAIN [PLAN FOR] inner */
	SL_STMT_STATEMENT_SET, /* EXECUTE STATEMENT SET BEGIN insert; ... END: sub[0..nsub) */
	SL_STMT_BEGIN_SET,     /* BEGIN STATEMENT SET (the inserts follow as statements);
				* sl_ddl_parse() keeps `BEGIN STATEMENT SET; ...; END` as one
				* span, which parses as SL_STMT_STATEMENT_SET */
	SL_STMT_END,	       /* END (closes BEGIN STATEMENT SET) */
	SL_STMT_EXPLAIN_WATERMARK, /* EXPLAIN WATERMARK FOR target (a sluice extension) */
};

struct sl_stmt {
	enum sl_stmt_kind kind;
	uint32_t line, col;
	struct sl_query *query; /* SELECT, INSERT, CREATE_VIEW */
	char *target;		/* INSERT: table; CREATE_VIEW: view name (dotted, joined);
				 * EXPLAIN_WATERMARK: the table or view */
	char **cols;		/* INSERT / CREATE_VIEW column list, else NULL */
	uint32_t ncols;
	bool temporary; /* CREATE TEMPORARY VIEW */
	bool if_not_exists;
	bool overwrite; /* INSERT OVERWRITE */
	/* CREATE_VIEW extension of sluice: `... AS SELECT ... WATERMARK FOR e1 AS e2`
	 * written after the query, or as an item of the view's own SELECT list (its
	 * other form; it is not in items). NULL when absent. wm_line/wm_col: of the
	 * WATERMARK keyword. */
	struct sl_expr *wm_for;
	struct sl_expr *wm_expr;
	uint32_t wm_line, wm_col;
	struct sl_stmt *inner; /* EXPLAIN */
	struct sl_stmt **sub;  /* STATEMENT_SET: INSERT statements */
	uint32_t nsub;
};

/*
 * Parses one statement from src[0..len) (a statement's span as sl_ddl_parse() found it: no
 * trailing ';', except that EXECUTE STATEMENT SET BEGIN ...; ...; END holds its inner ';').
 * `line`/`col` are where src[0] sits in the job file, so positions in errors and nodes are
 * file positions. Returns the statement (free with sl_stmt_destroy) or NULL with a one-line
 * "line:col: expected ..., found '...'" message in err.
 */
struct sl_stmt *sl_stmt_parse(const char *src, size_t len, uint32_t line, uint32_t col, char *err,
			      size_t errcap);
void sl_stmt_destroy(struct sl_stmt *s);
void sl_query_destroy(struct sl_query *q);

#endif
