/*
 * sql_options.c - WITH options of a SQL table to a configured connector (the options and
 * their meaning are listed in sql_options.h).
 *
 * `connectors[]` below is the one list of connectors: the planner binds every table through
 * it, and the messages for an unknown name or a wrong direction are made from it.
 *
 * Each connector reads the keys it knows with opt_take(), which marks them used, then
 * rejects the first option left unused (in the order written) as unknown, so a typo is
 * caught at plan time with its position. Keys the planner consumed (used on entry) are
 * never looked at. A connector's cfg and everything it points to (paths, field specs,
 * strings) live in one owned block freed by cfg_free, so the caller holds one pointer.
 *
 * Invariants: on error nothing stays allocated and *out is zeroed; messages are one line
 * "FILE:LINE:COL: ..." of at most errcap bytes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "file_partitions.h"
#include "format.h"
#include "kafka_sink.h"
#include "kafka_source.h"
#include "nexmark_source.h"
#include "sql_options.h"

/* The options of one table being configured, and where to report. */
struct optctx {
	struct sl_sql_conn_opt *opts;
	int n;
	const char *file;
	const char *conn;		  /* connector name, for messages */
	const struct sl_sql_conn_opt *at; /* the 'connector' option: position of "missing" */
	char *err;
	size_t errcap;
};

int sl_sql_conn_opt_vfail(char *err, size_t errcap, const char *file,
			  const struct sl_sql_conn_opt *o, const char *fmt, va_list ap)
{
	int n = snprintf(err, errcap, "%s:%u:%u: ", file ? file : "<sql>", o ? o->line : 1,
			 o ? o->col : 1);

	if (n >= 0 && (size_t)n < errcap)
		vsnprintf(err + n, errcap - (size_t)n, fmt, ap);
	return -EINVAL;
}

static int fail_at(struct optctx *c, const struct sl_sql_conn_opt *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct sl_sql_conn_opt *sl_sql_conn_opt_take(struct sl_sql_conn_opt *opts, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (!opts[i].used && strcmp(opts[i].key, key) == 0) {
			opts[i].used = true;
			return &opts[i];
		}
	return NULL;
}

static int fail_at(struct optctx *c, const struct sl_sql_conn_opt *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sl_sql_conn_opt_vfail(c->err, c->errcap, c->file, o, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int nomem(struct optctx *c)
{
	fail_at(c, c->at, "out of memory configuring connector '%s'", c->conn);
	return -ENOMEM;
}

/* Returns the unused option `key` (marking it used), or NULL. */
static struct sl_sql_conn_opt *opt_take(struct optctx *c, const char *key)
{
	return sl_sql_conn_opt_take(c->opts, c->n, key);
}

/* Fails on the first option left unused, listing `known`. */
static int check_unused(struct optctx *c, const char *known)
{
	for (int i = 0; i < c->n; i++)
		if (!c->opts[i].used)
			return fail_at(c, &c->opts[i],
				       "unknown option '%s' for connector '%s' (known: %s)",
				       c->opts[i].key, c->conn, known);
	return 0;
}

static int parse_bool(struct optctx *c, const struct sl_sql_conn_opt *o, bool *out)
{
	if (!strcasecmp(o->value, "true"))
		*out = true;
	else if (!strcasecmp(o->value, "false"))
		*out = false;
	else
		return fail_at(c, o, "option '%s': '%s' is not a boolean (true or false)", o->key,
			       o->value);
	return 0;
}

static int opt_bool(struct optctx *c, const char *key, bool *out)
{
	struct sl_sql_conn_opt *o = opt_take(c, key);

	return o ? parse_bool(c, o, out) : 0;
}

static int parse_i64(struct optctx *c, const struct sl_sql_conn_opt *o, int64_t lo, int64_t hi,
		     int64_t *out)
{
	if (sl_fmt_parse_i64(o->value, strlen(o->value), lo, hi, out) < 0)
		return fail_at(c, o, "option '%s': '%s' is not an integer in [%lld, %lld]", o->key,
			       o->value, (long long)lo, (long long)hi);
	return 0;
}

static int parse_f64(struct optctx *c, const struct sl_sql_conn_opt *o, double *out)
{
	if (sl_fmt_parse_f64(o->value, strlen(o->value), out) < 0 || *out != *out)
		return fail_at(c, o, "option '%s': '%s' is not a number", o->key, o->value);
	return 0;
}

static int parse_duration(struct optctx *c, const struct sl_sql_conn_opt *o, int64_t *ms)
{
	if (sl_sql_conn_parse_duration(o->value, ms) < 0)
		return fail_at(c, o,
			       "option '%s': '%s' is not a duration (e.g. '500 ms', '5 s', "
			       "'1 min')",
			       o->key, o->value);
	return 0;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

/* ---- filesystem ------------------------------------------------------------------------ */

#define FS_COMMON "path, format"
#define FS_JSON                                                                                    \
	"json.ignore-parse-errors, json.fail-on-missing-field, "                                   \
	"json.fail-on-decimal-overflow"
#define FS_DBZ                                                                                     \
	"debezium-json.schema-include, debezium-json.ignore-parse-errors, "                        \
	"debezium-json.fail-on-decimal-overflow"
#define FS_CSV                                                                                     \
	"csv.field-delimiter, csv.null-literal, csv.ignore-parse-errors, "                         \
	"csv.allow-comments, csv.fail-on-decimal-overflow"

struct fs_src {
	struct sl_file_source_cfg cfg; /* first: the pointer handed out */
	char **paths;
	int npaths;
	struct sl_file_range *ranges;
	char *null_lit;
	uint64_t skipped;
	/* PARTITIONED BY: the files' columns, the table's field map, and per file its
	 * partition values as text and as a row of the table (fs_partitioned) */
	struct sl_schema *phys;
	int *phys_map;
	char **values;
	int nvalues;
	struct sl_row **part_rows;
};

struct fs_sink {
	union {
		struct sl_jsonl_sink_cfg cfg;	/* first: unpartitioned */
		struct sl_fspart_sink_cfg pcfg; /* partitioned (pcfg.file is cfg) */
	};
	char *path;
	char *null_lit;
	char *default_name, *success_name, *pattern;
	int part[SL_SCHEMA_MAX_FIELDS];
	bool guarantee_given; /* sink.delivery-guarantee named: no default applies */
};

static void fs_src_free(void *p)
{
	struct fs_src *f = p;

	if (!f)
		return;
	sl_file_list_free(f->paths, f->npaths);
	free(f->ranges);
	free(f->null_lit);
	sl_schema_destroy(f->phys);
	free(f->phys_map);
	for (int i = 0; i < f->nvalues; i++)
		free(f->values[i]);
	free(f->values);
	for (int i = 0; f->part_rows && i < f->npaths; i++)
		free(f->part_rows[i]);
	free(f->part_rows);
	free(f);
}

static void fs_sink_free(void *p)
{
	struct fs_sink *f = p;

	if (!f)
		return;
	free(f->path);
	free(f->null_lit);
	free(f->default_name);
	free(f->success_name);
	free(f->pattern);
	free(f);
}

/* The format's own options, shared by source and sink. */
struct fs_fmt {
	enum sl_format format;
	bool ignore_errors, fail_missing, allow_comments, fail_overflow;
	char delim;
	const char *null_lit; /* borrowed from the option */
	const char *known;    /* for the unknown-option message */
};

static int fs_format(struct optctx *c, struct fs_fmt *f, bool sink)
{
	struct sl_sql_conn_opt *o = opt_take(c, "format"), *d;
	int rc = 0;
	bool include;

	memset(f, 0, sizeof(*f));
	if (!o)
		return fail_at(c, c->at,
			       "connector 'filesystem' needs option 'format' "
			       "(json, csv or debezium-json)");
	if (!strcmp(o->value, "json")) {
		f->format = SL_FORMAT_JSON;
		f->known = FS_COMMON ", " FS_JSON;
		rc = opt_bool(c, "json.ignore-parse-errors", &f->ignore_errors);
		if (!rc)
			rc = opt_bool(c, "json.fail-on-missing-field", &f->fail_missing);
		if (!rc)
			rc = opt_bool(c, "json.fail-on-decimal-overflow", &f->fail_overflow);
		if (!rc && f->ignore_errors && f->fail_missing)
			return fail_at(c, o,
				       "json.fail-on-missing-field and "
				       "json.ignore-parse-errors cannot both be true");
		return rc;
	}
	if (!strcmp(o->value, "debezium-json")) {
		if (sink)
			return fail_at(c, o,
				       "format 'debezium-json' is only supported for a "
				       "filesystem source (sinks write json or csv)");
		f->format = SL_FORMAT_DEBEZIUM_JSON;
		f->known = FS_COMMON ", " FS_DBZ;
		rc = opt_bool(c, "debezium-json.schema-include", &include);
		if (!rc)
			rc = opt_bool(c, "debezium-json.ignore-parse-errors", &f->ignore_errors);
		if (!rc)
			rc = opt_bool(c, "debezium-json.fail-on-decimal-overflow",
				      &f->fail_overflow);
		return rc;
	}
	if (!strcmp(o->value, "csv")) {
		f->format = SL_FORMAT_CSV;
		f->known = FS_COMMON ", " FS_CSV;
		f->delim = ',';
		if ((d = opt_take(c, "csv.field-delimiter"))) {
			if (!strcmp(d->value, "\\t"))
				f->delim = '\t';
			else if (strlen(d->value) == 1 && d->value[0] != '"' &&
				 d->value[0] != '\n' && d->value[0] != '\r')
				f->delim = d->value[0];
			else
				return fail_at(c, d,
					       "option 'csv.field-delimiter': '%s' is not a "
					       "single character",
					       d->value);
		}
		if ((d = opt_take(c, "csv.null-literal")))
			f->null_lit = d->value;
		rc = opt_bool(c, "csv.ignore-parse-errors", &f->ignore_errors);
		if (!rc)
			rc = opt_bool(c, "csv.allow-comments", &f->allow_comments);
		if (!rc)
			rc = opt_bool(c, "csv.fail-on-decimal-overflow", &f->fail_overflow);
		return rc;
	}
	return fail_at(c, o,
		       "option 'format': unknown format '%s' (known: json, csv, "
		       "debezium-json)",
		       o->value);
}

/*
 * A file is cut into splits of about 'source.split-size' bytes (sluice's option), so one
 * large file feeds every shard: 32 MiB by default, large enough that a split's own cost (a
 * read buffer, a decoder, a watermark) is noise, small enough that a 100 MB file feeds four
 * shards. '0' keeps one split per file.
 */
#define FS_SPLIT_DEFAULT ((size_t)32 << 20)

static int fs_split_size(struct optctx *c, size_t *bytes)
{
	struct sl_sql_conn_opt *o = opt_take(c, "source.split-size");

	*bytes = FS_SPLIT_DEFAULT;
	if (o && sl_sql_conn_parse_memory_size(o->value, bytes) < 0)
		return fail_at(c, o,
			       "option 'source.split-size': '%s' is not a memory size "
			       "(such as '32 mb' or '0' for one split per file)",
			       o->value);
	return 0;
}

/* What stands for NULL among a partition's values while they are parsed: an unquoted CSV
 * field no directory name can give (values are quoted). */
#define PART_NULL "\x01"

/* Partition i's values as one CSV record of quoted fields into buf; -E2BIG if too long. */
static int part_record(const struct fs_src *f, int npart, int i, char *buf, size_t cap, size_t *len)
{
	size_t n = 0;

	for (int k = 0; k < npart; k++) {
		const char *v = f->values[(size_t)i * (size_t)npart + (size_t)k];

		if (n + 3 >= cap)
			return -E2BIG;
		if (k)
			buf[n++] = ',';
		if (!v) {
			buf[n++] = PART_NULL[0];
			continue;
		}
		buf[n++] = '"';
		for (; *v; v++) {
			if (n + 3 >= cap)
				return -E2BIG;
			if (*v == '"')
				buf[n++] = '"';
			buf[n++] = *v;
		}
		buf[n++] = '"';
	}
	*len = n;
	return 0;
}

/*
 * A PARTITIONED BY table read back: its files under `root/c1=v1/...`, the columns the files
 * hold (every column but the partition ones, in order, as the partitioned sink and Flink
 * write them), and each file's partition values parsed once, here, into a row of the
 * table by the CSV decoder, so a value reads as its column's type exactly as a CSV field
 * would; a value that does not (an INT column's directory `n=x`) is an error naming the
 * directory.
 */
static int fs_partitioned(struct optctx *c, const struct sl_sql_conn_table *t,
			  const struct sl_sql_conn_opt *path, const char *def, struct fs_src *f)
{
	const struct sl_schema *ts = t->schema;
	int nf = sl_schema_nfields(ts), np = 0;
	const char *cols[SL_SCHEMA_MAX_FIELDS];
	struct sl_csv_opts po = { .null_literal = PART_NULL };
	struct sl_file_parts parts;
	struct sl_schema *ps = sl_schema_create();
	struct sl_csv_dec *dec = NULL;
	struct sl_error perr = { 0 };
	char *buf = malloc(SL_ROW_SCRATCH), rec[8192], why[SL_FMT_WHY_MAX];
	int rc = -ENOMEM;

	f->phys = sl_schema_create();
	f->phys_map = calloc((size_t)nf, sizeof(int));
	if (!ps || !buf || !f->phys || !f->phys_map)
		goto out;
	for (int j = 0; j < nf; j++) {
		bool part = false;

		for (int k = 0; k < t->npart; k++)
			part |= t->part[k] == j;
		f->phys_map[j] = part ? -1 : np++;
		if (!part && sl_schema_add_like(f->phys, sl_schema_name(ts, j), ts, j) < 0)
			goto out;
	}
	for (int k = 0; k < t->npart; k++) {
		cols[k] = sl_schema_name(ts, t->part[k]);
		if (sl_schema_add_like(ps, cols[k], ts, t->part[k]) < 0)
			goto out;
	}
	rc = sl_file_list_partitions(path->value, cols, t->npart, def, &parts, &perr);
	if (rc < 0) {
		rc = rc == -ENOMEM ? nomem(c) : fail_at(c, path, "option 'path': %s", perr.msg);
		goto out;
	}
	f->paths = parts.paths;
	f->npaths = parts.n;
	f->values = parts.values;
	f->nvalues = parts.n * t->npart;
	rc = -ENOMEM;
	if (!(dec = sl_csv_dec_create(ps, &po)) ||
	    !(f->part_rows = calloc((size_t)(f->npaths ? f->npaths : 1), sizeof(*f->part_rows))))
		goto out;
	for (int i = 0; i < f->npaths; i++) {
		const struct sl_row *pr;
		struct sl_row_builder b;
		size_t len = sizeof rec;

		if (part_record(f, t->npart, i, rec, sizeof rec, &len) < 0 ||
		    !(pr = sl_csv_dec_row(dec, rec, len, buf + SL_ROW_SCRATCH / 2,
					  SL_ROW_SCRATCH / 2, why))) {
			const char *dir = f->paths[i];

			rc = fail_at(c, path,
				     "option 'path': the partition values of '%.*s' do not read "
				     "as the columns' types (%s)",
				     (int)(strrchr(dir, '/') - dir), dir,
				     len < sizeof rec ? why : "too long");
			goto out;
		}
		sl_rowb_init(&b, buf, SL_ROW_SCRATCH / 2, nf);
		for (int j = 0, k = 0; j < nf; j++) {
			if (f->phys_map[j] >= 0) {
				sl_rowb_set_null(&b, j);
				continue;
			}
			for (k = 0; t->part[k] != j; k++)
				;
			sl_rowb_copy_field(&b, j, pr, k, sl_schema_type(ts, j));
		}
		if (!(pr = sl_rowb_finish(&b)) || !(f->part_rows[i] = malloc(pr->size)))
			goto out;
		memcpy(f->part_rows[i], pr, pr->size);
	}
	f->cfg.table = ts;
	f->cfg.phys = f->phys_map;
	f->cfg.part_rows = (const struct sl_row *const *)f->part_rows;
	rc = 0;
out:
	if (rc == -ENOMEM)
		rc = nomem(c);
	sl_csv_dec_destroy(dec);
	sl_schema_destroy(ps);
	free(buf);
	return rc;
}

static int fs_source(struct optctx *c, const struct sl_sql_conn_table *t, struct sl_sql_conn *out)
{
	struct sl_sql_conn_opt *path = opt_take(c, "path"), *mon, *def;
	struct sl_error perr;
	struct fs_fmt fmt;
	struct fs_src *f;
	bool oom = false;
	size_t split;
	char known[256];
	int rc;

	if ((mon = opt_take(c, "source.monitor-interval")))
		return fail_at(c, mon,
			       "option 'source.monitor-interval' is not supported: "
			       "sluice reads a filesystem source once (bounded), it does not "
			       "watch the folder for new files");
	if (!path)
		return fail_at(c, c->at, "connector 'filesystem' needs option 'path'");
	if ((rc = fs_format(c, &fmt, false)) < 0)
		return rc;
	if ((rc = fs_split_size(c, &split)) < 0)
		return rc;
	if ((def = opt_take(c, "partition.default-name")) && !t->npart)
		return fail_at(c, def,
			       "option 'partition.default-name' is for a PARTITIONED BY "
			       "table");
	snprintf(known, sizeof known, "%s, source.split-size%s", fmt.known,
		 t->npart ? ", partition.default-name" : "");
	if ((rc = check_unused(c, known)) < 0)
		return rc;
	f = calloc(1, sizeof(*f));
	if (!f)
		return nomem(c);
	if (t->npart) {
		rc = fs_partitioned(c, t, path, def ? def->value : "__DEFAULT_PARTITION__", f);
		if (rc < 0) {
			fs_src_free(f);
			return rc;
		}
	} else {
		rc = sl_file_list_dir(path->value, &f->paths, &f->npaths);
	}
	if (rc < 0) {
		fs_src_free(f);
		if (rc == -ENOMEM)
			return nomem(c);
		return fail_at(c, path, "option 'path': cannot list '%s': %s", path->value,
			       strerror(-rc));
	}
	f->null_lit = dup_or_null(fmt.null_lit, &oom);
	if (oom) {
		fs_src_free(f);
		return nomem(c);
	}
	f->cfg.paths = (const char *const *)f->paths;
	f->cfg.npaths = f->npaths;
	f->cfg.format = fmt.format;
	f->cfg.csv.delimiter = fmt.delim;
	f->cfg.csv.null_literal = f->null_lit;
	f->cfg.schema = f->phys ? f->phys : t->schema;
	f->cfg.ignore_parse_errors = fmt.ignore_errors;
	f->cfg.skipped = &f->skipped;
	f->cfg.json_fail_on_missing = fmt.fail_missing;
	f->cfg.csv_allow_comments = fmt.allow_comments;
	f->cfg.fail_on_decimal_overflow = fmt.fail_overflow;
	rc = sl_file_plan_ranges(&f->cfg, split, &f->ranges, &f->cfg.nranges, &perr);
	if (rc < 0) {
		fs_src_free(f);
		if (rc == -ENOMEM)
			return nomem(c);
		return fail_at(c, path, "option 'path': %s", perr.msg);
	}
	f->cfg.ranges = f->ranges;
	out->src_ops = &sl_file_source_ops;
	out->cfg = f;
	out->cfg_free = fs_src_free;
	out->changelog = fmt.format == SL_FORMAT_DEBEZIUM_JSON;
	out->skipped = &f->skipped;
	return 0;
}

#define FS_ROLL                                                                                    \
	"sink.rolling-policy.file-size, sink.rolling-policy.rollover-interval, "                   \
	"sink.rolling-policy.check-interval, sink.rolling-policy.inactivity-interval"
#define FS_PART                                                                                    \
	"partition.default-name, sink.partition-commit.trigger, sink.partition-commit.delay, "     \
	"sink.partition-commit.policy.kind, sink.partition-commit.success-file.name, "             \
	"sink.partition-commit.watermark-time-zone, partition.time-extractor.kind, "               \
	"partition.time-extractor.timestamp-pattern"

/* A duration option into *ms (left alone when the option is absent). */
static int opt_duration(struct optctx *c, const char *key, int64_t *ms)
{
	struct sl_sql_conn_opt *o = opt_take(c, key);

	if (o && (sl_sql_conn_parse_duration(o->value, ms) < 0 || *ms < 0))
		return fail_at(c, o, "option '%s': '%s' is not a duration (such as '30 min')", key,
			       o->value);
	return 0;
}

/*
 * Flink's rolling policy. file-size (128 MB) ends a part file past that size;
 * rollover-interval (30 min) ends one open that long, inactivity-interval (30 min) closes a
 * partition without rows that long, both looked at every check-interval (1 min). sluice
 * also ends every part file at each checkpoint, as Flink's row formats do.
 */
static int fs_rolling(struct optctx *c, struct fs_sink *f)
{
	struct sl_sql_conn_opt *o = opt_take(c, "sink.rolling-policy.file-size");
	size_t bytes = (size_t)128 << 20;
	int rc;

	if (o && (sl_sql_conn_parse_memory_size(o->value, &bytes) < 0 || !bytes))
		return fail_at(c, o,
			       "option 'sink.rolling-policy.file-size': '%s' is not a memory "
			       "size (such as '128 mb')",
			       o->value);
	f->cfg.roll_bytes = bytes;
	f->pcfg.rollover_ms = f->pcfg.inactivity_ms = 30 * 60000;
	f->pcfg.check_ms = 60000;
	if ((rc = opt_duration(c, "sink.rolling-policy.rollover-interval", &f->pcfg.rollover_ms)) <
		    0 ||
	    (rc = opt_duration(c, "sink.rolling-policy.check-interval", &f->pcfg.check_ms)) < 0 ||
	    (rc = opt_duration(c, "sink.rolling-policy.inactivity-interval",
			       &f->pcfg.inactivity_ms)) < 0)
		return rc;
	return 0;
}

/* Partition commit (Flink's 'Partition Commit'): trigger, delay, policy, time extractor. */
static int fs_partitions(struct optctx *c, const struct sl_sql_conn_table *t, struct fs_sink *f)
{
	struct sl_sql_conn_opt *o;
	bool oom = false;
	int rc;

	for (int i = 0; i < t->npart; i++)
		f->part[i] = t->part[i];
	f->pcfg.part = f->part;
	f->pcfg.npart = t->npart;
	if ((o = opt_take(c, "partition.default-name")))
		f->default_name = dup_or_null(o->value, &oom);
	if ((o = opt_take(c, "sink.partition-commit.trigger"))) {
		if (!strcmp(o->value, "partition-time"))
			f->pcfg.partition_time = true;
		else if (strcmp(o->value, "process-time"))
			return fail_at(c, o,
				       "option 'sink.partition-commit.trigger': '%s' is not "
				       "'process-time' or 'partition-time'",
				       o->value);
	}
	if ((rc = opt_duration(c, "sink.partition-commit.delay", &f->pcfg.delay_ms)) < 0)
		return rc;
	if ((o = opt_take(c, "sink.partition-commit.policy.kind"))) {
		for (const char *k = o->value; *k;) {
			size_t n = strcspn(k, ",");
			char kind[64];

			snprintf(kind, sizeof kind, "%.*s", (int)n, k);
			if (!strcmp(kind, "success-file"))
				f->pcfg.success_file = true;
			else if (!strcmp(kind, "metastore"))
				return fail_at(c, o,
					       "option 'sink.partition-commit.policy.kind': "
					       "'metastore' needs a Hive metastore, which a "
					       "filesystem table does not have (use "
					       "'success-file')");
			else if (!strcmp(kind, "custom"))
				return fail_at(c, o,
					       "option 'sink.partition-commit.policy.kind': "
					       "'custom' runs a Java class; sluice cannot (use "
					       "'success-file')");
			else
				return fail_at(c, o,
					       "option 'sink.partition-commit.policy.kind': "
					       "unknown policy '%s' (known: success-file)",
					       kind);
			k += n + (k[n] == ',');
		}
	}
	if ((o = opt_take(c, "sink.partition-commit.success-file.name"))) {
		if (!o->value[0] || strchr(o->value, '/') || o->value[0] == '.')
			return fail_at(c, o,
				       "option 'sink.partition-commit.success-file.name': '%s' "
				       "is not a plain file name",
				       o->value);
		f->success_name = dup_or_null(o->value, &oom);
	}
	if ((o = opt_take(c, "sink.partition-commit.watermark-time-zone")) &&
	    strcmp(o->value, "UTC"))
		return fail_at(c, o,
			       "option 'sink.partition-commit.watermark-time-zone': only 'UTC' "
			       "(partition times are read as UTC) is supported, not '%s'",
			       o->value);
	if ((o = opt_take(c, "partition.time-extractor.kind")) && strcmp(o->value, "default"))
		return fail_at(c, o,
			       "option 'partition.time-extractor.kind': only 'default' is "
			       "supported ('custom' runs a Java class)");
	if ((o = opt_take(c, "partition.time-extractor.timestamp-pattern")))
		f->pattern = dup_or_null(o->value, &oom);
	if (oom)
		return nomem(c);
	if (getrandom(&f->pcfg.run, sizeof f->pcfg.run, 0) != sizeof f->pcfg.run)
		f->pcfg.run = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	f->pcfg.default_name = f->default_name;
	f->pcfg.success_name = f->success_name;
	f->pcfg.time_pattern = f->pattern;
	return 0;
}

static int fs_sink(struct optctx *c, const struct sl_sql_conn_table *t, struct sl_sql_conn *out)
{
	struct sl_sql_conn_opt *path = opt_take(c, "path");
	struct sl_sql_conn_opt *dg = opt_take(c, "sink.delivery-guarantee");
	bool oom = false, eos = false;
	struct fs_fmt fmt;
	struct fs_sink *f;
	char known[768];
	int rc;

	if (!path)
		return fail_at(c, c->at, "connector 'filesystem' needs option 'path'");
	/* exactly-once commits part files at checkpoints (the default when the job takes
	 * checkpoints, see sl_sql_conn_checkpointing()); at-least-once keeps the plain
	 * part files visible at once */
	if (dg && !strcmp(dg->value, "exactly-once"))
		eos = true;
	else if (dg && strcmp(dg->value, "at-least-once"))
		return fail_at(c, dg,
			       "option 'sink.delivery-guarantee': '%s' is not "
			       "'exactly-once' or 'at-least-once'",
			       dg->value);
	if ((rc = fs_format(c, &fmt, true)) < 0)
		return rc;
	f = calloc(1, sizeof(*f));
	if (!f)
		return nomem(c);
	if ((rc = fs_rolling(c, f)) < 0 || (t->npart && (rc = fs_partitions(c, t, f)) < 0)) {
		fs_sink_free(f);
		return rc;
	}
	snprintf(known, sizeof known, "%s, sink.delivery-guarantee, %s%s", fmt.known,
		 t->npart ? FS_PART ", " : "", FS_ROLL);
	if ((rc = check_unused(c, known)) < 0) {
		fs_sink_free(f);
		return rc;
	}
	f->path = dup_or_null(path->value, &oom);
	f->null_lit = dup_or_null(fmt.null_lit, &oom);
	if (oom) {
		fs_sink_free(f);
		return nomem(c);
	}
	f->cfg.path = f->path;
	f->cfg.format = fmt.format;
	f->cfg.csv.delimiter = fmt.delim;
	f->cfg.csv.null_literal = f->null_lit;
	f->cfg.exactly_once = eos;
	f->guarantee_given = dg != NULL;
	out->sink_ops = t->npart ? &sl_fspart_sink_ops : &sl_jsonl_sink_ops;
	out->cfg = f;
	out->cfg_free = fs_sink_free;
	return 0;
}

/* ---- datagen --------------------------------------------------------------------------- */

#define DG_KNOWN                                                                                   \
	"rows-per-second, number-of-rows, seed, fields.<field>.kind|min|max|"                      \
	"max-past|length|start|end|step|max-disorder|late-fraction|late-by"

struct dg_src {
	struct sl_datagen_cfg cfg; /* first */
	struct sl_datagen_field fields[SL_SCHEMA_MAX_FIELDS];
};

/* Which field attributes apply to which kind. */
enum { K_RANDOM = 1, K_SEQ = 2, K_ET = 4 };

static const struct {
	const char *name;
	unsigned kinds;
} dg_attrs[] = {
	{ "kind", K_RANDOM | K_SEQ | K_ET },
	{ "min", K_RANDOM },
	{ "max", K_RANDOM },
	{ "max-past", K_RANDOM },
	{ "length", K_RANDOM },
	{ "start", K_SEQ | K_ET },
	{ "end", K_SEQ },
	{ "step", K_ET },
	{ "max-disorder", K_ET },
	{ "late-fraction", K_ET },
	{ "late-by", K_ET },
};

/* A bound for field i of type t: its unscaled/ms/days value. */
static int dg_bound(struct optctx *c, const struct sl_sql_conn_opt *o, const struct sl_schema *s,
		    int i, int64_t *v, double *d)
{
	enum sl_type t = sl_schema_type(s, i);
	size_t len = strlen(o->value);

	switch (t) {
	case SL_TYPE_DOUBLE:
	case SL_TYPE_FLOAT:
		return parse_f64(c, o, d);
	case SL_TYPE_DECIMAL:
		if (sl_fmt_parse_dec(o->value, len, sl_schema_precision(s, i),
				     sl_schema_scale(s, i), v) < 0)
			return fail_at(c, o, "option '%s': '%s' is not a DECIMAL(%d, %d)", o->key,
				       o->value, sl_schema_precision(s, i), sl_schema_scale(s, i));
		return 0;
	case SL_TYPE_DATE:
		if (sl_fmt_parse_date(o->value, len, v) < 0)
			return fail_at(c, o, "option '%s': '%s' is not a date 'YYYY-MM-DD'", o->key,
				       o->value);
		return 0;
	case SL_TYPE_TIMESTAMP:
	case SL_TYPE_TIMESTAMP_LTZ:
		if (sl_fmt_parse_i64(o->value, len, INT64_MIN, INT64_MAX, v) < 0 &&
		    sl_fmt_parse_ts(o->value, len, v) < 0)
			return fail_at(c, o,
				       "option '%s': '%s' is not a timestamp "
				       "('YYYY-MM-DD HH:MM:SS[.fff]' or epoch ms)",
				       o->key, o->value);
		return 0;
	case SL_TYPE_INT:
		return parse_i64(c, o, INT32_MIN, INT32_MAX, v);
	default:
		return parse_i64(c, o, INT64_MIN, INT64_MAX, v);
	}
}

/* Splits "fields.<name>.<attr>" against the schema: returns the field index and sets *attr,
 * or -1 with err filled. */
static int dg_field_of(struct optctx *c, const struct sl_sql_conn_opt *o, const struct sl_schema *s,
		       int *attr)
{
	const char *name = o->key + 7, *dot = strrchr(o->key, '.');
	char fname[256];
	size_t len;
	int i;

	if (dot <= name) {
		fail_at(c, o, "unknown option '%s' for connector 'datagen' (known: %s)", o->key,
			DG_KNOWN);
		return -1;
	}
	len = (size_t)(dot - name);
	for (*attr = 0; *attr < (int)(sizeof dg_attrs / sizeof dg_attrs[0]); (*attr)++)
		if (!strcmp(dot + 1, dg_attrs[*attr].name))
			break;
	if (*attr == (int)(sizeof dg_attrs / sizeof dg_attrs[0])) {
		fail_at(c, o, "unknown option '%s' for connector 'datagen' (known: %s)", o->key,
			DG_KNOWN);
		return -1;
	}
	if (len >= sizeof fname)
		len = sizeof fname - 1;
	memcpy(fname, name, len);
	fname[len] = '\0';
	i = sl_schema_find(s, fname);
	if (i < 0)
		fail_at(c, o, "option '%s': the table has no column '%s'", o->key, fname);
	return i;
}

static int dg_kind(struct optctx *c, const struct sl_sql_conn_opt *o, enum sl_gen_kind *k,
		   unsigned *mask)
{
	if (!strcmp(o->value, "random")) {
		*k = SL_GEN_RANDOM;
		*mask = K_RANDOM;
	} else if (!strcmp(o->value, "sequence")) {
		*k = SL_GEN_SEQUENCE;
		*mask = K_SEQ;
	} else if (!strcmp(o->value, "event-time")) {
		*k = SL_GEN_EVENT_TIME;
		*mask = K_ET;
	} else {
		return fail_at(c, o,
			       "option '%s': unknown kind '%s' (known: random, sequence, "
			       "event-time)",
			       o->key, o->value);
	}
	return 0;
}

/* Applies one field attribute (the kind is already set). */
static int dg_attr(struct optctx *c, const struct sl_sql_conn_opt *o, const struct sl_schema *s,
		   int i, const char *attr, struct sl_datagen_field *f)
{
	int64_t v = 0, now;
	double d = 0;
	int rc = 0;

	if (!strcmp(attr, "min") || !strcmp(attr, "max")) {
		rc = dg_bound(c, o, s, i, &v, &d);
		if (attr[1] == 'i') {
			f->min = v;
			f->dmin = d;
		} else {
			f->max = v;
			f->dmax = d;
		}
	} else if (!strcmp(attr, "max-past")) {
		if (sl_schema_type(s, i) != SL_TYPE_TIMESTAMP &&
		    sl_schema_type(s, i) != SL_TYPE_TIMESTAMP_LTZ)
			return fail_at(c, o, "option '%s' needs a TIMESTAMP column", o->key);
		rc = parse_duration(c, o, &v);
		now = (int64_t)time(NULL) * 1000;
		f->min = now - v;
		f->max = now;
	} else if (!strcmp(attr, "length")) {
		rc = parse_i64(c, o, 1, 1024, &v);
		f->length = (uint32_t)v;
	} else if (!strcmp(attr, "start")) {
		if (f->kind == SL_GEN_EVENT_TIME) {
			size_t len = strlen(o->value);

			if (sl_fmt_parse_i64(o->value, len, INT64_MIN, INT64_MAX, &v) < 0 &&
			    sl_fmt_parse_ts(o->value, len, &v) < 0)
				return fail_at(c, o, "option '%s': '%s' is not a timestamp", o->key,
					       o->value);
			f->base_ts = v;
		} else {
			rc = parse_i64(c, o, INT64_MIN, INT64_MAX, &f->start);
		}
	} else if (!strcmp(attr, "end")) {
		rc = parse_i64(c, o, INT64_MIN, INT64_MAX, &f->end);
	} else if (!strcmp(attr, "step")) {
		rc = parse_duration(c, o, &f->step_ms);
	} else if (!strcmp(attr, "max-disorder")) {
		rc = parse_duration(c, o, &f->max_disorder_ms);
	} else if (!strcmp(attr, "late-by")) {
		rc = parse_duration(c, o, &f->late_ms);
	} else if (!strcmp(attr, "late-fraction")) {
		rc = parse_f64(c, o, &f->late_fraction);
		if (!rc && !(f->late_fraction >= 0 && f->late_fraction <= 1))
			return fail_at(c, o, "option '%s': %s is not in [0, 1]", o->key, o->value);
	}
	return rc;
}

static int datagen_source(struct optctx *c, const struct sl_sql_conn_table *t,
			  struct sl_sql_conn *out)
{
	const struct sl_schema *schema = t->schema;
	int nf = sl_schema_nfields(schema), rc = 0;
	unsigned mask[SL_SCHEMA_MAX_FIELDS];
	bool has_start[SL_SCHEMA_MAX_FIELDS] = { 0 }, has_end[SL_SCHEMA_MAX_FIELDS] = { 0 };
	struct sl_sql_conn_opt *o;
	struct dg_src *g;
	int64_t v;

	g = calloc(1, sizeof(*g));
	if (!g)
		return nomem(c);
	g->cfg.schema = schema;
	g->cfg.fields = g->fields;
	g->cfg.rows_per_second = 10000; /* Flink's default */
	for (int i = 0; i < nf; i++) {
		mask[i] = K_RANDOM;
		g->fields[i].step_ms = 1000;
	}
	if ((o = opt_take(c, "rows-per-second")) && (rc = parse_i64(c, o, 0, INT64_MAX, &v)) == 0)
		g->cfg.rows_per_second = v;
	if (!rc && (o = opt_take(c, "number-of-rows")) &&
	    (rc = parse_i64(c, o, 0, INT64_MAX, &v)) == 0)
		g->cfg.number_of_rows = v;
	if (!rc && (o = opt_take(c, "seed")) && (rc = parse_i64(c, o, 0, INT64_MAX, &v)) == 0)
		g->cfg.seed = (uint64_t)v;
	/* kinds first: the other attributes are read according to them */
	for (int k = 0; !rc && k < c->n; k++) {
		int attr, i;

		o = &c->opts[k];
		if (o->used || strncmp(o->key, "fields.", 7))
			continue;
		if ((i = dg_field_of(c, o, schema, &attr)) < 0) {
			rc = -EINVAL;
			break;
		}
		if (strcmp(dg_attrs[attr].name, "kind"))
			continue;
		o->used = true;
		rc = dg_kind(c, o, &g->fields[i].kind, &mask[i]);
	}
	for (int k = 0; !rc && k < c->n; k++) {
		int attr, i;

		o = &c->opts[k];
		if (o->used || strncmp(o->key, "fields.", 7))
			continue;
		if ((i = dg_field_of(c, o, schema, &attr)) < 0) {
			rc = -EINVAL;
			break;
		}
		o->used = true;
		if (!(dg_attrs[attr].kinds & mask[i])) {
			rc = fail_at(c, o, "option '%s' does not apply to a field of kind '%s'",
				     o->key,
				     mask[i] == K_RANDOM ? "random"
				     : mask[i] == K_SEQ	 ? "sequence"
							 : "event-time");
			break;
		}
		has_start[i] |= !strcmp(dg_attrs[attr].name, "start");
		has_end[i] |= !strcmp(dg_attrs[attr].name, "end");
		rc = dg_attr(c, o, schema, i, dg_attrs[attr].name, &g->fields[i]);
	}
	for (int i = 0; !rc && i < nf; i++)
		if (mask[i] == K_SEQ && (!has_start[i] || !has_end[i]))
			rc = fail_at(c, c->at,
				     "datagen field '%s' of kind 'sequence' needs "
				     "'fields.%s.start' and 'fields.%s.end'",
				     sl_schema_name(schema, i), sl_schema_name(schema, i),
				     sl_schema_name(schema, i));
	if (!rc)
		rc = check_unused(c, DG_KNOWN);
	if (!rc) {
		/* the generator's own checks (ranges against types), at plan time */
		struct sl_error e = { 0 };
		void *st = sl_datagen_source_ops.open(&g->cfg, 0, &e);

		if (st)
			sl_datagen_source_ops.close(st);
		else
			rc = fail_at(c, c->at, "%s", e.msg);
	}
	if (rc) {
		free(g);
		return rc;
	}
	/* as Flink runs a datagen source at the job's parallelism: one stream per shard */
	g->cfg.nsplits = t->nshards;
	out->src_ops = &sl_datagen_source_ops;
	out->cfg = g;
	out->cfg_free = free;
	return 0;
}

/* ---- nexmark --------------------------------------------------------------------------- */

#define NX_KNOWN                                                                                   \
	"first-event.rate, next-event.rate, events.num, person.proportion, "                       \
	"auction.proportion, bid.proportion, person.avg-size, auction.avg-size, bid.avg-size, "    \
	"bid.hot-ratio.auctions, bid.hot-ratio.bidders, auction.hot-ratio.sellers, "               \
	"max-emit-speed, seed, base-time, splits"

/* A row holds its strings in SL_ROW_SCRATCH bytes: padding up to 1.2 x avg-size plus the
 * other strings (under 300 bytes) must fit, so the average is bounded well below it. */
#define NX_MAX_AVG_SIZE 32768

/* 2015-07-15 00:00:00 UTC, Beam Nexmark's BASE_TIME: Flink's generator starts at the wall
 * clock of the job's creation, which no rerun can reproduce. */
#define NX_BASE_TIME_MS 1436918400000LL

struct nx_src {
	struct sl_nexmark_source_cfg cfg; /* first */
	enum sl_nexmark_col cols[SL_SCHEMA_MAX_FIELDS];
};

/* Options Flink's connector has that sluice's does not honour: refused by name, with why. */
static const struct {
	const char *key, *why;
} nx_refused[] = {
	{ "keep-alive", "the source ends after events.num events" },
	{ "stop-at", "the source ends after events.num events" },
	{ "rate.shape", "the rate is constant (first-event.rate)" },
	{ "rate.period", "the rate is constant (first-event.rate)" },
	{ "rate.limited", "use max-emit-speed = 'false' to pace at first-event.rate" },
};

static int nx_int(struct optctx *c, const char *key, int64_t lo, int64_t hi, int64_t *v)
{
	struct sl_sql_conn_opt *o = opt_take(c, key);

	return o ? parse_i64(c, o, lo, hi, v) : 0;
}

static int nx_size(struct optctx *c, const char *key, int32_t *v)
{
	struct sl_sql_conn_opt *o = opt_take(c, key);
	size_t bytes;

	if (!o)
		return 0;
	if (sl_sql_conn_parse_memory_size(o->value, &bytes) < 0 || bytes > NX_MAX_AVG_SIZE)
		return fail_at(c, o,
			       "option '%s': '%s' is not a size of at most %d bytes (e.g. '100b', "
			       "'1kb')",
			       o->key, o->value, NX_MAX_AVG_SIZE);
	*v = (int32_t)bytes;
	return 0;
}

static int nx_rates(struct optctx *c, struct sl_nexmark_cfg *g)
{
	struct sl_sql_conn_opt *o = opt_take(c, "first-event.rate"), *next;
	double next_rate;
	int rc;

	if (o && ((rc = parse_f64(c, o, &g->first_event_rate)) < 0))
		return rc;
	if (o && !(g->first_event_rate > 0 && g->first_event_rate <= 1e12))
		return fail_at(c, o, "option '%s': %s is not a rate in (0, 1e12] events/s", o->key,
			       o->value);
	next = opt_take(c, "next-event.rate");
	if (next && (rc = parse_f64(c, next, &next_rate)) < 0)
		return rc;
	if (next && next_rate != g->first_event_rate)
		return fail_at(c, next,
			       "option 'next-event.rate': %s differs from first-event.rate (%g); "
			       "only a constant rate is supported",
			       next->value, g->first_event_rate);
	return 0;
}

/* base-time: the timestamp of event number 0, as text or epoch ms. */
static int nx_base_time(struct optctx *c, int64_t *base)
{
	struct sl_sql_conn_opt *o = opt_take(c, "base-time");
	size_t len;

	if (!o)
		return 0;
	len = strlen(o->value);
	if (sl_fmt_parse_i64(o->value, len, INT64_MIN / 2, INT64_MAX / 2, base) == 0 ||
	    sl_fmt_parse_ts(o->value, len, base) == 0)
		return 0;
	return fail_at(c, o,
		       "option 'base-time': '%s' is not a timestamp ('YYYY-MM-DD HH:MM:SS[.fff]' "
		       "or epoch ms)",
		       o->value);
}

/* Every physical column must be one the generator fills, with a type that holds it. */
static int nx_columns(struct optctx *c, const struct sl_schema *s, struct nx_src *n)
{
	for (int i = 0; i < sl_schema_nfields(s); i++) {
		const char *name = sl_schema_name(s, i);
		int col = sl_nexmark_col_find(name);

		if (col < 0)
			return fail_at(c, c->at,
				       "connector 'nexmark': column '%s' is not a Nexmark field "
				       "(event_type, or person, auction, bid ROWs of the fields of "
				       "nexmark's ddl)",
				       name);
		if (!sl_nexmark_col_fits(col, sl_schema_type(s, i)))
			return fail_at(c, c->at,
				       "connector 'nexmark': column '%s' cannot be %s (event_type: "
				       "INT; ids, prices, category: BIGINT; text: STRING; times: "
				       "TIMESTAMP(3))",
				       name, sl_type_name(sl_schema_type(s, i)));
		n->cols[i] = col;
	}
	return 0;
}

static int nexmark_source(struct optctx *c, const struct sl_sql_conn_table *t,
			  struct sl_sql_conn *out)
{
	struct sl_nexmark_source_cfg *cfg;
	struct sl_sql_conn_opt *o;
	struct nx_src *n;
	bool max_speed = true;
	int64_t events = 0, splits = 8, seed = 0, base = NX_BASE_TIME_MS;
	int64_t prop[3], ratio[3];
	int rc = 0;

	for (size_t i = 0; i < sizeof nx_refused / sizeof nx_refused[0]; i++)
		if ((o = opt_take(c, nx_refused[i].key)))
			return fail_at(c, o, "option '%s' is not supported by sluice's nexmark: %s",
				       o->key, nx_refused[i].why);
	n = calloc(1, sizeof(*n));
	if (!n)
		return nomem(c);
	cfg = &n->cfg;
	sl_nexmark_cfg_default(&cfg->gen);
	prop[0] = cfg->gen.person_proportion;
	prop[1] = cfg->gen.auction_proportion;
	prop[2] = cfg->gen.bid_proportion;
	ratio[0] = cfg->gen.hot_auction_ratio;
	ratio[1] = cfg->gen.hot_bidder_ratio;
	ratio[2] = cfg->gen.hot_seller_ratio;
	rc = nx_rates(c, &cfg->gen);
	if (!rc)
		rc = nx_int(c, "events.num", 0, INT64_MAX, &events);
	if (!rc)
		rc = nx_int(c, "person.proportion", 0, 1000000, &prop[0]);
	if (!rc)
		rc = nx_int(c, "auction.proportion", 0, 1000000, &prop[1]);
	if (!rc)
		rc = nx_int(c, "bid.proportion", 0, 1000000, &prop[2]);
	if (!rc)
		rc = nx_size(c, "person.avg-size", &cfg->gen.person_avg_size);
	if (!rc)
		rc = nx_size(c, "auction.avg-size", &cfg->gen.auction_avg_size);
	if (!rc)
		rc = nx_size(c, "bid.avg-size", &cfg->gen.bid_avg_size);
	if (!rc)
		rc = nx_int(c, "bid.hot-ratio.auctions", 1, INT32_MAX, &ratio[0]);
	if (!rc)
		rc = nx_int(c, "bid.hot-ratio.bidders", 1, INT32_MAX, &ratio[1]);
	if (!rc)
		rc = nx_int(c, "auction.hot-ratio.sellers", 1, INT32_MAX, &ratio[2]);
	if (!rc)
		rc = opt_bool(c, "max-emit-speed", &max_speed);
	if (!rc)
		rc = nx_int(c, "seed", 0, INT64_MAX, &seed);
	if (!rc)
		rc = nx_int(c, "splits", 1, 4096, &splits);
	if (!rc)
		rc = nx_base_time(c, &base);
	if (!rc && prop[0] + prop[1] + prop[2] == 0)
		rc = fail_at(c, c->at, "connector 'nexmark': the three *.proportion are all 0");
	if (!rc)
		rc = check_unused(c, NX_KNOWN);
	if (!rc)
		rc = nx_columns(c, t->schema, n);
	if (rc) {
		free(n);
		return rc;
	}
	cfg->gen.person_proportion = prop[0];
	cfg->gen.auction_proportion = prop[1];
	cfg->gen.bid_proportion = prop[2];
	cfg->gen.hot_auction_ratio = (int32_t)ratio[0];
	cfg->gen.hot_bidder_ratio = (int32_t)ratio[1];
	cfg->gen.hot_seller_ratio = (int32_t)ratio[2];
	cfg->gen.seed = (uint64_t)seed;
	cfg->gen.base_time_ms = base;
	cfg->events = events ? (uint64_t)events : UINT64_MAX; /* 0: unbounded, as in Flink */
	cfg->nsplits = (int)splits;
	cfg->paced = !max_speed;
	cfg->nfields = sl_schema_nfields(t->schema);
	cfg->cols = n->cols;
	{
		/* the generator's own checks, at plan time */
		struct sl_error e = { 0 };
		void *st = sl_nexmark_source_ops.open(cfg, 0, &e);

		if (!st) {
			rc = fail_at(c, c->at, "%s", e.msg);
			free(n);
			return rc;
		}
		sl_nexmark_source_ops.close(st);
	}
	out->src_ops = &sl_nexmark_source_ops;
	out->cfg = n;
	out->cfg_free = free;
	return 0;
}

/* ---- print, blackhole ------------------------------------------------------------------ */

struct print_own {
	struct sl_print_sink_cfg cfg; /* first */
	char *ident;
};

static void print_free(void *p)
{
	struct print_own *po = p;

	if (!po)
		return;
	free(po->ident);
	free(po);
}

static int print_sink(struct optctx *c, const struct sl_sql_conn_table *t, struct sl_sql_conn *out)
{
	struct sl_sql_conn_opt *id = opt_take(c, "print-identifier"), *par;
	bool to_stderr = false;
	int64_t p = 0;
	struct print_own *po;
	bool oom = false;
	int rc;

	(void)t;
	if ((rc = opt_bool(c, "standard-error", &to_stderr)) < 0)
		return rc;
	if ((par = opt_take(c, "sink.parallelism")) && (rc = parse_i64(c, par, 1, 4096, &p)) < 0)
		return rc;
	if ((rc = check_unused(c, "print-identifier, standard-error, sink.parallelism")) < 0)
		return rc;
	po = calloc(1, sizeof(*po));
	if (!po)
		return nomem(c);
	po->ident = dup_or_null(id ? id->value : NULL, &oom);
	if (oom) {
		print_free(po);
		return nomem(c);
	}
	po->cfg.fd = to_stderr ? 2 : 1;
	po->cfg.identifier = po->ident;
	po->cfg.subtask_prefix = p != 1; /* one Flink subtask prints no "N> " */
	out->sink_ops = &sl_print_sink_ops;
	out->cfg = po;
	out->cfg_free = print_free;
	out->changelog = true; /* prints -U/+U/-D rows as they come */
	return 0;
}

static int blackhole_sink(struct optctx *c, const struct sl_sql_conn_table *t,
			  struct sl_sql_conn *out)
{
	int rc = check_unused(c, "(none)");

	(void)t;
	if (rc < 0)
		return rc;
	out->sink_ops = &sl_blackhole_sink_ops;
	out->changelog = true; /* drops every kind of row alike */
	return 0;
}

/* ---- kafka, upsert-kafka (sql_kafka.c, sql_kafka_sink.c) ------------------------------- */

static int kafka_source(struct optctx *c, const struct sl_sql_conn_table *t,
			struct sl_sql_conn *out)
{
	return sl_sql_conn_kafka_source(t->schema, t->opts, t->nopts, t->file, c->at, t->offline,
					out, c->err, c->errcap);
}

static int kafka_sink_of(struct optctx *c, const struct sl_sql_conn_table *t, bool upsert,
			 struct sl_sql_conn *out)
{
	return sl_sql_conn_kafka_sink(t->schema, t->opts, t->nopts, t->file, c->at, upsert, t->pk,
				      t->npk, t->checkpoint_interval_ms, out, c->err, c->errcap);
}

static int kafka_sink(struct optctx *c, const struct sl_sql_conn_table *t, struct sl_sql_conn *out)
{
	return kafka_sink_of(c, t, false, out);
}

static int upsert_kafka_sink(struct optctx *c, const struct sl_sql_conn_table *t,
			     struct sl_sql_conn *out)
{
	return kafka_sink_of(c, t, true, out);
}

/* ---- the connector table --------------------------------------------------------------- */

typedef int (*bind_fn)(struct optctx *c, const struct sl_sql_conn_table *t,
		       struct sl_sql_conn *out);

/* Every connector a SQL table can name, in the order messages list them. */
static const struct {
	const char *name;
	bind_fn source; /* NULL: cannot be read from */
	bind_fn sink;	/* NULL: cannot be written to */
} connectors[] = {
	{ "filesystem", fs_source, fs_sink },	     { "datagen", datagen_source, NULL },
	{ "nexmark", nexmark_source, NULL },	     { "kafka", kafka_source, kafka_sink },
	{ "upsert-kafka", NULL, upsert_kafka_sink }, { "print", NULL, print_sink },
	{ "blackhole", NULL, blackhole_sink },
};

#define NCONNECTORS (sizeof connectors / sizeof connectors[0])

/* ---- entry points ---------------------------------------------------------------------- */

static int setup(struct optctx *c, struct sl_sql_conn_opt *opts, int nopts, const char *file,
		 struct sl_sql_conn *out, char *err, size_t errcap)
{
	struct sl_sql_conn_opt *co;

	memset(out, 0, sizeof(*out));
	memset(c, 0, sizeof(*c));
	c->opts = opts;
	c->n = nopts;
	c->file = file;
	c->err = err;
	c->errcap = errcap;
	c->conn = "?";
	if (errcap)
		err[0] = '\0';
	co = opt_take(c, "connector");
	if (!co) {
		/* the position of the first option, if any, says which table */
		for (int i = 0; i < nopts; i++)
			if (!opts[i].used)
				return fail_at(c, &opts[i], "table needs a 'connector' option");
		return fail_at(c, nopts ? &opts[0] : NULL, "table needs a 'connector' option");
	}
	c->at = co;
	c->conn = co->value;
	return 0;
}

static int finish(int rc, struct sl_sql_conn *out)
{
	if (rc < 0)
		memset(out, 0, sizeof(*out));
	return rc;
}

/* Binds table t as a source or a sink through the connector its 'connector' names. */
static int bind(const struct sl_sql_conn_table *t, bool sink, struct sl_sql_conn *out, char *err,
		size_t errcap)
{
	struct optctx c;
	int rc = setup(&c, t->opts, t->nopts, t->file, out, err, errcap);
	char known[128];
	size_t n = 0;

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < NCONNECTORS; i++) {
		bind_fn fn = sink ? connectors[i].sink : connectors[i].source;

		if (strcmp(c.conn, connectors[i].name))
			continue;
		if (t->npart && !sink && fn && strcmp(c.conn, "filesystem"))
			return fail_at(&c, c.at,
				       "connector '%s' cannot read a PARTITIONED BY table "
				       "(the filesystem connector can)",
				       c.conn);
		/* Flink's blackhole takes partitions and ignores them; its print and Kafka
		 * sinks do not implement SupportsPartitioning */
		if (t->npart && fn && strcmp(c.conn, "filesystem") && strcmp(c.conn, "blackhole"))
			return fail_at(&c, c.at,
				       "connector '%s' cannot write a PARTITIONED BY table "
				       "(the filesystem connector can)",
				       c.conn);
		if (fn)
			return finish(fn(&c, t, out), out);
		return fail_at(&c, c.at,
			       sink ? "connector '%s' is a source: it cannot be written to"
				    : "connector '%s' is a sink: it cannot be read from",
			       c.conn);
	}
	known[0] = 0;
	for (size_t i = 0; i < NCONNECTORS && n < sizeof known; i++)
		n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "",
				      connectors[i].name);
	return fail_at(&c, c.at, "unknown connector '%s' (known: %s)", c.conn, known);
}

void sl_sql_conn_checkpointing(struct sl_sql_conn *c, bool on)
{
	struct fs_sink *f = c->cfg;

	/* Flink's FileSink commits its part files at checkpoints whenever checkpointing is
	 * on: a table that names no guarantee gets exactly that */
	if ((c->sink_ops == &sl_jsonl_sink_ops || c->sink_ops == &sl_fspart_sink_ops) && f &&
	    !f->guarantee_given)
		f->cfg.exactly_once = on;
}

int sl_sql_conn_bind_source(const struct sl_sql_conn_table *t, struct sl_sql_conn *out, char *err,
			    size_t errcap)
{
	return bind(t, false, out, err, errcap);
}

int sl_sql_conn_bind_sink(const struct sl_sql_conn_table *t, struct sl_sql_conn *out, char *err,
			  size_t errcap)
{
	return bind(t, true, out, err, errcap);
}

void sl_sql_conn_fini(struct sl_sql_conn *c)
{
	if (c && c->cfg && c->cfg_free)
		c->cfg_free(c->cfg);
	if (c)
		memset(c, 0, sizeof(*c));
}
