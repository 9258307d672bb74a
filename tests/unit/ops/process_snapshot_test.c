/*
 * process_snapshot_test.c - the keyed process operator's snapshot and restore hooks.
 *
 * A stream of records, watermarks and processing-time ticks is run through process
 * functions three ways: uninterrupted by one instance; cut at many points, where the
 * instance is snapshotted, closed, and a new instance restored from the bytes runs the rest;
 * and rescaled, where two instances (records routed by key group) run the head, and three
 * new instances, each restoring both snapshots for its own key groups, run the tail.
 *
 * The interrupted runs must produce exactly the uninterrupted output (rows, order and
 * watermarks); the rescaled run exactly each key's rows in order. Functions: a counting
 * function with value, map and TTL state and event- and processing-time timers; dedup
 * (event-time keep last with -U); the updating GROUP BY with MAX (map state) and a state TTL
 * (processing-time timers). Also: a snapshot into a function whose state layout differs is
 * refused with -EPROTO, and every truncation of a snapshot is refused without a crash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap.h"
#include "hash.h"
#include "op.h"
#include "dedup.h"
#include "group_agg.h"
#include "process.h"
#include "state.h"
#include "tests/test.h"
#include "timer.h"

#define MAX_PAR 128u

/* No runtime: stand-ins for the shard services (weak: the real ones win when linked). */
static sl_ts_t test_now;

__attribute__((weak)) sl_ts_t sl_shard_now(const struct sl_shard *sh)
{
	return test_now;
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
	return MAX_PAR;
}

__attribute__((weak)) void sl_shard_fail(struct sl_shard *sh, int code, const char *fmt, ...)
{
}

/* ---- output lines --------------------------------------------------------------------- */

struct lines {
	char **s;
	int n, cap;
};

static void add_line(struct lines *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->s = realloc(l->s, (size_t)l->cap * sizeof(*l->s));
		T_ASSERT(l->s);
	}
	l->s[l->n] = strdup(s);
	T_ASSERT(l->s[l->n]);
	l->n++;
}

static void lines_free(struct lines *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->s[i]);
	free(l->s);
	memset(l, 0, sizeof(*l));
}

static void cap_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	char buf[512];

	sl_row_format(row, ctx->def->in_schema, buf, sizeof(buf));
	add_line(ctx->self, buf);
}

static void cap_watermark(struct sl_ctx *ctx, sl_ts_t wm)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "WM %lld", (long long)wm);
	add_line(ctx->self, buf);
}

static const struct sl_op_ops cap_ops = {
	.name = "capture",
	.process = cap_process,
	.on_watermark = cap_watermark,
};

/* ---- the counting function -------------------------------------------------------------
 * Per key: a count, the time of the last record (TTL 40 ms of processing time) and a map of
 * amounts mod 5 -> occurrences. Each record emits (key, count, last time or -1, distinct
 * amounts, plus 100 if the record is late) and sets an event timer at ts + 10; every 4th record of a key also sets a
 * processing timer 25 ms ahead. An event timer emits (key, count, at, 0) and resets counts
 * above 3; a processing timer emits (key, count, at, 1) and clears the map. */

enum { COUNT, LAST, AMOUNTS };

static const struct sl_state_desc count_states[] = {
	{ "count", SL_STATE_VALUE, 8, 0 },
	{ "last", SL_STATE_VALUE, 8, 40 },
	{ "amounts", SL_STATE_MAP, 8, 0 },
};

static void emit4(struct sl_ctx *ctx, int64_t a, int64_t b, int64_t c, sl_ts_t ts)
{
	struct sl_row_builder *o = sl_ctx_out(ctx);

	sl_ctx_key_copy(ctx, 0, o, 0);
	sl_rowb_set_i64(o, 1, a);
	sl_rowb_set_i64(o, 2, b);
	sl_rowb_set_i64(o, 3, c);
	sl_emit(ctx, ts, sl_rowb_finish(o));
}

static bool count_one(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	(*(int64_t *)arg)++;
	return true;
}

static void cnt_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	int64_t *c = sl_value_put(ctx, COUNT), *last = sl_value_get(ctx, LAST), prev, d = 0;
	int64_t mk = sl_row_i64(row, 1) % 5;
	int64_t *m;

	T_ASSERT(c);
	(*c)++;
	prev = last ? *last : -1;
	last = sl_value_put(ctx, LAST);
	T_ASSERT(last);
	*last = ts;
	m = sl_map_put(ctx, AMOUNTS, &mk, sizeof(mk));
	T_ASSERT(m);
	(*m)++;
	sl_map_foreach(ctx, AMOUNTS, count_one, &d);
	T_ASSERT(sl_timer_event(ctx, ts + 10) == 0);
	if (*c % 4 == 0)
		T_ASSERT(sl_timer_proc(ctx, sl_ctx_proctime(ctx) + 25) == 0);
	/* late records (behind the watermark) are flagged: the watermark must survive too */
	emit4(ctx, *c, prev, d + (ts <= ctx->watermark ? 100 : 0), ts);
}

static void cnt_on_timer(struct sl_ctx *ctx, sl_ts_t at, enum sl_time_domain dom, void *arg)
{
	int64_t *c = sl_value_get(ctx, COUNT);
	int64_t n = c ? *c : -1;

	emit4(ctx, n, at, dom == SL_TIME_PROC, at);
	if (dom == SL_TIME_PROC)
		sl_map_clear(ctx, AMOUNTS);
	else if (n > 3)
		sl_value_clear(ctx, COUNT);
}

/* ---- the stream ----------------------------------------------------------------------- */

enum { EV_REC, EV_WM, EV_PROC };

struct ev {
	int kind;
	int key;
	int64_t amount;
	sl_ts_t t; /* record time, watermark, or the processing clock */
};

#define NEV   700
#define NKEYS 14

static struct ev evs[NEV];
static struct sl_schema *in_schema;

static const char *key_name(int k)
{
	static char names[NKEYS][48];

	if (!names[k][0])
		snprintf(names[k], sizeof(names[k]),
			 k == 7 ? "k%d-a-rather-longer-key-name" : "k%d", k);
	return names[k];
}

static void make_stream(void)
{
	uint64_t x = 0x2545f4914f6cdd1dull;
	sl_ts_t base = 1000, clock = 0, wm = SL_TS_MIN;

	for (int i = 0; i < NEV; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i % 11 == 10) {
			/* bounded out-of-orderness 12 ms: never goes backwards */
			wm = base - 12 > wm ? base - 12 : wm;
			evs[i] = (struct ev){ EV_WM, 0, 0, wm };
		} else if (i % 17 == 16) {
			clock += 5 + (sl_ts_t)(x % 9);
			evs[i] = (struct ev){ EV_PROC, 0, 0, clock };
		} else {
			base += 1 + (sl_ts_t)(x % 2);
			evs[i] = (struct ev){ EV_REC, (int)(x % NKEYS), (int64_t)(x % 23),
					      base - (sl_ts_t)(x % 20) };
		}
	}
	evs[NEV - 1] = (struct ev){ EV_WM, 0, 0, SL_TS_MAX }; /* end of input */
}

/* ---- instances ------------------------------------------------------------------------ */

struct inst {
	struct sl_op_def def, cap_def;
	struct sl_ctx ctx, cap;
	struct lines out;
	uint8_t keybuf[SL_KEY_MAX];
};

static struct inst *inst_open(const struct sl_process_fn *fn, const struct sl_schema *out_schema)
{
	struct inst *g = calloc(1, sizeof(*g));

	T_ASSERT(g);
	g->def = (struct sl_op_def){ .ops = &sl_process_ops,
				     .name = "p",
				     .cfg = fn,
				     .in_schema = in_schema,
				     .out_schema = out_schema,
				     .nkey = 1 };
	g->def.key_fields[0] = 0;
	g->def.key_types[0] = SL_TYPE_STRING;
	g->cap_def = (struct sl_op_def){ .ops = &cap_ops, .name = "cap", .in_schema = out_schema };
	g->cap = (struct sl_ctx){ .def = &g->cap_def, .watermark = SL_TS_MIN, .self = &g->out };
	g->ctx = (struct sl_ctx){ .def = &g->def, .watermark = SL_TS_MIN, .nports = 1 };
	g->ctx.port[0].n = 1;
	g->ctx.port[0].to[0] = &g->cap;
	T_ASSERT(g->def.ops->open(&g->ctx) == 0);
	return g;
}

/* Closes the operator; the output lines stay with g (free with inst_free). */
static void inst_close(struct inst *g)
{
	g->def.ops->close(&g->ctx);
}

static void inst_free(struct inst *g)
{
	lines_free(&g->out);
	free(g);
}

/* Builds the record, encodes its key as the runtime does and hands it to the instance owning
 * its key group among n, as the exchange routes it. */
static void feed(struct inst **g, int n, const struct ev *e)
{
	uint8_t rowbuf[256] __attribute__((aligned(8)));
	uint8_t kb[SL_KEY_MAX];
	struct sl_row_builder b;
	const struct sl_row *row;
	const char *k = key_name(e->key);
	struct inst *to;
	uint32_t klen;
	uint64_t hash;

	sl_rowb_init(&b, rowbuf, sizeof(rowbuf), 3);
	sl_rowb_set_str(&b, 0, k, (uint32_t)strlen(k));
	sl_rowb_set_i64(&b, 1, e->amount);
	sl_rowb_set_i64(&b, 2, e->t);
	row = sl_rowb_finish(&b);
	klen = sl_key_encode(row, g[0]->def.key_fields, g[0]->def.key_types, 1, kb);
	hash = sl_hash_bytes(kb, klen);
	to = g[sl_key_group_shard(sl_key_group(hash, MAX_PAR), MAX_PAR, (uint32_t)n)];
	memcpy(to->keybuf, kb, klen);
	to->ctx.key = to->keybuf;
	to->ctx.klen = klen;
	to->ctx.hash = hash;
	to->def.ops->process(&to->ctx, e->t, row);
}

/* Runs events [from, to) on n instances; watermarks and clock ticks go to every one. */
static void run(struct inst **g, int n, int from, int to)
{
	for (int i = from; i < to; i++) {
		const struct ev *e = &evs[i];

		switch (e->kind) {
		case EV_REC:
			feed(g, n, e);
			break;
		case EV_WM:
			for (int s = 0; s < n; s++)
				sl_op_watermark(&g[s]->ctx, e->t);
			break;
		case EV_PROC:
			test_now = e->t;
			for (int s = 0; s < n; s++)
				g[s]->def.ops->on_proctime(&g[s]->ctx, e->t);
			break;
		}
	}
}

static void lines_eq(const struct lines *a, const struct lines *b, const char *what)
{
	for (int i = 0; i < a->n && i < b->n; i++) {
		if (strcmp(a->s[i], b->s[i])) {
			fprintf(stderr, "%s: line %d: got '%s', want '%s'\n", what, i, b->s[i],
				a->s[i]);
			exit(T_EXIT_FAIL);
		}
	}
	if (a->n != b->n)
		fprintf(stderr, "%s: %d lines, want %d\n", what, b->n, a->n);
	T_ASSERT_EQ_I64(b->n, a->n);
}

/* The lines of key k (rows start "+I[k, ..."), in order. */
static void lines_of_key(const struct lines *l, int k, struct lines *out)
{
	const char *name = key_name(k);
	size_t n = strlen(name);

	for (int i = 0; i < l->n; i++)
		if (l->s[i][0] != 'W' && !strncmp(l->s[i] + 3, name, n) && l->s[i][3 + n] == ',')
			add_line(out, l->s[i]);
}

/* ---- the three runs ------------------------------------------------------------------- */

/* A copy-on-write snapshot (op.h), completed in small steps. */
static void snap_of(struct inst *g, struct sl_snap_buf *b)
{
	int rc = g->def.ops->snapshot(&g->ctx, 7, b);

	while (rc == 1)
		rc = g->def.ops->snapshot_step(&g->ctx, 512);
	T_ASSERT(rc == 0);
}

static int restore_all(struct inst *g, const struct sl_snap_buf *b, int nold, uint32_t lo,
		       uint32_t hi)
{
	struct sl_snap_reader r;
	int rc = 0;

	sl_snap_reader_init(&r, b->data, b->len);
	for (int i = 0; i < nold && !rc; i++)
		rc = g->def.ops->restore(&g->ctx, &r, lo, hi);
	if (!rc)
		T_ASSERT(r.pos == r.len);
	return rc;
}

static void range_of(uint32_t s, uint32_t n, uint32_t *lo, uint32_t *hi)
{
	*lo = MAX_PAR;
	*hi = 0;
	for (uint32_t kg = 0; kg < MAX_PAR; kg++) {
		if (sl_key_group_shard(kg, MAX_PAR, n) != s)
			continue;
		if (kg < *lo)
			*lo = kg;
		*hi = kg + 1;
	}
}

static void check_fn(const char *what, const struct sl_process_fn *fn,
		     const struct sl_schema *out_schema)
{
	struct inst *g[3], *h[3];
	struct lines ref = { 0 };
	int cuts = 0, nrows = 0;

	/* uninterrupted */
	test_now = 0;
	g[0] = inst_open(fn, out_schema);
	run(g, 1, 0, NEV);
	inst_close(g[0]);
	ref = g[0]->out;
	g[0]->out = (struct lines){ 0 };
	inst_free(g[0]);
	for (int i = 0; i < ref.n; i++)
		nrows += ref.s[i][0] != 'W';
	T_ASSERT(nrows > NEV / 2);

	/* cut at many points: snapshot, close, restore into a new instance, go on */
	for (int cut = 1; cut < NEV; cut += 1 + cut / 8, cuts++) {
		struct sl_snap_buf b;
		struct lines all = { 0 };

		sl_snap_init(&b);
		test_now = 0;
		g[0] = inst_open(fn, out_schema);
		run(g, 1, 0, cut);
		snap_of(g[0], &b);
		inst_close(g[0]);
		h[0] = inst_open(fn, out_schema);
		T_ASSERT(restore_all(h[0], &b, 1, 0, MAX_PAR) == 0);
		run(h, 1, cut, NEV);
		inst_close(h[0]);
		for (int i = 0; i < g[0]->out.n; i++)
			add_line(&all, g[0]->out.s[i]);
		for (int i = 0; i < h[0]->out.n; i++)
			add_line(&all, h[0]->out.s[i]);
		lines_eq(&ref, &all, what);
		lines_free(&all);
		inst_free(g[0]);
		inst_free(h[0]);
		sl_snap_free(&b);
	}

	/* rescale 2 -> 3 at a few cuts: per key, the same rows in the same order */
	for (int cut = 100; cut < NEV; cut += 150) {
		struct sl_snap_buf b;
		uint32_t lo, hi;

		sl_snap_init(&b);
		test_now = 0;
		for (int s = 0; s < 2; s++)
			g[s] = inst_open(fn, out_schema);
		run(g, 2, 0, cut);
		for (int s = 0; s < 2; s++) {
			snap_of(g[s], &b); /* one after another, as the coordinator hands them */
			inst_close(g[s]);
		}
		for (int s = 0; s < 3; s++) {
			h[s] = inst_open(fn, out_schema);
			range_of((uint32_t)s, 3, &lo, &hi);
			T_ASSERT(restore_all(h[s], &b, 2, lo, hi) == 0);
		}
		run(h, 3, cut, NEV);
		for (int k = 0; k < NKEYS; k++) {
			struct lines want = { 0 }, got = { 0 };

			lines_of_key(&ref, k, &want);
			for (int s = 0; s < 2; s++)
				lines_of_key(&g[s]->out, k, &got);
			for (int s = 0; s < 3; s++)
				lines_of_key(&h[s]->out, k, &got);
			T_ASSERT(want.n > 0);
			lines_eq(&want, &got, what);
			lines_free(&want);
			lines_free(&got);
		}
		for (int s = 0; s < 3; s++) {
			inst_close(h[s]);
			inst_free(h[s]);
		}
		for (int s = 0; s < 2; s++)
			inst_free(g[s]);
		sl_snap_free(&b);
	}
	printf("%s: %d output lines, equal after %d cuts and 2 -> 3 rescales\n", what, ref.n, cuts);
	lines_free(&ref);
}

/* A mid-stream snapshot of fn: truncations are refused, a different layout too. */
static void check_refusals(const struct sl_process_fn *fn, const struct sl_schema *out_schema)
{
	struct sl_process_fn other = *fn;
	struct sl_state_desc d[3];
	struct sl_snap_buf b;
	struct inst *g;
	int rc;

	sl_snap_init(&b);
	test_now = 0;
	g = inst_open(fn, out_schema);
	run(&g, 1, 0, 120);
	snap_of(g, &b);
	inst_close(g);
	inst_free(g);

	for (size_t len = 0; len < b.len; len++) {
		uint8_t *cut = malloc(len ? len : 1);
		struct sl_snap_reader r;

		memcpy(cut, b.data, len);
		g = inst_open(fn, out_schema);
		sl_snap_reader_init(&r, cut, len);
		rc = g->def.ops->restore(&g->ctx, &r, 0, MAX_PAR);
		T_ASSERT(rc == -EINVAL);
		inst_close(g);
		inst_free(g);
		free(cut);
	}

	memcpy(d, count_states, sizeof(d));
	d[AMOUNTS].value_size = 16;
	other.states = d;
	g = inst_open(&other, out_schema);
	T_ASSERT(restore_all(g, &b, 1, 0, MAX_PAR) == -EPROTO);
	T_ASSERT(strstr(sl_kstate_error(g->ctx.kstate), "'amounts'"));
	printf("refused: %s\n", sl_kstate_error(g->ctx.kstate));
	inst_close(g);
	inst_free(g);
	sl_snap_free(&b);
}

int main(void)
{
	struct sl_schema *cnt_out = sl_schema_create(), *ga_out = NULL;
	struct sl_process_fn cnt = { .states = count_states,
				     .nstates = 3,
				     .process = cnt_process,
				     .on_timer = cnt_on_timer };
	struct sl_process_fn dd, ga;
	char err[200];

	in_schema = sl_schema_create();
	T_ASSERT(in_schema && cnt_out);
	sl_schema_add(in_schema, "user", SL_TYPE_STRING);
	sl_schema_add(in_schema, "amount", SL_TYPE_BIGINT);
	sl_schema_add(in_schema, "t", SL_TYPE_TIMESTAMP);
	sl_schema_add(cnt_out, "user", SL_TYPE_STRING);
	sl_schema_add(cnt_out, "a", SL_TYPE_BIGINT);
	sl_schema_add(cnt_out, "b", SL_TYPE_BIGINT);
	sl_schema_add(cnt_out, "c", SL_TYPE_BIGINT);
	make_stream();

	check_fn("counting function", &cnt, cnt_out);
	check_refusals(&cnt, cnt_out);

	{
		struct sl_dedup_cfg c = { .schema = in_schema,
					  .order_field = 2,
					  .keep_last = true,
					  .emit_update_before = true,
					  .input_insert_only = true };

		T_ASSERT(sl_dedup_build(&c, &dd, err, sizeof(err)) == 0);
		check_fn("dedup keep last", &dd, in_schema);
		sl_dedup_free(&dd);
	}
	{
		static const int keys[] = { 0 };
		static const struct sl_agg_spec aggs[] = {
			{ .kind = SL_AGG_SUM, .field = 1, .name = "s" },
			{ .kind = SL_AGG_MAX, .field = 1, .name = "mx" },
			{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "n" },
			/* its values live in map state, one entry each, restored with it */
			{ .kind = SL_AGG_LISTAGG, .field = 0, .name = "l", .sep = "/" },
		};
		struct sl_group_agg_cfg c = { .in = in_schema,
					      .key_fields = keys,
					      .nkey = 1,
					      .aggs = aggs,
					      .naggs = 4,
					      .state_ttl_ms = 30 };

		T_ASSERT(sl_group_agg_build(&c, &ga, &ga_out, err, sizeof(err)) == 0);
		check_fn("group by with TTL", &ga, ga_out);
		sl_group_agg_free(&ga);
		sl_schema_destroy(ga_out);
	}
	sl_schema_destroy(cnt_out);
	sl_schema_destroy(in_schema);
	return T_EXIT_PASS;
}
