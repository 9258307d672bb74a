/*
 * par.c - sl_par_for: workers take indices from one shared counter until none are left.
 */
#include "par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define PAR_THREADS_MAX 16

struct par {
	_Atomic uint32_t next;
	uint32_t n;
	void (*fn)(uint32_t i, void *arg);
	void *arg;
};

static void *par_worker(void *arg)
{
	struct par *p = arg;

	for (;;) {
		uint32_t i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);

		if (i >= p->n)
			return NULL;
		p->fn(i, p->arg);
	}
}

void sl_par_for(uint32_t n, int threads, void (*fn)(uint32_t i, void *arg), void *arg)
{
	struct par p = { .n = n, .fn = fn, .arg = arg };
	pthread_t tid[PAR_THREADS_MAX];
	int started = 0;

	if (threads <= 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		threads = cpus > 0 ? (int)cpus : 1;
	}
	if (threads > PAR_THREADS_MAX)
		threads = PAR_THREADS_MAX;
	if ((uint32_t)threads > n)
		threads = (int)n;
	atomic_init(&p.next, 0);
	while (started < threads - 1 && !pthread_create(&tid[started], NULL, par_worker, &p))
		started++;
	par_worker(&p);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}
