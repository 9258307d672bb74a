/*
 * uring_writer.h - a shard's asynchronous checkpoint file writer over its own io_uring.
 *
 * The shard hands over a snapshot's bytes with sl_uring_writer_submit (the file is created there,
 * the one blocking call), and the write and fsync run as linked io_uring requests while the shard
 * goes on processing records. The shard loop calls sl_uring_writer_poll every turn: it never
 * blocks, reaps whatever completed (in any order across files) and calls each file's callback once,
 * with the bytes written, the CRC32C of the content and 0 or -errno. The checksum is computed
 * in slices of 1 MiB per poll while the bytes are being written, so neither submit nor poll
 * holds the shard for long whatever the snapshot's size (~0.1 ms per poll at most).
 *
 * Errors: a failed file (ENOSPC, EIO, ...) is reported through its callback with the path,
 * its partial file is unlinked (to give the space back), and the writer turns sticky: later
 * submits fail with that error until sl_uring_writer_clear (the coordinator calls it once it has
 * declared the checkpoint failed), so no checkpoint is ever assembled around a hole.
 *
 * Threads: one writer per shard, every call on that shard's thread.
 */
#ifndef SL_CHECKPOINT_URING_WRITER_H
#define SL_CHECKPOINT_URING_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct sl_uring_writer;

/* What became of one submitted file. Valid only during the callback. */
struct sl_uring_writer_result {
	const char *path;  /* as given to sl_uring_writer_submit */
	uint64_t bytes;	   /* written and fsynced (== submitted length on success) */
	uint32_t crc32c;   /* of the whole content, as the manifest records it */
	int error;	   /* 0, or -errno of the first failure (write, fsync or close) */
	const char *stage; /* on error: "open", "write", "fsync" or "close" */
};

/* Called from sl_uring_writer_poll (or sl_uring_writer_drain) on the shard thread, once per
 * submitted file. */
typedef void (*sl_uring_writer_done_fn)(void *arg, const struct sl_uring_writer_result *res);

/*
 * Creates a writer whose ring holds `depth` requests (0: 64; three per file in flight, more
 * files wait in a queue). Returns NULL with -errno in *err (e.g. -ENOSYS without io_uring).
 * If the environment has SLUICE_CKPT_FAULT=ERR[:K] (ERR one of ENOSPC, EIO), the K-th write
 * (1-based, default 1) of this writer fails with ERR: fault tests of the whole binary use it.
 */
struct sl_uring_writer *sl_uring_writer_create(unsigned depth, int *err);

/* Waits for every file in flight (their callbacks run), then frees. Accepts NULL. */
void sl_uring_writer_destroy(struct sl_uring_writer *w);

/*
 * Creates `path` (it must not exist: O_EXCL) and queues the write of data[0..len) and an
 * fsync. Borrows `data` until the file's callback has run; copies `path`. Returns 0, or
 * -errno: the sticky error of an earlier failure, or open's error (then no callback runs).
 */
int sl_uring_writer_submit(struct sl_uring_writer *w, const char *path, const void *data,
			   size_t len, sl_uring_writer_done_fn done, void *arg);

/* Reaps completions without blocking; returns how many files finished (callbacks run). */
int sl_uring_writer_poll(struct sl_uring_writer *w);

/* Blocks until no file is in flight (shutdown, tests). Returns files finished. */
int sl_uring_writer_drain(struct sl_uring_writer *w);

/* Files submitted and not yet finished. */
unsigned sl_uring_writer_inflight(const struct sl_uring_writer *w);

/* The sticky error (0 or -errno) and its clearing, once the failed checkpoint is abandoned. */
int sl_uring_writer_error(const struct sl_uring_writer *w);
void sl_uring_writer_clear(struct sl_uring_writer *w);

/*
 * Fault injection (tests): the write request of the file submitted `nth` submits from now
 * (1 = the next one) completes with `err` (-ENOSPC, -EIO) through the ring, as the kernel
 * would report it, without touching the disk. err 0 disarms.
 */
void sl_uring_writer_inject(struct sl_uring_writer *w, int err, unsigned nth);

#endif
