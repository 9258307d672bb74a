/*
 * eos_sink_test.c - the exactly-once mode of the filesystem sink, driven through its ops as
 * the checkpoint runtime will drive them: precommit at a barrier, commit once a checkpoint
 * is complete, and recovery (commit the newest complete checkpoint's metas again, then
 * abort_pending). Every check reads the directory back and requires the visible rows to be
 * exactly the ids a checkpoint covered: each once, none missing, none extra, and no hidden
 * in-progress file left after a recovery.
 *
 * Cases: a crash after precommit (no commit), commits replayed, a multi-file commit cut
 * after some renames (rename or link+unlink half done), several shards and a run with more
 * shards before, checkpoints that fail and hand their files on, end of input without a final
 * checkpoint, corrupt metas and refused name clashes, the at-least-once mode's precommit, the
 * SQL option; then a fork test: a child writes two shards and checkpoints in a loop and is
 * SIGKILLed at random moments (>= 20 times; every other kill aimed inside one phase:
 * precommit, manifest, commit, writing), the parent recovers the last checkpoint the
 * child recorded, checks the output, and restarts the child from there until the input ends.
 * SLUICE_EOS_SEED=<n> replays one random run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "conn_harness.h"
#include "sql_options.h"

static const struct sl_sink_ops *K = &sl_jsonl_sink_ops;
static const char *const spec[] = { "id", "BIGINT", "s", "STRING", NULL };
static struct sl_schema *schema;

/* ---- helpers -------------------------------------------------------------------------- */

static void *sink_open(const struct sl_jsonl_sink_cfg *cfg, int shard, int nshards)
{
	struct sl_error err = { 0 };
	void *k = K->open(cfg, schema, shard, nshards, &err);

	if (!k)
		fprintf(stderr, "open: %s\n", err.msg);
	T_ASSERT(k);
	return k;
}

/* Writes ids [from, to) with a stride: id goes to k[id % nk]. */
static void put(void **k, int nk, int64_t from, int64_t to)
{
	_Alignas(8) char rb[256];
	char s[64];
	struct sl_row_builder b;

	for (int64_t id = from; id < to; id++) {
		int n = snprintf(s, sizeof s, "row %lld padding padding", (long long)id);

		sl_rowb_init(&b, rb, sizeof rb, 2);
		sl_rowb_set_i64(&b, 0, id);
		sl_rowb_set_str(&b, 1, s, (uint32_t)n);
		T_ASSERT(K->write(k[id % nk], 0, sl_rowb_finish(&b)) == 0);
	}
}

struct meta {
	char b[16384];
	size_t len;
};

static void precommit(void *k, uint64_t ckpt, struct meta *m)
{
	T_ASSERT(K->precommit(k, ckpt, m->b, sizeof m->b, &m->len) == 0);
	T_ASSERT(m->len > 0 && m->len < sizeof m->b);
}

static int nrenames(const struct meta *m)
{
	int n = 0;

	for (size_t i = 0; i < m->len; i++)
		n += m->b[i] == '\n';
	return n - 1;
}

/* The i-th rename of a meta, as the test's own parse (the format is text lines). */
static void rename_at(const struct meta *m, int i, char *src, char *dst)
{
	const char *p = (const char *)memchr(m->b, '\n', m->len) + 1;

	for (; i > 0; i--)
		p = strchr(p, '\n') + 1;
	T_ASSERT(sscanf(p, "%95s %95s", src, dst) == 2);
}

static int64_t *seen;
static size_t seen_cap;

/*
 * Reads every visible file of dir and asserts the ids are exactly [0, n), each once.
 * Returns the number of hidden files ('.' names) found.
 */
static int expect_rows(const char *dir, int64_t n, bool csv)
{
	char path[512], line[512];
	struct dirent *de;
	int64_t total = 0;
	int hidden = 0;
	DIR *d = opendir(dir);

	/* a kill before the sink made its directory: nothing may be visible then */
	if (!d && errno == ENOENT && n == 0)
		return 0;
	T_ASSERT(d);
	if ((size_t)n > seen_cap) {
		seen = realloc(seen, (size_t)n * sizeof(*seen));
		T_ASSERT(seen);
		seen_cap = (size_t)n;
	}
	if (n)
		memset(seen, 0, (size_t)n * sizeof(*seen));
	while ((de = readdir(d))) {
		FILE *f;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_name[0] == '.') {
			hidden++;
			continue;
		}
		T_ASSERT(!strncmp(de->d_name, "part-", 5));
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		T_ASSERT(f);
		while (fgets(line, sizeof line, f)) {
			const char *p = csv ? line : strstr(line, "\"id\":");
			long long id;

			T_ASSERT(p);
			id = strtoll(csv ? p : p + 5, NULL, 10);
			if (id < 0 || id >= n || seen[id]++)
				fprintf(stderr, "%s: id %lld %s\n", de->d_name, id,
					id < 0 || id >= n ? "beyond the checkpoint" : "twice");
			T_ASSERT(id >= 0 && id < n && seen[id] == 1);
			total++;
		}
		fclose(f);
	}
	closedir(d);
	if (total != n)
		fprintf(stderr, "%s: %lld rows visible, want %lld\n", dir, (long long)total,
			(long long)n);
	T_ASSERT_EQ_I64(total, n);
	return hidden;
}

static void rm_rf(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	T_ASSERT(system(cmd) == 0);
}

static void mk_tmp(char *dir, char *out, size_t cap)
{
	T_ASSERT(mkdtemp(dir));
	snprintf(out, cap, "%s/out", dir);
}

/* ---- cases ---------------------------------------------------------------------------- */

/* Precommit 1, more rows, crash: recovery shows exactly checkpoint 1, whatever is replayed. */
static void test_crash_before_commit(void)
{
	char dir[] = "/tmp/sluice-eos-XXXXXX", out[64];
	struct sl_jsonl_sink_cfg cfg = { .path = out, .exactly_once = true };
	struct meta m1, m2;
	void *k;

	mk_tmp(dir, out, sizeof out);
	k = sink_open(&cfg, 0, 1); /* makes the directory, even for one shard */
	put(&k, 1, 0, 10000);	   /* > 256 KiB: chunks went out to an in-progress file */
	T_ASSERT(expect_rows(out, 0, false) == 1);
	precommit(k, 1, &m1);
	T_ASSERT_EQ_I64(nrenames(&m1), 1);
	T_ASSERT(expect_rows(out, 0, false) == 1); /* durable, not visible */
	put(&k, 1, 10000, 25000);
	T_ASSERT(expect_rows(out, 0, false) == 2);
	K->close(k); /* the crash: closing publishes nothing in this mode */
	T_ASSERT(expect_rows(out, 0, false) == 2);

	/* recovery of checkpoint 1 */
	T_ASSERT(K->commit(&cfg, 1, m1.b, m1.len) == 0);
	T_ASSERT(K->abort_pending(&cfg, 0, 1, 1) == 0);
	T_ASSERT(expect_rows(out, 10000, false) == 0);
	T_ASSERT(K->commit(&cfg, 1, m1.b, m1.len) == 0); /* replayed twice: idempotent */
	T_ASSERT(K->commit(&cfg, 1, m1.b, m1.len) == 0);
	T_ASSERT(expect_rows(out, 10000, false) == 0);

	/* the source replays from checkpoint 1; checkpoint 2 completes, then end of input */
	k = sink_open(&cfg, 0, 1);
	put(&k, 1, 10000, 25000);
	precommit(k, 2, &m2);
	T_ASSERT(expect_rows(out, 10000, false) == 1);
	T_ASSERT(K->commit(&cfg, 2, m2.b, m2.len) == 0);
	T_ASSERT(expect_rows(out, 25000, false) == 0);
	T_ASSERT(K->flush(k) == 0); /* nothing after the last checkpoint: no-op */
	K->close(k);
	T_ASSERT(expect_rows(out, 25000, false) == 0);
	rm_rf(dir);
}

/* A commit of several files (rolled by size) cut after some renames, then replayed. */
static void test_partial_multi_file_commit(void)
{
	char dir[] = "/tmp/sluice-eos-XXXXXX", out[64], src[96], dst[96], a[160], b[160];
	struct sl_jsonl_sink_cfg cfg = { .path = out, .exactly_once = true, .roll_bytes = 1 };
	struct meta m;
	int n;
	void *k;

	mk_tmp(dir, out, sizeof out);
	k = sink_open(&cfg, 0, 1);
	put(&k, 1, 0, 40000); /* every 256 KiB chunk its own file */
	precommit(k, 1, &m);
	n = nrenames(&m);
	T_ASSERT(n >= 5);
	K->close(k);
	/* the crash: renames 0..n/2 done, the next one half done by link (the fallback of
	 * file systems without RENAME_NOREPLACE), the rest not started */
	for (int i = 0; i <= n / 2; i++) {
		rename_at(&m, i, src, dst);
		snprintf(a, sizeof a, "%s/%s", out, src);
		snprintf(b, sizeof b, "%s/%s", out, dst);
		T_ASSERT(rename(a, b) == 0);
	}
	rename_at(&m, n / 2 + 1, src, dst);
	snprintf(a, sizeof a, "%s/%s", out, src);
	snprintf(b, sizeof b, "%s/%s", out, dst);
	T_ASSERT(link(a, b) == 0);
	T_ASSERT(K->commit(&cfg, 1, m.b, m.len) == 0);
	T_ASSERT(K->abort_pending(&cfg, 0, 1, 1) == 0);
	T_ASSERT(expect_rows(out, 40000, false) == 0);
	T_ASSERT(K->commit(&cfg, 1, m.b, m.len) == 0);
	T_ASSERT(expect_rows(out, 40000, false) == 0);
	rm_rf(dir);
}

/* Three shards in one directory; checkpoint 2 completes but a crash pre-empts shard 2's
 * commit; a run with four shards left an orphan in-progress file before. */
static void test_shards(void)
{
	char dir[] = "/tmp/sluice-eos-XXXXXX", out[64], orphan[128];
	struct sl_jsonl_sink_cfg cfg = { .path = out, .exactly_once = true };
	struct meta m1[3], m2[3];
	void *k[3];
	int fd;

	mk_tmp(dir, out, sizeof out);
	for (int s = 0; s < 3; s++)
		k[s] = sink_open(&cfg, s, 3);
	snprintf(orphan, sizeof orphan, "%s/.part-3-0.inprogress", out);
	fd = open(orphan, O_WRONLY | O_CREAT, 0644);
	T_ASSERT(fd >= 0 && write(fd, "{\"id\":-1}\n", 10) == 10);
	close(fd);
	put(k, 3, 0, 30000);
	for (int s = 0; s < 3; s++)
		precommit(k[s], 1, &m1[s]);
	for (int s = 0; s < 3; s++)
		T_ASSERT(K->commit(&cfg, 1, m1[s].b, m1[s].len) == 0);
	T_ASSERT(expect_rows(out, 30000, false) == 1); /* the orphan */
	put(k, 3, 30000, 50000);
	for (int s = 0; s < 3; s++)
		precommit(k[s], 2, &m2[s]);
	for (int s = 0; s < 2; s++)
		T_ASSERT(K->commit(&cfg, 2, m2[s].b, m2[s].len) == 0);
	put(k, 3, 50000, 80000);
	for (int s = 0; s < 3; s++)
		K->close(k[s]);

	for (int s = 0; s < 3; s++)
		T_ASSERT(K->commit(&cfg, 2, m2[s].b, m2[s].len) == 0);
	for (int s = 0; s < 3; s++)
		T_ASSERT(K->abort_pending(&cfg, s, 3, 2) == 0);
	T_ASSERT(expect_rows(out, 50000, false) == 0); /* orphan gone with shard 0's abort */
	rm_rf(dir);
}

/* A checkpoint that fails (never committed) hands its files to the next one; a meta no
 * longer lists files once they were published. */
static void test_carry_over(void)
{
	char dir[] = "/tmp/sluice-eos-XXXXXX", out[64];
	struct sl_jsonl_sink_cfg cfg = { .path = out, .exactly_once = true };
	struct meta m1, m2, m3, m4, m5;
	void *k;

	mk_tmp(dir, out, sizeof out);
	k = sink_open(&cfg, 0, 1);
	put(&k, 1, 0, 5000);
	precommit(k, 1, &m1);
	T_ASSERT_EQ_I64(nrenames(&m1), 1);
	put(&k, 1, 5000, 9000);
	precommit(k, 2, &m2); /* checkpoint 1 failed: 2 commits both files */
	T_ASSERT_EQ_I64(nrenames(&m2), 2);
	precommit(k, 3, &m3); /* nothing new, still both */
	T_ASSERT_EQ_I64(nrenames(&m3), 2);
	T_ASSERT(K->commit(&cfg, 3, m3.b, m3.len) == 0);
	T_ASSERT(expect_rows(out, 9000, false) == 0);
	T_ASSERT(K->commit(&cfg, 2, m2.b, m2.len) == 0); /* late, covered: no-op */
	T_ASSERT(K->commit(&cfg, 1, m1.b, m1.len) == 0);
	put(&k, 1, 9000, 9500);
	precommit(k, 4, &m4); /* published ones dropped */
	T_ASSERT_EQ_I64(nrenames(&m4), 1);
	precommit(k, 5, &m5);
	T_ASSERT_EQ_I64(nrenames(&m5), 1);
	K->close(k);
	T_ASSERT(K->commit(&cfg, 5, m5.b, m5.len) == 0);
	T_ASSERT(K->abort_pending(&cfg, 0, 1, 5) == 0);
	T_ASSERT(expect_rows(out, 9500, false) == 0);
	rm_rf(dir);
}

/* End of input without a final checkpoint publishes everything, CSV names end in .csv. */
static void test_end_of_input(void)
{
	char dir[] = "/tmp/sluice-eos-XXXXXX", out[64], f[128];
	struct sl_jsonl_sink_cfg cfg = {
		.path = out, .exactly_once = true, .format = SL_FORMAT_CSV, .csv.delimiter = ','
	};
	struct meta m;
	struct stat st;
	void *k;

	mk_tmp(dir, out, sizeof out);
	k = sink_open(&cfg, 0, 1);
	put(&k, 1, 0, 3000); /* all buffered: no file yet */
	T_ASSERT(expect_rows(out, 0, true) == 0);
	T_ASSERT(K->flush(k) == 0);
	K->close(k);
	snprintf(f, sizeof f, "%s/part-0-0-0.csv", out);
	T_ASSERT(stat(f, &st) == 0 && st.st_size > 0);
	T_ASSERT(expect_rows(out, 3000, true) == 0);
	rm_rf(dir);

	/* precommitted but never committed, then more rows: flush publishes both */
	strcpy(dir, "/tmp/sluice-eos-XXXXXX");
	mk_tmp(dir, out, sizeof out);
	k = sink_open(&cfg, 0, 1);
	put(&k, 1, 0, 3000);
	precommit(k, 7, &m);
	put(&k, 1, 3000, 3500);
	T_ASSERT(expect_rows(out, 0, true) == 1);
	T_ASSERT(K->flush(k) == 0);
	T_ASSERT(K->flush(k) == 0);
	K->close(k);
	T_ASSERT(expect_rows(out, 3500, true) == 0);
	snprintf(f, sizeof f, "%s/part-0-7-1.csv", out);
	T_ASSERT(stat(f, &st) == 0);
	T_ASSERT(K->commit(&cfg, 7, m.b, m.len) == 0); /* the checkpoint completing late */
	T_ASSERT(expect_rows(out, 3500, true) == 0);
	rm_rf(dir);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	T_ASSERT(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

/* Corrupt metas touch nothing; a name clash is refused; small meta buffers; bad paths. */
static void test_errors(void)
{
	char dir[] = "/tmp/sluice-eos-XXXXXX", out[64], f[192], src[96], dst[96], buf[64];
	struct sl_jsonl_sink_cfg cfg = { .path = out, .exactly_once = true };
	struct sl_error err = { 0 };
	static const char *const bad[] = {
		"garbage",
		"sluice-fs-sink 1 1\n../x part-0-1-0.jsonl\n",
		"sluice-fs-sink 1 1\n.part-0-0.inprogress ../part-0-1-0.jsonl\n",
		"sluice-fs-sink 1 1\n.part-0-0.inprogress /etc/passwd\n",
		"sluice-fs-sink 2 0\n",
		"sluice-fs-sink 1 2\n.part-0-0.inprogress part-0-1-0.jsonl\n",
		"sluice-fs-sink 1 1\n.part-0-0.inprogress part-0-1-0.jsonl\nextra",
		"sluice-fs-sink 1 x\n",
	};
	struct meta m;
	size_t len;
	void *k;

	mk_tmp(dir, out, sizeof out);
	k = sink_open(&cfg, 0, 1);
	put(&k, 1, 0, 100);
	T_ASSERT(K->precommit(k, 1, buf, 8, &len) == -ENOSPC);
	T_ASSERT(len > 8);   /* what it needs */
	precommit(k, 1, &m); /* the same checkpoint again, with room */
	T_ASSERT_EQ_I64(nrenames(&m), 1);
	K->close(k);
	rename_at(&m, 0, src, dst);
	T_ASSERT(!strncmp(src, ".part-0-", 8) && strlen(src) == 8 + 16 + 2 + 11);
	T_ASSERT(!strcmp(src + strlen(src) - 13, "-0.inprogress"));
	T_ASSERT(!strcmp(dst, "part-0-1-0.jsonl"));
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		T_ASSERT(K->commit(&cfg, 1, bad[i], strlen(bad[i])) == -EINVAL);
	T_ASSERT(expect_rows(out, 0, false) == 1); /* nothing renamed */

	/* dst taken by another file: refused, both kept */
	snprintf(f, sizeof f, "%s/%s", out, dst);
	write_file(f, "{\"id\":0}\n");
	T_ASSERT(K->commit(&cfg, 1, m.b, m.len) == -EEXIST);
	T_ASSERT(expect_rows(out, 1, false) == 1);
	unlink(f);
	T_ASSERT(K->commit(&cfg, 1, m.b, m.len) == 0);
	T_ASSERT(expect_rows(out, 100, false) == 0);
	/* both gone: the data is lost, say so */
	unlink(f);
	T_ASSERT(K->commit(&cfg, 1, m.b, m.len) == -ENOENT);

	/* a stale in-progress file is aborted; a stale final name is skipped */
	snprintf(f, sizeof f, "%s/.part-0-0.inprogress", out);
	write_file(f, "stale\n");
	snprintf(f, sizeof f, "%s/part-0-2-0.jsonl", out);
	write_file(f, "{\"id\":0}\n");
	k = sink_open(&cfg, 0, 1);
	put(&k, 1, 1, 50);
	precommit(k, 2, &m);
	rename_at(&m, 0, src, dst);
	T_ASSERT(strcmp(src, ".part-0-0.inprogress") && !strcmp(dst, "part-0-2-1.jsonl"));
	K->close(k);
	T_ASSERT(K->commit(&cfg, 2, m.b, m.len) == 0);
	T_ASSERT(K->abort_pending(&cfg, 0, 1, 2) == 0);
	T_ASSERT(expect_rows(out, 50, false) == 0);
	T_ASSERT(K->commit(&cfg, 0, "sluice-fs-sink 1 0\n", 19) == 0);
	T_ASSERT(K->commit(&cfg, 0, NULL, 0) == 0);

	/* exactly-once refuses a regular file; abort of a path never written is a no-op */
	cfg.path = f;
	T_ASSERT(K->open(&cfg, schema, 0, 1, &err) == NULL);
	T_ASSERT_EQ_I64(err.code, -ENOTDIR);
	T_ASSERT(strstr(err.msg, "exactly-once needs a directory"));
	T_ASSERT(K->abort_pending(&cfg, 0, 1, 0) == 0);
	cfg.path = "/nonexistent/sluice-out";
	T_ASSERT(K->abort_pending(&cfg, 0, 1, 0) == 0);
	T_ASSERT(K->open(&cfg, schema, 0, 1, &err) == NULL);
	T_ASSERT_EQ_I64(err.code, -ENOENT);
	rm_rf(dir);
}

/* At-least-once: precommit makes the rows durable and visible in part-<k>.jsonl, no meta. */
static void test_at_least_once(void)
{
	char dir[] = "/tmp/sluice-eos-XXXXXX", out[64];
	struct sl_jsonl_sink_cfg cfg = { .path = out };
	size_t len = 99;
	char meta[64];
	void *k[2];

	mk_tmp(dir, out, sizeof out);
	k[0] = sink_open(&cfg, 0, 2);
	k[1] = sink_open(&cfg, 1, 2);
	put(k, 2, 0, 1000);
	T_ASSERT(expect_rows(out, 0, false) == 0);
	for (int s = 0; s < 2; s++) {
		T_ASSERT(K->precommit(k[s], 1, meta, sizeof meta, &len) == 0);
		T_ASSERT_EQ_I64(len, 0);
	}
	T_ASSERT(expect_rows(out, 1000, false) == 0);
	T_ASSERT(K->commit(&cfg, 1, meta, 0) == 0);
	for (int s = 0; s < 2; s++) {
		T_ASSERT(K->flush(k[s]) == 0);
		K->close(k[s]);
	}
	T_ASSERT(expect_rows(out, 1000, false) == 0);
	rm_rf(dir);
}

static void test_sql_option(void)
{
	const char *vals[] = { "exactly-once", "at-least-once", NULL };
	struct sl_sql_conn_opt o[4] = {
		{ .key = "connector", .value = "filesystem", .line = 1, .col = 1 },
		{ .key = "path", .value = "/tmp/x", .line = 2, .col = 1 },
		{ .key = "format", .value = "csv", .line = 3, .col = 1 },
		{ .key = "sink.delivery-guarantee", .line = 4, .col = 3 },
	};
	struct sl_sql_conn_table t = { .schema = schema, .opts = o, .nopts = 4, .file = "t.sql" };
	struct sl_sql_conn c;
	char err[512];

	for (int i = 0; i < 3; i++) {
		for (int j = 0; j < 4; j++)
			o[j].used = false;
		o[3].value = vals[i];
		t.nopts = i < 2 ? 4 : 3;
		T_ASSERT(sl_sql_conn_bind_sink(&t, &c, err, sizeof err) == 0);
		T_ASSERT(c.sink_ops == K);
		T_ASSERT(((struct sl_jsonl_sink_cfg *)c.cfg)->exactly_once == (i == 0));
		sl_sql_conn_fini(&c);
	}
	for (int j = 0; j < 4; j++)
		o[j].used = false;
	o[3].value = "exactly_once";
	t.nopts = 4;
	T_ASSERT(sl_sql_conn_bind_sink(&t, &c, err, sizeof err) == -EINVAL);
	T_ASSERT(!strcmp(err, "t.sql:4:3: option 'sink.delivery-guarantee': 'exactly_once' is not "
			      "'exactly-once' or 'at-least-once'"));
	for (int j = 0; j < 4; j++)
		o[j].used = false;
	o[3].key = "sink.delivery";
	T_ASSERT(sl_sql_conn_bind_sink(&t, &c, err, sizeof err) == -EINVAL);
	T_ASSERT(strstr(err, "(known: path, format, csv.field-delimiter, csv.null-literal, "
			     "csv.ignore-parse-errors, csv.allow-comments, "
			     "csv.fail-on-decimal-overflow, sink.delivery-guarantee, "
			     "sink.rolling-policy.file-size, sink.rolling-policy.rollover-interval, "
			     "sink.rolling-policy.check-interval, "
			     "sink.rolling-policy.inactivity-interval)"));
}

/* ---- kill -9 ---------------------------------------------------------------------------- */

enum phase { P_START, P_WRITE, P_PRECOMMIT, P_MANIFEST, P_COMMIT, P_FLUSH, P_NPHASE };
static const char *const phase_name[] = { "start",    "write",	"precommit",
					  "manifest", "commit", "flush" };

/* ph[0]: the child's phase now; ph[1 + p]: how often it entered phase p. */
static void enter(_Atomic int *ph, int p)
{
	atomic_store_explicit(&ph[0], p, memory_order_relaxed);
	atomic_fetch_add_explicit(&ph[1 + p], 1, memory_order_relaxed);
}

#define KILL_ROWS 1500000
#define KILLS	  24

struct manifest {
	uint64_t ckpt;
	int64_t rows; /* ids [0, rows) are before the barrier */
	struct meta m[2];
};

/* The coordinator's part, simplified: the manifest is complete once renamed into place. */
static void write_manifest(const char *dir, const struct manifest *mf)
{
	char tmp[128], path[128];
	int fd;

	snprintf(tmp, sizeof tmp, "%s/manifest.tmp", dir);
	snprintf(path, sizeof path, "%s/manifest", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, mf, sizeof(*mf)) != (ssize_t)sizeof(*mf) || fsync(fd) < 0 ||
	    close(fd) < 0 || rename(tmp, path) < 0)
		_exit(3);
}

static bool read_manifest(const char *dir, struct manifest *mf)
{
	char path[128];
	int fd;

	snprintf(path, sizeof path, "%s/manifest", dir);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	T_ASSERT(read(fd, mf, sizeof(*mf)) == (ssize_t)sizeof(*mf));
	close(fd);
	return true;
}

/* Checkpoint `ckpt` at row `rows`: barrier, manifest, commit. */
static void child_checkpoint(const char *dir, const struct sl_jsonl_sink_cfg *cfg, void **k,
			     uint64_t ckpt, int64_t rows, _Atomic int *phase)
{
	static struct manifest mf;

	mf.ckpt = ckpt;
	mf.rows = rows;
	enter(phase, P_PRECOMMIT);
	for (int s = 0; s < 2; s++)
		if (K->precommit(k[s], ckpt, mf.m[s].b, sizeof mf.m[s].b, &mf.m[s].len) < 0)
			_exit(4);
	enter(phase, P_MANIFEST);
	write_manifest(dir, &mf);
	enter(phase, P_COMMIT);
	for (int s = 0; s < 2; s++)
		if (K->commit(cfg, ckpt, mf.m[s].b, mf.m[s].len) < 0)
			_exit(5);
}

/* Two shards' instances from row `from` on, checkpoint `ckpt` next; a final checkpoint at
 * the end of input, then flush (which finds nothing left). */
static void child(const char *dir, const struct sl_jsonl_sink_cfg *cfg, int64_t from, uint64_t ckpt,
		  _Atomic int *phase)
{
	unsigned seed = (unsigned)ckpt * 2654435761u;
	void *k[2];
	int64_t next;

	enter(phase, P_START);
	k[0] = sink_open(cfg, 0, 2);
	k[1] = sink_open(cfg, 1, 2);
	while (from < KILL_ROWS) {
		next = from + 2000 + rand_r(&seed) % 30000;
		if (next > KILL_ROWS)
			next = KILL_ROWS;
		enter(phase, P_WRITE);
		put(k, 2, from, next);
		from = next;
		child_checkpoint(dir, cfg, k, ckpt++, from, phase);
	}
	enter(phase, P_FLUSH);
	for (int s = 0; s < 2; s++)
		if (K->flush(k[s]) < 0)
			_exit(6);
	_exit(0);
}

/* Recovery: commit the recorded checkpoint again, abort the rest, check the output. */
static void recover(const char *dir, const struct sl_jsonl_sink_cfg *cfg, struct manifest *mf)
{
	if (!read_manifest(dir, mf))
		memset(mf, 0, sizeof(*mf));
	for (int s = 0; s < 2 && mf->ckpt; s++) {
		int rc = K->commit(cfg, mf->ckpt, mf->m[s].b, mf->m[s].len);

		if (rc)
			fprintf(stderr, "recovery of checkpoint %llu, shard %d: %s; meta:\n%.*s",
				(unsigned long long)mf->ckpt, s, strerror(-rc), (int)mf->m[s].len,
				mf->m[s].b);
		T_ASSERT(rc == 0);
	}
	for (int s = 0; s < 2; s++)
		T_ASSERT(K->abort_pending(cfg, s, 2, mf->ckpt) == 0);
	T_ASSERT(expect_rows(cfg->path, mf->rows, false) == 0);
}

/* Waits for the child to be in `target` (-1: any) for the 1st to 4th time, up to a few
 * seconds, then a random while more: up to 40 ms for a kill anywhere, up to 0.4 ms for one
 * inside that phase. */
static void wait_for(_Atomic int *ph, int target, unsigned *seed)
{
	struct timespec tick = { 0, 20000 }, d = { 0, 0 };
	int nth = 1 + (int)(rand_r(seed) % 4);

	for (int i = 0; target >= 0 && i < 100000; i++) {
		if (atomic_load_explicit(&ph[0], memory_order_relaxed) == target &&
		    atomic_load_explicit(&ph[1 + target], memory_order_relaxed) >= nth)
			break;
		nanosleep(&tick, NULL);
	}
	d.tv_nsec = (long)(rand_r(seed) % (target >= 0 ? 400 : 40000)) * 1000;
	nanosleep(&d, NULL);
}

static void test_kill9(void)
{
	static const int targets[] = { P_PRECOMMIT, P_MANIFEST, P_COMMIT, P_WRITE };
	char dir[] = "/tmp/sluice-eos-XXXXXX", out[64];
	struct sl_jsonl_sink_cfg cfg = { .path = out, .exactly_once = true, .roll_bytes = 1 };
	const char *env = getenv("SLUICE_EOS_SEED");
	unsigned seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
	int kills = 0, at[P_NPHASE] = { 0 }, status;
	int64_t last_kill_rows = 0;
	_Atomic int *phase;
	struct manifest *mf = malloc(sizeof(*mf));
	struct timespec t0, t1;
	pid_t pid;

	T_ASSERT(mf);
	phase = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(phase != MAP_FAILED);
	mk_tmp(dir, out, sizeof out);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(mf, 0, sizeof(*mf));
	for (;;) {
		memset(phase, 0, 4096);
		pid = fork();
		T_ASSERT(pid >= 0);
		if (pid == 0)
			child(dir, &cfg, mf->rows, mf->ckpt + 1, phase);
		if (kills < KILLS) {
			wait_for(phase, kills % 2 ? targets[kills / 2 % 4] : -1, &seed);
			kill(pid, SIGKILL);
		}
		T_ASSERT(waitpid(pid, &status, 0) == pid);
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			kills++;
			at[atomic_load_explicit(&phase[0], memory_order_relaxed)]++;
			recover(dir, &cfg, mf);
			last_kill_rows = mf->rows;
			continue;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fprintf(stderr, "child failed: status %d (seed %u)\n", status, seed);
		T_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	T_ASSERT(expect_rows(out, KILL_ROWS, false) == 0);
	T_ASSERT(read_manifest(dir, mf) && mf->rows == KILL_ROWS);
	printf("kill -9: %d kills (seed %u; the last at row %lld of %d) in %.1f s, by phase:",
	       kills, seed, (long long)last_kill_rows, KILL_ROWS,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (int p = 0; p < P_NPHASE; p++)
		printf(" %s %d", phase_name[p], at[p]);
	printf("\n");
	if (kills < 20)
		fprintf(stderr, "only %d kills before the input ended (seed %u)\n", kills, seed);
	T_ASSERT(kills >= 20);
	munmap(phase, 4096);
	free(mf);
	rm_rf(dir);
}

int main(void)
{
	schema = h_schema(spec);
	test_crash_before_commit();
	test_partial_multi_file_commit();
	test_shards();
	test_carry_over();
	test_end_of_input();
	test_errors();
	test_at_least_once();
	test_sql_option();
	test_kill9();
	free(seen);
	sl_schema_destroy(schema);
	return T_EXIT_PASS;
}
