/*
 * kafka_sink.h - the Kafka sink: rows encoded (JSON, CSV or raw value; optional key from
 * key fields) and produced to one topic, with Flink's three delivery guarantees:
 *
 *   none           produce and forget: failed deliveries are counted and the first one is
 *                  reported on stderr, the job goes on
 *   at-least-once  every checkpoint waits until all rows produced so far are acknowledged
 *                  (any failed delivery fails the checkpoint and the job)
 *   exactly-once   Kafka transactions, one per checkpoint epoch, committed after the
 *                  checkpoint's manifest is durable, with a commit marker that recovery
 *                  reads back (DESIGN §7; the protocol is described in kafka_sink.c)
 *
 * `upsert` makes it Flink's upsert-kafka: the key fields are the table's primary key, +I/+U
 * rows produce their value, -U/-D rows a tombstone (null value) for their key. Without it,
 * only +I rows are accepted (like Flink's 'kafka' sink with an append-only format).
 *
 * Configuration is plain data like the embedded connectors (sluice/connectors.h): zero it,
 * fill it, pass it to sl_stream_sink() with sl_kafka_sink_ops. The job borrows it and
 * everything it points to until sl_job_destroy(); one cfg serves one sink of one job.
 *
 * Threads: ops on each instance's shard; commit() on the checkpoint coordinator (or the
 * recovering thread); abort_pending() during recovery.
 */
#ifndef SL_CONNECTORS_KAFKA_SINK_H
#define SL_CONNECTORS_KAFKA_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/connectors.h>
#include <sluice/job.h>
#include <sluice/types.h>

enum sl_kafka_guarantee {
	SL_KAFKA_AT_LEAST_ONCE = 0, /* Flink's default */
	SL_KAFKA_NONE,
	SL_KAFKA_EXACTLY_ONCE,
};

/* How a message's key or value is written. NONE: no key (value: JSON). */
enum sl_kafka_sink_fmt {
	SL_KSINK_NONE = 0,
	SL_KSINK_JSON, /* one JSON object (sl_json_write_row), no trailing newline */
	SL_KSINK_CSV,  /* one CSV record (sl_csv_write_row), no trailing newline */
	SL_KSINK_RAW,  /* the one STRING field's bytes; NULL gives a null key / value */
};

/* Flink's sink.partitioner. */
enum sl_kafka_partitioner {
	SL_KAFKA_PART_DEFAULT = 0, /* Kafka's: murmur2 of the key, random without one */
	SL_KAFKA_PART_FIXED,	   /* instance k writes partition k mod partitions */
	SL_KAFKA_PART_ROUND_ROBIN, /* each instance cycles over all partitions */
};

struct sl_kafka_sink_cfg {
	const char *topic;
	/* librdkafka properties ("bootstrap.servers" required; "properties." prefix allowed),
	 * applied after the sink's defaults (partitioner murmur2_random, as Java clients) */
	const char *const *prop_keys;
	const char *const *prop_vals;
	int nprops;

	enum sl_kafka_sink_fmt value_format; /* NONE means JSON */
	enum sl_kafka_sink_fmt key_format;   /* NONE: messages have no key */
	const int *key_fields;		     /* schema fields of the key, in key order */
	int nkey_fields;
	bool value_except_key;	/* value.fields-include EXCEPT_KEY */
	struct sl_csv_opts csv; /* CSV key/value: delimiter, null literal */
	bool upsert;		/* upsert-kafka (above); needs key fields */
	enum sl_kafka_partitioner partitioner;

	enum sl_kafka_guarantee guarantee;
	/* exactly-once: transactional ids are "<prefix>-0" and "<prefix>-1"; the prefix must be
	 * unique per job (two jobs with one prefix fence each other), as in Flink */
	const char *transactional_id_prefix;
	const char *marker_topic;	/* NULL: "<prefix>__sluice_markers" */
	int64_t checkpoint_interval_ms; /* sizes the transaction timeout */
	int64_t transaction_timeout_ms; /* 0: max(60 s, 3 x interval + 10 s) */
	int timeout_ms;			/* flush, commit, fencing; 0: 60000 */
	uint64_t *errors;		/* optional: failed deliveries (none), summed */
};

/*
 * Sink ops. write() never waits forever: a full producer queue is served for at most
 * timeout_ms, then the write fails (-ETIMEDOUT). Every failure of a delivery, a flush, a
 * commit or fencing is printed once on stderr as one line naming the topic (and partition)
 * and librdkafka's reason, and returned as -errno: -EIO (delivery), -ETIMEDOUT, -EPERM (this
 * producer was fenced by a newer one with the same transactional id).
 * Exactly-once: precommit()'s meta names the epoch's transaction; commit() commits it (once
 * per checkpoint however many instances' metas name it), and in recovery (no instance of
 * this run open) fences the old producers and answers from the marker topic: 0 when the
 * checkpoint's marker is committed, -ESTALE when not. abort_pending() (shard 0) fences them.
 */
extern const struct sl_sink_ops sl_kafka_sink_ops;

/* The first error of instance `state` as a one-line message, or "" if none. Any thread. */
const char *sl_kafka_sink_error(void *state);

#endif
