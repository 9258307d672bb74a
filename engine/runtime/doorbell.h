/*
 * doorbell.h - a shard with nothing to do sleeps, and the shards that give it work wake it.
 *
 * A shard that found no work for SL_DOORBELL_SPINS loop turns in a row goes to sleep on its
 * doorbell (a futex word) for at most SL_DOORBELL_NAP_NS: sources such as Kafka, processing
 * -time timers, watermark ticks, barriers and the stop flag have no bell of their own, and
 * the nap bounds how late they are seen (1 ms, the clock's own grain). Rings do ring it: a
 * shard that published frames into a peer's input or freed space a peer waits for checks,
 * once per loop turn with work, whether that peer sleeps, and wakes it.
 *
 * The handshake is Dekker's: the sleeper stores `sleeping`, fences, then looks at its rings
 * once more (a fingerprint of their indices taken before its last empty turn); the waker
 * stores into a ring, fences, then loads `sleeping`. With both fences sequentially
 * consistent, at least one side sees the other: either the sleeper sees the new index and
 * does not sleep, or the waker sees the flag and wakes it. A wake that finds the word
 * already cleared costs nothing; a sleeper woken for nothing loses one turn.
 *
 * Cost: busy turns pay one fence and a load per peer (the flags are read-mostly, each on
 * its own cache line); only a shard about to sleep reads its rings' indices. Waiting costs
 * no CPU, so a 1,000 rows/s job sleeps nearly all the time, and under contention a waiting
 * shard gives its core to whoever has work instead of spinning through its time slice.
 */
#ifndef SL_DOORBELL_H
#define SL_DOORBELL_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ring.h"

/* ThreadSanitizer does not model fences: under it both sides use read-modify-writes of
 * the bell word instead (an acq_rel RMW reads the other side's, so one synchronizes with
 * the other), the same handshake at the price of a shared write per wake check. */
#if defined(__SANITIZE_THREAD__)
#define SL_DOORBELL_RMW 1
#endif

#define SL_DOORBELL_SPINS  64	    /* empty turns before sleeping */
#define SL_DOORBELL_NAP_NS 1000000L /* longest sleep: 1 ms */

/* One per shard, each on its own cache line (the runtime allocates them aligned). */
struct sl_doorbell {
	alignas(SL_CACHE_LINE) _Atomic uint32_t sleeping; /* the futex word: 1 while asleep */
};

/* Sleeps while nothing changed since `before` (a sum of the shard's ring indices, taken
 * by the caller before its last empty turn; `now` computes it again). */
static inline void sl_doorbell_sleep(struct sl_doorbell *b, uint64_t before,
				     uint64_t (*now)(void *), void *arg)
{
	struct timespec nap = { 0, SL_DOORBELL_NAP_NS };

#ifdef SL_DOORBELL_RMW
	atomic_exchange_explicit(&b->sleeping, 1, memory_order_acq_rel);
#else
	atomic_store_explicit(&b->sleeping, 1, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
#endif
	if (now(arg) == before)
		syscall(SYS_futex, &b->sleeping, FUTEX_WAIT_PRIVATE, 1, &nap, NULL, 0);
	atomic_store_explicit(&b->sleeping, 0, memory_order_relaxed);
}

/* After storing into rings: wakes the bell's owner if it sleeps. Call after a seq_cst fence
 * (sl_doorbell_fence) that follows the ring stores. */
static inline void sl_doorbell_wake(struct sl_doorbell *b)
{
#ifdef SL_DOORBELL_RMW
	if (atomic_fetch_add_explicit(&b->sleeping, 0, memory_order_acq_rel) &&
#else
	if (atomic_load_explicit(&b->sleeping, memory_order_relaxed) &&
#endif
	    atomic_exchange_explicit(&b->sleeping, 0, memory_order_relaxed))
		syscall(SYS_futex, &b->sleeping, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static inline void sl_doorbell_fence(void)
{
#ifndef SL_DOORBELL_RMW
	atomic_thread_fence(memory_order_seq_cst);
#endif
}

#endif
