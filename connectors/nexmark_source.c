/*
 * nexmark_source.c - the Nexmark source (nexmark_source.h): split k of S emits event numbers
 * k + 1, k + 1 + S, k + 1 + 2S, ... up to events.num, each built by the pure generator and
 * written into the columns the table declares.
 *
 * Dealing events round-robin (instead of cutting the number space into ranges) keeps every
 * split's timestamps at the same pace, as the Java generator's P sub-generators share one
 * timestamp sequence: the per-split watermarks stay together and windows close in step. Each
 * split is in timestamp order, so with the DDL's watermark no event is late.
 *
 * Per event: one generator call (a few dozen xoshiro draws and the padding) and one row; no
 * allocation. Pacing (max-emit-speed = false) reads the monotonic clock once per poll.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nexmark_source.h"
#include "source.h"

static const struct {
	const char *name;
	char kind; /* 'i' INT, 'l' BIGINT, 's' STRING, 't' TIMESTAMP */
} cols[SL_NXC_COUNT] = {
	[SL_NXC_EVENT_TYPE] = { "event_type", 'i' },
	[SL_NXC_P_ID] = { "person.id", 'l' },
	[SL_NXC_P_NAME] = { "person.name", 's' },
	[SL_NXC_P_EMAIL] = { "person.emailAddress", 's' },
	[SL_NXC_P_CARD] = { "person.creditCard", 's' },
	[SL_NXC_P_CITY] = { "person.city", 's' },
	[SL_NXC_P_STATE] = { "person.state", 's' },
	[SL_NXC_P_TIME] = { "person.dateTime", 't' },
	[SL_NXC_P_EXTRA] = { "person.extra", 's' },
	[SL_NXC_A_ID] = { "auction.id", 'l' },
	[SL_NXC_A_ITEM] = { "auction.itemName", 's' },
	[SL_NXC_A_DESC] = { "auction.description", 's' },
	[SL_NXC_A_INITIAL] = { "auction.initialBid", 'l' },
	[SL_NXC_A_RESERVE] = { "auction.reserve", 'l' },
	[SL_NXC_A_TIME] = { "auction.dateTime", 't' },
	[SL_NXC_A_EXPIRES] = { "auction.expires", 't' },
	[SL_NXC_A_SELLER] = { "auction.seller", 'l' },
	[SL_NXC_A_CATEGORY] = { "auction.category", 'l' },
	[SL_NXC_A_EXTRA] = { "auction.extra", 's' },
	[SL_NXC_B_AUCTION] = { "bid.auction", 'l' },
	[SL_NXC_B_BIDDER] = { "bid.bidder", 'l' },
	[SL_NXC_B_PRICE] = { "bid.price", 'l' },
	[SL_NXC_B_CHANNEL] = { "bid.channel", 's' },
	[SL_NXC_B_URL] = { "bid.url", 's' },
	[SL_NXC_B_TIME] = { "bid.dateTime", 't' },
	[SL_NXC_B_EXTRA] = { "bid.extra", 's' },
};

const char *sl_nexmark_col_name(enum sl_nexmark_col c)
{
	return c >= 0 && c < SL_NXC_COUNT ? cols[c].name : "?";
}

int sl_nexmark_col_find(const char *name)
{
	for (int c = 0; c < SL_NXC_COUNT; c++)
		if (!strcmp(cols[c].name, name))
			return c;
	return -1;
}

bool sl_nexmark_col_fits(enum sl_nexmark_col c, enum sl_type t)
{
	switch (cols[c].kind) {
	case 'i':
		return t == SL_TYPE_INT || t == SL_TYPE_BIGINT;
	case 'l':
		return t == SL_TYPE_BIGINT;
	case 's':
		return t == SL_TYPE_STRING;
	default:
		return t == SL_TYPE_TIMESTAMP || t == SL_TYPE_TIMESTAMP_LTZ;
	}
}

struct nx_split {
	const struct sl_nexmark_source_cfg *cfg;
	struct sl_nexmark_gen *gen;
	uint64_t split, nsplits;
	uint64_t k;	/* events this split has emitted */
	uint64_t total; /* events this split emits; UINT64_MAX: unbounded */
	uint64_t t0_ns; /* first paced poll; 0: not started */
	uint64_t k0;	/* k at that poll */
};

static int nx_nsplits(const void *cfg)
{
	return ((const struct sl_nexmark_source_cfg *)cfg)->nsplits;
}

static void deal(struct nx_split *s)
{
	uint64_t n = s->cfg->events;

	if (n == UINT64_MAX)
		s->total = UINT64_MAX;
	else
		s->total = n > s->split ? (n - s->split + s->nsplits - 1) / s->nsplits : 0;
}

static void *nx_open(const void *cfgp, int split, struct sl_error *err)
{
	const struct sl_nexmark_source_cfg *cfg = cfgp;
	struct nx_split *s;
	char why[160];

	if (!cfg->cols || cfg->nsplits < 1 || split < 0 || split >= cfg->nsplits) {
		err->code = -EINVAL;
		snprintf(err->msg, sizeof err->msg, "nexmark: split %d of %d, or no columns", split,
			 cfg->nsplits);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		err->code = -ENOMEM;
		snprintf(err->msg, sizeof err->msg, "nexmark: out of memory");
		return NULL;
	}
	s->gen = sl_nexmark_gen_create(&cfg->gen, why, sizeof why);
	if (!s->gen) {
		free(s);
		err->code = -EINVAL;
		snprintf(err->msg, sizeof err->msg, "nexmark: %s", why);
		return NULL;
	}
	s->cfg = cfg;
	s->split = (uint64_t)split;
	s->nsplits = (uint64_t)cfg->nsplits;
	deal(s);
	return s;
}

static void nx_close(void *state)
{
	struct nx_split *s = state;

	if (!s)
		return;
	sl_nexmark_gen_destroy(s->gen);
	free(s);
}

static void set_str(struct sl_row_builder *b, int i, struct sl_nexmark_str v)
{
	sl_rowb_set_str(b, i, v.p, (uint32_t)v.len);
}

/* The event type whose ROW column c belongs to; event_type belongs to all. */
static bool col_of(enum sl_nexmark_col c, enum sl_nexmark_type t)
{
	if (c == SL_NXC_EVENT_TYPE)
		return true;
	if (c < SL_NXC_A_ID)
		return t == SL_NEXMARK_PERSON;
	if (c < SL_NXC_B_AUCTION)
		return t == SL_NEXMARK_AUCTION;
	return t == SL_NEXMARK_BID;
}

/* One field of the event's own ROW; fields of the other two stay NULL (not called). */
static void set_field(struct sl_row_builder *b, int i, enum sl_nexmark_col c,
		      const struct sl_nexmark_event *e)
{
	switch (c) {
	case SL_NXC_EVENT_TYPE:
		sl_rowb_set_i64(b, i, (int64_t)e->type);
		return;
	case SL_NXC_P_ID:
		sl_rowb_set_i64(b, i, e->person.id);
		return;
	case SL_NXC_P_NAME:
		set_str(b, i, e->person.name);
		return;
	case SL_NXC_P_EMAIL:
		set_str(b, i, e->person.email);
		return;
	case SL_NXC_P_CARD:
		set_str(b, i, e->person.credit_card);
		return;
	case SL_NXC_P_CITY:
		set_str(b, i, e->person.city);
		return;
	case SL_NXC_P_STATE:
		set_str(b, i, e->person.state);
		return;
	case SL_NXC_P_TIME:
		sl_rowb_set_i64(b, i, e->ts_ms);
		return;
	case SL_NXC_P_EXTRA:
		set_str(b, i, e->person.extra);
		return;
	case SL_NXC_A_ID:
		sl_rowb_set_i64(b, i, e->auction.id);
		return;
	case SL_NXC_A_ITEM:
		set_str(b, i, e->auction.item_name);
		return;
	case SL_NXC_A_DESC:
		set_str(b, i, e->auction.description);
		return;
	case SL_NXC_A_INITIAL:
		sl_rowb_set_i64(b, i, e->auction.initial_bid);
		return;
	case SL_NXC_A_RESERVE:
		sl_rowb_set_i64(b, i, e->auction.reserve);
		return;
	case SL_NXC_A_TIME:
		sl_rowb_set_i64(b, i, e->ts_ms);
		return;
	case SL_NXC_A_EXPIRES:
		sl_rowb_set_i64(b, i, e->auction.expires_ms);
		return;
	case SL_NXC_A_SELLER:
		sl_rowb_set_i64(b, i, e->auction.seller);
		return;
	case SL_NXC_A_CATEGORY:
		sl_rowb_set_i64(b, i, e->auction.category);
		return;
	case SL_NXC_A_EXTRA:
		set_str(b, i, e->auction.extra);
		return;
	case SL_NXC_B_AUCTION:
		sl_rowb_set_i64(b, i, e->bid.auction);
		return;
	case SL_NXC_B_BIDDER:
		sl_rowb_set_i64(b, i, e->bid.bidder);
		return;
	case SL_NXC_B_PRICE:
		sl_rowb_set_i64(b, i, e->bid.price);
		return;
	case SL_NXC_B_CHANNEL:
		set_str(b, i, e->bid.channel);
		return;
	case SL_NXC_B_URL:
		set_str(b, i, e->bid.url);
		return;
	case SL_NXC_B_TIME:
		sl_rowb_set_i64(b, i, e->ts_ms);
		return;
	case SL_NXC_B_EXTRA:
		set_str(b, i, e->bid.extra);
		return;
	case SL_NXC_COUNT:
		return;
	}
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* How many events may go now: all of `budget` at max speed, else those due at this
 * split's share of first-event.rate since the split started. */
static uint64_t due_now(struct nx_split *s, uint64_t budget)
{
	uint64_t now, due;

	if (!s->cfg->paced)
		return budget;
	now = now_ns();
	if (!s->t0_ns) {
		s->t0_ns = now - 1; /* never 0 again: 0 means "not started" */
		s->k0 = s->k;
	}
	due = s->k0 + 1 +
	      (uint64_t)((double)(now - s->t0_ns) * s->cfg->gen.first_event_rate /
			 (1e9 * (double)s->nsplits));
	if (due <= s->k)
		return 0;
	return due - s->k < budget ? due - s->k : budget;
}

static int nx_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct nx_split *s = state;
	uint64_t budget;
	struct sl_nexmark_event ev;

	if (s->k >= s->total)
		return SL_SRC_EOF;
	budget = due_now(s, (uint64_t)(max > 0 ? max : 0));
	if (s->total - s->k < budget)
		budget = s->total - s->k;
	for (uint64_t j = 0; j < budget; j++) {
		uint64_t n = s->k * s->nsplits + s->split + 1;
		struct sl_row_builder b;
		const struct sl_row *row;
		int rc;

		sl_nexmark_gen_event(s->gen, n, &ev);
		sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, s->cfg->nfields);
		for (int i = 0; i < s->cfg->nfields; i++)
			if (col_of(s->cfg->cols[i], ev.type))
				set_field(&b, i, s->cfg->cols[i], &ev);
		row = sl_rowb_finish(&b);
		if (!row) /* the binder bounds *.avg-size so that this cannot happen */
			return -ENOSPC;
		s->k++;
		rc = sl_src_emit(c, row);
		if (rc < 0)
			return rc;
	}
	return (int)budget;
}

/* Checkpoints: a split resumes from its event count (the events are a function of their
 * number, so nothing else is state); the split count travels along to refuse a restore
 * into a table declared with another 'splits'. */
struct nx_pos {
	uint64_t k, nsplits;
};

static int nx_position(void *state, void *buf, size_t cap, size_t *len)
{
	const struct nx_split *s = state;
	struct nx_pos p = { .k = s->k, .nsplits = s->nsplits };

	if (cap < sizeof p)
		return -ENOSPC;
	memcpy(buf, &p, sizeof p);
	*len = sizeof p;
	return 0;
}

static int nx_seek(void *state, const void *pos, size_t len)
{
	struct nx_split *s = state;
	struct nx_pos p;

	if (len != sizeof p)
		return -EINVAL;
	memcpy(&p, pos, sizeof p);
	if (p.nsplits != s->nsplits || p.k > s->total)
		return -EINVAL;
	s->k = p.k;
	s->t0_ns = 0; /* the pace counts from the restart */
	return 0;
}

static void nx_progress(void *state, struct sl_src_progress *p)
{
	const struct nx_split *s = state;

	snprintf(p->name, sizeof p->name, "%llu of %llu", (unsigned long long)s->split,
		 (unsigned long long)s->nsplits);
	p->kind = "nexmark split";
	p->pos = (int64_t)s->k;
	if (s->total != UINT64_MAX)
		p->end = (int64_t)s->total;
}

const struct sl_source_ops sl_nexmark_source_ops = {
	.name = "nexmark",
	.nsplits = nx_nsplits,
	.open = nx_open,
	.poll = nx_poll,
	.close = nx_close,
	.position = nx_position,
	.seek = nx_seek,
	.progress = nx_progress,
};
