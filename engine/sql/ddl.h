/*
 * ddl.h - a job file split into statements, with SET and CREATE TABLE parsed into a small
 * tree and every other statement kept as a source span for the query parser.
 *
 * Plan time only: the tree is malloc'ed and freed with one sl_ddl_destroy(). Names and
 * option strings are copies (NUL-terminated, quotes undone); spans are byte offsets into
 * the source the caller passed, so keep that source to read expressions and statements.
 * Expressions (computed columns, watermarks) are not parsed here: their span stops at the
 * next top-level ',' or ')', and the expression parser reads them later.
 */
#ifndef SL_SQL_DDL_H
#define SL_SQL_DDL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Source text src[start..end) whose first byte sits at line:col (1-based). */
struct sl_ddl_span {
	uint32_t start;
	uint32_t end;
	uint32_t line;
	uint32_t col;
};

enum sl_ddl_type_kind {
	SL_DDL_BOOLEAN,
	SL_DDL_INT,
	SL_DDL_BIGINT,
	SL_DDL_FLOAT,
	SL_DDL_DOUBLE,
	SL_DDL_DECIMAL, /* precision, scale; DECIMAL = (10,0), DECIMAL(p) = (p,0) */
	SL_DDL_STRING,
	SL_DDL_VARCHAR,	      /* precision = max length; VARCHAR = VARCHAR(1) as in Flink */
	SL_DDL_TIMESTAMP,     /* precision = fraction digits, default 6 */
	SL_DDL_TIMESTAMP_LTZ, /* also TIMESTAMP(p) WITH LOCAL TIME ZONE */
	SL_DDL_DATE,
	SL_DDL_ROW, /* fields[0..nfields) */
};

struct sl_ddl_field;

struct sl_ddl_type {
	enum sl_ddl_type_kind kind;
	uint32_t precision;
	uint32_t scale;
	bool not_null;
	uint32_t line, col;	     /* where the type name is written */
	struct sl_ddl_field *fields; /* ROW only */
	uint32_t nfields;
};

/* A named column or ROW field. */
struct sl_ddl_field {
	char *name;
	uint32_t line, col;
	struct sl_ddl_type type;
};

struct sl_ddl_column {
	char *name;
	uint32_t line, col;
	bool computed; /* `name AS expr`: expr is set, type is not */
	bool metadata; /* `name TYPE METADATA [FROM 'key'] [VIRTUAL]` */
	bool is_virtual;
	char *meta_key; /* the FROM key; NULL: the column's name */
	struct sl_ddl_type type;
	struct sl_ddl_span expr;
};

/* A name written in a clause (watermark column, key column), with its place for errors. */
struct sl_ddl_name {
	char *name;
	uint32_t line, col;
};

struct sl_ddl_option {
	char *key;
	char *value;
	uint32_t line, col; /* of the key */
};

struct sl_ddl_table {
	char *name; /* dotted parts joined with '.' */
	bool temporary;
	bool if_not_exists;
	struct sl_ddl_column *cols;
	uint32_t ncols;
	bool has_watermark;
	struct sl_ddl_name wm_col; /* WATERMARK FOR wm_col AS wm_expr */
	struct sl_ddl_span wm_expr;
	struct sl_ddl_name *pk; /* PRIMARY KEY (...) NOT ENFORCED, or NULL */
	uint32_t npk;
	struct sl_ddl_name *part; /* PARTITIONED BY (...) after the columns, or NULL */
	uint32_t npart;
	struct sl_ddl_option *opts;
	uint32_t nopts;
};

/* CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS 'path:symbol' LANGUAGE C */
struct sl_ddl_function {
	struct sl_ddl_name name;
	bool temporary;
	bool if_not_exists;
	char *target;	    /* 'path:symbol' as written */
	uint32_t line, col; /* of the target string */
};

/* SHOW TABLES | SHOW VIEWS | SHOW USER FUNCTIONS | SHOW CREATE TABLE t | DESCRIBE t | DESC t */
enum sl_ddl_show_what {
	SL_DDL_SHOW_TABLES,
	SL_DDL_SHOW_VIEWS,
	SL_DDL_SHOW_USER_FUNCTIONS,
	SL_DDL_SHOW_CREATE_TABLE,
	SL_DDL_DESCRIBE,
};

struct sl_ddl_show {
	enum sl_ddl_show_what what;
	char *name;	    /* the table (dotted parts joined with '.'); NULL for TABLES, VIEWS */
	uint32_t line, col; /* of the name */
};

enum sl_ddl_kind {
	SL_DDL_SET,
	SL_DDL_CREATE_TABLE,
	SL_DDL_CREATE_FUNCTION,
	SL_DDL_SHOW,  /* also DESCRIBE */
	SL_DDL_OTHER, /* CREATE VIEW, INSERT, SELECT, ...: span only */
};

struct sl_ddl_stmt {
	enum sl_ddl_kind kind;
	struct sl_ddl_span span; /* first token to last token, without the ';' */
	union {
		struct {
			char *key;
			char *value;
		} set;
		struct sl_ddl_table table;
		struct sl_ddl_function fn;
		struct sl_ddl_show show;
	};
};

struct sl_ddl_script {
	struct sl_ddl_stmt *stmts;
	uint32_t nstmts;
};

/*
 * Parses the job file src[0..len). Returns the statements (caller frees with
 * sl_ddl_destroy), or NULL with a one-line "line:col: expected ..., found ..." message in
 * err[0..errcap) (or "out of memory"). Borrows src only during the call; spans index it.
 */
struct sl_ddl_script *sl_ddl_parse(const char *src, size_t len, char *err, size_t errcap);

/* Frees a script and everything it owns. Accepts NULL. */
void sl_ddl_destroy(struct sl_ddl_script *script);

#endif
