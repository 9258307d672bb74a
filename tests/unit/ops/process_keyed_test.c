/*
 * process_keyed_test.c - the keyed process function operator driven by hand, without the
 * runtime: a def and ctx built here (the operator allocates its own out_buf), rows fed to
 * its process hook with the key fields set as the runtime sets them, watermarks through
 * sl_op_watermark, processing time through the
 * on_proctime hook; a capture operator on port 0 records what comes out, in order.
 *
 * Checks: per-key value state, timer de-duplication, event timers firing at the watermark in
 * (time, key hash) order and before the watermark is forwarded, the timer's key being current
 * inside on_timer (state and sl_ctx_key_copy), timers registered by on_timer for a due time
 * firing in the same pass, deleted timers not firing, processing timers, the state-size
 * metric, and open's validation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "op.h"
#include "process.h"
#include "tests/test.h"
#include "timer.h"

/* No runtime: stand-ins for the shard services (weak: the real ones win when linked). */
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
}

/* ---- capture sink ---- */

static char out[64][96];
static int nout;
static const struct sl_schema *out_schema;

static void cap_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	T_ASSERT(nout < 64);
	sl_row_format(row, out_schema, out[nout], sizeof(out[0]));
	nout++;
}

static void cap_watermark(struct sl_ctx *ctx, sl_ts_t wm)
{
	T_ASSERT(nout < 64);
	snprintf(out[nout++], sizeof(out[0]), "WM %lld", (long long)wm);
}

static const struct sl_op_ops cap_ops = {
	.name = "capture",
	.process = cap_process,
	.on_watermark = cap_watermark,
};

/* ---- the process function under test ----
 * Counts records per key (value state 0) and keeps a timer at ts + 10. On an event timer it
 * emits (key, count, at, 0) and clears the count; key "z" chains a timer at at + 1 once.
 * A negative amount registers a processing timer at 100 and deletes the event timer. */

static const struct sl_state_desc states[] = {
	{ "count", SL_STATE_VALUE, 8, 0 },
};

static void emit4(struct sl_ctx *ctx, int64_t n, int64_t at, int64_t dom)
{
	struct sl_row_builder *b = sl_ctx_out(ctx);

	sl_ctx_key_copy(ctx, 0, b, 0);
	sl_rowb_set_i64(b, 1, n);
	sl_rowb_set_i64(b, 2, at);
	sl_rowb_set_i64(b, 3, dom);
	sl_emit(ctx, at, sl_rowb_finish(b));
}

static void fn_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	int64_t *c = sl_value_put(ctx, 0);

	T_ASSERT(c);
	(*c)++;
	T_ASSERT(sl_timer_event(ctx, ts + 10) == 0);
	if (sl_row_i64(row, 1) < 0) {
		sl_timer_event_delete(ctx, ts + 10);
		T_ASSERT(sl_timer_proc(ctx, 100) == 0);
	}
	emit4(ctx, *c, ts, 9);
}

static void fn_on_timer(struct sl_ctx *ctx, sl_ts_t at, enum sl_time_domain d, void *arg)
{
	int64_t *c = sl_value_get(ctx, 0);
	uint32_t klen;
	const uint8_t *k = sl_ctx_key(ctx, &klen);

	emit4(ctx, c ? *c : -1, at, d);
	sl_value_clear(ctx, 0);
	/* encoded "z": tag 2, length 1, 'z' */
	if (klen == 6 && k[5] == 'z' && at == 13)
		T_ASSERT(sl_timer_event(ctx, at + 1) == 0);
}

static int opened, closed;

static int fn_open(struct sl_ctx *ctx, void *arg)
{
	opened++;
	return *(int *)arg;
}

static void fn_close(struct sl_ctx *ctx, void *arg)
{
	closed++;
}

/* ---- driver ---- */

static struct sl_schema *in_schema;
static uint8_t rowbuf[256] __attribute__((aligned(8)));
static uint8_t keybuf[SL_KEY_MAX];

static void feed(struct sl_ctx *ctx, const char *user, int64_t amount, sl_ts_t ts)
{
	struct sl_row_builder b;
	const struct sl_row *row;

	sl_rowb_init(&b, rowbuf, sizeof(rowbuf), 2);
	sl_rowb_set_str(&b, 0, user, (uint32_t)strlen(user));
	sl_rowb_set_i64(&b, 1, amount);
	row = sl_rowb_finish(&b);
	/* what the runtime does before a keyed operator's process hook */
	ctx->klen = sl_key_encode(row, ctx->def->key_fields, ctx->def->key_types, ctx->def->nkey,
				  keybuf);
	ctx->key = keybuf;
	ctx->hash = sl_hash_bytes(keybuf, ctx->klen);
	ctx->m.in++;
	ctx->def->ops->process(ctx, ts, row);
}

static uint64_t hash_of(const char *user)
{
	uint8_t k[16];
	uint32_t n = (uint32_t)strlen(user);

	k[0] = 2;
	memcpy(k + 1, &n, 4);
	memcpy(k + 5, user, n);
	return sl_hash_bytes(k, 5 + n);
}

static void expect(const char *const *want, int n)
{
	for (int i = 0; i < n && i < nout; i++) {
		if (strcmp(out[i], want[i]) != 0) {
			fprintf(stderr, "row %d: got '%s', want '%s'\n", i, out[i], want[i]);
			exit(T_EXIT_FAIL);
		}
	}
	T_ASSERT_EQ_I64(nout, n);
	nout = 0;
}

int main(void)
{
	struct sl_schema *os = sl_schema_create();
	int open_rc = 0;
	struct sl_process_fn fn = {
		.states = states, .nstates = 1, .open = fn_open, .process = fn_process,
		.on_timer = fn_on_timer, .close = fn_close, .arg = &open_rc,
	};
	struct sl_op_def def = { 0 }, cap_def = { 0 };
	struct sl_ctx ctx = { 0 }, cap = { 0 };

	in_schema = sl_schema_create();
	T_ASSERT(in_schema && os);
	sl_schema_add(in_schema, "user", SL_TYPE_STRING);
	sl_schema_add(in_schema, "amount", SL_TYPE_BIGINT);
	sl_schema_add(os, "user", SL_TYPE_STRING);
	sl_schema_add(os, "n", SL_TYPE_BIGINT);
	sl_schema_add(os, "at", SL_TYPE_BIGINT);
	sl_schema_add(os, "dom", SL_TYPE_BIGINT);
	out_schema = os;

	def = (struct sl_op_def){ .ops = &sl_process_ops, .name = "p", .cfg = &fn,
				  .in_schema = in_schema, .out_schema = os, .nkey = 1 };
	def.key_fields[0] = 0;
	def.key_types[0] = SL_TYPE_STRING;
	cap_def = (struct sl_op_def){ .ops = &cap_ops, .name = "cap", .in_schema = os };
	cap = (struct sl_ctx){ .def = &cap_def, .watermark = SL_TS_MIN };
	ctx = (struct sl_ctx){ .def = &def, .watermark = SL_TS_MIN, .nports = 1 };
	ctx.port[0].n = 1;
	ctx.port[0].to[0] = &cap;

	/* open: a failing user open is reported and leaves nothing behind */
	open_rc = -EIO;
	T_ASSERT(def.ops->open(&ctx) == -EIO);
	T_ASSERT(ctx.kstate == NULL && ctx.event_timers == NULL && ctx.self == NULL);
	T_ASSERT(ctx.out_buf == NULL);
	open_rc = 0;
	T_ASSERT(def.ops->open(&ctx) == 0);
	T_ASSERT(opened == 2 && ctx.kstate && ctx.event_timers && ctx.proc_timers);
	T_ASSERT(ctx.wants_proctime);

	feed(&ctx, "a", 5, 1);
	feed(&ctx, "b", 5, 2);
	feed(&ctx, "a", 5, 5);
	feed(&ctx, "a", 5, 1); /* timer a@11 again: fires once */
	feed(&ctx, "z", 5, 3);
	feed(&ctx, "c", 5, 2);  /* timer c@12, same time as b@12 */
	feed(&ctx, "d", -1, 4); /* timer d@14 deleted, processing timer d@100 instead */
	T_ASSERT_EQ_I64(ctx.m.state_entries, 5);
	{
		static const char *const want[] = {
			"+I[a, 1, 1, 9]", "+I[b, 1, 2, 9]", "+I[a, 2, 5, 9]", "+I[a, 3, 1, 9]",
			"+I[z, 1, 3, 9]", "+I[c, 1, 2, 9]", "+I[d, 1, 4, 9]",
		};
		expect(want, 7);
	}
	T_ASSERT_EQ_I64(sl_timers_count(ctx.event_timers), 5); /* a11 a15 b12 c12 z13 */

	/* watermark 14: a@11, then b@12 / c@12 in key-hash order, then z@13 and the z@14 it
	 * registers while firing; all before the watermark itself */
	sl_op_watermark(&ctx, 14);
	{
		bool b_first = hash_of("b") < hash_of("c");
		const char *const want[] = {
			"+I[a, 3, 11, 0]",
			b_first ? "+I[b, 1, 12, 0]" : "+I[c, 1, 12, 0]",
			b_first ? "+I[c, 1, 12, 0]" : "+I[b, 1, 12, 0]",
			"+I[z, 1, 13, 0]",
			"+I[z, -1, 14, 0]",
			"WM 14",
		};
		expect(want, 6);
	}
	T_ASSERT_EQ_I64(ctx.m.state_entries, 1); /* d's count */
	/* the record key is restored after firing */
	T_ASSERT(ctx.key == keybuf && ctx.klen == 6 && keybuf[5] == 'd');

	/* a stale watermark does nothing; a@15 fires at 15 (a was cleared at 11) */
	sl_op_watermark(&ctx, 14);
	T_ASSERT_EQ_I64(nout, 0);
	feed(&ctx, "a", 5, 20);
	sl_op_watermark(&ctx, 15);
	{
		static const char *const want[] = { "+I[a, 1, 20, 9]", "+I[a, 1, 15, 0]", "WM 15" };
		expect(want, 3);
	}

	/* processing time: d@100 fires at 100, not before; the end watermark fires a@30 */
	def.ops->on_proctime(&ctx, 99);
	T_ASSERT_EQ_I64(nout, 0);
	def.ops->on_proctime(&ctx, 100);
	sl_op_watermark(&ctx, SL_TS_MAX);
	{
		static const char *const want[] = { "+I[d, 1, 100, 1]", "+I[a, -1, 30, 0]",
						    "WM 9223372036854775807" };
		expect(want, 3);
	}
	T_ASSERT_EQ_I64(sl_timers_count(ctx.event_timers) + sl_timers_count(ctx.proc_timers), 0);
	T_ASSERT_EQ_I64(ctx.m.state_entries, 0);

	def.ops->close(&ctx);
	T_ASSERT(closed == 1 && ctx.self == NULL && ctx.kstate == NULL && ctx.out_buf == NULL);

	/* an unkeyed def is refused */
	def.nkey = 0;
	T_ASSERT(def.ops->open(&ctx) == -EINVAL);
	sl_schema_destroy(os);
	sl_schema_destroy(in_schema);
	return T_EXIT_PASS;
}
