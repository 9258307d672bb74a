/*
 * dedup.c - ROW_NUMBER() = 1 deduplication as a keyed process function (semantics and state
 * layout in dedup.h, mirrored from Flink's deduplicate functions).
 *
 * Per key the function keeps at most one row: meta (state 0) holds its rowtime and size, the
 * row map (state 1) its bytes in chunks. Invariants: the row map of a key holds exactly the
 * chunks of the row meta describes, or is empty when meta is absent (both are written
 * together, with the same processing time, so with a TTL they also expire together; a store
 * prunes every chunk but the new row's, which drops expired leftovers).
 *
 * Rows emitted are copies built in the context's output scratch (sl_ctx_out's buffer): the
 * stored row is reassembled there for -U / -D, the input row is copied there to change its
 * kind. Nothing is allocated per record; the map's first insertion for a key allocates its
 * table (state.c).
 *
 * Cost per record: event-time duplicates that do not replace the stored row cost one value
 * lookup. A replacement costs ceil(size / SL_DEDUP_CHUNK) puts and a map walk that removes
 * the old chunks, plus one walk to read the old row when -U is wanted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "dedup.h"

enum { META = 0, ROW = 1 };

struct meta {
	sl_ts_t rowtime; /* order field of the stored row (0 on processing time) */
	uint32_t size;	 /* bytes of the stored row */
	uint32_t rsv;
};

struct dedup {
	struct sl_state_desc states[2];
	int nfields;
	enum sl_type types[SL_SCHEMA_MAX_FIELDS];
	int order_field; /* -1: processing time */
	bool keep_last;
	bool emit_ub;
	bool insert_only;
	bool ttl; /* a TTL is set: equal rows still refresh downstream (Flink) */
};

static void fail(struct sl_ctx *ctx, int code, const char *what)
{
	/* unit tests drive the function without a shard; the job path always has one */
	if (ctx->shard)
		sl_shard_fail(ctx->shard, code, "dedup '%s': %s", ctx->def->name, what);
}

/* ---- the stored row --------------------------------------------------------------------- */

struct prune {
	struct sl_ctx *ctx;
	const uint8_t *row; /* the new row's bytes */
	uint32_t size;
};

/* Keeps the chunks of the new row, removes every other (the old row's). */
static bool prune_chunk(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct prune *p = arg;
	uint8_t key[2 + SL_DEDUP_CHUNK];
	uint16_t idx;
	uint32_t off;

	memcpy(&idx, mkey, 2);
	off = (uint32_t)idx * SL_DEDUP_CHUNK;
	if (mklen >= 2 && off < p->size &&
	    mklen - 2 == (p->size - off < SL_DEDUP_CHUNK ? p->size - off : SL_DEDUP_CHUNK) &&
	    memcmp((const uint8_t *)mkey + 2, p->row + off, mklen - 2) == 0)
		return true;
	/* copied: the key bytes live in the entry being removed */
	memcpy(key, mkey, mklen);
	sl_map_remove(p->ctx, ROW, key, mklen);
	return true;
}

/* Replaces the key's stored row by `row`. The new chunks go in before the old ones come
 * out, so the key's map table is never emptied and dropped (state.c frees an emptied
 * table, which would cost a free and an allocation per replacement). The stored kind byte
 * is whatever the row had: load_row() sets the kind it emits. */
static int store_row(struct sl_ctx *ctx, const struct sl_row *row, sl_ts_t rowtime)
{
	const uint8_t *src = (const uint8_t *)row;
	struct prune p = { ctx, src, row->size };
	uint8_t key[2 + SL_DEDUP_CHUNK];
	struct meta *m;

	for (uint32_t off = 0, i = 0; off < row->size; off += SL_DEDUP_CHUNK, i++) {
		uint32_t n = row->size - off < SL_DEDUP_CHUNK ? row->size - off : SL_DEDUP_CHUNK;
		uint16_t idx = (uint16_t)i;

		memcpy(key, &idx, 2);
		memcpy(key + 2, src + off, n);
		if (!sl_map_put(ctx, ROW, key, 2 + n))
			goto out_clear;
	}
	/* also drops an expired row's leftovers (the walk removes expired entries) */
	sl_map_foreach(ctx, ROW, prune_chunk, &p);
	m = sl_value_put(ctx, META);
	if (!m)
		goto out_clear;
	m->rowtime = rowtime;
	m->size = row->size;
	return 0;

out_clear:
	sl_map_clear(ctx, ROW);
	sl_value_clear(ctx, META);
	return -ENOMEM;
}

struct gather {
	uint8_t *dst;
	uint32_t size;
	uint32_t got;
};

static bool gather_chunk(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct gather *g = arg;
	uint16_t idx;
	uint32_t off;

	memcpy(&idx, mkey, 2);
	off = (uint32_t)idx * SL_DEDUP_CHUNK;
	if (mklen < 2 || off + (mklen - 2) > g->size)
		return false; /* not the row meta describes: load_row reports it */
	memcpy(g->dst + off, (const uint8_t *)mkey + 2, mklen - 2);
	g->got += mklen - 2;
	return true;
}

/* Reassembles the stored row into the output scratch with kind `kind`. Returns it, or NULL
 * when the map does not hold the row meta describes (a broken invariant). */
static struct sl_row *load_row(struct sl_ctx *ctx, const struct meta *m, enum sl_row_kind kind)
{
	struct gather g = { .dst = (uint8_t *)sl_ctx_out(ctx)->row, .size = m->size };
	struct sl_row *r = (struct sl_row *)g.dst;

	if (m->size < SL_ROW_HDR || m->size > SL_ROW_SCRATCH)
		return NULL;
	sl_map_foreach(ctx, ROW, gather_chunk, &g);
	if (g.got != m->size || r->size != m->size)
		return NULL;
	r->kind = (uint8_t)kind;
	return r;
}

/* Emits a copy of the input row with kind `kind`. */
static void emit_as(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, enum sl_row_kind kind)
{
	struct sl_row *r = sl_ctx_out(ctx)->row;

	memcpy(r, row, row->size);
	r->kind = (uint8_t)kind;
	sl_emit(ctx, ts, r);
}

/* Flink's RecordEqualiser: same NULLs, same values, strings by content. */
static bool same_fields(const struct dedup *d, const struct sl_row *a, const struct sl_row *b)
{
	if (a->nulls != b->nulls)
		return false;
	for (int i = 0; i < d->nfields; i++) {
		uint32_t la, lb;
		const char *sa, *sb;

		if (sl_row_is_null(a, i))
			continue;
		if (d->types[i] != SL_TYPE_STRING) {
			if (a->slot[i] != b->slot[i])
				return false;
			continue;
		}
		sa = sl_row_str(a, i, &la);
		sb = sl_row_str(b, i, &lb);
		if (la != lb || memcmp(sa, sb, la) != 0)
			return false;
	}
	return true;
}

/* ---- the process function --------------------------------------------------------------- */

/* Processing time, keep first: only the first row of a key passes. */
static void keep_first_proc(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	if (sl_value_get(ctx, META))
		return;
	if (!sl_value_put(ctx, META)) {
		fail(ctx, -ENOMEM, "out of memory");
		return;
	}
	emit_as(ctx, ts, row, SL_ROW_INSERT);
}

/* Changelog input, -U or -D: the stored row is withdrawn as -D (it has the full content,
 * the retraction may carry only the key, e.g. a Kafka tombstone). */
static void retract(struct sl_ctx *ctx, sl_ts_t ts)
{
	struct meta *m = sl_value_get(ctx, META);
	struct sl_row *old;

	if (!m)
		return; /* removing a row never seen: nothing to do */
	old = load_row(ctx, m, SL_ROW_DELETE);
	if (old)
		sl_emit(ctx, ts, old);
	else
		fail(ctx, -EIO, "stored row is damaged");
	sl_map_clear(ctx, ROW);
	sl_value_clear(ctx, META);
}

/* Hot path. */
static void dedup_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	const struct dedup *d = arg;
	enum sl_row_kind kind = (enum sl_row_kind)row->kind;
	struct sl_row *old = NULL;
	sl_ts_t rowtime = 0;
	struct meta *m;

	if (kind != SL_ROW_INSERT && d->insert_only) {
		fail(ctx, -EINVAL, "input must be insert-only, got an update or delete");
		return;
	}
	if (d->order_field < 0 && !d->keep_last) {
		keep_first_proc(ctx, ts, row);
		return;
	}
	if (kind == SL_ROW_UPDATE_BEFORE || kind == SL_ROW_DELETE) {
		retract(ctx, ts);
		return;
	}
	if (d->order_field >= 0) {
		if (sl_row_is_null(row, d->order_field)) {
			fail(ctx, -EINVAL, "NULL rowtime");
			return;
		}
		rowtime = sl_row_i64(row, d->order_field);
	}
	m = sl_value_get(ctx, META);
	if (m && d->order_field >= 0) {
		/* Flink's isDuplicate: keep last takes ties, keep first only strictly earlier */
		if (d->keep_last ? rowtime < m->rowtime : rowtime >= m->rowtime)
			return;
	} else if (m && !d->ttl) {
		old = load_row(ctx, m, SL_ROW_UPDATE_BEFORE);
		if (old && same_fields(d, old, row))
			return; /* unchanged and no TTL to refresh downstream: nothing to say */
	}
	if (!m) {
		emit_as(ctx, ts, row, SL_ROW_INSERT);
	} else {
		if (d->emit_ub) {
			if (!old)
				old = load_row(ctx, m, SL_ROW_UPDATE_BEFORE);
			if (!old) {
				fail(ctx, -EIO, "stored row is damaged");
				return;
			}
			sl_emit(ctx, ts, old);
		}
		emit_as(ctx, ts, row, SL_ROW_UPDATE_AFTER);
	}
	if (store_row(ctx, row, rowtime))
		fail(ctx, -ENOMEM, "out of memory");
}

/* ---- plan time -------------------------------------------------------------------------- */

static int reject(char *err, size_t errcap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int reject(char *err, size_t errcap, const char *fmt, ...)
{
	va_list ap;

	if (err && errcap) {
		va_start(ap, fmt);
		vsnprintf(err, errcap, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int sl_dedup_build(const struct sl_dedup_cfg *cfg, struct sl_process_fn *out, char *err,
		   size_t errcap)
{
	struct dedup *d;
	int n;

	memset(out, 0, sizeof(*out));
	if (!cfg || !cfg->schema)
		return reject(err, errcap, "dedup: no schema");
	n = sl_schema_nfields(cfg->schema);
	if (n < 1 || n > SL_SCHEMA_MAX_FIELDS)
		return reject(err, errcap, "dedup: schema has %d fields", n);
	if (cfg->order_field < -1 || cfg->order_field >= n)
		return reject(err, errcap, "dedup: order field %d out of range", cfg->order_field);
	if (cfg->order_field >= 0) {
		enum sl_type t = sl_schema_type(cfg->schema, cfg->order_field);

		if (t != SL_TYPE_TIMESTAMP && t != SL_TYPE_TIMESTAMP_LTZ)
			return reject(
				err, errcap,
				"dedup: ORDER BY %s must be a time attribute (TIMESTAMP), not %s",
				sl_schema_name(cfg->schema, cfg->order_field), sl_type_name(t));
	}
	if (cfg->ttl_ms < 0)
		return reject(err, errcap, "dedup: negative state TTL");
	if (!cfg->input_insert_only && (cfg->order_field >= 0 || !cfg->keep_last))
		return reject(err, errcap,
			      "dedup: %s deduplication needs an insert-only input, but the input "
			      "has updates or deletes",
			      cfg->order_field >= 0 ? "event-time" : "processing-time keep-first");
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->nfields = n;
	for (int i = 0; i < n; i++)
		d->types[i] = sl_schema_type(cfg->schema, i);
	d->order_field = cfg->order_field;
	d->keep_last = cfg->keep_last;
	d->emit_ub = cfg->emit_update_before;
	d->insert_only = cfg->input_insert_only;
	d->ttl = cfg->ttl_ms > 0;
	d->states[META] = (struct sl_state_desc){ "dedup-meta", SL_STATE_VALUE, sizeof(struct meta),
						  cfg->ttl_ms };
	d->states[ROW] = (struct sl_state_desc){ "dedup-row", SL_STATE_MAP, 8, cfg->ttl_ms };
	out->states = d->states;
	out->nstates = d->order_field < 0 && !d->keep_last ? 1 : 2;
	out->process = dedup_process;
	out->arg = d;
	return 0;
}

void sl_dedup_free(struct sl_process_fn *fn)
{
	if (!fn)
		return;
	free(fn->arg);
	memset(fn, 0, sizeof(*fn));
}
