/*
 * fs_part_sink_test.c - the partitioned filesystem sink's ops driven by hand: a partition's
 * success file waits for every shard (a shard whose watermark passed the partition does not
 * commit it while another shard's watermark is behind), comes after that partition's files,
 * and a commit replayed from its meta (recovery) is idempotent.
 */
#include <errno.h>
#include <unistd.h>

#include "conn_harness.h"

static const struct sl_sink_ops *K = &sl_fspart_sink_ops;
static const char *const spec[] = { "id", "BIGINT", "dt", "STRING", NULL };
static struct sl_schema *schema;

struct meta {
	char b[65536];
	size_t len;
};

static void put(void *k, int64_t id, const char *dt)
{
	_Alignas(8) char rb[256];
	struct sl_row_builder b;

	sl_rowb_init(&b, rb, sizeof rb, 2);
	sl_rowb_set_i64(&b, 0, id);
	sl_rowb_set_str(&b, 1, dt, (uint32_t)strlen(dt));
	T_ASSERT(K->write(k, 0, sl_rowb_finish(&b)) == 0);
}

static void checkpoint(void **k, uint64_t ckpt, const struct sl_fspart_sink_cfg *cfg)
{
	static struct meta m[2];

	for (int s = 0; s < 2; s++)
		T_ASSERT(K->precommit(k[s], ckpt, m[s].b, sizeof m[s].b, &m[s].len) == 0);
	for (int s = 0; s < 2; s++)
		T_ASSERT(K->commit(cfg, ckpt, m[s].b, m[s].len) == 0);
	/* replayed, as recovery does: nothing changes, nothing fails */
	for (int s = 0; s < 2; s++)
		T_ASSERT(K->commit(cfg, ckpt, m[s].b, m[s].len) == 0);
}

static bool exists(const char *root, const char *rel)
{
	char p[4096];

	snprintf(p, sizeof p, "%s/%s", root, rel);
	return access(p, F_OK) == 0;
}

/* rows of partition dir `rel` visible (in part files) */
static int visible_rows(const char *root, const char *rel)
{
	char cmd[4300], buf[32];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof cmd, "cat '%s/%s'/part-* 2>/dev/null | wc -l", root, rel);
	f = popen(cmd, "r");
	T_ASSERT(f);
	if (fgets(buf, sizeof buf, f))
		n = atoi(buf);
	pclose(f);
	return n;
}

static void test_all_shards(void)
{
	char dir[] = "/tmp/sl-fspart-XXXXXX", cmd[128];
	int part[] = { 1 };
	struct sl_fspart_sink_cfg cfg = { 0 };
	struct sl_error err = { 0 };
	void *k[2];

	T_ASSERT(mkdtemp(dir));
	cfg.file.path = dir;
	cfg.file.format = SL_FORMAT_CSV;
	cfg.file.exactly_once = true;
	cfg.part = part;
	cfg.npart = 1;
	cfg.success_file = true;
	cfg.partition_time = true;
	cfg.delay_ms = 86400000; /* a day: the partition's length */
	cfg.run = 42;
	for (int s = 0; s < 2; s++) {
		k[s] = K->open(&cfg, schema, s, 2, &err);
		T_ASSERT(k[s]);
	}
	put(k[0], 1, "2024-01-01");
	put(k[1], 2, "2024-01-01");
	/* shard 0 is past the day, shard 1 is not: its rows are committed, not the partition */
	K->watermark(k[0], 1704067200000 + 86400000 + 1);
	K->watermark(k[1], 1704067200000 + 3600000);
	checkpoint(k, 1, &cfg);
	T_ASSERT(visible_rows(dir, "dt=2024-01-01") == 2);
	T_ASSERT(!exists(dir, "dt=2024-01-01/_SUCCESS"));
	/* shard 1 writes one more row of that day, then passes it: committed with all three */
	put(k[1], 3, "2024-01-01");
	K->watermark(k[1], 1704067200000 + 86400000 + 1);
	checkpoint(k, 2, &cfg);
	T_ASSERT(exists(dir, "dt=2024-01-01/_SUCCESS"));
	T_ASSERT(visible_rows(dir, "dt=2024-01-01") == 3);
	/* no row and no record of another run counts: a new run waits for every shard again */
	for (int s = 0; s < 2; s++)
		K->close(k[s]);
	cfg.run = 43;
	for (int s = 0; s < 2; s++) {
		k[s] = K->open(&cfg, schema, s, 2, &err);
		T_ASSERT(k[s]);
	}
	put(k[0], 4, "2024-01-02");
	K->watermark(k[0], 1704153600000 + 86400000 + 1);
	K->watermark(k[1], 1704067200000 + 86400000 + 1);
	checkpoint(k, 3, &cfg);
	T_ASSERT(!exists(dir, "dt=2024-01-02/_SUCCESS"));
	K->watermark(k[1], INT64_MAX); /* its input ended */
	K->watermark(k[0], INT64_MAX);
	checkpoint(k, 4, &cfg);
	T_ASSERT(exists(dir, "dt=2024-01-02/_SUCCESS"));
	for (int s = 0; s < 2; s++)
		K->close(k[s]);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	T_ASSERT(system(cmd) == 0);
}

int main(void)
{
	schema = h_schema(spec);
	test_all_shards();
	sl_schema_destroy(schema);
	return T_EXIT_PASS;
}
