/*
 * kafka_broker.c - sluice-kafka-broker: a development Kafka cluster for demos and tests.
 *
 *   sluice-kafka-broker [--brokers N] [--topic NAME:PARTITIONS]... [--replication R]
 *
 * Starts librdkafka's mock cluster (N brokers in this process, each listening on
 * 127.0.0.1), creates the topics, prints the bootstrap address ("127.0.0.1:P1,127.0.0.1:P2")
 * as the first line of stdout, flushed, and serves until SIGINT or SIGTERM. Any Kafka client
 * reaches it (kcat -b ADDR ...); topics not created here are auto-created on first use by
 * the mock cluster, with its default partition count.
 *
 * Ports: librdkafka 2.0.2's mock brokers bind ephemeral ports and have no API to choose one,
 * so there is no --port: read the address from the first line (scripts: `read addr`). It
 * holds the data in memory only; nothing survives a restart.
 *
 * The mock cluster lives inside a client handle (rd_kafka_mock_cluster_new() takes one and
 * runs the brokers on its own threads); the handle does nothing else.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#define MAX_TOPICS 64

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: sluice-kafka-broker [--brokers N] [--topic NAME:PARTITIONS]... "
		   "[--replication R]\n"
		   "  Starts an in-memory Kafka cluster on 127.0.0.1 (librdkafka's mock "
		   "cluster),\n"
		   "  prints its bootstrap address on the first line and serves until "
		   "SIGINT/SIGTERM.\n");
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

int main(int argc, char **argv)
{
	const char *topics[MAX_TOPICS];
	int parts[MAX_TOPICS], ntopics = 0, nbrokers = 1, repl = 1;
	rd_kafka_mock_cluster_t *mc;
	struct sigaction sa;
	rd_kafka_conf_t *conf;
	char errstr[512];
	rd_kafka_t *rk;
	int rc = 1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!v) {
			usage(stderr);
			return 2;
		}
		i++;
		if (!strcmp(a, "--brokers")) {
			if (parse_int(v, 1, 64, &nbrokers)) {
				fprintf(stderr, "sluice-kafka-broker: --brokers %s: want 1..64\n",
					v);
				return 2;
			}
		} else if (!strcmp(a, "--replication")) {
			if (parse_int(v, 1, 64, &repl)) {
				fprintf(stderr,
					"sluice-kafka-broker: --replication %s: want 1..64\n", v);
				return 2;
			}
		} else if (!strcmp(a, "--topic")) {
			char *colon = strrchr(v, ':');

			if (ntopics == MAX_TOPICS) {
				fprintf(stderr, "sluice-kafka-broker: at most %d topics\n",
					MAX_TOPICS);
				return 2;
			}
			parts[ntopics] = 1;
			if (colon) {
				*colon = '\0';
				if (parse_int(colon + 1, 1, 100000, &parts[ntopics])) {
					fprintf(stderr,
						"sluice-kafka-broker: --topic %s:%s: the "
						"partition count must be 1..100000\n",
						v, colon + 1);
					return 2;
				}
			}
			if (!*v) {
				fprintf(stderr, "sluice-kafka-broker: --topic needs a name\n");
				return 2;
			}
			topics[ntopics++] = v;
		} else if (!strcmp(a, "--port")) {
			fprintf(stderr,
				"sluice-kafka-broker: --port is not available: librdkafka "
				"2.0.2's mock brokers bind ephemeral ports; read the address from "
				"the first line of output\n");
			return 2;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (repl > nbrokers) {
		fprintf(stderr, "sluice-kafka-broker: --replication %d exceeds --brokers %d\n",
			repl, nbrokers);
		return 2;
	}

	conf = rd_kafka_conf_new();
	/* the handle only hosts the cluster: keep it from logging its own connection noise */
	rd_kafka_conf_set(conf, "log_level", "3", NULL, 0);
	rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
	if (!rk) {
		fprintf(stderr, "sluice-kafka-broker: %s\n", errstr);
		rd_kafka_conf_destroy(conf);
		return 1;
	}
	mc = rd_kafka_mock_cluster_new(rk, nbrokers);
	if (!mc) {
		fprintf(stderr, "sluice-kafka-broker: cannot start the mock cluster\n");
		goto out_rk;
	}
	for (int i = 0; i < ntopics; i++) {
		rd_kafka_resp_err_t e = rd_kafka_mock_topic_create(mc, topics[i], parts[i], repl);

		if (e) {
			fprintf(stderr, "sluice-kafka-broker: topic '%s': %s\n", topics[i],
				rd_kafka_err2str(e));
			goto out_mc;
		}
	}

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
	fflush(stdout);
	for (int i = 0; i < ntopics; i++)
		fprintf(stderr, "sluice-kafka-broker: topic %s, %d partition%s\n", topics[i],
			parts[i], parts[i] == 1 ? "" : "s");
	/* the brokers run on the cluster's threads; this one only waits for a signal */
	while (!stop)
		pause();
	rc = 0;
out_mc:
	rd_kafka_mock_cluster_destroy(mc);
out_rk:
	rd_kafka_destroy(rk);
	return rc;
}
