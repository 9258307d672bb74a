/*
 * nexmark_source_test.c - 'connector' = 'nexmark' bound from WITH options and drained split by
 * split: every row is the generator's event of its number, field by field (the event's own
 * ROW set, the other two NULL); the counts per type are the 1:3:46 blocks counted by hand;
 * 1, 3 and 8 splits give every event number exactly once; a split restored from its position
 * goes on with the same rows; and every bad option or column fails naming it.
 */
#include "conn_harness.h"
#include "nexmark_source.h"
#include "sql_options.h"

static char err[512];

#define MAXO 32
struct opts {
	struct sl_sql_conn_opt o[MAXO];
	int n;
};

/* Options from "key", "value" pairs (the connector first), at line 10+i, column 3. */
static struct opts mk(const char *const *kv)
{
	struct opts o = { .n = 0 };

	o.o[o.n++] = (struct sl_sql_conn_opt){ "connector", "nexmark", 9, 3, false };
	for (int i = 0; kv[i]; i += 2) {
		o.o[o.n] = (struct sl_sql_conn_opt){ kv[i], kv[i + 1], (uint32_t)(10 + o.n), 3,
						     false };
		o.n++;
	}
	return o;
}

static int bind(const struct sl_schema *s, const char *const *kv, struct sl_sql_conn *c)
{
	struct opts o = mk(kv);
	struct sl_sql_conn_table t = { .schema = s, .opts = o.o, .nopts = o.n, .file = "job.sql" };

	return sl_sql_conn_bind_source(&t, c, err, sizeof err);
}

/* The whole table of nexmark's ddl, in its order, with Flink's types. */
static struct sl_schema *full_schema(void)
{
	struct sl_schema *s = sl_schema_create();

	T_ASSERT(s);
	for (int c = 0; c < SL_NXC_COUNT; c++) {
		enum sl_type t = SL_TYPE_BIGINT;

		if (c == SL_NXC_EVENT_TYPE)
			t = SL_TYPE_INT;
		else if (sl_nexmark_col_fits(c, SL_TYPE_STRING))
			t = SL_TYPE_STRING;
		else if (sl_nexmark_col_fits(c, SL_TYPE_TIMESTAMP))
			t = SL_TYPE_TIMESTAMP;
		T_ASSERT(sl_schema_add(s, sl_nexmark_col_name(c), t) >= 0);
	}
	return s;
}

static void want_str(const struct sl_row *r, int i, struct sl_nexmark_str v)
{
	uint32_t len;
	const char *p = sl_row_str(r, i, &len);

	T_ASSERT(!sl_row_is_null(r, i));
	T_ASSERT_EQ_I64(len, v.len);
	T_ASSERT(memcmp(p, v.p, len) == 0);
}

static void want_i64(const struct sl_row *r, int i, int64_t v)
{
	T_ASSERT(!sl_row_is_null(r, i));
	T_ASSERT_EQ_I64(sl_row_i64(r, i), v);
}

/* Row r (of the full schema) is event e: its own ROW's fields, the others NULL. */
static void check_row(const struct sl_row *r, const struct sl_nexmark_event *e)
{
	int own_lo = e->type == SL_NEXMARK_PERSON    ? SL_NXC_P_ID
		     : e->type == SL_NEXMARK_AUCTION ? SL_NXC_A_ID
						     : SL_NXC_B_AUCTION;
	int own_hi = e->type == SL_NEXMARK_PERSON    ? SL_NXC_A_ID
		     : e->type == SL_NEXMARK_AUCTION ? SL_NXC_B_AUCTION
						     : SL_NXC_COUNT;

	want_i64(r, SL_NXC_EVENT_TYPE, e->type);
	for (int c = 1; c < SL_NXC_COUNT; c++)
		T_ASSERT(sl_row_is_null(r, c) == (c < own_lo || c >= own_hi));
	switch (e->type) {
	case SL_NEXMARK_PERSON:
		want_i64(r, SL_NXC_P_ID, e->person.id);
		want_str(r, SL_NXC_P_NAME, e->person.name);
		want_str(r, SL_NXC_P_EMAIL, e->person.email);
		want_str(r, SL_NXC_P_CARD, e->person.credit_card);
		want_str(r, SL_NXC_P_CITY, e->person.city);
		want_str(r, SL_NXC_P_STATE, e->person.state);
		want_i64(r, SL_NXC_P_TIME, e->ts_ms);
		want_str(r, SL_NXC_P_EXTRA, e->person.extra);
		break;
	case SL_NEXMARK_AUCTION:
		want_i64(r, SL_NXC_A_ID, e->auction.id);
		want_str(r, SL_NXC_A_ITEM, e->auction.item_name);
		want_str(r, SL_NXC_A_DESC, e->auction.description);
		want_i64(r, SL_NXC_A_INITIAL, e->auction.initial_bid);
		want_i64(r, SL_NXC_A_RESERVE, e->auction.reserve);
		want_i64(r, SL_NXC_A_TIME, e->ts_ms);
		want_i64(r, SL_NXC_A_EXPIRES, e->auction.expires_ms);
		want_i64(r, SL_NXC_A_SELLER, e->auction.seller);
		want_i64(r, SL_NXC_A_CATEGORY, e->auction.category);
		want_str(r, SL_NXC_A_EXTRA, e->auction.extra);
		break;
	case SL_NEXMARK_BID:
		want_i64(r, SL_NXC_B_AUCTION, e->bid.auction);
		want_i64(r, SL_NXC_B_BIDDER, e->bid.bidder);
		want_i64(r, SL_NXC_B_PRICE, e->bid.price);
		want_str(r, SL_NXC_B_CHANNEL, e->bid.channel);
		want_str(r, SL_NXC_B_URL, e->bid.url);
		want_i64(r, SL_NXC_B_TIME, e->ts_ms);
		want_str(r, SL_NXC_B_EXTRA, e->bid.extra);
		break;
	}
}

#define EVENTS 2000

/* Drains every split of `nsplits`; each row must be the generator's event of its number. */
static void every_split(int nsplits)
{
	struct sl_schema *s = full_schema();
	char splits[16];
	const char *kv[] = { "events.num", "2000", "seed", "7", "splits", splits, NULL };
	struct sl_sql_conn c;
	struct sl_nexmark_cfg g;
	struct sl_nexmark_gen *gen;
	struct sl_nexmark_event ev;
	static bool seen[EVENTS + 1];
	int64_t types[3] = { 0 };
	struct harness h;

	snprintf(splits, sizeof splits, "%d", nsplits);
	T_ASSERT(bind(s, kv, &c) == 0);
	T_ASSERT(c.src_ops == &sl_nexmark_source_ops);
	T_ASSERT_EQ_I64(c.src_ops->nsplits(c.cfg), nsplits);
	sl_nexmark_cfg_default(&g);
	g.seed = 7;
	g.base_time_ms = 1436918400000LL; /* the default base-time, 2015-07-15 */
	gen = sl_nexmark_gen_create(&g, err, sizeof err);
	T_ASSERT(gen);
	memset(seen, 0, sizeof seen);
	h_init(&h);
	for (int k = 0; k < nsplits; k++) {
		h_reset(&h);
		h_drain(&h, c.src_ops, c.cfg, k, 37);
		for (size_t j = 0; j < h.nrows; j++) {
			uint64_t n = j * (uint64_t)nsplits + (uint64_t)k + 1;

			T_ASSERT(n <= EVENTS && !seen[n]);
			seen[n] = true;
			sl_nexmark_gen_event(gen, n, &ev);
			check_row(h.rows[j], &ev);
			types[ev.type]++;
		}
	}
	for (int n = 1; n <= EVENTS; n++)
		T_ASSERT(seen[n]);
	/* ids 2..2001 in blocks of 50: 1 person (id mod 50 = 0), 3 auctions, 46 bids */
	T_ASSERT_EQ_I64(types[SL_NEXMARK_PERSON], 40);
	T_ASSERT_EQ_I64(types[SL_NEXMARK_AUCTION], 120);
	T_ASSERT_EQ_I64(types[SL_NEXMARK_BID], 1840);
	h_fini(&h);
	sl_nexmark_gen_destroy(gen);
	sl_sql_conn_fini(&c);
	sl_schema_destroy(s);
}

/* The first rows of one split, by hand: two auctions, bids, the first person at n = 49. */
static void first_rows(void)
{
	const char *const spec[] = { "bid.dateTime", "TIMESTAMP", "auction.id", "BIGINT",
				     "event_type",   "INT",	  "person.id",	"BIGINT",
				     NULL };
	struct sl_schema *s = h_schema(spec);
	const char *kv[] = { "events.num", "60", "splits", "1", "base-time", "1000", NULL };
	struct sl_sql_conn c;
	struct harness h;

	T_ASSERT(bind(s, kv, &c) == 0);
	h_init(&h);
	h_drain(&h, c.src_ops, c.cfg, 0, 1000);
	T_ASSERT_EQ_I64(h.nrows, 60);
	for (int j = 0; j < 2; j++) { /* ids 2, 3: auctions 1001, 1002 */
		T_ASSERT_EQ_I64(sl_row_i64(h.rows[j], 2), 1);
		T_ASSERT_EQ_I64(sl_row_i64(h.rows[j], 1), 1001 + j);
		T_ASSERT(sl_row_is_null(h.rows[j], 0) && sl_row_is_null(h.rows[j], 3));
	}
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[2], 2), 2);
	/* 10,000 events/s: event n at base + n / 10 ms */
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[2], 0), 1000 + 0);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[47], 0), 1000 + 4);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[48], 2), 0); /* id 50: the first person, 1001 */
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[48], 3), 1001);
	T_ASSERT_EQ_I64(sl_row_i64(h.rows[49], 1), 1003); /* ids 51..53: auctions 1003.. */
	h_fini(&h);
	sl_sql_conn_fini(&c);
	sl_schema_destroy(s);
}

/* A split restored from its position emits what the uninterrupted split would have. */
static void restore(void)
{
	const char *const spec[] = { "bid.price", "BIGINT", "bid.url", "STRING", NULL };
	struct sl_schema *s = h_schema(spec);
	const char *kv[] = { "events.num", "500", "splits", "2", NULL };
	struct sl_error e = { 0 };
	struct harness whole, part;
	struct sl_sql_conn c;
	char pos[64];
	size_t len;
	void *st;

	T_ASSERT(bind(s, kv, &c) == 0);
	h_init(&whole);
	h_init(&part);
	h_drain(&whole, c.src_ops, c.cfg, 1, 1000);
	T_ASSERT_EQ_I64(whole.nrows, 250);
	st = c.src_ops->open(c.cfg, 1, &e);
	T_ASSERT(st && c.src_ops->poll(st, &part.c, 90) == 90);
	T_ASSERT(c.src_ops->position(st, pos, sizeof pos, &len) == 0);
	c.src_ops->close(st);
	st = c.src_ops->open(c.cfg, 1, &e);
	T_ASSERT(st && c.src_ops->seek(st, pos, len) == 0);
	h_drain_open(&part, c.src_ops, st, 7);
	c.src_ops->close(st);
	T_ASSERT_EQ_I64(part.nrows, whole.nrows);
	for (size_t j = 0; j < whole.nrows; j++)
		T_ASSERT(whole.rows[j]->size == part.rows[j]->size &&
			 !memcmp(whole.rows[j], part.rows[j], whole.rows[j]->size));
	h_fini(&whole);
	h_fini(&part);
	sl_sql_conn_fini(&c);
	sl_schema_destroy(s);
}

static void fails(const struct sl_schema *s, const char *const *kv, const char *want)
{
	struct sl_sql_conn c;
	int rc = bind(s, kv, &c);

	if (rc >= 0 || !strstr(err, want)) {
		fprintf(stderr, "nexmark: rc %d '%s', expected an error with '%s'\n", rc, err, want);
		exit(T_EXIT_FAIL);
	}
	T_ASSERT(!c.cfg && !c.src_ops);
}

static void errors(void)
{
	struct sl_schema *s = full_schema();
	const char *const bad_col[] = { "event_type", "INT", "bid.colour", "STRING", NULL };
	const char *const bad_type[] = { "person.id", "STRING", NULL };
	struct sl_schema *bc = h_schema(bad_col), *bt = h_schema(bad_type);

	fails(s, (const char *[]){ "events.nmu", "10", NULL },
	      "job.sql:11:3: unknown option 'events.nmu' for connector 'nexmark' (known: "
	      "first-event.rate,");
	fails(s, (const char *[]){ "events.num", "-1", NULL },
	      "job.sql:11:3: option 'events.num': '-1' is not an integer");
	fails(s, (const char *[]){ "first-event.rate", "0", NULL },
	      "option 'first-event.rate': 0 is not a rate");
	fails(s, (const char *[]){ "first-event.rate", "fast", NULL },
	      "option 'first-event.rate': 'fast' is not a number");
	fails(s, (const char *[]){ "next-event.rate", "5", NULL },
	      "option 'next-event.rate': 5 differs from first-event.rate");
	fails(s, (const char *[]){ "bid.avg-size", "1mb", NULL },
	      "option 'bid.avg-size': '1mb' is not a size of at most 32768 bytes");
	fails(s, (const char *[]){ "person.proportion", "x", NULL },
	      "option 'person.proportion': 'x' is not an integer");
	fails(s,
	      (const char *[]){ "person.proportion", "0", "auction.proportion", "0",
				"bid.proportion", "0", NULL },
	      "job.sql:9:3: connector 'nexmark': the three *.proportion are all 0");
	fails(s, (const char *[]){ "bid.hot-ratio.auctions", "0", NULL },
	      "option 'bid.hot-ratio.auctions': '0' is not an integer in [1,");
	fails(s, (const char *[]){ "max-emit-speed", "yes", NULL },
	      "option 'max-emit-speed': 'yes' is not a boolean");
	fails(s, (const char *[]){ "splits", "0", NULL }, "option 'splits': '0' is not an integer");
	fails(s, (const char *[]){ "base-time", "soon", NULL },
	      "option 'base-time': 'soon' is not a timestamp");
	fails(s, (const char *[]){ "keep-alive", "true", NULL },
	      "job.sql:11:3: option 'keep-alive' is not supported by sluice's nexmark");
	fails(s, (const char *[]){ "rate.shape", "SINE", NULL },
	      "option 'rate.shape' is not supported by sluice's nexmark");
	fails(bc, (const char *[]){ NULL },
	      "job.sql:9:3: connector 'nexmark': column 'bid.colour' is not a Nexmark field");
	fails(bt, (const char *[]){ NULL },
	      "connector 'nexmark': column 'person.id' cannot be STRING");
	sl_schema_destroy(s);
	sl_schema_destroy(bc);
	sl_schema_destroy(bt);
}

int main(void)
{
	every_split(1);
	every_split(3);
	every_split(8);
	first_rows();
	restore();
	errors();
	printf("nexmark_source: ok\n");
	return T_EXIT_PASS;
}
