/*
 * jsonl_sink.c - the filesystem sink (JSON lines or CSV), one JSON object or CSV record per
 * row in the format the file source reads back, in two modes:
 *
 * At-least-once (without checkpoints, or when asked): each shard's instance writes its own
 * part file (`<dir>/part-<shard>.jsonl` or `.csv`), or a single-shard sink writes the named
 * file; flush() makes the rows visible. A visible row is never taken back: a restart appends
 * to the file it finds (after a '\n' if a killed run left a partial line), never truncates
 * or replaces it, and abort_pending() leaves every file alone, so rows replayed after a
 * crash are duplicates and nothing is lost.
 *
 * Exactly-once (cfg->exactly_once, DESIGN §7, Flink's FileSink): rows go to hidden
 * in-progress files and become visible only by a rename named in a checkpoint's meta. The
 * life of one part file (function of each transition in brackets):
 *
 *   (none) --[drain: first bytes]--> OPEN  `.part-<k>-<run>-<n>.inprogress`
 *   OPEN --[seal: roll_bytes reached, precommit, flush]--> SEALED (closed, unnamed)
 *   SEALED --[precommit(c): fdatasync, dir fsync, name `part-<k>-<c>-<i>.<ext>`]--> PENDING
 *   PENDING --[commit(meta), any thread; or recovery's commit]--> VISIBLE (renamed)
 *   OPEN, SEALED, PENDING --[crash; recovery's abort_pending]--> deleted
 *   VISIBLE under a checkpoint newer than the one restored --[abort_pending]--> deleted
 *
 * Invariants: an in-progress name is never reused, not even by the next run (<run> is 64
 * random bits drawn at open): recovery replays old metas, and a replayed rename must find
 * its source gone, not a newer file of the same name. A visible name is only created by
 * sl_sink_publish() from a precommitted meta (or by flush() at end of input), never over an
 * existing file, so nothing uncommitted is ever visible and nothing committed is ever
 * replaced. Every meta lists *all* PENDING files of the instance not yet seen published
 * (one faccessat each at precommit), not only the new ones: a checkpoint that fails, or
 * whose commit a crash pre-empts, hands its files on to the next complete checkpoint, so no
 * row waits for a commit that never comes. Commits are idempotent (sl_sink_publish), so
 * recovery replays the newest complete checkpoint's metas and then aborts what is left.
 * A final name carries the checkpoint whose precommit gave it, and the rows in it were all
 * written after the barrier of every older checkpoint; so when recovery restores checkpoint
 * c, a visible file named under c' > c holds rows the sources are about to replay (c' was
 * committed, then found corrupt, or its manifest lost), and abort_pending deletes it, or
 * falling back to an older checkpoint would duplicate that output.
 *
 * Rows are encoded into a per-instance buffer and written in large chunks (when full, at
 * precommit and at flush), so a row costs its encoding only; in-progress files are created
 * when their first chunk goes out, so an idle checkpoint interval leaves no empty file.
 * Files are not shared between shards, so no lock is taken. After a failed write the
 * instance is in a sticky error state: every later call returns that error (the file may
 * hold a partial chunk; only recovery may go on).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sluice/connectors.h>

#include "sink_io.h"

#define JSONL_BUF  (256u << 10)
#define NAME_LEN   96 /* ".part-<int>-<x64>-<u64>.inprogress", "part-<int>-<u64>-<u32>.csv" */
#define META_MAGIC "sluice-fs-sink 1 "
#define INPROGRESS ".inprogress"

struct part {
	char src[NAME_LEN]; /* in-progress name */
	char dst[NAME_LEN]; /* final name; "" while SEALED (not yet precommitted) */
};

struct jsonl_sink {
	const struct sl_jsonl_sink_cfg *cfg;
	const struct sl_schema *schema;
	int fd; /* output file; exactly-once: the OPEN in-progress file or -1 */
	char *buf;
	size_t cap, used;
	int err; /* sticky: the first failed write or sync, 0 if none */
	/* exactly-once only */
	int dirfd; /* cfg->path, for every *at() call and the directory fsyncs */
	int shard;
	uint64_t run;	    /* random, in every in-progress name of this instance */
	uint64_t seq;	    /* number of the next in-progress file */
	char cur[NAME_LEN]; /* name of the OPEN file (fd >= 0) */
	uint64_t cur_bytes; /* bytes written to it, against roll_bytes */
	struct part *parts; /* PENDING ones first, then SEALED ones */
	int nparts, pcap;
	uint64_t name_ckpt; /* checkpoint of the last final name given, and ... */
	uint32_t name_idx;  /* ... the next index under it */
};

static void *fail(struct sl_error *err, int code, const char *path, const char *what)
{
	err->code = code;
	snprintf(err->msg, sizeof err->msg, "jsonl sink: %s '%.160s': %s", what, path,
		 strerror(-code));
	return NULL;
}

static const char *ext(const struct sl_jsonl_sink_cfg *cfg)
{
	return cfg->format == SL_FORMAT_CSV ? "csv" : "jsonl";
}

/* ---- shared file operations (sink_io.h) ------------------------------------------------ */

int sl_sink_fsync(int fd)
{
	while (fsync(fd) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int sl_sink_publish(int dirfd, const char *src, const char *dst)
{
	struct stat ss, ds;

	if (renameat2(dirfd, src, dirfd, dst, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EINVAL || errno == ENOSYS) {
		/* no RENAME_NOREPLACE here: link refuses an existing dst just the same */
		if (linkat(dirfd, src, dirfd, dst, 0) == 0)
			return unlinkat(dirfd, src, 0) < 0 && errno != ENOENT ? -errno : 0;
	}
	if (errno == ENOENT)
		return fstatat(dirfd, dst, &ds, 0) == 0 ? 0 : -ENOENT;
	if (errno != EEXIST)
		return -errno;
	if (fstatat(dirfd, src, &ss, 0) < 0)
		return errno == ENOENT ? 0 : -errno; /* published meanwhile */
	if (fstatat(dirfd, dst, &ds, 0) < 0)
		return -errno;
	if (ss.st_dev != ds.st_dev || ss.st_ino != ds.st_ino)
		return -EEXIST;
	return unlinkat(dirfd, src, 0) < 0 && errno != ENOENT ? -errno : 0;
}

/* ---- meta: "sluice-fs-sink 1 <n>\n" then n lines "<src> <dst>\n" ----------------------- */

/* Whether `s` is a name this sink makes: `prefix` + [0-9-]+ (hex digits too if `hex`) +
 * `suffix`, nothing else. */
static bool our_name(const char *s, size_t len, const char *prefix, const char *suffix, bool hex)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);

	if (len >= NAME_LEN || len <= pl + sl || memcmp(s, prefix, pl) ||
	    memcmp(s + len - sl, suffix, sl) || s[pl] < '0' || s[pl] > '9')
		return false;
	for (size_t i = pl; i < len - sl; i++)
		if ((s[i] < '0' || s[i] > '9') && s[i] != '-' &&
		    !(hex && s[i] >= 'a' && s[i] <= 'f'))
			return false;
	return true;
}

static bool final_name(const char *s, size_t len)
{
	return our_name(s, len, "part-", ".jsonl", false) ||
	       our_name(s, len, "part-", ".csv", false);
}

/* Reads the next space- or newline-ended word of meta into out[NAME_LEN]. */
static int meta_word(const char **p, const char *end, char stop, char *out)
{
	const char *q = memchr(*p, stop, (size_t)(end - *p));

	if (!q || q == *p || q - *p >= NAME_LEN)
		return -EINVAL;
	memcpy(out, *p, (size_t)(q - *p));
	out[q - *p] = '\0';
	*p = q + 1;
	return 0;
}

/*
 * Walks a meta, checking every line before `dirfd >= 0` publishes anything, so a corrupt
 * meta touches no file. Returns the number of renames or -EINVAL.
 */
static int meta_walk(const void *meta, size_t len, int dirfd)
{
	const char *p = meta, *end = p + len;
	char src[NAME_LEN], dst[NAME_LEN], num[NAME_LEN];
	size_t ml = strlen(META_MAGIC);
	long n;
	int rc;

	if (!meta || len < ml || memcmp(p, META_MAGIC, ml))
		return -EINVAL;
	p += ml;
	if (meta_word(&p, end, '\n', num) < 0)
		return -EINVAL;
	n = strtol(num, NULL, 10);
	if (n < 0 || n > 1000000 || num[strspn(num, "0123456789")])
		return -EINVAL;
	for (long i = 0; i < n; i++) {
		if (meta_word(&p, end, ' ', src) < 0 || meta_word(&p, end, '\n', dst) < 0 ||
		    !our_name(src, strlen(src), ".part-", INPROGRESS, true) ||
		    !final_name(dst, strlen(dst)))
			return -EINVAL;
		if (dirfd >= 0 && (rc = sl_sink_publish(dirfd, src, dst)) < 0)
			return rc;
	}
	return p == end ? (int)n : -EINVAL;
}

static int meta_encode(const struct jsonl_sink *j, char *meta, size_t cap, size_t *len)
{
	size_t need = (size_t)snprintf(NULL, 0, META_MAGIC "%d\n", j->nparts), off;

	for (int i = 0; i < j->nparts; i++)
		need += strlen(j->parts[i].src) + strlen(j->parts[i].dst) + 2;
	*len = need;
	if (need > cap)
		return -ENOSPC;
	off = (size_t)sprintf(meta, META_MAGIC "%d\n", j->nparts);
	for (int i = 0; i < j->nparts; i++)
		off += (size_t)sprintf(meta + off, "%s %s\n", j->parts[i].src, j->parts[i].dst);
	*len = off;
	return 0;
}

/* ---- instance ------------------------------------------------------------------------- */

static int open_dir(const struct sl_jsonl_sink_cfg *cfg, bool make, bool *dir)
{
	struct stat st;

	*dir = stat(cfg->path, &st) == 0 && S_ISDIR(st.st_mode);
	if (*dir || !make)
		return 0;
	/* several part files need a directory: make it (other shards may race us) */
	if (mkdir(cfg->path, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (stat(cfg->path, &st) < 0 || !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*dir = true;
	return 0;
}

/* An at-least-once file found from an earlier run keeps its rows; a partial last line (a
 * killed write) gets its '\n' so that the next row starts a line of its own. */
static int end_line(int fd, const char *file)
{
	struct stat st;
	ssize_t n;
	char c;
	int rfd;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size == 0)
		return 0;
	rfd = open(file, O_RDONLY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	n = pread(rfd, &c, 1, st.st_size - 1);
	close(rfd);
	if (n != 1)
		return n < 0 ? -errno : -EIO;
	return c == '\n' ? 0 : sl_sink_write_all(fd, "\n", 1, NULL);
}

static void *jsonl_open(const void *cfgp, const struct sl_schema *schema, int shard, int nshards,
			struct sl_error *err)
{
	const struct sl_jsonl_sink_cfg *cfg = cfgp;
	char file[4096];
	struct jsonl_sink *j;
	struct stat st;
	bool dir;
	int rc;

	if (!cfg || !cfg->path)
		return fail(err, -EINVAL, "", "no path");
	if (cfg->format != SL_FORMAT_JSON && cfg->format != SL_FORMAT_CSV)
		return fail(err, -EINVAL, cfg->path, "format must be JSON or CSV for");
	if (cfg->exactly_once && stat(cfg->path, &st) == 0 && !S_ISDIR(st.st_mode))
		return fail(err, -ENOTDIR, cfg->path, "exactly-once needs a directory, not file");
	rc = open_dir(cfg, nshards > 1 || cfg->exactly_once, &dir);
	if (rc == -ENOTDIR)
		return fail(err, rc, cfg->path, "needs a directory for part files");
	if (rc < 0)
		return fail(err, rc, cfg->path, "cannot create directory");
	if (dir) {
		if (snprintf(file, sizeof file, "%s/part-%d.%s", cfg->path, shard, ext(cfg)) >=
		    (int)sizeof file)
			return fail(err, -ENAMETOOLONG, cfg->path, "path too long");
	} else {
		snprintf(file, sizeof file, "%s", cfg->path);
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return fail(err, -ENOMEM, file, "cannot open");
	j->cfg = cfg;
	j->schema = schema;
	j->shard = shard;
	j->fd = -1;
	j->dirfd = -1;
	j->cap = cfg->buf_bytes ? cfg->buf_bytes : JSONL_BUF;
	j->buf = malloc(j->cap);
	if (!j->buf) {
		rc = -ENOMEM;
		goto out_free;
	}
	if (cfg->exactly_once) {
		snprintf(file, sizeof file, "%s", cfg->path);
		if (getrandom(&j->run, sizeof j->run, 0) != sizeof j->run)
			j->run = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
		j->dirfd = open(cfg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (j->dirfd < 0) {
			rc = -errno;
			goto out_free_buf;
		}
		return j;
	}
	j->fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (j->fd < 0) {
		rc = -errno;
		goto out_free_buf;
	}
	if ((rc = end_line(j->fd, file)) < 0)
		goto out_close;
	return j;

out_close:
	close(j->fd);
out_free_buf:
	free(j->buf);
out_free:
	free(j);
	return fail(err, rc, file, "cannot open");
}

static int add_part(struct jsonl_sink *j, const char *src)
{
	if (j->nparts == j->pcap) {
		int cap = j->pcap ? 2 * j->pcap : 8;
		struct part *np = realloc(j->parts, (size_t)cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		j->parts = np;
		j->pcap = cap;
	}
	snprintf(j->parts[j->nparts].src, NAME_LEN, "%s", src);
	j->parts[j->nparts++].dst[0] = '\0';
	return 0;
}

/* OPEN -> SEALED. The data is synced later, at precommit, by name. */
static int seal(struct jsonl_sink *j)
{
	int rc = 0;

	if (j->fd < 0)
		return 0;
	if (close(j->fd) < 0 && errno != EINTR)
		rc = -errno;
	j->fd = -1;
	return rc ? rc : add_part(j, j->cur);
}

/* Creates the next in-progress file, skipping numbers taken by a stale file. */
static int open_inprogress(struct jsonl_sink *j)
{
	for (int tries = 0; tries < 1000; tries++) {
		snprintf(j->cur, sizeof j->cur, ".part-%d-%016" PRIx64 "-%" PRIu64 INPROGRESS,
			 j->shard, j->run, j->seq++);
		j->fd = openat(j->dirfd, j->cur, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (j->fd >= 0) {
			j->cur_bytes = 0;
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Writes the buffer out (exactly-once: into the OPEN file, made if none, rolled if full).
 * Once per chunk, not per record. */
static int drain(struct jsonl_sink *j)
{
	int rc;

	if (j->err)
		return j->err;
	if (!j->used)
		return 0;
	if (j->fd < 0 && (rc = open_inprogress(j)) < 0)
		return j->err = rc;
	rc = sl_sink_write_all(j->fd, j->buf, j->used, NULL);
	if (rc < 0)
		return j->err = rc;
	j->cur_bytes += j->used;
	j->used = 0;
	if (j->dirfd >= 0 && j->cfg->roll_bytes && j->cur_bytes >= j->cfg->roll_bytes &&
	    (rc = seal(j)) < 0)
		return j->err = rc;
	return 0;
}

/* Whether `name` is certainly absent from dirfd (any other error: assume present). */
static bool absent(int dirfd, const char *name)
{
	return faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

/* Gives p its final name under ckpt, skipping names a stale file holds, so that publishing
 * never meets an existing target (which it would refuse). */
static int name_part(struct jsonl_sink *j, struct part *p, uint64_t ckpt)
{
	for (int tries = 0; tries < 1000; tries++) {
		snprintf(p->dst, NAME_LEN, "part-%d-%" PRIu64 "-%" PRIu32 ".%s", j->shard, ckpt,
			 j->name_idx++, ext(j->cfg));
		if (absent(j->dirfd, p->dst))
			return 0;
	}
	p->dst[0] = '\0';
	return -EEXIST;
}

/*
 * Everything written becomes PENDING under checkpoint `ckpt`'s names: out of the buffer,
 * sealed, every SEALED file fdatasynced, the directory fsynced (their names must survive a
 * crash too), final names given. PENDING files already published are dropped. Shard thread;
 * blocking (a few syscalls per part file), once per checkpoint.
 */
static int seal_all(struct jsonl_sink *j, uint64_t ckpt)
{
	int rc, keep = 0, fd;
	bool synced = false;

	if ((rc = drain(j)) < 0 || (rc = seal(j)) < 0)
		return j->err = rc;
	for (int i = 0; i < j->nparts; i++) {
		struct part *p = &j->parts[i];

		if (p->dst[0])
			continue;
		fd = openat(j->dirfd, p->src, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return j->err = -errno;
		rc = fdatasync(fd) < 0 ? -errno : 0;
		close(fd);
		if (rc < 0)
			return j->err = rc;
		synced = true;
	}
	if (synced && (rc = sl_sink_fsync(j->dirfd)) < 0)
		return j->err = rc;
	if (ckpt != j->name_ckpt) {
		j->name_ckpt = ckpt;
		j->name_idx = 0;
	}
	for (int i = 0; i < j->nparts; i++)
		if (!j->parts[i].dst[0] && (rc = name_part(j, &j->parts[i], ckpt)) < 0)
			return j->err = rc;
	for (int i = 0; i < j->nparts; i++)
		if (!absent(j->dirfd, j->parts[i].src))
			j->parts[keep++] = j->parts[i]; /* not yet published by a commit */
	j->nparts = keep;
	return 0;
}

int sl_jsonl_sink_roll(void *state)
{
	struct jsonl_sink *j = state;
	int rc = drain(j);

	if (rc < 0 || j->dirfd < 0)
		return rc;
	return (rc = seal(j)) < 0 ? (j->err = rc) : 0;
}

bool sl_jsonl_meta_empty(const void *meta, size_t len)
{
	static const char none[] = META_MAGIC "0\n";

	return len == 0 || (len == sizeof none - 1 && !memcmp(meta, none, len));
}

static int jsonl_precommit(void *state, uint64_t ckpt, void *meta, size_t cap, size_t *len)
{
	struct jsonl_sink *j = state;
	int rc;

	*len = 0;
	if (j->dirfd < 0) {
		/* at-least-once: rows durable at the barrier, nothing to commit */
		if ((rc = drain(j)) < 0)
			return rc;
		/* EINVAL: a pipe or terminal (path /dev/stdout) has nothing to sync */
		if (fdatasync(j->fd) < 0 && errno != EINVAL)
			return j->err = -errno;
		return 0;
	}
	if ((rc = seal_all(j, ckpt)) < 0)
		return rc;
	return meta_encode(j, meta, cap, len);
}

static int jsonl_commit(const void *cfgp, uint64_t ckpt, const void *meta, size_t len)
{
	const struct sl_jsonl_sink_cfg *cfg = cfgp;
	int n, dirfd, rc;

	if (!len)
		return 0; /* an at-least-once instance's precommit */
	n = meta_walk(meta, len, -1);
	if (n <= 0)
		return n;
	dirfd = open(cfg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	rc = meta_walk(meta, len, dirfd);
	if (rc >= 0)
		rc = sl_sink_fsync(dirfd);
	close(dirfd);
	return rc;
}

/* Parses ".part-<shard>-<n>.inprogress"; returns the shard or -1 for another name. */
static int inprogress_shard(const char *name)
{
	size_t len = strlen(name);
	char *end;
	long s;

	if (!our_name(name, len, ".part-", INPROGRESS, true))
		return -1;
	s = strtol(name + 6, &end, 10);
	if (*end != '-' || s < 0 || s > 1 << 20)
		return -1;
	return (int)s;
}

/* Parses a final name "part-<shard>-<ckpt>-<i>.<ext>"; returns the shard (and *ckpt) or -1. */
static int final_shard(const char *name, uint64_t *ckpt)
{
	char *end;
	long s;

	if (!final_name(name, strlen(name)))
		return -1;
	s = strtol(name + 5, &end, 10);
	if (*end != '-' || s < 0 || s > 1 << 20)
		return -1;
	*ckpt = strtoull(end + 1, &end, 10);
	return *end == '-' ? (int)s : -1;
}

static int jsonl_abort_pending(const void *cfgp, int shard, int nshards, uint64_t ckpt)
{
	const struct sl_jsonl_sink_cfg *cfg = cfgp;
	struct dirent *de;
	bool removed = false;
	uint64_t named;
	int dirfd, s, rc = 0;
	DIR *d;

	if (!cfg->exactly_once)
		return 0; /* at-least-once: a visible row stays visible */
	dirfd = open(cfg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno; /* nothing written */
	d = fdopendir(dirfd);
	if (!d) {
		rc = -errno;
		close(dirfd);
		return rc;
	}
	while ((de = readdir(d))) {
		s = inprogress_shard(de->d_name);
		/* published under a checkpoint after the restored one: replayed, so taken back
		 * (a fresh start, ckpt 0, leaves earlier runs' output alone) */
		if (s < 0 && ckpt && (s = final_shard(de->d_name, &named)) >= 0 && named <= ckpt)
			s = -1;
		if (s < 0 || (s != shard && !(shard == 0 && s >= nshards)))
			continue;
		if (unlinkat(dirfd, de->d_name, 0) < 0 && errno != ENOENT) {
			rc = -errno;
			break;
		}
		removed = true;
	}
	if (!rc && removed)
		rc = sl_sink_fsync(dirfd);
	closedir(d);
	return rc;
}

/* End of input. At-least-once: the buffer goes out. Exactly-once: everything still PENDING
 * or newer is precommitted under the last checkpoint's number and published at once. */
static int jsonl_flush(void *state)
{
	struct jsonl_sink *j = state;
	int rc;

	if (j->dirfd < 0)
		return drain(j);
	if ((rc = seal_all(j, j->name_ckpt)) < 0)
		return rc;
	for (int i = 0; i < j->nparts; i++)
		if ((rc = sl_sink_publish(j->dirfd, j->parts[i].src, j->parts[i].dst)) < 0)
			return j->err = rc;
	if (j->nparts && (rc = sl_sink_fsync(j->dirfd)) < 0)
		return j->err = rc;
	j->nparts = 0;
	return 0;
}

static int encode(struct jsonl_sink *j, const struct sl_row *row, char *buf, size_t cap)
{
	if (j->cfg->format == SL_FORMAT_CSV)
		return sl_csv_write_row(row, j->schema, &j->cfg->csv, buf, cap);
	return sl_json_write_row(row, j->schema, buf, cap);
}

/* Hot path: encoding only; a write(2) per full buffer. */
static int jsonl_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	struct jsonl_sink *j = state;
	int n, rc;

	n = encode(j, row, j->buf + j->used, j->cap - j->used);
	if (n >= 0) {
		j->used += (size_t)n;
		return 0;
	}
	rc = drain(j);
	if (rc < 0)
		return rc;
	n = encode(j, row, j->buf, j->cap);
	if (n < 0) {
		/* a row whose worst-case encoding exceeds the buffer: grow once to fit it */
		size_t cap = j->cap;
		char *nb;

		while (n < 0 && cap < ((size_t)1 << 31)) {
			cap *= 2;
			nb = realloc(j->buf, cap);
			if (!nb)
				return -ENOMEM;
			j->buf = nb;
			j->cap = cap;
			n = encode(j, row, j->buf, j->cap);
		}
		if (n < 0)
			return -E2BIG;
	}
	j->used = (size_t)n;
	return 0;
}

static void jsonl_close(void *state)
{
	struct jsonl_sink *j = state;

	if (!j)
		return;
	/* at-least-once: flush() normally ran; this only saves rows of a failing job.
	 * Exactly-once publishes nothing here: what is not committed waits for recovery. */
	if (j->dirfd < 0)
		drain(j);
	if (j->fd >= 0)
		close(j->fd);
	if (j->dirfd >= 0)
		close(j->dirfd);
	free(j->parts);
	free(j->buf);
	free(j);
}

const struct sl_sink_ops sl_jsonl_sink_ops = {
	.name = "filesystem-jsonl",
	.open = jsonl_open,
	.write = jsonl_write,
	.flush = jsonl_flush,
	.close = jsonl_close,
	.precommit = jsonl_precommit,
	.commit = jsonl_commit,
	.abort_pending = jsonl_abort_pending,
};
