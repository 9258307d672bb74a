/*
 * store.c - the checkpoint directory: begin, commit (the atomic rename that completes a
 * checkpoint), recovery's choice of checkpoint, retention, and reading state back.
 *
 * Invariants:
 * - chk-<n>/MANIFEST exists only if every state file it names was fsynced and its directory
 *   entry made durable before it (commit fsyncs chk-<n> first), and the manifest itself was
 *   fsynced under a temp name before the rename; the rename is followed by an fsync of
 *   chk-<n>, so a complete checkpoint survives a power cut.
 * - Retention never removes one of the newest `keep` checkpoints that have a MANIFEST, nor a
 *   checkpoint newer than all complete ones (it may be in progress).
 * - Recovery trusts nothing it has not checked: the manifest's own CRC32C, that it names the
 *   checkpoint of its directory, and every state file's size and CRC32C.
 * - A run completes only a chk-<n> directory it made itself: begin keeps it open, and commit
 *   refuses (-ESTALE) when the path now names another directory. A zombie (a run stopped
 *   mid-checkpoint while its successor restored the checkpoint before, removed chk-<n> as
 *   incomplete and made its own) would otherwise rename its MANIFEST over the successor's
 *   complete one, and a later restore would take the zombie's sink transaction, aborted by
 *   the successor's fencing, for the last word: duplicates (tests/kafka/real_faults.py
 *   zombie). The held descriptor keeps the inode alive, so a new directory cannot have the
 *   same number; the manifest is then written and renamed through it, so a directory
 *   removed after the check takes the zombie's manifest with it.
 * These calls block on the disk: the coordinator and recovery call them, never a shard loop.
 */
#include "store.h"

#include "crc32c.h"
#include "fault.h"
#include "manifest.h"
#include "op_match.h"
#include "par.h"
#include "snap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST       "MANIFEST"
#define MANIFEST_TMP   "MANIFEST.tmp"
#define CORRUPT_PREFIX "corrupt-"

#define OPEN_DIRS 4 /* checkpoints begun and not yet committed or aborted, at most */

struct sl_ckpt_store {
	char *dir;
	unsigned keep;
	struct {
		uint64_t id;
		int fd;	       /* -1: a free slot */
	} open_dir[OPEN_DIRS]; /* the chk-<n> directories this run made (begin) */
	sl_ckpt_report_fn report;
	void *report_arg;
	bool allow_drop; /* sl_ckpt_store_allow_non_restored */
};

/* One checkpoint directory found in DIR. */
struct entry {
	uint64_t id;
	bool corrupt;  /* corrupt-chk-<id> */
	bool complete; /* has MANIFEST (not verified) */
};

static void report_stderr(void *arg, const char *line)
{
	fprintf(stderr, "sluice: %s\n", line);
}

static void say(struct sl_ckpt_store *st, const char *fmt, ...)
{
	char line[PATH_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	st->report(st->report_arg, line);
}

static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		rc = -errno;
	close(fd);
	return rc;
}

struct sl_ckpt_store *sl_ckpt_store_open(const char *dir, int *err)
{
	struct sl_ckpt_store *st;
	struct stat sb;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		*err = -errno;
		return NULL;
	}
	if (stat(dir, &sb)) {
		*err = -errno;
		return NULL;
	}
	if (!S_ISDIR(sb.st_mode)) {
		*err = -ENOTDIR;
		return NULL;
	}
	st = calloc(1, sizeof(*st));
	if (!st || !(st->dir = strdup(dir))) {
		free(st);
		*err = -ENOMEM;
		return NULL;
	}
	st->keep = 2;
	st->report = report_stderr;
	for (int i = 0; i < OPEN_DIRS; i++)
		st->open_dir[i].fd = -1;
	*err = 0;
	return st;
}

const char *sl_ckpt_store_dir(const struct sl_ckpt_store *st)
{
	return st->dir;
}

void sl_ckpt_store_close(struct sl_ckpt_store *st)
{
	if (!st)
		return;
	for (int i = 0; i < OPEN_DIRS; i++)
		if (st->open_dir[i].fd >= 0)
			close(st->open_dir[i].fd);
	free(st->dir);
	free(st);
}

void sl_ckpt_store_set_report(struct sl_ckpt_store *st, sl_ckpt_report_fn fn, void *arg)
{
	st->report = fn ? fn : report_stderr;
	st->report_arg = arg;
}

void sl_ckpt_store_set_keep(struct sl_ckpt_store *st, unsigned keep)
{
	st->keep = keep ? keep : 1;
}

int sl_ckpt_store_path(const struct sl_ckpt_store *st, uint64_t n, const char *rel, char *buf,
		       size_t cap)
{
	int len = rel ? snprintf(buf, cap, "%s/chk-%" PRIu64 "/%s", st->dir, n, rel)
		      : snprintf(buf, cap, "%s/chk-%" PRIu64, st->dir, n);

	return len < 0 || (size_t)len >= cap ? -ENAMETOOLONG : 0;
}

int sl_ckpt_state_name(uint32_t op_id, uint32_t shard, uint64_t run, char *buf, size_t cap)
{
	int len = run ? snprintf(buf, cap, "op%u-s%u-%016" PRIx64 ".state", op_id, shard, run)
		      : snprintf(buf, cap, "op%u-s%u.state", op_id, shard);

	return len < 0 || (size_t)len >= cap ? -ENAMETOOLONG : 0;
}

int sl_ckpt_state_dir_name(uint32_t op_id, uint32_t shard, uint64_t run, char *buf, size_t cap)
{
	int len = run ? snprintf(buf, cap, "op%u-s%u-%016" PRIx64, op_id, shard, run)
		      : snprintf(buf, cap, "op%u-s%u", op_id, shard);

	return len < 0 || (size_t)len >= cap ? -ENAMETOOLONG : 0;
}

bool sl_ckpt_path_is_native(const char *path)
{
	return strchr(path, '/') != NULL;
}

/* "chk-<digits>" exactly, the id fitting in 64 bits. */
static bool parse_id(const char *name, const char *prefix, uint64_t *id)
{
	size_t pl = strlen(prefix);
	char *end;

	if (strncmp(name, prefix, pl) || name[pl] < '0' || name[pl] > '9')
		return false;
	errno = 0;
	*id = strtoull(name + pl, &end, 10);
	return !*end && !errno;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (int)x->corrupt - (int)y->corrupt;
}

/* Lists DIR's checkpoint directories, oldest first. Caller frees *out. */
static int scan(struct sl_ckpt_store *st, struct entry **out, size_t *count)
{
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(st->dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct entry e = { 0 };
		char path[PATH_MAX];
		struct stat sb;

		if (parse_id(de->d_name, "chk-", &e.id))
			e.corrupt = false;
		else if (parse_id(de->d_name, CORRUPT_PREFIX "chk-", &e.id))
			e.corrupt = true;
		else
			continue;
		if (snprintf(path, sizeof(path), "%s/%s/" MANIFEST, st->dir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		e.complete = stat(path, &sb) == 0;
		if (n == cap) {
			struct entry *nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = e;
	}
	closedir(d);
	if (n) /* qsort of an empty (NULL) array is undefined */
		qsort(v, n, sizeof(*v), cmp_entry);
	*out = v;
	*count = n;
	return 0;
}

static int entry_path(const struct sl_ckpt_store *st, const struct entry *e, char *buf, size_t cap)
{
	int len = snprintf(buf, cap, "%s/%schk-%" PRIu64, st->dir, e->corrupt ? CORRUPT_PREFIX : "",
			   e->id);

	return len < 0 || (size_t)len >= cap ? -ENAMETOOLONG : 0;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path) ? -1 : 0;
}

/* rm -rf path (no symlinks followed). 0 or -errno. */
static int rm_tree(const char *path)
{
	if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS))
		return errno == ENOENT ? 0 : -errno;
	return 0;
}

uint64_t sl_ckpt_store_next_id(struct sl_ckpt_store *st)
{
	struct entry *v;
	size_t n;
	uint64_t next = 1;

	if (scan(st, &v, &n))
		return next;
	for (size_t i = 0; i < n; i++)
		if (v[i].id >= next)
			next = v[i].id + 1;
	free(v);
	return next;
}

/* Returns (and forgets) the descriptor begin kept for chk-<n>, or -1 if none. */
static int take_dir(struct sl_ckpt_store *st, uint64_t n)
{
	for (int i = 0; i < OPEN_DIRS; i++)
		if (st->open_dir[i].fd >= 0 && st->open_dir[i].id == n) {
			int fd = st->open_dir[i].fd;

			st->open_dir[i].fd = -1;
			return fd;
		}
	return -1;
}

/* Keeps fd as chk-<n>'s; the oldest slot goes when all are taken (a checkpoint never
 * committed nor aborted; its commit then refuses, which fails that checkpoint only). */
static void keep_dir(struct sl_ckpt_store *st, uint64_t n, int fd)
{
	int at = 0;

	for (int i = 0; i < OPEN_DIRS; i++) {
		if (st->open_dir[i].fd < 0) {
			at = i;
			break;
		}
		if (st->open_dir[i].id < st->open_dir[at].id)
			at = i;
	}
	if (st->open_dir[at].fd >= 0)
		close(st->open_dir[at].fd);
	st->open_dir[at].id = n;
	st->open_dir[at].fd = fd;
}

int sl_ckpt_store_begin(struct sl_ckpt_store *st, uint64_t n)
{
	char path[PATH_MAX];
	int rc = sl_ckpt_store_path(st, n, NULL, path, sizeof(path)), fd;

	if (rc)
		return rc;
	if (mkdir(path, 0755))
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = take_dir(st, n); /* an earlier begin of n, removed since: not ours now */
	if (rc >= 0)
		close(rc);
	keep_dir(st, n, fd);
	/* The new directory's entry in DIR must be durable before MANIFEST can make it count. */
	return fsync_path(st->dir);
}

int sl_ckpt_store_abort(struct sl_ckpt_store *st, uint64_t n)
{
	char path[PATH_MAX];
	int rc = sl_ckpt_store_path(st, n, NULL, path, sizeof(path)), fd = take_dir(st, n);
	struct stat held, now;
	bool ours = true;

	if (fd >= 0) { /* begun here: remove it only if the path still names it */
		ours = !fstat(fd, &held) && !stat(path, &now) && held.st_dev == now.st_dev &&
		       held.st_ino == now.st_ino;
		close(fd);
	}
	if (!rc && !ours)
		say(st,
		    "%s: not removed: another run of this job made it after this one "
		    "(this one is a zombie)",
		    path);
	return rc ? rc : ours ? rm_tree(path) : -ESTALE;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int sl_ckpt_store_commit(struct sl_ckpt_store *st, const struct sl_ckpt_manifest *m)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	struct sl_snap_buf buf;
	const char *stage = "encode";
	int dfd = take_dir(st, m->ckpt_id), fd = -1, rc;
	struct stat held, now;

	if (sl_ckpt_store_path(st, m->ckpt_id, NULL, dir, sizeof(dir)) ||
	    sl_ckpt_store_path(st, m->ckpt_id, MANIFEST_TMP, tmp, sizeof(tmp))) {
		rc = -ENAMETOOLONG;
		goto out_dir;
	}
	sl_snap_init(&buf);
	stage = "its directory, made by this run";
	if (dfd < 0 || fstat(dfd, &held) || stat(dir, &now) || held.st_dev != now.st_dev ||
	    held.st_ino != now.st_ino) {
		rc = -ESTALE; /* not begun here, or replaced by another run: this one is a zombie */
		goto out_free;
	}
	rc = sl_ckpt_manifest_encode(m, &buf);
	if (rc)
		goto out_free;
	/* The state files' directory entries first: a MANIFEST must never outlive its files. */
	stage = "fsync of the checkpoint directory";
	if (fsync(dfd)) {
		rc = -errno;
		goto out_free;
	}
	stage = "create";
	fd = openat(dfd, MANIFEST_TMP, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		goto out_free;
	}
	stage = "write";
	rc = write_all(fd, buf.data, buf.len);
	if (rc)
		goto out_unlink;
	stage = "fsync";
	if (fsync(fd)) {
		rc = -errno;
		goto out_unlink;
	}
	stage = "close";
	rc = close(fd) ? -errno : 0;
	fd = -1;
	if (rc)
		goto out_unlink;
	sl_fault_point("manifest-temp-written", m->ckpt_id);
	stage = "rename";
	if (renameat(dfd, MANIFEST_TMP, dfd, MANIFEST)) {
		rc = -errno;
		goto out_unlink;
	}
	/* Durable rename: from here on checkpoint n is complete. */
	if (fsync(dfd)) {
		/* The rename may or may not survive a crash: take n back rather than guess. */
		rc = -errno;
		stage = "fsync after rename";
		unlinkat(dfd, MANIFEST, 0);
		goto out_free;
	}
	sl_snap_free(&buf);
	close(dfd);
	sl_fault_point("manifest-renamed", m->ckpt_id);
	rc = sl_ckpt_store_retain(st);
	if (rc < 0)
		say(st, "%s: retention after checkpoint %" PRIu64 " failed: %s", st->dir,
		    m->ckpt_id, strerror(-rc));
	return 0;

out_unlink:
	if (fd >= 0)
		close(fd);
	unlinkat(dfd, MANIFEST_TMP, 0);
out_free:
	sl_snap_free(&buf);
	say(st, "%s: checkpoint %" PRIu64 " not completed: manifest %s failed: %s%s", tmp,
	    m->ckpt_id, stage, strerror(-rc),
	    rc == -ESTALE ? " (the directory is not the one this run made: another run of "
			    "this job writes to the same checkpoint directory, so this one is a "
			    "zombie)"
			  : "");
out_dir:
	if (dfd >= 0)
		keep_dir(st, m->ckpt_id, dfd); /* for abort's check: is it still ours? */
	return rc;
}

int sl_ckpt_store_retain(struct sl_ckpt_store *st)
{
	struct entry *v;
	size_t n, ncomplete = 0;
	uint64_t oldest_kept = 0, newest_complete = 0;
	int rc, removed = 0, first_err = 0;
	char path[PATH_MAX];

	rc = scan(st, &v, &n);
	if (rc)
		return rc;
	/* Walk newest first to find the window of kept complete checkpoints. */
	for (size_t i = n; i-- > 0;) {
		if (v[i].corrupt || !v[i].complete)
			continue;
		if (!ncomplete)
			newest_complete = v[i].id;
		if (++ncomplete <= st->keep)
			oldest_kept = v[i].id;
	}
	for (size_t i = 0; i < n && ncomplete; i++) {
		const struct entry *e = &v[i];
		bool drop;

		if (e->corrupt)
			drop = e->id < oldest_kept;
		else if (e->complete)
			drop = e->id < oldest_kept;
		else
			drop = e->id < newest_complete;
		if (entry_path(st, e, path, sizeof(path)))
			continue;
		if (drop) {
			rc = rm_tree(path);
			if (rc && !first_err)
				first_err = rc;
			removed += !rc;
		} else if (!e->corrupt && e->complete) {
			/* A kept, complete checkpoint never needs a temp manifest. */
			strncat(path, "/" MANIFEST_TMP, sizeof(path) - strlen(path) - 1);
			unlink(path);
		}
	}
	free(v);
	return first_err ? first_err : removed;
}

/* Reads and CRCs a file in 1 MiB pieces. 0, or -errno from open/read. */
static int crc_file(const char *path, uint64_t *size, uint32_t *crc)
{
	uint8_t *buf = malloc(1 << 20);
	int fd, rc = 0;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	*size = 0;
	*crc = 0;
	for (;;) {
		ssize_t r = read(fd, buf, 1 << 20);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (r == 0)
			break;
		*crc = sl_crc32c(*crc, buf, (size_t)r);
		*size += (uint64_t)r;
	}
	close(fd);
	free(buf);
	return rc;
}

/* Makes room for `more` bytes after out->len without doubling (files can be gigabytes). */
static int reserve(struct sl_snap_buf *out, size_t more)
{
	uint8_t *nd;

	if (out->error)
		return out->error;
	if (out->cap - out->len >= more)
		return 0;
	nd = realloc(out->data, out->len + more);
	if (!nd)
		return out->error = -ENOMEM;
	out->data = nd;
	out->cap = out->len + more;
	return 0;
}

/* Appends a whole file to `out`, read straight into the buffer. 0 or -errno. */
static int slurp(const char *path, struct sl_snap_buf *out)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb)) {
		rc = -errno;
		goto out_close;
	}
	rc = reserve(out, (size_t)sb.st_size + 1); /* +1: room to see EOF */
	while (!rc) {
		ssize_t r = read(fd, out->data + out->len, out->cap - out->len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			break;
		}
		if (r == 0)
			break;
		out->len += (size_t)r;
		if (out->len == out->cap)
			rc = reserve(out, out->cap); /* the file grew meanwhile */
	}
out_close:
	close(fd);
	return rc;
}

/* One state file's check by verify(), on a sl_par_for thread. */
struct check_res {
	int rc;
	uint64_t size;
	uint32_t crc;
};

struct file_check {
	const char *dir;
	const struct sl_ckpt_manifest *m;
	struct check_res *res;
};

static void check_one(uint32_t i, void *arg)
{
	struct file_check *fc = arg;
	char path[PATH_MAX + 64];

	if (snprintf(path, sizeof(path), "%s/%s", fc->dir, fc->m->files[i].path) >=
	    (int)sizeof(path)) {
		fc->res[i].rc = -ENAMETOOLONG;
		return;
	}
	fc->res[i].rc = crc_file(path, &fc->res[i].size, &fc->res[i].crc);
}

/*
 * Verifies checkpoint dir `e` completely. 0 with *m filled, or a reason reported and
 * -EINVAL (broken: try an older one), -ENOENT (incomplete), -ESTALE (another job's).
 */
static int verify(struct sl_ckpt_store *st, const struct entry *e, const char *job_id,
		  struct sl_ckpt_manifest *m)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], why[256];
	struct sl_snap_buf buf;
	struct stat sb;
	int rc;

	if (entry_path(st, e, dir, sizeof(dir)))
		return -EINVAL;
	if (!e->complete) {
		snprintf(path, sizeof(path), "%s/" MANIFEST_TMP, dir);
		if (stat(path, &sb) == 0)
			say(st,
			    "%s: checkpoint %" PRIu64 " incomplete: only a temp manifest, "
			    "never renamed; using an older checkpoint",
			    path, e->id);
		else
			say(st,
			    "%s/" MANIFEST ": checkpoint %" PRIu64 " incomplete: no manifest; "
			    "using an older checkpoint",
			    dir, e->id);
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/" MANIFEST, dir);
	sl_snap_init(&buf);
	rc = slurp(path, &buf);
	if (rc) {
		say(st, "%s: unreadable: %s; using an older checkpoint", path, strerror(-rc));
		sl_snap_free(&buf);
		return -EINVAL;
	}
	rc = sl_ckpt_manifest_decode(m, buf.data, buf.len, why, sizeof(why));
	sl_snap_free(&buf);
	if (rc) {
		say(st, "%s: %s; using an older checkpoint", path,
		    rc == -EINVAL ? why : strerror(-rc));
		return -EINVAL;
	}
	if (m->ckpt_id != e->id) {
		say(st,
		    "%s: names checkpoint %" PRIu64 ", not %" PRIu64 "; using an older "
		    "checkpoint",
		    path, m->ckpt_id, e->id);
		goto out_bad;
	}
	if (job_id) {
		/* each operator's state to the operator of this job with its uid (op_match.h) */
		char diff[1024];

		rc = sl_ckpt_manifest_map_ops(m, job_id, st->allow_drop, diff, sizeof diff);
		if (rc == -ENOMEM) {
			say(st, "%s: out of memory matching its operators", path);
			goto out_bad;
		}
		if (rc < 0) {
			say(st, "%s: refusing to restore it into this job: %s", path, diff);
			sl_ckpt_manifest_fini(m);
			return -ESTALE;
		}
		if (rc > 0)
			say(st,
			    "%s: --allow-non-restored-state: dropping the state of %s (not in "
			    "this job)",
			    path, diff);
	}
	/* every state file read and checked, in parallel; reported in manifest order */
	{
		struct file_check fc = { .dir = dir, .m = m };
		int bad = 0;

		fc.res = calloc((size_t)m->nfiles + 1, sizeof(*fc.res));
		if (!fc.res) {
			say(st, "%s: out of memory checking its state files", dir);
			goto out_bad;
		}
		sl_par_for(m->nfiles, 0, check_one, &fc);
		for (uint32_t i = 0; i < m->nfiles && !bad; i++) {
			const struct sl_ckpt_state_file *f = &m->files[i];
			const struct check_res *c = &fc.res[i];

			bad = 1;
			if (c->rc == -ENAMETOOLONG)
				say(st, "%s/%s: path too long", dir, f->path);
			else if (c->rc)
				say(st,
				    "%s/%s: %s (checkpoint %" PRIu64
				    ", operator %u shard %u); using "
				    "an older checkpoint",
				    dir, f->path, c->rc == -ENOENT ? "missing" : strerror(-c->rc),
				    e->id, f->op_id, f->shard);
			else if (c->size != f->size)
				say(st,
				    "%s/%s: %" PRIu64 " bytes, the manifest says %" PRIu64
				    " (truncated "
				    "or partial); using an older checkpoint",
				    dir, f->path, c->size, f->size);
			else if (c->crc != f->crc32c)
				say(st,
				    "%s/%s: CRC32C %08x, the manifest says %08x (corrupt); using "
				    "an "
				    "older checkpoint",
				    dir, f->path, c->crc, f->crc32c);
			else
				bad = 0;
		}
		free(fc.res);
		if (bad)
			goto out_bad;
	}
	return 0;

out_bad:
	sl_ckpt_manifest_fini(m);
	return -EINVAL;
}

void sl_ckpt_store_allow_non_restored(struct sl_ckpt_store *st, bool allow)
{
	st->allow_drop = allow;
}

int sl_ckpt_store_find_latest(struct sl_ckpt_store *st, const char *job_id,
			      struct sl_ckpt_manifest *out)
{
	return sl_ckpt_store_find_below(st, job_id, UINT64_MAX, out);
}

int sl_ckpt_store_find_below(struct sl_ckpt_store *st, const char *job_id, uint64_t below,
			     struct sl_ckpt_manifest *out)
{
	struct entry *v;
	size_t n, damaged = 0;
	int rc;

	rc = scan(st, &v, &n);
	if (rc)
		return rc;
	rc = -ENOENT;
	for (size_t i = n; i-- > 0;) {
		if (v[i].corrupt || v[i].id >= below)
			continue;
		rc = verify(st, &v[i], job_id, out);
		if (rc == 0 || rc == -ESTALE)
			break;
		/* a checkpoint that completed and does not verify: its sinks may have
		 * committed, so "nothing to restore" is not the same as a first start */
		damaged += rc == -EINVAL;
		rc = -ENOENT;
	}
	free(v);
	if (rc == -ESTALE)
		return -EINVAL;
	if (rc == -ENOENT && damaged) {
		say(st, "%s: no usable checkpoint: %zu complete one%s damaged", st->dir, damaged,
		    damaged == 1 ? " is" : "s are");
		return -EBADMSG;
	}
	if (rc == -ENOENT)
		say(st, "%s: no complete checkpoint", st->dir);
	return rc;
}

int sl_ckpt_store_list_complete(struct sl_ckpt_store *st, uint64_t below, char *buf, size_t cap)
{
	struct entry *v;
	size_t n, len = 0;
	int rc, count = 0;

	if (cap)
		buf[0] = 0;
	rc = scan(st, &v, &n);
	if (rc)
		return rc;
	for (size_t i = n; i-- > 0;) {
		int w;

		if (v[i].corrupt || !v[i].complete || v[i].id >= below)
			continue;
		w = snprintf(buf + len, len < cap ? cap - len : 0, "%schk-%" PRIu64,
			     count ? ", " : "", v[i].id);
		if (w > 0 && len + (size_t)w < cap)
			len += (size_t)w;
		count++;
	}
	free(v);
	return count;
}

int sl_ckpt_store_discard_after(struct sl_ckpt_store *st, uint64_t n)
{
	struct entry *v;
	size_t cnt;
	int rc, done = 0, first_err = 0;

	rc = scan(st, &v, &cnt);
	if (rc)
		return rc;
	for (size_t i = 0; i < cnt; i++) {
		char from[PATH_MAX], to[PATH_MAX];
		struct entry bad = v[i];

		if (v[i].corrupt || v[i].id <= n || entry_path(st, &v[i], from, sizeof(from)))
			continue;
		if (!v[i].complete) {
			rc = rm_tree(from);
		} else {
			bad.corrupt = true;
			rc = entry_path(st, &bad, to, sizeof(to));
			if (!rc) {
				rm_tree(to); /* an older quarantine of the same id */
				rc = rename(from, to) ? -errno : 0;
			}
		}
		if (rc && !first_err)
			first_err = rc;
		done += !rc;
	}
	free(v);
	if (!first_err && done)
		first_err = fsync_path(st->dir);
	return first_err ? first_err : done;
}

int sl_ckpt_store_load(struct sl_ckpt_store *st, const struct sl_ckpt_manifest *m, uint32_t i,
		       struct sl_snap_buf *out)
{
	const struct sl_ckpt_state_file *f;
	char dir[PATH_MAX], path[PATH_MAX];
	size_t start = out->len;
	uint32_t crc;
	int rc;

	if (i >= m->nfiles)
		return -EINVAL;
	f = &m->files[i];
	if (sl_ckpt_store_path(st, m->ckpt_id, NULL, dir, sizeof(dir)) ||
	    snprintf(path, sizeof(path), "%s/%s", dir, f->path) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	rc = slurp(path, out);
	if (rc) {
		say(st, "%s: %s", path, strerror(-rc));
		out->len = start;
		return rc;
	}
	if (out->len - start != f->size) {
		say(st, "%s: %zu bytes, the manifest says %" PRIu64, path, out->len - start,
		    f->size);
		out->len = start;
		return -EINVAL;
	}
	crc = sl_crc32c(0, out->data + start, f->size);
	if (crc != f->crc32c) {
		say(st, "%s: CRC32C %08x, the manifest says %08x (corrupt)", path, crc, f->crc32c);
		out->len = start;
		return -EINVAL;
	}
	return 0;
}

/* ---- mapping every state file of a checkpoint (recovery) -------------------------------- */

struct map_job {
	struct sl_ckpt_store *st;
	const struct sl_ckpt_manifest *m;
	char dir[PATH_MAX];
	struct sl_ckpt_mapped *out;
	int *rc;
	uint32_t *crc;
	uint64_t *size;
};

static void map_one(uint32_t i, void *arg)
{
	struct map_job *j = arg;
	const struct sl_ckpt_state_file *f = &j->m->files[i];
	struct sl_ckpt_mapped *o = &j->out[i];
	char path[PATH_MAX + 64];
	struct stat sb;
	void *p;
	int fd;

	if (sl_ckpt_path_is_native(f->path)) {
		j->size[i] = f->size; /* verified already; its backend opens it in place */
		return;
	}
	if (snprintf(path, sizeof(path), "%s/%s", j->dir, f->path) >= (int)sizeof(path)) {
		j->rc[i] = -ENAMETOOLONG;
		return;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb)) {
		j->rc[i] = -errno;
		if (fd >= 0)
			close(fd);
		return;
	}
	j->size[i] = (uint64_t)sb.st_size;
	if (j->size[i] != f->size || !sb.st_size) {
		close(fd);
		return; /* a wrong size is reported by the caller; an empty file maps to nothing */
	}
	/* the file's page-cache pages themselves: no copy, and no fresh memory to fault in */
	p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		j->rc[i] = -errno;
		return;
	}
	o->data = p;
	o->len = (size_t)sb.st_size;
	j->crc[i] = sl_crc32c(0, o->data, o->len);
}

int sl_ckpt_store_map_all(struct sl_ckpt_store *st, const struct sl_ckpt_manifest *m,
			  struct sl_ckpt_mapped *out)
{
	struct map_job j = { .st = st, .m = m, .out = out };
	int rc = 0;

	memset(out, 0, (size_t)m->nfiles * sizeof(*out));
	if (sl_ckpt_store_path(st, m->ckpt_id, NULL, j.dir, sizeof(j.dir)))
		return -ENAMETOOLONG;
	j.rc = calloc((size_t)m->nfiles + 1, sizeof(*j.rc));
	j.crc = calloc((size_t)m->nfiles + 1, sizeof(*j.crc));
	j.size = calloc((size_t)m->nfiles + 1, sizeof(*j.size));
	if (!j.rc || !j.crc || !j.size) {
		rc = -ENOMEM;
		goto out;
	}
	sl_par_for(m->nfiles, 0, map_one, &j);
	for (uint32_t i = 0; i < m->nfiles && !rc; i++) {
		const struct sl_ckpt_state_file *f = &m->files[i];

		rc = j.rc[i];
		if (rc) {
			say(st, "%s/%s: %s", j.dir, f->path, strerror(-rc));
		} else if (j.size[i] != f->size) {
			say(st, "%s/%s: %" PRIu64 " bytes, the manifest says %" PRIu64, j.dir,
			    f->path, j.size[i], f->size);
			rc = -EINVAL;
		} else if (out[i].len && j.crc[i] != f->crc32c) {
			say(st, "%s/%s: CRC32C %08x, the manifest says %08x (corrupt)", j.dir,
			    f->path, j.crc[i], f->crc32c);
			rc = -EINVAL;
		} else if (!out[i].len && !sl_ckpt_path_is_native(f->path) &&
			   f->crc32c != sl_crc32c(0, "", 0)) {
			say(st, "%s/%s: empty, the manifest says CRC32C %08x (corrupt)", j.dir,
			    f->path, f->crc32c);
			rc = -EINVAL;
		}
	}
out:
	free(j.rc);
	free(j.crc);
	free(j.size);
	if (rc)
		sl_ckpt_store_unmap_all(out, m->nfiles);
	return rc;
}

void sl_ckpt_store_unmap_all(struct sl_ckpt_mapped *maps, uint32_t n)
{
	for (uint32_t i = 0; maps && i < n; i++) {
		if (maps[i].len)
			munmap((void *)maps[i].data, maps[i].len);
		maps[i].data = NULL;
		maps[i].len = 0;
	}
}
