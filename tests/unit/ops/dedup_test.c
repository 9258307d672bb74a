/*
 * dedup_test.c - the ROW_NUMBER() = 1 dedup process function (ops/dedup.h) driven by hand
 * through the keyed process operator, without the runtime: a def and ctx built here, rows
 * keyed as the runtime keys them, processing time from a stub clock; a capture operator
 * records the changelog.
 *
 * Checks: the Flink acceptance case flink_deduplicate_rowtime_keep_last_and_first (exact
 * changelog and the final table of expected.json), event-time keep first (out-of-order
 * earlier rows replace, ties do not) and keep last (ties replace, earlier rows do not),
 * without -U, processing-time keep first / keep last (identical rows are silent), changelog
 * input, TTL expiry, rows larger than one state chunk, state entry counts, and the build's
 * and the record path's refusals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "op.h"
#include "dedup.h"
#include "process.h"
#include "state.h"
#include "tests/test.h"

/* No runtime: stand-ins for the shard services (weak: the real ones win when linked). */
static sl_ts_t now_ms;

__attribute__((weak)) sl_ts_t sl_shard_now(const struct sl_shard *sh)
{
	return now_ms;
}

__attribute__((weak)) int sl_shard_index(const struct sl_shard *sh)
{
	return 0;
}

__attribute__((weak)) int sl_shard_count(const struct sl_shard *sh)
{
	return 1;
}

__attribute__((weak)) uint32_t sl_shard_max_par(const struct sl_shard *sh)
{
	return 128;
}

__attribute__((weak)) void sl_shard_fail(struct sl_shard *sh, int code, const char *fmt, ...)
{
}

/* ---- capture sink ---- */

#define MAXOUT 64
static char out[MAXOUT][256];
static uint32_t out_len1[MAXOUT]; /* length of string field 1 (user) */
static char big_seen[4096];       /* field 1 of the last row, when long */
static int nout;
static const struct sl_schema *schema;

static void cap_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	const char *s;

	T_ASSERT(nout < MAXOUT);
	s = sl_row_str(row, 1, &out_len1[nout]);
	if (out_len1[nout] > 200) {
		T_ASSERT(out_len1[nout] < sizeof(big_seen));
		memcpy(big_seen, s, out_len1[nout]);
		snprintf(out[nout++], sizeof(out[0]), "%s %lld", row->kind == SL_ROW_INSERT ? "+I" :
			 row->kind == SL_ROW_UPDATE_BEFORE ? "-U" : row->kind == SL_ROW_UPDATE_AFTER ?
			 "+U" : "-D", (long long)sl_row_i64(row, 0));
		return;
	}
	sl_row_format(row, schema, out[nout++], sizeof(out[0]));
}

static const struct sl_op_ops cap_ops = { .name = "capture", .process = cap_process };

/* ---- driver: one dedup instance ---- */

struct rig {
	struct sl_process_fn fn;
	struct sl_op_def def, cap_def;
	struct sl_ctx ctx, cap;
};

static void rig_open(struct rig *g, const struct sl_dedup_cfg *cfg)
{
	char err[160];

	memset(g, 0, sizeof(*g));
	T_ASSERT(sl_dedup_build(cfg, &g->fn, err, sizeof(err)) == 0);
	g->def = (struct sl_op_def){ .ops = &sl_process_ops, .name = "dedup", .cfg = &g->fn,
				     .in_schema = schema, .out_schema = schema, .nkey = 1 };
	g->def.key_fields[0] = 2; /* PARTITION BY product */
	g->def.key_types[0] = SL_TYPE_STRING;
	g->cap_def = (struct sl_op_def){ .ops = &cap_ops, .name = "cap", .in_schema = schema };
	g->cap = (struct sl_ctx){ .def = &g->cap_def, .watermark = SL_TS_MIN };
	g->ctx = (struct sl_ctx){ .def = &g->def, .watermark = SL_TS_MIN, .nports = 1 };
	g->ctx.port[0].n = 1;
	g->ctx.port[0].to[0] = &g->cap;
	T_ASSERT(g->def.ops->open(&g->ctx) == 0);
	nout = 0;
}

static void rig_close(struct rig *g)
{
	g->def.ops->close(&g->ctx);
	sl_dedup_free(&g->fn);
	T_ASSERT(g->fn.arg == NULL);
}

static size_t entries(struct rig *g)
{
	return sl_kstate_entries(g->ctx.kstate);
}

static uint8_t rowbuf[8192] __attribute__((aligned(8)));
static uint8_t keybuf[SL_KEY_MAX];
static uint32_t last_size; /* bytes of the last row fed */

/* order_id, user, product, order_time (s), event_time = order_time s in ms */
static void feed_kind(struct rig *g, enum sl_row_kind kind, int64_t id, const char *user,
		      const char *product, int64_t order_time)
{
	struct sl_row_builder b;
	const struct sl_row *row;

	sl_rowb_init(&b, rowbuf, sizeof(rowbuf), 5);
	sl_rowb_set_i64(&b, 0, id);
	sl_rowb_set_str(&b, 1, user, (uint32_t)strlen(user));
	sl_rowb_set_str(&b, 2, product, (uint32_t)strlen(product));
	sl_rowb_set_i64(&b, 3, order_time);
	sl_rowb_set_i64(&b, 4, order_time * 1000);
	sl_rowb_set_kind(&b, kind);
	row = sl_rowb_finish(&b);
	T_ASSERT(row);
	last_size = row->size;
	g->ctx.klen = sl_key_encode(row, g->def.key_fields, g->def.key_types, 1, keybuf);
	g->ctx.key = keybuf;
	g->ctx.hash = sl_hash_bytes(keybuf, g->ctx.klen);
	g->def.ops->process(&g->ctx, order_time * 1000, row);
}

static void feed(struct rig *g, int64_t id, const char *user, const char *product, int64_t t)
{
	feed_kind(g, SL_ROW_INSERT, id, user, product, t);
}

static void expect(const char *const *want, int n)
{
	for (int i = 0; i < n && i < nout; i++) {
		if (strcmp(out[i], want[i]) != 0) {
			fprintf(stderr, "row %d: got '%s', want '%s'\n", i, out[i], want[i]);
			exit(T_EXIT_FAIL);
		}
	}
	if (nout != n) {
		for (int i = 0; i < nout; i++)
			fprintf(stderr, "  got %s\n", out[i]);
	}
	T_ASSERT_EQ_I64(nout, n);
	nout = 0;
}

/* The table the changelog describes: +I/+U add a row, -U/-D remove the same content. */
static int final_table(char tab[][256], int cap)
{
	int n = 0;

	for (int i = 0; i < nout; i++) {
		const char *body = out[i] + 2;

		if (out[i][0] == '+') {
			T_ASSERT(n < cap);
			snprintf(tab[n++], 256, "%s", body);
			continue;
		}
		for (int k = 0; k < n; k++) {
			if (strcmp(tab[k], body) == 0) {
				memmove(tab[k], tab[k + 1], (size_t)(n - k - 1) * 256);
				n--;
				body = NULL;
				break;
			}
		}
		T_ASSERT(body == NULL); /* a retraction of a row never emitted */
	}
	return n;
}

static const struct {
	int64_t id;
	const char *user, *product;
	int64_t t;
} mytable[] = {
	{ 1, "terry", "pen", 1000 }, { 2, "alice", "pen", 2000 },   { 3, "bob", "pen", 3000 },
	{ 4, "bob", "apple", 4000 }, { 5, "fish", "apple", 5000 },  { 6, "jerry", "pen", 6000 },
	{ 7, "larry", "apple", 7000 }, { 8, "bill", "banana", 8000 }, { 9, "carol", "apple", 9000 },
};

static void test_acceptance_keep_last(void)
{
	struct sl_dedup_cfg cfg = { .schema = schema, .order_field = 4, .keep_last = true,
				    .emit_update_before = true, .input_insert_only = true };
	struct rig g;
	char tab[16][256];
	int n;

	rig_open(&g, &cfg);
	for (size_t i = 0; i < sizeof(mytable) / sizeof(mytable[0]); i++)
		feed(&g, mytable[i].id, mytable[i].user, mytable[i].product, mytable[i].t);
	{
		static const char *const want[] = {
			"+I[1, terry, pen, 1000, 1970-01-01 00:16:40.000]",
			"-U[1, terry, pen, 1000, 1970-01-01 00:16:40.000]",
			"+U[2, alice, pen, 2000, 1970-01-01 00:33:20.000]",
			"-U[2, alice, pen, 2000, 1970-01-01 00:33:20.000]",
			"+U[3, bob, pen, 3000, 1970-01-01 00:50:00.000]",
			"+I[4, bob, apple, 4000, 1970-01-01 01:06:40.000]",
			"-U[4, bob, apple, 4000, 1970-01-01 01:06:40.000]",
			"+U[5, fish, apple, 5000, 1970-01-01 01:23:20.000]",
			"-U[3, bob, pen, 3000, 1970-01-01 00:50:00.000]",
			"+U[6, jerry, pen, 6000, 1970-01-01 01:40:00.000]",
			"-U[5, fish, apple, 5000, 1970-01-01 01:23:20.000]",
			"+U[7, larry, apple, 7000, 1970-01-01 01:56:40.000]",
			"+I[8, bill, banana, 8000, 1970-01-01 02:13:20.000]",
			"-U[7, larry, apple, 7000, 1970-01-01 01:56:40.000]",
			"+U[9, carol, apple, 9000, 1970-01-01 02:30:00.000]",
		};
		int nwant = (int)(sizeof(want) / sizeof(want[0]));

		/* expected.json compares the final table: [6 jerry pen] [8 bill banana]
		 * [9 carol apple] */
		n = final_table(tab, 16);
		T_ASSERT_EQ_I64(n, 3);
		T_ASSERT(strcmp(tab[0], "[6, jerry, pen, 6000, 1970-01-01 01:40:00.000]") == 0);
		T_ASSERT(strcmp(tab[1], "[8, bill, banana, 8000, 1970-01-01 02:13:20.000]") == 0);
		T_ASSERT(strcmp(tab[2], "[9, carol, apple, 9000, 1970-01-01 02:30:00.000]") == 0);
		expect(want, nwant);
	}
	/* 3 keys: meta + one chunk each */
	T_ASSERT_EQ_I64(entries(&g), 6);

	/* an earlier row is not the last one; a tie is (Flink: prev <= current) */
	feed(&g, 10, "old", "pen", 5000);
	T_ASSERT_EQ_I64(nout, 0);
	feed(&g, 11, "tie", "pen", 6000);
	{
		static const char *const want[] = {
			"-U[6, jerry, pen, 6000, 1970-01-01 01:40:00.000]",
			"+U[11, tie, pen, 6000, 1970-01-01 01:40:00.000]",
		};
		expect(want, 2);
	}
	rig_close(&g);
}

static void test_keep_first_rowtime(void)
{
	struct sl_dedup_cfg cfg = { .schema = schema, .order_field = 4, .keep_last = false,
				    .emit_update_before = true, .input_insert_only = true };
	struct rig g;

	rig_open(&g, &cfg);
	for (size_t i = 0; i < sizeof(mytable) / sizeof(mytable[0]); i++)
		feed(&g, mytable[i].id, mytable[i].user, mytable[i].product, mytable[i].t);
	{
		static const char *const want[] = {
			"+I[1, terry, pen, 1000, 1970-01-01 00:16:40.000]",
			"+I[4, bob, apple, 4000, 1970-01-01 01:06:40.000]",
			"+I[8, bill, banana, 8000, 1970-01-01 02:13:20.000]",
		};
		expect(want, 3);
	}
	/* a tie is a duplicate; a strictly earlier row (out of order) becomes the first */
	feed(&g, 20, "tie", "pen", 1000);
	T_ASSERT_EQ_I64(nout, 0);
	feed(&g, 21, "early", "pen", 500);
	{
		static const char *const want[] = {
			"-U[1, terry, pen, 1000, 1970-01-01 00:16:40.000]",
			"+U[21, early, pen, 500, 1970-01-01 00:08:20.000]",
		};
		expect(want, 2);
	}
	T_ASSERT_EQ_I64(entries(&g), 6);
	rig_close(&g);

	/* without update-before: only +U */
	cfg.emit_update_before = false;
	rig_open(&g, &cfg);
	feed(&g, 1, "a", "pen", 100);
	feed(&g, 2, "b", "pen", 50);
	{
		static const char *const want[] = {
			"+I[1, a, pen, 100, 1970-01-01 00:01:40.000]",
			"+U[2, b, pen, 50, 1970-01-01 00:00:50.000]",
		};
		expect(want, 2);
	}
	rig_close(&g);
}

static void test_proctime(void)
{
	struct sl_dedup_cfg cfg = { .schema = schema, .order_field = -1, .keep_last = false,
				    .emit_update_before = true, .input_insert_only = true };
	struct rig g;

	/* keep first: the first row per key, the rest dropped; a flag per key */
	rig_open(&g, &cfg);
	T_ASSERT_EQ_I64(g.fn.nstates, 1);
	for (size_t i = 0; i < sizeof(mytable) / sizeof(mytable[0]); i++)
		feed(&g, mytable[i].id, mytable[i].user, mytable[i].product, mytable[i].t);
	{
		static const char *const want[] = {
			"+I[1, terry, pen, 1000, 1970-01-01 00:16:40.000]",
			"+I[4, bob, apple, 4000, 1970-01-01 01:06:40.000]",
			"+I[8, bill, banana, 8000, 1970-01-01 02:13:20.000]",
		};
		expect(want, 3);
	}
	T_ASSERT_EQ_I64(entries(&g), 3);
	rig_close(&g);

	/* keep last: every row replaces, whatever its time; an identical row says nothing */
	cfg.keep_last = true;
	rig_open(&g, &cfg);
	feed(&g, 1, "a", "pen", 100);
	feed(&g, 2, "b", "pen", 50);
	feed(&g, 2, "b", "pen", 50);
	feed(&g, 3, "c", "ink", 10);
	{
		static const char *const want[] = {
			"+I[1, a, pen, 100, 1970-01-01 00:01:40.000]",
			"-U[1, a, pen, 100, 1970-01-01 00:01:40.000]",
			"+U[2, b, pen, 50, 1970-01-01 00:00:50.000]",
			"+I[3, c, ink, 10, 1970-01-01 00:00:10.000]",
		};
		expect(want, 4);
	}
	rig_close(&g);

	/* changelog input (keep last only): -U/-D withdraw the stored row as -D */
	cfg.input_insert_only = false;
	rig_open(&g, &cfg);
	feed(&g, 1, "a", "pen", 100);
	feed_kind(&g, SL_ROW_UPDATE_AFTER, 2, "b", "pen", 200);
	feed_kind(&g, SL_ROW_DELETE, 0, "", "pen", 0); /* a tombstone: key only */
	feed_kind(&g, SL_ROW_UPDATE_BEFORE, 0, "", "ink", 0); /* never seen: nothing */
	feed_kind(&g, SL_ROW_UPDATE_AFTER, 3, "c", "pen", 300);
	{
		static const char *const want[] = {
			"+I[1, a, pen, 100, 1970-01-01 00:01:40.000]",
			"-U[1, a, pen, 100, 1970-01-01 00:01:40.000]",
			"+U[2, b, pen, 200, 1970-01-01 00:03:20.000]",
			"-D[2, b, pen, 200, 1970-01-01 00:03:20.000]",
			"+I[3, c, pen, 300, 1970-01-01 00:05:00.000]",
		};
		expect(want, 5);
	}
	T_ASSERT_EQ_I64(entries(&g), 2);
	rig_close(&g);
}

static void test_ttl(void)
{
	struct sl_dedup_cfg cfg = { .schema = schema, .order_field = -1, .keep_last = false,
				    .emit_update_before = true, .input_insert_only = true,
				    .ttl_ms = 100 };
	struct rig g;

	/* keep first: the flag expires 100 ms after it was written, not after it was read */
	rig_open(&g, &cfg);
	now_ms = 1000;
	feed(&g, 1, "a", "pen", 1);
	now_ms = 1099;
	feed(&g, 2, "b", "pen", 2);
	now_ms = 1100;
	feed(&g, 3, "c", "pen", 3);
	{
		static const char *const want[] = {
			"+I[1, a, pen, 1, 1970-01-01 00:00:01.000]",
			"+I[3, c, pen, 3, 1970-01-01 00:00:03.000]",
		};
		expect(want, 2);
	}
	rig_close(&g);

	/* event-time keep last: after expiry an older row starts the key afresh (+I); with a
	 * TTL, processing-time keep last repeats identical rows (Flink refreshes downstream) */
	cfg.order_field = 4;
	cfg.keep_last = true;
	rig_open(&g, &cfg);
	now_ms = 2000;
	feed(&g, 1, "a", "pen", 10);
	now_ms = 2050;
	feed(&g, 2, "b", "pen", 5); /* older, state alive: dropped */
	now_ms = 2100;
	feed(&g, 3, "c", "pen", 5); /* state expired at 2100 */
	{
		static const char *const want[] = {
			"+I[1, a, pen, 10, 1970-01-01 00:00:10.000]",
			"+I[3, c, pen, 5, 1970-01-01 00:00:05.000]",
		};
		expect(want, 2);
	}
	T_ASSERT_EQ_I64(entries(&g), 2);
	rig_close(&g);

	cfg.order_field = -1;
	rig_open(&g, &cfg);
	feed(&g, 1, "a", "pen", 10);
	feed(&g, 1, "a", "pen", 10);
	{
		static const char *const want[] = {
			"+I[1, a, pen, 10, 1970-01-01 00:00:10.000]",
			"-U[1, a, pen, 10, 1970-01-01 00:00:10.000]",
			"+U[1, a, pen, 10, 1970-01-01 00:00:10.000]",
		};
		expect(want, 3);
	}
	/* the identical row kept its chunk: meta + 1 */
	T_ASSERT_EQ_I64(entries(&g), 2);
	rig_close(&g);
	now_ms = 0;
}

/* A row of several state chunks comes back whole in the -U. */
static void test_big_row(void)
{
	struct sl_dedup_cfg cfg = { .schema = schema, .order_field = 4, .keep_last = true,
				    .emit_update_before = true, .input_insert_only = true };
	static char big[3001];
	struct rig g;

	for (int i = 0; i < 3000; i++)
		big[i] = (char)('a' + i % 26);
	rig_open(&g, &cfg);
	feed(&g, 1, big, "pen", 1);
	/* meta + one entry per SL_DEDUP_CHUNK bytes */
	T_ASSERT(last_size > 2 * SL_DEDUP_CHUNK);
	T_ASSERT_EQ_I64(entries(&g), 1 + (last_size + SL_DEDUP_CHUNK - 1) / SL_DEDUP_CHUNK);
	feed(&g, 2, "small", "pen", 2);
	T_ASSERT_EQ_I64(nout, 3);
	T_ASSERT(strcmp(out[0], "+I 1") == 0 && strcmp(out[1], "-U 1") == 0);
	T_ASSERT_EQ_I64(out_len1[1], 3000);
	T_ASSERT(memcmp(big_seen, big, 3000) == 0);
	T_ASSERT(strcmp(out[2], "+U[2, small, pen, 2, 1970-01-01 00:00:02.000]") == 0);
	T_ASSERT_EQ_I64(entries(&g), 2);
	nout = 0;
	rig_close(&g);
}

static void test_refusals(void)
{
	struct sl_dedup_cfg cfg = { .schema = schema, .order_field = 3, .keep_last = true,
				    .input_insert_only = true };
	struct sl_process_fn fn;
	char err[160];
	struct rig g;

	/* ORDER BY a BIGINT: not a time attribute */
	T_ASSERT(sl_dedup_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "order_time") && fn.arg == NULL);
	cfg.order_field = 5;
	T_ASSERT(sl_dedup_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	/* changelog input: only processing-time keep last takes it */
	cfg.order_field = 4;
	cfg.input_insert_only = false;
	T_ASSERT(sl_dedup_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	T_ASSERT(strstr(err, "insert-only"));
	cfg.order_field = -1;
	cfg.keep_last = false;
	T_ASSERT(sl_dedup_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	cfg.input_insert_only = true;
	cfg.ttl_ms = -1;
	T_ASSERT(sl_dedup_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	cfg.schema = NULL;
	T_ASSERT(sl_dedup_build(&cfg, &fn, err, sizeof(err)) == -EINVAL);
	sl_dedup_free(NULL);

	/* an update on an insert-only dedup is a job error: the row goes nowhere */
	cfg = (struct sl_dedup_cfg){ .schema = schema, .order_field = 4, .keep_last = true,
				     .input_insert_only = true };
	rig_open(&g, &cfg);
	feed_kind(&g, SL_ROW_UPDATE_AFTER, 1, "a", "pen", 1);
	T_ASSERT_EQ_I64(nout, 0);
	T_ASSERT_EQ_I64(entries(&g), 0);
	rig_close(&g);
}

int main(void)
{
	struct sl_schema *s = sl_schema_create();

	T_ASSERT(s);
	sl_schema_add(s, "order_id", SL_TYPE_BIGINT);
	sl_schema_add(s, "user", SL_TYPE_STRING);
	sl_schema_add(s, "product", SL_TYPE_STRING);
	sl_schema_add(s, "order_time", SL_TYPE_BIGINT);
	sl_schema_add(s, "event_time", SL_TYPE_TIMESTAMP);
	schema = s;

	test_acceptance_keep_last();
	test_keep_first_rowtime();
	test_proctime();
	test_ttl();
	test_big_row();
	test_refusals();
	sl_schema_destroy(s);
	return T_EXIT_PASS;
}
