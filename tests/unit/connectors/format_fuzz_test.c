/*
 * format_fuzz_test.c - random bytes and mutated valid records into the JSON and CSV decoders
 * and the file source (bounded iterations, a fixed random start, so failures replay). Every call must
 * return either an error with a reason or a well-formed row: right field count, size within
 * the buffer, strings inside the row. Run it under ASan to make "no crash" mean "no bad
 * access" (meson setup -Db_sanitize=address). Also: the Debezium decoder on a nested schema
 * with every new type, and the DECIMAL text parser against engine/sql's exact decimal
 * parser as an oracle.
 */
#include "conn_harness.h"
#include "format.h"
#include "decimal.h"

#define ITERS 200000

static _Alignas(8) char rowbuf[4096];
static uint64_t rs = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static const char *const spec[] = { "a", "INT", "b", "STRING", "c", "DOUBLE", "d", "BOOL", "e",
				    "TIMESTAMP", "f", "BIGINT", NULL };

static const char *const json_samples[] = {
	"{\"a\":1,\"b\":\"x\\u00e9\\n\",\"c\":1.5e3,\"d\":true,\"e\":\"2024-01-31 04:19:31.784\","
	"\"f\":-9}",
	"{\"f\":\"12\",\"e\":1706674771784,\"z\":[1,{\"q\":null}],\"b\":{\"k\":[]},\"a\":null}",
	"{\"b\":123,\"c\":\"NaN\",\"d\":\"FALSE\",\"e\":\"2024-01-31T04:19:31Z\"}",
	"{}",
};

static const char *const csv_samples[] = {
	"1,x,1.5,true,2024-01-31 04:19:31.784,-9",
	"\"1\",\"a,\"\"b\"\"\nc\",,FALSE,1706674771784,\"12\"",
	",,,,,",
};

static void check_row(const struct sl_row *r, uint32_t cap)
{
	if (!r)
		return;
	T_ASSERT(r->nfields == 6 && r->size <= cap && r->size % 8 == 0);
	T_ASSERT(r->size >= SL_ROW_HDR + 6 * 8);
	if (!sl_row_is_null(r, 1)) {
		uint32_t off = (uint32_t)(r->slot[1] >> 32), len = (uint32_t)r->slot[1];

		T_ASSERT(off >= SL_ROW_HDR + 6 * 8 && (uint64_t)off + len <= r->size);
	}
}

/* Fills buf with a mutation of sample: flipped bytes, inserted specials, truncation. */
static size_t mutate(char *buf, size_t cap, const char *sample)
{
	static const char specials[] = "{}[]\",:\\\n\r\t 0-.eE+nulltruefalse\x00\xff\xc3";
	size_t n = strlen(sample);
	int edits = 1 + (int)(rnd() % 4);

	memcpy(buf, sample, n);
	while (edits--) {
		size_t at = n ? rnd() % n : 0;

		switch (rnd() % 4) {
		case 0:
			if (n)
				buf[at] = (char)rnd();
			break;
		case 1:
			if (n)
				buf[at] = specials[rnd() % (sizeof specials - 1)];
			break;
		case 2:
			n = at; /* truncate */
			break;
		case 3:
			if (n + 1 < cap) {
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = specials[rnd() % (sizeof specials - 1)];
				n++;
			}
			break;
		}
	}
	return n;
}

static void fuzz_json(struct sl_schema *s)
{
	struct sl_json_dec *d = sl_json_dec_create(s);
	char buf[512 + SL_JSON_PADDING], why[SL_FMT_WHY_MAX];
	uint64_t ok = 0;

	for (int it = 0; it < ITERS; it++) {
		size_t n;
		const struct sl_row *r;

		if (it % 3 == 0) {
			n = rnd() % 200;
			for (size_t i = 0; i < n; i++)
				buf[i] = (char)rnd();
		} else {
			n = mutate(buf, 512, json_samples[rnd() % 4]);
		}
		why[0] = '\0';
		if (it % 2)
			r = sl_json_dec_row(d, buf, n, rowbuf, sizeof rowbuf, why);
		else
			r = sl_json_dec_row_copy(d, buf, n, rowbuf, sizeof rowbuf, why);
		check_row(r, sizeof rowbuf);
		T_ASSERT(r || (why[0] && strlen(why) < SL_FMT_WHY_MAX));
		ok += r != NULL;
	}
	/* the mutations must leave some records valid, or they test nothing but errors */
	T_ASSERT(ok > ITERS / 200 && ok < ITERS / 2);
	sl_json_dec_destroy(d);
}

static void fuzz_csv(struct sl_schema *s)
{
	struct sl_csv_opts o = { .null_literal = "null" };
	struct sl_csv_dec *d = sl_csv_dec_create(s, &o);
	char buf[512], why[SL_FMT_WHY_MAX];
	uint64_t ok = 0;

	for (int it = 0; it < ITERS; it++) {
		size_t n, rl;
		const struct sl_row *r;

		if (it % 3 == 0) {
			n = rnd() % 200;
			for (size_t i = 0; i < n; i++)
				buf[i] = (char)rnd();
		} else {
			n = mutate(buf, sizeof buf, csv_samples[rnd() % 3]);
		}
		rl = sl_csv_dec_record_len(d, buf, n, it % 2 == 0);
		T_ASSERT(rl <= n);
		why[0] = '\0';
		r = sl_csv_dec_row(d, buf, n, rowbuf, sizeof rowbuf, why);
		check_row(r, sizeof rowbuf);
		T_ASSERT(r || why[0]);
		ok += r != NULL;
	}
	T_ASSERT(ok > ITERS / 200 && ok < ITERS / 2);
	sl_csv_dec_destroy(d);
}

static void fuzz_text(void)
{
	char buf[40] = { 0 };
	sl_ts_t t;
	int64_t v;
	double f;

	for (int it = 0; it < ITERS; it++) {
		size_t n = rnd() % sizeof buf;

		memcpy(buf, "2024-01-31 04:19:31.784+01:00", 29);
		for (int e = 0; e < 2; e++)
			buf[rnd() % sizeof buf] = "0123456789-:. TZ+\xff"[rnd() % 18];
		(void)sl_fmt_parse_ts(buf, n, &t);
		(void)sl_fmt_parse_i64(buf, n, INT32_MIN, INT32_MAX, &v);
		(void)sl_fmt_parse_f64(buf, n, &f);
	}
}

/* Random files (lines of mutated records and noise) through the file source. */
static void fuzz_file(struct sl_schema *s)
{
	size_t cap = 1 << 16;
	char *text = malloc(cap);
	struct harness h;

	h_init(&h);
	for (int it = 0; it < 60; it++) {
		size_t n = 0;
		char *path;
		const char *paths[1];
		struct sl_file_source_cfg cfg = { .npaths = 1, .schema = s,
						  .format = it % 2 ? SL_FORMAT_CSV : SL_FORMAT_JSON,
						  .read_bytes = 1 + (uint32_t)(rnd() % 300),
						  .csv = { .header = it % 4 == 1 } };

		while (n + 600 < cap) {
			if (rnd() % 8 == 0) {
				size_t k = rnd() % 100;

				for (size_t i = 0; i < k; i++)
					text[n + i] = (char)rnd();
				n += k;
			} else {
				n += mutate(text + n, 512, it % 2 ? csv_samples[rnd() % 3]
								   : json_samples[rnd() % 4]);
			}
			text[n++] = '\n';
		}
		path = h_tempfile(text, n);
		paths[0] = path;
		cfg.paths = paths;
		h_drain(&h, &sl_file_source_ops, &cfg, 0, 1 + (int)(rnd() % 100));
		for (size_t i = 0; i < h.nrows; i++)
			check_row(h.rows[i], SL_ROW_SCRATCH);
		T_ASSERT(h.nrows + h.ndl > 0);
		h_reset(&h);
		unlink(path);
		free(path);
	}
	h_fini(&h);
	free(text);
}

static const char *const dbz_samples[] = {
	"{\"before\":null,\"after\":{\"id\":1,\"m\":12.345,\"f\":0.1,\"day\":\"2024-02-29\","
	"\"ltz\":\"2024-01-31T04:19:31.784Z\",\"o\":{\"s\":\"x\",\"t\":{\"u\":5}}},\"op\":\"c\"}",
	"{\"schema\":{},\"payload\":{\"before\":{\"id\":2,\"m\":\"1e2\",\"o\":null},\"after\":"
	"{\"id\":2,\"m\":-0.005,\"o\":{\"t\":null}},\"op\":\"u\"}}",
	"{\"before\":{\"id\":3,\"m\":99999999.995},\"after\":null,\"op\":\"d\"}",
	"null",
};

static void fuzz_dbz(void)
{
	struct sl_schema *s = sl_schema_create();
	struct sl_json_dec *d;
	char buf[512 + SL_JSON_PADDING], why[SL_FMT_WHY_MAX];
	uint64_t ok = 0;

	T_ASSERT(sl_schema_add(s, "id", SL_TYPE_INT) == 0);
	T_ASSERT(sl_schema_add_decimal(s, "m", 10, 2) == 1);
	T_ASSERT(sl_schema_add(s, "f", SL_TYPE_FLOAT) == 2);
	T_ASSERT(sl_schema_add(s, "day", SL_TYPE_DATE) == 3);
	T_ASSERT(sl_schema_add(s, "ltz", SL_TYPE_TIMESTAMP_LTZ) == 4);
	T_ASSERT(sl_schema_add(s, "o.s", SL_TYPE_STRING) == 5);
	T_ASSERT(sl_schema_add(s, "o.t.u", SL_TYPE_BIGINT) == 6);
	d = sl_json_dec_create_ex(s, SL_JSON_DEBEZIUM, NULL);
	T_ASSERT(d);
	for (int it = 0; it < ITERS; it++) {
		const struct sl_row *rows[2];
		size_t n = mutate(buf, 512, dbz_samples[rnd() % 4]);
		int k;

		why[0] = '\0';
		memset(buf + n, ' ', SL_JSON_PADDING);
		k = sl_dbz_dec_rows(d, buf, n, rowbuf, sizeof rowbuf, rows, why);
		T_ASSERT(k <= 2);
		T_ASSERT(k >= 0 || (why[0] && strlen(why) < SL_FMT_WHY_MAX));
		for (int j = 0; j < k; j++) {
			T_ASSERT(rows[j]->nfields == 7 && rows[j]->size % 8 == 0);
			T_ASSERT(rows[j]->kind <= SL_ROW_DELETE);
			if (!sl_row_is_null(rows[j], 5)) {
				uint32_t len, off = (uint32_t)(rows[j]->slot[5] >> 32);

				sl_row_str(rows[j], 5, &len);
				T_ASSERT((uint64_t)off + len <= rows[j]->size);
			}
			if (!sl_row_is_null(rows[j], 1))
				T_ASSERT(sl_row_i64(rows[j], 1) < 10000000000ll &&
					 sl_row_i64(rows[j], 1) > -10000000000ll);
		}
		ok += k > 0;
	}
	T_ASSERT(ok > ITERS / 200 && ok < ITERS / 2);
	sl_json_dec_destroy(d);
	sl_schema_destroy(s);
}

/* Random decimal texts: sl_fmt_parse_dec must agree with engine/sql's sl_dec_parse. */
static void fuzz_decimal(void)
{
	static const char alpha[] = "0123456789000009.e-+ ";
	char buf[40];
	int nok = 0, nrange = 0;

	for (int it = 0; it < ITERS; it++) {
		int prec = 1 + (int)(rnd() % 18), scale = (int)(rnd() % (uint64_t)(prec + 1));
		struct sl_dec_type t = { (uint8_t)prec, (uint8_t)scale };
		size_t n = 1 + rnd() % 24;
		int64_t v = 0;
		sl_dec_t w = 0;
		int a, b;

		for (size_t i = 0; i < n; i++)
			buf[i] = alpha[rnd() % (sizeof alpha - 1)];
		if (it % 2) /* mostly well-formed: digits, a point, maybe an exponent */
			n = (size_t)snprintf(buf, sizeof buf, "%s%llu.%llu%s", rnd() % 2 ? "-" : "",
					     (unsigned long long)(rnd() >> (rnd() % 64)),
					     (unsigned long long)(rnd() % 100000000),
					     rnd() % 4 ? "" : (rnd() % 2 ? "e3" : "E-2"));
		a = sl_fmt_parse_dec(buf, n, prec, scale, &v);
		b = sl_dec_parse(buf, n, t, &w);
		if ((a == 0) != (b == 0) || (a == 0 && (sl_dec_t)v != w) ||
		    (a == -ERANGE) != (b == -ERANGE)) {
			fprintf(stderr, "decimal '%.*s' (%d,%d): ours %d %lld, sql %d %lld\n", (int)n,
				buf, prec, scale, a, (long long)v, b, (long long)w);
			exit(T_EXIT_FAIL);
		}
		nok += a == 0;
		nrange += a == -ERANGE;
	}
	/* both outcomes must be frequent, or the oracle compares nothing */
	T_ASSERT(nok > ITERS / 10 && nrange > ITERS / 10);
}

int main(void)
{
	struct sl_schema *s = h_schema(spec);

	fuzz_dbz();
	fuzz_decimal();

	fuzz_json(s);
	fuzz_csv(s);
	fuzz_text();
	fuzz_file(s);
	sl_schema_destroy(s);
	return T_EXIT_PASS;
}
