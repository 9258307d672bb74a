/*
 * control.c - the control socket of a running job (see control.h for the protocol).
 *
 * One thread accepts connections one at a time and answers each with one line; commands
 * are rare and a savepoint already serializes with the checkpoints, so there is nothing to
 * gain from serving two at once. A pipe wakes the thread when the job ends.
 */
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

#include "control.h"

#define LINE_MAX_BYTES 4200

struct sl_control {
	struct sl_job *job;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char default_dir[4096];
	int lfd;
	int wake[2];
	pthread_t thread;
};

int sl_control_default_path(pid_t pid, char *buf, size_t cap)
{
	const char *dir = getenv("SLUICE_RUN_DIR");

	if (!dir || !*dir)
		dir = getenv("XDG_RUNTIME_DIR");
	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(buf, cap, "%s/sluice-%ld.sock", dir, (long)pid) >= cap ||
	    strlen(buf) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -ENAMETOOLONG;
	return 0;
}

/* Reads one line (without its newline) within 5 s. 0 or -errno. */
static int read_line(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 5000) <= 0)
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

	if (n > 0 && write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0)
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
			reply(fd, "error no savepoint directory given and no "
				  "'state.savepoints.dir' set%s%s\n", "", "");
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

static void *control_main(void *arg)
{
	struct sl_control *ctl = arg;

	for (;;) {
		struct pollfd p[2] = { { .fd = ctl->lfd, .events = POLLIN },
				       { .fd = ctl->wake[0], .events = POLLIN } };
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
		serve(ctl, fd);
		close(fd);
	}
	return NULL;
}

struct sl_control *sl_control_start(const char *path, struct sl_job *job,
				    const char *default_dir, char *err, size_t errcap)
{
	struct sl_control *ctl = calloc(1, sizeof(*ctl));
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int rc;

	if (!ctl) {
		snprintf(err, errcap, "out of memory");
		return NULL;
	}
	ctl->job = job;
	ctl->lfd = ctl->wake[0] = ctl->wake[1] = -1;
	if (strlen(path) >= sizeof a.sun_path) {
		snprintf(err, errcap, "control socket path '%s' is too long", path);
		free(ctl);
		return NULL;
	}
	snprintf(ctl->path, sizeof ctl->path, "%s", path);
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	if (default_dir)
		snprintf(ctl->default_dir, sizeof ctl->default_dir, "%s", default_dir);
	ctl->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ctl->lfd < 0 || pipe2(ctl->wake, O_CLOEXEC) < 0)
		goto fail;
	/* a socket left behind by a process that died is stale: ours replaces it */
	unlink(path);
	if (bind(ctl->lfd, (struct sockaddr *)&a, sizeof a) < 0)
		goto fail;
	chmod(path, 0600);
	if (listen(ctl->lfd, 4) < 0)
		goto fail;
	rc = pthread_create(&ctl->thread, NULL, control_main, ctl);
	if (rc) {
		errno = rc;
		goto fail;
	}
	return ctl;
fail:
	snprintf(err, errcap, "control socket '%s': %s", path, strerror(errno));
	if (ctl->lfd >= 0)
		close(ctl->lfd);
	if (ctl->wake[0] >= 0) {
		close(ctl->wake[0]);
		close(ctl->wake[1]);
	}
	unlink(path);
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
	close(ctl->lfd);
	close(ctl->wake[0]);
	close(ctl->wake[1]);
	unlink(ctl->path);
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
	if (write(fd, line, len) != (ssize_t)len || write(fd, "\n", 1) != 1) {
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
