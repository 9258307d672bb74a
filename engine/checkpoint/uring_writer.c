/*
 * uring_writer.c - a shard's checkpoint file writer: create, then write + fsync + close as
 * linked io_uring requests, reaped without blocking from the shard loop.
 *
 * One file goes through steps; a step is the requests for one stretch of its bytes:
 *
 *   sl_uring_writer_submit: open(O_EXCL), queue (the CRC32C is computed in slices by
 * sl_uring_writer_poll while the write is in flight, CRC_BUDGET bytes a call)
 *        |
 *        v
 *   step: WRITE(off, n)  [-> FSYNC -> CLOSE when n reaches the end, IOSQE_IO_LINK]
 *        |  all requests of the step completed (advance)
 *        +-- short write: the kernel cancelled the linked FSYNC/CLOSE -> next step from off
 *        +-- error (write/fsync/close < 0): close, unlink the partial file, callback(-errno),
 *        |   writer sticky
 *        +-- closed: callback(0)
 *
 * Invariants: a file's requests are in the ring only while op->pending > 0, and its next step
 * is prepared only when pending reaches 0, so a file never has two steps in flight; SQEs in
 * flight never exceed the ring depth, so the completion queue (twice as deep) cannot overflow;
 * every submitted file gets exactly one callback, and its CRC32C covers all its bytes by then.
 * Writes carry IOSQE_ASYNC so the copy into the page cache happens in io_uring's workers, never
 * in the shard's submit call; the checksum is spread over poll calls for the same reason: a
 * 100 MB snapshot's CRC in one go would stall the shard ~10 ms.
 */
#include "uring_writer.h"

#include "crc32c.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One write request's bytes at most: under the kernel's MAX_RW_COUNT, so a >2 GB file is
 * several steps rather than relying on short writes. */
#define CHUNK (1u << 30)

/* Bytes of checksum one poll computes: ~0.1 ms of the shard's time with SSE4.2. */
#define CRC_BUDGET (1u << 20)

enum req_kind { K_WRITE = 0, K_FSYNC = 1, K_CLOSE = 2 };

struct op {
	struct op *next;     /* wait queue link */
	struct op *crc_next; /* link in the queue of files whose checksum is not done */
	size_t crc_off;	     /* bytes checksummed so far */
	char *path;
	const uint8_t *data; /* borrowed until the callback */
	size_t len;
	size_t off; /* bytes written so far */
	int fd;	    /* -1 once closed */
	uint32_t crc;
	int error; /* first failure, -errno */
	const char *stage;
	int inject;	  /* armed fault for the next write request */
	int inject_now;	  /* the fault the in-flight NOP stands for */
	unsigned pending; /* requests of the current step not yet completed */
	sl_uring_writer_done_fn done;
	void *arg;
} __attribute__((aligned(8)));

struct sl_uring_writer {
	struct io_uring ring;
	unsigned depth;
	unsigned sqes_inflight; /* requests submitted, completion not yet reaped */
	unsigned files;		/* submitted, callback not yet run */
	struct op *wait_head;	/* files whose next step is not yet in the ring */
	struct op *wait_tail;
	struct op *crc_head; /* files still being checksummed, oldest first */
	struct op *crc_tail;
	int sticky;
	int inject_err;
	unsigned inject_nth;
	int finished; /* callbacks run in the current poll */
};

static inline uint64_t tag(struct op *op, enum req_kind k)
{
	return (uint64_t)(uintptr_t)op | (uint64_t)k;
}

static void enqueue(struct sl_uring_writer *w, struct op *op)
{
	op->next = NULL;
	if (w->wait_tail)
		w->wait_tail->next = op;
	else
		w->wait_head = op;
	w->wait_tail = op;
}

static int parse_fault(const char *s, int *err, unsigned *nth)
{
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);

	if (n == 6 && !strncmp(s, "ENOSPC", 6))
		*err = -ENOSPC;
	else if (n == 3 && !strncmp(s, "EIO", 3))
		*err = -EIO;
	else
		return -EINVAL;
	*nth = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 1;
	if (!*nth)
		*nth = 1;
	return 0;
}

struct sl_uring_writer *sl_uring_writer_create(unsigned depth, int *err)
{
	struct sl_uring_writer *w;
	const char *fault;
	int rc;

	if (!depth)
		depth = 64;
	if (depth < 4)
		depth = 4;
	w = calloc(1, sizeof(*w));
	if (!w) {
		*err = -ENOMEM;
		return NULL;
	}
	rc = io_uring_queue_init(depth, &w->ring, 0);
	if (rc < 0) {
		free(w);
		*err = rc;
		return NULL;
	}
	w->depth = depth;
	fault = getenv("SLUICE_CKPT_FAULT");
	if (fault && *fault && parse_fault(fault, &w->inject_err, &w->inject_nth))
		w->inject_err = 0;
	*err = 0;
	return w;
}

/* Takes op out of the checksum queue (short: the files in flight). */
static void crc_unlink(struct sl_uring_writer *w, struct op *op)
{
	struct op **pp = &w->crc_head, *prev = NULL;

	while (*pp && *pp != op) {
		prev = *pp;
		pp = &(*pp)->crc_next;
	}
	if (!*pp)
		return;
	*pp = op->crc_next;
	if (w->crc_tail == op)
		w->crc_tail = prev;
}

/* Checksums up to `budget` bytes of the oldest unfinished files. */
static void crc_some(struct sl_uring_writer *w, size_t budget)
{
	while (budget && w->crc_head) {
		struct op *op = w->crc_head;
		size_t n = op->len - op->crc_off;

		if (n > budget)
			n = budget;
		op->crc = sl_crc32c(op->crc, op->data + op->crc_off, n);
		op->crc_off += n;
		budget -= n;
		if (op->crc_off == op->len) {
			w->crc_head = op->crc_next;
			if (!w->crc_head)
				w->crc_tail = NULL;
		}
	}
}

static void finish(struct sl_uring_writer *w, struct op *op)
{
	struct sl_uring_writer_result res;

	if (op->crc_off < op->len) {
		/* The write outran the slices (small files usually do): finish the sum now. */
		crc_unlink(w, op);
		if (!op->error)
			op->crc = sl_crc32c(op->crc, op->data + op->crc_off, op->len - op->crc_off);
		op->crc_off = op->len;
	}
	res = (struct sl_uring_writer_result){
		.path = op->path,
		.bytes = op->error ? op->off : op->len,
		.crc32c = op->crc,
		.error = op->error,
		.stage = op->error ? op->stage : NULL,
	};

	if (op->error) {
		/* The file is useless now; give its blocks back (ENOSPC) at once. */
		if (op->fd >= 0)
			close(op->fd);
		unlink(op->path);
		if (!w->sticky)
			w->sticky = op->error;
	}
	w->files--;
	w->finished++;
	op->done(op->arg, &res);
	free(op->path);
	free(op);
}

/* Prepares the next step of `op`; false when the ring has no room for it now. */
static bool prep_step(struct sl_uring_writer *w, struct op *op)
{
	size_t n = op->len - op->off;
	bool last = n <= CHUNK;
	unsigned need = (n ? 1 : 0) + (last ? 2 : 0);
	struct io_uring_sqe *sqe;

	if (op->inject && n)
		need = 1;
	if (w->sqes_inflight + need > w->depth || io_uring_sq_space_left(&w->ring) < need)
		return false;
	op->pending = need;
	w->sqes_inflight += need;
	if (n && op->inject) {
		/* Stands for the write: completes through the ring with the injected error. */
		sqe = io_uring_get_sqe(&w->ring);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, tag(op, K_WRITE));
		op->inject_now = op->inject;
		op->inject = 0;
		return true;
	}
	if (n) {
		if (!last)
			n = CHUNK;
		sqe = io_uring_get_sqe(&w->ring);
		io_uring_prep_write(sqe, op->fd, op->data + op->off, (unsigned)n, op->off);
		io_uring_sqe_set_data64(sqe, tag(op, K_WRITE));
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC | (last ? IOSQE_IO_LINK : 0));
	}
	if (last) {
		sqe = io_uring_get_sqe(&w->ring);
		io_uring_prep_fsync(sqe, op->fd, 0);
		io_uring_sqe_set_data64(sqe, tag(op, K_FSYNC));
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC | IOSQE_IO_LINK);
		sqe = io_uring_get_sqe(&w->ring);
		io_uring_prep_close(sqe, op->fd);
		io_uring_sqe_set_data64(sqe, tag(op, K_CLOSE));
		/* The last fput of a written file may do work: keep it off the shard's task. */
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
	}
	return true;
}

/* Moves waiting files into the ring as far as it has room and submits them. */
static void kick(struct sl_uring_writer *w)
{
	while (w->wait_head && prep_step(w, w->wait_head)) {
		w->wait_head = w->wait_head->next;
		if (!w->wait_head)
			w->wait_tail = NULL;
	}
	/* Also retries requests an earlier submit left in the ring (EAGAIN, EBUSY). */
	if (io_uring_sq_ready(&w->ring))
		io_uring_submit(&w->ring);
}

static void fail(struct op *op, int err, const char *stage)
{
	if (!op->error) {
		op->error = err;
		op->stage = stage;
	}
}

/* All requests of op's step completed: decide what comes next. */
static void advance(struct sl_uring_writer *w, struct op *op)
{
	if (op->error || op->fd < 0)
		finish(w, op);
	else
		enqueue(w, op);
}

static void complete(struct sl_uring_writer *w, uint64_t data, int res)
{
	struct op *op = (struct op *)(uintptr_t)(data & ~(uint64_t)7);

	switch ((enum req_kind)(data & 7)) {
	case K_WRITE:
		if (op->inject_now) {
			res = op->inject_now;
			op->inject_now = 0;
		}
		if (res > 0)
			op->off += (size_t)res;
		else if (res == 0)
			fail(op, -EIO, "write"); /* no progress: never spin on it */
		else if (res != -EAGAIN && res != -EINTR)
			fail(op, res, "write");
		break;
	case K_FSYNC:
		if (res < 0 && res != -ECANCELED)
			fail(op, res, "fsync");
		break;
	case K_CLOSE:
		if (res == -ECANCELED)
			break;
		op->fd = -1; /* Linux releases the descriptor even when close fails */
		if (res < 0)
			fail(op, res, "close");
		break;
	}
	w->sqes_inflight--;
	if (--op->pending == 0)
		advance(w, op);
}

static void reap(struct sl_uring_writer *w)
{
	struct io_uring_cqe *cqes[32];
	struct {
		uint64_t data;
		int res;
	} got[32];
	unsigned n;

	/* Copy out and release the CQEs before any callback runs: a callback may submit. */
	while ((n = io_uring_peek_batch_cqe(&w->ring, cqes, 32)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			got[i].data = cqes[i]->user_data;
			got[i].res = cqes[i]->res;
		}
		io_uring_cq_advance(&w->ring, n);
		for (unsigned i = 0; i < n; i++)
			complete(w, got[i].data, got[i].res);
	}
}

int sl_uring_writer_poll(struct sl_uring_writer *w)
{
	w->finished = 0;
	if (!w->files)
		return 0;
	reap(w);
	kick(w);
	crc_some(w, CRC_BUDGET);
	return w->finished;
}

int sl_uring_writer_drain(struct sl_uring_writer *w)
{
	int total = 0;

	while (w->files) {
		struct io_uring_cqe *cqe;

		total += sl_uring_writer_poll(w);
		if (!w->files)
			break;
		if (w->sqes_inflight && io_uring_wait_cqe(&w->ring, &cqe) < 0)
			continue; /* EINTR: poll again */
	}
	return total;
}

int sl_uring_writer_submit(struct sl_uring_writer *w, const char *path, const void *data,
			   size_t len, sl_uring_writer_done_fn done, void *arg)
{
	struct op *op;
	int fd;

	if (w->sticky)
		return w->sticky;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->path = strdup(path);
	if (!op->path) {
		free(op);
		return -ENOMEM;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		int err = -errno;

		free(op->path);
		free(op);
		return err;
	}
	op->fd = fd;
	op->data = data;
	op->len = len;
	op->done = done;
	op->arg = arg;
	if (w->inject_err && --w->inject_nth == 0) {
		op->inject = w->inject_err;
		w->inject_err = 0;
	}
	w->files++;
	if (len) {
		if (w->crc_tail)
			w->crc_tail->crc_next = op;
		else
			w->crc_head = op;
		w->crc_tail = op;
	}
	enqueue(w, op);
	kick(w);
	return 0;
}

unsigned sl_uring_writer_inflight(const struct sl_uring_writer *w)
{
	return w->files;
}

int sl_uring_writer_error(const struct sl_uring_writer *w)
{
	return w->sticky;
}

void sl_uring_writer_clear(struct sl_uring_writer *w)
{
	w->sticky = 0;
}

void sl_uring_writer_inject(struct sl_uring_writer *w, int err, unsigned nth)
{
	w->inject_err = err;
	w->inject_nth = nth ? nth : 1;
}

void sl_uring_writer_destroy(struct sl_uring_writer *w)
{
	if (!w)
		return;
	sl_uring_writer_drain(w);
	io_uring_queue_exit(&w->ring);
	free(w);
}
