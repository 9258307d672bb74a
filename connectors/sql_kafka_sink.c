/*
 * sql_kafka_sink.c - WITH options of a `'connector' = 'kafka'` or `'upsert-kafka'` table
 * written by INSERT INTO, mapped to a struct sl_kafka_sink_cfg (Flink's option names):
 *
 *   topic                           one topic (required)
 *   properties.bootstrap.servers    required
 *   properties.*                    passed to librdkafka as they are (checked here)
 *   format | value.format           json (default) | csv | raw
 *   key.format                      json | csv | raw (upsert-kafka: required)
 *   key.fields                      'a;b': the key's columns ('kafka' only; upsert-kafka's
 *                                   key is the PRIMARY KEY, which it requires)
 *   value.fields-include            ALL (default) | EXCEPT_KEY
 *   sink.partitioner                default | fixed | round-robin
 *   sink.delivery-guarantee         none | at-least-once (default) | exactly-once
 *   sink.transactional-id-prefix    exactly-once: required, unique per job
 *   sink.marker-topic               sluice: the commit markers' topic (default
 *                                   '<prefix>__sluice_markers')
 *   sink.transaction-timeout        sluice: duration (default max(60 s, 3 x checkpoint
 *                                   interval + 10 s))
 *   csv.field-delimiter, csv.null-literal (also "value." / "key." prefixed)
 *
 * A table may be both read and written, so the source's options (scan.*, group.id, the
 * decoders' json.* / csv.* / debezium-json.* switches, sluice.metadata.*) are accepted and
 * ignored here, as Flink does; anything else is an unknown option.
 *
 * Errors are one line "FILE:LINE:COL: ..." naming the option, as in sql_options.c (whose
 * helpers are static, so the few needed are repeated small here).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format.h"
#include "kafka_props.h"
#include "kafka_sink.h"
#include "sql_options.h"

#define KNOWN                                                                                      \
	"topic, properties.bootstrap.servers, properties.*, format, value.format, "                \
	"key.format, key.fields, value.fields-include, sink.partitioner, "                         \
	"sink.delivery-guarantee, sink.transactional-id-prefix, sink.marker-topic, "               \
	"sink.transaction-timeout, csv.field-delimiter, csv.null-literal"

struct sctx {
	struct sl_sql_conn_opt *opts;
	int n;
	const char *file;
	const struct sl_sql_conn_opt *at;
	const char *conn;
	char *err;
	size_t errcap;
};

/* The cfg and everything it points to, freed as one (cfg first: the pointer handed out). */
struct ksink_own {
	struct sl_kafka_sink_cfg cfg;
	char *topic, *prefix, *marker, *null_lit;
	char **keys, **vals;
	int nprops;
	int key_fields[SL_SCHEMA_MAX_FIELDS];
	uint64_t errors;
};

static int fail(struct sctx *c, const struct sl_sql_conn_opt *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct sctx *c, const struct sl_sql_conn_opt *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sl_sql_conn_opt_vfail(c->err, c->errcap, c->file, o ? o : c->at, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static struct sl_sql_conn_opt *take(struct sctx *c, const char *key)
{
	return sl_sql_conn_opt_take(c->opts, c->n, key);
}

/* `key` or "<part>.<key>" ("value.csv.null-literal"). */
static struct sl_sql_conn_opt *take_part(struct sctx *c, const char *part, const char *key)
{
	char k[128];
	struct sl_sql_conn_opt *o = take(c, key);

	snprintf(k, sizeof k, "%s.%s", part, key);
	return o ? o : take(c, k);
}

static void own_free(void *p)
{
	struct ksink_own *k = p;

	if (!k)
		return;
	for (int i = 0; i < k->nprops; i++) {
		free(k->keys[i]);
		free(k->vals[i]);
	}
	free(k->keys);
	free(k->vals);
	free(k->topic);
	free(k->prefix);
	free(k->marker);
	free(k->null_lit);
	free(k);
}

static int parse_format(struct sctx *c, const struct sl_sql_conn_opt *o,
			enum sl_kafka_sink_fmt *out)
{
	if (!strcmp(o->value, "json"))
		*out = SL_KSINK_JSON;
	else if (!strcmp(o->value, "csv"))
		*out = SL_KSINK_CSV;
	else if (!strcmp(o->value, "raw"))
		*out = SL_KSINK_RAW;
	else
		return fail(c, o,
			    "option '%s': format '%s' cannot be written (known: json, csv, "
			    "raw)",
			    o->key, o->value);
	return 0;
}

/* Flink's duration, as every connector reads it (sql_options.h). */
static int parse_duration(struct sctx *c, const struct sl_sql_conn_opt *o, int64_t *ms)
{
	if (sl_sql_conn_parse_duration(o->value, ms) < 0 || *ms <= 0)
		return fail(c, o, "option '%s': '%s' is not a duration ('<n>' ms or '<n> s|min|h')",
			    o->key, o->value);
	return 0;
}

static char *dup_val(const struct sl_sql_conn_opt *o, int *rc)
{
	char *s = strdup(o->value);

	if (!s)
		*rc = -ENOMEM;
	return s;
}

/* properties.*: copied into k and checked with librdkafka now, so a typo fails at plan
 * time with its place. */
static int take_props(struct sctx *c, struct ksink_own *k, bool *has_bootstrap)
{
	const size_t plen = strlen(SL_KAFKA_PROPS_PREFIX);
	rd_kafka_conf_t *conf;
	char why[384];
	int n = 0, rc = 0;

	for (int j = 0; j < c->n; j++)
		n += !c->opts[j].used && !strncmp(c->opts[j].key, SL_KAFKA_PROPS_PREFIX, plen);
	k->keys = calloc((size_t)n + 1, sizeof(char *));
	k->vals = calloc((size_t)n + 1, sizeof(char *));
	conf = rd_kafka_conf_new();
	if (!k->keys || !k->vals || !conf) {
		if (conf)
			rd_kafka_conf_destroy(conf);
		return -ENOMEM;
	}
	for (int j = 0; j < c->n && !rc; j++) {
		struct sl_sql_conn_opt *o = &c->opts[j];

		if (o->used || strncmp(o->key, SL_KAFKA_PROPS_PREFIX, plen))
			continue;
		o->used = true;
		*has_bootstrap |= !strcmp(o->key + plen, "bootstrap.servers");
		if (sl_kafka_props_set(conf, o->key, o->value, why, sizeof why)) {
			rc = fail(c, o, "option '%s': %s", o->key, why);
			break;
		}
		k->keys[k->nprops] = strdup(o->key);
		k->vals[k->nprops] = strdup(o->value);
		if (!k->keys[k->nprops] || !k->vals[k->nprops++])
			rc = -ENOMEM;
	}
	rd_kafka_conf_destroy(conf);
	k->cfg.prop_keys = (const char *const *)k->keys;
	k->cfg.prop_vals = (const char *const *)k->vals;
	k->cfg.nprops = k->nprops;
	return rc;
}

/* 'a;b' -> field indexes. */
static int parse_fields(struct sctx *c, const struct sl_sql_conn_opt *o,
			const struct sl_schema *schema, struct ksink_own *k)
{
	const char *p = o->value;

	while (*p) {
		const char *e = strchr(p, ';');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char name[128];
		int f;

		while (len && *p == ' ')
			p++, len--;
		while (len && p[len - 1] == ' ')
			len--;
		if (!len || len >= sizeof name || k->cfg.nkey_fields == SL_SCHEMA_MAX_FIELDS)
			return fail(c, o,
				    "option 'key.fields': '%s' is not a list of columns "
				    "'a;b'",
				    o->value);
		memcpy(name, p, len);
		name[len] = '\0';
		f = sl_schema_find(schema, name);
		if (f < 0)
			return fail(c, o, "option 'key.fields': no column '%s'", name);
		k->key_fields[k->cfg.nkey_fields++] = f;
		p = e ? e + 1 : p + strlen(p);
	}
	k->cfg.key_fields = k->key_fields;
	return k->cfg.nkey_fields ? 0 : fail(c, o, "option 'key.fields' is empty");
}

static int parse_guarantee(struct sctx *c, struct ksink_own *k)
{
	struct sl_sql_conn_opt *o = take(c, "sink.delivery-guarantee");
	struct sl_sql_conn_opt *p = take(c, "sink.transactional-id-prefix");
	struct sl_sql_conn_opt *m = take(c, "sink.marker-topic");
	struct sl_sql_conn_opt *t = take(c, "sink.transaction-timeout");
	int rc = 0;

	if (!o || !strcmp(o->value, "at-least-once"))
		k->cfg.guarantee = SL_KAFKA_AT_LEAST_ONCE;
	else if (!strcmp(o->value, "none"))
		k->cfg.guarantee = SL_KAFKA_NONE;
	else if (!strcmp(o->value, "exactly-once"))
		k->cfg.guarantee = SL_KAFKA_EXACTLY_ONCE;
	else
		return fail(c, o,
			    "option 'sink.delivery-guarantee': '%s' is not none, "
			    "at-least-once or exactly-once",
			    o->value);
	if (k->cfg.guarantee != SL_KAFKA_EXACTLY_ONCE)
		return 0; /* the transactional options are inert then, as in Flink */
	if (!p || !p->value[0])
		return fail(c, p ? p : o,
			    "exactly-once needs 'sink.transactional-id-prefix' "
			    "(unique per job: two jobs with one prefix fence each other)");
	if (strspn(p->value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
		    strlen(p->value) &&
	    !m)
		return fail(c, p,
			    "option 'sink.transactional-id-prefix': '%s' holds characters a "
			    "topic name cannot; name the marker topic with 'sink.marker-topic'",
			    p->value);
	k->cfg.transactional_id_prefix = k->prefix = dup_val(p, &rc);
	if (m)
		k->cfg.marker_topic = k->marker = dup_val(m, &rc);
	if (!rc && t)
		rc = parse_duration(c, t, &k->cfg.transaction_timeout_ms);
	return rc;
}

static int parse_rest(struct sctx *c, const struct sl_schema *schema, struct ksink_own *k,
		      bool upsert, const int *pk, int npk)
{
	struct sl_sql_conn_opt *o;
	int rc = 0;

	if ((o = take(c, "format")) || (o = take(c, "value.format"))) {
		if ((rc = parse_format(c, o, &k->cfg.value_format)))
			return rc;
		if (take(c, "value.format") || take(c, "format"))
			return fail(c, o, "give 'format' or 'value.format', not both");
	} else if (upsert) {
		return fail(c, NULL, "connector 'upsert-kafka' needs 'value.format'");
	}
	if ((o = take(c, "key.format")) && (rc = parse_format(c, o, &k->cfg.key_format)))
		return rc;
	if (upsert) {
		if (!o)
			return fail(c, NULL, "connector 'upsert-kafka' needs 'key.format'");
		if ((o = take(c, "key.fields")))
			return fail(c, o,
				    "connector 'upsert-kafka' takes its key from the PRIMARY "
				    "KEY, not 'key.fields'");
		if (npk <= 0 || npk > SL_SCHEMA_MAX_FIELDS)
			return fail(c, NULL, "connector 'upsert-kafka' needs a PRIMARY KEY");
		memcpy(k->key_fields, pk, sizeof(int) * (size_t)npk);
		k->cfg.key_fields = k->key_fields;
		k->cfg.nkey_fields = npk;
		k->cfg.upsert = true;
	} else if ((o = take(c, "key.fields"))) {
		if ((rc = parse_fields(c, o, schema, k)))
			return rc;
		if (k->cfg.key_format == SL_KSINK_NONE)
			return fail(c, o, "option 'key.fields' needs 'key.format'");
	} else if (k->cfg.key_format != SL_KSINK_NONE) {
		return fail(c, NULL, "option 'key.format' needs 'key.fields'");
	}
	if ((o = take(c, "value.fields-include"))) {
		if (!strcasecmp(o->value, "EXCEPT_KEY"))
			k->cfg.value_except_key = true;
		else if (strcasecmp(o->value, "ALL"))
			return fail(c, o,
				    "option 'value.fields-include': '%s' is not ALL or "
				    "EXCEPT_KEY",
				    o->value);
	}
	if ((o = take(c, "sink.partitioner"))) {
		if (!strcmp(o->value, "default"))
			k->cfg.partitioner = SL_KAFKA_PART_DEFAULT;
		else if (!strcmp(o->value, "fixed"))
			k->cfg.partitioner = SL_KAFKA_PART_FIXED;
		else if (!strcmp(o->value, "round-robin"))
			k->cfg.partitioner = SL_KAFKA_PART_ROUND_ROBIN;
		else
			return fail(c, o,
				    "option 'sink.partitioner': '%s' is not default, fixed "
				    "or round-robin",
				    o->value);
	}
	if ((o = take_part(c, "value", "csv.field-delimiter")) ||
	    (o = take_part(c, "key", "csv.field-delimiter"))) {
		const char *v = o->value;

		if (!strcmp(v, "\\t"))
			v = "\t";
		if (strlen(v) != 1)
			return fail(c, o, "option '%s': '%s' is not one character", o->key,
				    o->value);
		k->cfg.csv.delimiter = v[0];
	}
	if ((o = take_part(c, "value", "csv.null-literal")) ||
	    (o = take_part(c, "key", "csv.null-literal")))
		k->cfg.csv.null_literal = k->null_lit = dup_val(o, &rc);
	return rc;
}

/* The source's options: a table read and written carries them; nothing to do here. */
static void skip_source_options(struct sctx *c)
{
	static const char *const prefixes[] = {
		"scan.",
		"sluice.metadata.",
		"json.",
		"value.json.",
		"key.json.",
		"debezium-json.",
		"value.debezium-json.",
		"csv.ignore-parse-errors",
		"value.csv.ignore-parse-errors",
		"csv.allow-comments",
		"value.csv.allow-comments",
		"csv.fail-on-decimal-overflow",
		"value.csv.fail-on-decimal-overflow",
	};

	for (int i = 0; i < c->n; i++)
		for (size_t j = 0; j < sizeof prefixes / sizeof prefixes[0]; j++)
			if (!c->opts[i].used &&
			    !strncmp(c->opts[i].key, prefixes[j], strlen(prefixes[j])))
				c->opts[i].used = true;
}

int sl_sql_conn_kafka_sink(const struct sl_schema *schema, struct sl_sql_conn_opt *opts, int nopts,
			   const char *file, const struct sl_sql_conn_opt *at, bool upsert,
			   const int *pk, int npk, int64_t checkpoint_interval_ms,
			   struct sl_sql_conn *out, char *err, size_t errcap)
{
	struct sctx c = { opts, nopts, file, at, upsert ? "upsert-kafka" : "kafka", err, errcap };
	struct ksink_own *k = calloc(1, sizeof(*k));
	struct sl_sql_conn_opt *o;
	bool has_bootstrap = false;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!k)
		return -ENOMEM;
	o = take(&c, "topic");
	if (!o || !o->value[0]) {
		rc = fail(&c, o, "connector '%s' needs a 'topic'", c.conn);
		goto out_free;
	}
	if (strchr(o->value, ';')) {
		rc = fail(&c, o, "a sink writes one topic, not a list: '%s'", o->value);
		goto out_free;
	}
	k->cfg.topic = k->topic = strdup(o->value);
	rc = k->topic ? 0 : -ENOMEM;
	if (!rc)
		rc = take_props(&c, k, &has_bootstrap);
	if (!rc && !has_bootstrap)
		rc = fail(&c, NULL, "connector '%s' needs 'properties.bootstrap.servers'", c.conn);
	if (!rc)
		rc = parse_rest(&c, schema, k, upsert, pk, npk);
	if (!rc)
		rc = parse_guarantee(&c, k);
	if (rc)
		goto out_free;
	k->cfg.checkpoint_interval_ms = checkpoint_interval_ms;
	k->cfg.errors = &k->errors;
	if (k->cfg.value_format == SL_KSINK_RAW && !k->cfg.value_except_key &&
	    sl_schema_nfields(schema) != 1) {
		rc = fail(&c, NULL, "format 'raw' writes one STRING column; the table has %d",
			  sl_schema_nfields(schema));
		goto out_free;
	}
	skip_source_options(&c);
	for (int i = 0; i < nopts; i++)
		if (!opts[i].used) {
			rc = fail(&c, &opts[i],
				  "unknown option '%s' for connector '%s' (known: %s)", opts[i].key,
				  c.conn, KNOWN);
			goto out_free;
		}
	out->sink_ops = &sl_kafka_sink_ops;
	out->cfg = k;
	out->cfg_free = own_free;
	out->changelog = upsert; /* upsert-kafka takes -U/+U/-D: tombstones and new values */
	return 0;

out_free:
	if (rc == -ENOMEM)
		fail(&c, at, "out of memory configuring connector '%s'", c.conn);
	own_free(k);
	return rc;
}
