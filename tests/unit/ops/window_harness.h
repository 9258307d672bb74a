/*
 * window_harness.h - drives one window operator instance by hand, without a runtime: an
 * sl_op_def and sl_ctx built here, port 0 feeding a capture of the main output and port 1
 * (tagged with the spec's late tag) a capture of the late side output. Captures keep every
 * row as `sl_row_format() @event-time` lines so tests compare exact output, in order.
 *
 * Input schema of every window test: user STRING, v INT, d DOUBLE, keyed by user.
 */
#ifndef SL_TESTS_WINDOW_HARNESS_H
#define SL_TESTS_WINDOW_HARNESS_H

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "op.h"
#include "window.h"
#include "tests/test.h"

#define NOV INT64_MIN /* a NULL `v` */

/* Shard services the operator may reach; weak so the library's win once it has them. The
 * harness runs without a shard (ctx->shard == NULL), so these only satisfy the linker. */
__attribute__((weak)) sl_ts_t sl_shard_now(const struct sl_shard *sh)
{
	return 0;
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
	fprintf(stderr, "shard failure %d: %s\n", code, fmt);
	exit(T_EXIT_FAIL);
}

struct cap {
	struct sl_ctx ctx; /* first: the capture's process hook gets this pointer */
	struct sl_op_def def;
	char text[1 << 16];
	size_t len;
	int rows;
};

struct wh {
	struct sl_schema *in;
	struct sl_schema *out;
	struct sl_window_cfg *cfg;
	struct sl_op_def def;
	struct sl_ctx ctx;
	struct cap main;
	struct cap late;
	uint8_t key[SL_KEY_MAX];
	_Alignas(8) uint8_t rowbuf[4096];
};

static void cap_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	struct cap *c = (struct cap *)ctx;
	size_t room = sizeof c->text - c->len;
	int n;

	n = sl_row_format(row, c->def.in_schema, c->text + c->len, room);
	T_ASSERT(n >= 0 && (size_t)n < room);
	c->len += (size_t)n;
	n = snprintf(c->text + c->len, sizeof c->text - c->len, " @%" PRId64 "\n", ts);
	c->len += (size_t)n;
	c->rows++;
}

static const struct sl_op_ops cap_ops = { .name = "capture", .process = cap_process };

static void cap_init(struct cap *c, const struct sl_schema *schema)
{
	memset(c, 0, sizeof(*c));
	c->def.ops = &cap_ops;
	c->def.name = "capture";
	c->def.in_schema = schema;
	c->ctx.def = &c->def;
	c->ctx.watermark = SL_TS_MIN;
}

/* Checks the captured lines against `want` exactly and clears the capture. */
static void cap_expect_at(struct cap *c, const char *want, const char *file, int line)
{
	if (strcmp(c->text, want) != 0) {
		fprintf(stderr, "%s:%d: output differs\n--- want\n%s--- got\n%s---\n", file, line,
			want, c->text);
		exit(T_EXIT_FAIL);
	}
	c->len = 0;
	c->text[0] = 0;
	c->rows = 0;
}
#define EXPECT(cap, want) cap_expect_at((cap), (want), __FILE__, __LINE__)

static struct sl_schema *wh_input_schema(void)
{
	struct sl_schema *s = sl_schema_create();

	T_ASSERT(s);
	T_ASSERT(sl_schema_add(s, "user", SL_TYPE_STRING) == 0);
	T_ASSERT(sl_schema_add(s, "v", SL_TYPE_INT) == 1);
	T_ASSERT(sl_schema_add(s, "d", SL_TYPE_DOUBLE) == 2);
	return s;
}

static void wh_init(struct wh *h, const struct sl_window_spec *spec,
		    const struct sl_agg_spec *aggs, int naggs)
{
	static const int key_fields[] = { 0 };
	struct sl_error err = { 0 };

	memset(h, 0, sizeof(*h));
	h->in = wh_input_schema();
	h->cfg = sl_window_cfg_create(spec, aggs, naggs, h->in, key_fields, 1, &h->out, &err);
	if (!h->cfg)
		fprintf(stderr, "cfg: %s\n", err.msg);
	T_ASSERT(h->cfg && h->out);
	h->def.ops = &sl_window_ops;
	h->def.name = "win";
	h->def.cfg = h->cfg;
	h->def.in_schema = h->in;
	h->def.out_schema = h->out;
	h->def.nkey = 1;
	h->def.key_fields[0] = 0;
	h->def.key_types[0] = SL_TYPE_STRING;
	cap_init(&h->main, h->out);
	cap_init(&h->late, h->in);
	h->ctx.def = &h->def;
	h->ctx.watermark = SL_TS_MIN;
	h->ctx.out_buf = aligned_alloc(8, SL_ROW_SCRATCH);
	T_ASSERT(h->ctx.out_buf);
	h->ctx.port[0].n = 1;
	h->ctx.port[0].to[0] = &h->main.ctx;
	h->ctx.port[1].n = 1;
	h->ctx.port[1].to[0] = &h->late.ctx;
	h->ctx.port_tag[1] = spec->late_tag;
	h->ctx.nports = spec->late_tag ? 2 : 1;
	T_ASSERT(sl_window_ops.open(&h->ctx) == 0);
}

static void wh_fini(struct wh *h)
{
	sl_window_ops.close(&h->ctx);
	free(h->ctx.out_buf);
	sl_window_cfg_destroy(h->cfg);
	sl_schema_destroy(h->out);
	sl_schema_destroy(h->in);
}

/* Feeds (user, v, d) at event time ts; user NULL gives a NULL key, v NOV a NULL v, d NaN a
 * NULL d. */
static void wh_rec(struct wh *h, sl_ts_t ts, const char *user, int64_t v, double d)
{
	struct sl_row_builder b;
	const struct sl_row *row;

	sl_rowb_init(&b, h->rowbuf, sizeof h->rowbuf, 3);
	if (user)
		sl_rowb_set_str(&b, 0, user, (uint32_t)strlen(user));
	if (v != NOV)
		sl_rowb_set_i64(&b, 1, v);
	if (d == d)
		sl_rowb_set_f64(&b, 2, d);
	row = sl_rowb_finish(&b);
	T_ASSERT(row);
	h->ctx.klen = sl_key_encode(row, h->def.key_fields, h->def.key_types, 1, h->key);
	h->ctx.key = h->key;
	h->ctx.hash = sl_hash_bytes(h->key, h->ctx.klen);
	h->ctx.m.in++;
	sl_window_ops.process(&h->ctx, ts, row);
}

static void wh_wm(struct wh *h, sl_ts_t wm)
{
	sl_op_watermark(&h->ctx, wm);
}

#endif
