/*
 * file_source_test.c - the file source driven by hand: exact rows from JSON lines and CSV,
 * malformed records dead-lettered as path:LINE with the decoder's reason while reading goes
 * on, blank lines, CRLF, a last line without newline, CSV headers and quoted newlines (line
 * numbers stay right after them), bad quotes that cost their own record only, reads much
 * smaller than a record (buffer growth), the poll budget, one split per path, and the message
 * for a missing file.
 */
#include "conn_harness.h"

static void test_json(size_t read_bytes)
{
	static const char *const spec[] = { "id", "INT", "name", "STRING", "ts", "TIMESTAMP",
					    NULL };
	const char text[] =
		"{\"id\":1,\"name\":\"a\",\"ts\":\"2024-01-31 04:19:31.784\"}\n"   /* line 1 */
		"{\"id\":\"oops\"}\n"                                                /* 2 bad */
		"\n"                                                                 /* 3 blank */
		"{\"id\":2,\"name\":null,\"ts\":1000}\r\n"                           /* 4 */
		"{\"id\":3,\n"                                                       /* 5 bad */
		"{\"id\":4,\"name\":\"a much longer name than the read size\"}\n"    /* 6 */
		"{\"id\":5}";                                                        /* 7, no \n */
	struct sl_schema *s = h_schema(spec);
	char *path = h_tempfile(text, sizeof text - 1);
	const char *paths[] = { path };
	struct sl_file_source_cfg cfg = { .paths = paths, .npaths = 1, .schema = s,
					  .format = SL_FORMAT_JSON,
					  .read_bytes = (uint32_t)read_bytes };
	struct harness h;
	char where[600];

	h_init(&h);
	T_ASSERT(sl_file_source_ops.nsplits(&cfg) == 1);
	h_drain(&h, &sl_file_source_ops, &cfg, 0, 2);
	T_ASSERT_EQ_I64(h.nrows, 4);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[0], 0), 1);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[1], 0), 2);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[2], 0), 4);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[3], 0), 5);
	T_ASSERT_STR(h.rows[0], 1, "a");
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[0], 2), 1706674771784ll);
	T_ASSERT(sl_row_is_null(h.rows[1], 1));
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[1], 2), 1000);
	T_ASSERT_STR(h.rows[2], 1, "a much longer name than the read size");
	T_ASSERT(sl_row_is_null(h.rows[3], 1) && sl_row_is_null(h.rows[3], 2));

	T_ASSERT_EQ_I64(h.ndl, 2);
	snprintf(where, sizeof where, "%s:2", path);
	T_ASSERT(strcmp(h.dl[0].where, where) == 0);
	T_ASSERT(strcmp(h.dl[0].why, "field 'id': 'oops' is not a valid INT") == 0);
	T_ASSERT(strcmp(h.dl[0].raw, "{\"id\":\"oops\"}") == 0);
	snprintf(where, sizeof where, "%s:5", path);
	T_ASSERT(strcmp(h.dl[1].where, where) == 0);
	T_ASSERT(strncmp(h.dl[1].why, "broken JSON", 11) == 0);
	h_fini(&h);
	unlink(path);
	free(path);
	sl_schema_destroy(s);
}

static void test_csv(void)
{
	static const char *const spec[] = { "id", "INT", "note", "STRING", NULL };
	const char text[] = "id,note\n"            /* 1: header */
			    "1,plain\n"            /* 2 */
			    "2,\"two\nlines\"\n"   /* 3-4 */
			    "x,bad\n"              /* 5 */
			    "3,\"a,\"\"b\"\"\"\r\n" /* 6 */
			    "4,\"open\n";          /* 7: unterminated at EOF */
	struct sl_schema *s = h_schema(spec);
	char *path = h_tempfile(text, sizeof text - 1);
	const char *paths[] = { path };
	struct sl_file_source_cfg cfg = { .paths = paths, .npaths = 1, .schema = s,
					  .format = SL_FORMAT_CSV, .csv = { .header = true },
					  .read_bytes = 5 };
	struct harness h;
	char where[600];

	h_init(&h);
	h_drain(&h, &sl_file_source_ops, &cfg, 0, 64);
	T_ASSERT_EQ_I64(h.nrows, 3);
	T_ASSERT_STR(h.rows[0], 1, "plain");
	T_ASSERT_STR(h.rows[1], 1, "two\nlines");
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[2], 0), 3);
	T_ASSERT_STR(h.rows[2], 1, "a,\"b\"");
	T_ASSERT_EQ_I64(h.ndl, 2);
	snprintf(where, sizeof where, "%s:5", path);
	T_ASSERT(strcmp(h.dl[0].where, where) == 0);
	T_ASSERT(strcmp(h.dl[0].why, "field 'id': 'x' is not a valid INT") == 0);
	snprintf(where, sizeof where, "%s:7", path);
	T_ASSERT(strcmp(h.dl[1].where, where) == 0);
	T_ASSERT(strcmp(h.dl[1].why, "column 2 ('note'): unterminated quoted field") == 0);
	h_fini(&h);
	unlink(path);
	free(path);
	sl_schema_destroy(s);
}

/*
 * A malformed CSV record costs that record only: an unterminated quote, a stray quote in an
 * unquoted field and a quote pairing with one lines later must not swallow the records after
 * them (issue 13, item 5: 7,606 of 20,000 good records were lost behind one quote).
 */
static void test_csv_bad_quotes(void)
{
	static const char *const spec[] = { "id", "INT", "s", "STRING", NULL };
	const char small[] = "1,a\n2,\"b\n3,c\n4,d\n";
	struct sl_schema *s = h_schema(spec);
	char *path = h_tempfile(small, sizeof small - 1);
	const char *paths[] = { path };
	struct sl_file_source_cfg cfg = { .paths = paths, .npaths = 1, .schema = s,
					  .format = SL_FORMAT_CSV };
	size_t cap = 1 << 20, n = 0;
	char *text = malloc(cap), where[600];
	struct harness h;
	int per = 20000, bad = 12394, id = 0;

	h_init(&h);
	h_drain(&h, &sl_file_source_ops, &cfg, 0, 64);
	T_ASSERT_EQ_I64(h.nrows, 3);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[0], 0), 1);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[1], 0), 3);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[2], 0), 4);
	T_ASSERT_STR(h.rows[2], 1, "d");
	T_ASSERT_EQ_I64(h.ndl, 1);
	snprintf(where, sizeof where, "%s:2", path);
	T_ASSERT(strcmp(h.dl[0].where, where) == 0);
	T_ASSERT(strcmp(h.dl[0].why, "column 2 ('s'): unterminated quoted field") == 0);
	T_ASSERT(strcmp(h.dl[0].raw, "2,\"b") == 0);
	unlink(path);
	free(path);

	/*
	 * 20,000 records, quoted fields (one with a line break) every 100, a stray quote in an
	 * unquoted field at 5,000 and one unterminated quote at 12,394: each bad record is one
	 * dead letter, every other record a row, with small reads so that records straddle them.
	 */
	T_ASSERT(text);
	for (int i = 0; i < per; i++) {
		if (i == bad)
			n += (size_t)snprintf(text + n, cap - n, "%d,\"open\n", i);
		else if (i == 5000)
			n += (size_t)snprintf(text + n, cap - n, "%d,5\" tall\n", i);
		else if (i % 100 == 0)
			n += (size_t)snprintf(text + n, cap - n, "%d,\"q,\"\"%d\"\"\"\n", i, i);
		else if (i % 100 == 50)
			n += (size_t)snprintf(text + n, cap - n, "%d,\"two\nlines\"\n", i);
		else
			n += (size_t)snprintf(text + n, cap - n, "%d,v%d\n", i, i);
	}
	path = h_tempfile(text, n);
	paths[0] = path;
	cfg.read_bytes = 4096;
	h_reset(&h);
	h_drain(&h, &sl_file_source_ops, &cfg, 0, 64);
	T_ASSERT_EQ_I64(h.nrows, per - 1);
	T_ASSERT_EQ_I64(h.ndl, 1);
	T_ASSERT(strcmp(h.dl[0].raw, "12394,\"open") == 0);
	for (int i = 0; i < per; i++) {
		if (i == bad)
			continue;
		T_ASSERT_EQ_I64(sl_row_i64(h.rows[id], 0), i);
		if (i == 5000)
			T_ASSERT_STR(h.rows[id], 1, "5\" tall");
		else if (i % 100 == 50)
			T_ASSERT_STR(h.rows[id], 1, "two\nlines");
		id++;
	}
	h_fini(&h);
	unlink(path);
	free(path);
	free(text);
	sl_schema_destroy(s);
}

/* Many records over several splits, with the default 1 MiB reads and a poll budget. */
static void test_splits(void)
{
	static const char *const spec[] = { "k", "BIGINT", "v", "DOUBLE", NULL };
	struct sl_schema *s = h_schema(spec);
	char *paths[3];
	struct sl_file_source_cfg cfg = { .paths = (const char *const *)paths, .npaths = 3,
					  .schema = s };
	size_t cap = 8 << 20, n;
	char *text = malloc(cap);
	struct harness h;
	int per = 60000;

	for (int f = 0; f < 3; f++) {
		n = 0;
		for (int i = 0; i < per; i++)
			n += (size_t)snprintf(text + n, cap - n, "{\"k\":%d,\"v\":%d.25}\n",
					      f * per + i, i);
		paths[f] = h_tempfile(text, n);
	}
	T_ASSERT(sl_file_source_ops.nsplits(&cfg) == 3);
	h_init(&h);
	for (int f = 0; f < 3; f++) {
		struct sl_error err = { 0 };
		void *st = sl_file_source_ops.open(&cfg, f, &err);
		int rc, polls = 0;

		T_ASSERT(st);
		while ((rc = sl_file_source_ops.poll(st, &h.c, 100)) != SL_SRC_EOF) {
			T_ASSERT(rc >= 0 && rc <= 100);
			polls++;
		}
		T_ASSERT(polls >= per / 100);
		sl_file_source_ops.close(st);
	}
	T_ASSERT_EQ_I64(h.nrows, 3 * per);
	T_ASSERT_EQ_I64(h.ndl, 0);
	for (int i = 0; i < 3 * per; i++) {
		T_ASSERT_EQ_I64(sl_row_i64(h.rows[i], 0), i);
		T_ASSERT(sl_row_f64(h.rows[i], 1) == (i % per) + 0.25);
	}
	h_fini(&h);
	for (int f = 0; f < 3; f++) {
		unlink(paths[f]);
		free(paths[f]);
	}
	free(text);
	sl_schema_destroy(s);
}

static void test_errors(void)
{
	static const char *const spec[] = { "a", "INT", NULL };
	struct sl_schema *s = h_schema(spec);
	const char *paths[] = { "/nonexistent/sluice/in.jsonl" };
	struct sl_file_source_cfg cfg = { .paths = paths, .npaths = 1, .schema = s };
	struct sl_error err = { 0 };
	struct harness h;
	char *path;

	T_ASSERT(sl_file_source_ops.open(&cfg, 0, &err) == NULL);
	T_ASSERT_EQ_I64(err.code, -ENOENT);
	T_ASSERT(strcmp(err.msg, "file source: cannot open '/nonexistent/sluice/in.jsonl': "
				 "No such file or directory") == 0);
	memset(&err, 0, sizeof err);
	T_ASSERT(sl_file_source_ops.open(&cfg, 1, &err) == NULL && err.code == -EINVAL);

	/* an emit error other than -ENOSPC stops the poll; -ENOSPC is a dead letter */
	path = h_tempfile("{\"a\":1}\n{\"a\":2}\n", 16);
	paths[0] = path;
	h_init(&h);
	h.emit_rc = -EIO;
	{
		void *st = sl_file_source_ops.open(&cfg, 0, &err);

		T_ASSERT(st);
		T_ASSERT_EQ_I64(sl_file_source_ops.poll(st, &h.c, 10), -EIO);
		sl_file_source_ops.close(st);
	}
	h.emit_rc = -ENOSPC;
	h_drain(&h, &sl_file_source_ops, &cfg, 0, 10);
	T_ASSERT_EQ_I64(h.ndl, 2);
	T_ASSERT(strcmp(h.dl[1].why, "row larger than a ring frame") == 0);
	h_fini(&h);
	unlink(path);
	free(path);
	sl_schema_destroy(s);
}

int main(void)
{
	test_json(0);
	test_json(7);
	test_json(64);
	test_csv();
	test_csv_bad_quotes();
	test_splits();
	test_errors();
	return T_EXIT_PASS;
}
