/*
 * sql_options.h - a SQL table's WITH options turned into a source or sink of the embedded
 * connectors. The planner's side of CREATE TABLE ... WITH ('connector' = ..., ...): it keeps
 * the SQL binding out of the connectors' runtime code (STYLE: configurator vs handler).
 *
 * Connectors and their options (keys are case-sensitive, as in Flink):
 *
 *   filesystem  source and sink
 *     path                          file, or directory: every regular file in it whose name
 *                                   does not start with '.' or '_' (sorted) is one split; a
 *                                   sink with more than one shard writes part files there
 *     format                        json | csv | debezium-json (source only)
 *     sink.delivery-guarantee       exactly-once | at-least-once; default: exactly-once
 *                                   when the job takes checkpoints (Flink's FileSink),
 *                                   at-least-once otherwise
 *     json.ignore-parse-errors      skip and count bad records instead of dead-lettering
 *     json.fail-on-missing-field    a missing key is a record error (not with the above)
 *     debezium-json.schema-include  accepted either way: the envelope is read at top level
 *                                   and under "payload"
 *     debezium-json.ignore-parse-errors
 *     csv.field-delimiter           one character ('\t' written as two characters is a tab)
 *     csv.null-literal              text read and written as NULL
 *     csv.ignore-parse-errors
 *     csv.allow-comments            records starting with '#' are skipped
 *     json.fail-on-decimal-overflow, csv.fail-on-decimal-overflow,
 *     debezium-json.fail-on-decimal-overflow
 *                                   a DECIMAL beyond its precision is a record error (dead
 *                                   letter) instead of NULL; default false: NULL, as Flink,
 *                                   counted per operator either way
 *     source.monitor-interval       rejected: folders are read once (bounded), not watched
 *
 *   datagen  source (Flink's options, plus event-time knobs)
 *     rows-per-second               default 10000 (over the whole source); 0: unthrottled
 *     number-of-rows                default unbounded
 *     seed                          sluice: random seed (default 0); same seed, same rows
 *     fields.F.kind                 random (default) | sequence | event-time (sluice)
 *     fields.F.min / .max           random bounds: numbers, DECIMAL text, DATE
 *                                   'YYYY-MM-DD', TIMESTAMP text or epoch ms
 *     fields.F.max-past             random TIMESTAMP in [now - max-past, now] (Flink)
 *     fields.F.length               random STRING length (default 10)
 *     fields.F.start / .end         sequence bounds (both required); event-time: start is
 *                                   the first timestamp (text or epoch ms, default 0)
 *     fields.F.step                 event-time: advance per record (duration, default 1 s)
 *     fields.F.max-disorder         event-time: each record moved back by up to this
 *     fields.F.late-fraction        event-time: share of records (0..1) made late by ...
 *     fields.F.late-by              ... this much more (duration)
 *   Durations are '<n>' (ms) or '<n> <unit>' with unit ms, s, min, h, d (and their long
 *   forms: second(s), minute(s), ...), as in Flink's Duration options.
 *
 *   nexmark  source (nexmark_source.h; Flink's nexmark connector's names, plus sluice's)
 *     first-event.rate              events/s of event time (default 10000)
 *     next-event.rate               accepted only equal to first-event.rate
 *     events.num                    default 0: unbounded
 *     person.proportion, auction.proportion, bid.proportion   default 1, 3, 46
 *     person.avg-size, auction.avg-size, bid.avg-size         memory sizes, at most 32 KiB
 *                                   (default 200b, 500b, 100b)
 *     bid.hot-ratio.auctions, bid.hot-ratio.bidders, auction.hot-ratio.sellers  (2, 4, 4)
 *     max-emit-speed                default true; false: paced at first-event.rate
 *     seed                          sluice: default 0; same seed, same events
 *     base-time                     sluice: timestamp of event 0 (text or epoch ms),
 *                                   default 2015-07-15 00:00:00
 *     splits                        sluice: default 8, whatever the shard count
 *     keep-alive, stop-at, rate.shape, rate.period, rate.limited: refused by name
 *   The table's physical columns must be Nexmark fields: event_type INT and the leaves of
 *   the ROWs person, auction, bid of nexmark's DDL (person.id BIGINT, ...), any subset.
 *
 *   kafka  source and sink, upsert-kafka  sink: see sql_kafka.c and sql_kafka_sink.c
 *
 *   print  sink:  print-identifier; standard-error (true: stderr); sink.parallelism ('1'
 *          drops the "N> " subtask prefix, as one Flink subtask prints none)
 *   blackhole  sink, no options
 *
 * The connectors are one table in sql_options.c (name, how to bind it as a source, as a
 * sink): the planner binds every table through it, and the messages for an unknown
 * connector or a wrong direction are made from it, so a connector added there is known
 * everywhere.
 *
 * Errors: an unknown option, a missing required option or a bad value fails with one line
 * "FILE:LINE:COL: ..." naming the option (LINE:COL from the option; a missing option points
 * at 'connector') and, for an unknown one, the known keys.
 *
 * Threads: plan time, one thread. Nothing here runs per record.
 */
#ifndef SL_CONNECTORS_SQL_OPTIONS_H
#define SL_CONNECTORS_SQL_OPTIONS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/connectors.h>

/* One WITH option as parsed. `used`: consumed already (the planner's own keys such as
 * scan.watermark.*) and skipped here; set by these functions for every key they consume. */
struct sl_sql_conn_opt {
	const char *key, *value;
	uint32_t line, col;
	bool used;
};

/*
 * A configured connector. Exactly one of src_ops / sink_ops is set. `cfg` is what to pass to
 * sl_job_source() / sl_stream_sink() with those ops; it is owned by this struct (free with
 * sl_sql_conn_fini()) and borrows the schema given to the constructor, which must
 * outlive the job. `cfg` may be NULL (blackhole).
 */
struct sl_sql_conn {
	const struct sl_source_ops *src_ops;
	const struct sl_sink_ops *sink_ops;
	void *cfg;
	void (*cfg_free)(void *cfg);
	bool changelog;	   /* a source produces -U/+U/-D rows (debezium-json); a sink takes
			    * them (upsert-kafka, print, blackhole) */
	uint64_t *skipped; /* filesystem source: records skipped by *.ignore-parse-errors,
			    * summed over splits at their close (read after the job ran);
			    * NULL for other connectors */
};

/*
 * A table as the planner hands it to its connector: the schema (its flattened fields: "a.b"
 * for nested ROWs), the WITH options, and what only the planner knows, which some
 * connectors need. Zero what does not apply.
 */
struct sl_sql_conn_table {
	const struct sl_schema *schema;
	struct sl_sql_conn_opt *opts;
	int nopts;
	const char *file; /* the SQL file, for messages */
	const int *pk;	  /* PRIMARY KEY fields of schema: upsert-kafka's key */
	int npk;
	const int *part; /* PARTITIONED BY fields of schema, in order */
	int npart;
	int64_t checkpoint_interval_ms; /* the job's (0: none): Kafka's transaction timeout */
	int nshards;			/* the job's shards: one datagen stream a shard */
	bool offline;			/* check the options without asking external systems
					 * (EXPLAIN, fuzzing): a Kafka source gets no splits */
};

/*
 * Builds a source for table t from its 'connector' option and the others of t->opts.
 * Returns 0 with *out filled, or -EINVAL / -ENOMEM (or a connector's -errno) with a
 * one-line message in err[errcap].
 */
int sl_sql_conn_bind_source(const struct sl_sql_conn_table *t, struct sl_sql_conn *out, char *err,
			    size_t errcap);

/* The pieces every connector's SQL mapping shares (sql_kafka*.c too):
 * sl_sql_conn_opt_take    returns the unused option `key` of opts[0..n), marking it used,
 *                         or NULL;
 * sl_sql_conn_opt_vfail   writes "FILE:LINE:COL: <message>" for option o (NULL: 1:1) into
 *                         err and returns -EINVAL;
 * sl_sql_conn_parse_duration  Flink's duration text ('<n>' ms or '<n>[ ]<unit>', unit ms,
 *                         s, min, h, d and their long forms) into ms: 0 or -EINVAL;
 * sl_sql_conn_parse_memory_size  Flink's memory size text ("512 mb", "2g", "64kb", a bare
 *                         number is bytes) into bytes: 0, -EINVAL or -ERANGE. */
struct sl_sql_conn_opt *sl_sql_conn_opt_take(struct sl_sql_conn_opt *opts, int n, const char *key);
int sl_sql_conn_opt_vfail(char *err, size_t errcap, const char *file,
			  const struct sl_sql_conn_opt *o, const char *fmt, va_list ap);
int sl_sql_conn_parse_duration(const char *text, int64_t *ms);
int sl_sql_conn_parse_memory_size(const char *text, size_t *bytes);

/* Like sl_sql_conn_bind_source() for a sink (INSERT INTO target). */
int sl_sql_conn_bind_sink(const struct sl_sql_conn_table *t, struct sl_sql_conn *out, char *err,
			  size_t errcap);

/*
 * The Kafka connector's binders, which the connector table calls; the 'connector' option is
 * already consumed and `at` points at it. Each returns 0 with *out filled (cfg owned by
 * *out), or -EINVAL / -ENOMEM (the source: or the -errno of prepare) with one line
 * "FILE:LINE:COL: ..." in err.
 * sl_sql_conn_kafka_source  a Kafka source (sql_kafka.c lists the options). `offline`: the
 *                   options are checked but the cluster is not asked for partitions
 *                   (explain, fuzzing): the source then has no splits and must not run.
 * sl_sql_conn_kafka_sink    a Kafka sink (sql_kafka_sink.c lists the options). `upsert`:
 *                   'upsert-kafka', whose key is the PRIMARY KEY fields pk[0..npk)
 *                   (required then). `checkpoint_interval_ms` (0: none) sizes the
 *                   transaction timeout.
 */
int sl_sql_conn_kafka_source(const struct sl_schema *schema, struct sl_sql_conn_opt *opts,
			     int nopts, const char *file, const struct sl_sql_conn_opt *at,
			     bool offline, struct sl_sql_conn *out, char *err, size_t errcap);
int sl_sql_conn_kafka_sink(const struct sl_schema *schema, struct sl_sql_conn_opt *opts, int nopts,
			   const char *file, const struct sl_sql_conn_opt *at, bool upsert,
			   const int *pk, int npk, int64_t checkpoint_interval_ms,
			   struct sl_sql_conn *out, char *err, size_t errcap);

/* Tells a connector whether its job takes checkpoints, for the defaults that depend on it:
 * a filesystem sink without 'sink.delivery-guarantee' is exactly-once with checkpoints (as
 * Flink's FileSink), at-least-once without. Call once the whole script is planned (a SET
 * anywhere in it applies to every job). */
void sl_sql_conn_checkpointing(struct sl_sql_conn *c, bool on);

/* Frees what a successful constructor allocated. Accepts a zeroed struct. */
void sl_sql_conn_fini(struct sl_sql_conn *c);

#endif
