/*
 * memory_guard.c - holds the state a job keeps on the heap to a limit, so that a job whose
 * state outgrows its memory stops with an error that names the operator, before the kernel
 * kills the process (DESIGN §6, "State on the heap has a limit").
 *
 * What counts: each operator instance's ctx->m.state_bytes for state that lives on the
 * heap: window and session tables with either backend (the window operator measures its
 * own, window.c), and keyed state when the backend is the heap (measured at each
 * checkpoint and at the end: a map descriptor's size is a walk). State in RocksDB is held
 * by RocksDB's own strict budget and is not counted here.
 *
 * The limit: --state-memory (SET 'sluice.state.memory') when the job gives one; else 3/4
 * of the memory the process may have (its cgroup's limit when set, else the machine's
 * physical memory), leaving the rest to rings, buffers, the allocator and the kernel.
 *
 * Cost: each shard sums its own instances every SL_MEM_GUARD_MS (a load per node) and
 * publishes the sum in a word only it writes; only a shard above its even share of the
 * limit reads the other shards' words. Nothing on the record path, no shared write.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "graph.h"
#include "runtime.h"

#define SL_MEM_GUARD_MS 100

/* The memory limit of this process's cgroup: v2's memory.max, or v1's
 * memory.limit_in_bytes; 0 when there is none ("max", or no such file). */
static uint64_t cgroup_limit(void)
{
	char path[600] = "", line[512];
	unsigned long long v = 0;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		char *p = strchr(line, ':');

		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "0::", 3) && !path[0]) /* v2: "0::/path" */
			snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
		else if (p && !strncmp(p, ":memory:", 8)) /* v1: "N:memory:/path" */
			snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
				 p + 8);
	}
	fclose(f);
	if (!path[0] || !(f = fopen(path, "r")))
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

uint64_t sl_mem_guard_default_limit(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t phys = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
	uint64_t cg = cgroup_limit(), lim = cg && (!phys || cg < phys) ? cg : phys;

	return lim / 4 * 3;
}

/* Bytes of heap state this shard's instances hold now, and the largest of them. */
static uint64_t shard_heap_state(const struct sl_shard *sh, int *largest)
{
	const struct sl_job *job = sh->rt->job;
	uint64_t sum = 0, top = 0;

	*largest = -1;
	for (int i = 0; i < job->nnodes; i++) {
		const struct sl_ctx *c = &sh->ctx[i];
		uint64_t b;

		if (!c->def || (c->kstate && sh->rt->state_env))
			continue; /* not wired, or its keyed state is in RocksDB */
		b = c->m.state_bytes;
		sum += b;
		if (b > top) {
			top = b;
			*largest = i;
		}
	}
	return sum;
}

static void fmt_mib(char *buf, size_t n, uint64_t b)
{
	snprintf(buf, n, "%.1f MiB", (double)b / (1024.0 * 1024.0));
}

void sl_mem_guard_check(struct sl_shard *sh)
{
	struct sl_runtime *rt = sh->rt;
	uint64_t mine, total = 0;
	int largest;
	char held[32], all[32], lim[32];

	if (!rt->heap_limit || sh->now < sh->mem_next)
		return;
	sh->mem_next = sh->now + SL_MEM_GUARD_MS;
	mine = shard_heap_state(sh, &largest);
	/* relaxed: other shards read it racily, only to add it up */
	atomic_store_explicit(&sh->heap_bytes, mine, memory_order_relaxed);
	if (mine <= rt->heap_limit / (uint64_t)rt->nshards)
		return;
	for (int i = 0; i < rt->nshards; i++)
		total += i == sh->index ? mine
					: atomic_load_explicit(&rt->shards[i].heap_bytes,
							       memory_order_relaxed);
	if (total <= rt->heap_limit)
		return;
	fmt_mib(held, sizeof held, sh->ctx[largest].m.state_bytes);
	fmt_mib(all, sizeof all, total);
	fmt_mib(lim, sizeof lim, rt->heap_limit);
	/* the job's error holds 255 bytes: say the cause, the holder and the way out */
	sl_shard_fail(sh, -ENOMEM,
		      "heap state %s over its limit %s (%s); largest: '%s', %s on shard %d. %s",
		      all, lim, rt->heap_limit_given ? "--state-memory" : "3/4 of memory",
		      sh->ctx[largest].def->name, held, sh->index,
		      sh->ctx[largest].kstate ? "Give more memory or use --state-backend rocksdb."
					      : "Windows stay on the heap with either backend.");
}
