/*
 * file_split_test.c - a file cut into byte-range splits reads exactly the records, dead
 * letters and line numbers of the whole file read as one split, for every split size from
 * one byte up: JSON lines with bad and blank lines, and CSV with a header, quoted fields that
 * hold line breaks and delimiters, doubled quotes, bad quotes and CRLF (the exact planning
 * pass), and CSV without any quote (the line-start pass). Ranges are contiguous and begin at
 * record starts; a restored position from another cut of the file is refused.
 */
#include <stdarg.h>

#include "conn_harness.h"

/* A deterministic pseudo-random source, so a failure reproduces. */
static uint64_t rnd_state = 42;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rnd_state >> 33) % n;
}

/* Appends printf output to a growing text. */
struct text {
	char *p;
	size_t len, cap;
};

static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		T_ASSERT(n >= 0);
		if (t->len + (size_t)n < t->cap)
			break;
		t->cap = t->cap ? t->cap * 2 : 4096;
		t->p = realloc(t->p, t->cap);
		T_ASSERT(t->p);
	}
	t->len += (size_t)n;
}

static void csv_text(struct text *t, int n, bool quotes)
{
	add(t, "id,note\n");
	for (int i = 0; i < n; i++) {
		switch (quotes ? rnd(8) : rnd(3)) {
		case 0:
			add(t, "%d,plain %u\n", i, rnd(100000));
			break;
		case 1:
			add(t, "\n"); /* blank */
			add(t, "%d,crlf\r\n", i);
			break;
		case 2:
			add(t, "x%d,not an int\n", i); /* bad */
			break;
		case 3:
			add(t, "%d,\"two\nlines, %u\"\n", i, rnd(1000));
			break;
		case 4:
			add(t, "%d,\"a \"\"quoted\"\" word\"\n", i);
			break;
		case 5:
			add(t, "%d,\"three\n\nlines\"\r\n", i);
			break;
		case 6:
			add(t, "%d,\"bad\" quote\nnext\n", i); /* bad quote, then a bad record */
			break;
		default:
			add(t, "%d,\"%.*s\"\n", i, (int)rnd(200), "....................................."
				"................................................................."
				"................................................................."
				"..............................................................");
		}
	}
	add(t, "%d,last line without a newline", n);
}

static void json_text(struct text *t, int n)
{
	for (int i = 0; i < n; i++) {
		switch (rnd(5)) {
		case 0:
			add(t, "{\"id\":\"oops\"}\n");
			break;
		case 1:
			add(t, "\n");
			/* fall through */
		default:
			add(t, "{\"id\":%d,\"note\":\"n%u\"}\n", i, rnd(1000000));
		}
	}
	add(t, "{\"id\":%d}", n);
}

/* Reads every split of cfg in order into h. */
static void read_all(struct harness *h, const struct sl_file_source_cfg *cfg)
{
	int n = sl_file_source_ops.nsplits(cfg);

	for (int k = 0; k < n; k++)
		h_drain(h, &sl_file_source_ops, cfg, k, 1 + (int)rnd(50));
}

static void same(const struct harness *a, const struct harness *b)
{
	T_ASSERT_EQ_I64((int64_t)b->nrows, (int64_t)a->nrows);
	T_ASSERT_EQ_I64((int64_t)b->ndl, (int64_t)a->ndl);
	for (size_t i = 0; i < a->nrows; i++) {
		T_ASSERT(a->rows[i]->size == b->rows[i]->size);
		T_ASSERT(memcmp(a->rows[i], b->rows[i], a->rows[i]->size) == 0);
	}
	for (size_t i = 0; i < a->ndl; i++) {
		if (strcmp(a->dl[i].where, b->dl[i].where))
			fprintf(stderr, "dead letter %zu at %s, whole file %s\n", i, b->dl[i].where,
				a->dl[i].where);
		T_ASSERT(strcmp(a->dl[i].where, b->dl[i].where) == 0);
		T_ASSERT(strcmp(a->dl[i].why, b->dl[i].why) == 0);
		T_ASSERT(a->dl[i].rawlen == b->dl[i].rawlen);
	}
}

/* Ranges cover the file without gaps, each beginning at a record start of the whole read. */
static void check_ranges(const struct sl_file_range *r, int n, const char *text)
{
	T_ASSERT(n >= 1 && r[0].begin == 0 && r[n - 1].end == UINT64_MAX);
	for (int k = 1; k < n; k++) {
		T_ASSERT(r[k].begin == r[k - 1].end && r[k].begin > r[k - 1].begin);
		T_ASSERT(text[r[k].begin - 1] == '\n');
	}
}

static void test_cut(enum sl_format fmt, const char *text, size_t len, bool header)
{
	static const char *const spec[] = { "id", "INT", "note", "STRING", NULL };
	static const uint64_t sizes[] = { 1, 2, 3, 7, 40, 333, 4096, 100000 };
	struct sl_schema *s = h_schema(spec);
	char *path = h_tempfile(text, len);
	const char *paths[] = { path };
	struct sl_file_source_cfg cfg = { .paths = paths, .npaths = 1, .schema = s,
					  .format = fmt, .csv = { .header = header },
					  .read_bytes = 64 };
	struct harness whole, cut;
	int max_ranges = 0;

	h_init(&whole);
	read_all(&whole, &cfg);
	T_ASSERT(whole.nrows > 100 && whole.ndl > 10);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		struct sl_file_range *r;
		struct sl_error err;
		int n;

		T_ASSERT(sl_file_plan_ranges(&cfg, sizes[i], &r, &n, &err) == 0);
		check_ranges(r, n, text);
		if (n > max_ranges)
			max_ranges = n;
		cfg.ranges = r;
		cfg.nranges = n;
		T_ASSERT(sl_file_source_ops.nsplits(&cfg) == n);
		h_init(&cut);
		read_all(&cut, &cfg);
		same(&whole, &cut);
		h_fini(&cut);
		cfg.ranges = NULL;
		cfg.nranges = 0;
		free(r);
	}
	T_ASSERT(max_ranges > 1000); /* one-byte splits: a range per record */
	h_fini(&whole);
	unlink(path);
	free(path);
	sl_schema_destroy(s);
}

/* A position taken under one cut of the file does not resume a split of another. */
static void test_stale_position(void)
{
	static const char *const spec[] = { "id", "INT", NULL };
	struct sl_schema *s = h_schema(spec);
	struct text t = { 0 };
	char *path;
	const char *paths[1];
	struct sl_file_range *r1, *r2;
	struct sl_file_source_cfg cfg = { .npaths = 1, .schema = s, .format = SL_FORMAT_JSON };
	struct sl_error err;
	struct harness h;
	char pos[128];
	size_t plen;
	int n1, n2;
	void *st;

	for (int i = 0; i < 1000; i++)
		add(&t, "{\"id\":%d}\n", i);
	path = h_tempfile(t.p, t.len);
	paths[0] = path;
	cfg.paths = paths;
	T_ASSERT(sl_file_plan_ranges(&cfg, 1000, &r1, &n1, &err) == 0 && n1 > 5);
	T_ASSERT(sl_file_plan_ranges(&cfg, 3000, &r2, &n2, &err) == 0 && n2 > 1 && n2 < n1);
	cfg.ranges = r1;
	cfg.nranges = n1;
	h_init(&h);
	st = sl_file_source_ops.open(&cfg, 1, &err);
	T_ASSERT(st && sl_file_source_ops.poll(st, &h.c, 3) == 3);
	T_ASSERT(sl_file_source_ops.position(st, pos, sizeof pos, &plen) == 0);
	sl_file_source_ops.close(st);
	st = sl_file_source_ops.open(&cfg, 1, &err);
	T_ASSERT(st && sl_file_source_ops.seek(st, pos, plen) == 0);
	sl_file_source_ops.close(st);
	cfg.ranges = r2;
	cfg.nranges = n2;
	st = sl_file_source_ops.open(&cfg, 1, &err);
	T_ASSERT(st && sl_file_source_ops.seek(st, pos, plen) == -ESTALE);
	sl_file_source_ops.close(st);
	h_fini(&h);
	free(r1);
	free(r2);
	free(t.p);
	unlink(path);
	free(path);
	sl_schema_destroy(s);
}

/* A file that cannot be read yet is one range; a small file too. */
static void test_one_range(void)
{
	static const char *const spec[] = { "id", "INT", NULL };
	struct sl_schema *s = h_schema(spec);
	char *path = h_tempfile("{\"id\":1}\n{\"id\":2}\n", 18);
	const char *paths[] = { "/nonexistent/sluice-split.json", path };
	struct sl_file_source_cfg cfg = { .paths = paths, .npaths = 2, .schema = s };
	struct sl_file_range *r;
	struct sl_error err;
	int n;

	T_ASSERT(sl_file_plan_ranges(&cfg, 4, &r, &n, &err) == 0 && n == 3);
	T_ASSERT(r[0].path == 0 && r[0].begin == 0 && r[0].end == UINT64_MAX);
	T_ASSERT(r[1].path == 1 && r[2].path == 1 && r[1].end == 9 && r[2].begin == 9);
	free(r);
	T_ASSERT(sl_file_plan_ranges(&cfg, 1 << 20, &r, &n, &err) == 0 && n == 2);
	free(r);
	unlink(path);
	free(path);
	sl_schema_destroy(s);
}

int main(void)
{
	struct text csv = { 0 }, plain = { 0 }, json = { 0 };

	csv_text(&csv, 3000, true);
	test_cut(SL_FORMAT_CSV, csv.p, csv.len, true);
	csv_text(&plain, 3000, false);
	T_ASSERT(!memchr(plain.p, '"', plain.len));
	test_cut(SL_FORMAT_CSV, plain.p, plain.len, true);
	json_text(&json, 3000);
	test_cut(SL_FORMAT_JSON, json.p, json.len, false);
	test_stale_position();
	test_one_range();
	free(csv.p);
	free(plain.p);
	free(json.p);
	return T_EXIT_PASS;
}
