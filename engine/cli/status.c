/*
 * status.c - `sluice status PID|SOCKET` and `sluice jobs`: a running job seen from another
 * process, through its control socket (control.c), and the socket's side of it.
 *
 *   status text|why|json|brief   ->  the rendering (engine/obs/status.h), then EOF
 *   status watermark TABLE       ->  EXPLAIN WATERMARK FOR TABLE of the running job
 *
 * The answer is as long as the job is large, so unlike the one-line commands it is the
 * whole stream up to the server's close. `sluice jobs` finds the jobs of this user on this
 * machine as the sockets in the default directory (control.h) that someone listens on, and
 * asks each for its brief line; a socket nobody listens on is a job that died and is
 * skipped (its next run sweeps it).
 *
 * Rates (records/s, busy ms per second) are taken between two samples: the socket keeps
 * one previous sample for all its clients (`--watch` refreshes once a second, so it sees
 * the last second), and a first request is against the whole run.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli_status.h"
#include "control.h"
#include "planner.h"
#include "status.h"

/* The socket's previous sample (process-wide: the CLI holds the one job it runs). */
static pthread_mutex_t prev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sl_obs_prev *prev;

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		/* MSG_NOSIGNAL: a client that went away is no reason to end the job */
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

void sl_cli_status_serve(struct sl_job *job, int fd, const char *arg)
{
	static const struct {
		const char *name;
		enum sl_obs_view v;
	} views[] = {
		{ "text", SL_OBS_VIEW_TEXT },
		{ "why", SL_OBS_VIEW_WHY },
		{ "json", SL_OBS_VIEW_JSON },
		{ "brief", SL_OBS_VIEW_BRIEF },
	};
	size_t len = 0;
	char *body = NULL;
	int k;

	if (!strncmp(arg, "watermark ", 10)) {
		/* EXPLAIN WATERMARK FOR, asked of the running job */
		const char *table = arg + 10;
		int found = 0;

		body = sl_obs_explain_watermark_text(job, &table, 1, &found, &len);
		if (!body) {
			send_all(fd, "error out of memory\n", 20);
		} else if (!found) {
			char msg[256];
			int n = snprintf(msg, sizeof msg,
					 "error the job reads no table named '%.64s'\n", table);

			send_all(fd, msg, (size_t)n);
		} else {
			send_all(fd, body, len);
		}
		free(body);
		return;
	}
	for (k = 0; k < (int)(sizeof views / sizeof views[0]); k++)
		if (!strcmp(arg, views[k].name))
			break;
	if (k == (int)(sizeof views / sizeof views[0])) {
		char msg[256];
		int n = snprintf(msg, sizeof msg,
				 "error unknown status view '%.64s' (text, why, json, brief)\n",
				 arg);

		send_all(fd, msg, (size_t)n);
		return;
	}
	pthread_mutex_lock(&prev_lock);
	if (!prev)
		prev = sl_obs_prev_create();
	body = sl_obs_status_render(job, views[k].v, prev, &len);
	pthread_mutex_unlock(&prev_lock);
	if (!body) {
		send_all(fd, "error out of memory\n", 20);
		return;
	}
	send_all(fd, body, len);
	free(body);
}

/* Connects to the control socket of target (a pid or a path). fd, or -errno with why. */
static int dial(const char *target, char *why, size_t cap)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char path[4096], *end;
	long pid = strtol(target, &end, 10);
	int fd, rc;

	if (*target && !*end && pid > 0) {
		if (sl_control_default_path((pid_t)pid, path, sizeof path)) {
			snprintf(why, cap, "socket path too long");
			return -ENAMETOOLONG;
		}
	} else {
		snprintf(path, sizeof path, "%s", target);
	}
	if (strlen(path) >= sizeof a.sun_path) {
		snprintf(why, cap, "'%.300s': socket path too long", path);
		return -ENAMETOOLONG;
	}
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		rc = -errno;
		snprintf(why, cap, "no running job at %.300s: %s", path, strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return fd;
}

/* Asks target for `status VIEW`; the whole answer into a malloc'd string, or NULL with
 * the reason in why. */
static char *ask(const char *target, const char *view, char *why, size_t cap)
{
	char line[64];
	size_t n = 0, room = 65536;
	char *buf;
	int fd = dial(target, why, cap), len;

	if (fd < 0)
		return NULL;
	len = snprintf(line, sizeof line, "status %s\n", view);
	if (send(fd, line, (size_t)len, MSG_NOSIGNAL) != len) {
		snprintf(why, cap, "sending to the job: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	buf = malloc(room);
	while (buf) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (n + 1 == room) {
			char *g = realloc(buf, room * 2);

			if (!g) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = g;
			room *= 2;
		}
		/* the job answers within a second or two (its shards describe themselves) */
		if (poll(&p, 1, 10000) <= 0) {
			snprintf(why, cap, "the job did not answer within 10 s");
			free(buf);
			close(fd);
			return NULL;
		}
		r = read(fd, buf + n, room - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!buf) {
		snprintf(why, cap, "out of memory");
		return NULL;
	}
	buf[n] = 0;
	if (!strncmp(buf, "error ", 6)) {
		snprintf(why, cap, "%.*s", (int)strcspn(buf + 6, "\n"), buf + 6);
		free(buf);
		return NULL;
	}
	if (!n) {
		snprintf(why, cap, "the job closed the connection without an answer (it ended?)");
		free(buf);
		return NULL;
	}
	return buf;
}

static void status_usage(FILE *f)
{
	fprintf(f, "usage: sluice status [--why] [--json] [--watch[=SECONDS]] PID|SOCKET\n"
		   "       sluice status --watermark TABLE PID|SOCKET   (EXPLAIN WATERMARK FOR)\n"
		   "       sluice jobs\n");
}

int sl_cli_status_cmd(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "why", no_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ "watch", optional_argument, NULL, 'W' },
		{ "watermark", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *view = "text", *table = NULL;
	char wm_view[256];
	double every = 0;
	bool why = false, json = false;
	char err[512];
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			why = true;
			break;
		case 'j':
			json = true;
			break;
		case 'W':
			every = optarg ? strtod(optarg, NULL) : 1.0;
			if (every <= 0) {
				fprintf(stderr, "sluice: --watch '%s': expected seconds > 0\n",
					optarg);
				return 2;
			}
			break;
		case 'T':
			table = optarg;
			break;
		case 'h':
			status_usage(stdout);
			return 0;
		default:
			status_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "sluice: status takes one job (its pid or control socket)\n");
		return 2;
	}
	view = json ? "json" : why ? "why" : "text";
	if (table) {
		snprintf(wm_view, sizeof wm_view, "watermark %.200s", table);
		view = wm_view;
	}
	for (;;) {
		char *body = ask(argv[optind], view, err, sizeof err);

		if (!body) {
			fprintf(stderr, "sluice: %s\n", err);
			return 1;
		}
		if (every > 0 && isatty(STDOUT_FILENO))
			fputs("\033[H\033[2J", stdout); /* a terminal: redraw in place */
		fputs(body, stdout);
		fflush(stdout);
		free(body);
		if (every <= 0)
			return 0;
		struct timespec ts = { (time_t)every,
				       (long)((every - (double)(time_t)every) * 1e9) };

		nanosleep(&ts, NULL);
		if (!isatty(STDOUT_FILENO))
			fputs("\n", stdout);
	}
}

int sl_cli_jobs_cmd(int argc, char **argv)
{
	char dir[4096], path[4096 + 300], err[512];
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (argc > 1) {
		status_usage(stderr);
		return 2;
	}
	/* the default socket of pid 1 names the directory all default sockets are in */
	if (sl_control_default_path(1, dir, sizeof dir)) {
		fprintf(stderr, "sluice: control socket directory path too long\n");
		return 1;
	}
	*strrchr(dir, '/') = 0;
	d = opendir(dir);
	if (d) {
		while ((de = readdir(d))) {
			const char *name = de->d_name;
			size_t len = strlen(name);
			char *line, *tab;

			if (strncmp(name, "sluice-", 7) || len < 13 ||
			    strcmp(name + len - 5, ".sock"))
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, name);
			line = ask(path, "brief", err, sizeof err);
			if (!line)
				continue; /* died, or not a job of ours */
			if (!n)
				printf("%-8s %-24s %-9s %10s %14s %10s  %s\n", "PID", "JOB",
				       "STATE", "SECONDS", "RECORDS IN", "IN/S", "SOCKET");
			n++;
			/* name \t state \t seconds \t records \t rate */
			char *f[5] = { line };
			int k = 1;

			for (tab = line; k < 5 && (tab = strchr(tab, '\t')); k++) {
				*tab++ = 0;
				f[k] = tab;
			}
			line[strcspn(line, "\n")] = 0;
			for (int j = k; j < 5; j++)
				f[j] = "";
			f[4][strcspn(f[4], "\n")] = 0;
			printf("%-8.*s %-24s %-9s %10s %14s %10s  %s\n", (int)(len - 12), name + 7,
			       f[0], f[1], f[2], f[3], f[4], path);
			free(line);
		}
		closedir(d);
	}
	if (!n)
		printf("no running sluice job of this user (sockets in %s)\n", dir);
	return 0;
}

void sl_cli_explain_watermarks(struct sl_sql_script *script, int after, FILE *f)
{
	for (int k = 0; k < sl_sql_nwatermark_explains(script); k++) {
		const char *const *tables;
		int at, n, found = 0;
		const char *name = sl_sql_watermark_explain(script, k, &at, &tables, &n);

		if (at != after)
			continue;
		fprintf(f, "EXPLAIN WATERMARK FOR %s\n", name);
		/* the last job before the statement that reads its tables */
		for (int j = after - 1; j >= 0 && !found; j--) {
			size_t len = 0;
			char *text = sl_obs_explain_watermark_text(sl_sql_job(script, j), tables, n,
								   &found, &len);

			if (!text) {
				fprintf(f, "  out of memory\n");
				return;
			}
			if (found)
				fwrite(text, 1, len, f);
			free(text);
		}
		if (!found)
			fprintf(f, "  no job before this statement reads %s\n", name);
	}
	fflush(f);
}
