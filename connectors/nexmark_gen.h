/*
 * nexmark_gen.h - the Nexmark event generator as a pure function of (config, seed, event
 * number), the rules of nexmark/nexmark's Flink module (GeneratorConfig, NexmarkGenerator,
 * Person/Auction/BidGenerator) with parallelism 1: event number n (1-based) has id n + 1,
 * its type from id mod (p+a+b), its timestamp base + n * 1e6/rate µs. Every random draw
 * of event n comes from a xoshiro256** stream seeded by (seed, n), so any cut of the event
 * number space into splits yields the same events, whatever the shard count.
 */
#ifndef SL_NEXMARK_GEN_H
#define SL_NEXMARK_GEN_H

#include <stddef.h>
#include <stdint.h>

enum sl_nexmark_type { SL_NEXMARK_PERSON = 0, SL_NEXMARK_AUCTION = 1, SL_NEXMARK_BID = 2 };

struct sl_nexmark_cfg {
	uint64_t seed;
	int64_t base_time_ms;	    /* timestamp of event number 0 */
	double first_event_rate;    /* events/s: spacing of the timestamps */
	int64_t person_proportion;  /* 1 */
	int64_t auction_proportion; /* 3 */
	int64_t bid_proportion;	    /* 46 */
	int32_t person_avg_size;    /* 200 */
	int32_t auction_avg_size;   /* 500 */
	int32_t bid_avg_size;	    /* 100 */
	int32_t hot_auction_ratio;  /* bid.hot-ratio.auctions, 2 */
	int32_t hot_bidder_ratio;   /* bid.hot-ratio.bidders, 4 */
	int32_t hot_seller_ratio;   /* auction.hot-ratio.sellers, 4 */
};

/* A string field: borrows the generator's scratch, valid until its next sl_nexmark_gen_event. */
struct sl_nexmark_str {
	const char *p;
	int32_t len;
};

struct sl_nexmark_event {
	enum sl_nexmark_type type;
	int64_t ts_ms; /* the event's dateTime */
	struct {
		int64_t id;
		struct sl_nexmark_str name, email, credit_card, city, state, extra;
	} person;
	struct {
		int64_t id, initial_bid, reserve, expires_ms, seller, category;
		struct sl_nexmark_str item_name, description, extra;
	} auction;
	struct {
		int64_t auction, bidder, price;
		struct sl_nexmark_str channel, url, extra;
	} bid;
};

struct sl_nexmark_gen;

/* Fills `cfg` with the defaults of Flink's nexmark connector (seed 0, base time 0). */
void sl_nexmark_cfg_default(struct sl_nexmark_cfg *cfg);

/* Returns a generator for `cfg` (copied), or NULL with a one-line reason in `err`. Caller
 * frees with sl_nexmark_gen_destroy. One thread at a time. */
struct sl_nexmark_gen *sl_nexmark_gen_create(const struct sl_nexmark_cfg *cfg, char *err,
					     size_t errlen);
void sl_nexmark_gen_destroy(struct sl_nexmark_gen *g);

/* Fills `ev` with event number `n` (1-based: the Java generator's first event is n = 1).
 * Its strings borrow `g` until the next call. */
void sl_nexmark_gen_event(struct sl_nexmark_gen *g, uint64_t n, struct sl_nexmark_event *ev);

/* The id rules of GeneratorConfig, exported for the tests. */
int64_t sl_nexmark_last_person(const struct sl_nexmark_cfg *cfg, int64_t event_id);
int64_t sl_nexmark_last_auction(const struct sl_nexmark_cfg *cfg, int64_t event_id);
int64_t sl_nexmark_ts(const struct sl_nexmark_cfg *cfg, uint64_t n);

#endif
