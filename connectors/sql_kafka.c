/*
 * sql_kafka.c - WITH options of a `'connector' = 'kafka'` table read as a source, mapped to
 * a struct sl_kafka_source_cfg (Flink's Kafka SQL connector options):
 *
 *   topic                           a topic, or a list 'a;b' (topics in name order, then
 *                                   partitions, are the splits)
 *   topic-pattern                   instead of topic: the topics whose whole name matches
 *                                   this (POSIX extended) regular expression at plan time
 *   properties.bootstrap.servers    required
 *   properties.group.id             start from / commit offsets for monitoring (default
 *                                   group id: sluice-<topic>, never committed to)
 *   properties.*                    passed to librdkafka as they are
 *   scan.startup.mode               group-offsets (default, as Flink) | earliest-offset |
 *                                   latest-offset | timestamp | specific-offsets
 *   scan.startup.timestamp-millis   with timestamp
 *   scan.startup.specific-offsets   'partition:0,offset:42;partition:1,offset:300'
 *   scan.bounded.mode               unbounded (default) | latest-offset | timestamp |
 *                                   specific-offsets: the split ends there (bounded job)
 *   scan.bounded.timestamp-millis, scan.bounded.specific-offsets
 *   format | value.format           json | csv | debezium-json | raw
 *   key.format                      json | csv | raw, with
 *   key.fields                      'a;b': columns read from the key (with
 *   value.fields-include            ALL (default: the value's win) | EXCEPT_KEY)
 *   json.ignore-parse-errors, json.fail-on-missing-field, debezium-json.schema-include,
 *   debezium-json.ignore-parse-errors, csv.field-delimiter, csv.null-literal,
 *   csv.ignore-parse-errors, *.fail-on-decimal-overflow
 *                                   as for the filesystem connector (also with a
 *                                   "value." prefix)
 *   sluice.metadata.<column>        timestamp | partition | offset | topic | timestamp-type:
 *                                   the column is filled from the message, as Flink's
 *                                   `col TYPE METADATA FROM 'timestamp'` (the planner maps
 *                                   METADATA columns to this option)
 *
 *   scan.topic-partition-discovery.interval
 *                                   how often to look for new partitions (and, with
 *                                   topic-pattern, new matching topics): default 5 min as
 *                                   Flink; '0' or negative: never; off when bounded. New
 *                                   ones are read from their earliest offset.
 *
 * The topics' partition counts are fetched here, at plan time (sl_kafka_source_prepare()):
 * the broker must be reachable when the job is planned. Partitions found later are added
 * by the coordinator while the job runs (kafka_source.c, discover), and a restore numbers
 * the splits as its checkpoint did.
 *
 * Errors are one line "FILE:LINE:COL: ..." naming the option, as in sql_options.c; the
 * option helpers are repeated here in small because sql_options.c keeps its own static.
 * Everything a table can get wrong is checked here, at plan time and also offline
 * (EXPLAIN), including the columns against the formats and metadata keys: the source's
 * runtime (kafka_source.c) takes the cfg as valid.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format.h"
#include "kafka_props.h"
#include "kafka_source.h"
#include "sql_options.h"

#define KNOWN                                                                                      \
	"topic, topic-pattern, properties.bootstrap.servers, properties.group.id, properties.*, "  \
	"scan.startup.mode, scan.startup.timestamp-millis, "                                       \
	"scan.startup.specific-offsets, scan.bounded.mode, "                                       \
	"scan.bounded.timestamp-millis, scan.bounded.specific-offsets, "                           \
	"scan.topic-partition-discovery.interval, format, "                                        \
	"value.format, key.format, key.fields, value.fields-include, json.*, "                     \
	"debezium-json.*, csv.*, sluice.metadata.<column>"

#define MAX_OFFSETS 4096
/* Flink's default for scan.topic-partition-discovery.interval (its new Kafka source) */
#define DEFAULT_DISCOVERY_MS (5 * 60 * 1000)

struct kctx {
	struct sl_sql_conn_opt *opts;
	int n;
	const char *file;
	const struct sl_sql_conn_opt *at;
	char *err;
	size_t errcap;
	bool offline; /* do not ask the cluster (explain, fuzzing) */
	/* where messages about the columns point: the value's and key's format option, and
	 * the option of each metadata column (cfg.meta[i]) */
	const struct sl_sql_conn_opt *value_format, *key_format;
	const struct sl_sql_conn_opt *meta_opt[SL_KAFKA_MAX_META];
};

/* The cfg and everything it points to, freed as one (cfg first: the pointer handed out). */
struct kafka_own {
	struct sl_kafka_source_cfg cfg;
	char *topic_text; /* 'topic' (a list split in place) or 'topic-pattern' */
	const char **topics;
	char **keys, **vals;
	int nprops;
	int key_fields[SL_SCHEMA_MAX_FIELDS];
	struct sl_kafka_offset *specific, *bounded;
	char *null_lit;
	uint64_t skipped;
};

static int fail(struct kctx *c, const struct sl_sql_conn_opt *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct kctx *c, const struct sl_sql_conn_opt *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sl_sql_conn_opt_vfail(c->err, c->errcap, c->file, o ? o : c->at, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static struct sl_sql_conn_opt *take(struct kctx *c, const char *key)
{
	return sl_sql_conn_opt_take(c->opts, c->n, key);
}

/* "json.x" or "value.json.x" */
static struct sl_sql_conn_opt *take_fmt(struct kctx *c, const char *key)
{
	char vk[128];
	struct sl_sql_conn_opt *o = take(c, key);

	snprintf(vk, sizeof vk, "value.%s", key);
	return o ? o : take(c, vk);
}

static int take_bool(struct kctx *c, const char *key, bool *out)
{
	struct sl_sql_conn_opt *o = take_fmt(c, key);

	if (!o)
		return 0;
	if (!strcasecmp(o->value, "true"))
		*out = true;
	else if (!strcasecmp(o->value, "false"))
		*out = false;
	else
		return fail(c, o, "option '%s': '%s' is not a boolean (true or false)", o->key,
			    o->value);
	return 0;
}

static int take_i64(struct kctx *c, const char *key, int64_t *out, bool *given)
{
	struct sl_sql_conn_opt *o = take(c, key);

	if (given)
		*given = o != NULL;
	if (o && sl_fmt_parse_i64(o->value, strlen(o->value), 0, INT64_MAX, out) < 0)
		return fail(c, o, "option '%s': '%s' is not a non-negative integer", o->key,
			    o->value);
	return 0;
}

static void own_free(void *p)
{
	struct kafka_own *k = p;

	if (!k)
		return;
	for (int i = 0; i < k->nprops; i++) {
		free(k->keys[i]);
		free(k->vals[i]);
	}
	free(k->keys);
	free(k->vals);
	sl_kafka_source_cfg_fini(&k->cfg);
	free(k->topic_text);
	free(k->topics);
	free(k->specific);
	free(k->bounded);
	free(k->null_lit);
	free(k);
}

static int parse_format(struct kctx *c, const struct sl_sql_conn_opt *o, bool key,
			enum sl_kafka_format *out)
{
	static const struct {
		const char *name;
		enum sl_kafka_format fmt;
	} fmts[] = {
		{ "json", SL_KAFKA_FMT_JSON },
		{ "csv", SL_KAFKA_FMT_CSV },
		{ "debezium-json", SL_KAFKA_FMT_DEBEZIUM_JSON },
		{ "raw", SL_KAFKA_FMT_RAW },
	};

	for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++)
		if (!strcmp(o->value, fmts[i].name)) {
			if (key && fmts[i].fmt == SL_KAFKA_FMT_DEBEZIUM_JSON)
				break;
			*out = fmts[i].fmt;
			return 0;
		}
	return fail(c, o, "option '%s': unknown format '%s' (known: json, csv, %sraw)", o->key,
		    o->value, key ? "" : "debezium-json, ");
}

/* 'partition:0,offset:42;partition:1,offset:300' */
static int parse_offsets(struct kctx *c, const struct sl_sql_conn_opt *o,
			 struct sl_kafka_offset **out, int *nout)
{
	const char *p = o->value;
	struct sl_kafka_offset *v = calloc(MAX_OFFSETS, sizeof(*v));
	int n = 0;

	if (!v)
		return -ENOMEM;
	while (*p) {
		long long part, off;
		int used = 0;

		if (n == MAX_OFFSETS ||
		    sscanf(p, " partition : %lld , offset : %lld %n", &part, &off, &used) != 2 ||
		    !used || part < 0 || part > INT32_MAX || off < 0) {
			free(v);
			return fail(c, o,
				    "option '%s': '%s' is not "
				    "'partition:P,offset:O[;partition:P,offset:O]...'",
				    o->key, o->value);
		}
		v[n].partition = (int32_t)part;
		v[n++].offset = off;
		p += used;
		if (*p == ';')
			p++;
		else if (*p) {
			free(v);
			return fail(c, o, "option '%s': expected ';' after entry %d in '%s'",
				    o->key, n, o->value);
		}
	}
	*out = v;
	*nout = n;
	return 0;
}

static int parse_mode(struct kctx *c, struct kafka_own *k)
{
	struct sl_sql_conn_opt *sm = take(c, "scan.startup.mode"),
			       *bm = take(c, "scan.bounded.mode");
	struct sl_sql_conn_opt *so = take(c, "scan.startup.specific-offsets");
	struct sl_sql_conn_opt *bo = take(c, "scan.bounded.specific-offsets");
	bool sts = false, bts = false;
	int rc;

	if ((rc = take_i64(c, "scan.startup.timestamp-millis", &k->cfg.startup_ts_ms, &sts)) ||
	    (rc = take_i64(c, "scan.bounded.timestamp-millis", &k->cfg.bounded_ts_ms, &bts)))
		return rc;
	if (sm) {
		const char *v = sm->value;

		if (!strcmp(v, "earliest-offset"))
			k->cfg.startup = SL_KAFKA_START_EARLIEST;
		else if (!strcmp(v, "latest-offset"))
			k->cfg.startup = SL_KAFKA_START_LATEST;
		else if (!strcmp(v, "group-offsets"))
			k->cfg.startup = SL_KAFKA_START_GROUP_OFFSETS;
		else if (!strcmp(v, "timestamp"))
			k->cfg.startup = SL_KAFKA_START_TIMESTAMP;
		else if (!strcmp(v, "specific-offsets"))
			k->cfg.startup = SL_KAFKA_START_SPECIFIC;
		else
			return fail(c, sm,
				    "option 'scan.startup.mode': unknown mode '%s' (known: "
				    "earliest-offset, latest-offset, group-offsets, timestamp, "
				    "specific-offsets)",
				    v);
	}
	if (k->cfg.startup == SL_KAFKA_START_TIMESTAMP && !sts)
		return fail(c, sm,
			    "scan.startup.mode 'timestamp' needs "
			    "'scan.startup.timestamp-millis'");
	if (k->cfg.startup == SL_KAFKA_START_SPECIFIC) {
		if (!so)
			return fail(c, sm,
				    "scan.startup.mode 'specific-offsets' needs "
				    "'scan.startup.specific-offsets'");
		if ((rc = parse_offsets(c, so, &k->specific, &k->cfg.nspecific)))
			return rc;
		k->cfg.specific = k->specific;
	}
	if (bm) {
		const char *v = bm->value;

		if (!strcmp(v, "unbounded"))
			k->cfg.bounded = SL_KAFKA_UNBOUNDED;
		else if (!strcmp(v, "latest-offset"))
			k->cfg.bounded = SL_KAFKA_BOUND_LATEST;
		else if (!strcmp(v, "timestamp"))
			k->cfg.bounded = SL_KAFKA_BOUND_TIMESTAMP;
		else if (!strcmp(v, "specific-offsets"))
			k->cfg.bounded = SL_KAFKA_BOUND_SPECIFIC;
		else
			return fail(c, bm,
				    "option 'scan.bounded.mode': unknown mode '%s' (known: "
				    "unbounded, latest-offset, timestamp, specific-offsets)",
				    v);
	}
	if (k->cfg.bounded == SL_KAFKA_BOUND_TIMESTAMP && !bts)
		return fail(c, bm,
			    "scan.bounded.mode 'timestamp' needs "
			    "'scan.bounded.timestamp-millis'");
	if (k->cfg.bounded == SL_KAFKA_BOUND_SPECIFIC) {
		if (!bo)
			return fail(c, bm,
				    "scan.bounded.mode 'specific-offsets' needs "
				    "'scan.bounded.specific-offsets'");
		if ((rc = parse_offsets(c, bo, &k->bounded, &k->cfg.nbounded_specific)))
			return rc;
		k->cfg.bounded_specific = k->bounded;
	}
	return 0;
}

static int parse_formats(struct kctx *c, const struct sl_schema *schema, struct kafka_own *k)
{
	struct sl_sql_conn_opt *f = take(c, "format"), *vf = take(c, "value.format");
	struct sl_sql_conn_opt *kf = take(c, "key.format"), *kfl = take(c, "key.fields");
	struct sl_sql_conn_opt *inc = take(c, "value.fields-include"), *o;
	bool include, dbz_ignore = false, csv_ignore = false, dbz_ovf = false, csv_ovf = false;
	int rc;

	if (f && vf)
		return fail(c, vf, "options 'format' and 'value.format' both given: use one");
	if (!f && !vf)
		return fail(c, NULL,
			    "connector 'kafka' needs option 'format' or 'value.format' "
			    "(json, csv, debezium-json or raw)");
	c->value_format = f ? f : vf;
	c->key_format = kf;
	if ((rc = parse_format(c, f ? f : vf, false, &k->cfg.value_format)))
		return rc;
	if (kf && (rc = parse_format(c, kf, true, &k->cfg.key_format)))
		return rc;
	if (kfl && !kf)
		return fail(c, kfl, "option 'key.fields' needs 'key.format'");
	if (kf && !kfl)
		return fail(c, kf, "option 'key.format' needs 'key.fields'");
	if (inc) {
		if (!strcasecmp(inc->value, "EXCEPT_KEY"))
			k->cfg.value_except_key = true;
		else if (strcasecmp(inc->value, "ALL"))
			return fail(c, inc,
				    "option 'value.fields-include': '%s' is not ALL or "
				    "EXCEPT_KEY",
				    inc->value);
	}
	if (kfl) {
		const char *p = kfl->value;

		while (*p) {
			const char *e = strchr(p, ';');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			char name[256];
			int i;

			snprintf(name, sizeof name, "%.*s", (int)len, p);
			i = sl_schema_find(schema, name);
			if (i < 0)
				return fail(c, kfl,
					    "option 'key.fields': the table has no column "
					    "'%s'",
					    name);
			k->key_fields[k->cfg.nkey_fields++] = i;
			p += len + (e != NULL);
		}
		k->cfg.key_fields = k->key_fields;
	}
	/* format options: the filesystem connector's, for whichever format is used */
	if ((rc = take_bool(c, "json.ignore-parse-errors", &k->cfg.ignore_parse_errors)) ||
	    (rc = take_bool(c, "json.fail-on-missing-field", &k->cfg.json_fail_on_missing)) ||
	    (rc = take_bool(c, "debezium-json.schema-include", &include)) ||
	    (rc = take_bool(c, "debezium-json.ignore-parse-errors", &dbz_ignore)) ||
	    (rc = take_bool(c, "csv.ignore-parse-errors", &csv_ignore)) ||
	    (rc = take_bool(c, "json.fail-on-decimal-overflow",
			    &k->cfg.fail_on_decimal_overflow)) ||
	    (rc = take_bool(c, "debezium-json.fail-on-decimal-overflow", &dbz_ovf)) ||
	    (rc = take_bool(c, "csv.fail-on-decimal-overflow", &csv_ovf)))
		return rc;
	k->cfg.ignore_parse_errors |= dbz_ignore | csv_ignore;
	k->cfg.fail_on_decimal_overflow |= dbz_ovf | csv_ovf;
	if (k->cfg.ignore_parse_errors && k->cfg.json_fail_on_missing)
		return fail(c, NULL,
			    "json.fail-on-missing-field and json.ignore-parse-errors "
			    "cannot both be true");
	k->cfg.csv.delimiter = ',';
	if ((o = take_fmt(c, "csv.field-delimiter"))) {
		if (!strcmp(o->value, "\\t"))
			k->cfg.csv.delimiter = '\t';
		else if (strlen(o->value) == 1 && o->value[0] != '"' && o->value[0] != '\n')
			k->cfg.csv.delimiter = o->value[0];
		else
			return fail(c, o, "option '%s': '%s' is not a single character", o->key,
				    o->value);
	}
	if ((o = take_fmt(c, "csv.null-literal"))) {
		k->null_lit = strdup(o->value);
		if (!k->null_lit)
			return -ENOMEM;
		k->cfg.csv.null_literal = k->null_lit;
	}
	return 0;
}

static int parse_metadata(struct kctx *c, const struct sl_schema *schema, struct kafka_own *k)
{
	static const struct {
		const char *name;
		enum sl_kafka_meta key;
	} keys[] = {
		{ "timestamp", SL_KAFKA_META_TIMESTAMP },
		{ "partition", SL_KAFKA_META_PARTITION },
		{ "offset", SL_KAFKA_META_OFFSET },
		{ "topic", SL_KAFKA_META_TOPIC },
		{ "timestamp-type", SL_KAFKA_META_TIMESTAMP_TYPE },
	};
	const size_t plen = strlen("sluice.metadata.");

	for (int j = 0; j < c->n; j++) {
		struct sl_sql_conn_opt *o = &c->opts[j];
		size_t i;
		int f;

		if (o->used || strncmp(o->key, "sluice.metadata.", plen))
			continue;
		o->used = true;
		f = sl_schema_find(schema, o->key + plen);
		if (f < 0)
			return fail(c, o, "option '%s': the table has no column '%s'", o->key,
				    o->key + plen);
		for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
			if (!strcmp(o->value, keys[i].name))
				break;
		if (i == sizeof keys / sizeof keys[0])
			return fail(c, o,
				    "option '%s': unknown metadata key '%s' (known: "
				    "timestamp, partition, offset, topic, timestamp-type)",
				    o->key, o->value);
		if (k->cfg.nmeta == SL_KAFKA_MAX_META)
			return fail(c, o, "at most %d metadata columns", SL_KAFKA_MAX_META);
		c->meta_opt[k->cfg.nmeta] = o;
		k->cfg.meta[k->cfg.nmeta].field = f;
		k->cfg.meta[k->cfg.nmeta++].key = keys[i].key;
	}
	return 0;
}

/* The source's name in messages: its topic, its first listed topic, or its pattern. */
static const char *src_name(const struct sl_kafka_source_cfg *cfg)
{
	if (cfg->topic)
		return cfg->topic;
	if (cfg->ntopics > 0)
		return cfg->topics[0];
	return cfg->topic_pattern;
}

static bool is_meta(const struct sl_kafka_source_cfg *cfg, int i)
{
	for (int m = 0; m < cfg->nmeta; m++)
		if (cfg->meta[m].field == i)
			return true;
	return false;
}

static bool is_key_field(const struct sl_kafka_source_cfg *cfg, int i)
{
	for (int k = 0; k < cfg->nkey_fields; k++)
		if (cfg->key_fields[k] == i)
			return true;
	return false;
}

/* The column types a metadata key can fill (Flink's Kafka connector). */
static bool meta_type_ok(enum sl_kafka_meta key, enum sl_type t)
{
	switch (key) {
	case SL_KAFKA_META_TIMESTAMP:
		return t == SL_TYPE_TIMESTAMP_LTZ || t == SL_TYPE_TIMESTAMP || t == SL_TYPE_BIGINT;
	case SL_KAFKA_META_PARTITION:
		return t == SL_TYPE_INT || t == SL_TYPE_BIGINT;
	case SL_KAFKA_META_OFFSET:
		return t == SL_TYPE_BIGINT;
	case SL_KAFKA_META_TOPIC:
	case SL_KAFKA_META_TIMESTAMP_TYPE:
		return t == SL_TYPE_STRING;
	}
	return false;
}

/*
 * The metadata columns and the raw format against the column types, which the source
 * trusts (kafka_source.c fills a row's fields from the message and the decoders as the cfg
 * says): each error points at the option that asked for what the column cannot hold.
 */
static int check_columns(struct kctx *c, const struct sl_schema *s, const struct kafka_own *k)
{
	const struct sl_kafka_source_cfg *cfg = &k->cfg;
	int nf = sl_schema_nfields(s), nval = 0, nkey = 0;
	bool value_raw = cfg->value_format == SL_KAFKA_FMT_RAW;

	for (int m = 0; m < cfg->nmeta; m++) {
		int i = cfg->meta[m].field;

		if (!meta_type_ok(cfg->meta[m].key, sl_schema_type(s, i)))
			return fail(c, c->meta_opt[m],
				    "kafka source '%s': metadata column '%s' cannot be %s",
				    src_name(cfg), sl_schema_name(s, i),
				    sl_type_name(sl_schema_type(s, i)));
	}
	for (int i = 0; i < nf; i++) {
		if (is_meta(cfg, i))
			continue;
		if (is_key_field(cfg, i)) {
			nkey++;
			if (cfg->value_except_key)
				continue;
		}
		nval++;
		if (value_raw && sl_schema_type(s, i) != SL_TYPE_STRING)
			return fail(c, c->value_format,
				    "kafka source '%s': format 'raw' reads one STRING column, '%s' "
				    "is %s",
				    src_name(cfg), sl_schema_name(s, i),
				    sl_type_name(sl_schema_type(s, i)));
	}
	if (value_raw && nval != 1)
		return fail(c, c->value_format,
			    "kafka source '%s': format 'raw' reads exactly one column (the value "
			    "has %d)",
			    src_name(cfg), nval);
	if (cfg->key_format == SL_KAFKA_FMT_RAW && nkey != 1)
		return fail(c, c->key_format,
			    "kafka source '%s': format 'raw' reads exactly one column (the key "
			    "has %d)",
			    src_name(cfg), nkey);
	return 0;
}

/* Copies every properties.* option (prefix kept: the props helper strips it). */
static int take_props(struct kctx *c, struct kafka_own *k, bool *has_group)
{
	const size_t plen = strlen(SL_KAFKA_PROPS_PREFIX);
	int n = 0;

	for (int j = 0; j < c->n; j++)
		n += !c->opts[j].used && !strncmp(c->opts[j].key, SL_KAFKA_PROPS_PREFIX, plen);
	k->keys = calloc((size_t)n + 1, sizeof(char *));
	k->vals = calloc((size_t)n + 1, sizeof(char *));
	if (!k->keys || !k->vals)
		return -ENOMEM;
	for (int j = 0; j < c->n; j++) {
		struct sl_sql_conn_opt *o = &c->opts[j];

		if (o->used || strncmp(o->key, SL_KAFKA_PROPS_PREFIX, plen))
			continue;
		o->used = true;
		if (!strcmp(o->key + plen, "group.id"))
			*has_group = true;
		k->keys[k->nprops] = strdup(o->key);
		k->vals[k->nprops] = strdup(o->value);
		if (!k->keys[k->nprops] || !k->vals[k->nprops++])
			return -ENOMEM;
	}
	k->cfg.prop_keys = (const char *const *)k->keys;
	k->cfg.prop_vals = (const char *const *)k->vals;
	k->cfg.nprops = k->nprops;
	return 0;
}

/* Checks every property with librdkafka now, so a typo fails at plan time with its place. */
static int check_props(struct kctx *c)
{
	const size_t plen = strlen(SL_KAFKA_PROPS_PREFIX);
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char why[384];
	int rc = 0;

	if (!conf)
		return -ENOMEM;
	for (int j = 0; j < c->n && !rc; j++) {
		struct sl_sql_conn_opt *o = &c->opts[j];

		if (o->used || strncmp(o->key, SL_KAFKA_PROPS_PREFIX, plen))
			continue;
		if (sl_kafka_props_set(conf, o->key, o->value, why, sizeof why))
			rc = fail(c, o, "option '%s': %s", o->key, why);
	}
	rd_kafka_conf_destroy(conf);
	return rc;
}

static int build(struct kctx *c, const struct sl_schema *schema, struct kafka_own *k)
{
	struct sl_sql_conn_opt *topic = take(c, "topic"), *o;
	struct sl_error e = { 0 };
	bool has_group = false;
	int rc;

	k->cfg.discovery_interval_ms = DEFAULT_DISCOVERY_MS;
	if ((o = take(c, "scan.topic-partition-discovery.interval"))) {
		const char *v = o->value;

		while (*v == ' ')
			v++;
		/* Flink: '0' or a negative interval disables discovery */
		if (*v == '-' && !sl_sql_conn_parse_duration(v + 1, &k->cfg.discovery_interval_ms))
			k->cfg.discovery_interval_ms = 0;
		else if (sl_sql_conn_parse_duration(v, &k->cfg.discovery_interval_ms))
			return fail(c, o,
				    "option '%s': '%s' is not a duration (e.g. '30 s', "
				    "'5 min'; '0' disables)",
				    o->key, o->value);
	}
	if ((o = take(c, "topic-pattern"))) {
		if (topic)
			return fail(c, o,
				    "options 'topic' and 'topic-pattern' both given: use one");
		if (!*o->value)
			return fail(c, o, "option 'topic-pattern' is empty");
		k->topic_text = strdup(o->value);
		if (!k->topic_text)
			return -ENOMEM;
		k->cfg.topic_pattern = k->topic_text;
	} else if (!topic) {
		return fail(c, NULL, "connector 'kafka' needs option 'topic' or 'topic-pattern'");
	} else {
		char *p, *save = NULL;
		int n = 1;

		for (const char *q = topic->value; *q; q++)
			n += *q == ';';
		k->topic_text = strdup(topic->value);
		k->topics = calloc((size_t)n, sizeof(*k->topics));
		if (!k->topic_text || !k->topics)
			return -ENOMEM;
		n = 0;
		for (p = strtok_r(k->topic_text, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
			while (*p == ' ')
				p++;
			if (*p)
				k->topics[n++] = p;
		}
		if (!n)
			return fail(c, topic, "option 'topic': '%s' names no topic", topic->value);
		if (n == 1)
			k->cfg.topic = k->topics[0];
		k->cfg.topics = n > 1 ? k->topics : NULL;
		k->cfg.ntopics = n > 1 ? n : 0;
	}
	if ((rc = parse_mode(c, k)) || (rc = parse_formats(c, schema, k)) ||
	    (rc = parse_metadata(c, schema, k)))
		return rc;
	if ((k->cfg.ntopics || k->cfg.topic_pattern) &&
	    (k->cfg.startup == SL_KAFKA_START_SPECIFIC ||
	     k->cfg.bounded == SL_KAFKA_BOUND_SPECIFIC))
		return fail(c, NULL,
			    "specific offsets name partitions of one topic: they need a "
			    "single 'topic'");
	for (int j = 0; j < c->n; j++)
		if (!c->opts[j].used && !strcmp(c->opts[j].key, "properties.bootstrap.servers"))
			goto have_servers;
	return fail(c, NULL, "connector 'kafka' needs option 'properties.bootstrap.servers'");
have_servers:
	if ((rc = check_props(c)) || (rc = take_props(c, k, &has_group)))
		return rc;
	for (int j = 0; j < c->n; j++)
		if (!c->opts[j].used)
			return fail(c, &c->opts[j],
				    "unknown option '%s' for connector 'kafka' "
				    "(known: %s)",
				    c->opts[j].key, KNOWN);
	k->cfg.schema = schema;
	k->cfg.skipped = &k->skipped;
	k->cfg.commit_offsets = has_group;
	if ((rc = check_columns(c, schema, k)))
		return rc;
	if (!c->offline && sl_kafka_source_prepare(&k->cfg, &e) < 0) {
		rc = fail(c, NULL, "%s", e.msg);
		return e.code == -ENOMEM ? -ENOMEM : rc;
	}
	return 0;
}

int sl_sql_conn_kafka_source(const struct sl_schema *schema, struct sl_sql_conn_opt *opts,
			     int nopts, const char *file, const struct sl_sql_conn_opt *at,
			     bool offline, struct sl_sql_conn *out, char *err, size_t errcap)
{
	struct kctx c = { .opts = opts,
			  .n = nopts,
			  .file = file,
			  .at = at,
			  .err = err,
			  .errcap = errcap,
			  .offline = offline };
	struct kafka_own *k = calloc(1, sizeof(*k));
	int rc;

	memset(out, 0, sizeof(*out));
	if (!k)
		return fail(&c, NULL, "out of memory configuring connector 'kafka'"), -ENOMEM;
	rc = build(&c, schema, k);
	if (rc == -ENOMEM && !err[0])
		fail(&c, NULL, "out of memory configuring connector 'kafka'");
	if (rc < 0) {
		own_free(k);
		return rc;
	}
	out->src_ops = &sl_kafka_source_ops;
	out->cfg = k;
	out->cfg_free = own_free;
	out->changelog = k->cfg.value_format == SL_KAFKA_FMT_DEBEZIUM_JSON;
	out->skipped = &k->skipped;
	return 0;
}
