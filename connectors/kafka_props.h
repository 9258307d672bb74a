/*
 * kafka_props.h - what the Kafka source and sink share: librdkafka configuration from the
 * SQL `properties.*` options (or the C API's key/value pairs), one-line error text, and
 * topic metadata (partition count) at plan time.
 *
 * Threads: plan time or a split's open on its shard; nothing here runs per record.
 */
#ifndef SL_CONNECTORS_KAFKA_PROPS_H
#define SL_CONNECTORS_KAFKA_PROPS_H

#include <stddef.h>

#include <librdkafka/rdkafka.h>

/* The prefix Flink's Kafka connector uses for options passed through to the client. */
#define SL_KAFKA_PROPS_PREFIX "properties."

/*
 * Set n librdkafka properties on conf. keys[i] may carry the "properties." prefix (it is
 * stripped) or be a bare librdkafka name ("bootstrap.servers"). Stops at the first property
 * librdkafka rejects. Returns 0, or -EINVAL with "property 'KEY': <librdkafka's reason>" in
 * err (always NUL-terminated when errcap > 0). conf stays owned by the caller.
 */
int sl_kafka_props_apply(rd_kafka_conf_t *conf, const char *const *keys, const char *const *vals,
			 int n, char *err, size_t errcap);

/* One property; same contract as sl_kafka_props_apply(). */
int sl_kafka_props_set(rd_kafka_conf_t *conf, const char *key, const char *val, char *err,
		       size_t errcap);

/*
 * Number of partitions of topic, asked of the cluster rk talks to (any handle type), waiting
 * at most timeout_ms. Returns the count (> 0), -ENOENT if the topic does not exist,
 * -ETIMEDOUT or -EIO on a broker error, with the reason in err.
 */
int sl_kafka_partition_count(rd_kafka_t *rk, const char *topic, int timeout_ms, char *err,
			     size_t errcap);

/* librdkafka error code as -errno for our 0/-errno convention (-EIO when none fits). */
int sl_kafka_errno(rd_kafka_resp_err_t e);

#endif
