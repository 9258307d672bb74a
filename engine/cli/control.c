/*
 * control.c - the control socket of a running job (see control.h for the protocol).
 *
 * One thread accepts; each connection is served on a thread of its own (at most MAX_CONN at
 * once, more are told "busy"), so a client that connects and says nothing costs its slot
 * and nothing else: a savepoint asked meanwhile is answered at once. A pipe wakes the
 * acceptor when the job ends; connections still open are shut down and joined.
 *
 * What is on disk belongs to others unless proven ours: a path is taken over only when it
 * holds a socket of ours that no process listens on (connect: ECONNREFUSED), and at exit
 * only the socket this server bound (same inode) is removed. The default directory is a
 * private one made for it (0700): $XDG_RUNTIME_DIR/sluice or /tmp/sluice-<uid>; a
 * directory there that is not ours is refused, never used.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <sluice/job.h>

#include "cli_status.h"
#include "control.h"

#define LINE_MAX_BYTES	4200
#define MAX_CONN	16 /* connections served at once */
#define STR_(x)		#x
#define STR(x)		STR_(x)
#define READ_TIMEOUT_MS 10000 /* for the command line of a connection */
#define SUN_PATH_MAX	sizeof(((struct sockaddr_un *)0)->sun_path)

enum conn_state { CONN_FREE = 0, CONN_BUSY, CONN_DONE };

struct conn {
	struct sl_control *ctl;
	int fd;
	enum conn_state state; /* under ctl->lock; DONE: the thread ended, join it */
	pthread_t thread;
};

struct sl_control {
	struct sl_job *job;
	char path[SUN_PATH_MAX];
	char default_dir[4096];
	int lfd;
	int wake[2];
	pthread_t thread;
	dev_t dev; /* the socket bound here: only it is removed at the end */
	ino_t ino;
	bool bound;
	pthread_mutex_t lock; /* conn[].state and .fd */
	struct conn conn[MAX_CONN];
};

/* The directory of default sockets, not made: $SLUICE_RUN_DIR as given, else
 * $XDG_RUNTIME_DIR/sluice, else /tmp/sluice-<uid>. */
static int default_dir(char *buf, size_t cap)
{
	const char *dir = getenv("SLUICE_RUN_DIR");
	size_t n;

	if (dir && *dir)
		n = (size_t)snprintf(buf, cap, "%s", dir);
	else if ((dir = getenv("XDG_RUNTIME_DIR")) && *dir)
		n = (size_t)snprintf(buf, cap, "%s/sluice", dir);
	else
		n = (size_t)snprintf(buf, cap, "/tmp/sluice-%ld", (long)geteuid());
	return n >= cap ? -ENAMETOOLONG : 0;
}

int sl_control_default_path(pid_t pid, char *buf, size_t cap)
{
	char dir[4096];

	if (default_dir(dir, sizeof dir) < 0 ||
	    (size_t)snprintf(buf, cap, "%s/sluice-%ld.sock", dir, (long)pid) >= cap ||
	    strlen(buf) >= SUN_PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/* Whether a process listens on the socket at path: 1 yes, 0 no (ECONNREFUSED: stale), or
 * -errno when that cannot be told. The connect does not block: a listener that does not
 * accept (stopped with SIGSTOP, or busy) fills its backlog with every other run's sweep,
 * and a blocking connect would then hang each new `sluice run` at its start for as long;
 * a full backlog (EAGAIN) is a listener too. */
static int listening(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), rc;

	if (fd < 0)
		return -errno;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	rc = connect(fd, (struct sockaddr *)&a, sizeof a) == 0 ? 1
	     : errno == EAGAIN || errno == EINPROGRESS	       ? 1
	     : errno == ECONNREFUSED			       ? 0
							       : -errno;
	close(fd);
	return rc;
}

/* Removes the socket at path if it is ours and nobody listens on it. 0 when the path is
 * free now, or -errno with the reason in err (and the path left as it is). */
static int claim(const char *path, char *err, size_t errcap)
{
	struct stat st;
	int rc;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		rc = -errno;
		snprintf(err, errcap, "control socket '%s': %s", path, strerror(-rc));
		return rc;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errcap,
			 "control socket '%s': something that is not a socket is "
			 "there; left alone",
			 path);
		return -EEXIST;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errcap,
			 "control socket '%s': a socket of uid %ld is there; left "
			 "alone",
			 path, (long)st.st_uid);
		return -EEXIST;
	}
	rc = listening(path);
	if (rc == 1) {
		snprintf(err, errcap,
			 "control socket '%s': a running process listens there; "
			 "left alone",
			 path);
		return -EADDRINUSE;
	}
	if (rc == 0 && unlink(path) < 0 && errno != ENOENT)
		rc = -errno;
	if (rc < 0)
		snprintf(err, errcap, "control socket '%s': %s", path, strerror(-rc));
	return rc; /* 0: a stale socket of a process that died, removed */
}

/* Removes the sockets of dead processes (ours, named sluice-<pid>.sock) from dir. */
static void sweep(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4096], why[256];

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		size_t len = strlen(n), digits;

		if (strncmp(n, "sluice-", 7))
			continue;
		digits = strspn(n + 7, "0123456789"); /* n is at least "sluice-" long here */
		if (!digits || len != 7 + digits + 5 || strcmp(n + 7 + digits, ".sock"))
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, n) >= SUN_PATH_MAX)
			continue;
		claim(path, why, sizeof why); /* a live or foreign one stays */
	}
	closedir(d);
}

/* Makes (or checks) the private directory dir: ours, a directory (not a link), mode 0700. */
static int private_dir(const char *dir, char *err, size_t errcap)
{
	struct stat st;
	int rc;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		goto fail;
	if (lstat(dir, &st) < 0)
		goto fail;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(err, errcap,
			 "control socket directory '%s' is %s; not used (give "
			 "--control PATH or $SLUICE_RUN_DIR)",
			 dir, S_ISDIR(st.st_mode) ? "another user's" : "not a directory");
		return -EPERM;
	}
	if ((st.st_mode & 077) && chmod(dir, 0700) < 0)
		goto fail;
	return 0;
fail:
	rc = -errno;
	snprintf(err, errcap, "control socket directory '%s': %s", dir, strerror(-rc));
	return rc;
}

int sl_control_prepare_default(pid_t pid, char *buf, size_t cap, char *err, size_t errcap)
{
	char dir[4096];
	int rc;

	if (default_dir(dir, sizeof dir) < 0 || sl_control_default_path(pid, buf, cap) < 0) {
		snprintf(err, errcap, "control socket path too long (set $SLUICE_RUN_DIR)");
		return -ENAMETOOLONG;
	}
	/* $SLUICE_RUN_DIR is the user's own choice: used as it is */
	if (!getenv("SLUICE_RUN_DIR") || !*getenv("SLUICE_RUN_DIR")) {
		rc = private_dir(dir, err, errcap);
		if (rc < 0)
			return rc;
	}
	sweep(dir);
	return 0;
}

/* Reads one line (without its newline) within READ_TIMEOUT_MS. 0 or -errno. */
static int read_line(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, READ_TIMEOUT_MS) <= 0)
			return -ETIMEDOUT;
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -ECONNRESET;
		n += (size_t)r;
		buf[n] = 0;
		char *nl = memchr(buf, '\n', n);

		if (nl) {
			*nl = 0;
			return 0;
		}
	}
	return -E2BIG;
}

static void reply(int fd, const char *fmt, const char *a, const char *b)
{
	char line[LINE_MAX_BYTES + 64];
	int n = snprintf(line, sizeof line, fmt, a, b);

	/* MSG_NOSIGNAL: a client that went away is no reason for SIGPIPE to end the job */
	if (n > 0 &&
	    send(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1, MSG_NOSIGNAL) < 0)
		return; /* the client went away: nothing to tell */
}

static void serve(struct sl_control *ctl, int fd)
{
	char line[LINE_MAX_BYTES], path[4096], err[512];
	const char *dir;
	bool stop;
	int rc;

	rc = read_line(fd, line, sizeof line);
	if (rc) {
		reply(fd, "error reading the command: %s%s\n", strerror(-rc), "");
		return;
	}
	if (!strncmp(line, "status ", 7)) {
		sl_cli_status_serve(ctl->job, fd, line + 7); /* status.c: a whole document */
		return;
	}
	if (!strncmp(line, "savepoint ", 10)) {
		stop = false;
		dir = line + 10;
	} else if (!strncmp(line, "stop ", 5)) {
		stop = true;
		dir = line + 5;
	} else {
		reply(fd, "error unknown command '%s' (savepoint DIR, stop DIR|none)%s\n", line,
		      "");
		return;
	}
	if (stop && !strcmp(dir, "none")) {
		sl_job_stop(ctl->job);
		reply(fd, "ok stopping%s%s\n", "", "");
		return;
	}
	if (!strcmp(dir, "-")) {
		if (!ctl->default_dir[0]) {
			reply(fd,
			      "error no savepoint directory given and no "
			      "'state.savepoints.dir' set%s%s\n",
			      "", "");
			return;
		}
		dir = ctl->default_dir;
	}
	rc = sl_job_savepoint(ctl->job, dir, stop, path, sizeof path, err, sizeof err);
	if (rc)
		reply(fd, "error savepoint failed: %s%s\n", err[0] ? err : strerror(-rc), "");
	else
		reply(fd, "ok %s%s\n", path, "");
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct sl_control *ctl = c->ctl;

	serve(ctl, c->fd);
	pthread_mutex_lock(&ctl->lock);
	close(c->fd);
	c->fd = -1;
	c->state = CONN_DONE;
	pthread_mutex_unlock(&ctl->lock);
	return NULL;
}

/* A free slot for a new connection (joining threads that ended), or NULL: all busy. */
static struct conn *free_slot(struct sl_control *ctl)
{
	struct conn *got = NULL;

	for (int i = 0; i < MAX_CONN; i++) {
		struct conn *c = &ctl->conn[i];
		enum conn_state st;

		pthread_mutex_lock(&ctl->lock);
		st = c->state;
		pthread_mutex_unlock(&ctl->lock);
		if (st == CONN_DONE) {
			pthread_join(c->thread, NULL);
			c->state = CONN_FREE;
			st = CONN_FREE;
		}
		if (st == CONN_FREE && !got)
			got = c;
	}
	return got;
}

static void *control_main(void *arg)
{
	struct sl_control *ctl = arg;

	for (;;) {
		struct pollfd p[2] = { { .fd = ctl->lfd, .events = POLLIN },
				       { .fd = ctl->wake[0], .events = POLLIN } };
		struct conn *c;
		int fd;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		fd = accept4(ctl->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		c = free_slot(ctl);
		if (!c) {
			reply(fd, "error busy: %s connections are being served%s\n", STR(MAX_CONN),
			      "");
			close(fd);
			continue;
		}
		c->ctl = ctl;
		c->fd = fd;
		c->state = CONN_BUSY;
		if (pthread_create(&c->thread, NULL, conn_main, c)) {
			reply(fd, "error cannot serve: %s%s\n", strerror(errno), "");
			close(fd);
			c->fd = -1;
			c->state = CONN_FREE;
		}
	}
	return NULL;
}

/* Removes the socket at ctl->path only if it is still the one bound here. */
static void remove_ours(struct sl_control *ctl)
{
	struct stat st;

	if (ctl->bound && lstat(ctl->path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_dev == ctl->dev && st.st_ino == ctl->ino)
		unlink(ctl->path);
}

struct sl_control *sl_control_start(const char *path, struct sl_job *job, const char *default_dir,
				    char *err, size_t errcap)
{
	struct sl_control *ctl = calloc(1, sizeof(*ctl));
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	int rc;

	if (!ctl) {
		snprintf(err, errcap, "out of memory");
		return NULL;
	}
	ctl->job = job;
	ctl->lfd = ctl->wake[0] = ctl->wake[1] = -1;
	pthread_mutex_init(&ctl->lock, NULL);
	if (strlen(path) >= sizeof a.sun_path) {
		snprintf(err, errcap, "control socket path '%s' is too long", path);
		goto out_free;
	}
	snprintf(ctl->path, sizeof ctl->path, "%s", path);
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	if (default_dir)
		snprintf(ctl->default_dir, sizeof ctl->default_dir, "%s", default_dir);
	ctl->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ctl->lfd < 0 || pipe2(ctl->wake, O_CLOEXEC) < 0)
		goto fail;
	/* a socket left behind by a process that died is stale: ours replaces it; anything
	 * else at the path stays where it is */
	if (claim(path, err, errcap) < 0)
		goto out_close;
	if (bind(ctl->lfd, (struct sockaddr *)&a, sizeof a) < 0)
		goto fail;
	if (lstat(path, &st) == 0) {
		ctl->dev = st.st_dev;
		ctl->ino = st.st_ino;
		ctl->bound = true;
	}
	chmod(path, 0600);
	if (listen(ctl->lfd, MAX_CONN) < 0)
		goto fail;
	rc = pthread_create(&ctl->thread, NULL, control_main, ctl);
	if (rc) {
		errno = rc;
		goto fail;
	}
	return ctl;
fail:
	snprintf(err, errcap, "control socket '%s': %s", path, strerror(errno));
out_close:
	remove_ours(ctl);
	if (ctl->lfd >= 0)
		close(ctl->lfd);
	if (ctl->wake[0] >= 0) {
		close(ctl->wake[0]);
		close(ctl->wake[1]);
	}
out_free:
	pthread_mutex_destroy(&ctl->lock);
	free(ctl);
	return NULL;
}

void sl_control_stop(struct sl_control *ctl)
{
	if (!ctl)
		return;
	if (write(ctl->wake[1], "x", 1) < 0)
		fprintf(stderr, "sluice: waking the control thread: %s\n", strerror(errno));
	pthread_join(ctl->thread, NULL);
	/* connections still reading their command end now; one waiting for a savepoint gets
	 * its answer as the job has ended (sl_job_savepoint returns) */
	bool started[MAX_CONN];

	pthread_mutex_lock(&ctl->lock);
	for (int i = 0; i < MAX_CONN; i++) {
		started[i] = ctl->conn[i].state != CONN_FREE;
		if (ctl->conn[i].state == CONN_BUSY)
			shutdown(ctl->conn[i].fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&ctl->lock);
	for (int i = 0; i < MAX_CONN; i++)
		if (started[i])
			pthread_join(ctl->conn[i].thread, NULL);
	close(ctl->lfd);
	close(ctl->wake[0]);
	close(ctl->wake[1]);
	remove_ours(ctl);
	pthread_mutex_destroy(&ctl->lock);
	free(ctl);
}

int sl_control_request(const char *target, const char *line, char *out, size_t cap)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char path[4096], *end;
	long pid = strtol(target, &end, 10);
	size_t n = 0, len = strlen(line);
	int fd, rc;

	if (*target && !*end && pid > 0) {
		if (sl_control_default_path((pid_t)pid, path, sizeof path)) {
			snprintf(out, cap, "socket path too long");
			return -ENAMETOOLONG;
		}
	} else {
		snprintf(path, sizeof path, "%s", target);
	}
	if (strlen(path) >= sizeof a.sun_path) {
		snprintf(out, cap, "'%s': socket path too long", path);
		return -ENAMETOOLONG;
	}
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		rc = -errno;
		snprintf(out, cap, "no running job at %s: %s", path, strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (send(fd, line, len, MSG_NOSIGNAL) != (ssize_t)len ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) != 1) {
		rc = -errno;
		snprintf(out, cap, "sending to %s: %s", path, strerror(-rc));
		close(fd);
		return rc;
	}
	/* the reply comes when the savepoint is done, however long that takes */
	while (n + 1 < cap) {
		ssize_t r = read(fd, out + n, cap - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (memchr(out, '\n', n))
			break;
	}
	out[n] = 0;
	close(fd);
	if (n && out[n - 1] == '\n')
		out[--n] = 0;
	if (!strncmp(out, "ok", 2))
		return 0;
	if (!strncmp(out, "error ", 6)) {
		memmove(out, out + 6, n - 5);
		return 1;
	}
	snprintf(out, cap, "%s: no reply (the job ended?)", path);
	return -EPROTO;
}
