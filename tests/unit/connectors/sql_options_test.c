/*
 * sql_options_test.c - WITH options to connectors: each connector configured and run (a
 * filesystem json/csv/debezium source, a datagen source with sequence, random and
 * event-time fields, filesystem json/csv sinks, print, blackhole), options the planner
 * consumed skipped, and every error form with its FILE:LINE:COL (unknown option with the
 * known list, missing required option, bad value, wrong role, unknown connector/format,
 * source.monitor-interval).
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "conn_harness.h"
#include "sql_options.h"

static char err[512];

#define MAXO 32
struct opts {
	struct sl_sql_conn_opt o[MAXO];
	int n;
};

/* Binds o as the source (sink) of a table with schema s in job.sql. */
static int bind_source(const struct sl_schema *s, struct opts *o, struct sl_sql_conn *c)
{
	struct sl_sql_conn_table t = {
		.schema = s, .opts = o->o, .nopts = o->n, .file = "job.sql"
	};

	return sl_sql_conn_bind_source(&t, c, err, sizeof err);
}

static int bind_sink(const struct sl_schema *s, struct opts *o, struct sl_sql_conn *c)
{
	struct sl_sql_conn_table t = {
		.schema = s, .opts = o->o, .nopts = o->n, .file = "job.sql"
	};

	return sl_sql_conn_bind_sink(&t, c, err, sizeof err);
}

/* Options from "key", "value" pairs, at line 10+i, column 3. */
static struct opts mk(const char *const *kv)
{
	struct opts o = { .n = 0 };

	for (int i = 0; kv[i]; i += 2) {
		o.o[o.n] = (struct sl_sql_conn_opt){ kv[i], kv[i + 1], (uint32_t)(10 + o.n), 3,
						     false };
		o.n++;
	}
	return o;
}

static void src_err(const struct sl_schema *s, const char *const *kv, const char *want)
{
	struct opts o = mk(kv);
	struct sl_sql_conn c;
	int rc = bind_source(s, &o, &c);

	if (rc >= 0 || !strstr(err, want)) {
		fprintf(stderr, "source: rc %d '%s', expected an error with '%s'\n", rc, err, want);
		exit(T_EXIT_FAIL);
	}
	T_ASSERT(!c.cfg && !c.src_ops);
}

static void sink_err(const struct sl_schema *s, const char *const *kv, const char *want)
{
	struct opts o = mk(kv);
	struct sl_sql_conn c;
	int rc = bind_sink(s, &o, &c);

	if (rc >= 0 || !strstr(err, want)) {
		fprintf(stderr, "sink: rc %d '%s', expected an error with '%s'\n", rc, err, want);
		exit(T_EXIT_FAIL);
	}
}

static struct sl_schema *schema(void)
{
	struct sl_schema *s = sl_schema_create();

	T_ASSERT(sl_schema_add(s, "id", SL_TYPE_BIGINT) == 0);
	T_ASSERT(sl_schema_add(s, "name", SL_TYPE_STRING) == 1);
	T_ASSERT(sl_schema_add_decimal(s, "amount", 6, 2) == 2);
	T_ASSERT(sl_schema_add(s, "ts", SL_TYPE_TIMESTAMP) == 3);
	T_ASSERT(sl_schema_add(s, "day", SL_TYPE_DATE) == 4);
	T_ASSERT(sl_schema_add(s, "f", SL_TYPE_FLOAT) == 5);
	return s;
}

static void test_errors(void)
{
	struct sl_schema *s = schema();

	src_err(s, (const char *const[]){ "connector", "filesystem", "path", "/x", "format", "json",
					  "json.ignore-parse-error", "true", NULL },
		"job.sql:13:3: unknown option 'json.ignore-parse-error' for connector 'filesystem' "
		"(known: path, format, json.ignore-parse-errors, json.fail-on-missing-field, "
		"json.fail-on-decimal-overflow, source.split-size)");
	src_err(s, (const char *const[]){ "connector", "filesystem", "format", "json", NULL },
		"job.sql:10:3: connector 'filesystem' needs option 'path'");
	src_err(s, (const char *const[]){ "connector", "filesystem", "path", "/x", NULL },
		"job.sql:10:3: connector 'filesystem' needs option 'format'");
	src_err(s, (const char *const[]){ "connector", "filesystem", "path", "/x", "format", "avro",
					  NULL },
		"job.sql:12:3: option 'format': unknown format 'avro'");
	src_err(s, (const char *const[]){ "connector", "filesystem", "path", "/x", "format", "csv",
					  "json.ignore-parse-errors", "true", NULL },
		"job.sql:13:3: unknown option 'json.ignore-parse-errors'");
	src_err(s, (const char *const[]){ "connector", "filesystem", "path", "/x", "format", "json",
					  "json.ignore-parse-errors", "yes", NULL },
		"job.sql:13:3: option 'json.ignore-parse-errors': 'yes' is not a boolean");
	src_err(s, (const char *const[]){ "connector", "filesystem", "path", "/x", "format", "json",
					  "json.ignore-parse-errors", "true",
					  "json.fail-on-missing-field", "true", NULL },
		"cannot both be true");
	src_err(s, (const char *const[]){ "connector", "filesystem", "path", "/x", "format", "csv",
					  "csv.field-delimiter", ";;", NULL },
		"job.sql:13:3: option 'csv.field-delimiter': ';;' is not a single character");
	src_err(s, (const char *const[]){ "connector", "filesystem", "path", "/x", "format", "json",
					  "source.monitor-interval", "1 s", NULL },
		"job.sql:13:3: option 'source.monitor-interval' is not supported");
	src_err(s, (const char *const[]){ "connector", "kafka", NULL },
		"job.sql:10:3: connector 'kafka' needs option 'topic' or 'topic-pattern'");
	src_err(s, (const char *const[]){ "connector", "nosuch", NULL },
		"job.sql:10:3: unknown connector 'nosuch' (known: filesystem, datagen, nexmark, kafka, "
		"upsert-kafka, print, blackhole)");
	sink_err(s, (const char *const[]){ "connector", "kafak", NULL },
		 "job.sql:10:3: unknown connector 'kafak' (known: filesystem, datagen, nexmark, kafka, "
		 "upsert-kafka, print, blackhole)");
	src_err(s, (const char *const[]){ "path", "/x", NULL },
		"job.sql:10:3: table needs a 'connector' option");
	src_err(s, (const char *const[]){ "connector", "print", NULL },
		"job.sql:10:3: connector 'print' is a sink: it cannot be read from");
	src_err(s, (const char *const[]){ "connector", "blackhole", NULL },
		"job.sql:10:3: connector 'blackhole' is a sink: it cannot be read from");
	src_err(s, (const char *const[]){ "connector", "upsert-kafka", NULL },
		"job.sql:10:3: connector 'upsert-kafka' is a sink: it cannot be read from");
	sink_err(s, (const char *const[]){ "connector", "datagen", NULL },
		 "job.sql:10:3: connector 'datagen' is a source: it cannot be written to");
	sink_err(s, (const char *const[]){ "connector", "upsert-kafka", NULL },
		 "job.sql:10:3: connector 'upsert-kafka' needs a 'topic'");
	sink_err(s, (const char *const[]){ "connector", "blackhole", "x", "1", NULL },
		 "job.sql:11:3: unknown option 'x' for connector 'blackhole'");
	sink_err(s, (const char *const[]){ "connector", "print", "print-identifer", "a", NULL },
		 "job.sql:11:3: unknown option 'print-identifer' for connector 'print' (known: "
		 "print-identifier, standard-error, sink.parallelism)");
	sink_err(s, (const char *const[]){ "connector", "filesystem", "path", "/x", "format",
					   "debezium-json", NULL },
		 "job.sql:12:3: format 'debezium-json' is only supported for a filesystem source");
	sink_err(s, (const char *const[]){ "connector", "filesystem", "path", "/x", "format", "csv",
					   "sink.rolling-policy.file-size", "big", NULL },
		 "job.sql:13:3: option 'sink.rolling-policy.file-size': 'big' is not a memory "
		 "size");
	/* partition commit means nothing without PARTITIONED BY */
	sink_err(s, (const char *const[]){ "connector", "filesystem", "path", "/x", "format", "csv",
					   "sink.partition-commit.trigger", "partition-time", NULL },
		 "job.sql:13:3: unknown option 'sink.partition-commit.trigger'");

	/* datagen */
	src_err(s, (const char *const[]){ "connector", "datagen", "rows-per-second", "fast", NULL },
		"job.sql:11:3: option 'rows-per-second': 'fast' is not an integer");
	src_err(s, (const char *const[]){ "connector", "datagen", "fields.nope.kind", "random",
					  NULL },
		"job.sql:11:3: option 'fields.nope.kind': the table has no column 'nope'");
	src_err(s, (const char *const[]){ "connector", "datagen", "fields.id.colour", "red", NULL },
		"job.sql:11:3: unknown option 'fields.id.colour' for connector 'datagen'");
	src_err(s, (const char *const[]){ "connector", "datagen", "fields.id.kind", "sequence",
					  "fields.id.start", "1", NULL },
		"job.sql:10:3: datagen field 'id' of kind 'sequence' needs 'fields.id.start' and "
		"'fields.id.end'");
	src_err(s, (const char *const[]){ "connector", "datagen", "fields.id.kind", "sequence",
					  "fields.id.min", "1", NULL },
		"job.sql:12:3: option 'fields.id.min' does not apply to a field of kind 'sequence'");
	src_err(s, (const char *const[]){ "connector", "datagen", "fields.id.kind", "zigzag", NULL },
		"job.sql:11:3: option 'fields.id.kind': unknown kind 'zigzag'");
	src_err(s, (const char *const[]){ "connector", "datagen", "fields.ts.kind", "event-time",
					  "fields.ts.step", "5 fortnights", NULL },
		"job.sql:12:3: option 'fields.ts.step': '5 fortnights' is not a duration");
	src_err(s, (const char *const[]){ "connector", "datagen", "fields.amount.max", "12345.6",
					  NULL },
		"job.sql:11:3: option 'fields.amount.max': '12345.6' is not a DECIMAL(6, 2)");
	src_err(s, (const char *const[]){ "connector", "datagen", "fields.name.kind", "event-time",
					  NULL },
		"job.sql:10:3: datagen: field 'name' (STRING): event time needs");
	src_err(s, (const char *const[]){ "connector", "datagen", "fields.ts.kind", "event-time",
					  "fields.ts.late-fraction", "2", NULL },
		"job.sql:12:3: option 'fields.ts.late-fraction': 2 is not in [0, 1]");
	sl_schema_destroy(s);
}

static void test_filesystem(void)
{
	struct sl_schema *s = schema();
	char dir[] = "/tmp/sluice-opt-XXXXXX", p[512], out[256];
	struct sl_sql_conn c;
	struct harness h;
	struct opts o;
	FILE *f;

	T_ASSERT(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/in.csv", dir);
	f = fopen(p, "w");
	T_ASSERT(f);
	fputs("# a comment\n1;a b;1.005;2024-01-31 04:19:31.784;2024-02-29;0.1\n"
	      "2;-;x;;;\n3;-;-;-;-;-\n", f);
	fclose(f);

	/* csv source: delimiter, null literal, comments, ignored parse errors counted; the
	 * planner's own option (used) is not looked at */
	o = mk((const char *const[]){ "connector", "filesystem", "path", p, "format", "csv",
				      "csv.field-delimiter", ";", "csv.null-literal", "-",
				      "csv.allow-comments", "true", "csv.ignore-parse-errors", "true",
				      "scan.watermark.emit.strategy", "on-event", NULL });
	o.o[7].used = true;
	T_ASSERT(bind_source(s, &o, &c) == 0);
	T_ASSERT(c.src_ops == &sl_file_source_ops && !c.changelog && c.skipped && c.cfg);
	for (int i = 0; i < o.n; i++)
		T_ASSERT(o.o[i].used);
	h_init(&h);
	h_drain(&h, c.src_ops, c.cfg, 0, 10);
	T_ASSERT(h.nrows == 2 && h.ndl == 0 && *c.skipped == 1);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[0], 2), 101);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[0], 4), 19782);
	T_ASSERT(h.rows[1]->nulls == 0x3e);
	sl_sql_conn_fini(&c);
	T_ASSERT(!c.cfg);

	/* a folder of debezium files: a changelog source with one split per file */
	snprintf(p, sizeof p, "%s/cdc", dir);
	T_ASSERT(mkdir(p, 0755) == 0);
	for (int k = 0; k < 3; k++) {
		snprintf(out, sizeof out, "%s/cdc/part-%d", dir, k);
		f = fopen(out, "w");
		T_ASSERT(f);
		fprintf(f, "{\"payload\":{\"op\":\"c\",\"after\":{\"id\":%d,\"name\":\"n\"}}}\n", k);
		fclose(f);
	}
	o = mk((const char *const[]){ "connector", "filesystem", "path", p, "format",
				      "debezium-json", "debezium-json.schema-include", "true", NULL });
	T_ASSERT(bind_source(s, &o, &c) == 0);
	T_ASSERT(c.changelog && c.src_ops->nsplits(c.cfg) == 3);
	h_reset(&h);
	for (int k = 0; k < 3; k++)
		h_drain(&h, c.src_ops, c.cfg, k, 10);
	T_ASSERT(h.nrows == 3 && sl_row_i64(h.rows[2], 0) == 2);
	sl_sql_conn_fini(&c);

	/* a missing file is reported when the split opens, naming the path */
	o = mk((const char *const[]){ "connector", "filesystem", "path", "/nonexistent/in.json",
				      "format", "json", NULL });
	T_ASSERT(bind_source(s, &o, &c) == 0);
	{
		struct sl_error e = { 0 };

		T_ASSERT(!c.src_ops->open(c.cfg, 0, &e) && strstr(e.msg, "/nonexistent/in.json"));
	}
	sl_sql_conn_fini(&c);

	/* csv sink: a row with every new type written and read back by the csv source */
	snprintf(out, sizeof out, "%s/out.csv", dir);
	o = mk((const char *const[]){ "connector", "filesystem", "path", out, "format", "csv",
				      "csv.null-literal", "NULL", NULL });
	T_ASSERT(bind_sink(s, &o, &c) == 0);
	{
		struct sl_error e = { 0 };
		void *st = c.sink_ops->open(c.cfg, s, 0, 1, &e);
		_Alignas(8) char buf[512];
		struct sl_row_builder b;
		char text[256] = { 0 };
		int fd;

		T_ASSERT(st);
		sl_rowb_init(&b, buf, sizeof buf, 6);
		sl_rowb_set_i64(&b, 0, 7);
		sl_rowb_set_str(&b, 1, "a,\"b\"", 5);
		sl_rowb_set_i64(&b, 2, -5);
		sl_rowb_set_i64(&b, 3, 1706674771784ll);
		sl_rowb_set_i64(&b, 4, 19782);
		sl_rowb_set_f64(&b, 5, (double)0.1f);
		T_ASSERT(c.sink_ops->write(st, 0, sl_rowb_finish(&b)) == 0);
		sl_rowb_init(&b, buf, sizeof buf, 6);
		sl_rowb_set_str(&b, 1, "", 0);
		T_ASSERT(c.sink_ops->write(st, 0, sl_rowb_finish(&b)) == 0);
		T_ASSERT(c.sink_ops->flush(st) == 0);
		c.sink_ops->close(st);
		fd = open(out, O_RDONLY);
		T_ASSERT(fd >= 0 && read(fd, text, sizeof text - 1) > 0);
		close(fd);
		if (strcmp(text, "7,\"a,\"\"b\"\"\",-0.05,2024-01-31 04:19:31.784,2024-02-29,0.1\n"
				 "NULL,\"\",NULL,NULL,NULL,NULL\n")) {
			fprintf(stderr, "csv sink wrote:\n%s", text);
			exit(T_EXIT_FAIL);
		}
	}
	sl_sql_conn_fini(&c);

	/* json sink into a folder: part files per shard */
	snprintf(out, sizeof out, "%s/jout", dir);
	o = mk((const char *const[]){ "connector", "filesystem", "path", out, "format", "json",
				      NULL });
	T_ASSERT(bind_sink(s, &o, &c) == 0);
	{
		struct sl_error e = { 0 };
		void *a = c.sink_ops->open(c.cfg, s, 0, 2, &e), *b = c.sink_ops->open(c.cfg, s, 1, 2, &e);

		T_ASSERT(a && b);
		c.sink_ops->flush(a);
		c.sink_ops->flush(b);
		c.sink_ops->close(a);
		c.sink_ops->close(b);
		snprintf(p, sizeof p, "%s/part-1.jsonl", out);
		T_ASSERT(access(p, F_OK) == 0);
	}
	sl_sql_conn_fini(&c);
	h_fini(&h);
	sl_schema_destroy(s);
}

static void test_datagen_print(void)
{
	struct sl_schema *s = schema();
	struct sl_sql_conn c;
	struct harness h;
	struct opts o;
	int64_t prev_ts = 0;

	o = mk((const char *const[]){ "connector", "datagen", "rows-per-second", "0",
				      "number-of-rows", "1000", "seed", "7",
				      "fields.id.kind", "sequence", "fields.id.start", "100",
				      "fields.id.end", "100000", "fields.name.length", "4",
				      "fields.amount.min", "-1.5", "fields.amount.max", "2.25",
				      "fields.ts.kind", "event-time",
				      "fields.ts.start", "2024-01-01 00:00:00",
				      "fields.ts.step", "100 ms", "fields.ts.max-disorder", "50ms",
				      "fields.day.min", "2024-01-01", "fields.day.max", "2024-01-31",
				      "fields.f.min", "1", "fields.f.max", "2", NULL });
	T_ASSERT(bind_source(s, &o, &c) == 0);
	T_ASSERT(c.src_ops == &sl_datagen_source_ops && !c.skipped);
	h_init(&h);
	h_drain(&h, c.src_ops, c.cfg, 0, 100);
	T_ASSERT(h.nrows == 1000);
	for (size_t i = 0; i < h.nrows; i++) {
		const struct sl_row *r = h.rows[i];
		int64_t ts = sl_row_i64(r, 3);
		uint32_t len;
		float fl = (float)sl_row_f64(r, 5);

		T_ASSERT(r->nulls == 0);
		T_ASSERT_EQ_I64(sl_row_i64(r, 0), 100 + (int64_t)i);
		sl_row_str(r, 1, &len);
		T_ASSERT(len == 4);
		T_ASSERT(sl_row_i64(r, 2) >= -150 && sl_row_i64(r, 2) <= 225);
		T_ASSERT(ts <= 1704067200000ll + 100 * (int64_t)i &&
			 ts >= 1704067200000ll + 100 * (int64_t)i - 50);
		T_ASSERT(i == 0 || ts >= prev_ts - 50);
		prev_ts = ts;
		T_ASSERT(sl_row_i64(r, 4) >= 19723 && sl_row_i64(r, 4) <= 19753);
		T_ASSERT(fl >= 1 && fl <= 2 && (double)fl == sl_row_f64(r, 5));
	}
	sl_sql_conn_fini(&c);
	h_fini(&h);

	/* defaults: Flink's 10000 rows/s, unbounded */
	o = mk((const char *const[]){ "connector", "datagen", NULL });
	T_ASSERT(bind_source(s, &o, &c) == 0);
	T_ASSERT(((struct sl_datagen_cfg *)c.cfg)->rows_per_second == 10000 &&
		 ((struct sl_datagen_cfg *)c.cfg)->number_of_rows == 0);
	sl_sql_conn_fini(&c);

	o = mk((const char *const[]){ "connector", "print", "print-identifier", "out",
				      "standard-error", "true", "sink.parallelism", "1", NULL });
	T_ASSERT(bind_sink(s, &o, &c) == 0);
	{
		struct sl_print_sink_cfg *pc = c.cfg;

		T_ASSERT(c.sink_ops == &sl_print_sink_ops && pc->fd == 2 && !pc->subtask_prefix &&
			 !strcmp(pc->identifier, "out"));
	}
	sl_sql_conn_fini(&c);
	o = mk((const char *const[]){ "connector", "blackhole", NULL });
	T_ASSERT(bind_sink(s, &o, &c) == 0);
	T_ASSERT(c.sink_ops == &sl_blackhole_sink_ops);
	sl_sql_conn_fini(&c);
	sl_schema_destroy(s);
}

int main(void)
{
	test_errors();
	test_filesystem();
	test_datagen_print();
	return T_EXIT_PASS;
}
