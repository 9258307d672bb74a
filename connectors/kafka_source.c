/*
 * kafka_source.c - the Kafka source (kafka_source.h): split k is one partition of one of
 * its topics (topics in name order, then partitions; those found while the job runs after
 * them, in the order found; a restore numbers them as its checkpoint did), consumed on
 * its shard by its own librdkafka consumer with a manual assignment of that one partition,
 * so no shared consumer and no group rebalance sits on the hot path. Which splits there
 * are (prepare, discovery, a restore's numbering) is kafka_splits.c.
 *
 * Split life:
 *
 *   open() ----> [not started] --start()--> [reading] --next >= end--> [ended: SL_SRC_EOF]
 *                     |   ^                     |
 *                seek(off): next = off          +-- poll(): take <= max fetched messages
 *
 * start() (first poll or position) resolves the startup mode to a concrete offset (asking
 * the cluster: watermarks, committed offset, offsets for a time) and the bound to an end
 * offset, then assigns the partition at that offset. A restore calls seek() right after
 * open and skips the startup mode. Because the offset is always a number once started, a
 * checkpoint taken before the first record still resumes exactly there.
 *
 * A position whose records were deleted (retention while the job was down or behind; the
 * development broker drops the oldest beyond 5 MiB a partition) is found at start() or by
 * a fetch (librdkafka's auto.offset.reset is 'error' here): reposition() goes on at the
 * log's start and prints how many records were lost, rather than librdkafka's default
 * jump to the end past every record still there; a position past the end fails the split.
 *
 * Invariant: `next` is the offset after the last message taken (emitted, dead-lettered or
 * skipped), which is the split's position; messages librdkafka fetched ahead and we did not
 * take stay in its queue, and a restore re-reads them.
 *
 * Memory: librdkafka prefetches into a per-partition queue bounded by
 * queued.max.messages.kbytes (16 MiB here unless set), so a shard that stops polling (its
 * rings are full) stops fetching instead of buffering without bound. Per record: the
 * decoder (which copies the payload into its padded buffer) and, when key or metadata
 * fields are present, one assembly pass into the output row; no allocation of ours.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kafka_props.h"
#include "kafka_source.h"
#include "kafka_source_int.h"
#include "source.h"
#include "format.h"

#define MAX_BATCH  256
#define DL_RAW_MAX 4096

/* Where field i of the output row comes from. */
enum { FROM_VALUE = 0, FROM_KEY, FROM_META };

struct src_field {
	uint8_t from;
	uint8_t meta; /* enum sl_kafka_meta when FROM_META */
	int16_t idx;  /* field of the value or key sub-row */
	enum sl_type type;
};

/* A decoder for one side (value or key) of a message. */
struct side {
	enum sl_kafka_format fmt;
	struct sl_schema *schema; /* the fields this side decodes (owned) */
	struct sl_json_dec *json;
	struct sl_csv_dec *csv;
	void *buf; /* SL_ROW_SCRATCH bytes for its sub-row when assembling */
};

struct kafka_split {
	const struct sl_kafka_source_cfg *cfg;
	const char *topic; /* cfg->split_refs[split] */
	int32_t partition;
	uint32_t topic_hash; /* names the topic in positions */
	rd_kafka_t *rk;
	rd_kafka_queue_t *q; /* the consumer queue (main queue forwarded into it) */
	bool started, ended;
	int64_t next;	     /* offset after the last message taken */
	int64_t committable; /* the last position() written; -1: none */
	int64_t end;	     /* first offset not to read; INT64_MAX: unbounded */
	int timeout_ms;
	bool discovered; /* found after the start: begins at the earliest offset (Flink) */

	bool direct; /* output row == value row: decode straight into scratch */
	int nfields;
	struct src_field f[SL_SCHEMA_MAX_FIELDS];
	struct side val, key;
	uint64_t skipped;
	rd_kafka_message_t *batch[MAX_BATCH];
};

/* ---- configuration ------------------------------------------------------------------- */

void sl_kafka_src_err(struct sl_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
}

/* The source's name in messages: its topic, its first listed topic, or its pattern. */
const char *sl_kafka_src_name(const struct sl_kafka_source_cfg *cfg)
{
	if (cfg->topic)
		return cfg->topic;
	if (cfg->ntopics > 0 && cfg->topics && cfg->topics[0])
		return cfg->topics[0];
	return cfg->topic_pattern ? cfg->topic_pattern : "?";
}

bool sl_kafka_src_has_prop(const struct sl_kafka_source_cfg *cfg, const char *name)
{
	size_t plen = strlen(SL_KAFKA_PROPS_PREFIX);

	for (int i = 0; i < cfg->nprops; i++) {
		const char *k = cfg->prop_keys[i];

		if (!strncmp(k, SL_KAFKA_PROPS_PREFIX, plen))
			k += plen;
		if (!strcmp(k, name))
			return true;
	}
	return false;
}

/* The user's value of a property (the last one given), or NULL. */
static const char *prop_value(const struct sl_kafka_source_cfg *cfg, const char *name)
{
	size_t plen = strlen(SL_KAFKA_PROPS_PREFIX);
	const char *v = NULL;

	for (int i = 0; i < cfg->nprops; i++) {
		const char *k = cfg->prop_keys[i];

		if (!strncmp(k, SL_KAFKA_PROPS_PREFIX, plen))
			k += plen;
		if (!strcmp(k, name))
			v = cfg->prop_vals[i];
	}
	return v;
}

/*
 * The consumer configuration: our defaults, then the user's properties, then what the
 * source relies on (no auto commit: positions live in checkpoints; partition EOF events:
 * bounded splits end on them; auto.offset.reset 'error': a position is always a number
 * start() resolved, so librdkafka resets only when a fetch finds that offset gone, and
 * then the source decides (reposition()) instead of librdkafka jumping to the end, its
 * default, past every record still there). The user's auto.offset.reset keeps its one
 * Flink meaning: where a group without a committed offset starts (group_offset()).
 * Returns the conf or NULL with err set.
 */
static rd_kafka_conf_t *make_conf(const struct sl_kafka_source_cfg *cfg, struct sl_error *err)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char why[384], group[320];
	int rc = 0;

	if (!conf) {
		sl_kafka_src_err(err, -ENOMEM, "kafka source: out of memory");
		return NULL;
	}
	snprintf(group, sizeof group, "sluice-%s", sl_kafka_src_name(cfg));
	/* the prefetch queue's byte bound is the source's buffer: 16 MiB a partition (4 MiB
	 * held a few decompressed batches only: the shards then idled on empty queues, 0.49x
	 * of a raw consume/produce loop against 0.83-0.87x at 16 MiB, bench/kafka_bench). Its
	 * message-count bound stays librdkafka's (100000): a fetcher that finds the queue
	 * over either bound backs off for fetch.error.backoff.ms (500 ms in 2.0.2), so a
	 * count bound that a shard drains in a few ms caps throughput (10000 measured 6x
	 * slower on 1M small messages) */
	rc = sl_kafka_props_set(conf, "queued.max.messages.kbytes", "16384", why, sizeof why);
	if (!rc && !sl_kafka_src_has_prop(cfg, "group.id"))
		rc = sl_kafka_props_set(conf, "group.id", group, why, sizeof why);
	if (!rc)
		rc = sl_kafka_props_apply(conf, cfg->prop_keys, cfg->prop_vals, cfg->nprops, why,
					  sizeof why);
	if (!rc)
		rc = sl_kafka_props_set(conf, "enable.auto.commit", "false", why, sizeof why);
	if (!rc)
		rc = sl_kafka_props_set(conf, "enable.auto.offset.store", "false", why, sizeof why);
	if (!rc)
		rc = sl_kafka_props_set(conf, "enable.partition.eof", "true", why, sizeof why);
	if (!rc)
		rc = sl_kafka_props_set(conf, "auto.offset.reset", "error", why, sizeof why);
	if (rc) {
		sl_kafka_src_err(err, rc, "kafka source '%s': %s", sl_kafka_src_name(cfg), why);
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	return conf;
}

rd_kafka_t *sl_kafka_src_consumer(const struct sl_kafka_source_cfg *cfg, struct sl_error *err)
{
	rd_kafka_conf_t *conf = make_conf(cfg, err);
	char why[512];
	rd_kafka_t *rk;

	if (!conf)
		return NULL;
	rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, why, sizeof why);
	if (!rk) {
		sl_kafka_src_err(err, -EINVAL, "kafka source '%s': %s", sl_kafka_src_name(cfg),
				 why);
		rd_kafka_conf_destroy(conf);
	}
	return rk;
}

static bool key_field(const struct sl_kafka_source_cfg *cfg, int i, int *idx)
{
	for (int k = 0; k < cfg->nkey_fields; k++)
		if (cfg->key_fields[k] == i) {
			*idx = k;
			return true;
		}
	return false;
}

static int meta_of(const struct sl_kafka_source_cfg *cfg, int i)
{
	for (int m = 0; m < cfg->nmeta; m++)
		if (cfg->meta[m].field == i)
			return m;
	return -1;
}

/*
 * Checks that the cfg holds together: one way to name topics, key and metadata fields that
 * are distinct fields of the schema, the formats they need. 0 or -EINVAL with err. What a
 * SQL table can get wrong against its column types (metadata columns, the raw format) is
 * the SQL binding's to refuse with the option's place (sql_kafka.c), at plan time.
 */
int sl_kafka_src_check_cfg(const struct sl_kafka_source_cfg *cfg, struct sl_error *err)
{
	const struct sl_schema *s = cfg->schema;
	int nf;

	if (!s || (!!cfg->topic + (cfg->ntopics > 0) + !!cfg->topic_pattern) != 1) {
		sl_kafka_src_err(err, -EINVAL, "kafka source: %s",
				 !s ? "no schema"
				    : "name one topic, a list of topics or a topic pattern");
		return -EINVAL;
	}
	for (int t = 0; t < cfg->ntopics; t++)
		if (!cfg->topics || !cfg->topics[t] || !*cfg->topics[t]) {
			sl_kafka_src_err(err, -EINVAL,
					 "kafka source: topic %d of the list is empty", t);
			return -EINVAL;
		}
	if ((cfg->topic && !*cfg->topic) || (cfg->topic_pattern && !*cfg->topic_pattern)) {
		sl_kafka_src_err(err, -EINVAL, "kafka source: empty topic name or pattern");
		return -EINVAL;
	}
	nf = sl_schema_nfields(s);
	for (int m = 0; m < cfg->nmeta; m++) {
		int i = cfg->meta[m].field;

		if (i < 0 || i >= nf || meta_of(cfg, i) != m) {
			sl_kafka_src_err(err, -EINVAL,
					 "kafka source '%s': metadata column %d is not a "
					 "distinct field of the schema",
					 sl_kafka_src_name(cfg), i);
			return -EINVAL;
		}
	}
	for (int k = 0; k < cfg->nkey_fields; k++) {
		int i = cfg->key_fields[k], idx;

		if (i < 0 || i >= nf || meta_of(cfg, i) >= 0 || !key_field(cfg, i, &idx) ||
		    idx != k) {
			sl_kafka_src_err(err, -EINVAL,
					 "kafka source '%s': key field %d is not a distinct "
					 "physical field of the schema",
					 sl_kafka_src_name(cfg), i);
			return -EINVAL;
		}
	}
	if (cfg->nkey_fields && cfg->key_format == SL_KAFKA_FMT_NONE) {
		sl_kafka_src_err(err, -EINVAL, "kafka source '%s': key fields need a key format",
				 sl_kafka_src_name(cfg));
		return -EINVAL;
	}
	if (cfg->key_format == SL_KAFKA_FMT_DEBEZIUM_JSON) {
		sl_kafka_src_err(err, -EINVAL, "kafka source '%s': debezium-json is a value format",
				 sl_kafka_src_name(cfg));
		return -EINVAL;
	}
	if (cfg->value_format == SL_KAFKA_FMT_NONE) {
		sl_kafka_src_err(err, -EINVAL, "kafka source '%s': no value format",
				 sl_kafka_src_name(cfg));
		return -EINVAL;
	}
	return 0;
}

/* ---- opening a split ----------------------------------------------------------------- */

static void side_fini(struct side *sd)
{
	sl_json_dec_destroy(sd->json);
	sl_csv_dec_destroy(sd->csv);
	sl_schema_destroy(sd->schema);
	free(sd->buf);
}

static void kafka_close(void *state)
{
	struct kafka_split *k = state;

	if (!k)
		return;
	if (k->skipped) {
		if (k->cfg->skipped)
			atomic_fetch_add_explicit((_Atomic uint64_t *)k->cfg->skipped, k->skipped,
						  memory_order_relaxed);
		fprintf(stderr,
			"sluice: kafka %s/%d: skipped %llu undecodable record%s "
			"(ignore-parse-errors)\n",
			k->topic, k->partition, (unsigned long long)k->skipped,
			k->skipped == 1 ? "" : "s");
	}
	if (k->q)
		rd_kafka_queue_destroy(k->q);
	/* no group membership to leave (manual assignment): skip the consumer close */
	if (k->rk)
		rd_kafka_destroy_flags(k->rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
	side_fini(&k->val);
	side_fini(&k->key);
	free(k);
}

static int add_field(struct sl_schema *sub, const struct sl_schema *s, int i)
{
	return sl_schema_add_like(sub, sl_schema_name(s, i), s, i);
}

/* Creates the decoder of one side over its sub-schema. 0 or -errno with err. */
static int side_init(struct side *sd, enum sl_kafka_format fmt,
		     const struct sl_kafka_source_cfg *cfg, bool need_buf, struct sl_error *err)
{
	int jerr = -ENOMEM;
	unsigned flags = (cfg->json_fail_on_missing ? SL_JSON_FAIL_ON_MISSING : 0) |
			 (cfg->fail_on_decimal_overflow ? SL_JSON_FAIL_ON_DEC_OVERFLOW : 0);
	struct sl_csv_opts csv = cfg->csv;

	sd->fmt = fmt;
	if (need_buf && !(sd->buf = aligned_alloc(8, SL_ROW_SCRATCH)))
		goto nomem;
	switch (fmt) {
	case SL_KAFKA_FMT_JSON:
	case SL_KAFKA_FMT_DEBEZIUM_JSON:
		if (fmt == SL_KAFKA_FMT_DEBEZIUM_JSON)
			flags |= SL_JSON_DEBEZIUM;
		sd->json = sl_json_dec_create_ex(sd->schema, flags, &jerr);
		if (!sd->json && jerr == -EINVAL) {
			sl_kafka_src_err(err, -EINVAL,
					 "kafka source '%s': field names do not form a tree "
					 "of JSON objects",
					 sl_kafka_src_name(cfg));
			return -EINVAL;
		}
		if (!sd->json)
			goto nomem;
		break;
	case SL_KAFKA_FMT_CSV:
		csv.fail_on_decimal_overflow |= cfg->fail_on_decimal_overflow;
		sd->csv = sl_csv_dec_create(sd->schema, &csv);
		if (!sd->csv)
			goto nomem;
		break;
	default:
		break;
	}
	return 0;
nomem:
	sl_kafka_src_err(err, -ENOMEM, "kafka source '%s': out of memory", sl_kafka_src_name(cfg));
	return -ENOMEM;
}

/* Maps every output field to the value, the key or the message, and builds the decoders. */
static int plan_fields(struct kafka_split *k, struct sl_error *err)
{
	const struct sl_kafka_source_cfg *cfg = k->cfg;
	const struct sl_schema *s = cfg->schema;
	int rc, nval = 0, m, idx;

	k->nfields = sl_schema_nfields(s);
	k->val.schema = sl_schema_create();
	k->key.schema = sl_schema_create();
	if (!k->val.schema || !k->key.schema)
		goto nomem;
	for (int i = 0; i < cfg->nkey_fields; i++)
		if (add_field(k->key.schema, s, cfg->key_fields[i]) < 0)
			goto nomem;
	for (int i = 0; i < k->nfields; i++) {
		struct src_field *f = &k->f[i];

		f->type = sl_schema_type(s, i);
		if ((m = meta_of(cfg, i)) >= 0) {
			f->from = FROM_META;
			f->meta = (uint8_t)cfg->meta[m].key;
		} else if (key_field(cfg, i, &idx) && cfg->value_except_key) {
			f->from = FROM_KEY;
			f->idx = (int16_t)idx;
		} else {
			f->from = FROM_VALUE;
			f->idx = (int16_t)nval++;
			if (add_field(k->val.schema, s, i) < 0)
				goto nomem;
		}
	}
	k->direct = nval == k->nfields;
	rc = side_init(&k->val, cfg->value_format, cfg, !k->direct, err);
	if (!rc && cfg->value_except_key && cfg->nkey_fields)
		rc = side_init(&k->key, cfg->key_format, cfg, true, err);
	return rc;
nomem:
	sl_kafka_src_err(err, -ENOMEM, "kafka source '%s': out of memory", sl_kafka_src_name(cfg));
	return -ENOMEM;
}

static void *kafka_open(const void *cfgp, int split, struct sl_error *err)
{
	const struct sl_kafka_source_cfg *cfg = cfgp;
	struct kafka_split *k;
	rd_kafka_resp_err_t e;

	const char *topic;
	int32_t partition;
	bool discovered;

	/* prepare checked the cfg: a split exists only after it succeeded */
	if (!sl_kafka_split_at(cfg, split, &topic, &partition, &discovered)) {
		sl_kafka_src_err(err, -EINVAL,
				 "kafka source '%s': no partition %d (%d at plan time%s)",
				 sl_kafka_src_name(cfg), split, cfg->npartitions,
				 cfg->npartitions ? "" : ": call sl_kafka_source_prepare()");
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		sl_kafka_src_err(err, -ENOMEM, "kafka source '%s': out of memory",
				 sl_kafka_src_name(cfg));
		return NULL;
	}
	k->cfg = cfg;
	k->topic = topic;
	k->partition = partition;
	k->discovered = discovered;
	k->topic_hash = sl_kafka_topic_hash(k->topic);
	k->next = -1;
	k->committable = -1;
	k->end = INT64_MAX;
	k->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : SL_KAFKA_DEFAULT_TIMEOUT_MS;
	if (plan_fields(k, err) < 0)
		goto out_close;
	k->rk = sl_kafka_src_consumer(cfg, err);
	if (!k->rk)
		goto out_close;
	/* errors and callbacks arrive on the queue we poll, not on one nobody serves */
	e = rd_kafka_poll_set_consumer(k->rk);
	k->q = e ? NULL : rd_kafka_queue_get_consumer(k->rk);
	if (!k->q) {
		sl_kafka_src_err(err, -EIO, "kafka source '%s': no consumer queue: %s",
				 sl_kafka_src_name(cfg), rd_kafka_err2str(e));
		goto out_close;
	}
	return k;
out_close:
	kafka_close(k);
	return NULL;
}

/* ---- start: resolving offsets, assigning ------------------------------------------- */

static int64_t specific(const struct sl_kafka_offset *v, int n, int32_t part)
{
	for (int i = 0; i < n; i++)
		if (v[i].partition == part)
			return v[i].offset;
	return -1;
}

/* The first offset whose timestamp is >= ts, or -1 when there is none. */
static int offset_for_time(struct kafka_split *k, int64_t ts, int64_t *out)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_resp_err_t e;

	if (!l)
		return -ENOMEM;
	rd_kafka_topic_partition_list_add(l, k->topic, k->partition)->offset = ts;
	e = rd_kafka_offsets_for_times(k->rk, l, k->timeout_ms);
	if (!e)
		e = l->elems[0].err;
	*out = l->elems[0].offset;
	rd_kafka_topic_partition_list_destroy(l);
	if (e) {
		fprintf(stderr, "sluice: kafka %s/%d: offsets for time %lld: %s\n", k->topic,
			k->partition, (long long)ts, rd_kafka_err2str(e));
		return sl_kafka_errno(e);
	}
	return 0;
}

/* The group's committed offset, or where auto.offset.reset says without one. */
static int group_offset(struct kafka_split *k, int64_t lo, int64_t hi, int64_t *out)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
	const char *reset = prop_value(k->cfg, "auto.offset.reset");
	rd_kafka_resp_err_t e;

	if (!l)
		return -ENOMEM;
	if (!reset)
		reset = "latest"; /* librdkafka's default */
	rd_kafka_topic_partition_list_add(l, k->topic, k->partition);
	e = rd_kafka_committed(k->rk, l, k->timeout_ms);
	if (!e)
		e = l->elems[0].err;
	*out = l->elems[0].offset;
	rd_kafka_topic_partition_list_destroy(l);
	if (e) {
		fprintf(stderr, "sluice: kafka %s/%d: committed offset: %s\n", k->topic,
			k->partition, rd_kafka_err2str(e));
		return sl_kafka_errno(e);
	}
	if (*out >= 0)
		return 0;
	if (!strcmp(reset, "smallest") || !strcmp(reset, "earliest") ||
	    !strcmp(reset, "beginning")) {
		*out = lo;
	} else if (!strcmp(reset, "error")) {
		fprintf(stderr,
			"sluice: kafka %s/%d: no committed offset for the group and "
			"auto.offset.reset is 'error'\n",
			k->topic, k->partition);
		return -ENOENT;
	} else {
		*out = hi;
	}
	return 0;
}

/*
 * The position against the partition's log [lo, hi): a position below lo names records
 * deleted before the job read them (retention while it was down or behind, a broker that
 * lost them): they are gone, so the split goes on at lo and says how many were lost, the
 * least it can lose (librdkafka's default reset goes to hi, past every record still
 * there). A position past hi means the log was truncated or the topic recreated: neither
 * skipping nor re-reading is safe to guess, so the split fails. Returns 0 or -ERANGE.
 */
static int reposition(struct kafka_split *k, int64_t lo, int64_t hi)
{
	if (k->next > hi) {
		fprintf(stderr,
			"sluice: kafka %s/%d: position %lld is past the partition's end %lld: "
			"the topic was recreated or lost records (unclean leader election?); not "
			"guessing where to go on: start the job without this checkpoint or from "
			"another 'scan.startup.mode'\n",
			k->topic, k->partition, (long long)k->next, (long long)hi);
		return -ERANGE;
	}
	if (k->next >= lo)
		return 0;
	fprintf(stderr,
		"sluice: kafka %s/%d: offsets %lld..%lld were deleted before this job read them "
		"(retention, or a broker that lost them): %lld records lost; reading on from "
		"offset %lld\n",
		k->topic, k->partition, (long long)k->next, (long long)lo - 1,
		(long long)(lo - k->next), (long long)lo);
	k->next = lo;
	return 0;
}

/* Assigns the split's partition at k->next. 0 or -errno. */
static int assign_at_next(struct kafka_split *k)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_resp_err_t e;

	if (!l)
		return -ENOMEM;
	rd_kafka_topic_partition_list_add(l, k->topic, k->partition)->offset = k->next;
	e = rd_kafka_assign(k->rk, l);
	rd_kafka_topic_partition_list_destroy(l);
	if (e) {
		fprintf(stderr, "sluice: kafka %s/%d: assign: %s\n", k->topic, k->partition,
			rd_kafka_err2str(e));
		return sl_kafka_errno(e);
	}
	return 0;
}

/*
 * The split's low and high watermarks. A partition whose leader is not known yet (a topic
 * just created, a leader moving) answers at once with NOT_LEADER or LEADER_NOT_AVAILABLE:
 * transient, so asked again every 50 ms until timeout_ms has passed, as Kafka's own
 * consumer retries its offset lookups; any other error, or the last one, is returned.
 * Shard thread, open or error path only: it may wait up to timeout_ms.
 */
static rd_kafka_resp_err_t watermarks(struct kafka_split *k, int64_t *lo, int64_t *hi)
{
	const struct timespec pause = { 0, 50 * 1000 * 1000 };
	struct timespec t;
	rd_kafka_resp_err_t e;
	int64_t start, now;

	clock_gettime(CLOCK_MONOTONIC, &t);
	start = (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
	for (;;) {
		e = rd_kafka_query_watermark_offsets(k->rk, k->topic, k->partition, lo, hi,
						     k->timeout_ms);
		if (e != RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION &&
		    e != RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE)
			return e;
		clock_gettime(CLOCK_MONOTONIC, &t);
		now = (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
		if (now - start >= k->timeout_ms)
			return e;
		nanosleep(&pause, NULL);
	}
}

/*
 * A fetch found the split's position gone from the log (auto.offset.reset 'error'):
 * where the log is now decides, as at the start. Error path only: it waits for the
 * cluster on the shard (at most timeout_ms).
 */
static int out_of_range(struct kafka_split *k)
{
	rd_kafka_resp_err_t e;
	int64_t lo, hi;
	int rc;

	e = watermarks(k, &lo, &hi);
	if (e) {
		fprintf(stderr,
			"sluice: kafka %s/%d: offset %lld out of range, and the "
			"watermark offsets: %s\n",
			k->topic, k->partition, (long long)k->next, rd_kafka_err2str(e));
		return sl_kafka_errno(e);
	}
	if ((rc = reposition(k, lo, hi)) < 0)
		return rc;
	if (k->next >= k->end) {
		k->ended = true;
		return 0;
	}
	return assign_at_next(k); /* the fetcher stopped at the error: start it again */
}

/*
 * Resolves where the split starts (unless seek() set it) and ends, and assigns the
 * partition. Open-time work on the shard: it waits for the cluster (up to timeout_ms per
 * query), once per split.
 */
static int start(struct kafka_split *k)
{
	const struct sl_kafka_source_cfg *cfg = k->cfg;
	rd_kafka_resp_err_t e;
	int64_t lo, hi, off = -1;
	int rc = 0;

	e = watermarks(k, &lo, &hi);
	if (e) {
		fprintf(stderr, "sluice: kafka %s/%d: watermark offsets: %s\n", k->topic,
			k->partition, rd_kafka_err2str(e));
		return sl_kafka_errno(e);
	}
	if (k->next < 0 && k->discovered) {
		k->next = lo; /* a partition found later: from its start, as Flink reads it */
	} else if (k->next < 0) {
		switch (cfg->startup) {
		case SL_KAFKA_START_EARLIEST:
			off = lo;
			break;
		case SL_KAFKA_START_LATEST:
			off = hi;
			break;
		case SL_KAFKA_START_TIMESTAMP:
			rc = offset_for_time(k, cfg->startup_ts_ms, &off);
			if (!rc && off < 0)
				off = hi;
			break;
		case SL_KAFKA_START_SPECIFIC:
			off = specific(cfg->specific, cfg->nspecific, k->partition);
			if (off < 0)
				rc = group_offset(k, lo, hi, &off);
			break;
		case SL_KAFKA_START_GROUP_OFFSETS:
			rc = group_offset(k, lo, hi, &off);
			break;
		}
		if (rc)
			return rc;
		k->next = off;
	}
	switch (cfg->bounded) {
	case SL_KAFKA_UNBOUNDED:
		break;
	case SL_KAFKA_BOUND_LATEST:
		k->end = hi;
		break;
	case SL_KAFKA_BOUND_TIMESTAMP:
		rc = offset_for_time(k, cfg->bounded_ts_ms, &off);
		if (rc)
			return rc;
		k->end = off < 0 ? hi : off;
		break;
	case SL_KAFKA_BOUND_SPECIFIC:
		off = specific(cfg->bounded_specific, cfg->nbounded_specific, k->partition);
		k->end = off < 0 ? hi : off;
		break;
	}
	/* a restored (or group's, or given) offset whose records were deleted since */
	if ((rc = reposition(k, lo, hi)) < 0)
		return rc;
	k->started = true;
	if (k->next >= k->end) {
		k->ended = true;
		return 0;
	}
	return assign_at_next(k);
}

/* ---- polling --------------------------------------------------------------------------- */

static void dead_letter(struct kafka_split *k, struct sl_src_ctx *c, int64_t off, const char *why,
			const void *raw, size_t len)
{
	char where[400];

	if (k->cfg->ignore_parse_errors) {
		k->skipped++;
		return;
	}
	snprintf(where, sizeof where, "%s/%d/%lld", k->topic, k->partition, (long long)off);
	sl_src_dead_letter(c, where, why, raw, len < DL_RAW_MAX ? len : DL_RAW_MAX);
}

/*
 * Decodes one side's bytes into 0..2 rows (rows[]). A NULL payload (a tombstone) gives no row,
 * except with raw, where it is a NULL field. Returns the count or -EINVAL with why. Hot path.
 */
static int decode(struct side *sd, const char *p, size_t len, void *buf,
		  const struct sl_row *rows[2], char *why)
{
	struct sl_row_builder b;

	switch (sd->fmt) {
	case SL_KAFKA_FMT_DEBEZIUM_JSON:
		if (!p)
			return 0;
		return sl_dbz_dec_rows_copy(sd->json, p, len, buf, SL_ROW_SCRATCH, rows, why);
	case SL_KAFKA_FMT_JSON:
		if (!p)
			return 0;
		rows[0] = sl_json_dec_row_copy(sd->json, p, len, buf, SL_ROW_SCRATCH, why);
		return rows[0] ? 1 : -EINVAL;
	case SL_KAFKA_FMT_CSV:
		if (!p)
			return 0;
		if (len && p[len - 1] == '\n')
			len--;
		if (len && p[len - 1] == '\r')
			len--;
		rows[0] = sl_csv_dec_row(sd->csv, p, len, buf, SL_ROW_SCRATCH, why);
		return rows[0] ? 1 : -EINVAL;
	case SL_KAFKA_FMT_RAW:
		sl_rowb_init(&b, buf, SL_ROW_SCRATCH, 1);
		if (p)
			sl_rowb_set_str(&b, 0, p, (uint32_t)len);
		rows[0] = sl_rowb_finish(&b);
		if (!rows[0])
			sl_fmt_why(why, "raw value of %zu bytes does not fit a row", len);
		return rows[0] ? 1 : -EINVAL;
	case SL_KAFKA_FMT_NONE:
		break;
	}
	rows[0] = NULL;
	return 1;
}

static const char *ts_type_name(rd_kafka_timestamp_type_t t)
{
	return t == RD_KAFKA_TIMESTAMP_CREATE_TIME	 ? "CreateTime"
	       : t == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? "LogAppendTime"
							 : "NoTimestampType";
}

/* Builds the output row from a value row, a key row (either may be NULL) and the message.
 * Hot path: field copies only. */
static const struct sl_row *assemble(struct kafka_split *k, struct sl_src_ctx *c,
				     const struct sl_row *v, const struct sl_row *key,
				     const rd_kafka_message_t *m)
{
	struct sl_row_builder b;
	rd_kafka_timestamp_type_t tt;
	int64_t ts;
	const char *s;

	sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, k->nfields);
	for (int i = 0; i < k->nfields; i++) {
		const struct src_field *f = &k->f[i];

		switch (f->from) {
		case FROM_VALUE:
			if (v)
				sl_rowb_copy_field(&b, i, v, f->idx, f->type);
			break;
		case FROM_KEY:
			if (key)
				sl_rowb_copy_field(&b, i, key, f->idx, f->type);
			break;
		case FROM_META:
			switch (f->meta) {
			case SL_KAFKA_META_TIMESTAMP:
				ts = rd_kafka_message_timestamp(m, &tt);
				if (tt != RD_KAFKA_TIMESTAMP_NOT_AVAILABLE)
					sl_rowb_set_i64(&b, i, ts);
				break;
			case SL_KAFKA_META_PARTITION:
				sl_rowb_set_i64(&b, i, m->partition);
				break;
			case SL_KAFKA_META_OFFSET:
				sl_rowb_set_i64(&b, i, m->offset);
				break;
			case SL_KAFKA_META_TOPIC:
				s = k->topic;
				sl_rowb_set_str(&b, i, s, (uint32_t)strlen(s));
				break;
			case SL_KAFKA_META_TIMESTAMP_TYPE:
				rd_kafka_message_timestamp(m, &tt);
				s = ts_type_name(tt);
				sl_rowb_set_str(&b, i, s, (uint32_t)strlen(s));
				break;
			}
			break;
		}
	}
	if (v)
		sl_rowb_set_kind(&b, (enum sl_row_kind)v->kind);
	return sl_rowb_finish(&b);
}

/* Decodes and emits one message. Returns 0, or -errno from emit. Hot path. */
static int take(struct kafka_split *k, struct sl_src_ctx *c, const rd_kafka_message_t *m)
{
	const struct sl_row *rows[2], *keys[2] = { NULL, NULL }, *row;
	char why[SL_FMT_WHY_MAX];
	int n, rc;

	if (k->key.fmt != SL_KAFKA_FMT_NONE) {
		/* no key: its fields are NULL (raw: the one field is) */
		if ((m->key || k->key.fmt == SL_KAFKA_FMT_RAW) &&
		    decode(&k->key, m->key, m->key_len, k->key.buf, keys, why) < 0) {
			dead_letter(k, c, m->offset, why, m->key, m->key_len);
			return 0;
		}
	}
	if (sl_schema_nfields(k->val.schema) == 0) {
		if (!m->payload && k->val.fmt != SL_KAFKA_FMT_RAW)
			return 0;
		rows[0] = NULL;
		n = 1;
	} else {
		n = decode(&k->val, m->payload, m->len, k->direct ? sl_src_scratch(c) : k->val.buf,
			   rows, why);
	}
	if (n < 0) {
		dead_letter(k, c, m->offset, why, m->payload, m->len);
		return 0;
	}
	for (int r = 0; r < n; r++) {
		row = k->direct ? rows[r] : assemble(k, c, rows[r], keys[0], m);
		if (!row) {
			dead_letter(k, c, m->offset, "row larger than the row buffer", m->payload,
				    m->len);
			return 0;
		}
		rc = sl_src_emit(c, row);
		if (rc == -ENOSPC) {
			dead_letter(k, c, m->offset, "row larger than a ring frame", m->payload,
				    m->len);
			return 0;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int poll_messages(struct kafka_split *k, struct sl_src_ctx *c, int max)
{
	ssize_t n;
	int taken = 0, rc = 0;
	char fatal[256];

	if (!k->started && (rc = start(k)) < 0)
		return rc;
	if (k->ended)
		return SL_SRC_EOF;
	if (max > MAX_BATCH)
		max = MAX_BATCH;
	/* timeout 0: take what librdkafka has fetched, never wait on the shard */
	n = rd_kafka_consume_batch_queue(k->q, 0, k->batch, (size_t)max);
	if (n < 0)
		return sl_kafka_errno(rd_kafka_last_error());
	for (ssize_t i = 0; i < n; i++) {
		rd_kafka_message_t *m = k->batch[i];

		if (rc < 0 || k->ended) {
			/* past an error or the end: dropped here, re-read after a restore */
		} else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
			if (m->offset >= k->end)
				k->ended = true;
		} else if (m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET) {
			/* the position's records were deleted under the split (or the log
			 * truncated): the rest of this batch is of the old fetch */
			rc = out_of_range(k);
		} else if (m->err) {
			/* transient (a broker down, a leader moving): librdkafka retries itself
			 * and logs the cause; only a fatal error stops the split */
			if (rd_kafka_fatal_error(k->rk, fatal, sizeof fatal)) {
				fprintf(stderr, "sluice: kafka %s/%d: %s\n", k->topic, k->partition,
					fatal);
				rc = -EIO;
			}
		} else if (m->offset >= k->end) {
			k->ended = true; /* produced after the bound was fixed */
		} else if (m->partition == k->partition && m->offset >= k->next) {
			rc = take(k, c, m);
			if (rc == 0) {
				k->next = m->offset + 1;
				taken++;
				if (k->next >= k->end)
					k->ended = true;
			}
		}
		rd_kafka_message_destroy(m);
	}
	if (rc < 0)
		return rc;
	if (k->ended && !taken)
		return SL_SRC_EOF;
	return taken;
}

static uint64_t side_overflows(const struct side *sd)
{
	return sd->json	 ? sl_json_dec_overflows(sd->json)
	       : sd->csv ? sl_csv_dec_overflows(sd->csv)
			 : 0;
}

/* Polls up to max messages; DECIMAL values made NULL count for the source once a poll. */
static int kafka_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct kafka_split *k = state;
	uint64_t before = side_overflows(&k->val) + side_overflows(&k->key), after;
	int rc = poll_messages(k, c, max);

	after = side_overflows(&k->val) + side_overflows(&k->key);
	if (after != before)
		sl_src_count_overflow(c, after - before);
	return rc;
}

/* ---- checkpoints ------------------------------------------------------------------------ */

/* Commits `off` to the group for monitoring (lag dashboards); the checkpoint holds the
 * position that counts, so a failed commit only shows in librdkafka's log. */
static void commit_async(struct kafka_split *k, int64_t off)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);

	if (!l)
		return;
	rd_kafka_topic_partition_list_add(l, k->topic, k->partition)->offset = off;
	rd_kafka_commit(k->rk, l, 1);
	rd_kafka_topic_partition_list_destroy(l);
}

static int kafka_position(void *state, void *buf, size_t cap, size_t *len)
{
	struct kafka_split *k = state;
	struct kafka_pos p;
	int rc;

	if (!k->started && (rc = start(k)) < 0)
		return rc;
	if (cap < sizeof p)
		return -ENOSPC;
	memset(&p, 0, sizeof p);
	p.offset = k->next;
	p.partition = k->partition;
	p.topic_hash = k->topic_hash;
	memcpy(buf, &p, sizeof p);
	*len = sizeof p;
	k->committable = p.offset; /* committed to the group once the checkpoint completes */
	return 0;
}

/* Checkpoint complete: the group learns the offset it holds (monitoring only; a restore
 * seeks to the checkpoint's position, never to the group's). */
static void kafka_checkpoint_complete(void *state, uint64_t ckpt)
{
	struct kafka_split *k = state;

	(void)ckpt;
	if (k->cfg->commit_offsets && !k->ended && k->committable >= 0)
		commit_async(k, k->committable);
}

/* Observers: the offset reached and the partition's high watermark as librdkafka last
 * saw it in a fetch response (cached: no request to the broker), hence the lag. */
static void kafka_progress(void *state, struct sl_src_progress *p)
{
	struct kafka_split *k = state;
	int64_t lo = -1, hi = -1;

	snprintf(p->name, sizeof p->name, "%s/%d", k->topic, (int)k->partition);
	p->kind = "kafka partition";
	if (!k->started)
		return;
	p->pos = k->next;
	if (rd_kafka_get_watermark_offsets(k->rk, k->topic, k->partition, &lo, &hi) ==
		    RD_KAFKA_RESP_ERR_NO_ERROR &&
	    hi >= 0) {
		p->end = hi;
		p->lag = hi > k->next ? hi - k->next : 0;
	}
}

static int kafka_seek(void *state, const void *pos, size_t len)
{
	struct kafka_split *k = state;
	struct kafka_pos p;

	if (len != sizeof p || k->started)
		return -EINVAL;
	memcpy(&p, pos, sizeof p);
	if (p.offset < 0)
		return -EINVAL;
	if (p.partition != k->partition || p.topic_hash != k->topic_hash) {
		fprintf(stderr,
			"sluice: kafka %s/%d: the checkpoint's position is of another "
			"partition (%d of a topic with hash %08x): the topics or their partitions "
			"changed since\n",
			k->topic, k->partition, p.partition, p.topic_hash);
		return -ESTALE;
	}
	k->next = p.offset;
	return 0;
}

const struct sl_source_ops sl_kafka_source_ops = {
	.name = "kafka",
	.nsplits = sl_kafka_splits_count,
	.open = kafka_open,
	.poll = kafka_poll,
	.close = kafka_close,
	.position = kafka_position,
	.seek = kafka_seek,
	.checkpoint_complete = kafka_checkpoint_complete,
	.splits_grow = sl_kafka_splits_grow,
	.discover = sl_kafka_splits_discover,
	.restore_layout = sl_kafka_splits_restore_layout,
	.progress = kafka_progress,
};
