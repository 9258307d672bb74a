/*
 * nexmark_gen_test.c - the Nexmark generator against the rules of nexmark/nexmark's Flink
 * generator: the 1/3/46 type blocks and first events, id rules, proportions and hot-key
 * ratios over a long run, id ranges, timestamps from the rate, string shapes and average
 * sizes, and the same events for a seed whatever order or cut they are made in.
 */
#include <string.h>

#include "connectors/nexmark_gen.h"
#include "tests/test.h"

#define N 500000

/* The event's fields in one line, for comparing two generators' output. */
static void show(const struct sl_nexmark_event *e, char *out, size_t cap)
{
	switch (e->type) {
	case SL_NEXMARK_PERSON:
		snprintf(out, cap, "P %lld %lld %.*s %.*s %.*s %.*s %.*s %.*s", (long long)e->ts_ms,
			 (long long)e->person.id, e->person.name.len, e->person.name.p,
			 e->person.email.len, e->person.email.p, e->person.credit_card.len,
			 e->person.credit_card.p, e->person.city.len, e->person.city.p,
			 e->person.state.len, e->person.state.p, e->person.extra.len,
			 e->person.extra.p);
		break;
	case SL_NEXMARK_AUCTION:
		snprintf(out, cap, "A %lld %lld %lld %lld %lld %lld %lld %.*s %.*s %.*s",
			 (long long)e->ts_ms, (long long)e->auction.id,
			 (long long)e->auction.initial_bid, (long long)e->auction.reserve,
			 (long long)e->auction.expires_ms, (long long)e->auction.seller,
			 (long long)e->auction.category, e->auction.item_name.len,
			 e->auction.item_name.p, e->auction.description.len,
			 e->auction.description.p, e->auction.extra.len, e->auction.extra.p);
		break;
	case SL_NEXMARK_BID:
		snprintf(out, cap, "B %lld %lld %lld %lld %.*s %.*s %.*s", (long long)e->ts_ms,
			 (long long)e->bid.auction, (long long)e->bid.bidder,
			 (long long)e->bid.price, e->bid.channel.len, e->bid.channel.p,
			 e->bid.url.len, e->bid.url.p, e->bid.extra.len, e->bid.extra.p);
		break;
	}
}

static int is_lower(struct sl_nexmark_str s)
{
	for (int i = 0; i < s.len; i++)
		if (s.p[i] < 'a' || s.p[i] > 'z')
			return 0;
	return 1;
}

int main(void)
{
	struct sl_nexmark_cfg cfg;
	struct sl_nexmark_gen *g, *h;
	struct sl_nexmark_event ev, ev2;
	char err[128];
	long long types[3] = { 0 }, hot_auc = 0, hot_bidder = 0, hot_seller = 0;
	long long bytes[3] = { 0 }, hot_ch = 0, max_person = 0, max_auction = 0;
	int64_t prev_ts = -1;

	sl_nexmark_cfg_default(&cfg);
	cfg.seed = 42;
	cfg.base_time_ms = 1700000000000LL;
	cfg.first_event_rate = 1000000;
	g = sl_nexmark_gen_create(&cfg, err, sizeof(err));
	h = sl_nexmark_gen_create(&cfg, err, sizeof(err));
	T_ASSERT(g && h);

	/* split 0's first events: ids 2, 3 auctions, 4..49 bids, id 50 (n = 49) a person; the
	 * Java generator starts at event id 2, so auction 1000 and person 1000 never occur */
	sl_nexmark_gen_event(g, 1, &ev);
	T_ASSERT_EQ_I64(ev.type, SL_NEXMARK_AUCTION);
	T_ASSERT_EQ_I64(ev.auction.id, 1001);
	sl_nexmark_gen_event(g, 2, &ev);
	T_ASSERT_EQ_I64(ev.type, SL_NEXMARK_AUCTION);
	T_ASSERT_EQ_I64(ev.auction.id, 1002);
	sl_nexmark_gen_event(g, 3, &ev);
	T_ASSERT_EQ_I64(ev.type, SL_NEXMARK_BID);
	sl_nexmark_gen_event(g, 49, &ev);
	T_ASSERT_EQ_I64(ev.type, SL_NEXMARK_PERSON);
	T_ASSERT_EQ_I64(ev.person.id, 1001);
	sl_nexmark_gen_event(g, 50, &ev);
	T_ASSERT_EQ_I64(ev.type, SL_NEXMARK_AUCTION);
	T_ASSERT_EQ_I64(ev.auction.id, 1003);
	/* the id rules: id 1 is the first person, 51 the second; auctions 3 per 50 */
	T_ASSERT_EQ_I64(sl_nexmark_last_person(&cfg, 1), 0);
	T_ASSERT_EQ_I64(sl_nexmark_last_person(&cfg, 50), 1);
	T_ASSERT_EQ_I64(sl_nexmark_last_person(&cfg, 99), 1);
	T_ASSERT_EQ_I64(sl_nexmark_last_auction(&cfg, 2), 1);
	T_ASSERT_EQ_I64(sl_nexmark_last_auction(&cfg, 4), 2);
	T_ASSERT_EQ_I64(sl_nexmark_last_auction(&cfg, 49), 2);
	T_ASSERT_EQ_I64(sl_nexmark_last_auction(&cfg, 50), 2);
	T_ASSERT_EQ_I64(sl_nexmark_last_auction(&cfg, 52), 4);

	for (uint64_t n = 1; n <= N; n++) {
		int64_t id = (int64_t)n + 1;
		int64_t lp = sl_nexmark_last_person(&cfg, id);
		int64_t la = sl_nexmark_last_auction(&cfg, id);

		sl_nexmark_gen_event(g, n, &ev);
		types[ev.type]++;
		/* 1 µs per event: ts = base + n / 1000, never decreasing */
		T_ASSERT_EQ_I64(ev.ts_ms, cfg.base_time_ms + (int64_t)n / 1000);
		T_ASSERT(ev.ts_ms >= prev_ts);
		prev_ts = ev.ts_ms;
		switch (ev.type) {
		case SL_NEXMARK_PERSON:
			T_ASSERT_EQ_I64(ev.person.id, lp + 1000);
			T_ASSERT(ev.person.id > max_person);
			max_person = ev.person.id;
			T_ASSERT(ev.person.credit_card.len == 19);
			T_ASSERT(memchr(ev.person.email.p, '@', (size_t)ev.person.email.len));
			T_ASSERT(ev.person.state.len == 2);
			T_ASSERT(is_lower(ev.person.extra));
			bytes[0] += 8 + ev.person.name.len + ev.person.email.len +
				    ev.person.credit_card.len + ev.person.city.len +
				    ev.person.state.len + ev.person.extra.len;
			break;
		case SL_NEXMARK_AUCTION:
			T_ASSERT_EQ_I64(ev.auction.id, la + 1000);
			T_ASSERT(ev.auction.id > max_auction);
			max_auction = ev.auction.id;
			T_ASSERT(ev.auction.category >= 10 && ev.auction.category <= 14);
			T_ASSERT(ev.auction.reserve > ev.auction.initial_bid);
			T_ASSERT(ev.auction.initial_bid >= 100 &&
				 ev.auction.initial_bid <= 100000000);
			T_ASSERT(ev.auction.expires_ms > ev.ts_ms);
			T_ASSERT(ev.auction.item_name.len <= 19);
			T_ASSERT(ev.auction.description.len <= 99);
			/* seller: the hot one, or among the last 1000 people + 10 */
			if (ev.auction.seller == (lp / 100) * 100 + 1000)
				hot_seller++;
			else
				T_ASSERT(ev.auction.seller >=
					 (lp + 1 > 1000 ? lp + 1 - 1000 : 0) + 1000);
			T_ASSERT(ev.auction.seller <= lp + 10 + 1000);
			bytes[1] += 8 + ev.auction.item_name.len + ev.auction.description.len +
				    40 + ev.auction.extra.len;
			break;
		case SL_NEXMARK_BID:
			T_ASSERT(ev.bid.auction >= 1000 && ev.bid.auction <= la + 10 + 1000);
			T_ASSERT(ev.bid.auction >= (la - 100 > 0 ? la - 100 : 0) + 1000 ||
				 ev.bid.auction == (la / 100) * 100 + 1000);
			T_ASSERT(ev.bid.bidder >= 2000 && ev.bid.bidder <= lp + 10 + 2000);
			T_ASSERT(ev.bid.price >= 100 && ev.bid.price <= 100000000);
			T_ASSERT(ev.bid.url.len > 30 &&
				 memcmp(ev.bid.url.p, "https://www.nexmark.com/", 24) == 0);
			hot_auc += ev.bid.auction == (la / 100) * 100 + 1000;
			hot_bidder += ev.bid.bidder == (lp / 100) * 100 + 1 + 2000;
			hot_ch += !(ev.bid.channel.len >= 8 && !memcmp(ev.bid.channel.p, "channel-", 8));
			bytes[2] += 32 + ev.bid.extra.len;
			break;
		}
		/* a fresh generator makes the same event: no state carries between events */
		if (n % 997 == 0) {
			sl_nexmark_gen_event(h, n, &ev2);
			T_ASSERT_EQ_I64(ev2.type, ev.type);
			T_ASSERT_EQ_I64(ev2.ts_ms, ev.ts_ms);
			if (ev.type == SL_NEXMARK_BID) {
				T_ASSERT_EQ_I64(ev2.bid.price, ev.bid.price);
				T_ASSERT_EQ_I64(ev2.bid.bidder, ev.bid.bidder);
				T_ASSERT(ev2.bid.url.len == ev.bid.url.len);
			} else if (ev.type == SL_NEXMARK_AUCTION) {
				T_ASSERT_EQ_I64(ev2.auction.seller, ev.auction.seller);
				T_ASSERT_EQ_I64(ev2.auction.expires_ms, ev.auction.expires_ms);
			} else {
				T_ASSERT(ev2.person.name.len == ev.person.name.len);
			}
		}
	}
	/* exact 1/3/46 blocks */
	T_ASSERT_EQ_I64(types[0], N / 50);
	T_ASSERT_EQ_I64(types[1], 3 * (N / 50));
	T_ASSERT_EQ_I64(types[2], 46 * (N / 50));
	/* hot ratios: bids on a hot auction >= 1/2 (cold picks can hit it too), bidders and
	 * sellers >= 3/4; within a few standard deviations above */
	T_ASSERT(hot_auc > types[2] * 0.49 && hot_auc < types[2] * 0.52);
	T_ASSERT(hot_bidder > types[2] * 0.745 && hot_bidder < types[2] * 0.76);
	T_ASSERT(hot_seller > types[1] * 0.74 && hot_seller < types[1] * 0.77);
	T_ASSERT(hot_ch > types[2] * 0.49 && hot_ch < types[2] * 0.51);
	/* average sizes the extra pads to */
	T_ASSERT(bytes[0] / types[0] >= 195 && bytes[0] / types[0] <= 205);
	T_ASSERT(bytes[1] / types[1] >= 495 && bytes[1] / types[1] <= 505);
	T_ASSERT(bytes[2] / types[2] >= 98 && bytes[2] / types[2] <= 102);

	/* the same events whichever generator makes them and in which order (a split's cut
	 * and its shard do not matter): backwards through a fresh generator */
	{
		static char a[4096], b[4096];

		for (uint64_t n = 5000; n >= 1; n--) {
			sl_nexmark_gen_event(g, n, &ev);
			show(&ev, a, sizeof(a));
			sl_nexmark_gen_event(h, 5001 - n, &ev2);
			sl_nexmark_gen_event(h, n, &ev2);
			show(&ev2, b, sizeof(b));
			T_ASSERT(strcmp(a, b) == 0);
		}
		/* a URL is the same for every bid on its channel */
		b[0] = 0;
		for (uint64_t n = 3; n < 20000; n++) {
			sl_nexmark_gen_event(g, n, &ev);
			if (ev.type == SL_NEXMARK_BID && ev.bid.channel.len == 6 &&
			    memcmp(ev.bid.channel.p, "Google", 6) == 0) {
				memcpy(a, ev.bid.url.p, (size_t)ev.bid.url.len);
				a[ev.bid.url.len] = 0;
				if (!b[0])
					strcpy(b, a);
				T_ASSERT(strcmp(a, b) == 0);
			}
		}
	}

	/* another seed gives other values */
	sl_nexmark_gen_destroy(h);
	cfg.seed = 43;
	h = sl_nexmark_gen_create(&cfg, err, sizeof(err));
	T_ASSERT(h);
	{
		int differ = 0;

		for (uint64_t n = 3; n < 100; n++) {
			sl_nexmark_gen_event(g, n, &ev);
			sl_nexmark_gen_event(h, n, &ev2);
			differ += ev.type == SL_NEXMARK_BID && ev.bid.price != ev2.bid.price;
		}
		T_ASSERT(differ > 40);
	}
	cfg.first_event_rate = 0;
	T_ASSERT(sl_nexmark_gen_create(&cfg, err, sizeof(err)) == NULL);
	T_ASSERT(strstr(err, "first-event.rate"));
	sl_nexmark_gen_destroy(g);
	sl_nexmark_gen_destroy(h);
	return T_EXIT_PASS;
}
