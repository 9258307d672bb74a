/*
 * kafka_bench.c - issue 5's figures: Kafka -> sluice -> Kafka throughput on the development
 * broker (librdkafka's mock cluster, in this process, 127.0.0.1 only), as a ratio to
 * librdkafka's own consume -> produce loop measured in the same run.
 *
 * Data: N JSON order events (~90 bytes; default 1.5M, --quick 200K) pre-filled with a raw
 * producer into topic `in` (4 partitions, record i to partition i mod 4):
 *
 *   {"order_id":i,"customer_id":i*7919 mod 1000,"amount":..,"status":"paid","ts_ms":BASE+3i}
 *
 * The fill compresses with zstd because librdkafka 2.0.2's mock cluster keeps at most
 * 5 MiB of batches per partition and silently drops the oldest beyond that (rdkafka_mock.c,
 * max_size); zstd fits ~2M of these records in 4 partitions, and the fill fails if the
 * broker dropped any. Both sides decompress the same batches. Output topics are written
 * uncompressed (librdkafka's default, both sides) and may be trimmed by the same limit, so
 * they are checked by their high watermarks, which count every message appended.
 *
 * Contenders, each reading all of `in` from the earliest offset into its own fresh output
 * topic (4 partitions), timed from creating the first handle (or planning the SQL) to the
 * last delivery acknowledged and every handle closed:
 *
 *   raw        the reference: rdkafka_performance-style loops, each a consumer (its
 *              partitions assigned, batches from its queue) and a producer copying every
 *              message's bytes to the output (no key: librdkafka's random partitioner, as
 *              sluice's sink without a key), librdkafka's defaults. One loop per shard on
 *              as many threads (partition p to loop p mod shards: the parallelism the
 *              sluice job has), run first and last: the mean is `kafka/raw_loop` and the
 *              two say how steady the machine was. Also once with one loop on one thread
 *              (`raw_loop_1thread`, rdkafka_performance itself).
 *   pass       SQL on 2 shards: the Kafka source (scan.bounded.mode latest-offset) decoding
 *              JSON, WHERE status <> 'void' (all pass), a 4-column projection, the Kafka sink
 *              encoding JSON, at-least-once, no checkpoints
 *   window     the same source with a rowtime (ts_ms, watermark 1 s behind), TUMBLE 1 min
 *              COUNT(*) per customer_id (20K records and 1000 keys a window) into a Kafka
 *              sink, at-least-once; messages/s counts input messages
 *   alo_1s     pass with a checkpoint every 1 s into a fresh directory (at-least-once
 *              flushes its producers at each)
 *   eos_1s     pass exactly-once: a checkpoint every 1 s, one Kafka transaction per epoch
 *              committed after the checkpoint is durable, with its commit marker
 *
 * Checks, outside the timing: every job reads N records; every output topic received N
 * messages, `out_window` exactly the (window, customer) groups the data has. The mock
 * cluster writes no transaction markers and serves read_committed like read_uncommitted
 * (its last stable offset is the end of the log), so eos_1s's output is checked like the
 * others: transactional isolation cannot be observed on this broker.
 *
 * The mock cluster shares the 2 cores with the contenders (its one thread parses every
 * produce request and serves every fetch), and so do librdkafka's own threads: the sluice
 * job runs 4 consumers and 2 producers (one per split and per sink instance), the raw
 * reference 2 of each.
 *
 * Options: --records N, --quick (200K records, for CI: the figure names end in _quick),
 * --shards N (2), --only raw|raw1|pass|window|alo_1s|eos_1s (one contender after the fill:
 * perf record), --source-prop KEY=VALUE (a librdkafka property for sluice's source, e.g.
 * queued.max.messages.kbytes: what-if runs), --sink-prop KEY=VALUE (the same for its sinks,
 * e.g. enable.idempotence). Output: the FIGURE protocol of
 * bench/README.md.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <sluice/job.h>

#include "planner.h"

#define NPART	   4
#define NCUST	   1000
#define BASE_TS	   1704067200000LL /* 2024-01-01 00:00:00 UTC: a minute boundary */
#define TS_STEP	   3		   /* ms between records: 20K records a 1-minute window */
#define WIN_MS	   60000LL
#define TIMEOUT_MS 60000

static rd_kafka_t *host; /* hosts the mock cluster */
static rd_kafka_mock_cluster_t *mc;
static const char *servers; /* its bootstrap list */
static int64_t nrec = 1500000;
static int nshards = 2;
static const char *src_props[8]; /* --source-prop: extra "properties.K = V" of the source */
static int nsrc_props;
static const char *sink_props[8]; /* --sink-prop: the same for the sinks */
static int nsink_props;
static int run_id; /* makes topics, groups and prefixes unique */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("kafka_bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void set(rd_kafka_conf_t *c, const char *k, const char *v)
{
	char why[256];

	if (rd_kafka_conf_set(c, k, v, why, sizeof why) != RD_KAFKA_CONF_OK)
		die("property %s: %s", k, why);
}

static rd_kafka_conf_t *conf_new(void)
{
	rd_kafka_conf_t *c = rd_kafka_conf_new();

	set(c, "bootstrap.servers", servers);
	set(c, "log_level", "3");
	return c;
}

static rd_kafka_t *handle(rd_kafka_type_t type, rd_kafka_conf_t *c)
{
	char why[256];
	rd_kafka_t *rk = rd_kafka_new(type, c, why, sizeof why);

	if (!rk)
		die("rd_kafka_new: %s", why);
	return rk;
}

static void topic_create(const char *name)
{
	rd_kafka_resp_err_t e = rd_kafka_mock_topic_create(mc, name, NPART, 1);

	if (e)
		die("topic %s: %s", name, rd_kafka_err2str(e));
}

/* A fresh output topic per contender and run. */
static void topic_name(char *buf, size_t cap, const char *what)
{
	snprintf(buf, cap, "out_%s_%d", what, run_id++);
}

/* Sum of the partitions' high watermarks: every message appended (the mock cluster writes
 * no transaction markers). *dropped, if given: messages the mock already discarded from
 * the front of the log (its 5 MiB-per-partition limit). */
static int64_t topic_end(const char *topic, int64_t *dropped)
{
	int64_t sum = 0;

	if (dropped)
		*dropped = 0;
	for (int p = 0; p < NPART; p++) {
		int64_t lo, hi;
		rd_kafka_resp_err_t e =
			rd_kafka_query_watermark_offsets(host, topic, p, &lo, &hi, TIMEOUT_MS);

		if (e)
			die("%s/%d: watermarks: %s", topic, p, rd_kafka_err2str(e));
		sum += hi;
		if (dropped)
			*dropped += lo;
	}
	return sum;
}

/* ---- the data ---------------------------------------------------------------------------- */

static int record(char *buf, size_t cap, int64_t i)
{
	return snprintf(buf, cap,
			"{\"order_id\":%" PRId64 ",\"customer_id\":%" PRId64 ",\"amount\":%" PRId64
			".%02d,\"status\":\"paid\",\"ts_ms\":%lld}",
			i, i * 7919 % NCUST, 1 + i % 997, (int)(i % 100),
			BASE_TS + (long long)i * TS_STEP);
}

/* Groups TUMBLE 1 min per customer_id fires: a window holds consecutive i, and k < NCUST
 * consecutive i have k distinct customers (7919 is invertible mod 1000). */
static int64_t window_groups(void)
{
	const int64_t per = WIN_MS / TS_STEP;
	int64_t g = 0;

	for (int64_t lo = 0; lo < nrec; lo += per) {
		int64_t k = nrec - lo < per ? nrec - lo : per;

		g += k < NCUST ? k : NCUST;
	}
	return g;
}

static void on_fill_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	if (m->err)
		die("fill: delivery to %s/%d: %s", rd_kafka_topic_name(m->rkt), m->partition,
		    rd_kafka_err2str(m->err));
}

static void fill(void)
{
	rd_kafka_conf_t *c = conf_new();
	rd_kafka_t *p;
	char buf[256];
	double t0 = now_s();
	int64_t dropped;

	set(c, "linger.ms", "20");
	set(c, "batch.num.messages", "10000");
	set(c, "queue.buffering.max.messages", "1000000");
	set(c, "compression.type", "zstd"); /* see the top: the mock keeps 5 MiB a partition */
	rd_kafka_conf_set_dr_msg_cb(c, on_fill_dr);
	p = handle(RD_KAFKA_PRODUCER, c);
	for (int64_t i = 0; i < nrec; i++) {
		int len = record(buf, sizeof buf, i);
		rd_kafka_resp_err_t e;

		while ((e = rd_kafka_producev(p, RD_KAFKA_V_TOPIC("in"),
					      RD_KAFKA_V_PARTITION((int32_t)(i % NPART)),
					      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
					      RD_KAFKA_V_VALUE(buf, (size_t)len),
					      RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
			rd_kafka_poll(p, 10);
		if (e)
			die("fill: produce: %s", rd_kafka_err2str(e));
		if (i % 4096 == 0)
			rd_kafka_poll(p, 0);
	}
	if (rd_kafka_flush(p, TIMEOUT_MS))
		die("fill: flush timed out");
	rd_kafka_destroy(p);
	if (topic_end("in", &dropped) != nrec || dropped)
		die("fill: topic in got %" PRId64 " messages of %" PRId64 " and dropped %" PRId64
		    " (librdkafka's mock cluster keeps 5 MiB of batches a partition: fewer "
		    "--records)",
		    topic_end("in", NULL), nrec, dropped);
	fprintf(stderr,
		"filled %" PRId64 " records (%d bytes for the last) into %d partitions in "
		"%.1f s\n",
		nrec, record(buf, sizeof buf, nrec - 1), NPART, now_s() - t0);
}

/* ---- the reference: librdkafka's own consume -> produce loop ----------------------------- */

/* One raw loop: its own consumer (partitions p with p mod nloops == idx assigned) and its
 * own producer, as one sluice shard has (sluice: one consumer per partition). */
struct raw_loop {
	pthread_t tid;
	int idx, nloops;
	const char *out;
	int64_t got, delivered;
	rd_kafka_resp_err_t err; /* first failed delivery */
	double t_first;		 /* first batch received */
};

static void on_raw_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct raw_loop *r = opaque;

	if (m->err && !r->err)
		r->err = m->err;
	else if (!m->err)
		r->delivered++;
}

static void *raw_loop(void *arg)
{
	struct raw_loop *r = arg;
	rd_kafka_message_t *batch[1024];
	rd_kafka_topic_partition_list_t *l;
	rd_kafka_conf_t *cc, *pc;
	rd_kafka_t *cons, *prod;
	rd_kafka_topic_t *rkt;
	rd_kafka_queue_t *q;
	char group[96];
	int eof = 0, mine = 0;

	snprintf(group, sizeof group, "kbench-%s-%d", r->out, r->idx);
	cc = conf_new();
	set(cc, "group.id", group);
	set(cc, "enable.auto.commit", "false");
	set(cc, "enable.partition.eof", "true"); /* ends the loop (the topic is complete) */
	cons = handle(RD_KAFKA_CONSUMER, cc);
	pc = conf_new();
	rd_kafka_conf_set_dr_msg_cb(pc, on_raw_dr);
	rd_kafka_conf_set_opaque(pc, r);
	prod = handle(RD_KAFKA_PRODUCER, pc);
	rkt = rd_kafka_topic_new(prod, r->out, NULL);
	l = rd_kafka_topic_partition_list_new(NPART);
	for (int p = r->idx; p < NPART; p += r->nloops, mine++)
		rd_kafka_topic_partition_list_add(l, "in", p)->offset = RD_KAFKA_OFFSET_BEGINNING;
	if (rd_kafka_assign(cons, l))
		die("raw: assign failed");
	rd_kafka_topic_partition_list_destroy(l);
	q = rd_kafka_queue_get_consumer(cons);
	while (eof < mine) {
		ssize_t n = rd_kafka_consume_batch_queue(q, 100, batch, 1024);

		if (n < 0)
			die("raw: consume: %s", rd_kafka_err2str(rd_kafka_last_error()));
		if (n > 0 && !r->t_first)
			r->t_first = now_s();
		for (ssize_t i = 0; i < n; i++) {
			rd_kafka_message_t *m = batch[i];

			if (m->err) {
				if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
					die("raw: consume: %s", rd_kafka_message_errstr(m));
				eof++;
				rd_kafka_message_destroy(m);
				continue;
			}
			while (rd_kafka_produce(rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY,
						m->payload, m->len, NULL, 0, NULL) == -1) {
				if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL)
					die("raw: produce: %s",
					    rd_kafka_err2str(rd_kafka_last_error()));
				rd_kafka_poll(prod, 10);
			}
			r->got++;
			rd_kafka_message_destroy(m);
		}
		rd_kafka_poll(prod, 0);
	}
	if (rd_kafka_flush(prod, TIMEOUT_MS))
		die("raw: flush timed out");
	rd_kafka_queue_destroy(q);
	rd_kafka_topic_destroy(rkt);
	rd_kafka_consumer_close(cons);
	rd_kafka_destroy(cons);
	rd_kafka_destroy(prod);
	return NULL;
}

/* nloops raw loops on as many threads over all of `in`; returns messages/s. */
static double run_raw(int nloops)
{
	struct raw_loop r[NPART];
	char out[64], tag[16];
	int64_t got = 0, delivered = 0;
	double t0, t1, first = 0;

	snprintf(tag, sizeof tag, "raw%d", nloops);
	topic_name(out, sizeof out, tag);
	topic_create(out);
	t0 = now_s();
	for (int i = 0; i < nloops; i++) {
		r[i] = (struct raw_loop){ .idx = i, .nloops = nloops, .out = out };
		if (pthread_create(&r[i].tid, NULL, raw_loop, &r[i]))
			die("pthread_create failed");
	}
	for (int i = 0; i < nloops; i++) {
		pthread_join(r[i].tid, NULL);
		if (r[i].err)
			die("raw: delivery: %s", rd_kafka_err2str(r[i].err));
		got += r[i].got;
		delivered += r[i].delivered;
		first = first && first < r[i].t_first ? first : r[i].t_first;
	}
	t1 = now_s();
	fprintf(stderr, "raw loop x%d: %.2f s, first batch after %.2f s\n", nloops, t1 - t0,
		first - t0);
	if (got != nrec || delivered != nrec || topic_end(out, NULL) != nrec)
		die("raw: %" PRId64 " consumed, %" PRId64 " delivered, %s received %" PRId64
		    ", want %" PRId64,
		    got, delivered, out, topic_end(out, NULL), nrec);
	return (double)nrec / (t1 - t0);
}

/* ---- sluice jobs ------------------------------------------------------------------------- */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

enum job_kind { JOB_PASS, JOB_WINDOW, JOB_ALO_1S, JOB_EOS_1S };

static const char *const job_tag[] = { "pass", "window", "alo_1s", "eos_1s" };

static const char SRC_COLS[] =
	"  order_id BIGINT, customer_id INT, amount DOUBLE, status STRING, ts_ms BIGINT";

/* ",\n  'properties.K' = 'V'" for each "K=V" of props. */
static void props_sql(char *buf, size_t cap, const char *const *props, int n)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		const char *eq = strchr(props[i], '=');

		at += (size_t)snprintf(buf + at, cap - at, ",\n  'properties.%.*s' = '%s'",
				       (int)(eq - props[i]), props[i], eq + 1);
		if (at >= cap)
			die("--source-prop/--sink-prop: too long");
	}
}

/* Writes the job's SQL into buf. */
static void job_sql(char *buf, size_t cap, enum job_kind kind, const char *out)
{
	char src[2048], dst[2048], extra[1024], sextra[1024];
	const char *rowtime = kind == JOB_WINDOW ? ",\n  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),\n"
						   "  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND"
						 : "";
	const char *guarantee = kind == JOB_EOS_1S ? "exactly-once" : "at-least-once";

	props_sql(extra, sizeof extra, src_props, nsrc_props);
	props_sql(sextra, sizeof sextra, sink_props, nsink_props);
	snprintf(src, sizeof src,
		 "'connector' = 'kafka', 'topic' = 'in',\n"
		 "  'properties.bootstrap.servers' = '%s',\n"
		 "  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = "
		 "'latest-offset',\n"
		 "  'format' = 'json'%s",
		 servers, extra);
	snprintf(dst, sizeof dst,
		 "'connector' = 'kafka', 'topic' = '%s',\n"
		 "  'properties.bootstrap.servers' = '%s', 'format' = 'json',\n"
		 "  'sink.delivery-guarantee' = '%s'%s%s%s%s",
		 out, servers, guarantee, sextra,
		 kind == JOB_EOS_1S ? ",\n  'sink.transactional-id-prefix' = 'kbench-" : "",
		 kind == JOB_EOS_1S ? out : "", kind == JOB_EOS_1S ? "'" : "");
	if (kind == JOB_WINDOW)
		snprintf(
			buf, cap,
			"CREATE TABLE src (\n%s%s\n) WITH (%s);\n"
			"CREATE TABLE dst (window_end TIMESTAMP(3), customer_id INT, n BIGINT)\n"
			"  WITH (%s);\n"
			"INSERT INTO dst SELECT TUMBLE_END(ts, INTERVAL '1' MINUTE), customer_id,\n"
			"  COUNT(*) FROM src GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), "
			"customer_id;\n",
			SRC_COLS, rowtime, src, dst);
	else
		snprintf(buf, cap,
			 "%s"
			 "CREATE TABLE src (\n%s\n) WITH (%s);\n"
			 "CREATE TABLE dst (order_id BIGINT, customer_id INT, amount DOUBLE,\n"
			 "  ts_ms BIGINT) WITH (%s);\n"
			 "INSERT INTO dst SELECT order_id, customer_id, amount, ts_ms FROM src\n"
			 "  WHERE status <> 'void';\n",
			 kind == JOB_PASS ? "" : "SET 'execution.checkpointing.interval' = '1s';\n",
			 SRC_COLS, src, dst);
}

static double run_job(enum job_kind kind)
{
	char sql[8192], err[1024], out[64], dir[] = "/tmp/kbench-ckpt-XXXXXX";
	struct sl_sql_opts so = { .nshards = nshards };
	struct sl_sql_script *script;
	struct sl_run_opts opts;
	struct sl_job_stats st;
	int64_t want, have;
	double t0, t1;
	struct sl_job *job;

	topic_name(out, sizeof out, job_tag[kind]);
	topic_create(out);
	job_sql(sql, sizeof sql, kind, out);
	if (kind == JOB_ALO_1S || kind == JOB_EOS_1S) {
		if (!mkdtemp(dir))
			die("mkdtemp: %s", strerror(errno));
		so.checkpoint_dir = dir;
	}
	t0 = now_s();
	script = sl_sql_load("kafka_bench.sql", sql, strlen(sql), &so, err, sizeof err);
	if (!script)
		die("%s: %s\n%s", job_tag[kind], err, sql);
	sl_sql_run_opts(script, &opts);
	job = sl_sql_job(script, 0);
	if (sl_job_run(job, &opts))
		die("%s: %s", job_tag[kind], sl_job_error(job)->msg);
	t1 = now_s();
	sl_job_stats(job, &st);
	if (st.records_in != (uint64_t)nrec)
		die("%s: read %llu of %" PRId64 " records", job_tag[kind],
		    (unsigned long long)st.records_in, nrec);
	sl_sql_destroy(script);
	if (so.checkpoint_dir && nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS))
		fprintf(stderr, "kafka_bench: cannot remove %s: %s\n", dir, strerror(errno));
	want = kind == JOB_WINDOW ? window_groups() : nrec;
	have = topic_end(out, NULL);
	if (have != want)
		die("%s: %s received %" PRId64 " messages, want %" PRId64, job_tag[kind], out, have,
		    want);
	return (double)nrec / (t1 - t0);
}

/* ---- main -------------------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: kafka_bench [--records N] [--quick] [--shards N]\n"
			"                   [--only raw|raw1|pass|window|alo_1s|eos_1s]\n"
			"                   [--source-prop LIBRDKAFKA_KEY=VALUE]...\n"
			"                   [--sink-prop LIBRDKAFKA_KEY=VALUE]...\n");
	exit(2);
}

/* The cluster lives in a handle of its own (test.mock.num.brokers), which also answers the
 * checks' watermark queries. */
static void cluster_start(void)
{
	rd_kafka_conf_t *c = rd_kafka_conf_new();

	set(c, "log_level", "3");
	set(c, "test.mock.num.brokers", "1");
	host = handle(RD_KAFKA_PRODUCER, c);
	mc = rd_kafka_handle_mock_cluster(host);
	if (!mc)
		die("cannot start the mock cluster");
	servers = rd_kafka_mock_cluster_bootstraps(mc);
	if (strncmp(servers, "127.0.0.1:", 10))
		die("the mock cluster listens on %s, not 127.0.0.1", servers);
	topic_create("in");
}

int main(int argc, char **argv)
{
	const char *only = NULL, *sfx = "";
	double raw0, raw1, raw, raw1t, pass, win, alo, eos;
	bool quick = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = true;
			nrec = 200000;
		} else if (i + 1 >= argc) {
			usage();
		} else if (!strcmp(argv[i], "--records")) {
			nrec = strtoll(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--shards")) {
			nshards = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--only")) {
			only = argv[++i];
		} else if (!strcmp(argv[i], "--source-prop")) {
			if (nsrc_props == 8 || !strchr(argv[i + 1], '='))
				usage();
			src_props[nsrc_props++] = argv[++i];
		} else if (!strcmp(argv[i], "--sink-prop")) {
			if (nsink_props == 8 || !strchr(argv[i + 1], '='))
				usage();
			sink_props[nsink_props++] = argv[++i];
		} else {
			usage();
		}
	}
	if (nrec < 1000 || nshards < 1 || nshards > NPART)
		usage();
	if (quick)
		sfx = "_quick";
	cluster_start();
	fill();
	if (only) {
		double r = -1;

		if (!strcmp(only, "raw"))
			r = run_raw(nshards);
		else if (!strcmp(only, "raw1"))
			r = run_raw(1);
		for (int k = 0; k <= JOB_EOS_1S; k++)
			if (!strcmp(only, job_tag[k]))
				r = run_job(k);
		if (r < 0)
			usage();
		printf("FIGURE kafka/only_%s %.0f msgs/s - -\n", only, r);
		goto out;
	}
	raw0 = run_raw(nshards);
	raw1t = run_raw(1);
	pass = run_job(JOB_PASS);
	win = run_job(JOB_WINDOW);
	alo = run_job(JOB_ALO_1S);
	eos = run_job(JOB_EOS_1S);
	raw1 = run_raw(nshards);
	raw = (raw0 + raw1) / 2;
	fprintf(stderr,
		"%" PRId64 " records, %d partitions, %d shards; msgs/s: raw x%d %.0f / %.0f (mean "
		"%.0f), raw x1 %.0f, pass %.0f (%.2fx; %.2fx of raw x1), window %.0f (%.2fx), "
		"alo_1s %.0f (%.2fx of pass), eos_1s %.0f (%.2fx of pass, %.2fx of alo_1s)\n",
		nrec, NPART, nshards, nshards, raw0, raw1, raw, raw1t, pass, pass / raw,
		pass / raw1t, win, win / raw, alo, alo / pass, eos, eos / pass, eos / alo);
	printf("FIGURE kafka/passthrough%s %.0f msgs/s %.4f kafka/raw_loop%s\n", sfx, pass,
	       pass / raw, sfx);
	printf("FIGURE kafka/passthrough_vs_1loop%s %.4f x %.4f kafka/raw_loop_1thread%s\n", sfx,
	       pass / raw1t, pass / raw1t, sfx);
	printf("FIGURE kafka/window%s %.0f msgs/s %.4f kafka/raw_loop%s\n", sfx, win, win / raw,
	       sfx);
	printf("FIGURE kafka/eos_1s%s %.0f msgs/s %.4f kafka/passthrough%s\n", sfx, eos, eos / pass,
	       sfx);
	printf("FIGURE kafka/alo_1s%s %.0f msgs/s %.4f kafka/passthrough%s\n", sfx, alo, alo / pass,
	       sfx);
	printf("FIGURE kafka/eos_vs_alo_1s%s %.4f x %.4f kafka/alo_1s%s\n", sfx, eos / alo,
	       eos / alo, sfx);
	printf("FIGURE kafka/raw_loop%s %.0f msgs/s - -\n", sfx, raw);
	printf("FIGURE kafka/raw_loop_1thread%s %.0f msgs/s - -\n", sfx, raw1t);
out:
	rd_kafka_destroy(host);
	return 0;
}
