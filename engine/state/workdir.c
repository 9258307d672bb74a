/*
 * workdir.c - the RocksDB backend's temporary working directories ($TMPDIR/sluice-state-*)
 * and the sweep that removes those of runs that died.
 *
 * A run that ends removes its directory itself; one killed with SIGKILL cannot, and its DBs
 * (hundreds of MB) would stay forever. So each directory carries an owner lock: `.owner`, a
 * file its run keeps flock()ed for as long as it lives, which the kernel releases when the
 * process dies however it dies. The next run to make a directory first walks the others
 * and removes every one whose `.owner` it can lock: nobody holds it, so its run is gone.
 *
 * Invariant: `.owner` appears (by rename) only already locked, so a sweeper that can lock
 * it knows its run is dead, never that it has not locked it yet. A directory without
 * `.owner` (another tool's, an older sluice's, or a run killed while making it) is left
 * alone, and so is one that is not a directory of ours (lstat: no symlinks followed).
 * Removal happens while the sweeper holds the lock, so two sweepers never both remove one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"

#define PREFIX "sluice-state-"
#define OWNER  ".owner"

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

/* Removes dir/name if it is a directory of ours whose owner lock is free. */
static bool sweep_one(int dfd, const char *base, const char *name)
{
	char path[4096];
	struct stat st;
	int fd, ofd;
	bool removed = false;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid())
		return false;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	ofd = openat(fd, OWNER, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(fd);
	if (ofd < 0)
		return false; /* no owner lock: not a run's, or not finished making */
	if (flock(ofd, LOCK_EX | LOCK_NB) == 0 &&
	    (size_t)snprintf(path, sizeof path, "%s/%s", base, name) < sizeof path)
		removed = nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) == 0;
	close(ofd); /* the lock goes with it */
	return removed;
}

int sl_state_workdir_sweep(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, PREFIX, strlen(PREFIX)) &&
		    sweep_one(dirfd(d), base, de->d_name))
			n++;
	closedir(d);
	return n;
}

int sl_state_workdir_create(const char *base, char *path, size_t cap, int *lock_fd)
{
	char tmp[4096];
	int fd, dfd, rc;

	if ((size_t)snprintf(path, cap, "%s/" PREFIX "XXXXXX", base) >= cap)
		return -ENAMETOOLONG;
	sl_state_workdir_sweep(base);
	if (!mkdtemp(path))
		return -errno;
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		goto fail;
	/* made and locked under another name, then renamed: `.owner` is never seen unlocked */
	snprintf(tmp, sizeof tmp, OWNER ".new");
	fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail_dir;
	if (flock(fd, LOCK_EX) < 0 || renameat(dfd, tmp, dfd, OWNER) < 0) {
		rc = -errno;
		close(fd);
		unlinkat(dfd, tmp, 0);
		close(dfd);
		rmdir(path);
		return rc;
	}
	close(dfd);
	*lock_fd = fd;
	return 0;

fail_dir:
	rc = -errno;
	close(dfd);
	rmdir(path);
	return rc;
fail:
	rc = -errno;
	rmdir(path);
	return rc;
}

void sl_state_workdir_release(const char *path, int lock_fd)
{
	char owner[4096];

	if ((size_t)snprintf(owner, sizeof owner, "%s/" OWNER, path) < sizeof owner)
		unlink(owner);
	close(lock_fd);
}
