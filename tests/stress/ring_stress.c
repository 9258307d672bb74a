/*
 * ring_stress.c - two threads hammer one SPSC frame ring (engine/base/ring.h).
 *
 * The producer writes N variable-size frames carrying a sequence number and a payload whose
 * checksum travels in the header; the consumer checks order, size and content of every one.
 * The ring is small (4 KiB and 16 KiB) so it wraps millions of times and runs full; the
 * consumer also stalls now and then until it has seen the producer hit a full ring, so the
 * full path is exercised for certain, not by luck of scheduling. Two publication modes:
 *   auto:  commit only (the ring publishes every SL_RING_PUBLISH_EVERY frames), then one
 *          publish at the very end;
 *   batch: the producer publishes explicitly after each batch of 1..200 frames, as a shard
 *          does at the end of a loop turn, so partial batches and publish-after-auto-publish
 *          both happen.
 * Threads are pinned to CPUs 0 and 1 when the affinity mask allows; otherwise they run free
 * and yield while waiting. Under TSan/ASan the frame count drops (they are ~20x slower); TSan
 * checks the acquire/release pairs of ring.c. SL_STRESS_FRAMES=n overrides N.
 * Exit 0 pass, 1 fail (first mismatch printed), 77 skip (no threads).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "test.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define FRAMES_NORMAL 8000000ull /* ~1 s alone; minutes when another job spins on the cores */
#define FRAMES_SANITIZED 2000000ull
#define STALL_EVERY 65536 /* consumer waits for a full ring this often */

enum mode { MODE_AUTO, MODE_BATCH };

struct run {
	struct sl_ring *ring;
	enum mode mode;
	uint64_t frames;
	atomic_bool producer_done;   /* lets a stalled consumer stop waiting at the end */
	int pin;                     /* pin threads to CPUs 0 and 1 */
	uint64_t bad_seq;            /* consumer: first failing sequence number, or ~0 */
	const char *bad_what;
};

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Size of frame `seq`: mostly 32..120 bytes, 1 in 32 up to max_frame (forces big PADs). */
static uint32_t size_of(uint64_t seq, uint32_t max_frame)
{
	uint64_t h = mix(seq ^ 0x5bd1e995);

	if ((h & 31) == 0)
		return 32 + 8 * (uint32_t)((h >> 8) % ((max_frame - 32) / 8 + 1));
	return 32 + 8 * (uint32_t)((h >> 8) % 12);
}

/* Payload word i of frame seq; word 0 is the sequence number itself. */
static inline uint64_t word(uint64_t seq, uint32_t i)
{
	return i ? mix(seq * 64 + i) : seq;
}

static inline uint64_t sum_payload(const struct sl_frame *f, uint32_t words)
{
	uint64_t c = 0xcbf29ce484222325ULL;

	for (uint32_t i = 0; i < words; i++)
		c = (c ^ f->payload[i]) * 0x100000001b3ULL;
	return c;
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* Best effort: a failure only makes the test slower, not wrong. */
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* Waiting is a spin, with a yield now and then so an unpinned pair on one CPU progresses. */
static inline void relax(uint32_t *spins)
{
	if (++*spins % 256 == 0)
		sched_yield();
	else
		cpu_relax();
}

static void *producer(void *arg)
{
	struct run *run = arg;
	struct sl_ring *r = run->ring;
	uint64_t seq = 0, batch_end = 0;

	if (run->pin)
		pin_to(0);
	while (seq < run->frames) {
		uint32_t size = size_of(seq, r->max_frame), words = (size - 24) / 8, spins = 0;
		struct sl_frame *f;

		while (!(f = sl_ring_reserve_spsc(r, size)))
			relax(&spins);
		f->size = size;
		f->type = SL_FRAME_RAW;
		f->port = (uint8_t)seq;
		f->rsv = 0;
		for (uint32_t i = 0; i < words; i++)
			f->payload[i] = word(seq, i);
		f->hash = sum_payload(f, words);
		f->ts = (sl_ts_t)seq;
		sl_ring_commit_spsc(r, f);
		seq++;
		if (run->mode == MODE_BATCH && seq >= batch_end) {
			sl_ring_publish_spsc(r);
			batch_end = seq + 1 + mix(seq) % 200;
		}
	}
	sl_ring_publish_spsc(r);
	atomic_store_explicit(&run->producer_done, true, memory_order_release);
	return NULL;
}

static bool fail(struct run *run, uint64_t seq, const char *what)
{
	run->bad_seq = seq;
	run->bad_what = what;
	return false;
}

static bool consume_all(struct run *run)
{
	struct sl_ring *r = run->ring;

	for (uint64_t seq = 0; seq < run->frames; seq++) {
		uint32_t size = size_of(seq, r->max_frame), words = (size - 24) / 8, spins = 0;
		const struct sl_frame *f;

		if (seq % STALL_EVERY == STALL_EVERY - 1) {
			/* Wait (without consuming) until the producer finds the ring full. Hand back
			 * what was consumed first. prod_full counts stalls, not retries, so if the
			 * producer was already waiting out a stall when we looked, no new one comes:
			 * the wait is bounded (a few ms), and the final check that prod_full > 0
			 * proves the full path ran. */
			uint64_t full = atomic_load_explicit(&r->prod_full, memory_order_relaxed);
			uint32_t waited = 0;

			sl_ring_release_spsc(r);
			while (atomic_load_explicit(&r->prod_full, memory_order_relaxed) == full &&
			       !atomic_load_explicit(&run->producer_done, memory_order_acquire) &&
			       ++waited < 200000)
				relax(&spins);
		}
		while (!(f = sl_ring_peek_spsc(r)))
			relax(&spins);
		if (f->type != SL_FRAME_RAW)
			return fail(run, seq, "type (PAD leaked to the consumer?)");
		if ((uint64_t)f->ts != seq || f->payload[0] != seq)
			return fail(run, seq, "sequence (lost, duplicated or reordered frame)");
		if (f->size != size || f->port != (uint8_t)seq)
			return fail(run, seq, "header");
		if (sum_payload(f, words) != f->hash)
			return fail(run, seq, "checksum");
		for (uint32_t i = 1; i < words; i++)
			if (f->payload[i] != word(seq, i))
				return fail(run, seq, "payload");
		sl_ring_consume_spsc(r, f);
	}
	/* Nothing may follow the last frame. */
	if (sl_ring_peek_spsc(r))
		return fail(run, run->frames, "extra frame");
	return true;
}

static int run_one(uint32_t cap, enum mode mode, uint64_t frames, int pin)
{
	struct run run = { .mode = mode, .frames = frames, .pin = pin, .bad_seq = ~0ull };
	pthread_t prod;
	bool ok;

	run.ring = sl_ring_create(cap);
	T_ASSERT(run.ring != NULL);
	if (pthread_create(&prod, NULL, producer, &run) != 0) {
		sl_ring_destroy(run.ring);
		return T_EXIT_SKIP;
	}
	if (pin)
		pin_to(1);
	ok = consume_all(&run);
	if (!ok) {
		fprintf(stderr, "ring_stress: cap %u mode %s: frame %llu: bad %s\n", cap,
			mode == MODE_AUTO ? "auto" : "batch", (unsigned long long)run.bad_seq,
			run.bad_what);
		/* The producer may be blocked on a ring we stopped reading: do not join. */
		exit(T_EXIT_FAIL);
	}
	pthread_join(prod, NULL);
	T_ASSERT_EQ_I64(atomic_load(&run.ring->prod_frames), frames);
	T_ASSERT_EQ_I64(atomic_load(&run.ring->cons_head), atomic_load(&run.ring->prod_tail));
	T_ASSERT_EQ_I64(run.ring->prod_next, atomic_load(&run.ring->prod_tail));
	T_ASSERT(run.ring->prod_next / cap > 100);    /* it wrapped, many times */
	if (frames >= 2 * STALL_EVERY)
		T_ASSERT(atomic_load(&run.ring->prod_full) > 0);
	printf("ring_stress: cap %5u %-5s %llu frames, %llu laps, %llu full reserves\n", cap,
	       mode == MODE_AUTO ? "auto" : "batch", (unsigned long long)frames,
	       (unsigned long long)(run.ring->prod_next / cap),
	       (unsigned long long)atomic_load(&run.ring->prod_full));
	sl_ring_destroy(run.ring);
	return T_EXIT_PASS;
}

int main(void)
{
	uint64_t frames = SANITIZED ? FRAMES_SANITIZED : FRAMES_NORMAL;
	const char *env = getenv("SL_STRESS_FRAMES");
	static const uint32_t caps[] = { 4096, 16384 };
	cpu_set_t set;
	int pin, rc;

	if (env && *env)
		frames = strtoull(env, NULL, 0);
	CPU_ZERO(&set);
	pin = sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_ISSET(0, &set) &&
	      CPU_ISSET(1, &set);
	/* N frames in total, split over the four (ring size, mode) runs. */
	for (int c = 0; c < 2; c++) {
		for (int m = 0; m < 2; m++) {
			rc = run_one(caps[c], m ? MODE_BATCH : MODE_AUTO, frames / 4, pin);
			if (rc != T_EXIT_PASS)
				return rc;
		}
	}
	return T_EXIT_PASS;
}
