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
	SL_FORMAT_JSON = 0, /* one JSON object per line; keys are field names */
	SL_FORMAT_CSV,      /* RFC 4180, columns map to fields by position */
};

/*
 * Type conversions shared by both formats. A field of type
 *   BOOL       takes true/false (JSON) or the text true/false (any case);
 *   INT        an integer in int32 range (or its text);  BIGINT likewise in int64 range;
 *   DOUBLE     any number (or its text, incl. NaN / Infinity);
 *   STRING     a string; in JSON a number or boolean gives its literal text;
 *   TIMESTAMP  epoch milliseconds (an integer), or text 'YYYY-MM-DD HH:MM:SS[.fff]', with
 *              'T' allowed for the blank and an optional 'Z' or +HH:MM offset (UTC otherwise).
 * A missing JSON key and JSON null give NULL. Anything else is a record error whose message
 * names the field and the cause in one line.
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
void sl_json_dec_destroy(struct sl_json_dec *d);

/*
 * Decodes the JSON object in line[0..len) into a row built in `buf` (8-byte aligned, `cap`
 * bytes). At least SL_JSON_PADDING bytes after line[len] must be readable. Returns the row,
 * or NULL with a one-line reason in why[SL_FMT_WHY_MAX]. Hot path: no allocation once the
 * parser has seen a record of this length (it grows to the longest record).
 */
const struct sl_row *sl_json_dec_row(struct sl_json_dec *d, const char *line, size_t len,
				     void *buf, uint32_t cap, char *why);

/* Like sl_json_dec_row() for a record without readable padding: copies it first. */
const struct sl_row *sl_json_dec_row_copy(struct sl_json_dec *d, const char *line, size_t len,
					  void *buf, uint32_t cap, char *why);

/*
 * Decodes every newline-separated record of buf[0..len) (SL_JSON_PADDING readable bytes after
 * buf[len]; empty lines are skipped) into rows built one after another in `rowbuf`, discarding
 * them. Returns the number of records decoded; *nerr (may be NULL) gets the number that failed.
 * The entry point for parse benchmarks: it is exactly the work the file source does per line
 * minus reading and emission.
 */
uint64_t sl_json_dec_lines(struct sl_json_dec *d, const char *buf, size_t len, void *rowbuf,
			   uint32_t cap, uint64_t *nerr);

struct sl_csv_opts {
	char delimiter;            /* 0 means ',' */
	bool header;               /* the first line is a header and is skipped */
	const char *null_literal;  /* an unquoted field equal to this is NULL; NULL: none */
};

/*
 * A CSV decoder: quoted fields may hold delimiters, newlines and doubled quotes (""). An empty
 * unquoted field is NULL for every type but STRING, where it is the empty string. A record
 * must have exactly as many fields as the schema. No allocation after create.
 */
struct sl_csv_dec;

/* Returns a decoder or NULL on ENOMEM; `schema` and `opts` strings are borrowed. */
struct sl_csv_dec *sl_csv_dec_create(const struct sl_schema *schema,
				     const struct sl_csv_opts *opts);
void sl_csv_dec_destroy(struct sl_csv_dec *d);

/* Decodes one record (without its line terminator) into a row in buf. Returns the row or
 * NULL with a reason in why[SL_FMT_WHY_MAX]. Hot path. */
const struct sl_row *sl_csv_dec_row(struct sl_csv_dec *d, const char *rec, size_t len,
				    void *buf, uint32_t cap, char *why);

/* Returns the length of the first CSV record in buf[0..len) including its '\n' (a newline
 * inside quotes does not end it), or 0 if the record is not complete in the buffer. */
size_t sl_csv_record_len(const char *buf, size_t len);

/*
 * Writes `r` as one JSON object and a '\n' into buf: keys are field names, NULL is null,
 * TIMESTAMP is 'YYYY-MM-DD HH:MM:SS.fff' text (Flink's SQL timestamp format), non-finite
 * DOUBLEs are the strings "NaN", "Infinity", "-Infinity" (what Jackson writes), strings are
 * escaped per RFC 8259. Returns the bytes written, or -ENOSPC if `cap` is too small (buf
 * content is then undefined). Hot path: no formatting library calls.
 */
int sl_json_write_row(const struct sl_row *r, const struct sl_schema *s, char *buf, size_t cap);

/* ---- sources -------------------------------------------------------------------------- */

/* File source: one split per path, records read with large buffered reads. An undecodable
 * record goes to the dead-letter output as "path:LINE" and reading continues. */
struct sl_file_source_cfg {
	const char *const *paths;       /* npaths files, borrowed */
	int npaths;
	enum sl_format format;
	struct sl_csv_opts csv;         /* SL_FORMAT_CSV */
	const struct sl_schema *schema; /* rows are built for this schema, borrowed */
	uint32_t read_bytes;            /* read size; 0: 1 MiB */
};

enum sl_gen_kind {
	SL_GEN_RANDOM = 0,   /* uniform in [min, max] (DOUBLE: [min, max)); STRING: random
			      * alphanumeric text of `length` chars; BOOL: fair coin */
	SL_GEN_SEQUENCE,     /* start, start+1, ... end; the range is dealt over the splits
			      * (split s gets start+s, start+s+n, ...); its end ends the source */
	SL_GEN_EVENT_TIME,   /* TIMESTAMP or BIGINT: base_ts + i * step_ms for the i-th record
			      * of the source, minus a uniform 0..max_disorder_ms, and for a
			      * late_fraction of records minus a further late_ms */
};

struct sl_datagen_field {
	enum sl_gen_kind kind;
	int64_t start, end;       /* SEQUENCE, inclusive; STRING fields get the decimal text */
	int64_t min, max;         /* RANDOM numbers, TIMESTAMPs (ms); both 0: the INT range,
				   * [0, 1) for DOUBLE, [0, 2^62) for BIGINT, 1970..2099 for
				   * TIMESTAMP */
	uint32_t length;          /* RANDOM STRING length; 0: 10 (capped at 1024) */
	sl_ts_t base_ts;          /* EVENT_TIME */
	sl_ts_t step_ms;
	sl_ts_t max_disorder_ms;
	double late_fraction;     /* 0..1 */
	sl_ts_t late_ms;
};

/*
 * Datagen source: deterministic per (seed, split), so two runs with the same cfg produce
 * the same rows on every split. Record i of the source (0-based, counted over all splits)
 * is produced by split i mod nsplits.
 */
struct sl_datagen_cfg {
	const struct sl_schema *schema;        /* borrowed */
	const struct sl_datagen_field *fields; /* one per schema field, borrowed */
	int64_t rows_per_second;               /* over all splits; 0: as fast as possible */
	int64_t number_of_rows;                /* over all splits; 0: unbounded (a SEQUENCE field
						* still ends the source at its end) */
	int nsplits;                           /* parallel generator streams; 0: 1 */
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
	int fd;                 /* output; 0 (unset) means stdout */
	const char *identifier; /* Flink's 'print-identifier'; NULL or "": none */
	bool subtask_prefix;    /* "N> " per shard when nshards > 1 (Flink's default) */
};

/* Blackhole sink: consumes rows. cfg may be NULL. */
struct sl_blackhole_sink_cfg {
	uint64_t *rows;         /* optional: each instance adds its row count here at flush */
};

/*
 * JSON-lines file sink. If `path` is a directory (or does not exist and the sink has more
 * than one shard, in which case it is created), shard k writes `<path>/part-<k>.jsonl`;
 * otherwise a single-shard sink writes `path` itself. Files are truncated at open, written in
 * large chunks, and flush() writes out everything buffered (visible, not fsynced).
 */
struct sl_jsonl_sink_cfg {
	const char *path;
};

extern const struct sl_sink_ops sl_print_sink_ops;
extern const struct sl_sink_ops sl_blackhole_sink_ops;
extern const struct sl_sink_ops sl_jsonl_sink_ops;

#ifdef __cplusplus
}
#endif
#endif
