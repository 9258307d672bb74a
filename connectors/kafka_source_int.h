/*
 * kafka_source_int.h - what the Kafka source's two files share, not part of its interface
 * (kafka_source.h): kafka_source.c runs a split's consumer (open, start, poll, positions)
 * and checks a cfg; kafka_splits.c keeps the split list (prepare, discovery, a restore's
 * numbering). Threads as kafka_source.h says.
 */
#ifndef SL_CONNECTORS_KAFKA_SOURCE_INT_H
#define SL_CONNECTORS_KAFKA_SOURCE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "kafka_source.h"

/* How long a question to the cluster may take when the cfg sets no timeout_ms. */
#define SL_KAFKA_DEFAULT_TIMEOUT_MS 10000

/*
 * A position names its partition as well as the next offset, so a restore whose splits map
 * to other partitions (a topic added to a list or a pattern, partitions added) fails
 * instead of reading one partition from another's offset.
 */
struct kafka_pos {
	int64_t offset;
	int32_t partition;
	uint32_t topic_hash;
};

/* A topic's name as positions carry it (FNV-1a, 32 bits): a restore checks it against the
 * split's topic. */
static inline uint32_t sl_kafka_topic_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* kafka_source.c */

/* Sets err to code and the formatted message. */
void sl_kafka_src_err(struct sl_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The source's name in messages: its topic, its first listed topic, or its pattern. */
const char *sl_kafka_src_name(const struct sl_kafka_source_cfg *cfg);
/* Whether the user set librdkafka property `name` (with or without 'properties.'). */
bool sl_kafka_src_has_prop(const struct sl_kafka_source_cfg *cfg, const char *name);
/* A consumer configured as the source needs it (make_conf). NULL with err set. */
rd_kafka_t *sl_kafka_src_consumer(const struct sl_kafka_source_cfg *cfg, struct sl_error *err);
/* 0, or -EINVAL with err when the cfg does not hold together. */
int sl_kafka_src_check_cfg(const struct sl_kafka_source_cfg *cfg, struct sl_error *err);

/* kafka_splits.c: the source ops that read or change the split list */

int sl_kafka_splits_count(const void *cfgp);
/* Split `split` as the job runs it. false: there is no such split. */
bool sl_kafka_split_at(const struct sl_kafka_source_cfg *cfg, int split, const char **topic,
		       int32_t *partition, bool *discovered);
bool sl_kafka_splits_grow(const void *cfgp);
int sl_kafka_splits_discover(const void *cfgp, int64_t now_ms);
int sl_kafka_splits_restore_layout(const void *cfgp, int n, const void *const *pos,
				   const size_t *len, struct sl_error *err);

#endif
