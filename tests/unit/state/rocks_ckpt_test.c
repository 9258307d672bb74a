/*
 * rocks_ckpt_test.c - RocksDB checkpoints of a shard's db and loading them back: a
 * checkpoint holds exactly the state at its barrier (cached writes included), an unchanged
 * second checkpoint shares its SST files by hard link and writes little (incremental), a
 * load into a fresh db gives back the same entries and entry counts, loads restricted to
 * key-group ranges split the state for a new shard count (hard links for the first load of
 * a db, a copy for the next ones), and a directory that is not a DB is refused with -EINVAL
 * and a message, leaving the db usable. Each checkpoint lists its files with their true
 * sizes and CRC32C, unchanged SSTs' checksums coming from the previous one. The operator's
 * native section restores the entry count for the same key groups and leaves other ranges
 * to a scan; a heap kstate refuses it.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "crc32c.h"
#include "rocks_common.h"

#define MAX_PAR 128
#define HOUR	(3600 * 1000)

enum { V = 0, VTTL, M, NDESC };

static const struct sl_state_desc descs[] = {
	{ "v", SL_STATE_VALUE, 8, 0 },
	{ "vttl", SL_STATE_VALUE, 16, HOUR },
	{ "m", SL_STATE_MAP, 8, 0 },
};

static struct sl_kkey key(const char *s)
{
	uint32_t n = (uint32_t)strlen(s);

	return (struct sl_kkey){ sl_hash_bytes(s, n), s, n };
}

static struct sl_kstate *mk(struct sl_rocks_db *db)
{
	int err;
	struct sl_kstate *ks = sl_kstate_create_in(db, 7, descs, NDESC, MAX_PAR, &err);

	T_ASSERT(ks && err == 0);
	return ks;
}

static void populate(struct sl_kstate *ks, int from, int to, uint64_t salt, sl_ts_t now)
{
	char kb[32];

	for (int i = from; i < to; i++) {
		struct sl_kkey k;
		uint64_t *v;

		snprintf(kb, sizeof(kb), "c%d", i);
		k = key(kb);
		*(uint64_t *)sl_kstate_value_put(ks, V, &k, now) = (uint64_t)i + salt;
		v = sl_kstate_value_put(ks, VTTL, &k, now);
		v[0] = (uint64_t)i;
		v[1] = salt;
		for (uint64_t j = 0; j < (uint64_t)(i % 3); j++)
			*(uint64_t *)sl_kstate_map_put(ks, M, &k, &j, 8, now) = j * salt;
	}
}

static struct sl_rocks_db *load(struct sl_state_env *env, int shard, const char *path, uint32_t lo,
				uint32_t hi)
{
	struct sl_rocks_db *db = rocks_db(env, shard);
	char err[256];
	int rc = sl_rocks_db_load(db, path, lo, hi, err, sizeof(err));

	if (rc)
		fprintf(stderr, "load %s: %d %s\n", path, rc, err);
	T_ASSERT(rc == 0);
	return db;
}

/* Some SST file of `path` is also linked from elsewhere (shared with another checkpoint). */
static bool shares_ssts(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	bool shared = false;
	char full[1024];
	struct stat st;

	T_ASSERT(d);
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n < 4 || strcmp(de->d_name + n - 4, ".sst"))
			continue;
		snprintf(full, sizeof(full), "%s/%s", path, de->d_name);
		if (!stat(full, &st) && st.st_nlink >= 2)
			shared = true;
	}
	closedir(d);
	return shared;
}

/* Whole-file CRC32C, read independently of the code under test. */
static uint32_t file_crc(const char *path, uint64_t *size)
{
	FILE *fp = fopen(path, "rb");
	uint8_t buf[65536];
	uint32_t crc = 0;
	size_t r;

	T_ASSERT(fp);
	*size = 0;
	while ((r = fread(buf, 1, sizeof(buf), fp)) > 0) {
		crc = sl_crc32c(crc, buf, r);
		*size += r;
	}
	fclose(fp);
	return crc;
}

/*
 * Checks the file list of db's last checkpoint (in `path`): every regular file of the
 * directory, each with its true size and, once sl_rocks_db_checkpoint_crc is done (called
 * with a small budget, so it must resume mid-file), its true CRC32C. Returns the bytes of
 * SST files whose checksum was known before any reading (taken from the cache).
 */
static uint64_t check_files(struct sl_rocks_db *db, const char *path)
{
	const struct sl_state_ckpt_file *f;
	uint64_t cached = 0;
	char err[256], full[1024];
	size_t n, ndir = 0;
	int rc, turns = 0;
	DIR *d;
	struct dirent *de;

	f = sl_rocks_db_checkpoint_files(db, &n);
	for (size_t i = 0; i < n; i++)
		if (f[i].crc_ok)
			cached += f[i].size;
	while ((rc = sl_rocks_db_checkpoint_crc(db, 256 << 10, err, sizeof(err))) == 0)
		turns++;
	if (rc < 0)
		fprintf(stderr, "crc: %s\n", err);
	T_ASSERT(rc == 1);
	f = sl_rocks_db_checkpoint_files(db, &n);
	for (size_t i = 0; i < n; i++) {
		uint64_t size;
		uint32_t crc;

		snprintf(full, sizeof(full), "%s/%s", path, f[i].name);
		crc = file_crc(full, &size);
		T_ASSERT(f[i].crc_ok);
		T_ASSERT_EQ_I64(f[i].size, size);
		T_ASSERT(f[i].crc32c == crc);
	}
	d = opendir(path);
	T_ASSERT(d);
	while ((de = readdir(d)))
		ndir += de->d_name[0] != '.';
	closedir(d);
	T_ASSERT_EQ_I64(ndir, n);
	printf("%s: %zu files, %llu bytes of SSTs checksummed before, %d slices\n", path, n,
	       (unsigned long long)cached, turns);
	return cached;
}

int main(void)
{
	char *dir = tmp_dir("rocks-ckpt");
	struct sl_state_env *env = rocks_env(dir, 32u << 20, 2);
	struct sl_rocks_db *db = rocks_db(env, 0), *d1, *da, *db2, *dc;
	sl_ts_t now = wall_now();
	struct sl_kstate *ks, *k1, *ka, *kb, *kc;
	char c1[512], c2[512], c3[512], bad[512], err[256];
	uint64_t b1, b2, b3;
	struct dump d0, d0lo, d0hi, d3hi, x;
	struct sl_snap_buf nat;
	struct sl_state_ckpt_file *c1files;
	size_t nc1;
	char c4[512];
	size_t e0;

	snprintf(c1, sizeof(c1), "%s/ckpt-1", dir);
	snprintf(c2, sizeof(c2), "%s/ckpt-2", dir);
	snprintf(c3, sizeof(c3), "%s/ckpt-3", dir);
	snprintf(bad, sizeof(bad), "%s/not-a-db", dir);

	ks = mk(db);
	populate(ks, 0, 30000, 1, now);
	/* no explicit flush: the checkpoint writes the cache back itself */
	T_ASSERT(sl_rocks_db_checkpoint(db, c1, &b1) == 0);
	d0 = dump_of(ks, descs, NDESC, now, 0, MAX_PAR);
	d0lo = dump_of(ks, descs, NDESC, now, 0, 64);
	d0hi = dump_of(ks, descs, NDESC, now, 64, MAX_PAR);
	e0 = sl_kstate_entries(ks);
	T_ASSERT(d0.n > 60000 && e0 == d0.n);
	/* the operator's side of that checkpoint (its native section: layout, count, range) */
	sl_snap_init(&nat);
	T_ASSERT(sl_kstate_snapshot_native(ks, 0, MAX_PAR, &nat) == 0);
	T_ASSERT(b1 > 30000 * 24);
	T_ASSERT(check_files(db, c1) == 0);
	{
		const struct sl_state_ckpt_file *f = sl_rocks_db_checkpoint_files(db, &nc1);

		c1files = malloc(nc1 * sizeof(*c1files));
		T_ASSERT(c1files);
		memcpy(c1files, f, nc1 * sizeof(*c1files));
	}
	T_ASSERT(sl_rocks_db_checkpoint(db, c1, &b2) == -EEXIST);
	/* nothing changed: the second checkpoint shares every SST with the first */
	T_ASSERT(sl_rocks_db_checkpoint(db, c2, &b2) == 0);
	T_ASSERT(shares_ssts(c2));
	T_ASSERT(b2 < b1 / 10);
	/* its SSTs' checksums come from the first: only the small files are read */
	T_ASSERT(check_files(db, c2) > b1 / 2);
	/* a few keys changed: only their new SST is new */
	populate(ks, 0, 300, 2, now);
	T_ASSERT(sl_rocks_db_checkpoint(db, c3, &b3) == 0);
	T_ASSERT(b3 < b1 / 4);
	T_ASSERT(check_files(db, c3) > 0);
	d3hi = dump_of(ks, descs, NDESC, now, 64, MAX_PAR);
	printf("checkpoint bytes: full %llu, unchanged %llu, 1%% changed %llu\n",
	       (unsigned long long)b1, (unsigned long long)b2, (unsigned long long)b3);
	sl_kstate_destroy(ks);
	sl_rocks_db_close(db);

	/* same shard count: one load, hard links */
	d1 = load(env, 1, c1, 0, MAX_PAR);
	T_ASSERT(shares_ssts(c1));
	k1 = mk(d1);
	x = dump_of(k1, descs, NDESC, now, 0, MAX_PAR);
	dump_eq(&d0, &x);
	dump_free(&x);
	T_ASSERT_EQ_I64(sl_kstate_entries(k1), e0);
	/* told the checksums the first checkpoint's manifest would hold, the restored db's
	 * next checkpoint reads none of the linked SSTs */
	T_ASSERT(sl_rocks_db_seed_crc(d1, c1files, nc1) == 0);
	snprintf(c4, sizeof(c4), "%s/ckpt-4", dir);
	T_ASSERT(sl_rocks_db_checkpoint(d1, c4, NULL) == 0);
	T_ASSERT(check_files(d1, c4) > b1 / 2);
	free(c1files);
	/* and it reads like the original through the API */
	{
		struct sl_kkey k = key("c77");

		T_ASSERT(*(uint64_t *)sl_kstate_value_get(k1, V, &k, now) == 78);
		T_ASSERT(((uint64_t *)sl_kstate_value_get(k1, VTTL, &k, now))[1] == 1);
	}
	sl_kstate_destroy(k1);
	sl_rocks_db_close(d1);

	/* a native restore: the section's count for the same key groups, a scan for others;
	 * a heap kstate refuses the section */
	{
		struct sl_rocks_db *dn = load(env, 5, c1, 0, MAX_PAR), *dl = load(env, 6, c1, 0, 64);
		struct sl_kstate *kn = mk(dn), *kl = mk(dl), *kh;
		struct sl_snap_reader r;
		int e;

		sl_snap_reader_init(&r, nat.data, nat.len);
		T_ASSERT(sl_kstate_restore(kn, &r, 0, MAX_PAR) == 0);
		T_ASSERT(r.pos == r.len);
		T_ASSERT_EQ_I64(sl_kstate_entries(kn), e0);
		x = dump_of(kn, descs, NDESC, now, 0, MAX_PAR);
		dump_eq(&d0, &x);
		dump_free(&x);
		sl_snap_reader_init(&r, nat.data, nat.len);
		T_ASSERT(sl_kstate_restore(kl, &r, 0, 64) == 0);
		T_ASSERT_EQ_I64(sl_kstate_entries(kl), d0lo.n);
		kh = sl_kstate_create(descs, NDESC, MAX_PAR, &e);
		T_ASSERT(kh);
		sl_snap_reader_init(&r, nat.data, nat.len);
		T_ASSERT(sl_kstate_restore(kh, &r, 0, MAX_PAR) == -EPROTO);
		T_ASSERT(strstr(sl_kstate_error(kh), "native format"));
		sl_kstate_destroy(kh);
		sl_kstate_destroy(kn);
		sl_kstate_destroy(kl);
		sl_rocks_db_close(dn);
		sl_rocks_db_close(dl);
		sl_snap_free(&nat);
	}

	/* two shards from one: each keeps its key groups */
	da = load(env, 2, c1, 0, 64);
	db2 = load(env, 3, c1, 64, MAX_PAR);
	ka = mk(da);
	kb = mk(db2);
	x = dump_of(ka, descs, NDESC, now, 0, MAX_PAR); /* nothing of [64, 128) left */
	dump_eq(&d0lo, &x);
	dump_free(&x);
	x = dump_of(kb, descs, NDESC, now, 0, MAX_PAR);
	dump_eq(&d0hi, &x);
	dump_free(&x);
	T_ASSERT(d0lo.n > 0 && d0hi.n > 0);
	T_ASSERT_EQ_I64(sl_kstate_entries(ka) + sl_kstate_entries(kb), e0);
	sl_kstate_destroy(ka);
	sl_kstate_destroy(kb);
	sl_rocks_db_close(da);
	sl_rocks_db_close(db2);

	/* two old shards into one db: the second load copies its range in */
	dc = load(env, 4, c1, 0, 64);
	T_ASSERT(sl_rocks_db_load(dc, c3, 64, MAX_PAR, err, sizeof(err)) == 0);
	kc = mk(dc);
	x = dump_of(kc, descs, NDESC, now, 0, 64);
	dump_eq(&d0lo, &x);
	dump_free(&x);
	x = dump_of(kc, descs, NDESC, now, 64, MAX_PAR);
	dump_eq(&d3hi, &x);
	dump_free(&x);
	sl_kstate_destroy(kc);
	sl_rocks_db_close(dc);

	/* not a DB: refused, and the db still works */
	T_ASSERT(mkdir(bad, 0755) == 0);
	{
		char f[600];
		FILE *fp;

		snprintf(f, sizeof(f), "%s/CURRENT", bad);
		fp = fopen(f, "w");
		T_ASSERT(fp);
		fputs("MANIFEST-000099\n", fp);
		fclose(fp);
		db = rocks_db(env, 5);
		T_ASSERT(sl_rocks_db_load(db, bad, 0, MAX_PAR, err, sizeof(err)) == -EINVAL);
		T_ASSERT(err[0] != '\0');
		T_ASSERT(sl_rocks_db_load(db, "/nonexistent/x", 0, MAX_PAR, err, sizeof(err)) ==
			 -EINVAL);
		ks = mk(db);
		populate(ks, 0, 10, 3, now);
		T_ASSERT(sl_rocks_db_flush(db) == 0);
		T_ASSERT_EQ_I64(sl_kstate_entries(ks), 10 + 10 + 9);
		sl_kstate_destroy(ks);
		sl_rocks_db_close(db);
	}
	dump_free(&d0);
	dump_free(&d0lo);
	dump_free(&d0hi);
	dump_free(&d3hi);
	sl_state_env_close(env);
	rm_rf(dir);
	free(dir);
	return T_EXIT_PASS;
}
