/*
 * kafka_props.c - librdkafka configuration and metadata helpers shared by the Kafka source
 * and sink (see kafka_props.h). Plan/open time only; errors are one line naming the property
 * or topic.
 */
#include "kafka_props.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int sl_kafka_props_set(rd_kafka_conf_t *conf, const char *key, const char *val, char *err,
		       size_t errcap)
{
	char why[256];
	size_t plen = strlen(SL_KAFKA_PROPS_PREFIX);

	if (!strncmp(key, SL_KAFKA_PROPS_PREFIX, plen))
		key += plen;
	why[0] = '\0';
	if (rd_kafka_conf_set(conf, key, val, why, sizeof(why)) != RD_KAFKA_CONF_OK) {
		if (errcap)
			snprintf(err, errcap, "property '%s': %s", key, why);
		return -EINVAL;
	}
	return 0;
}

int sl_kafka_props_apply(rd_kafka_conf_t *conf, const char *const *keys, const char *const *vals,
			 int n, char *err, size_t errcap)
{
	for (int i = 0; i < n; i++) {
		int rc = sl_kafka_props_set(conf, keys[i], vals[i], err, errcap);

		if (rc)
			return rc;
	}
	return 0;
}

int sl_kafka_errno(rd_kafka_resp_err_t e)
{
	switch (e) {
	case RD_KAFKA_RESP_ERR_NO_ERROR:
		return 0;
	case RD_KAFKA_RESP_ERR__TIMED_OUT:
	case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
		return -ETIMEDOUT;
	case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
	case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
	case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
		return -ENOENT;
	case RD_KAFKA_RESP_ERR__INVALID_ARG:
	case RD_KAFKA_RESP_ERR_INVALID_CONFIG:
		return -EINVAL;
	case RD_KAFKA_RESP_ERR__NOENT:
		return -ENOENT;
	case RD_KAFKA_RESP_ERR__QUEUE_FULL:
		return -ENOBUFS;
	case RD_KAFKA_RESP_ERR__FENCED:
	case RD_KAFKA_RESP_ERR_PRODUCER_FENCED:
	case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
		return -ESTALE;
	case RD_KAFKA_RESP_ERR__TRANSPORT:
	case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
		return -ECONNREFUSED;
	default:
		return -EIO;
	}
}

int sl_kafka_partition_count(rd_kafka_t *rk, const char *topic, int timeout_ms, char *err,
			     size_t errcap)
{
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_topic_t *rkt;
	rd_kafka_resp_err_t e;
	int rc;

	/* A topic handle asks for this topic only (not the whole cluster). It does not create
	 * the topic: auto-creation is a broker setting, and the mock cluster's default is
	 * off unless the client asks (allow.auto.create.topics, consumers only). */
	rkt = rd_kafka_topic_new(rk, topic, NULL);
	if (!rkt) {
		rc = sl_kafka_errno(rd_kafka_last_error());
		if (errcap)
			snprintf(err, errcap, "topic '%s': %s", topic,
				 rd_kafka_err2str(rd_kafka_last_error()));
		return rc;
	}
	e = rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms);
	if (e) {
		rc = sl_kafka_errno(e);
		if (errcap)
			snprintf(err, errcap, "topic '%s': metadata: %s", topic,
				 rd_kafka_err2str(e));
		goto out_topic;
	}
	if (md->topic_cnt < 1 || md->topics[0].err || md->topics[0].partition_cnt < 1) {
		e = md->topic_cnt < 1 ? RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART : md->topics[0].err;
		if (!e)
			e = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
		rc = sl_kafka_errno(e);
		if (rc == -EIO && e == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE)
			rc = -EAGAIN;
		if (errcap)
			snprintf(err, errcap, "topic '%s': %s", topic, rd_kafka_err2str(e));
		goto out_md;
	}
	rc = md->topics[0].partition_cnt;
out_md:
	rd_kafka_metadata_destroy(md);
out_topic:
	rd_kafka_topic_destroy(rkt);
	return rc;
}
