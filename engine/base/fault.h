/*
 * fault.h - named points where a test can make the process die as kill -9 would, to check
 * that no row is lost or duplicated whichever step of a checkpoint a crash cuts
 * (tests/recovery/fault_points.py).
 *
 * SLUICE_FAULT=<point>:<n> (read once, at the first call) makes sl_fault_point(point, n)
 * write one line to stderr and raise SIGKILL: no atexit handler, no flush, no destructor
 * runs, as with kill -9. The points, in the order checkpoint n passes them:
 *
 *   barrier-injected       a shard's sources injected the barrier of n (barrier.c)
 *   sink-precommit         a sink instance pre-committed n (basic_ops.c)
 *   snapshot-written       a shard's state files of n are durable (barrier.c)
 *   manifest-temp-written  MANIFEST.tmp of n is durable, not yet renamed (store.c)
 *   manifest-renamed       MANIFEST of n is durable: n is complete (store.c)
 *   sink-commit            a sink committed n (directory.c)
 *   kafka-txn-ended        the Kafka sink committed the transaction of n (kafka_sink.c)
 *   kafka-txn-begun        ... and began the next one
 *
 * SLUICE_FAULT=stop:<point>:<n> raises SIGSTOP there instead (once per process: other
 * threads reaching the point after SIGCONT pass it), writing "stopped at": a zombie frozen
 * at a known step, e.g. with its Kafka transaction flushed and not committed
 * (tests/kafka/real_faults.py zombie).
 *
 * Without the variable a point costs one load and a compare; none is on the record path.
 */
#ifndef SL_BASE_FAULT_H
#define SL_BASE_FAULT_H

#include <stdint.h>

/* Dies (SIGKILL; or stops, SIGSTOP, with "stop:") if SLUICE_FAULT names this point and
 * checkpoint n; else returns. Any thread. An unknown point name in SLUICE_FAULT is reported once on
 * stderr and ignored. */
void sl_fault_point(const char *point, uint64_t n);

#endif
