/*
 * frame.h - what travels in a ring: records, watermarks, barriers, idle markers,
 * end-of-input. A frame is a 24-byte header followed by its payload (a row for records),
 * padded to 8 bytes. Frames are written in place in the ring and read in place.
 */
#ifndef SL_BASE_FRAME_H
#define SL_BASE_FRAME_H

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include <sluice/types.h>

enum sl_frame_type {
	SL_FRAME_PAD = 0,    /* skip to the ring's start (producer wrapped) */
	SL_FRAME_RECORD = 1, /* payload: struct sl_row */
	SL_FRAME_WATERMARK,  /* ts: the channel's new watermark */
	SL_FRAME_BARRIER,    /* ts: checkpoint id (aligned checkpoints, DESIGN §7) */
	SL_FRAME_IDLE,	     /* the channel has no active input; exclude it from the min */
	SL_FRAME_END,	     /* the channel is finished; nothing follows */
	SL_FRAME_RAW,	     /* opaque payload (ring benchmarks and tests) */
	SL_FRAME_PARTIAL,    /* payload: struct sl_partial + key + accumulators; ts in its slice */
};

struct sl_frame {
	uint32_t size; /* header + payload, multiple of 8 */
	uint8_t type;  /* enum sl_frame_type */
	uint8_t port;  /* input port of the receiving stage (joins have two) */
	uint16_t rsv;
	uint64_t hash; /* key hash of a record sent through a keyed exchange */
	sl_ts_t ts;    /* event time of a record, watermark value, barrier id */
	uint64_t payload[];
};

static_assert(sizeof(struct sl_frame) == 24, "frame header is 24 bytes");

#define SL_FRAME_ALIGN(n) (((n) + 7u) & ~7u)

/* Payload of a SL_FRAME_PARTIAL (two-stage aggregation, runtime/op.h): the encoded key
 * (klen bytes, then padding to 8) and the accumulator block (acc_len bytes) that stands for
 * nrows input rows of that key in the slice holding the frame's ts. */
struct sl_partial {
	uint32_t klen;
	uint32_t acc_len;
	uint32_t nrows;
	uint32_t rsv;
	uint8_t key[];
};

static inline const void *sl_partial_acc(const struct sl_partial *p)
{
	return p->key + SL_FRAME_ALIGN(p->klen);
}

/* Writes size, type and port as one 8-byte store (x86 retires stores in order, and the
 * producer of a ring is store-bound: ring benchmark in bench/). Little-endian layout. */
static inline void sl_frame_init(struct sl_frame *f, uint32_t size, uint8_t type, uint8_t port)
{
	uint64_t w = (uint64_t)size | (uint64_t)type << 32 | (uint64_t)port << 40;

	memcpy(f, &w, sizeof w);
}

static inline const struct sl_row *sl_frame_row(const struct sl_frame *f)
{
	return (const struct sl_row *)f->payload;
}

#endif
