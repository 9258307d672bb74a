/*
 * gbench_shim.h - a C face for Google Benchmark, so microbenchmarks are written in C.
 *
 * A benchmark is a C function taking the run state; it loops while sl_gb_keep_running*()
 * says so, as a C++ benchmark loops on state.KeepRunning(). Each keep-running call crosses
 * into C++ (a call, not inlined), so bodies cheaper than ~20 ns should use the batch form:
 *
 *	static void bm(struct sl_gb_state *st, void *arg)
 *	{
 *		while (sl_gb_keep_running_batch(st, 256))
 *			for (int i = 0; i < 256; i++)
 *				sl_gb_do_not_optimize(work(i));
 *		sl_gb_set_items_processed(st, sl_gb_iterations(st));
 *	}
 *	int main(int argc, char **argv)
 *	{
 *		sl_gb_register("work", bm, NULL);
 *		return sl_gb_main(argc, argv);
 *	}
 *
 * Only the main thread registers and runs; arguments are Google Benchmark's own flags
 * (--benchmark_filter, --benchmark_format=json, ...).
 */
#ifndef SL_BENCH_GBENCH_SHIM_H
#define SL_BENCH_GBENCH_SHIM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sl_gb_state; /* a benchmark::State */

typedef void (*sl_gb_fn)(struct sl_gb_state *st, void *arg);

/* Registers fn under `name` (copied); arg is passed to every run. */
void sl_gb_register(const char *name, sl_gb_fn fn, void *arg);
/* Same, run once per value of args[0..nargs), each readable with sl_gb_range(); the run's
 * name gets "/<value>" appended. */
void sl_gb_register_args(const char *name, sl_gb_fn fn, void *arg, const int64_t *args,
			 int nargs);

/* True while the benchmark wants another iteration (state.KeepRunning()). */
bool sl_gb_keep_running(struct sl_gb_state *st);
/* True while it wants another n iterations (state.KeepRunningBatch(n)); may overshoot by
 * up to n, which sl_gb_iterations() counts. */
bool sl_gb_keep_running_batch(struct sl_gb_state *st, int64_t n);

int64_t sl_gb_range(const struct sl_gb_state *st);      /* the run's argument, or 0 */
int64_t sl_gb_iterations(const struct sl_gb_state *st); /* iterations done so far */
void sl_gb_set_items_processed(struct sl_gb_state *st, int64_t items); /* -> items/s */
void sl_gb_set_bytes_processed(struct sl_gb_state *st, int64_t bytes); /* -> bytes/s */
void sl_gb_pause_timing(struct sl_gb_state *st);
void sl_gb_resume_timing(struct sl_gb_state *st);
/* Fails the run with `msg` shown in the report (state.SkipWithError()). */
void sl_gb_skip_with_error(struct sl_gb_state *st, const char *msg);

/* Parses Google Benchmark's flags, runs the registered benchmarks; returns the exit code. */
int sl_gb_main(int argc, char **argv);

/* Keeps the compiler from discarding a value it thinks nobody reads. */
static inline void sl_gb_do_not_optimize(uint64_t v)
{
	__asm__ volatile("" : : "r"(v) : "memory");
}

/* Makes the compiler assume all memory was read and written. */
static inline void sl_gb_clobber_memory(void)
{
	__asm__ volatile("" : : : "memory");
}

#ifdef __cplusplus
}
#endif

#endif
