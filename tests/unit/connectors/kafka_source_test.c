/*
 * kafka_source_test.c - the Kafka source against an in-process librdkafka mock cluster
 * (127.0.0.1, ephemeral ports), driven through sl_source_ops with the connector harness:
 * JSON rows with timestamp/partition/offset metadata, bounded mode (latest-offset ends each
 * split), position/seek resuming exactly with no loss or duplicate, unbounded polling that
 * returns 0 and then sees new messages, dead letters "topic/partition/offset" for malformed
 * JSON and ignore-parse-errors counting, startup modes (latest, timestamp, specific,
 * group-offsets after a monitoring commit), CSV, raw, key fields (EXCEPT_KEY), Debezium
 * changelog rows, fetch errors injected into the broker, a leader change and a broker down
 * mid-read, and the SQL WITH mapping (topic lists and patterns, positions that name their
 * partition) with its FILE:LINE:COL errors, and partition discovery (a topic found after
 * prepare, read from its start; a restore numbering the splits as its checkpoint did).
 */
#include <time.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "conn_harness.h"
#include "kafka_source.h"
#include "sql_options.h"

static rd_kafka_t *mock_rk; /* hosts the cluster and produces the test data */
static rd_kafka_mock_cluster_t *mc;
static const char *servers;
static const char *pkeys[] = { "properties.bootstrap.servers", "log_level" };
static const char *pvals[2] = { NULL, "3" };

static void produce(const char *topic, int part, const char *key, const char *val, int64_t ts)
{
	rd_kafka_resp_err_t e;

	e = rd_kafka_producev(mock_rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(part),
			      RD_KAFKA_V_KEY(key, key ? strlen(key) : 0),
			      RD_KAFKA_V_VALUE((void *)val, val ? strlen(val) : 0),
			      RD_KAFKA_V_TIMESTAMP(ts), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
			      RD_KAFKA_V_END);
	T_ASSERT(e == RD_KAFKA_RESP_ERR_NO_ERROR);
}

static void flush(void)
{
	T_ASSERT(rd_kafka_flush(mock_rk, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR);
}

static void setup(void)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char why[256];

	rd_kafka_conf_set(conf, "log_level", "3", why, sizeof why);
	/* three brokers, so a test can move a partition's leader and take a broker down */
	T_ASSERT(rd_kafka_conf_set(conf, "test.mock.num.brokers", "3", why, sizeof why) ==
		 RD_KAFKA_CONF_OK);
	mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, sizeof why);
	T_ASSERT(mock_rk);
	mc = rd_kafka_handle_mock_cluster(mock_rk);
	T_ASSERT(mc);
	servers = rd_kafka_mock_cluster_bootstraps(mc);
	pvals[0] = servers;
	T_ASSERT(strncmp(servers, "127.0.0.1:", 10) == 0);
}

static struct sl_kafka_source_cfg base_cfg(const char *topic, const struct sl_schema *s)
{
	struct sl_kafka_source_cfg cfg = {
		.topic = topic,
		.prop_keys = pkeys,
		.prop_vals = pvals,
		.nprops = 2,
		.schema = s,
		.value_format = SL_KAFKA_FMT_JSON,
		.startup = SL_KAFKA_START_EARLIEST,
		.bounded = SL_KAFKA_BOUND_LATEST,
		.timeout_ms = 5000,
	};

	return cfg;
}

static void prepare(struct sl_kafka_source_cfg *cfg)
{
	struct sl_error err = { 0 };

	if (sl_kafka_source_prepare(cfg, &err) < 0) {
		fprintf(stderr, "prepare: %s\n", err.msg);
		exit(T_EXIT_FAIL);
	}
}

static void *open_split(const struct sl_kafka_source_cfg *cfg, int split)
{
	struct sl_error err = { 0 };
	void *st = sl_kafka_source_ops.open(cfg, split, &err);

	if (!st)
		fprintf(stderr, "open: %s\n", err.msg);
	T_ASSERT(st);
	return st;
}

static void nap(void)
{
	struct timespec t = { 0, 2000000 };

	nanosleep(&t, NULL);
}

/* Polls (max per poll) until EOF, napping when nothing is there. */
static void drain(struct harness *h, void *st, int split, int max)
{
	int rc;

	h->c.split = split;
	for (int i = 0; i < 5000; i++) {
		rc = sl_kafka_source_ops.poll(st, &h->c, max);
		if (rc == SL_SRC_EOF)
			return;
		T_ASSERT(rc >= 0 && rc <= max);
		if (rc == 0)
			nap();
	}
	fprintf(stderr, "split %d never reached its end\n", split);
	exit(T_EXIT_FAIL);
}

/* Polls until `want` more rows arrived (unbounded splits), at most ~10 s. */
static void poll_until(struct harness *h, void *st, size_t want)
{
	for (int i = 0; i < 5000 && h->nrows < want; i++) {
		int rc = sl_kafka_source_ops.poll(st, &h->c, 64);

		T_ASSERT(rc >= 0);
		if (rc == 0)
			nap();
	}
	T_ASSERT_EQ_I64(h->nrows, want);
}

/* A split's position: opaque bytes whose first 8 are the next offset. */
struct pos {
	char b[64];
	size_t len;
};

static struct pos pos_take(void *st)
{
	struct pos p = { .len = 0 };

	T_ASSERT(sl_kafka_source_ops.position(st, p.b, sizeof p.b, &p.len) == 0);
	T_ASSERT(p.len >= sizeof(int64_t));
	return p;
}

static int64_t pos_of(void *st)
{
	struct pos p = pos_take(st);
	int64_t off;

	memcpy(&off, p.b, sizeof off);
	return off;
}

/* ---- JSON, metadata, bounded, dead letters ------------------------------------------- */

#define BASE_TS 1700000000000LL

static struct sl_schema *order_schema(void)
{
	struct sl_schema *s = sl_schema_create();

	T_ASSERT(sl_schema_add(s, "id", SL_TYPE_BIGINT) == 0);
	T_ASSERT(sl_schema_add(s, "name", SL_TYPE_STRING) == 1);
	T_ASSERT(sl_schema_add(s, "ts", SL_TYPE_TIMESTAMP_LTZ) == 2);
	T_ASSERT(sl_schema_add(s, "part", SL_TYPE_INT) == 3);
	T_ASSERT(sl_schema_add(s, "off", SL_TYPE_BIGINT) == 4);
	return s;
}

static void test_json_bounded(void)
{
	struct sl_schema *s = order_schema();
	struct sl_kafka_source_cfg cfg = base_cfg("orders", s);
	struct harness h;
	char v[128];
	int seen[40] = { 0 };

	T_ASSERT(rd_kafka_mock_topic_create(mc, "orders", 2, 1) == 0);
	for (int i = 0; i < 40; i++) {
		snprintf(v, sizeof v, "{\"id\": %d, \"name\": \"n%d\", \"ts\": 5}", i, i);
		produce("orders", i % 2, NULL, v, BASE_TS + i);
	}
	produce("orders", 1, NULL, "{\"id\": oops}", BASE_TS + 99); /* partition 1, offset 20 */
	flush();
	cfg.meta[0] = (struct sl_kafka_meta_col){ 2, SL_KAFKA_META_TIMESTAMP };
	cfg.meta[1] = (struct sl_kafka_meta_col){ 3, SL_KAFKA_META_PARTITION };
	cfg.meta[2] = (struct sl_kafka_meta_col){ 4, SL_KAFKA_META_OFFSET };
	cfg.nmeta = 3;
	prepare(&cfg);
	T_ASSERT_EQ_I64(sl_kafka_source_ops.nsplits(&cfg), 2);

	h_init(&h);
	for (int p = 0; p < 2; p++) {
		void *st = open_split(&cfg, p);

		drain(&h, st, p, 7);
		T_ASSERT_EQ_I64(pos_of(st), p == 0 ? 20 : 21);
		/* ended: stays ended */
		T_ASSERT(sl_kafka_source_ops.poll(st, &h.c, 7) == SL_SRC_EOF);
		sl_kafka_source_ops.close(st);
	}
	T_ASSERT_EQ_I64(h.nrows, 40);
	for (size_t r = 0; r < h.nrows; r++) {
		const struct sl_row *row = h.rows[r];
		int64_t id = sl_row_i64(row, 0);
		char want[16];

		T_ASSERT(id >= 0 && id < 40 && !seen[id]);
		seen[id] = 1;
		snprintf(want, sizeof want, "n%lld", (long long)id);
		T_ASSERT_STR(row, 1, want);
		/* the metadata column wins over a same-named JSON key */
		T_ASSERT_EQ_I64(sl_row_i64(row, 2), BASE_TS + id);
		T_ASSERT_EQ_I64(sl_row_i64(row, 3), id % 2);
		T_ASSERT_EQ_I64(sl_row_i64(row, 4), id / 2);
		T_ASSERT_EQ_I64(row->kind, SL_ROW_INSERT);
	}
	T_ASSERT_EQ_I64(h.ndl, 1);
	T_ASSERT(!strcmp(h.dl[0].where, "orders/1/20"));
	T_ASSERT(!strcmp(h.dl[0].raw, "{\"id\": oops}"));

	/* ignore-parse-errors: skipped and counted, no dead letter */
	{
		uint64_t skipped = 0;
		void *st;

		h_reset(&h);
		cfg.ignore_parse_errors = true;
		cfg.skipped = &skipped;
		st = open_split(&cfg, 1);
		drain(&h, st, 1, 64);
		sl_kafka_source_ops.close(st);
		T_ASSERT_EQ_I64(h.nrows, 20);
		T_ASSERT_EQ_I64(h.ndl, 0);
		T_ASSERT_EQ_I64(skipped, 1);
		cfg.ignore_parse_errors = false;
		cfg.skipped = NULL;
	}
	h_fini(&h);
	sl_kafka_source_cfg_fini(&cfg);
	sl_schema_destroy(s);
}

/* Resume: read some, take the position, close, reopen with seek: exactly the rest. */
static void test_position_seek(void)
{
	struct sl_schema *s = order_schema();
	struct sl_kafka_source_cfg cfg = base_cfg("orders", s);
	struct harness h;
	int count[40] = { 0 };
	struct pos at7, at20;
	void *st;

	prepare(&cfg);
	h_init(&h);
	h.c.split = 0;
	st = open_split(&cfg, 0);
	/* a checkpoint before anything was read resumes at the resolved start */
	T_ASSERT_EQ_I64(pos_of(st), 0);
	for (int i = 0; i < 5000 && h.nrows < 7; i++) {
		int rc = sl_kafka_source_ops.poll(st, &h.c, 7 - (int)h.nrows);

		T_ASSERT(rc >= 0);
		if (!rc)
			nap();
	}
	T_ASSERT_EQ_I64(h.nrows, 7);
	T_ASSERT_EQ_I64(pos_of(st), 7);
	at7 = pos_take(st);
	sl_kafka_source_ops.close(st);

	st = open_split(&cfg, 0);
	T_ASSERT(sl_kafka_source_ops.seek(st, at7.b, at7.len) == 0);
	drain(&h, st, 0, 5);
	T_ASSERT_EQ_I64(pos_of(st), 20);
	at20 = pos_take(st);
	/* seek after start is refused (the runtime seeks right after open) */
	T_ASSERT(sl_kafka_source_ops.seek(st, at7.b, at7.len) == -EINVAL);
	sl_kafka_source_ops.close(st);
	T_ASSERT_EQ_I64(h.nrows, 20);
	for (size_t r = 0; r < h.nrows; r++)
		count[sl_row_i64(h.rows[r], 0)]++;
	for (int id = 0; id < 40; id += 2)
		T_ASSERT_EQ_I64(count[id], 1);

	/* a position at the end of a bounded split: reopened, it ends at once */
	st = open_split(&cfg, 0);
	T_ASSERT(sl_kafka_source_ops.seek(st, at20.b, at20.len) == 0);
	T_ASSERT(sl_kafka_source_ops.poll(st, &h.c, 5) == SL_SRC_EOF);
	sl_kafka_source_ops.close(st);
	h_fini(&h);
	sl_kafka_source_cfg_fini(&cfg);
	sl_schema_destroy(s);
}

static int64_t mock_offset_for_time(const char *topic, int64_t ts)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
	int64_t off;

	rd_kafka_topic_partition_list_add(l, topic, 0)->offset = ts;
	T_ASSERT(rd_kafka_offsets_for_times(mock_rk, l, 5000) == 0);
	off = l->elems[0].offset;
	rd_kafka_topic_partition_list_destroy(l);
	return off;
}

/* Unbounded: 0 when nothing is there, then what is produced meanwhile. Also the startup modes
 * latest-offset, timestamp, specific-offsets and group-offsets. */
static void test_unbounded_and_startup(void)
{
	struct sl_schema *s = order_schema();
	struct sl_kafka_source_cfg cfg = base_cfg("live", s);
	struct sl_kafka_offset spec[] = { { 0, 3 } };
	struct harness h;
	void *st, *st2;
	char v[64];

	T_ASSERT(rd_kafka_mock_topic_create(mc, "live", 1, 1) == 0);
	for (int i = 0; i < 10; i++) {
		snprintf(v, sizeof v, "{\"id\": %d, \"name\": \"a\"}", i);
		produce("live", 0, NULL, v, BASE_TS + 1000 * i);
	}
	flush();
	cfg.bounded = SL_KAFKA_UNBOUNDED;
	cfg.startup = SL_KAFKA_START_LATEST;
	prepare(&cfg);
	h_init(&h);
	st = open_split(&cfg, 0);
	T_ASSERT_EQ_I64(pos_of(st), 10); /* latest, resolved to a number */
	for (int i = 0; i < 50; i++) {
		T_ASSERT_EQ_I64(sl_kafka_source_ops.poll(st, &h.c, 64), 0);
		nap();
	}
	for (int i = 10; i < 15; i++) {
		snprintf(v, sizeof v, "{\"id\": %d, \"name\": \"b\"}", i);
		produce("live", 0, NULL, v, BASE_TS + 1000 * i);
	}
	flush();
	poll_until(&h, st, 5);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[0], 0), 10);
	T_ASSERT_EQ_I64(pos_of(st), 15);
	sl_kafka_source_ops.close(st);

	/* timestamp modes, where the broker can look offsets up by time (librdkafka 2.0.2's
	 * mock cluster answers every time lookup with the end offset) */
	if (mock_offset_for_time("live", BASE_TS + 6500) == 7) {
		/* start: the first record at or after BASE_TS + 6500 is id 7 */
		h_reset(&h);
		cfg.startup = SL_KAFKA_START_TIMESTAMP;
		cfg.startup_ts_ms = BASE_TS + 6500;
		cfg.bounded = SL_KAFKA_BOUND_LATEST;
		st = open_split(&cfg, 0);
		drain(&h, st, 0, 64);
		sl_kafka_source_ops.close(st);
		T_ASSERT_EQ_I64(h.nrows, 8);
		T_ASSERT_EQ_I64(sl_row_i64(h.rows[0], 0), 7);
		/* bound: records before BASE_TS + 2000 only */
		h_reset(&h);
		cfg.startup = SL_KAFKA_START_EARLIEST;
		cfg.bounded = SL_KAFKA_BOUND_TIMESTAMP;
		cfg.bounded_ts_ms = BASE_TS + 2000;
		st = open_split(&cfg, 0);
		drain(&h, st, 0, 64);
		sl_kafka_source_ops.close(st);
		T_ASSERT_EQ_I64(h.nrows, 2);
	} else {
		fprintf(stderr, "kafka_source_test: the broker cannot look offsets up by time: "
				"timestamp modes not checked\n");
	}

	/* specific-offsets */
	h_reset(&h);
	cfg.startup = SL_KAFKA_START_SPECIFIC;
	cfg.specific = spec;
	cfg.nspecific = 1;
	cfg.bounded = SL_KAFKA_BOUND_LATEST;
	st = open_split(&cfg, 0);
	drain(&h, st, 0, 64);
	sl_kafka_source_ops.close(st);
	T_ASSERT_EQ_I64(h.nrows, 12);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[0], 0), 3);

	/* group-offsets: a split committing its checkpoint position (monitoring, once the
	 * checkpoint completed) is where a fresh group-offsets start begins */
	h_reset(&h);
	{
		static const char *gk[] = { "properties.bootstrap.servers", "log_level",
					    "properties.group.id" };
		const char *gv[] = { servers, "3", "sluice-test-group" };
		int64_t committed = -1;

		cfg.prop_keys = gk;
		cfg.prop_vals = gv;
		cfg.nprops = 3;
		cfg.commit_offsets = true;
		cfg.startup = SL_KAFKA_START_SPECIFIC; /* offset 3, then commit 3 */
		st = open_split(&cfg, 0);
		T_ASSERT_EQ_I64(pos_of(st), 3);
		/* the position goes to the group once its checkpoint completes */
		sl_kafka_source_ops.checkpoint_complete(st, 1);
		/* the commit is asynchronous: a second handle sees it a moment later */
		cfg.startup = SL_KAFKA_START_GROUP_OFFSETS;
		cfg.commit_offsets = false;
		for (int i = 0; i < 200 && committed != 3; i++) {
			sl_kafka_source_ops.poll(st, &h.c, 0); /* serves the commit callback */
			st2 = open_split(&cfg, 0);
			committed = pos_of(st2);
			sl_kafka_source_ops.close(st2);
			if (committed != 3)
				nap();
		}
		sl_kafka_source_ops.close(st);
		T_ASSERT_EQ_I64(committed, 3);
		cfg.prop_keys = pkeys;
		cfg.prop_vals = pvals;
		cfg.nprops = 2;
	}
	h_fini(&h);
	sl_kafka_source_cfg_fini(&cfg);
	sl_schema_destroy(s);
}

/* ---- CSV, raw, key fields, Debezium ------------------------------------------------------ */

static void test_formats(void)
{
	struct sl_schema *s = sl_schema_create(), *r = sl_schema_create();
	struct sl_kafka_source_cfg cfg;
	struct harness h;
	void *st;

	T_ASSERT(sl_schema_add(s, "k", SL_TYPE_STRING) == 0);
	T_ASSERT(sl_schema_add(s, "a", SL_TYPE_BIGINT) == 1);
	T_ASSERT(sl_schema_add(s, "b", SL_TYPE_STRING) == 2);
	T_ASSERT(sl_schema_add(r, "line", SL_TYPE_STRING) == 0);
	T_ASSERT(rd_kafka_mock_topic_create(mc, "fmt", 1, 1) == 0);
	produce("fmt", 0, "{\"k\":\"key1\"}", "1,x", BASE_TS);
	produce("fmt", 0, NULL, "2,\"y,z\"", BASE_TS);
	produce("fmt", 0, "{\"k\":\"key3\"}", "not,a,number", BASE_TS);
	produce("fmt", 0, "{broken", "4,w", BASE_TS);
	flush();

	/* CSV value, JSON key, EXCEPT_KEY: k from the key, a and b from the value */
	{
		static const int kf[] = { 0 };

		h_init(&h);
		cfg = base_cfg("fmt", s);
		cfg.value_format = SL_KAFKA_FMT_CSV;
		cfg.csv.delimiter = ',';
		cfg.key_format = SL_KAFKA_FMT_JSON;
		cfg.key_fields = kf;
		cfg.nkey_fields = 1;
		cfg.value_except_key = true;
		prepare(&cfg);
		st = open_split(&cfg, 0);
		drain(&h, st, 0, 64);
		sl_kafka_source_ops.close(st);
		T_ASSERT_EQ_I64(h.nrows, 2);
		T_ASSERT_STR(h.rows[0], 0, "key1");
		T_ASSERT_EQ_I64(sl_row_i64(h.rows[0], 1), 1);
		T_ASSERT_STR(h.rows[0], 2, "x");
		T_ASSERT(sl_row_is_null(h.rows[1], 0)); /* no key */
		T_ASSERT_STR(h.rows[1], 2, "y,z");
		T_ASSERT_EQ_I64(h.ndl, 2); /* bad value at 2, bad key at 3 */
		T_ASSERT(!strcmp(h.dl[0].where, "fmt/0/2"));
		T_ASSERT(!strcmp(h.dl[1].where, "fmt/0/3"));
		T_ASSERT(!strcmp(h.dl[1].raw, "{broken"));
		h_fini(&h);
	}
	/* raw: the bytes as one STRING */
	{
		h_init(&h);
		sl_kafka_source_cfg_fini(&cfg);
		cfg = base_cfg("fmt", r);
		cfg.value_format = SL_KAFKA_FMT_RAW;
		prepare(&cfg);
		st = open_split(&cfg, 0);
		drain(&h, st, 0, 64);
		sl_kafka_source_ops.close(st);
		T_ASSERT_EQ_I64(h.nrows, 4);
		T_ASSERT_STR(h.rows[1], 0, "2,\"y,z\"");
		h_fini(&h);
	}
	/* a raw table with two columns is refused at plan time: test_sql() */
	sl_kafka_source_cfg_fini(&cfg);
	sl_schema_destroy(s);
	sl_schema_destroy(r);
}

static void test_debezium(void)
{
	struct sl_schema *s = sl_schema_create();
	struct sl_kafka_source_cfg cfg;
	struct harness h;
	void *st;

	T_ASSERT(sl_schema_add(s, "id", SL_TYPE_BIGINT) == 0);
	T_ASSERT(sl_schema_add(s, "qty", SL_TYPE_INT) == 1);
	T_ASSERT(rd_kafka_mock_topic_create(mc, "dbserver1.public.orders", 1, 1) == 0);
	produce("dbserver1.public.orders", 0, "{\"id\":1}",
		"{\"before\":null,\"after\":{\"id\":1,\"qty\":5},\"op\":\"c\"}", BASE_TS);
	produce("dbserver1.public.orders", 0, "{\"id\":1}",
		"{\"payload\":{\"before\":{\"id\":1,\"qty\":5},\"after\":{\"id\":1,\"qty\":7},"
		"\"op\":\"u\"}}",
		BASE_TS);
	produce("dbserver1.public.orders", 0, "{\"id\":1}",
		"{\"before\":{\"id\":1,\"qty\":7},\"after\":null,\"op\":\"d\"}", BASE_TS);
	produce("dbserver1.public.orders", 0, "{\"id\":1}", NULL, BASE_TS); /* tombstone */
	flush();
	h_init(&h);
	cfg = base_cfg("dbserver1.public.orders", s);
	cfg.value_format = SL_KAFKA_FMT_DEBEZIUM_JSON;
	prepare(&cfg);
	st = open_split(&cfg, 0);
	drain(&h, st, 0, 64);
	T_ASSERT_EQ_I64(pos_of(st), 4);
	sl_kafka_source_ops.close(st);
	T_ASSERT_EQ_I64(h.nrows, 4);
	T_ASSERT_EQ_I64(h.rows[0]->kind, SL_ROW_INSERT);
	T_ASSERT_EQ_I64(h.rows[1]->kind, SL_ROW_UPDATE_BEFORE);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[1], 1), 5);
	T_ASSERT_EQ_I64(h.rows[2]->kind, SL_ROW_UPDATE_AFTER);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[2], 1), 7);
	T_ASSERT_EQ_I64(h.rows[3]->kind, SL_ROW_DELETE);
	T_ASSERT_EQ_I64(h.ndl, 0);
	h_fini(&h);
	sl_kafka_source_cfg_fini(&cfg);
	sl_schema_destroy(s);
}

/* Fetch requests failing at the broker: librdkafka retries, nothing is lost or repeated. */
static void test_fetch_errors(void)
{
	struct sl_schema *s = order_schema();
	struct sl_kafka_source_cfg cfg = base_cfg("orders", s);
	struct harness h;
	void *st;

	prepare(&cfg);
	rd_kafka_mock_push_request_errors(
		mc, 1 /* Fetch */, 4, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
		RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
		RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
	h_init(&h);
	st = open_split(&cfg, 0);
	drain(&h, st, 0, 3);
	sl_kafka_source_ops.close(st);
	T_ASSERT_EQ_I64(h.nrows, 20);
	for (size_t r = 0; r < h.nrows; r++)
		T_ASSERT_EQ_I64(sl_row_i64(h.rows[r], 0), 2 * (int64_t)r);
	h_fini(&h);
	sl_kafka_source_cfg_fini(&cfg);
	sl_schema_destroy(s);
}

static void produce_ids(const char *topic, int from, int to)
{
	char v[64];

	for (int i = from; i < to; i++) {
		snprintf(v, sizeof v, "{\"id\": %d, \"name\": \"m\"}", i);
		produce(topic, 0, NULL, v, BASE_TS + i);
	}
	flush();
}

/* The partition's leader moves to another broker mid-read, then that broker goes down for a
 * while: the split carries on from where it was, every message exactly once, in order. */
static void test_leader_change_and_broker_down(void)
{
	struct sl_schema *s = order_schema();
	struct sl_kafka_source_cfg cfg = base_cfg("moving", s);
	struct harness h;
	char v[64];
	void *st;

	T_ASSERT(rd_kafka_mock_topic_create(mc, "moving", 1, 3) == 0);
	T_ASSERT(rd_kafka_mock_partition_set_leader(mc, "moving", 0, 1) == 0);
	produce_ids("moving", 0, 20);
	cfg.bounded = SL_KAFKA_UNBOUNDED;
	prepare(&cfg);
	h_init(&h);
	h.c.split = 0;
	st = open_split(&cfg, 0);
	poll_until(&h, st, 20);
	/* new data lands on the new leader: the consumer must follow it */
	T_ASSERT(rd_kafka_mock_partition_set_leader(mc, "moving", 0, 2) == 0);
	produce_ids("moving", 20, 40);
	poll_until(&h, st, 40);
	/* the leader down: nothing can be produced or fetched; then it comes back */
	T_ASSERT(rd_kafka_mock_broker_set_down(mc, 2) == 0);
	for (int i = 40; i < 60; i++) {
		snprintf(v, sizeof v, "{\"id\": %d, \"name\": \"m\"}", i);
		produce("moving", 0, NULL, v, BASE_TS + i);
	}
	for (int i = 0; i < 100; i++) {
		T_ASSERT(sl_kafka_source_ops.poll(st, &h.c, 64) >= 0);
		nap();
	}
	T_ASSERT_EQ_I64(h.nrows, 40);
	T_ASSERT(rd_kafka_mock_broker_set_up(mc, 2) == 0);
	flush();
	poll_until(&h, st, 60);
	T_ASSERT_EQ_I64(pos_of(st), 60);
	sl_kafka_source_ops.close(st);
	for (size_t r = 0; r < h.nrows; r++)
		T_ASSERT_EQ_I64(sl_row_i64(h.rows[r], 0), (int64_t)r);
	h_fini(&h);
	sl_kafka_source_cfg_fini(&cfg);
	sl_schema_destroy(s);
}

/* ---- SQL ------------------------------------------------------------------------------- */

static char err[512];

/* sql(): plan as EXPLAIN does, without asking the cluster */
static bool sql_offline;

static int sql(const struct sl_schema *s, const char *const *kv, struct sl_sql_conn *c)
{
	struct sl_sql_conn_table t;
	struct sl_sql_conn_opt o[32];
	int n = 0;

	for (int i = 0; kv[i]; i += 2) {
		o[n] = (struct sl_sql_conn_opt){ kv[i], kv[i + 1], (uint32_t)(10 + n), 3, false };
		n++;
	}
	err[0] = 0;
	t = (struct sl_sql_conn_table){
		.schema = s, .opts = o, .nopts = n, .file = "job.sql", .offline = sql_offline
	};
	return sl_sql_conn_bind_source(&t, c, err, sizeof err);
}

static void sql_err(const struct sl_schema *s, const char *const *kv, const char *want)
{
	struct sl_sql_conn c;
	int rc = sql(s, kv, &c);

	if (rc >= 0 || !strstr(err, want)) {
		fprintf(stderr, "rc %d '%s', expected an error with '%s'\n", rc, err, want);
		exit(T_EXIT_FAIL);
	}
	T_ASSERT(!c.cfg && !c.src_ops);
}

static void test_sql(void)
{
	struct sl_schema *s = order_schema();
	struct sl_sql_conn c;
	const struct sl_kafka_source_cfg *cfg;
	struct harness h;
	void *st;

	T_ASSERT(sql(s,
		     (const char *const[]){ "connector",
					    "kafka",
					    "topic",
					    "orders",
					    "properties.bootstrap.servers",
					    servers,
					    "properties.group.id",
					    "g1",
					    "properties.log_level",
					    "3",
					    "scan.startup.mode",
					    "specific-offsets",
					    "scan.startup.specific-offsets",
					    "partition:0,offset:18;partition:1,offset:0",
					    "scan.bounded.mode",
					    "latest-offset",
					    "format",
					    "json",
					    "json.ignore-parse-errors",
					    "true",
					    "sluice.metadata.ts",
					    "timestamp",
					    "sluice.metadata.part",
					    "partition",
					    "sluice.metadata.off",
					    "offset",
					    NULL },
		     &c) == 0);
	T_ASSERT(c.src_ops == &sl_kafka_source_ops && c.skipped && !c.changelog);
	cfg = c.cfg;
	T_ASSERT_EQ_I64(cfg->npartitions, 2);
	T_ASSERT(cfg->commit_offsets && cfg->ignore_parse_errors && cfg->nmeta == 3);
	h_init(&h);
	st = open_split(cfg, 0);
	drain(&h, st, 0, 64);
	sl_kafka_source_ops.close(st);
	T_ASSERT_EQ_I64(h.nrows, 2); /* offsets 18, 19 */
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[0], 4), 18);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[0], 2), BASE_TS + 36);
	h_fini(&h);
	sl_sql_conn_fini(&c);

	sql_err(s,
		(const char *const[]){ "connector", "kafka", "topic", "orders",
				       "properties.bootstrap.servers", servers, "format", "json",
				       "scan.startup.mod", "earliest-offset", NULL },
		"job.sql:14:3: unknown option 'scan.startup.mod' for connector 'kafka'");
	sql_err(s,
		(const char *const[]){ "connector", "kafka", "topic", "orders", "format", "json",
				       NULL },
		"job.sql:10:3: connector 'kafka' needs option 'properties.bootstrap.servers'");
	sql_err(s,
		(const char *const[]){ "connector", "kafka", "topic", "orders",
				       "properties.bootstrap.servers", servers,
				       "properties.no.such.thing", "1", "format", "json", NULL },
		"job.sql:13:3: option 'properties.no.such.thing': property 'no.such.thing'");
	sql_err(s,
		(const char *const[]){
			"connector", "kafka", "topic", "orders", "properties.bootstrap.servers",
			servers, "format", "json", "scan.startup.mode", "specific-offsets",
			"scan.startup.specific-offsets", "partition:0;offset:1", NULL },
		"job.sql:15:3: option 'scan.startup.specific-offsets'");
	sql_err(s,
		(const char *const[]){ "connector", "kafka", "topic", "orders",
				       "properties.bootstrap.servers", servers, "format", "xml",
				       NULL },
		"job.sql:13:3: option 'format': unknown format 'xml'");
	/* the columns against the metadata keys and the raw format, at the option asking */
	sql_err(s,
		(const char *const[]){ "connector", "kafka", "topic", "orders",
				       "properties.bootstrap.servers", servers, "format", "json",
				       "sluice.metadata.name", "timestamp", NULL },
		"job.sql:14:3: kafka source 'orders': metadata column 'name' cannot be STRING");
	sql_err(s,
		(const char *const[]){ "connector", "kafka", "topic", "orders",
				       "properties.bootstrap.servers", servers, "format", "raw",
				       NULL },
		"job.sql:13:3: kafka source 'orders': format 'raw' reads one STRING column, 'id' "
		"is BIGINT");
	{
		struct sl_schema *two = sl_schema_create();

		T_ASSERT(sl_schema_add(two, "a", SL_TYPE_STRING) == 0);
		T_ASSERT(sl_schema_add(two, "b", SL_TYPE_STRING) == 1);
		sql_err(two,
			(const char *const[]){ "connector", "kafka", "topic", "orders",
					       "properties.bootstrap.servers", servers, "format",
					       "raw", NULL },
			"job.sql:13:3: kafka source 'orders': format 'raw' reads exactly one "
			"column (the value has 2)");
		sql_err(two,
			(const char *const[]){ "connector", "kafka", "topic", "orders",
					       "properties.bootstrap.servers", servers, "format",
					       "json", "key.format", "raw", "key.fields", "a;b",
					       NULL },
			"job.sql:14:3: kafka source 'orders': format 'raw' reads exactly one "
			"column (the key has 2)");
		sl_schema_destroy(two);
	}
	/* offline (EXPLAIN) too: the cluster is not asked, the columns are still checked */
	sql_offline = true;
	sql_err(s,
		(const char *const[]){ "connector", "kafka", "topic", "nowhere",
				       "properties.bootstrap.servers", "127.0.0.1:1", "format",
				       "json", "sluice.metadata.part", "topic", NULL },
		"job.sql:14:3: kafka source 'nowhere': metadata column 'part' cannot be INT");
	T_ASSERT(sql(s,
		     (const char *const[]){ "connector", "kafka", "topic", "nowhere",
					    "properties.bootstrap.servers", "127.0.0.1:1", "format",
					    "json", NULL },
		     &c) == 0);
	sl_sql_conn_fini(&c);
	sql_offline = false;
	sql_err(s,
		(const char *const[]){ "connector", "kafka", "topic-pattern", "nothing.*",
				       "properties.bootstrap.servers", servers, "format", "json",
				       NULL },
		"job.sql:10:3: kafka source: no topic matches the pattern 'nothing.*'");
	sql_err(s,
		(const char *const[]){
			"connector", "kafka", "topic", "orders;fmt", "properties.bootstrap.servers",
			servers, "format", "json", "scan.startup.mode", "specific-offsets",
			"scan.startup.specific-offsets", "partition:0,offset:1", NULL },
		"job.sql:10:3: specific offsets name partitions of one topic");

	/* a list: topics in name order, then partitions */
	T_ASSERT(sql(s,
		     (const char *const[]){ "connector", "kafka", "topic", "orders;fmt",
					    "properties.bootstrap.servers", servers, "format",
					    "json", NULL },
		     &c) == 0);
	cfg = c.cfg;
	T_ASSERT_EQ_I64(cfg->npartitions, 3);
	T_ASSERT(!strcmp(cfg->split_refs[0].topic, "fmt") && cfg->split_refs[0].partition == 0);
	T_ASSERT(!strcmp(cfg->split_refs[1].topic, "orders") && cfg->split_refs[1].partition == 0);
	T_ASSERT(!strcmp(cfg->split_refs[2].topic, "orders") && cfg->split_refs[2].partition == 1);
	{
		/* a position taken on one partition does not resume another */
		struct sl_kafka_source_cfg one = *cfg;
		char pos[64];
		size_t len;

		st = open_split(cfg, 2);
		T_ASSERT(sl_kafka_source_ops.position(st, pos, sizeof pos, &len) == 0);
		sl_kafka_source_ops.close(st);
		st = open_split(&one, 1);
		T_ASSERT(sl_kafka_source_ops.seek(st, pos, len) == -ESTALE);
		sl_kafka_source_ops.close(st);
		st = open_split(&one, 2);
		T_ASSERT(sl_kafka_source_ops.seek(st, pos, len) == 0);
		sl_kafka_source_ops.close(st);
	}
	sl_sql_conn_fini(&c);

	/* a pattern matches whole names: 'd.*orders' is dbserver1.public.orders only */
	T_ASSERT(sql(s,
		     (const char *const[]){ "connector", "kafka", "topic-pattern", "d.*orders|live",
					    "properties.bootstrap.servers", servers, "format",
					    "json", NULL },
		     &c) == 0);
	cfg = c.cfg;
	T_ASSERT_EQ_I64(cfg->npartitions, 2);
	T_ASSERT(!strcmp(cfg->split_refs[0].topic, "dbserver1.public.orders"));
	T_ASSERT(!strcmp(cfg->split_refs[1].topic, "live"));
	sl_sql_conn_fini(&c);
	sl_schema_destroy(s);
}

/* Polls an unbounded split until the harness holds `want` rows. */
static void take_rows(struct harness *h, void *st, int split, size_t want)
{
	h->c.split = split;
	for (int i = 0; i < 5000 && h->nrows < want; i++) {
		int rc = sl_kafka_source_ops.poll(st, &h->c, 64);

		T_ASSERT(rc >= 0);
		if (rc == 0)
			nap();
	}
	T_ASSERT_EQ_I64(h->nrows, want);
}

/*
 * Discovery: a pattern source finds a topic created after prepare (the mock cannot add
 * partitions to a topic), its splits come after the plan's and start at the earliest offset
 * whatever the startup mode; a fresh plan sorts the topic first, and restore_layout numbers
 * the splits as the positions of the first run say; a partition gone fails by name.
 */
static void test_discovery(void)
{
	struct sl_schema *s = order_schema();
	struct sl_kafka_source_cfg cfg = base_cfg(NULL, s), again;
	struct sl_error why = { 0 };
	const void *pos[3];
	size_t len[3];
	char buf[3][64], v[128];
	struct harness h;
	void *st;

	T_ASSERT(rd_kafka_mock_topic_create(mc, "dsc-m", 1, 1) == 0);
	cfg.topic_pattern = "dsc-.*";
	cfg.bounded = SL_KAFKA_UNBOUNDED;
	cfg.startup = SL_KAFKA_START_LATEST; /* found later: from the start all the same */
	cfg.discovery_interval_ms = 100;
	prepare(&cfg);
	T_ASSERT(sl_kafka_source_ops.splits_grow(&cfg));
	T_ASSERT_EQ_I64(sl_kafka_source_ops.discover(&cfg, 1000), 1);
	T_ASSERT(rd_kafka_mock_topic_create(mc, "dsc-a", 2, 1) == 0);
	for (int i = 0; i < 10; i++) {
		snprintf(v, sizeof v, "{\"id\": %d, \"name\": \"a\", \"ts\": 5}", i);
		produce("dsc-a", i % 2, NULL, v, BASE_TS + i);
	}
	flush();
	/* not before the interval has passed, then both partitions */
	T_ASSERT_EQ_I64(sl_kafka_source_ops.discover(&cfg, 1050), 1);
	T_ASSERT_EQ_I64(sl_kafka_source_ops.discover(&cfg, 1100), 3);
	T_ASSERT_EQ_I64(sl_kafka_source_ops.nsplits(&cfg), 3);
	T_ASSERT_EQ_I64(sl_kafka_source_ops.discover(&cfg, 1200), 3); /* nothing new */

	h_init(&h);
	for (int k = 0; k < 3; k++) {
		size_t len_k;

		st = open_split(&cfg, k);
		if (k > 0) /* dsc-a/0, dsc-a/1: five records each, from offset 0 */
			take_rows(&h, st, k, h.nrows + 5);
		T_ASSERT(sl_kafka_source_ops.position(st, buf[k], sizeof buf[k], &len_k) == 0);
		T_ASSERT_EQ_I64(pos_of(st), k > 0 ? 5 : 0);
		pos[k] = buf[k];
		len[k] = len_k;
		sl_kafka_source_ops.close(st);
	}
	T_ASSERT_EQ_I64(h.nrows, 10);

	/* a fresh plan: dsc-a/0, dsc-a/1, dsc-m/0; the checkpoint's order wins */
	again = base_cfg(NULL, s);
	again.topic_pattern = "dsc-.*";
	again.bounded = SL_KAFKA_UNBOUNDED;
	again.discovery_interval_ms = 100;
	prepare(&again);
	T_ASSERT(!strcmp(again.split_refs[0].topic, "dsc-a"));
	T_ASSERT(sl_kafka_source_ops.restore_layout(&again, 3, pos, len, &why) == 0);
	for (int k = 0; k < 3; k++) {
		st = open_split(&again, k);
		T_ASSERT(sl_kafka_source_ops.seek(st, pos[k], len[k]) == 0);
		T_ASSERT_EQ_I64(pos_of(st), k > 0 ? 5 : 0);
		sl_kafka_source_ops.close(st);
	}
	sl_kafka_source_cfg_fini(&again);

	/* a checkpointed partition that no longer matches: refused, by name */
	again = base_cfg(NULL, s);
	again.topic_pattern = "dsc-m";
	prepare(&again);
	T_ASSERT(sl_kafka_source_ops.restore_layout(&again, 3, pos, len, &why) == -ESTALE);
	T_ASSERT(strstr(why.msg, "split 1") && strstr(why.msg, "not among"));
	sl_kafka_source_cfg_fini(&again);

	/* off: bounded, or an interval of 0 */
	cfg.bounded = SL_KAFKA_BOUND_LATEST;
	T_ASSERT(!sl_kafka_source_ops.splits_grow(&cfg));
	cfg.bounded = SL_KAFKA_UNBOUNDED;
	cfg.discovery_interval_ms = 0;
	T_ASSERT(!sl_kafka_source_ops.splits_grow(&cfg));
	h_fini(&h);
	sl_kafka_source_cfg_fini(&cfg);
	sl_schema_destroy(s);
}

int main(void)
{
	setup();
	test_json_bounded();
	test_position_seek();
	test_unbounded_and_startup();
	test_formats();
	test_debezium();
	test_fetch_errors();
	test_leader_change_and_broker_down();
	test_sql();
	test_discovery();
	rd_kafka_destroy(mock_rk);
	return T_EXIT_PASS;
}
