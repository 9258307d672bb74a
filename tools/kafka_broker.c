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
 *
 * Faults, while it runs: one command a line on stdin, each answered by one line on stdout,
 * "ok <command>" once the cluster has applied it, or "err <command>: <reason>" (a test
 * waits for the answer, so the fault is in place before it goes on):
 *
 *   error <Api|key> <count> <code>  the next <count> requests of that API (Produce, Fetch,
 *                                   EndTxn, AddPartitionsToTxn, ... or its number) fail
 *                                   with <code> (NOT_LEADER_FOR_PARTITION, ... or its
 *                                   number), on whichever broker they reach
 *   clear <Api|key>                 drops the errors still queued for that API
 *   down <broker> / up <broker>     a broker (1..N) stops / resumes answering
 *   leader <topic> <part> <broker>  moves the partition's leadership
 *   topic <name> <partitions>       creates a topic (the mock cannot add partitions to
 *                                   an existing one: a topic created later is how a test
 *                                   shows a topic-pattern source finding new partitions)
 *
 * At end of stdin (no commands: e.g. </dev/null) it just serves until the signal.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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

/* Kafka API keys by name (the protocol's numbers), for the error command. */
static const struct {
	const char *name;
	int16_t key;
} apis[] = {
	{ "Produce", 0 },	   { "Fetch", 1 },
	{ "ListOffsets", 2 },	   { "Metadata", 3 },
	{ "OffsetCommit", 8 },	   { "OffsetFetch", 9 },
	{ "FindCoordinator", 10 }, { "JoinGroup", 11 },
	{ "Heartbeat", 12 },	   { "LeaveGroup", 13 },
	{ "SyncGroup", 14 },	   { "ApiVersions", 18 },
	{ "InitProducerId", 22 },  { "AddPartitionsToTxn", 24 },
	{ "AddOffsetsToTxn", 25 }, { "EndTxn", 26 },
	{ "TxnOffsetCommit", 28 },
};

static int parse_api(const char *s, int16_t *key)
{
	int v;

	for (size_t i = 0; i < sizeof apis / sizeof apis[0]; i++)
		if (!strcasecmp(s, apis[i].name)) {
			*key = apis[i].key;
			return 0;
		}
	if (parse_int(s, 0, 1000, &v))
		return -EINVAL;
	*key = (int16_t)v;
	return 0;
}

/* An error code by its name (librdkafka's, without RD_KAFKA_RESP_ERR_) or number. */
static int parse_errcode(const char *s, rd_kafka_resp_err_t *out)
{
	const struct rd_kafka_err_desc *d;
	size_t n;
	int v;

	if (!strncmp(s, "RD_KAFKA_RESP_ERR_", 18))
		s += 18;
	rd_kafka_get_err_descs(&d, &n);
	for (size_t i = 0; i < n; i++)
		if (d[i].name && d[i].code > 0 && !strcasecmp(s, d[i].name)) {
			*out = d[i].code;
			return 0;
		}
	if (parse_int(s, 1, 10000, &v))
		return -EINVAL;
	*out = (rd_kafka_resp_err_t)v;
	return 0;
}

/* Runs one command line; writes the reason of a refusal into why. 0 or -EINVAL. */
static int run_command(rd_kafka_mock_cluster_t *mc, int nbrokers, char *line, char *why, size_t cap)
{
	char *argv[5], *save = NULL;
	int argc = 0, a, b;
	rd_kafka_resp_err_t e = 0, code;
	int16_t key;

	for (char *t = strtok_r(line, " \t\r\n", &save); t && argc < 5;
	     t = strtok_r(NULL, " \t\r\n", &save))
		argv[argc++] = t;
	if (!argc) {
		snprintf(why, cap, "empty command");
		return -EINVAL;
	}
	if (!strcmp(argv[0], "error") && argc == 4) {
		if (parse_api(argv[1], &key) || parse_int(argv[2], 1, 100000, &a) ||
		    parse_errcode(argv[3], &code)) {
			snprintf(why, cap, "want error <Api|key> <count> <code>");
			return -EINVAL;
		}
		/* the count-and-codes form: <count> codes, here all the same */
		rd_kafka_resp_err_t *v = malloc((size_t)a * sizeof(*v));

		if (!v) {
			snprintf(why, cap, "out of memory");
			return -EINVAL;
		}
		for (int i = 0; i < a; i++)
			v[i] = code;
		rd_kafka_mock_push_request_errors_array(mc, key, (size_t)a, v);
		free(v);
		return 0;
	}
	if (!strcmp(argv[0], "clear") && argc == 2) {
		if (parse_api(argv[1], &key)) {
			snprintf(why, cap, "want clear <Api|key>");
			return -EINVAL;
		}
		rd_kafka_mock_clear_request_errors(mc, key);
		return 0;
	}
	if ((!strcmp(argv[0], "down") || !strcmp(argv[0], "up")) && argc == 2) {
		if (parse_int(argv[1], 1, nbrokers, &b)) {
			snprintf(why, cap, "want %s <broker 1..%d>", argv[0], nbrokers);
			return -EINVAL;
		}
		e = argv[0][0] == 'd' ? rd_kafka_mock_broker_set_down(mc, b)
				      : rd_kafka_mock_broker_set_up(mc, b);
	} else if (!strcmp(argv[0], "leader") && argc == 4) {
		if (parse_int(argv[2], 0, 100000, &a) || parse_int(argv[3], 1, nbrokers, &b)) {
			snprintf(why, cap, "want leader <topic> <partition> <broker 1..%d>",
				 nbrokers);
			return -EINVAL;
		}
		e = rd_kafka_mock_partition_set_leader(mc, argv[1], a, b);
	} else if (!strcmp(argv[0], "topic") && argc == 3) {
		if (parse_int(argv[2], 1, 100000, &a)) {
			snprintf(why, cap, "want topic <name> <partitions 1..100000>");
			return -EINVAL;
		}
		e = rd_kafka_mock_topic_create(mc, argv[1], a, 1);
	} else {
		snprintf(why, cap,
			 "unknown command (known: error, clear, down, up, leader, "
			 "topic)");
		return -EINVAL;
	}
	if (e) {
		snprintf(why, cap, "%s", rd_kafka_err2str(e));
		return -EINVAL;
	}
	return 0;
}

/* Serves stdin's commands until a signal; at end of stdin, only waits for the signal. */
static void serve(rd_kafka_mock_cluster_t *mc, int nbrokers)
{
	char line[512], echo[512], why[256];

	while (!stop) {
		size_t n;

		if (!fgets(line, sizeof line, stdin)) {
			if (ferror(stdin) && errno == EINTR) {
				clearerr(stdin);
				continue;
			}
			break;
		}
		n = strcspn(line, "\r\n");
		line[n] = '\0';
		snprintf(echo, sizeof echo, "%s", line);
		if (run_command(mc, nbrokers, line, why, sizeof why))
			printf("err %s: %s\n", echo, why);
		else
			printf("ok %s\n", echo);
		fflush(stdout);
	}
	while (!stop)
		pause();
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
	/* the brokers run on the cluster's threads; this one serves the fault commands */
	serve(mc, nbrokers);
	rc = 0;
out_mc:
	rd_kafka_mock_cluster_destroy(mc);
out_rk:
	rd_kafka_destroy(rk);
	return rc;
}
