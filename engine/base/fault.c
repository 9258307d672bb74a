/*
 * fault.c - SLUICE_FAULT, the fault-injection points of fault.h. The variable is parsed
 * once (pthread_once), so a point reached from several threads reads a settled value.
 */
#include "fault.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const points[] = {
	"barrier-injected",	 "sink-precommit",   "snapshot-written",
	"manifest-temp-written", "manifest-renamed", "sink-commit",
	"kafka-txn-ended",	 "kafka-txn-begun",  NULL,
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *want_point; /* NULL: no fault asked for */
static uint64_t want_n;
static bool want_stop;		 /* "stop:" prefix: SIGSTOP instead of SIGKILL */
static atomic_bool stopped_once; /* a stop fires once: other threads pass it after SIGCONT */

static void parse(void)
{
	const char *v = getenv("SLUICE_FAULT"), *colon;
	char *end;

	if (v && !strncmp(v, "stop:", 5)) {
		want_stop = true;
		v += 5;
	}
	if (!v || !*v || !(colon = strrchr(v, ':')))
		return;
	for (int i = 0; points[i]; i++)
		if (strlen(points[i]) == (size_t)(colon - v) &&
		    !strncmp(points[i], v, (size_t)(colon - v))) {
			want_n = strtoull(colon + 1, &end, 10);
			if (*end || end == colon + 1)
				break;
			want_point = points[i];
			return;
		}
	fprintf(stderr,
		"sluice: SLUICE_FAULT '%s' ignored: expected [stop:]<point>:<checkpoint>, the "
		"point one of barrier-injected, sink-precommit, snapshot-written, "
		"manifest-temp-written, manifest-renamed, sink-commit, kafka-txn-ended, "
		"kafka-txn-begun\n",
		getenv("SLUICE_FAULT")); /* as given, "stop:" and all */
}

void sl_fault_point(const char *point, uint64_t n)
{
	char line[160];
	int len;

	pthread_once(&once, parse);
	if (!want_point || n != want_n || strcmp(point, want_point))
		return;
	if (want_stop && atomic_exchange(&stopped_once, true))
		return;
	len = snprintf(line, sizeof line,
		       "sluice: SLUICE_FAULT: %s at %s of checkpoint %" PRIu64 "\n",
		       want_stop ? "stopped" : "killed", point, n);
	if (len > 0 && write(STDERR_FILENO, line, (size_t)len) < 0)
		len = 0; /* dying or stopping anyway */
	raise(want_stop ? SIGSTOP : SIGKILL);
}
