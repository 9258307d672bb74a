/*
 * plan_int.h - what the planner's files share: the catalog, relations under construction and
 * the SQL operators (calc) it places into job graphs.
 *
 * Everything here lives at plan time on the thread that loads the script, except the calc
 * operator's state, which is read-only after planning and used by every shard (each with its
 * own evaluation context).
 */
#ifndef SL_SQL_PLAN_INT_H
#define SL_SQL_PLAN_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sluice/connectors.h>
#include <sluice/job.h>

#include "op.h"
#include "ddl.h"
#include "eval.h"
#include "expr.h"
#include "planner.h"
#include "query.h"

#define SL_PLAN_MAX_COLS  SL_SCHEMA_MAX_FIELDS
#define SL_PLAN_MAX_ORDER 16 /* ORDER BY columns of a ranking function (SL_TOPN_MAX_ORDER) */

/* A table of the catalog: CREATE TABLE, with nested ROW columns flattened into leaves. */
struct sl_sql_plan_table {
	const struct sl_ddl_table *ddl;
	int nphys; /* physical leaves: the source/sink schema */
	char *phys_name[SL_PLAN_MAX_COLS];
	struct sl_sql_type phys_type[SL_PLAN_MAX_COLS];
	/* WATERMARK FOR: the rowtime column and the bounded delay (ms, 0 = monotonous) */
	const char *wm_col;
	sl_ts_t wm_delay;
	bool on_event;	      /* 'scan.watermark.emit.strategy' = 'on-event' */
	sl_ts_t idle_timeout; /* 'scan.watermark.idle-timeout' or the session's */
};

struct sl_sql_plan_view {
	char *name;
	struct sl_stmt *stmt; /* CREATE VIEW (owned) */
	bool expanding;	      /* being planned now: reading it again is a cycle */
};

/* A WITH query in scope: a view known only inside the query it heads. The scope is a chain
 * from the innermost name out; a CTE's own query is planned in the scope it was written in
 * (outer), so it sees the CTEs before it and never itself. Lives on the planner's stack. */
struct sl_sql_plan_cte {
	const struct sl_cte *def;
	const struct sl_sql_plan_cte *outer;
};

/* The scope q's WITH opens (sl_sql_plan_with_begin) and what closing it restores. */
struct sl_sql_plan_with {
	struct sl_sql_plan_cte *ctes; /* q->nctes entries (malloc'ed), NULL when none */
	const struct sl_sql_plan_cte *saved;
};

/* A relation being planned: the stream producing its rows and the columns visible on it. */
struct sl_sql_plan_rel {
	struct sl_stream *s;
	struct sl_sql_col cols[SL_PLAN_MAX_COLS];
	int ncols;
	bool changelog; /* rows may be -U/+U/-D */
	/* window TVF applied but not yet aggregated: window_start/_end/_time are virtual */
	bool tvf;
	struct sl_window_spec tvf_win;
	enum sl_win_kind tvf_kind;
	sl_ts_t tvf_max_size; /* CUMULATE */
	int tvf_time_col;
	bool tvf_partitioned;		 /* SESSION(TABLE t PARTITION BY ...) */
	int tvf_part[SL_MAX_KEY_FIELDS]; /* its columns */
	int ntvf_part;
	/* ROW_NUMBER() OVER (...) AS rn in a subquery: applied by the outer WHERE rn = 1 */
	bool rownum;
	char *rownum_name;
	int rownum_part[SL_MAX_KEY_FIELDS];
	int nrownum_part;
	int rownum_order; /* column, -1: processing time */
	bool rownum_desc;
	uint32_t rownum_line, rownum_col;
	/* ... or RANK() / DENSE_RANK(), and every ORDER BY column, for Top-N (plan_topn.c) */
	int rownum_fn;	  /* enum sl_topn_fn */
	bool rownum_time; /* ROW_NUMBER() ORDER BY one time attribute: dedup can take it */
	int rownum_orders[SL_PLAN_MAX_ORDER];
	bool rownum_descs[SL_PLAN_MAX_ORDER];
	int nrownum_order;
};

/* True when a and b (either may be NULL: no window) are the same window TVF. */
static inline bool sl_sql_plan_same_window(const struct sl_window_spec *a,
					   const struct sl_window_spec *b)
{
	return a && b && a->kind == b->kind && a->size_ms == b->size_ms &&
	       a->slide_ms == b->slide_ms && a->gap_ms == b->gap_ms && a->offset_ms == b->offset_ms;
}

struct sl_sql_plan_ctx;

/* One EXPLAIN WATERMARK FOR statement (plan_wm_explain.c). */
#define SL_SQL_WMX_TABLES 16
struct sl_sql_wm_explain {
	char *name;  /* the table or view as written */
	int after;   /* jobs planned before it: it prints after job after - 1 ran */
	int ntables; /* the tables it reads (names borrowed from their DDL) */
	const char *tables[SL_SQL_WMX_TABLES];
};
/* Plans EXPLAIN WATERMARK FOR st->target. 0 or -errno (the error set). */
int sl_sql_plan_wm_explain(struct sl_sql_plan_ctx *c, const struct sl_stmt *st);

/* The text of one SHOW or DESCRIBE statement (plan_show.c), printed in the file's order. */
struct sl_sql_plan_info {
	char *text;
	int after; /* jobs planned before it: it prints after job after - 1 ran */
};
/* Plans SHOW TABLES / VIEWS / CREATE TABLE or DESCRIBE: its text into c->infos. 0 or
 * -errno (the error set: an unknown table names it). */
int sl_sql_plan_show(struct sl_sql_plan_ctx *c, const struct sl_ddl_show *sh);

/* One job being built: INSERTs of a statement set share it. */
struct sl_sql_plan_job {
	struct sl_job *job;
	char *name;
	bool explain_only;
};

struct sl_sql_plan_ctx {
	const char *file;
	const char *src;
	size_t len;
	struct sl_sql_opts opts;
	struct sl_sql_env env;
	char *err;
	size_t errcap;
	bool failed;

	struct sl_ddl_script *ddl;
	struct sl_sql_plan_table **tables;
	int ntables;
	struct sl_sql_plan_view **views;
	int nviews;
	struct sl_sql_udf *udfs; /* CREATE FUNCTION ... LANGUAGE C, in order (env.udfs) */
	int nudfs, capudfs;

	/* SET options */
	int parallelism;
	sl_ts_t wm_interval;	     /* pipeline.auto-watermark-interval */
	sl_ts_t idle_timeout;	     /* table.exec.source.idle-timeout */
	sl_ts_t state_ttl;	     /* table.exec.state.ttl */
	sl_ts_t allow_lateness;	     /* table.exec.emit.allow-lateness */
	enum sl_agg_phase agg_phase; /* table.optimizer.agg-phase-strategy */
	bool mini_batch;	     /* table.exec.mini-batch.enabled */
	sl_ts_t mini_batch_latency;  /* table.exec.mini-batch.allow-latency */
	uint32_t mini_batch_size;    /* table.exec.mini-batch.size, 0: not set */
	sl_ts_t ckpt_interval;	     /* execution.checkpointing.interval */
	sl_ts_t ckpt_timeout;	     /* execution.checkpointing.timeout */
	sl_ts_t ckpt_min_pause;	     /* execution.checkpointing.min-pause */
	int ckpt_tolerable;	     /* ...tolerable-failed-checkpoints (0) */
	bool allow_non_restored;     /* execution.savepoint.ignore-unclaimed-state */
	/* the SELECT of the statement being planned that may carry its UID hint */
	const struct sl_query *uid_query;
	char *ckpt_dir;	      /* state.checkpoints.dir */
	char *savepoint_dir;  /* state.savepoints.dir */
	char *savepoint_path; /* execution.savepoint.path: restore it */
	char *state_backend;  /* state.backend.type / state.backend */
	size_t state_memory;  /* sluice.state.memory (bytes) */
	char *pipeline_name;
	char *late_table; /* sluice.late-data.table */

	struct sl_sql_plan_job *jobs;
	int njobs;
	char **explains; /* EXPLAIN text per EXPLAIN statement */
	int nexplains;
	struct sl_sql_wm_explain **wmx; /* EXPLAIN WATERMARK FOR statements, in order */
	int nwmx;
	struct sl_sql_plan_info *infos; /* SHOW and DESCRIBE statements, in order */
	int ninfos;

	/* everything the jobs borrow until destroy */
	void **owned;
	void (**owned_free)(void *);
	int nowned, capowned;
	int nshards; /* shards the jobs will run on */

	/* planning state */
	int view_depth;			    /* views expanding now (cycle guard) */
	const struct sl_sql_plan_cte *ctes; /* WITH names in scope, innermost first */
	const struct sl_expr *pending_time; /* a view's WATERMARK FOR expression ... */
	const struct sl_expr *pending_wm;   /* ... for the next table scan */
};

/* Records a "FILE:LINE:COL: message" error (the first one wins). Returns -EINVAL. */
int sl_sql_plan_fail(struct sl_sql_plan_ctx *c, uint32_t line, uint32_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Hands p to the script, freed with fn at destroy. Returns p, or NULL (and fails) on ENOMEM. */
void *sl_sql_plan_own(struct sl_sql_plan_ctx *c, void *p, void (*fn)(void *));

struct sl_sql_conn_opt;
struct sl_sql_conn;

char *sl_sql_plan_strdup(struct sl_sql_plan_ctx *c, const char *s);
int sl_sql_plan_parse_duration(const char *s, sl_ts_t *ms);
int sl_sql_plan_type_from_ddl(struct sl_sql_plan_ctx *c, const struct sl_ddl_type *t,
			      struct sl_sql_type *out);
const struct sl_ddl_option *sl_sql_plan_table_option(const struct sl_ddl_table *t, const char *key);
struct sl_sql_plan_table *sl_sql_plan_find_table(struct sl_sql_plan_ctx *c, const char *name);
struct sl_sql_plan_view *sl_sql_plan_find_view(struct sl_sql_plan_ctx *c, const char *name);
struct sl_sql_conn *sl_sql_plan_connector(struct sl_sql_plan_ctx *c, const struct sl_ddl_table *d,
					  const struct sl_schema *schema, bool sink);
struct sl_schema *sl_sql_plan_table_schema(struct sl_sql_plan_ctx *c,
					   const struct sl_sql_plan_table *t);
struct sl_schema *sl_sql_plan_new_schema(struct sl_sql_plan_ctx *c);
int sl_sql_plan_schema_add(struct sl_sql_plan_ctx *c, struct sl_schema *s, const char *name,
			   const struct sl_sql_type *t, const char **final);
/* Appends a field of SQL type t (DECIMAL precision and scale, TIMESTAMP fraction digits) to
 * s under exactly `name`. Returns the field or -EINVAL / -ENOMEM. */
int sl_sql_plan_schema_put(struct sl_schema *s, const char *name, const struct sl_sql_type *t);

/* plan_udf.c: CREATE FUNCTION: loads the library and checks its descriptor. 0 or -EINVAL
 * (the error names the file's place and the library). */
int sl_sql_plan_add_function(struct sl_sql_plan_ctx *c, const struct sl_ddl_function *fn);

/* plan_agg_reduce.c: STDDEV_* and VAR_* rewritten into SUM and COUNT. *out is q with its
 * SELECT items and HAVING reduced (plan-owned copies where they changed); 0 or -errno. */
int sl_sql_plan_reduce_aggs(struct sl_sql_plan_ctx *c, const struct sl_query *q,
			    const struct sl_sql_plan_rel *rel, struct sl_query *out);
/* The internal aggregate they reduce to (SL_AGG_M2): a name no query can spell. */
#define SL_SQL_PLAN_M2 "$M2"
/* True for the names sl_sql_plan_reduce_aggs rewrites. */
bool sl_sql_plan_is_reduced_agg(const char *name);

/* plan_values.c: *out is a relation of no columns and one row, from a bounded source (a
 * SELECT without FROM). 0 or -errno. */
int sl_sql_plan_values_one(struct sl_sql_plan_ctx *c, struct sl_job *job, uint32_t line,
			   uint32_t col, struct sl_sql_plan_rel *out);

/* plan_values.c: *out is the relation of VALUES q (q->values), its rows computed now into a
 * bounded source, the columns EXPR$0, EXPR$1, ... of the common type of their values. 0 or
 * -errno (said). */
int sl_sql_plan_values(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		       struct sl_sql_plan_rel *out);

/* plan_scan.c */
bool sl_sql_plan_expr_equal(const struct sl_expr *a, const struct sl_expr *b);
struct sl_expr *sl_sql_plan_parse_span(struct sl_sql_plan_ctx *c, const struct sl_ddl_span *sp);
struct sl_prog *sl_sql_plan_compile(struct sl_sql_plan_ctx *c, const struct sl_expr *e,
				    const struct sl_sql_plan_rel *rel, struct sl_sql_type *type);
int sl_sql_plan_scan_table(struct sl_sql_plan_ctx *c, struct sl_job *job,
			   struct sl_sql_plan_table *t, const char *qual,
			   const struct sl_expr *view_time, const struct sl_expr *view_wm,
			   struct sl_sql_plan_rel *out);

/* plan_query.c */
/* Brings q's WITH names into scope until sl_sql_plan_with_end(w) (every begin that returned
 * 0 needs its end). 0 or -EINVAL (said). */
int sl_sql_plan_with_begin(struct sl_sql_plan_ctx *c, const struct sl_query *q,
			   struct sl_sql_plan_with *w);
void sl_sql_plan_with_end(struct sl_sql_plan_ctx *c, struct sl_sql_plan_with *w);
/* One FROM item (table, view, subquery, window TVF, join) to a relation; *out is reset. */
int sl_sql_plan_from(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_from *f,
		     struct sl_sql_plan_rel *out);
/* Expressions the planner makes (owned by the script): a reference to col (qualified when
 * it is), CAST(v AS BIGINT) for v in 0..9 (a join's __side), CAST(NULL AS t). NULL on
 * ENOMEM. */
const struct sl_expr *sl_sql_plan_col_expr(struct sl_sql_plan_ctx *c, const struct sl_sql_col *col);
const struct sl_expr *sl_sql_plan_side_expr(struct sl_sql_plan_ctx *c, int v);
const struct sl_expr *sl_sql_plan_null_of(struct sl_sql_plan_ctx *c, const struct sl_sql_type *t);
int sl_sql_plan_resolve_plain(const struct sl_sql_plan_rel *rel, const struct sl_expr *e);
bool sl_sql_plan_has_agg(const struct sl_expr *e);
/* The built-in aggregate a function name is (COUNT, SUM, ...), 0 if none (plan_agg.c). */
enum sl_agg_kind sl_sql_plan_agg_kind(const char *name);

/* plan_lookup.c: JOIN t FOR SYSTEM_TIME AS OF <left proctime> over left side L (planned):
 * t read whole now, then probed per row. 0 or -EINVAL (said). */
int sl_sql_plan_lookup_join(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_from *f,
			    struct sl_sql_plan_rel *L, struct sl_sql_plan_rel *out);

/* plan_gsets.c: GROUP BY GROUPING SETS / ROLLUP / CUBE (q->ngsets > 0) over rel: an
 * Expand, then one aggregation of the rewritten query into out. 0 or -EINVAL (said). */
int sl_sql_plan_grouping_sets(struct sl_sql_plan_ctx *c, struct sl_job *job,
			      const struct sl_query *q, struct sl_sql_plan_rel *rel,
			      struct sl_sql_plan_rel *out);

/* plan_over.c: OVER aggregations. Whether e is one OVER aggregate call, whether the
 * query's SELECT list has one, and the planning: rel keyed by the partition into the OVER
 * function, its columns then one per call (found through match). 0 or -EINVAL (said). */
bool sl_sql_plan_is_over_agg(const struct sl_expr *e);
bool sl_sql_plan_query_has_over(const struct sl_query *q);
int sl_sql_plan_over(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		     struct sl_sql_plan_rel *rel);
int sl_sql_plan_project(struct sl_sql_plan_ctx *c, struct sl_sql_plan_rel *rel,
			const struct sl_expr *const *exprs, const char *const *names, int n,
			const struct sl_expr *pred, const char *opname,
			struct sl_sql_plan_rel *out);
int sl_sql_plan_query(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		      struct sl_sql_plan_rel *out);
int sl_sql_plan_select_print(struct sl_sql_plan_ctx *c, struct sl_job *job,
			     const struct sl_stmt *st);
int sl_sql_plan_insert(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_stmt *st);

/* plan_join.c: L [INNER|LEFT|RIGHT|FULL] JOIN R ON ... without FOR SYSTEM_TIME AS OF */
int sl_sql_plan_join(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_from *f,
		     struct sl_sql_plan_rel *out);

/* What sl_sql_plan_join_rels() joins besides its two sides: a FROM's join, or a WHERE's
 * [NOT] IN / [NOT] EXISTS (SELECT ...) as a window semi or anti join (plan_semi.c). */
struct sl_sql_join_spec {
	enum sl_join_kind kind;	  /* FROM's join; INNER for semi / anti */
	bool semi, anti;	  /* the left rows with / without a match: window joins only */
	const char *what;	  /* semi / anti: "IN (SELECT ...)" and so on, for messages */
	const struct sl_expr *on; /* ON, or the subquery's WHERE; NULL: none */
	/* The left side's columns as ON names them (same indices as L's): a subquery's WHERE
	 * sees the outer columns its own FROM does not hide (plan_semi.c); NULL: L's */
	const struct sl_sql_plan_rel *on_left;
	/* IN (SELECT ...): the column of L compared with the subquery's column of R; -1 */
	int in_left, in_right;
	bool null_aware;	  /* NOT IN: a NULL on either side of it meets every row */
	uint32_t line, col;	  /* the JOIN, or the IN / EXISTS */
	uint32_t on_line, on_col; /* its condition */
};
/* Joins L and R (planned, sl_sql_plan_join_side() applied) into out as js says; both are
 * projected onto the join's input. 0 or -errno with the error set. */
int sl_sql_plan_join_rels(struct sl_sql_plan_ctx *c, struct sl_job *job, struct sl_sql_plan_rel *L,
			  struct sl_sql_plan_rel *R, const struct sl_sql_join_spec *js,
			  struct sl_sql_plan_rel *out);
/* A side as a join takes it: a window TVF joined as it is gets its window columns (as Flink
 * materializes it); a pending ROW_NUMBER() is refused. line:col: the side, for errors. */
int sl_sql_plan_join_side(struct sl_sql_plan_ctx *c, struct sl_sql_plan_rel *r, uint32_t line,
			  uint32_t col);

/* plan_semi.c: WHERE's conjuncts that are [NOT] IN (SELECT ...) or [NOT] EXISTS (SELECT
 * ...) joined onto rel as window semi / anti joins, the other conjuncts filtering rel first;
 * *where becomes NULL. A subquery anywhere else in WHERE is an error naming its place. Call
 * only when sl_sql_plan_has_subquery(*where). */
int sl_sql_plan_subquery_joins(struct sl_sql_plan_ctx *c, struct sl_job *job,
			       struct sl_sql_plan_rel *rel, const struct sl_expr **where);
/* The first IN (SELECT ...) or EXISTS (SELECT ...) in e, or NULL. */
const struct sl_expr *sl_sql_plan_has_subquery(const struct sl_expr *e);

/* plan_union.c: q, a UNION ALL of SELECT blocks, into *out. 0 or -EINVAL (said). */
int sl_sql_plan_union(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		      struct sl_sql_plan_rel *out);

/* plan_comma.c: FROM a, b, ... WHERE w: each conjunct of w as the condition of the lowest
 * comma join whose items it names, the rest on the outermost; *from and *where replaced
 * (where NULL) when *from is a comma join and w has no subquery. 0 or -ENOMEM. */
int sl_sql_plan_comma_joins(struct sl_sql_plan_ctx *c, const struct sl_from **from,
			    const struct sl_expr **where);
/* plan_comma.c: the conjuncts v[0..n) ANDed left to right, new nodes owned by c; NULL for
 * none (or on ENOMEM, which sl_sql_plan_own() said). */
const struct sl_expr *sl_sql_plan_and(struct sl_sql_plan_ctx *c, const struct sl_expr *const *v,
				      int n);
/* plan_query.c: a filter calc on rel (rows pass unchanged). */
int sl_sql_plan_filter(struct sl_sql_plan_ctx *c, struct sl_sql_plan_rel *rel,
		       const struct sl_expr *pred);

/* plan_topn.c: the outer WHERE rn <= N over a relation carrying a pending ranking
 * function (rel->rownum); *where becomes what is left of WHERE to filter the result with */
int sl_sql_plan_topn(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		     struct sl_sql_plan_rel *rel, const struct sl_expr **where);
/* True when rel's pending ranking is partitioned by a window's start and end: a window
 * Top-N or window deduplication, which sl_sql_plan_topn() plans */
bool sl_sql_plan_topn_windowed(const struct sl_sql_plan_rel *rel);

/* plan_agg.c */
int sl_sql_plan_agg(struct sl_sql_plan_ctx *c, struct sl_job *job, const struct sl_query *q,
		    struct sl_sql_plan_rel *rel, struct sl_sql_plan_rel *out);
void sl_sql_plan_free_group_agg(void *fn);

#endif
