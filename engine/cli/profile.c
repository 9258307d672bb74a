/*
 * profile.c - `sluice profile PID|SOCKET [--seconds N] [-o OUT.svg]`: a flame graph of a
 * running job, the same SVG tools/flamegraph draws (it runs that tool: perf record on the
 * process for N seconds, folded and rendered by tools/flamegraph.py).
 *
 * Where the tool is: $SLUICE_FLAMEGRAPH, else beside the binary in a build tree
 * (build/sluice -> tools/flamegraph of the source tree it was built from), else where
 * `meson install` put it (libexecdir/sluice/flamegraph).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_status.h"

static bool executable(const char *path)
{
	return access(path, X_OK) == 0;
}

/* The flame graph tool, into buf; false: not found. */
static bool find_tool(char *buf, size_t cap)
{
	const char *env = getenv("SLUICE_FLAMEGRAPH");

	if (env && *env) {
		snprintf(buf, cap, "%s", env);
		return executable(buf);
	}
	if ((size_t)snprintf(buf, cap, "%s/tools/flamegraph", SL_SOURCE_ROOT) < cap &&
	    executable(buf))
		return true;
	return (size_t)snprintf(buf, cap, "%s/sluice/flamegraph", SL_LIBEXECDIR) < cap &&
	       executable(buf);
}

/* A pid, or the pid in a default socket's name (sluice-<pid>.sock). 0: neither. */
static long target_pid(const char *t)
{
	const char *base = strrchr(t, '/');
	char *end;
	long pid;

	base = base ? base + 1 : t;
	if (!strncmp(base, "sluice-", 7))
		base += 7;
	pid = strtol(base, &end, 10);
	if (pid <= 0 || (*end && strcmp(end, ".sock")))
		return 0;
	return pid;
}

int sl_cli_profile_cmd(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = "flamegraph.svg";
	char tool[PATH_MAX + 64], secs_s[32], pid_s[32], proc[64];
	double secs = 10;
	struct stat st;
	long pid;
	int c;

	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			secs = strtod(optarg, NULL);
			if (secs <= 0 || secs > 3600) {
				fprintf(stderr, "sluice: --seconds '%s': expected 0 < N <= 3600\n",
					optarg);
				return 2;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			printf("usage: sluice profile PID|SOCKET [--seconds N] [-o OUT.svg]\n");
			return 0;
		default:
			fprintf(stderr,
				"usage: sluice profile PID|SOCKET [--seconds N] [-o OUT.svg]\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "sluice: profile takes one job (its pid or control socket)\n");
		return 2;
	}
	pid = target_pid(argv[optind]);
	snprintf(proc, sizeof proc, "/proc/%ld", pid);
	if (!pid || stat(proc, &st) < 0) {
		fprintf(stderr, "sluice: profile %s: no such process\n", argv[optind]);
		return 1;
	}
	if (!find_tool(tool, sizeof tool)) {
		fprintf(stderr,
			"sluice: profile: tools/flamegraph not found (set $SLUICE_FLAMEGRAPH to "
			"it)\n");
		return 1;
	}
	snprintf(secs_s, sizeof secs_s, "%g", secs);
	snprintf(pid_s, sizeof pid_s, "%ld", pid);
	fflush(stdout);
	execl(tool, tool, "-o", out, "-p", pid_s, "-d", secs_s, (char *)NULL);
	fprintf(stderr, "sluice: profile: running %s: %s\n", tool, strerror(errno));
	return 1;
}
