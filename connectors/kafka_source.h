/*
 * kafka_source.h - the Kafka source: one split per partition of its topics, each consumed on
 * the shard that owns the split by its own librdkafka consumer (an assignment of that one
 * partition, no group rebalancing), records decoded with the value format (and the key
 * format for key fields), offsets kept in checkpoints.
 *
 * Configuration is plain data like the embedded connectors (sluice/connectors.h): zero it,
 * fill it, call sl_kafka_source_prepare() once at plan time (it asks the cluster for the
 * partition counts: the splits at the start; with discovery_interval_ms the coordinator
 * adds partitions found later), pass it to sl_job_source() with
 * sl_kafka_source_ops. The job borrows it and everything it points to until
 * sl_job_destroy(); then sl_kafka_source_cfg_fini() frees what prepare allocated.
 *
 * Threads: prepare at plan time, one thread; the ops on each split's shard, but discover
 * and restore_layout on the coordinator's thread (the one running sl_job_run).
 */
#ifndef SL_CONNECTORS_KAFKA_SOURCE_H
#define SL_CONNECTORS_KAFKA_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/connectors.h>
#include <sluice/job.h>
#include <sluice/types.h>

/* How a record's bytes (value, or key) are decoded. NONE: not decoded (no key format). */
enum sl_kafka_format {
	SL_KAFKA_FMT_NONE = 0,
	SL_KAFKA_FMT_JSON,
	SL_KAFKA_FMT_CSV,
	SL_KAFKA_FMT_DEBEZIUM_JSON, /* value only: 0..2 changelog rows per message */
	SL_KAFKA_FMT_RAW,	    /* the bytes as the one STRING field; a null value is NULL */
};

/* Where each partition starts when the job does not restore a checkpoint (Flink's
 * scan.startup.mode). The offset is resolved to a number when the split starts, so a
 * checkpoint taken before the first record resumes exactly there. */
enum sl_kafka_startup {
	SL_KAFKA_START_GROUP_OFFSETS = 0, /* the group's committed offset, else auto.offset.reset
					   * (librdkafka's default: latest) */
	SL_KAFKA_START_EARLIEST,
	SL_KAFKA_START_LATEST,
	SL_KAFKA_START_TIMESTAMP, /* first offset with timestamp >= startup_ts_ms */
	SL_KAFKA_START_SPECIFIC,  /* specific[]; unlisted partitions: group offsets */
};

/* Where a partition ends (Flink's scan.bounded.mode); resolved when the split starts. */
enum sl_kafka_bound {
	SL_KAFKA_UNBOUNDED = 0,
	SL_KAFKA_BOUND_LATEST,	  /* the high watermark when the split starts */
	SL_KAFKA_BOUND_TIMESTAMP, /* before the first record with timestamp >= bounded_ts_ms */
	SL_KAFKA_BOUND_SPECIFIC,  /* bounded_specific[]: end offset (exclusive); unlisted
				   * partitions end at their high watermark */
};

/* A metadata column (Flink: `col TYPE METADATA FROM 'key'`). */
enum sl_kafka_meta {
	SL_KAFKA_META_TIMESTAMP = 1,  /* TIMESTAMP_LTZ(3), TIMESTAMP(3) or BIGINT ms; NULL when the
				       * message has none */
	SL_KAFKA_META_PARTITION,      /* INT or BIGINT */
	SL_KAFKA_META_OFFSET,	      /* BIGINT */
	SL_KAFKA_META_TOPIC,	      /* STRING */
	SL_KAFKA_META_TIMESTAMP_TYPE, /* STRING: NoTimestampType, CreateTime, LogAppendTime */
};

struct sl_kafka_meta_col {
	int field; /* schema field filled from the message, not from a format */
	enum sl_kafka_meta key;
};

struct sl_kafka_offset {
	int32_t partition;
	int64_t offset;
};

#define SL_KAFKA_MAX_META 8

/* Split k of a prepared source: a partition of one of its topics. */
struct sl_kafka_split_ref {
	const char *topic; /* owned by the cfg (see sl_kafka_source_cfg_fini()) */
	int32_t partition;
};

struct sl_kafka_source_cfg {
	/* What to read: one topic, a list, or a pattern (exactly one of them). */
	const char *topic;
	const char *const *topics; /* ntopics topics (Flink's 'topic' = 'a;b') */
	int ntopics;
	const char *topic_pattern; /* POSIX extended regex matched against whole topic
				    * names when the job is planned; "__" (internal)
				    * topics never match */
	/* librdkafka properties ("bootstrap.servers" required; "properties." prefix allowed).
	 * group.id is used only to start from and commit offsets for monitoring: the split's
	 * position lives in checkpoints. Defaults applied before these: a bounded prefetch
	 * queue (queued.max.messages.kbytes 4096) and enable.auto.commit false. */
	const char *const *prop_keys;
	const char *const *prop_vals;
	int nprops;

	const struct sl_schema *schema; /* rows are built for this schema, borrowed */
	enum sl_kafka_format value_format;
	enum sl_kafka_format key_format; /* NONE: keys are not read */
	const int *key_fields;		 /* schema fields decoded from the key, in the key
					  * format's order (CSV position, JSON by name) */
	int nkey_fields;
	bool value_except_key; /* value.fields-include EXCEPT_KEY: key fields are
				* not in the value (ALL: they are, and the value's
				* win, as in Flink) */
	struct sl_kafka_meta_col meta[SL_KAFKA_MAX_META];
	int nmeta;

	struct sl_csv_opts csv; /* CSV value/key: delimiter, null literal */
	bool json_fail_on_missing;
	bool fail_on_decimal_overflow; /* a DECIMAL beyond its precision is a record error */
	bool ignore_parse_errors;      /* skip and count bad records, no dead letters */
	uint64_t *skipped;	       /* optional: skipped records of all splits */

	enum sl_kafka_startup startup;
	int64_t startup_ts_ms;
	const struct sl_kafka_offset *specific; /* SL_KAFKA_START_SPECIFIC (the partition
						 * numbers of every topic read) */
	int nspecific;
	enum sl_kafka_bound bounded;
	int64_t bounded_ts_ms;
	const struct sl_kafka_offset *bounded_specific;
	int nbounded_specific;
	int timeout_ms; /* metadata and offset queries; 0: 10000 */
	/* Flink's scan.topic-partition-discovery.interval: every so often the coordinator asks
	 * the cluster for the topics' (pattern: the matching topics') partitions; new ones
	 * become splits that start at their earliest offset. <= 0: off. Off for a bounded
	 * source, as in Flink. */
	int64_t discovery_interval_ms;

	/* set by sl_kafka_source_prepare(): the splits, topics in name order, then their
	 * partitions, so a restore with the same topics and partition counts maps every
	 * checkpointed split to the same partition (a position names its partition, and a
	 * seek onto another fails) */
	int npartitions;
	struct sl_kafka_split_ref *split_refs;
	char *topic_names;   /* storage of split_refs[].topic */
	bool commit_offsets; /* commit each checkpoint's offsets to group.id
			      * (monitoring); the SQL mapping sets it when
			      * properties.group.id is given */
	/* set by sl_kafka_source_prepare(): the splits as the job runs them (the plan's,
	 * renumbered as a restored checkpoint had them, then those found later); opaque,
	 * shared by the coordinator and the shards under its own lock */
	struct sl_kafka_splits *splits;
};

/*
 * Plan time: checks that the configuration holds together (one way to name topics, key and
 * metadata fields distinct fields of the schema, the formats they need), resolves the topics
 * (the pattern against the cluster's topics) and asks the cluster for their partition
 * counts: cfg->npartitions splits, described by cfg->split_refs. Returns 0, or -errno with
 * a one-line reason in err (an unknown topic or a pattern matching none: -ENOENT; no broker
 * answering within timeout_ms: -ETIMEDOUT). The columns' types are taken as fitting the
 * metadata keys and formats: the SQL binding (sql_kafka.c) refuses a table where they do
 * not, at the option's place.
 */
int sl_kafka_source_prepare(struct sl_kafka_source_cfg *cfg, struct sl_error *err);

/* Frees what sl_kafka_source_prepare() allocated (split_refs, topic_names, splits); the
 * rest of cfg is the caller's. Accepts a cfg never prepared. Call after sl_job_destroy(). */
void sl_kafka_source_cfg_fini(struct sl_kafka_source_cfg *cfg);

/*
 * Source ops. Split k is split_refs[k] until a restore renumbers the splits as the
 * checkpoint had them (restore_layout) or discovery adds splits npartitions, ... (the
 * source's splits grow while discovery_interval_ms > 0 and it is unbounded). poll() takes at most
 * `max` messages already fetched (never waits); position() is the next offset to read (8 bytes),
 * seek() continues from one. An undecodable message goes to the dead-letter output as
 * "topic/partition/offset". A position whose records were deleted before they were read
 * goes on at the partition's first offset, saying on stderr how many were lost; one past
 * the partition's end fails poll() with -ERANGE.
 */
extern const struct sl_source_ops sl_kafka_source_ops;

#endif
