/*
 * jsonl_sink_test.c - the JSON-lines file sink: part files per shard in a directory (made if
 * missing), a single-shard sink writing the named file, nothing visible before flush, a
 * restart appending (never truncating what was visible), rows
 * larger than the buffer, and the round trip: rows written by the sink and read back by the
 * file source are equal field by field (every type, NULLs, hostile strings).
 */
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>

#include "conn_harness.h"

static const char *const spec[] = { "id", "BIGINT", "s", "STRING", "d", "DOUBLE", "t",
				    "TIMESTAMP", "b", "BOOL", "i", "INT", NULL };

static const char *const strs[] = { "", "plain", "q\"uote", "back\\slash", "line\nbreak\r",
				    "tab\tnul\x01", "caf\xc3\xa9 \xe2\x82\xac", "{\"json\":1}" };

static const struct sl_row *make(void *buf, uint32_t cap, int64_t id, const char *bigstr)
{
	struct sl_row_builder b;
	const char *s = bigstr ? bigstr : strs[id % 8];

	sl_rowb_init(&b, buf, cap, 6);
	sl_rowb_set_i64(&b, 0, id);
	sl_rowb_set_str(&b, 1, s, (uint32_t)strlen(s));
	sl_rowb_set_f64(&b, 2, id % 5 == 0 ? NAN : (double)id / 7.0);
	sl_rowb_set_i64(&b, 3, 1706674771784ll - id * 86400123ll);
	sl_rowb_set_bool(&b, 4, id & 1);
	sl_rowb_set_i64(&b, 5, (int32_t)(id * 2654435761u));
	if (id % 6 == 0)
		sl_rowb_set_null(&b, (int)(id / 6 % 6));
	return sl_rowb_finish(&b);
}

static void check_equal(const struct sl_row *got, const struct sl_row *want)
{
	uint32_t l1, l2;
	const char *a, *b;

	T_ASSERT(got->nulls == want->nulls);
	for (int f = 0; f < 6; f++) {
		if (sl_row_is_null(want, f))
			continue;
		if (f == 1) {
			a = sl_row_str(got, 1, &l1);
			b = sl_row_str(want, 1, &l2);
			T_ASSERT(l1 == l2 && memcmp(a, b, l1) == 0);
		} else if (f == 2) {
			T_ASSERT((isnan(sl_row_f64(got, 2)) && isnan(sl_row_f64(want, 2))) ||
				 sl_row_f64(got, 2) == sl_row_f64(want, 2));
		} else {
			T_ASSERT_EQ_I64(sl_row_i64(got, f), sl_row_i64(want, f));
		}
	}
}

static off_t file_size(const char *path)
{
	struct stat st;

	T_ASSERT(stat(path, &st) == 0);
	return st.st_size;
}

static void test_parts_round_trip(struct sl_schema *s)
{
	char dir[] = "/tmp/sluice-jsonl-XXXXXX", sub[64], part[2][96];
	struct sl_jsonl_sink_cfg cfg = { .path = sub };
	struct sl_error err = { 0 };
	_Alignas(8) char rb[1024];
	void *k[2];
	const char *paths[2] = { part[0], part[1] };
	struct sl_file_source_cfg src = { .paths = paths, .npaths = 2, .schema = s };
	struct harness h;
	int n = 20000;

	T_ASSERT(mkdtemp(dir));
	snprintf(sub, sizeof sub, "%s/out", dir); /* does not exist: made for 2 shards */
	for (int sh = 0; sh < 2; sh++) {
		k[sh] = sl_jsonl_sink_ops.open(&cfg, s, sh, 2, &err);
		if (!k[sh])
			fprintf(stderr, "%s\n", err.msg);
		T_ASSERT(k[sh]);
		snprintf(part[sh], sizeof part[sh], "%s/part-%d.jsonl", sub, sh);
	}
	for (int i = 0; i < n; i++)
		T_ASSERT(sl_jsonl_sink_ops.write(k[i % 2], 0, make(rb, sizeof rb, i, NULL)) == 0);
	/* some buffers were full and went out; the rest waits for flush */
	T_ASSERT(file_size(part[0]) > 0);
	for (int sh = 0; sh < 2; sh++) {
		off_t before = file_size(part[sh]);

		T_ASSERT(sl_jsonl_sink_ops.flush(k[sh]) == 0);
		T_ASSERT(file_size(part[sh]) > before);
		sl_jsonl_sink_ops.close(k[sh]);
	}
	h_init(&h);
	for (int sh = 0; sh < 2; sh++)
		h_drain(&h, &sl_file_source_ops, &src, sh, 256);
	T_ASSERT_EQ_I64(h.ndl, 0);
	T_ASSERT_EQ_I64(h.nrows, n);
	for (int i = 0; i < n; i++) {
		/* part 0 holds the even ids in order, then part 1 the odd ones */
		int id = i < n / 2 ? 2 * i : 2 * (i - n / 2) + 1;

		check_equal(h.rows[i], make(rb, sizeof rb, id, NULL));
	}
	h_fini(&h);
	for (int sh = 0; sh < 2; sh++)
		unlink(part[sh]);
	rmdir(sub);
	rmdir(dir);
}

static void test_single_file(struct sl_schema *s)
{
	char dir[] = "/tmp/sluice-jsonl-XXXXXX", file[64];
	struct sl_jsonl_sink_cfg cfg = { .path = file };
	struct sl_error err = { 0 };
	size_t big = 45000; /* worst case 6x: beyond the 256 KiB buffer */
	char *bigstr = malloc(big + 1), *rb = aligned_alloc(8, big + 1024);
	const char *paths[1] = { file };
	struct sl_file_source_cfg src = { .paths = paths, .npaths = 1, .schema = s };
	struct harness h;
	void *k;

	T_ASSERT(mkdtemp(dir));
	snprintf(file, sizeof file, "%s/one.jsonl", dir);
	for (size_t i = 0; i < big; i++)
		bigstr[i] = "\"\n\\x"[i % 4];
	bigstr[big] = '\0';
	k = sl_jsonl_sink_ops.open(&cfg, s, 0, 1, &err);
	T_ASSERT(k);
	T_ASSERT(sl_jsonl_sink_ops.write(k, 0, make(rb, 1024, 1, NULL)) == 0);
	T_ASSERT(file_size(file) == 0); /* buffered */
	T_ASSERT(sl_jsonl_sink_ops.write(k, 0, make(rb, (uint32_t)big + 1024, 2, bigstr)) == 0);
	T_ASSERT(sl_jsonl_sink_ops.write(k, 0, make(rb, 1024, 3, NULL)) == 0);
	T_ASSERT(sl_jsonl_sink_ops.flush(k) == 0);
	sl_jsonl_sink_ops.close(k);
	h_init(&h);
	h_drain(&h, &sl_file_source_ops, &src, 0, 16);
	T_ASSERT_EQ_I64(h.nrows, 3);
	check_equal(h.rows[0], make(rb, 1024, 1, NULL));
	check_equal(h.rows[1], make(rb, (uint32_t)big + 1024, 2, bigstr));
	check_equal(h.rows[2], make(rb, 1024, 3, NULL));
	h_reset(&h);

	/*
	 * At-least-once never takes back a visible row: opened again (a restart) the sink
	 * appends, and a partial last line a killed run left gets its newline first, so the
	 * three rows stay, the broken line is one dead letter, and the new row follows.
	 */
	{
		int fd = open(file, O_WRONLY | O_APPEND);

		T_ASSERT(fd >= 0 && write(fd, "{\"id\":9", 7) == 7);
		close(fd);
	}
	k = sl_jsonl_sink_ops.open(&cfg, s, 0, 1, &err);
	T_ASSERT(k);
	T_ASSERT(sl_jsonl_sink_ops.abort_pending(&cfg, 0, 1, 0) == 0);
	T_ASSERT(sl_jsonl_sink_ops.write(k, 0, make(rb, 1024, 4, NULL)) == 0);
	T_ASSERT(sl_jsonl_sink_ops.flush(k) == 0);
	sl_jsonl_sink_ops.close(k);
	h_drain(&h, &sl_file_source_ops, &src, 0, 16);
	T_ASSERT_EQ_I64(h.nrows, 4);
	T_ASSERT_EQ_I64(h.ndl, 1);
	check_equal(h.rows[2], make(rb, 1024, 3, NULL));
	check_equal(h.rows[3], make(rb, 1024, 4, NULL));
	h_fini(&h);

	/* a regular file cannot hold part files of two shards */
	T_ASSERT(sl_jsonl_sink_ops.open(&cfg, s, 0, 2, &err) == NULL);
	T_ASSERT_EQ_I64(err.code, -ENOTDIR);
	T_ASSERT(strstr(err.msg, "jsonl sink: needs a directory for part files"));
	/* a single shard given the directory writes part-0.jsonl in it */
	cfg.path = dir;
	k = sl_jsonl_sink_ops.open(&cfg, s, 0, 1, &err);
	T_ASSERT(k);
	sl_jsonl_sink_ops.close(k);
	snprintf(file, sizeof file, "%s/part-0.jsonl", dir);
	T_ASSERT(file_size(file) == 0);
	unlink(file);
	snprintf(file, sizeof file, "%s/one.jsonl", dir);
	unlink(file);
	/* unopenable path */
	cfg.path = "/nonexistent/sluice/out.jsonl";
	T_ASSERT(sl_jsonl_sink_ops.open(&cfg, s, 0, 1, &err) == NULL);
	T_ASSERT_EQ_I64(err.code, -ENOENT);
	rmdir(dir);
	free(bigstr);
	free(rb);
}

int main(void)
{
	struct sl_schema *s = h_schema(spec);

	test_parts_round_trip(s);
	test_single_file(s);
	sl_schema_destroy(s);
	return T_EXIT_PASS;
}
