/*
 * peer_gen.c - the input files of the peer suite (bench/peer.py): the same bytes are read by
 * sluice and by Apache Flink, so they are written once, deterministically, by this program.
 *
 *   peer_gen keyed KEYS N FILE     N CSV lines "k,v,ts_ms": k uniform in [0, KEYS) (a fixed
 *                                  splitmix64 stream), v = i mod 1000, ts_ms = 2024-01-01 +
 *                                  i * 60000 / 1M: one minute of event time holds 1M events,
 *                                  in order (the windows fire all through the run)
 *   peer_gen orders N FILE         N CSV lines "id,customer_id,amount,status,ts_ms" (status
 *                                  'void' for one line in four: the filter drops those)
 *   peer_gen cdc N FILE            N Debezium change events (PostgreSQL connector, schemas
 *                                  enabled: {"schema": ..., "payload": {before, after,
 *                                  source, op, ts_ms, transaction}}, ~560 bytes): ops 60 % c,
 *                                  20 % u (before and after), 10 % r, 10 % d (after null)
 *   peer_gen kafka N FILE          N order events as JSON (kafka_bench's, ~90 bytes)
 *
 * Each writes FILE.tmp and renames it, so an interrupted run leaves no partial FILE.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASE_TS	   1704067200000LL /* 2024-01-01 00:00:00 UTC */
#define PER_MINUTE 1000000LL

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static long long ts_of(int64_t i)
{
	return BASE_TS + (long long)(i * 60000 / PER_MINUTE);
}

static void keyed(FILE *f, int64_t keys, int64_t n)
{
	uint64_t s = 12;

	for (int64_t i = 0; i < n; i++)
		fprintf(f, "%" PRIu64 ",%d,%lld\n", splitmix64(&s) % (uint64_t)keys,
			(int)(i % 1000), ts_of(i));
}

static void orders(FILE *f, int64_t n)
{
	static const char *const status[] = { "paid", "void", "pending", "shipped" };

	for (int64_t i = 0; i < n; i++)
		fprintf(f, "%" PRId64 ",%d,%d.%02d,%s,%lld\n", i, (int)(i * 7919 % 100000),
			(int)(1 + i % 997), (int)(i % 100), status[(i * 13) % 4], ts_of(i));
}

static void row(char *buf, size_t cap, int64_t id, int64_t i, const char *status)
{
	snprintf(buf, cap,
		 "{\"id\": %" PRId64 ", \"customer_id\": %d, \"product_id\": %d, \"quantity\": %d, "
		 "\"total\": %d.%02d, \"status\": \"%s\", \"created_at\": \"2024-02-01 "
		 "%02d:%02d:%02d.000\"}",
		 id, (int)(id * 7919 % 10000), 100 + (int)(id % 50), 1 + (int)(i % 5),
		 (int)(1 + id % 997), (int)(id % 100), status, (int)(id / 3600 % 24),
		 (int)(id / 60 % 60), (int)(id % 60));
}

static void cdc(FILE *f, int64_t n)
{
	char before[256], after[256];

	for (int64_t i = 0; i < n; i++) {
		int64_t id = 1000 + i;
		int k = (int)(i % 10);
		const char *op = k < 6 ? "c" : k < 8 ? "u" : k < 9 ? "r" : "d";

		strcpy(before, "null");
		strcpy(after, "null");
		if (*op != 'd')
			row(after, sizeof after, id, i, *op == 'u' ? "paid" : "pending");
		if (*op == 'u' || *op == 'd')
			row(before, sizeof before, id, i, "pending");
		fprintf(f,
			"{\"schema\": {\"type\": \"struct\", \"name\": "
			"\"dbserver1.public.orders.Envelope\", \"optional\": false}, \"payload\": "
			"{\"before\": %s, \"after\": %s, \"source\": {\"version\": "
			"\"2.5.0.Final\", "
			"\"connector\": \"postgresql\", \"name\": \"dbserver1\", \"db\": \"shop\", "
			"\"schema\": \"public\", \"table\": \"orders\", \"lsn\": %lld}, \"op\": "
			"\"%s\", \"ts_ms\": %lld, \"transaction\": null}}\n",
			before, after, 24000000LL + (long long)i * 64, op, ts_of(i));
	}
}

static void kafka(FILE *f, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		fprintf(f,
			"{\"order_id\":%" PRId64 ",\"customer_id\":%" PRId64 ",\"amount\":%" PRId64
			".%02d,\"status\":\"paid\",\"ts_ms\":%lld}\n",
			i, i * 7919 % 1000, 1 + i % 997, (int)(i % 100),
			BASE_TS + (long long)i * 3);
}

static int usage(void)
{
	fprintf(stderr, "usage: peer_gen keyed KEYS N FILE | orders N FILE | cdc N FILE | "
			"kafka N FILE\n");
	return 2;
}

int main(int argc, char **argv)
{
	char tmp[4096];
	int keyed_args = argc > 1 && !strcmp(argv[1], "keyed");
	FILE *f;

	if (argc != (keyed_args ? 5 : 4))
		return usage();
	const char *path = argv[argc - 1];
	int64_t n = strtoll(argv[argc - 2], NULL, 10);
	int64_t keys = keyed_args ? strtoll(argv[2], NULL, 10) : 0;

	if (n < 0 || (keyed_args && keys < 1))
		return usage();
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		perror(tmp);
		return 1;
	}
	static char buf[1 << 20];
	setvbuf(f, buf, _IOFBF, sizeof buf);
	if (keyed_args)
		keyed(f, keys, n);
	else if (!strcmp(argv[1], "orders"))
		orders(f, n);
	else if (!strcmp(argv[1], "cdc"))
		cdc(f, n);
	else if (!strcmp(argv[1], "kafka"))
		kafka(f, n);
	else
		return usage();
	if (fclose(f) || rename(tmp, path)) {
		perror(path);
		return 1;
	}
	return 0;
}
