/*
 * nexmark_gen.c - the Nexmark generator (nexmark_gen.h): ids, types, timestamps, hot keys,
 * strings and padding as nexmark/nexmark's Flink module makes them, with parallelism 1 and
 * every random draw from a stream that depends only on (seed, event number).
 *
 * The Java generator draws from an unseeded SplittableRandom, so only the structure (types,
 * ids of new entities, timestamps, the distributions) can be reproduced; the values here are
 * one reproducible sample of the same distributions. Bid URLs for channel k and the four hot
 * URLs come from their own (seed, k) streams, as the Java cache makes one URL per channel.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nexmark_gen.h"
#include "rand.h"

#define FIRST_PERSON_ID	       1000
#define FIRST_AUCTION_ID       1000
#define FIRST_CATEGORY_ID      10
#define NUM_CATEGORIES	       5
#define NUM_IN_FLIGHT_AUCTIONS 100
#define NUM_ACTIVE_PEOPLE      1000
#define PERSON_ID_LEAD	       10
#define AUCTION_ID_LEAD	       10
#define HOT_RATIO_100	       100
#define CHANNELS_NUMBER	       10000
#define MIN_STRING_LENGTH      3
#define MAX_AVG_SIZE	       (1 << 20)

struct rng {
	uint64_t s[4];
};

struct sl_nexmark_gen {
	struct sl_nexmark_cfg cfg;
	int64_t total;
	char *buf; /* scratch for one event's strings */
	size_t cap, used;
};

static const char *const first_names[] = { "Peter", "Paul",  "Luke",  "John",	"Saul",	 "Vicky",
					   "Kate",  "Julie", "Sarah", "Deiter", "Walter" };
static const char *const last_names[] = { "Shultz", "Abrams", "Spencer", "White", "Bartels",
					  "Walton", "Smith",  "Jones",	 "Noris" };
static const char *const states[] = { "AZ", "CA", "ID", "OR", "WA", "WY" };
static const char *const cities[] = { "Phoenix",  "Los Angeles", "San Francisco", "Boise",
				      "Portland", "Bend",	 "Redmond",	  "Seattle",
				      "Kent",	  "Cheyenne" };
static const char *const hot_channels[] = { "Google", "Facebook", "Baidu", "Apple" };

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void rng_seed(struct rng *r, uint64_t seed, uint64_t stream, uint64_t n)
{
	uint64_t x =
		seed ^ (0xd1b54a32d192ed03ull * (stream + 1)) ^ (0x8cb92ba72f3d8dd7ull * (n + 1));

	sl_rand_seed(r->s, x);
}

/* Uniform in [0, bound), bound > 0 (Lemire's multiply-shift, bias below 2^-64 * bound). */
static int64_t below(struct rng *r, int64_t bound)
{
	return (int64_t)sl_rand_below(r->s, (uint64_t)bound);
}

void sl_nexmark_cfg_default(struct sl_nexmark_cfg *cfg)
{
	*cfg = (struct sl_nexmark_cfg){
		.first_event_rate = 10000,
		.person_proportion = 1,
		.auction_proportion = 3,
		.bid_proportion = 46,
		.person_avg_size = 200,
		.auction_avg_size = 500,
		.bid_avg_size = 100,
		.hot_auction_ratio = 2,
		.hot_bidder_ratio = 4,
		.hot_seller_ratio = 4,
	};
}

int64_t sl_nexmark_last_person(const struct sl_nexmark_cfg *cfg, int64_t event_id)
{
	int64_t total = cfg->person_proportion + cfg->auction_proportion + cfg->bid_proportion;
	int64_t epoch = event_id / total, off = event_id % total;

	if (off >= cfg->person_proportion)
		off = cfg->person_proportion - 1;
	return epoch * cfg->person_proportion + off;
}

int64_t sl_nexmark_last_auction(const struct sl_nexmark_cfg *cfg, int64_t event_id)
{
	int64_t p = cfg->person_proportion, a = cfg->auction_proportion;
	int64_t total = p + a + cfg->bid_proportion;
	int64_t epoch = event_id / total, off = event_id % total;

	if (off < p) {
		epoch--;
		off = a - 1;
	} else if (off >= p + a) {
		off = a - 1;
	} else {
		off -= p;
	}
	return epoch * a + off;
}

int64_t sl_nexmark_ts(const struct sl_nexmark_cfg *cfg, uint64_t n)
{
	double delay_us = 1e6 / cfg->first_event_rate;

	return cfg->base_time_ms + (int64_t)((double)n * delay_us) / 1000;
}

struct sl_nexmark_gen *sl_nexmark_gen_create(const struct sl_nexmark_cfg *cfg, char *err,
					     size_t errlen)
{
	struct sl_nexmark_gen *g;
	const char *why = NULL;

	if (!(cfg->first_event_rate > 0))
		why = "first-event.rate must be above 0";
	else if (cfg->person_proportion < 1 || cfg->auction_proportion < 1 ||
		 cfg->bid_proportion < 1)
		why = "person/auction/bid.proportion must each be at least 1";
	else if (cfg->person_avg_size < 0 || cfg->auction_avg_size < 0 || cfg->bid_avg_size < 0 ||
		 cfg->person_avg_size > MAX_AVG_SIZE || cfg->auction_avg_size > MAX_AVG_SIZE ||
		 cfg->bid_avg_size > MAX_AVG_SIZE)
		why = "*.avg-size must be between 0 and 1048576";
	else if (cfg->hot_auction_ratio < 1 || cfg->hot_bidder_ratio < 1 ||
		 cfg->hot_seller_ratio < 1)
		why = "hot ratios must each be at least 1";
	if (why) {
		snprintf(err, errlen, "nexmark: %s", why);
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		goto out_nomem;
	g->cfg = *cfg;
	g->total = cfg->person_proportion + cfg->auction_proportion + cfg->bid_proportion;
	/* the largest extra is 1.2 x the average; the other strings stay under 512 bytes */
	g->cap = (size_t)cfg->person_avg_size + cfg->auction_avg_size + cfg->bid_avg_size;
	g->cap = g->cap + g->cap / 4 + 1024;
	g->buf = malloc(g->cap);
	if (!g->buf)
		goto out_free_gen;
	return g;

out_free_gen:
	free(g);
out_nomem:
	snprintf(err, errlen, "nexmark: out of memory");
	return NULL;
}

void sl_nexmark_gen_destroy(struct sl_nexmark_gen *g)
{
	if (!g)
		return;
	free(g->buf);
	free(g);
}

static char *take(struct sl_nexmark_gen *g, size_t n)
{
	char *p = g->buf + g->used;

	g->used += n;
	return p;
}

static struct sl_nexmark_str lit(const char *s)
{
	return (struct sl_nexmark_str){ s, (int32_t)strlen(s) };
}

/* Strings.nextString: MIN_STRING_LENGTH + U[0, max - MIN) chars, `special` with chance 1/13,
 * else 'a'..'z'; then String.trim() (which drops a leading or trailing ' '). */
static struct sl_nexmark_str next_string(struct sl_nexmark_gen *g, struct rng *r, int max,
					 char special)
{
	int len = MIN_STRING_LENGTH + (int)below(r, max - MIN_STRING_LENGTH);
	char *p = take(g, (size_t)len);
	int lo = 0, hi = len;

	for (int i = 0; i < len; i++)
		p[i] = below(r, 13) == 0 ? special : (char)('a' + below(r, 26));
	while (lo < hi && (unsigned char)p[lo] <= ' ')
		lo++;
	while (hi > lo && (unsigned char)p[hi - 1] <= ' ')
		hi--;
	return (struct sl_nexmark_str){ p + lo, hi - lo };
}

/* Strings.nextExtra: padding so that the event reaches `avg` bytes on average. */
static struct sl_nexmark_str next_extra(struct sl_nexmark_gen *g, struct rng *r, int cur, int avg)
{
	int delta, size;
	char *p;

	if (cur > avg)
		return (struct sl_nexmark_str){ "", 0 };
	avg -= cur;
	delta = (int)llround(avg * 0.2);
	size = avg - delta + (delta == 0 ? 0 : (int)below(r, 2 * (int64_t)delta));
	p = take(g, (size_t)size);
	for (int i = 0; i < size; i++)
		p[i] = (char)('a' + below(r, 26));
	return (struct sl_nexmark_str){ p, size };
}

/* PriceGenerator.nextPrice: round(10^(U[0,1) * 6) * 100). */
static int64_t next_price(struct rng *r)
{
	return llround(pow(10.0, sl_rand_unit(r->s) * 6.0) * 100.0);
}

static int64_t next_base0_person(const struct sl_nexmark_gen *g, struct rng *r, int64_t id)
{
	int64_t people = sl_nexmark_last_person(&g->cfg, id) + 1;
	int64_t active = people < NUM_ACTIVE_PEOPLE ? people : NUM_ACTIVE_PEOPLE;

	return people - active + below(r, active + PERSON_ID_LEAD);
}

static int64_t next_base0_auction(const struct sl_nexmark_gen *g, struct rng *r, int64_t id)
{
	int64_t last = sl_nexmark_last_auction(&g->cfg, id);
	int64_t min = last - NUM_IN_FLIGHT_AUCTIONS > 0 ? last - NUM_IN_FLIGHT_AUCTIONS : 0;

	return min + below(r, last - min + 1 + AUCTION_ID_LEAD);
}

static void gen_person(struct sl_nexmark_gen *g, struct rng *r, int64_t id,
		       struct sl_nexmark_event *ev)
{
	const char *first = first_names[below(r, NELEM(first_names))];
	const char *last = last_names[below(r, NELEM(last_names))];
	struct sl_nexmark_str a, b;
	char *p;
	int n, cur;

	ev->person.id = sl_nexmark_last_person(&g->cfg, id) + FIRST_PERSON_ID;
	p = take(g, 32);
	n = snprintf(p, 32, "%s %s", first, last);
	ev->person.name = (struct sl_nexmark_str){ p, n };
	a = next_string(g, r, 7, ' ');
	b = next_string(g, r, 5, ' ');
	p = take(g, (size_t)a.len + b.len + 5);
	memcpy(p, a.p, (size_t)a.len);
	p[a.len] = '@';
	memcpy(p + a.len + 1, b.p, (size_t)b.len);
	memcpy(p + a.len + 1 + b.len, ".com", 4);
	ev->person.email = (struct sl_nexmark_str){ p, a.len + b.len + 5 };
	p = take(g, 20);
	n = snprintf(p, 20, "%04d %04d %04d %04d", (int)below(r, 10000), (int)below(r, 10000),
		     (int)below(r, 10000), (int)below(r, 10000));
	ev->person.credit_card = (struct sl_nexmark_str){ p, n };
	ev->person.city = lit(cities[below(r, NELEM(cities))]);
	ev->person.state = lit(states[below(r, NELEM(states))]);
	cur = 8 + ev->person.name.len + ev->person.email.len + ev->person.credit_card.len +
	      ev->person.city.len + ev->person.state.len;
	ev->person.extra = next_extra(g, r, cur, g->cfg.person_avg_size);
}

static void gen_auction(struct sl_nexmark_gen *g, struct rng *r, uint64_t n, int64_t id,
			struct sl_nexmark_event *ev)
{
	int64_t seller, horizon;
	int cur;

	ev->auction.id = sl_nexmark_last_auction(&g->cfg, id) + FIRST_AUCTION_ID;
	if (below(r, g->cfg.hot_seller_ratio) > 0)
		seller = (sl_nexmark_last_person(&g->cfg, id) / HOT_RATIO_100) * HOT_RATIO_100;
	else
		seller = next_base0_person(g, r, id);
	ev->auction.seller = seller + FIRST_PERSON_ID;
	ev->auction.category = FIRST_CATEGORY_ID + below(r, NUM_CATEGORIES);
	ev->auction.initial_bid = next_price(r);
	horizon = sl_nexmark_ts(&g->cfg, n + (uint64_t)(NUM_IN_FLIGHT_AUCTIONS * g->total /
							g->cfg.auction_proportion)) -
		  ev->ts_ms;
	ev->auction.expires_ms = ev->ts_ms + 1 + below(r, horizon * 2 > 1 ? horizon * 2 : 1);
	ev->auction.item_name = next_string(g, r, 20, ' ');
	ev->auction.description = next_string(g, r, 100, ' ');
	ev->auction.reserve = ev->auction.initial_bid + next_price(r);
	cur = 8 + ev->auction.item_name.len + ev->auction.description.len + 8 + 8 + 8 + 8 + 8;
	ev->auction.extra = next_extra(g, r, cur, g->cfg.auction_avg_size);
}

/* The URL of channel `k` (k < 0: hot channel -1 - k), the same for every bid on it, as the
 * Java generator's per-channel cache makes it. */
static struct sl_nexmark_str channel_url(struct sl_nexmark_gen *g, int64_t k)
{
	static const char head[] = "https://www.nexmark.com/";
	static const char tail[] = "/item.htm?query=1";
	struct sl_nexmark_str s[3];
	struct rng r;
	char *p;
	int len = 0;

	rng_seed(&r, g->cfg.seed, 2, (uint64_t)(k + 4));
	for (int i = 0; i < 3; i++)
		s[i] = next_string(g, &r, 5, '_');
	p = take(g, 128);
	len += snprintf(p, 128, "%s%.*s/%.*s/%.*s%s", head, s[0].len, s[0].p, s[1].len, s[1].p,
			s[2].len, s[2].p, tail);
	if (k >= 0 && below(&r, 10) > 0) {
		uint32_t v = (uint32_t)k, rev = 0;

		for (int i = 0; i < 32; i++, v >>= 1)
			rev = (rev << 1) | (v & 1);
		/* Math.abs(Integer.reverse(k)) */
		len += snprintf(p + len, (size_t)(128 - len), "&channel_id=%lld",
				llabs((long long)(int32_t)rev));
	}
	return (struct sl_nexmark_str){ p, len };
}

static void gen_bid(struct sl_nexmark_gen *g, struct rng *r, int64_t id,
		    struct sl_nexmark_event *ev)
{
	int64_t auction, bidder;
	char *p;

	if (below(r, g->cfg.hot_auction_ratio) > 0)
		auction = (sl_nexmark_last_auction(&g->cfg, id) / HOT_RATIO_100) * HOT_RATIO_100;
	else
		auction = next_base0_auction(g, r, id);
	ev->bid.auction = auction + FIRST_AUCTION_ID;
	if (below(r, g->cfg.hot_bidder_ratio) > 0)
		bidder = (sl_nexmark_last_person(&g->cfg, id) / HOT_RATIO_100) * HOT_RATIO_100 + 1;
	else
		bidder = next_base0_person(g, r, id);
	/* FIRST_PERSON_ID twice: the Java generator's quirk, kept (bidders are +2000) */
	ev->bid.bidder = bidder + FIRST_PERSON_ID + FIRST_PERSON_ID;
	ev->bid.price = next_price(r);
	if (below(r, 2) > 0) {
		int64_t h = below(r, NELEM(hot_channels));

		ev->bid.channel = lit(hot_channels[h]);
		ev->bid.url = channel_url(g, -1 - h);
	} else {
		int64_t k = below(r, CHANNELS_NUMBER);
		int n;

		p = take(g, 16);
		n = snprintf(p, 16, "channel-%lld", (long long)k);
		ev->bid.channel = (struct sl_nexmark_str){ p, n };
		ev->bid.url = channel_url(g, k);
	}
	ev->bid.extra = next_extra(g, r, 32, g->cfg.bid_avg_size);
}

void sl_nexmark_gen_event(struct sl_nexmark_gen *g, uint64_t n, struct sl_nexmark_event *ev)
{
	int64_t id = (int64_t)n + 1, rem = id % g->total;
	struct rng r;

	g->used = 0;
	rng_seed(&r, g->cfg.seed, 1, n);
	ev->ts_ms = sl_nexmark_ts(&g->cfg, n);
	if (rem < g->cfg.person_proportion) {
		ev->type = SL_NEXMARK_PERSON;
		gen_person(g, &r, id, ev);
	} else if (rem < g->cfg.person_proportion + g->cfg.auction_proportion) {
		ev->type = SL_NEXMARK_AUCTION;
		gen_auction(g, &r, n, id, ev);
	} else {
		ev->type = SL_NEXMARK_BID;
		gen_bid(g, &r, id, ev);
	}
}
