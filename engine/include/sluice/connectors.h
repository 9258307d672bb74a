/*
 * sluice/connectors.h - the embedded connectors (file and datagen sources; print, blackhole
 * and JSON-lines file sinks) and the record formats they share (JSON lines, CSV).
 *
 * Configuration structs are plain data: zero-initialize, set what you need, and pass a pointer
 * to sl_job_source() / sl_stream_sink(). The job borrows the cfg (and everything it points to)
 * until sl_job_destroy(). Each source cfg names the schema its rows are built for, because
 * sl_source_ops.open() is not given one.
 *
 * Threads: every ops hook runs on the shard that opened the split or sink instance. The
 * decoders and the writer below are single-threaded objects: one per split or instance.
 */
#ifndef SLUICE_CONNECTORS_H
#define SLUICE_CONNECTORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/job.h>
#include <sluice/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- formats -------------------------------------------------------------------------- */

enum sl_format {
	SL_FORMAT_JSON = 0,	 /* one JSON object per line; keys are field names, a field
				  * named "a.b" is key b of the object under key a */
	SL_FORMAT_CSV,		 /* RFC 4180, columns map to fields by position */
	SL_FORMAT_DEBEZIUM_JSON, /* one Debezium change event per line: 0..2 changelog rows */
};

/*
 * Type conversions shared by the formats. A field of type
 *   BOOL       takes true/false (JSON) or the text true/false (any case);
 *   INT        an integer in int32 range (or its text);  BIGINT likewise in int64 range;
 *   DOUBLE     any number (or its text, incl. NaN / Infinity);
 *   FLOAT      likewise, rounded once to float from the literal's text;
 *   DECIMAL    a number or its text, from the digits (never through a double), rounded
 *              HALF_UP to the scale; a value beyond the precision is NULL (as in Flink)
 *              and counted, or a record error when the decoder is asked to be strict;
 *   DATE       text 'YYYY-MM-DD';
 *   STRING     a string; in JSON a number or boolean gives its literal text, an object or
 *              array its JSON text (as Flink does); it must be UTF-8 (else a record error);
 *   TIMESTAMP, TIMESTAMP_LTZ  epoch milliseconds (an integer), or text
 *              'YYYY-MM-DD HH:MM:SS[.fff]', with 'T' allowed for the blank and an optional
 *              'Z' or +HH:MM offset (UTC otherwise).
 * A missing JSON key and JSON null give NULL, and so does a missing or null object on the
 * path of a dotted field. Anything else is a record error whose message names the field and
 * the cause in one line.
 */

/* Bytes that must be readable after a JSON record passed to sl_json_dec_row() (simdjson reads
 * ahead in 64-byte blocks; the contents do not matter). */
#define SL_JSON_PADDING 64

/* Longest reason a decoder writes (including the NUL). */
#define SL_FMT_WHY_MAX 160

/* A JSON-lines decoder for one schema, holding a reusable simdjson parser. */
struct sl_json_dec;

/* Returns a decoder for `schema` (borrowed for the decoder's life) or NULL on ENOMEM.
 * Caller frees with sl_json_dec_destroy(). */
struct sl_json_dec *sl_json_dec_create(const struct sl_schema *schema);

#define SL_JSON_FAIL_ON_MISSING	     1u /* a field whose key is absent is a record error */
#define SL_JSON_DEBEZIUM	     2u /* decode with sl_dbz_dec_rows() (owns a 2nd row buffer) */
#define SL_JSON_FAIL_ON_DEC_OVERFLOW 4u /* a DECIMAL beyond its precision is a record error */

/* Like sl_json_dec_create() with SL_JSON_* flags. Returns NULL with *err (may be NULL) set to
 * -ENOMEM, or -EINVAL when the dotted names do not form a tree ("a" and "a.b" both fields,
 * or an empty path component). */
struct sl_json_dec *sl_json_dec_create_ex(const struct sl_schema *schema, unsigned flags, int *err);
void sl_json_dec_destroy(struct sl_json_dec *d);

/* DECIMAL values this decoder made NULL because they did not fit their precision (Flink's
 * behaviour; with SL_JSON_FAIL_ON_DEC_OVERFLOW they are record errors instead). The
 * decoder's thread. */
uint64_t sl_json_dec_overflows(const struct sl_json_dec *d);

/*
 * Decodes the JSON object in line[0..len) into a row built in `buf` (8-byte aligned, `cap`
 * bytes). At least SL_JSON_PADDING bytes after line[len] must be readable. Returns the row,
 * or NULL with a one-line reason in why[SL_FMT_WHY_MAX]. Hot path: no allocation once the
 * parser has seen a record of this length (it grows to the longest record).
 */
const struct sl_row *sl_json_dec_row(struct sl_json_dec *d, const char *line, size_t len, void *buf,
				     uint32_t cap, char *why);

/* Like sl_json_dec_row() for a record without readable padding: copies it first. */
const struct sl_row *sl_json_dec_row_copy(struct sl_json_dec *d, const char *line, size_t len,
					  void *buf, uint32_t cap, char *why);

/*
 * Debezium JSON (decoder created with SL_JSON_DEBEZIUM): decodes the change event in
 * line[0..len) (padding as for sl_json_dec_row()) whose envelope {before, after, op} is at
 * top level or under "payload" (schema-include). The schema's fields are looked up inside
 * before/after. Stores the produced rows, kind set, in rows[] and returns their number:
 *   op c, r: 1 (+I after);  u: 2 (-U before, +U after);  d: 1 (-D before);
 *   tombstone (JSON null, or a null payload): 0.
 * rows[] point into buf (cap bytes) and into the decoder's own buffer, both valid until the
 * next call. A u/d without before-image, an unknown op or a broken record: -EINVAL with a
 * reason in why. Hot path.
 */
int sl_dbz_dec_rows(struct sl_json_dec *d, const char *line, size_t len, void *buf, uint32_t cap,
		    const struct sl_row *rows[2], char *why);
/* Like sl_dbz_dec_rows() for a record without readable padding: copies it first. */
int sl_dbz_dec_rows_copy(struct sl_json_dec *d, const char *line, size_t len, void *buf,
			 uint32_t cap, const struct sl_row *rows[2], char *why);

/*
 * Decodes every newline-separated record of buf[0..len) (SL_JSON_PADDING readable bytes after
 * buf[len]; empty lines are skipped) into rows built one after another in `rowbuf`, discarding
 * them (a Debezium decoder decodes change events). Returns the number of records decoded; *nerr
 * (may be NULL) gets the number that failed.
 * The entry point for parse benchmarks: it is exactly the work the file source does per line
 * minus reading and emission.
 */
uint64_t sl_json_dec_lines(struct sl_json_dec *d, const char *buf, size_t len, void *rowbuf,
			   uint32_t cap, uint64_t *nerr);

struct sl_csv_opts {
	char delimiter;		       /* 0 means ',' */
	bool header;		       /* the first line is a header and is skipped */
	const char *null_literal;      /* an unquoted field equal to this is NULL; NULL: none */
	bool fail_on_decimal_overflow; /* a DECIMAL beyond its precision is a record error
					* (default: NULL, counted) */
};

/*
 * A CSV decoder: quoted fields may hold delimiters, newlines and doubled quotes (""). An empty
 * unquoted field is NULL for every type but STRING, where it is the empty string; a STRING
 * that is not UTF-8 is a record error. A record must have exactly as many fields as the
 * schema. No allocation after create.
 */
struct sl_csv_dec;

/* Returns a decoder or NULL on ENOMEM; `schema` and `opts` strings are borrowed. */
struct sl_csv_dec *sl_csv_dec_create(const struct sl_schema *schema,
				     const struct sl_csv_opts *opts);
void sl_csv_dec_destroy(struct sl_csv_dec *d);
/* DECIMAL values made NULL because they did not fit (see sl_json_dec_overflows()). */
uint64_t sl_csv_dec_overflows(const struct sl_csv_dec *d);

/* Decodes one record (without its line terminator) into a row in buf. Returns the row or
 * NULL with a reason in why[SL_FMT_WHY_MAX]. Hot path. */
const struct sl_row *sl_csv_dec_row(struct sl_csv_dec *d, const char *rec, size_t len, void *buf,
				    uint32_t cap, char *why);

/*
 * Returns the length of the first CSV record in buf[0..len) including its '\n' (a newline
 * inside a quoted field does not end it), or 0 if it is not complete in the buffer; with
 * `eof` (nothing follows buf) the rest is the last record. A quoted field that spans lines
 * but never closes properly (input ends inside it, its closing quote is followed by other
 * text than the delimiter or the line end, or it outgrows SL_ROW_SCRATCH) ends the record at
 * the end of the line where it opened, so one bad quote costs one record. Hot path.
 */
size_t sl_csv_dec_record_len(const struct sl_csv_dec *d, const char *buf, size_t len, bool eof);
/* As sl_csv_dec_record_len(), and sets *breaks to the line breaks the record holds (its
 * ending '\n' included), which a reader counting lines would otherwise scan for again: 1
 * for nearly every record, known without a scan. Hot path. */
size_t sl_csv_dec_record(const struct sl_csv_dec *d, const char *buf, size_t len, bool eof,
			 uint64_t *breaks);

/*
 * Writes `r` as one JSON object and a '\n' into buf: keys are field names (dotted names as
 * nested objects, fields of one object adjacent in the schema), NULL is null, DECIMAL a
 * number with its scale, FLOAT as Java prints it, DATE 'YYYY-MM-DD', TIMESTAMP
 * 'YYYY-MM-DD HH:MM:SS.fff' text (Flink's SQL timestamp format) and TIMESTAMP_LTZ the same
 * with a 'Z', non-finite DOUBLE/FLOATs are the strings "NaN", "Infinity", "-Infinity" (what
 * Jackson writes), strings are escaped per RFC 8259. Returns the bytes written, or -ENOSPC if
 * `cap` is too small (buf content is then undefined). Hot path: no formatting library calls.
 */
int sl_json_write_row(const struct sl_row *r, const struct sl_schema *s, char *buf, size_t cap);

/*
 * Writes `r` as one CSV record and a '\n' into buf, columns in schema order with the opts'
 * delimiter (',' when opts is NULL): NULL is the null literal (empty without one), a STRING
 * is quoted (quotes doubled) when it holds the delimiter, a quote or a line break or is
 * empty; other values as sl_json_write_row() prints them, unquoted. Returns the bytes
 * written or -ENOSPC. Hot path.
 */
int sl_csv_write_row(const struct sl_row *r, const struct sl_schema *s,
		     const struct sl_csv_opts *opts, char *buf, size_t cap);

/* ---- sources -------------------------------------------------------------------------- */

/*
 * File source: one split per path (files only: expand a directory with sl_file_list_dir()),
 * or, with `ranges`, one split per byte range of a file (sl_file_plan_ranges()), so one
 * large file feeds every shard. Records are read with large buffered reads. A shard reads
 * the splits it owns one after another in split order (a file's ranges are pieces of one
 * stream; reading them at once would hold every piece's windows open). An undecodable
 * record goes to the dead-letter output as "path:LINE" and reading continues; with
 * ignore_parse_errors it is skipped and counted instead: each split adds its count to
 * *skipped (atomically) when it closes and prints one line to stderr naming the file and
 * the count. A SL_FORMAT_DEBEZIUM_JSON split emits each change event's rows with their
 * kinds (-U/+U/-D).
 */
struct sl_file_range {
	int path;	     /* index into paths */
	uint64_t begin, end; /* the records that start in [begin, end); begin is a record
			      * start; end UINT64_MAX: to the end of the file */
};

struct sl_file_source_cfg {
	const char *const *paths; /* npaths files, borrowed */
	int npaths;
	const struct sl_file_range *ranges; /* nranges splits, borrowed; NULL: one per path */
	int nranges;
	enum sl_format format;
	struct sl_csv_opts csv;		/* SL_FORMAT_CSV */
	const struct sl_schema *schema; /* rows are built for this schema, borrowed */
	uint32_t read_bytes;		/* read size; 0: 1 MiB */
	bool ignore_parse_errors;	/* skip and count bad records, no dead letters */
	uint64_t *skipped;		/* optional: the skipped records of all splits */
	bool json_fail_on_missing;	/* JSON: a missing key is a record error */
	bool csv_allow_comments;	/* CSV: records starting with '#' are ignored */
	bool fail_on_decimal_overflow;	/* a DECIMAL beyond its precision is a record error
					 * (default: NULL, counted per operator, as Flink) */
	/* A PARTITIONED BY table: `schema` is the columns its files hold, and each row is
	 * widened to `table` (those columns and the partition columns, in the table's
	 * order): field j is field phys[j] of the decoded row when phys[j] >= 0, else field j
	 * of part_rows[p], a row of `table` with file p's partition values. All borrowed;
	 * table NULL: not partitioned. Costs a copy of each row. */
	const struct sl_schema *table;
	const int *phys;
	const struct sl_row *const *part_rows;
};

/*
 * Lists the regular files of directory `path` whose names do not start with '.' or '_'
 * (hidden files, Flink's _SUCCESS markers), sorted by name, as malloc'd "path/name" strings
 * in *out (*nout of them; none for an empty directory). A `path` that is not a directory
 * (a file, or nothing yet) is returned as the only element, so a missing file is reported
 * when the split opens. Returns 0 or -errno. Free with sl_file_list_free(). Plan time.
 */
int sl_file_list_dir(const char *path, char ***out, int *nout);
void sl_file_list_free(char **paths, int n);

/*
 * Cuts cfg's files into byte ranges of about split_bytes each, every range beginning at a
 * record start: after a line break for JSON lines and Debezium JSON (a JSON record never
 * holds a raw one), and for CSV, whose quoted fields may, at a boundary found by reading the
 * file's records from its start with the decoder's own rule (a file without a '"' skips that
 * pass: its line starts are its record starts). The ranges depend only on the files' bytes
 * and split_bytes, never on the shard count, so any restore continues the same splits. A file
 * that cannot be read yet gets one range, so the split reports it when it opens. Plan time:
 * costs a few small reads per range, plus one read of a CSV file that holds a quote.
 * *out is malloc'd (free it); 0 or -errno with err set naming the file.
 */
int sl_file_plan_ranges(const struct sl_file_source_cfg *cfg, uint64_t split_bytes,
			struct sl_file_range **out, int *nout, struct sl_error *err);

enum sl_gen_kind {
	SL_GEN_RANDOM = 0, /* uniform in [min, max] (DOUBLE/FLOAT: [dmin, dmax)); STRING:
			    * random alphanumeric text of `length` chars; BOOL: fair coin */
	SL_GEN_SEQUENCE,   /* start, start+1, ... end; the range is dealt over the splits
			    * (split s gets start+s, start+s+n, ...); its end ends the source.
			    * DECIMAL gets the integer values, DATE days, TIMESTAMPs ms */
	SL_GEN_EVENT_TIME, /* TIMESTAMP[_LTZ] or BIGINT: base_ts + i * step_ms for the i-th
			    * record of the source, minus a uniform 0..max_disorder_ms, and for
			    * a late_fraction of records minus a further late_ms */
};

struct sl_datagen_field {
	enum sl_gen_kind kind;
	int64_t start, end; /* SEQUENCE, inclusive; STRING fields get the decimal text */
	int64_t min, max;   /* RANDOM integers, TIMESTAMPs (ms), DATEs (days), DECIMALs
			     * (unscaled); both 0: the INT range, [0, 2^62) for BIGINT,
			     * 1970..2099 for TIMESTAMP[_LTZ] and DATE, +-(10^p - 1) for
			     * DECIMAL(p, s) */
	double dmin, dmax;  /* RANDOM DOUBLE/FLOAT; both 0: [0, 1) */
	uint32_t length;    /* RANDOM STRING length; 0: 10 (capped at 1024) */
	sl_ts_t base_ts;    /* EVENT_TIME */
	sl_ts_t step_ms;
	sl_ts_t max_disorder_ms;
	double late_fraction; /* 0..1 */
	sl_ts_t late_ms;
};

/*
 * Datagen source: deterministic per (seed, split), so two runs with the same cfg produce
 * the same rows on every split. Record i of the source (0-based, counted over all splits)
 * is produced by split i mod nsplits.
 */
struct sl_datagen_cfg {
	const struct sl_schema *schema;	       /* borrowed */
	const struct sl_datagen_field *fields; /* one per schema field, borrowed */
	int64_t rows_per_second;	       /* over all splits; 0: as fast as possible */
	int64_t number_of_rows;		       /* over all splits; 0: unbounded (a SEQUENCE field
						* still ends the source at its end) */
	int nsplits;			       /* parallel generator streams; 0: 1 */
	uint64_t seed;
};

extern const struct sl_source_ops sl_file_source_ops;
extern const struct sl_source_ops sl_datagen_source_ops;

/* ---- sinks ---------------------------------------------------------------------------- */

/*
 * Print sink: each row as `+I[...]` plus '\n', Flink's print connector output. Lines are
 * buffered per instance and written whole, so two shards never interleave mid-line.
 * The line prefix follows Flink: identifier, then ":N" (1-based shard) when subtask_prefix is
 * set and there is more than one shard, then "> " if anything came before.
 */
struct sl_print_sink_cfg {
	int fd;			/* output; 0 (unset) means stdout */
	const char *identifier; /* Flink's 'print-identifier'; NULL or "": none */
	bool subtask_prefix;	/* "N> " per shard when nshards > 1 (Flink's default) */
};

/* Blackhole sink: consumes rows. cfg may be NULL. */
struct sl_blackhole_sink_cfg {
	uint64_t *rows; /* optional: each instance adds its row count here at flush */
};

/*
 * Filesystem sink, JSON lines (the default) or CSV. If `path` is a directory (or does not
 * exist and the sink has more than one shard, in which case it is created), shard k writes
 * `<path>/part-<k>.jsonl` (`.csv`); otherwise a single-shard sink writes `path` itself. Files
 * are appended to (never truncated: a row once visible stays visible, a restart adds after
 * it, and replayed rows are duplicates), written in large chunks, and flush() writes out
 * everything buffered (visible, not fsynced). Rows are written whatever their kind: feed it
 * an append stream. This is the at-least-once mode; SQL tables get exactly-once by default
 * when the job takes checkpoints, as Flink's FileSink.
 *
 * With `exactly_once`, `path` is always a directory (made if missing; a regular file is
 * refused) and rows go to hidden in-progress files `.part-<k>-<run>-<n>.inprogress` (<run>
 * random per instance, so no name is reused), which readers (the file source, Flink) skip.
 * precommit() at checkpoint c fsyncs and closes them and names their final files
 * `part-<k>-<c>-<i>.jsonl` in the meta; commit() renames them (never over an existing file),
 * so a row is visible only once a checkpoint covering it is complete.
 * abort_pending() deletes the in-progress files of shard k (shard 0 also those of shards
 * >= nshards, left by a run with more shards). Metas name files relative to `path`: restore
 * a job with the same path. End of input without a final checkpoint: flush() precommits and
 * commits everything itself (Flink's end of a bounded input), visible at once but not
 * covered by any checkpoint; a runtime taking a final checkpoint calls flush() after that
 * checkpoint's commit, when flush() finds nothing left to do.
 */
struct sl_jsonl_sink_cfg {
	const char *path;
	enum sl_format format;	/* SL_FORMAT_JSON (0) or SL_FORMAT_CSV */
	struct sl_csv_opts csv; /* SL_FORMAT_CSV: delimiter, null literal (header ignored) */
	bool exactly_once;	/* two-phase commit over checkpoints (above); false: as before */
	uint64_t roll_bytes;	/* exactly-once: a part file ends past this size (and at each
				 * checkpoint); 0: only at checkpoints */
	uint32_t buf_bytes;	/* encoding buffer per instance; 0: 256 KiB */
};

/*
 * Partitioned filesystem sink (Flink's `PARTITIONED BY (c1, c2)`): a row goes under
 * `<file.path>/c1=v1/c2=v2/` (values escaped as Flink's PartitionPathUtils does: the
 * control characters, DEL and the characters " # % ' * / : = ? \\ { [ ] ^ as %XX; NULL or '' as
 * `default_name`)
 * without the partition columns, into part files written and committed per partition
 * directory exactly as the unpartitioned sink does (`file` gives path, format and delivery
 * guarantee). A partition is committed, `success_name` (when `success_file`) created in
 * its directory, at the checkpoint commit that follows its trigger: process time past its
 * creation + delay, or (partition_time) the watermark past its time + delay, the time made
 * from `time_pattern` ('$dt $hm:00'; NULL: the first partition value) read as
 * 'yyyy-MM-dd[ HH:mm[:ss]]' in UTC. At end of input every partition is committed.
 * A partition without rows since the last checkpoint (or, without checkpoints, for
 * `inactivity_ms`) is closed; with exactly-once a file open for `rollover_ms` is rolled.
 * Both are checked every `check_ms` of processing time.
 */
struct sl_fspart_sink_cfg {
	struct sl_jsonl_sink_cfg file; /* path: the table's root directory */
	const int *part;	       /* partition fields of the table's schema, in order */
	int npart;
	const char *default_name; /* NULL: "__DEFAULT_PARTITION__" */
	bool success_file;
	const char *success_name; /* NULL: "_SUCCESS" */
	bool partition_time;	  /* trigger 'partition-time'; false: 'process-time' */
	int64_t delay_ms;
	const char *time_pattern;
	int64_t rollover_ms, inactivity_ms, check_ms; /* 0: never */
	uint64_t run; /* random per planned job: the commit records of other runs are ignored */
};

extern const struct sl_sink_ops sl_print_sink_ops;
extern const struct sl_sink_ops sl_blackhole_sink_ops;
extern const struct sl_sink_ops sl_jsonl_sink_ops;
extern const struct sl_sink_ops sl_fspart_sink_ops;

#ifdef __cplusplus
}
#endif
#endif
