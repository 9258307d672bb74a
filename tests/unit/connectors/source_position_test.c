/*
 * source_position_test.c - checkpoint positions of the file and datagen sources: a split
 * read part way, its position taken, a new split opened and seeked there must produce
 * exactly the rest, for every cut point (including a malformed line, a CSV record spanning
 * lines, and a last line without a newline). A bad position is refused.
 */
#include "conn_harness.h"

/* Reads split 0 to its end in one go: the reference rows. */
static size_t read_all(struct harness *h, const struct sl_source_ops *ops, const void *cfg)
{
	h_reset(h);
	h_drain(h, ops, cfg, 0, 1);
	return h->nrows;
}

/* Reads `cut` polls of one record, takes the position, reopens, seeks, reads the rest;
 * the rows (and dead letters) must be the reference's. */
static void cut_and_resume(const struct sl_source_ops *ops, const void *cfg, int cut,
			   struct sl_row **ref, size_t nref, size_t ndl_ref)
{
	struct harness h;
	struct sl_error err = { 0 };
	uint8_t pos[4096];
	size_t len = 0;
	void *st;
	int rc = 0;

	h_init(&h);
	st = ops->open(cfg, 0, &err);
	T_ASSERT(st);
	for (int i = 0; i < cut && rc != SL_SRC_EOF; i++)
		rc = ops->poll(st, &h.c, 1);
	T_ASSERT(ops->position(st, pos, sizeof pos, &len) == 0 && len > 0);
	ops->close(st);
	st = ops->open(cfg, 0, &err);
	T_ASSERT(st);
	T_ASSERT(ops->seek(st, pos, len) == 0);
	h_drain_open(&h, ops, st, 3);
	ops->close(st);
	T_ASSERT_EQ_I64((int64_t)h.nrows, (int64_t)nref);
	for (size_t i = 0; i < nref; i++)
		T_ASSERT(h.rows[i]->size == ref[i]->size &&
			 !memcmp(h.rows[i], ref[i], ref[i]->size));
	T_ASSERT_EQ_I64((int64_t)h.ndl, (int64_t)ndl_ref);
	h_fini(&h);
}

static void test_file(enum sl_format fmt, const char *text)
{
	static const char *const spec[] = { "k", "STRING", "v", "BIGINT", NULL };
	struct sl_schema *sch = h_schema(spec);
	char *path = h_tempfile(text, strlen(text));
	const char *paths[1] = { path };
	struct sl_file_source_cfg cfg = { .paths = paths, .npaths = 1, .format = fmt,
					  .schema = sch, .read_bytes = 16 };
	struct harness ref;
	size_t n, ndl;

	h_init(&ref);
	n = read_all(&ref, &sl_file_source_ops, &cfg);
	ndl = ref.ndl;
	T_ASSERT(n >= 4 && ndl == 1);
	for (int cut = 0; cut <= (int)n + 2; cut++)
		cut_and_resume(&sl_file_source_ops, &cfg, cut, ref.rows, ref.nrows, ndl);
	h_fini(&ref);
	unlink(path);
	free(path);
	sl_schema_destroy(sch);
}

static void test_datagen(void)
{
	static const char *const spec[] = { "id", "BIGINT", "s", "STRING", "x", "DOUBLE", NULL };
	struct sl_schema *sch = h_schema(spec);
	struct sl_datagen_field f[3] = {
		{ .kind = SL_GEN_SEQUENCE, .start = 0, .end = 99 },
		{ .kind = SL_GEN_RANDOM, .length = 7 },
		{ .kind = SL_GEN_RANDOM },
	};
	struct sl_datagen_cfg cfg = { .schema = sch, .fields = f, .nsplits = 1, .seed = 5 };
	struct harness ref;
	uint8_t bad[3] = { 1, 2, 3 };
	struct sl_error err = { 0 };
	void *st;

	h_init(&ref);
	T_ASSERT(read_all(&ref, &sl_datagen_source_ops, &cfg) == 100);
	for (int cut = 0; cut <= 101; cut += 7)
		cut_and_resume(&sl_datagen_source_ops, &cfg, cut, ref.rows, 100, 0);
	st = sl_datagen_source_ops.open(&cfg, 0, &err);
	T_ASSERT(st && sl_datagen_source_ops.seek(st, bad, sizeof bad) == -EINVAL);
	sl_datagen_source_ops.close(st);
	h_fini(&ref);
	sl_schema_destroy(sch);
}

int main(void)
{
	/* a malformed line (dead letter), blank lines, no newline at the end */
	test_file(SL_FORMAT_JSON, "{\"k\": \"a\", \"v\": 1}\n\n{\"k\": \"b\", \"v\": 2}\n"
				  "{\"k\": oops}\n{\"k\": \"c\", \"v\": 3}\n"
				  "{\"k\": \"a long key to cross the read size\", \"v\": 4}\n"
				  "{\"k\": \"d\", \"v\": 5}");
	/* a quoted field spanning lines */
	test_file(SL_FORMAT_CSV, "a,1\nb,2\n\"multi\nline\",3\nbad,x\nc,4\nd,5\n");
	test_datagen();
	return T_EXIT_PASS;
}
