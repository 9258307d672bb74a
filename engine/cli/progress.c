/*
 * progress.c - the progress line of `sluice run` while a job runs, on stderr when stderr
 * is a terminal (never in a pipe or a file, where it would be noise): records read and
 * per second, the sources' watermark, the share of the input read when it is known
 * (engine/obs/status.h). Redrawn in place every half second by a thread of its own, which
 * the run's thread stops (and whose line it clears) before it prints anything else.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli_status.h"
#include "status.h"

struct sl_cli_progress {
	struct sl_job *job;
	struct sl_obs_prev *prev;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop; /* under lock */
	bool drawn;
};

static void *progress_main(void *arg)
{
	struct sl_cli_progress *p = arg;
	char line[256];

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 500000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		/* a timed wait: woken early only by the stop */
		if (pthread_cond_timedwait(&p->cond, &p->lock, &until) != ETIMEDOUT || p->stop)
			continue;
		pthread_mutex_unlock(&p->lock);
		if (sl_obs_progress_line(p->job, p->prev, line, sizeof line) == 0 && line[0]) {
			fprintf(stderr, "\r%s\033[K", line);
			fflush(stderr);
			p->drawn = true;
		}
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct sl_cli_progress *sl_cli_progress_start(struct sl_job *job)
{
	struct sl_cli_progress *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->job = job;
	p->prev = sl_obs_prev_create();
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	if (!p->prev || pthread_create(&p->thread, NULL, progress_main, p)) {
		sl_obs_prev_destroy(p->prev);
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL; /* no progress line: nothing else depends on it */
	}
	return p;
}

void sl_cli_progress_stop(struct sl_cli_progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	if (p->drawn)
		fputs("\r\033[K", stderr); /* the line goes; the summary takes its place */
	sl_obs_prev_destroy(p->prev);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
