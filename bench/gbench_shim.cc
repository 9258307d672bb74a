/*
 * gbench_shim.cc - implements gbench_shim.h on Google Benchmark: a struct sl_gb_state * is
 * a benchmark::State * seen from C, and each registered C function becomes a lambda
 * benchmark. Nothing here runs inside the timed loop except the keep-running calls.
 */
#include "gbench_shim.h"

#include <benchmark/benchmark.h>

#include <string>

static benchmark::State &state(struct sl_gb_state *st)
{
	return *reinterpret_cast<benchmark::State *>(st);
}

static const benchmark::State &state(const struct sl_gb_state *st)
{
	return *reinterpret_cast<const benchmark::State *>(st);
}

/* Whether the running benchmark was registered with arguments: State has no public way to
 * ask, and range(0) asserts without them. Benchmarks run on the registering thread. */
static bool running_with_args;

static benchmark::internal::Benchmark *reg(const char *name, sl_gb_fn fn, void *arg,
					   bool with_args)
{
	return benchmark::RegisterBenchmark(name, [fn, arg, with_args](benchmark::State &s) {
		running_with_args = with_args;
		fn(reinterpret_cast<struct sl_gb_state *>(&s), arg);
	});
}

extern "C" {

void sl_gb_register(const char *name, sl_gb_fn fn, void *arg)
{
	reg(name, fn, arg, false);
}

void sl_gb_register_args(const char *name, sl_gb_fn fn, void *arg, const int64_t *args,
			 int nargs)
{
	benchmark::internal::Benchmark *b = reg(name, fn, arg, true);

	for (int i = 0; i < nargs; i++)
		b->Arg(args[i]);
}

bool sl_gb_keep_running(struct sl_gb_state *st)
{
	return state(st).KeepRunning();
}

bool sl_gb_keep_running_batch(struct sl_gb_state *st, int64_t n)
{
	return state(st).KeepRunningBatch(n);
}

int64_t sl_gb_range(const struct sl_gb_state *st)
{
	return running_with_args ? state(st).range(0) : 0;
}

int64_t sl_gb_iterations(const struct sl_gb_state *st)
{
	return state(st).iterations();
}

void sl_gb_set_items_processed(struct sl_gb_state *st, int64_t items)
{
	state(st).SetItemsProcessed(items);
}

void sl_gb_set_bytes_processed(struct sl_gb_state *st, int64_t bytes)
{
	state(st).SetBytesProcessed(bytes);
}

void sl_gb_pause_timing(struct sl_gb_state *st)
{
	state(st).PauseTiming();
}

void sl_gb_resume_timing(struct sl_gb_state *st)
{
	state(st).ResumeTiming();
}

void sl_gb_skip_with_error(struct sl_gb_state *st, const char *msg)
{
	state(st).SkipWithError(msg);
}

int sl_gb_main(int argc, char **argv)
{
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 1;
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	return 0;
}

} /* extern "C" */
