/*
 * print_sink_test.c - the print and blackhole sinks: exact changelog lines (every kind, NULLs,
 * each type), Flink's prefixes, nothing written before flush, stdout by default, a line
 * larger than the buffer, many chunks in order, and two shards writing through one pipe at
 * once without a line ever being cut by the other's.
 */
#include <fcntl.h>
#include <pthread.h>

#include "conn_harness.h"

static const char *const spec[] = { "id", "INT", "name", "STRING", "score", "DOUBLE", "ts",
				    "TIMESTAMP", "ok", "BOOL", NULL };

static char *slurp(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	ssize_t r;

	T_ASSERT(lseek(fd, 0, SEEK_SET) == 0);
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	buf[n < cap ? n : cap - 1] = '\0';
	*len = n;
	return buf;
}

static int tmpfd(void)
{
	char path[] = "/tmp/sluice-print-XXXXXX";
	int fd = mkstemp(path);

	T_ASSERT(fd >= 0);
	unlink(path);
	return fd;
}

static const struct sl_row *row(void *buf, uint32_t cap, int id, const char *name,
				enum sl_row_kind kind)
{
	struct sl_row_builder b;

	sl_rowb_init(&b, buf, cap, 5);
	sl_rowb_set_kind(&b, kind);
	sl_rowb_set_i64(&b, 0, id);
	if (name)
		sl_rowb_set_str(&b, 1, name, (uint32_t)strlen(name));
	sl_rowb_set_f64(&b, 2, id + 0.5);
	sl_rowb_set_i64(&b, 3, 1706674771784ll);
	sl_rowb_set_bool(&b, 4, id % 2);
	return sl_rowb_finish(&b);
}

static void *open_print(const struct sl_print_sink_cfg *cfg, struct sl_schema *s, int shard,
			int nshards)
{
	struct sl_error err = { 0 };
	void *p = sl_print_sink_ops.open(cfg, s, shard, nshards, &err);

	T_ASSERT(p);
	return p;
}

static void test_exact(struct sl_schema *s)
{
	int fd = tmpfd();
	struct sl_print_sink_cfg cfg = { .fd = fd };
	_Alignas(8) char rb[256];
	void *p = open_print(&cfg, s, 0, 1);
	const char *want = "+I[1, ann, 1.5, 2024-01-31 04:19:31.784, TRUE]\n"
			   "-U[2, NULL, 2.5, 2024-01-31 04:19:31.784, FALSE]\n"
			   "+U[3, b c, 3.5, 2024-01-31 04:19:31.784, TRUE]\n"
			   "-D[4, , 4.5, 2024-01-31 04:19:31.784, FALSE]\n";
	size_t len;
	char *out;

	T_ASSERT(sl_print_sink_ops.write(p, 0, row(rb, sizeof rb, 1, "ann", SL_ROW_INSERT)) == 0);
	T_ASSERT(sl_print_sink_ops.write(p, 0, row(rb, sizeof rb, 2, NULL,
						   SL_ROW_UPDATE_BEFORE)) == 0);
	T_ASSERT(sl_print_sink_ops.write(p, 0, row(rb, sizeof rb, 3, "b c",
						   SL_ROW_UPDATE_AFTER)) == 0);
	T_ASSERT(sl_print_sink_ops.write(p, 0, row(rb, sizeof rb, 4, "", SL_ROW_DELETE)) == 0);
	out = slurp(fd, &len);
	T_ASSERT_EQ_I64(len, 0); /* buffered until flush */
	free(out);
	T_ASSERT(sl_print_sink_ops.flush(p) == 0);
	out = slurp(fd, &len);
	T_ASSERT(strcmp(out, want) == 0);
	free(out);
	sl_print_sink_ops.close(p);
	close(fd);
}

static void expect_prefix(struct sl_schema *s, const struct sl_print_sink_cfg *base, int shard,
			  int nshards, const char *prefix)
{
	struct sl_print_sink_cfg cfg = *base;
	_Alignas(8) char rb[256];
	char want[256];
	size_t len;
	char *out;
	void *p;

	cfg.fd = tmpfd();
	p = open_print(&cfg, s, shard, nshards);
	T_ASSERT(sl_print_sink_ops.write(p, 0, row(rb, sizeof rb, 7, "x", SL_ROW_INSERT)) == 0);
	sl_print_sink_ops.close(p); /* close writes out what flush did not */
	out = slurp(cfg.fd, &len);
	snprintf(want, sizeof want, "%s+I[7, x, 7.5, 2024-01-31 04:19:31.784, TRUE]\n", prefix);
	if (strcmp(out, want) != 0) {
		fprintf(stderr, "got '%s', expected '%s'\n", out, want);
		exit(T_EXIT_FAIL);
	}
	free(out);
	close(cfg.fd);
}

static void test_prefix(struct sl_schema *s)
{
	struct sl_print_sink_cfg none = { 0 }, sub = { .subtask_prefix = true },
				 id = { .identifier = "out" },
				 both = { .identifier = "out", .subtask_prefix = true };

	expect_prefix(s, &none, 1, 2, "");
	expect_prefix(s, &sub, 0, 2, "1> ");
	expect_prefix(s, &sub, 1, 2, "2> ");
	expect_prefix(s, &sub, 0, 1, "");
	expect_prefix(s, &id, 0, 1, "out> ");
	expect_prefix(s, &id, 1, 4, "out> ");
	expect_prefix(s, &both, 2, 4, "out:3> ");
	expect_prefix(s, &both, 0, 1, "out> ");
}

/* Default output is stdout. */
static void test_stdout(struct sl_schema *s)
{
	int fd = tmpfd(), saved = dup(STDOUT_FILENO);
	_Alignas(8) char rb[256];
	size_t len;
	char *out;
	void *p;

	fflush(stdout);
	T_ASSERT(dup2(fd, STDOUT_FILENO) == STDOUT_FILENO);
	p = open_print(NULL, s, 0, 1);
	T_ASSERT(sl_print_sink_ops.write(p, 0, row(rb, sizeof rb, 9, "z", SL_ROW_INSERT)) == 0);
	T_ASSERT(sl_print_sink_ops.flush(p) == 0);
	sl_print_sink_ops.close(p);
	T_ASSERT(dup2(saved, STDOUT_FILENO) == STDOUT_FILENO);
	close(saved);
	out = slurp(fd, &len);
	T_ASSERT(strcmp(out, "+I[9, z, 9.5, 2024-01-31 04:19:31.784, TRUE]\n") == 0);
	free(out);
	close(fd);
}

/* 100000 rows (many buffer fills) and one line of 150 KB, all in order. */
static void test_volume(struct sl_schema *s)
{
	int fd = tmpfd();
	struct sl_print_sink_cfg cfg = { .fd = fd };
	size_t big = 150000, len, off = 0;
	char *name = malloc(big + 1), *rb = aligned_alloc(8, big + 256), *out, line[256];
	void *p = open_print(&cfg, s, 0, 1);

	memset(name, 'q', big);
	name[big] = '\0';
	for (int i = 0; i < 100000; i++) {
		T_ASSERT(sl_print_sink_ops.write(p, 0, row(rb, 256, i, "r", SL_ROW_INSERT)) == 0);
		if (i == 50000)
			T_ASSERT(sl_print_sink_ops.write(p, 0, row(rb, (uint32_t)big + 256, -1,
								   name, SL_ROW_INSERT)) == 0);
	}
	T_ASSERT(sl_print_sink_ops.flush(p) == 0);
	sl_print_sink_ops.close(p);
	out = slurp(fd, &len);
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(line, sizeof line,
				 "+I[%d, r, %d.5, 2024-01-31 04:19:31.784, %s]\n", i, i,
				 i % 2 ? "TRUE" : "FALSE");

		T_ASSERT(off + (size_t)n <= len && memcmp(out + off, line, (size_t)n) == 0);
		off += (size_t)n;
		if (i == 50000) {
			T_ASSERT(memcmp(out + off, "+I[-1, qqq", 10) == 0);
			T_ASSERT(memcmp(out + off + 7 + big, ", -0.5, ", 8) == 0);
			off = (size_t)(strchr(out + off, '\n') - out) + 1;
		}
	}
	T_ASSERT_EQ_I64(off, len);
	free(out);
	free(name);
	free(rb);
	close(fd);
}

/* ---- two shards, one pipe ---------------------------------------------------------------- */

#define PER_SHARD 30000

struct writer {
	struct sl_schema *s;
	int fd, shard;
};

struct reader {
	int fd;
	char *buf;
	size_t len, cap;
};

static void *write_shard(void *arg)
{
	struct writer *w = arg;
	struct sl_print_sink_cfg cfg = { .fd = w->fd, .subtask_prefix = true };
	_Alignas(8) char rb[1024];
	char name[600];
	void *p = open_print(&cfg, w->s, w->shard, 2);

	memset(name, 'a' + w->shard, sizeof name);
	for (int i = 0; i < PER_SHARD; i++) {
		name[i % 500] = '\0';
		T_ASSERT(sl_print_sink_ops.write(p, 0, row(rb, sizeof rb, i, name,
							   SL_ROW_INSERT)) == 0);
		name[i % 500] = (char)('a' + w->shard);
		if (i % 997 == 0)
			T_ASSERT(sl_print_sink_ops.flush(p) == 0);
	}
	T_ASSERT(sl_print_sink_ops.flush(p) == 0);
	sl_print_sink_ops.close(p);
	return NULL;
}

static void *read_pipe(void *arg)
{
	struct reader *r = arg;
	ssize_t n;

	for (;;) {
		if (r->cap - r->len < 4096)
			r->buf = realloc(r->buf, r->cap = r->cap * 2 + 65536);
		/* small reads keep the pipe near full, so big writes get split if unguarded */
		n = read(r->fd, r->buf + r->len, 1000);
		if (n <= 0)
			break;
		r->len += (size_t)n;
	}
	return NULL;
}

static void test_two_shards(struct sl_schema *s)
{
	int pfd[2];
	pthread_t rt, wt[2];
	struct reader rd = { 0 };
	struct writer w[2];
	int next[2] = { 0, 0 };
	char want[1024], nm[600], *p, *end;

	T_ASSERT(pipe(pfd) == 0);
	rd.fd = pfd[0];
	T_ASSERT(pthread_create(&rt, NULL, read_pipe, &rd) == 0);
	for (int k = 0; k < 2; k++) {
		w[k] = (struct writer){ .s = s, .fd = pfd[1], .shard = k };
		T_ASSERT(pthread_create(&wt[k], NULL, write_shard, &w[k]) == 0);
	}
	for (int k = 0; k < 2; k++)
		pthread_join(wt[k], NULL);
	close(pfd[1]);
	pthread_join(rt, NULL);
	close(pfd[0]);
	/* every line whole, each shard's lines in order */
	p = rd.buf;
	end = rd.buf + rd.len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		int k = p[0] - '1', i, n;

		T_ASSERT(nl && (k == 0 || k == 1));
		i = next[k]++;
		memset(nm, 'a' + k, (size_t)(i % 500));
		nm[i % 500] = '\0';
		n = snprintf(want, sizeof want, "%d> +I[%d, %s, %d.5, 2024-01-31 04:19:31.784, %s]",
			     k + 1, i, nm, i, i % 2 ? "TRUE" : "FALSE");
		if ((size_t)(nl - p) != (size_t)n || memcmp(p, want, (size_t)n) != 0) {
			fprintf(stderr, "bad line: %.*s\nexpected: %s\n", (int)(nl - p), p, want);
			exit(T_EXIT_FAIL);
		}
		p = nl + 1;
	}
	T_ASSERT(next[0] == PER_SHARD && next[1] == PER_SHARD);
	free(rd.buf);
}

static void test_blackhole(struct sl_schema *s)
{
	uint64_t total = 0;
	struct sl_blackhole_sink_cfg cfg = { .rows = &total };
	struct sl_error err = { 0 };
	_Alignas(8) char rb[256];
	void *a = sl_blackhole_sink_ops.open(&cfg, s, 0, 2, &err);
	void *b = sl_blackhole_sink_ops.open(&cfg, s, 1, 2, &err);
	void *c = sl_blackhole_sink_ops.open(NULL, s, 0, 1, &err);

	T_ASSERT(a && b && c);
	for (int i = 0; i < 1000; i++) {
		const struct sl_row *r = row(rb, sizeof rb, i, "x", SL_ROW_INSERT);

		T_ASSERT(sl_blackhole_sink_ops.write(i % 3 ? a : b, 0, r) == 0);
		T_ASSERT(sl_blackhole_sink_ops.write(c, 0, r) == 0);
	}
	T_ASSERT(sl_blackhole_sink_ops.flush(a) == 0);
	T_ASSERT_EQ_I64(total, 666);
	T_ASSERT(sl_blackhole_sink_ops.flush(a) == 0);
	T_ASSERT_EQ_I64(total, 666); /* counted once */
	sl_blackhole_sink_ops.close(b);
	sl_blackhole_sink_ops.close(a);
	sl_blackhole_sink_ops.close(c);
	T_ASSERT_EQ_I64(total, 1000);
}

int main(void)
{
	struct sl_schema *s = h_schema(spec);

	test_exact(s);
	test_prefix(s);
	test_stdout(s);
	test_volume(s);
	test_two_shards(s);
	test_blackhole(s);
	sl_schema_destroy(s);
	return T_EXIT_PASS;
}
