/*
 * json_bench.c - JSON-lines decoding of Debezium CDC envelopes: sl_json_dec_lines() against
 * plain simdjson loops over the same lines (bench/json_ref.cc), measured in the same run.
 *
 * The input is 1M lines made in memory in the shape of Debezium's PostgreSQL envelope with
 * schemas enabled (shared/acceptance .../orders_cdc.jsonl): {"schema": {...}, "payload":
 * {"before", "after" (orders rows of 7 fields), "source" (8 fields), "op", "ts_ms",
 * "transaction"}}, ~470 bytes each; ops 70 % c, 20 % u (with a before image), 5 % r, 5 % d
 * (after null). Deterministic (fixed seed).
 *
 *   sluice     sl_json_dec_lines() with the schema a JSON table over this topic declares
 *              today, top-level columns (schema STRING, payload STRING): sluice keeps nested
 *              objects as their JSON text, as Flink's json format does for a STRING column,
 *              and builds a row per line.
 *   walk       simdjson On Demand visiting every value of every line (keys and strings
 *              unescaped, numbers converted): the cost of fully decoding the envelope.
 *   top        simdjson visiting the top-level fields, nested objects taken as raw text:
 *              the same work as sluice's decode without building the row.
 *
 *   nested     sl_json_dec_lines() with the PyFlink lesson's SQL table over this topic (issue 3):
 *              payload ROW<after ROW<id INT, customer_id INT, product_id INT, quantity INT,
 *              total DECIMAL(10,2), status STRING, created_at TIMESTAMP(3)>, op STRING,
 *              ts_ms BIGINT>, flattened by the planner into nine leaf columns: the real
 *              decode of a SQL job reading the envelope with 'format' = 'json'.
 *
 * Figures: json/cdc_nested_records_per_s (ratio to json/walk_records_per_s: issue 3 asks
 * >= 1M records/s per core), json/cdc_records_per_s (ratio to json/walk_records_per_s, the reference;
 * sluice does less than the walk, see bench/README.md), json/vs_same_work (sluice over top),
 * and both references. Rounds interleave the three contenders; medians over rounds.
 * Options: --lines N (1M), --rounds R (3), --only sluice|walk|top.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/connectors.h>

#define MAX_ROUNDS 32

uint64_t jref_walk_lines(const char *buf, size_t len, uint64_t *nerr, uint64_t *sum);
uint64_t jref_top_lines(const char *buf, size_t len, uint64_t *nerr, uint64_t *sum);

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static const char *const status[] = { "pending", "paid", "shipped", "cancelled", "refunded" };

/* Writes one orders row object; returns its length. */
static int order(char *p, size_t cap, uint64_t id, int st, uint64_t cents, int64_t created)
{
	time_t secs = (time_t)(created / 1000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	return snprintf(p, cap,
			"{\"id\": %llu, \"customer_id\": %llu, \"product_id\": %llu, "
			"\"quantity\": %llu, \"total\": %llu.%02llu, \"status\": \"%s\", "
			"\"created_at\": \"%04d-%02d-%02d %02d:%02d:%02d.%03d\"}",
			(unsigned long long)id, (unsigned long long)(1 + rnd(500)),
			(unsigned long long)(100 + rnd(100)), (unsigned long long)(1 + rnd(9)),
			(unsigned long long)(cents / 100), (unsigned long long)(cents % 100),
			status[st], tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			tm.tm_min, tm.tm_sec, (int)(created % 1000));
}

/* Builds n envelope lines; returns the buffer (SL_JSON_PADDING readable bytes after *len). */
static char *make_lines(uint64_t n, size_t *len)
{
	size_t cap = n * 700 + SL_JSON_PADDING, used = 0;
	char *buf = malloc(cap), row_a[400], row_b[400];
	int64_t ts = 1706781600000LL;

	if (!buf) {
		fprintf(stderr, "json_bench: out of memory\n");
		exit(1);
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k = rnd(100), id = 1000 + rnd(200000), cents = 500 + rnd(50000);
		int64_t created = ts - (int64_t)rnd(86400000);
		const char *op = k < 70 ? "c" : k < 90 ? "u" : k < 95 ? "r" : "d";
		const char *before = "null", *after = row_a;

		ts += (int64_t)rnd(50);
		order(row_a, sizeof(row_a), id, (int)rnd(5), cents, created);
		if (*op == 'u') {
			order(row_b, sizeof(row_b), id, (int)rnd(5), cents + rnd(1000), created);
			before = row_b;
		} else if (*op == 'd') {
			before = row_a;
			after = "null";
		}
		used += (size_t)snprintf(buf + used, cap - used,
			"{\"schema\": {\"type\": \"struct\", \"name\": "
			"\"dbserver1.public.orders.Envelope\", \"optional\": false}, \"payload\": "
			"{\"before\": %s, \"after\": %s, \"source\": {\"version\": \"2.5.0.Final\", "
			"\"connector\": \"postgresql\", \"name\": \"dbserver1\", \"db\": \"shop\", "
			"\"schema\": \"public\", \"table\": \"orders\", \"lsn\": %llu}, \"op\": "
			"\"%s\", \"ts_ms\": %lld, \"transaction\": null}}\n",
			before, after, (unsigned long long)(24000000 + 8 * i), op, (long long)ts);
		if (used + 1024 > cap) {
			fprintf(stderr, "json_bench: line buffer too small\n");
			exit(1);
		}
	}
	memset(buf + used, ' ', SL_JSON_PADDING);
	*len = used;
	return buf;
}

enum { C_SLUICE, C_WALK, C_TOP, C_NESTED, NC };
static const char *const cname[NC] = { "sluice", "walk", "top", "nested" };
static struct sl_json_dec *nested_dec;

/* Decodes every line once with contender c; returns records/s (exits on a failed line). */
static double run(int c, struct sl_json_dec *d, const char *buf, size_t len, uint64_t n)
{
	static uint64_t rowbuf[8192];
	uint64_t ok, err = 0, sum = 0;
	double t0, t1;

	t0 = now_s();
	if (c == C_SLUICE)
		ok = sl_json_dec_lines(d, buf, len, rowbuf, sizeof(rowbuf), &err);
	else if (c == C_NESTED)
		ok = sl_json_dec_lines(nested_dec, buf, len, rowbuf, sizeof(rowbuf), &err);
	else if (c == C_WALK)
		ok = jref_walk_lines(buf, len, &err, &sum);
	else
		ok = jref_top_lines(buf, len, &err, &sum);
	t1 = now_s();
	if (ok != n || err) {
		fprintf(stderr, "json_bench: %s decoded %llu of %llu lines, %llu errors\n",
			cname[c], (unsigned long long)ok, (unsigned long long)n,
			(unsigned long long)err);
		exit(1);
	}
	return (double)n / (t1 - t0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, (size_t)n * sizeof(*v));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void usage(void)
{
	fprintf(stderr, "usage: json_bench [--lines N] [--rounds R] [--only sluice|walk|top]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double rate[NC][MAX_ROUNDS], vs_walk[MAX_ROUNDS], vs_top[MAX_ROUNDS];
	double vs_nested[MAX_ROUNDS];
	uint64_t n = 1000000;
	int rounds = 3, only = -1;
	struct sl_schema *sch;
	struct sl_json_dec *d;
	size_t len;
	char *buf;

	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--lines")) {
			n = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--rounds")) {
			rounds = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--only")) {
			i++;
			for (int c = 0; c < NC; c++)
				if (!strcmp(argv[i], cname[c]))
					only = c;
			if (only < 0)
				usage();
		} else {
			usage();
		}
	}
	if (n < 1 || rounds < 1 || rounds > MAX_ROUNDS)
		usage();
	sch = sl_schema_create();
	if (!sch || sl_schema_add(sch, "schema", SL_TYPE_STRING) < 0 ||
	    sl_schema_add(sch, "payload", SL_TYPE_STRING) < 0 || !(d = sl_json_dec_create(sch))) {
		fprintf(stderr, "json_bench: out of memory\n");
		return 1;
	}
	{
		/* the PyFlink lesson's table, as the planner flattens its ROW columns */
		static const char *const names[] = {
			"payload.after.id", "payload.after.customer_id", "payload.after.product_id",
			"payload.after.quantity", "payload.after.total", "payload.after.status",
			"payload.after.created_at", "payload.op", "payload.ts_ms",
		};
		static const enum sl_type types[] = {
			SL_TYPE_INT, SL_TYPE_INT, SL_TYPE_INT, SL_TYPE_INT, SL_TYPE_DECIMAL,
			SL_TYPE_STRING, SL_TYPE_TIMESTAMP, SL_TYPE_STRING, SL_TYPE_BIGINT,
		};
		struct sl_schema *ns = sl_schema_create();

		for (int i = 0; ns && i < 9; i++)
			if ((types[i] == SL_TYPE_DECIMAL ? sl_schema_add_decimal(ns, names[i], 10, 2)
							 : sl_schema_add(ns, names[i], types[i])) < 0)
				ns = NULL;
		nested_dec = ns ? sl_json_dec_create(ns) : NULL;
		if (!nested_dec) {
			fprintf(stderr, "json_bench: cannot build the nested decoder\n");
			return 1;
		}
	}
	buf = make_lines(n, &len);
	fprintf(stderr, "%llu lines, %.0f bytes/line\n", (unsigned long long)n, (double)len / n);

	if (only >= 0) {
		for (int r = 0; r < rounds; r++)
			rate[only][r] = run(only, d, buf, len, n);
		printf("FIGURE json/only_%s %.0f records/s - -\n", cname[only],
		       median(rate[only], rounds));
		return 0;
	}
	for (int r = 0; r < rounds; r++) {
		for (int c = 0; c < NC; c++)
			rate[c][r] = run(c, d, buf, len, n);
		vs_walk[r] = rate[C_SLUICE][r] / rate[C_WALK][r];
		vs_top[r] = rate[C_SLUICE][r] / rate[C_TOP][r];
		vs_nested[r] = rate[C_NESTED][r] / rate[C_WALK][r];
		fprintf(stderr, "round %d: sluice %.2fM walk %.2fM top %.2fM nested %.2fM "
				"records/s\n", r, rate[C_SLUICE][r] / 1e6, rate[C_WALK][r] / 1e6,
			rate[C_TOP][r] / 1e6, rate[C_NESTED][r] / 1e6);
	}
	printf("FIGURE json/cdc_nested_records_per_s %.0f records/s %.4f json/walk_records_per_s\n",
	       median(rate[C_NESTED], rounds), median(vs_nested, rounds));
	printf("FIGURE json/cdc_records_per_s %.0f records/s %.4f json/walk_records_per_s\n",
	       median(rate[C_SLUICE], rounds), median(vs_walk, rounds));
	printf("FIGURE json/vs_same_work %.4f x %.4f json/top_records_per_s\n",
	       median(vs_top, rounds), median(vs_top, rounds));
	printf("FIGURE json/walk_records_per_s %.0f records/s - -\n", median(rate[C_WALK], rounds));
	printf("FIGURE json/top_records_per_s %.0f records/s - -\n", median(rate[C_TOP], rounds));
	sl_json_dec_destroy(d);
	sl_schema_destroy(sch);
	free(buf);
	return 0;
}
