/*
 * debezium_test.c - the Debezium JSON decoder and the file source reading change events:
 * op c/r/u/d into +I, -U/+U, -D rows, tombstones (JSON null, null payload), the
 * schema-include envelope under "payload", u/d without before-image and unknown ops as
 * record errors; a file source over a directory of event files (sorted, hidden files
 * skipped) applying the changelog to a table; ignore-parse-errors counting; and, when the
 * acceptance case's 922-event file is present, its final table (148 paid, 158 pending, 133 shipped).
 */
#include <sys/stat.h>

#include "conn_harness.h"
#include "format.h"

static _Alignas(8) char rowbuf[SL_ROW_SCRATCH];
static char why[SL_FMT_WHY_MAX];

static struct sl_schema *orders_schema(void)
{
	struct sl_schema *s = sl_schema_create();

	T_ASSERT(s);
	T_ASSERT(sl_schema_add(s, "id", SL_TYPE_INT) == 0);
	T_ASSERT(sl_schema_add(s, "customer_id", SL_TYPE_INT) == 1);
	T_ASSERT(sl_schema_add_decimal(s, "total", 10, 2) == 2);
	T_ASSERT(sl_schema_add(s, "status", SL_TYPE_STRING) == 3);
	T_ASSERT(sl_schema_add(s, "created_at", SL_TYPE_TIMESTAMP) == 4);
	return s;
}

static int rows(struct sl_json_dec *d, const char *json, const struct sl_row *out[2])
{
	why[0] = '\0';
	return sl_dbz_dec_rows_copy(d, json, strlen(json), rowbuf, sizeof rowbuf, out, why);
}

static void expect_error(struct sl_json_dec *d, const char *json, const char *want)
{
	const struct sl_row *out[2];
	int n = rows(d, json, out);

	if (n >= 0 || !strstr(why, want)) {
		fprintf(stderr, "decoding %s: got %d '%s', expected an error with '%s'\n", json, n,
			why, want);
		exit(T_EXIT_FAIL);
	}
}

#define IMG(id, st) "{\"id\":" #id ",\"customer_id\":3,\"product_id\":111,\"total\":280.05," \
		    "\"status\":\"" st "\",\"created_at\":\"2024-02-01 08:49:27.677\"}"

static void test_ops(void)
{
	struct sl_schema *s = orders_schema();
	struct sl_json_dec *d = sl_json_dec_create_ex(s, SL_JSON_DEBEZIUM, NULL);
	const struct sl_row *out[2];

	T_ASSERT(d);
	T_ASSERT(rows(d, "{\"before\":null,\"after\":" IMG(1001, "paid") ",\"source\":{\"lsn\":5},"
			 "\"op\":\"r\",\"ts_ms\":1}", out) == 1);
	T_ASSERT(out[0]->kind == SL_ROW_INSERT && out[0]->nulls == 0);
	T_ASSERT_EQ_I64(sl_row_i64(out[0], 0), 1001);
	T_ASSERT_EQ_I64(sl_row_i64(out[0], 2), 28005);
	T_ASSERT_STR(out[0], 3, "paid");
	T_ASSERT_EQ_I64(sl_row_i64(out[0], 4), 1706777367677ll);
	T_ASSERT(rows(d, "{\"op\":\"c\",\"after\":" IMG(1002, "new") "}", out) == 1);
	T_ASSERT(out[0]->kind == SL_ROW_INSERT && sl_row_i64(out[0], 0) == 1002);

	/* u: -U before, then +U after; op may come first or last */
	T_ASSERT(rows(d, "{\"before\":" IMG(1009, "paid") ",\"after\":" IMG(1009, "shipped")
			 ",\"op\":\"u\"}", out) == 2);
	T_ASSERT(out[0]->kind == SL_ROW_UPDATE_BEFORE && out[1]->kind == SL_ROW_UPDATE_AFTER);
	T_ASSERT_STR(out[0], 3, "paid");
	T_ASSERT_STR(out[1], 3, "shipped");
	T_ASSERT(out[0]->size % 8 == 0 && out[1]->size % 8 == 0);
	T_ASSERT(rows(d, "{\"op\":\"u\",\"after\":" IMG(7, "b") ",\"before\":" IMG(7, "a") "}",
		      out) == 2);
	T_ASSERT_STR(out[0], 3, "a");
	T_ASSERT_STR(out[1], 3, "b");

	/* d: -D before */
	T_ASSERT(rows(d, "{\"before\":" IMG(1046, "paid") ",\"after\":null,\"op\":\"d\"}", out) == 1);
	T_ASSERT(out[0]->kind == SL_ROW_DELETE && sl_row_i64(out[0], 0) == 1046);

	/* schema-include: the envelope under payload, schema beside it */
	T_ASSERT(rows(d, "{\"schema\":{\"type\":\"struct\",\"optional\":false},\"payload\":"
			 "{\"before\":null,\"after\":" IMG(5, "x") ",\"op\":\"c\"}}", out) == 1);
	T_ASSERT(out[0]->kind == SL_ROW_INSERT && sl_row_i64(out[0], 0) == 5);

	/* tombstones */
	T_ASSERT(rows(d, "null", out) == 0);
	T_ASSERT(rows(d, " null ", out) == 0);
	T_ASSERT(rows(d, "{\"schema\":null,\"payload\":null}", out) == 0);

	/* record errors */
	expect_error(d, "{\"before\":null,\"after\":" IMG(1, "a") ",\"op\":\"u\"}",
		     "\"before\" field of an UPDATE message is null: set REPLICA IDENTITY FULL");
	expect_error(d, "{\"before\":null,\"after\":null,\"op\":\"d\"}",
		     "\"before\" field of a DELETE message is null");
	expect_error(d, "{\"after\":" IMG(1, "a") ",\"op\":\"t\"}", "unknown \"op\" value \"t\"");
	expect_error(d, "{\"after\":" IMG(1, "a") "}", "unknown \"op\" value \"null\"");
	expect_error(d, "{\"before\":null,\"after\":null,\"op\":\"c\"}",
		     "\"after\" field of an op \"c\" message is null");
	expect_error(d, "{\"after\":5,\"op\":\"c\"}", "\"after\" is number, expected an object");
	expect_error(d, "{\"after\":{\"id\":\"x\"},\"op\":\"c\"}", "field 'id'");
	expect_error(d, "[1]", "not a JSON object");
	expect_error(d, "null x", "broken JSON");
	expect_error(d, "{\"op\":\"c\",\"after\":" IMG(1, "a") "} x", "JSON");
	sl_json_dec_destroy(d);

	/* a plain decoder refuses Debezium decoding instead of misreading */
	d = sl_json_dec_create(s);
	expect_error(d, "null", "SL_JSON_DEBEZIUM");
	sl_json_dec_destroy(d);
	sl_schema_destroy(s);
}

/* Applies a changelog to a table of (id -> status) as a keyed sink would. */
struct table {
	int64_t id[4096];
	char status[4096][16];
	int n;
};

static int find(struct table *t, int64_t id)
{
	for (int i = 0; i < t->n; i++)
		if (t->id[i] == id)
			return i;
	return -1;
}

static void apply(struct table *t, const struct sl_row *r)
{
	int64_t id = sl_row_i64(r, 0);
	int i = find(t, id);
	uint32_t len;
	const char *st = sl_row_str(r, 3, &len);

	switch (r->kind) {
	case SL_ROW_INSERT:
	case SL_ROW_UPDATE_AFTER:
		T_ASSERT(i < 0); /* -U came first */
		T_ASSERT(t->n < 4096 && len < 16);
		t->id[t->n] = id;
		memcpy(t->status[t->n], st, len);
		t->status[t->n][len] = '\0';
		t->n++;
		break;
	case SL_ROW_UPDATE_BEFORE:
	case SL_ROW_DELETE:
		T_ASSERT(i >= 0);
		T_ASSERT(strlen(t->status[i]) == len && !memcmp(t->status[i], st, len));
		t->id[i] = t->id[t->n - 1];
		memcpy(t->status[i], t->status[t->n - 1], 16);
		t->n--;
		break;
	}
}

static int count(struct table *t, const char *st)
{
	int n = 0;

	for (int i = 0; i < t->n; i++)
		n += !strcmp(t->status[i], st);
	return n;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	T_ASSERT(f);
	T_ASSERT(fputs(text, f) >= 0);
	fclose(f);
}

static void test_dir_source(void)
{
	struct sl_schema *s = orders_schema();
	char dir[] = "/tmp/sluice-dbz-XXXXXX", p[256];
	char **paths;
	int n;
	struct harness h;
	struct table *t = calloc(1, sizeof(*t));
	uint64_t skipped = 0;
	struct sl_file_source_cfg cfg = { .format = SL_FORMAT_DEBEZIUM_JSON, .schema = s };

	T_ASSERT(t && mkdtemp(dir));
	/* b sorts after a: the update in b applies to the insert in a */
	snprintf(p, sizeof p, "%s/a.json", dir);
	write_file(p, "{\"op\":\"c\",\"after\":" IMG(1, "new") "}\n"
		      "null\n"
		      "{\"op\":\"c\",\"after\":" IMG(2, "new") "}\n");
	snprintf(p, sizeof p, "%s/b.json", dir);
	write_file(p, "{\"op\":\"u\",\"before\":" IMG(1, "new") ",\"after\":" IMG(1, "paid") "}\n"
		      "{\"op\":\"u\",\"before\":null,\"after\":" IMG(2, "paid") "}\n"
		      "{\"op\":\"d\",\"before\":" IMG(2, "new") ",\"after\":null}");
	snprintf(p, sizeof p, "%s/.hidden", dir);
	write_file(p, "garbage\n");
	snprintf(p, sizeof p, "%s/_SUCCESS", dir);
	write_file(p, "");
	snprintf(p, sizeof p, "%s/sub", dir);
	T_ASSERT(mkdir(p, 0755) == 0);

	T_ASSERT(sl_file_list_dir(dir, &paths, &n) == 0 && n == 2);
	T_ASSERT(strstr(paths[0], "/a.json") && strstr(paths[1], "/b.json"));
	cfg.paths = (const char *const *)paths;
	cfg.npaths = n;
	T_ASSERT(sl_file_source_ops.nsplits(&cfg) == 2);

	h_init(&h);
	for (int split = 0; split < n; split++)
		h_drain(&h, &sl_file_source_ops, &cfg, split, 2);
	/* +I 1, +I 2, -U/+U 1, (bad line), -D 2 */
	T_ASSERT(h.nrows == 5);
	for (size_t i = 0; i < h.nrows; i++)
		apply(t, h.rows[i]);
	T_ASSERT(t->n == 1 && t->id[0] == 1 && !strcmp(t->status[0], "paid"));
	T_ASSERT(h.ndl == 1 && strstr(h.dl[0].where, "/b.json:2") &&
		 strstr(h.dl[0].why, "REPLICA IDENTITY FULL"));

	/* ignore-parse-errors: no dead letter, counted into *skipped */
	h_reset(&h);
	cfg.ignore_parse_errors = true;
	cfg.skipped = &skipped;
	h_drain(&h, &sl_file_source_ops, &cfg, 1, 100);
	T_ASSERT(h.nrows == 3 && h.ndl == 0 && skipped == 1);
	h_drain(&h, &sl_file_source_ops, &cfg, 1, 100);
	T_ASSERT(skipped == 2);

	/* a directory given as a path is an error naming it, and so is a missing file */
	{
		const char *dp[1] = { dir };
		struct sl_file_source_cfg dc = { .paths = dp, .npaths = 1, .schema = s };
		struct sl_error err = { 0 };

		T_ASSERT(!sl_file_source_ops.open(&dc, 0, &err) && err.code == -EISDIR);
		T_ASSERT(strstr(err.msg, dir));
	}
	sl_file_list_free(paths, n);
	T_ASSERT(sl_file_list_dir("/nonexistent/x.json", &paths, &n) == 0 && n == 1);
	T_ASSERT(!strcmp(paths[0], "/nonexistent/x.json"));
	sl_file_list_free(paths, n);
	snprintf(p, sizeof p, "%s/sub", dir);
	T_ASSERT(sl_file_list_dir(p, &paths, &n) == 0 && n == 0);
	sl_file_list_free(paths, n);

	h_fini(&h);
	free(t);
	sl_schema_destroy(s);
}

/* The acceptance case's 922 Debezium events: the final table has 148 paid, 158 pending, 133 shipped. */
static void test_seed_file(void)
{
	static const char *path = "/work/shared/acceptance/cases/seed_cdc_debezium_orders_by_status/"
				  "orders_dbz.jsonl";
	struct sl_schema *s;
	struct harness h;
	struct table *t;
	struct sl_file_source_cfg cfg = { .npaths = 1, .format = SL_FORMAT_DEBEZIUM_JSON };

	if (access(path, R_OK) != 0)
		return; /* not on this machine: the synthetic tests above still ran */
	s = orders_schema();
	t = calloc(1, sizeof(*t));
	T_ASSERT(t);
	cfg.paths = &path;
	cfg.schema = s;
	h_init(&h);
	h_drain(&h, &sl_file_source_ops, &cfg, 0, 64);
	T_ASSERT(h.ndl == 0);
	T_ASSERT(h.nrows == 455 + 12 + 2 * 427 + 28);
	for (size_t i = 0; i < h.nrows; i++)
		apply(t, h.rows[i]);
	T_ASSERT_EQ_I64(count(t, "paid"), 148);
	T_ASSERT_EQ_I64(count(t, "pending"), 158);
	T_ASSERT_EQ_I64(count(t, "shipped"), 133);
	T_ASSERT_EQ_I64(t->n, 148 + 158 + 133);
	h_fini(&h);
	free(t);
	sl_schema_destroy(s);
}

int main(void)
{
	test_ops();
	test_dir_source();
	test_seed_file();
	return T_EXIT_PASS;
}
