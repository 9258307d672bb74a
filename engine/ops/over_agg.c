/*
 * over_agg.c - OVER aggregations as a keyed process function; semantics and state in
 * over_agg.h (Flink's row-time OVER functions).
 *
 *   process   a row at or below the watermark is late (counted, dropped); else it is
 *             stored with its arrival number and an event timer is set at its rowtime
 *   on_timer  (watermark reached `at`) the partition's rows are read and sorted by
 *             (rowtime, arrival); every row with done < rowtime <= at is emitted with the
 *             aggregates over its frame; then the rows no later row's frame can reach are
 *             removed (all of them for an unbounded frame, whose accumulators are kept)
 *
 * Timers fire in time order per key, so a firing normally processes the rows of one
 * rowtime; `done` makes a firing after a restore (or a duplicate timer) process each row
 * once. Identical rows (same bytes, so the same rowtime) share one rowset entry with a
 * copy count; they are peers in every frame, and ROWS counts each copy.
 *
 * Scratch (the scan, the sorted list, one accumulator block) is per shard thread, shared
 * by the shard's instances, as Top-N's is. No allocation once the largest partition has
 * grown it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "op.h"
#include "over_agg.h"
#include "rowset.h"

enum { ROWSET = 0, META = 1, ACC = 2 };

struct meta {
	int64_t seq;	 /* next arrival number */
	sl_ts_t done;	 /* rows with rowtime <= done are processed */
	uint32_t primed; /* done is set (a zeroed new value is not) */
	uint32_t rsv;
};

struct over {
	struct sl_state_desc states[3];
	int nstates;
	bool proctime; /* ORDER BY a processing-time attribute (over_proc_*) */
	int rowtime;
	enum sl_over_frame frame;
	int64_t preceding;
	int nin;
	enum sl_type in_types[SL_SCHEMA_MAX_FIELDS];
	int naggs;
	struct sl_agg_bound agg[SL_OVER_MAX_AGGS];
	uint32_t acc_size;
	bool has_init;
};

/* One stored row in processing order. */
struct item {
	const struct sl_rowset_row *r;
	sl_ts_t ts;
	int64_t seq;
};

struct scratch {
	int users;
	struct sl_rowset_scan scan;
	struct sl_rowset_vec items; /* struct item */
	void *acc;		    /* one accumulator block */
	uint32_t acc_cap;
};

static _Thread_local struct scratch *tls;

static int reject(char *err, size_t errcap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errcap, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void fail(struct sl_ctx *ctx, int code, const char *what)
{
	if (ctx->shard)
		sl_shard_fail(ctx->shard, code, "OVER aggregation '%s': %s", ctx->def->name, what);
}

static int over_open(struct sl_ctx *ctx, void *arg)
{
	const struct over *o = arg;
	struct scratch *s = tls;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		tls = s;
	}
	if (s->acc_cap < o->acc_size) {
		void *a = realloc(s->acc, o->acc_size);

		if (!a)
			return -ENOMEM;
		s->acc = a;
		s->acc_cap = o->acc_size;
	}
	s->users++;
	return 0;
}

static void over_close(struct sl_ctx *ctx, void *arg)
{
	if (tls && --tls->users == 0) {
		sl_rowset_scan_free(&tls->scan);
		free(tls->items.p);
		free(tls->acc);
		free(tls);
		tls = NULL;
	}
}

static void acc_reset(const struct over *o, void *acc)
{
	memset(acc, 0, o->acc_size);
	if (o->has_init)
		for (int i = 0; i < o->naggs; i++)
			if (o->agg[i].k->init)
				o->agg[i].k->init(&o->agg[i], (uint8_t *)acc + o->agg[i].off);
}

static void acc_add(const struct over *o, void *acc, const struct sl_row *row, int64_t copies)
{
	for (int64_t c = 0; c < copies; c++)
		for (int i = 0; i < o->naggs; i++)
			o->agg[i].k->add(&o->agg[i], (uint8_t *)acc + o->agg[i].off, row);
}

static void acc_destroy(const struct over *o, void *acc)
{
	for (int i = 0; i < o->naggs; i++)
		if (o->agg[i].k->destroy)
			o->agg[i].k->destroy(&o->agg[i], (uint8_t *)acc + o->agg[i].off);
}

/* Emits row with the aggregates of acc appended, copies times. */
static void emit(struct sl_ctx *ctx, const struct over *o, const struct sl_row *row, sl_ts_t ts,
		 const void *acc, int64_t copies)
{
	struct sl_row_builder *b = sl_ctx_out(ctx);
	const struct sl_row *out;

	for (int i = 0; i < o->nin; i++)
		sl_rowb_copy_field(b, i, row, i, o->in_types[i]);
	for (int i = 0; i < o->naggs; i++)
		o->agg[i].k->result(&o->agg[i], (const uint8_t *)acc + o->agg[i].off, b,
				    o->nin + i);
	sl_rowb_set_kind(b, SL_ROW_INSERT);
	out = sl_rowb_finish(b);
	if (!out) {
		fail(ctx, -E2BIG, "an output row is larger than the row scratch");
		return;
	}
	for (int64_t c = 0; c < copies; c++)
		sl_emit(ctx, ts, out);
}

static void over_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	const struct over *o = arg;
	struct sl_rowset_val v;
	struct meta *m;
	sl_ts_t rt;
	uint64_t h;

	if (sl_row_is_null(row, o->rowtime) ||
	    (rt = sl_row_i64(row, o->rowtime)) <= sl_ctx_watermark(ctx)) {
		sl_ctx_count_late(ctx);
		return;
	}
	m = sl_value_put(ctx, META);
	if (!m) {
		fail(ctx, -ENOMEM, "out of memory for its state");
		return;
	}
	h = sl_rowset_hash(row);
	if (sl_rowset_get(ctx, ROWSET, row, h, &v)) {
		v.count++; /* an identical row: a peer in every frame */
	} else {
		v.count = 1;
		v.aux = m->seq++;
	}
	if (sl_rowset_store(ctx, ROWSET, row, h, &v) || sl_timer_event(ctx, rt))
		fail(ctx, -ENOMEM, "out of memory for its state");
}

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Aggregates the RANGE frame of items[i], [ts - d, ts] with every peer of ts, into acc. */
static void range_acc(const struct over *o, const struct scratch *s, const struct item *it,
		      size_t n, size_t i, void *acc)
{
	size_t end = i;

	acc_reset(o, acc);
	while (end + 1 < n && it[end + 1].ts == it[i].ts)
		end++;
	for (size_t k = end + 1; k-- > 0 && it[k].ts >= it[i].ts - o->preceding;)
		acc_add(o, acc, sl_rowset_row_at(&s->scan, it[k].r), it[k].r->v.count);
}

static void over_timer(struct sl_ctx *ctx, sl_ts_t at, enum sl_time_domain domain, void *arg)
{
	const struct over *o = arg;
	struct scratch *s = tls;
	struct meta *m = sl_value_put(ctx, META);
	struct item *it;
	size_t n, first;

	if (!m || sl_rowset_scan(ctx, ROWSET, &s->scan)) {
		fail(ctx, -ENOMEM, "out of memory reading a partition");
		return;
	}
	n = s->scan.out.n;
	s->items.n = 0;
	it = sl_rowset_vec_grow(&s->items, sizeof(*it), n);
	if (n && !it) {
		fail(ctx, -ENOMEM, "out of memory reading a partition");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sl_rowset_row *r = (const struct sl_rowset_row *)s->scan.out.p + i;

		it[i] = (struct item){ r, sl_row_i64(sl_rowset_row_at(&s->scan, r), o->rowtime),
				       r->v.aux };
	}
	qsort(it, n, sizeof(*it), cmp_item);
	for (first = 0; first < n && m->primed && it[first].ts <= m->done; first++)
		;
	if (o->preceding < 0) {
		/* unbounded: the accumulators of every row processed so far are in ACC */
		void *acc = sl_value_put(ctx, ACC);

		if (!acc) {
			fail(ctx, -ENOMEM, "out of memory for its accumulators");
			return;
		}
		if (!m->primed && o->has_init)
			acc_reset(o, acc);
		for (size_t i = first; i < n && it[i].ts <= at;) {
			size_t j = i;

			if (o->frame == SL_OVER_RANGE) {
				/* peers first, then each with the same result */
				for (; j < n && it[j].ts == it[i].ts; j++)
					acc_add(o, acc, sl_rowset_row_at(&s->scan, it[j].r),
						it[j].r->v.count);
				for (size_t k = i; k < j; k++)
					emit(ctx, o, sl_rowset_row_at(&s->scan, it[k].r), it[k].ts,
					     acc, it[k].r->v.count);
			} else {
				const struct sl_row *row = sl_rowset_row_at(&s->scan, it[i].r);

				for (int64_t c = 0; c < it[i].r->v.count; c++) {
					acc_add(o, acc, row, 1);
					emit(ctx, o, row, it[i].ts, acc, 1);
				}
				j = i + 1;
			}
			i = j;
		}
		/* processed rows live on in the accumulators only */
		for (size_t i = 0; i < n && it[i].ts <= at; i++)
			sl_rowset_remove(ctx, ROWSET, sl_rowset_row_at(&s->scan, it[i].r),
					 it[i].r->h);
	} else if (o->frame == SL_OVER_RANGE) {
		for (size_t i = first; i < n && it[i].ts <= at; i++) {
			range_acc(o, s, it, n, i, s->acc);
			emit(ctx, o, sl_rowset_row_at(&s->scan, it[i].r), it[i].ts, s->acc,
			     it[i].r->v.count);
			acc_destroy(o, s->acc);
		}
		/* a later row (rowtime > at) reaches back to rowtime - d > at - d */
		for (size_t i = 0; i < n && it[i].ts <= at - o->preceding; i++)
			sl_rowset_remove(ctx, ROWSET, sl_rowset_row_at(&s->scan, it[i].r),
					 it[i].r->h);
	} else {
		/* ROWS n: the copies before the current one in (rowtime, arrival) order */
		int64_t keep = o->preceding;

		for (size_t i = 0; i < n && it[i].ts <= at; i++) {
			const struct sl_row *row = sl_rowset_row_at(&s->scan, it[i].r);

			for (int64_t c = 0; c < it[i].r->v.count; c++) {
				int64_t need = keep; /* copies before this one in the frame */

				if (i < first)
					continue;
				acc_reset(o, s->acc);
				acc_add(o, s->acc, row, 1);
				/* earlier copies of this row, then earlier rows */
				for (int64_t e = c < need ? c : need; e > 0; e--, need--)
					acc_add(o, s->acc, row, 1);
				for (size_t k = i; need > 0 && k-- > 0;) {
					int64_t take =
						it[k].r->v.count < need ? it[k].r->v.count : need;

					acc_add(o, s->acc, sl_rowset_row_at(&s->scan, it[k].r),
						take);
					need -= take;
				}
				emit(ctx, o, row, it[i].ts, s->acc, 1);
				acc_destroy(o, s->acc);
			}
		}
		/* keep the last n copies processed (and every row after at): walk back from
		 * the last processed row counting the copies after each */
		size_t last = 0;
		int64_t after = 0;

		while (last < n && it[last].ts <= at)
			last++;
		for (size_t i = last; i-- > 0; after += it[i].r->v.count) {
			const struct sl_row *row = sl_rowset_row_at(&s->scan, it[i].r);

			if (after >= keep) {
				sl_rowset_remove(ctx, ROWSET, row, it[i].r->h);
			} else if (after + it[i].r->v.count > keep) {
				struct sl_rowset_val v = it[i].r->v;

				v.count = keep - after;
				if (sl_rowset_store(ctx, ROWSET, row, it[i].r->h, &v))
					fail(ctx, -ENOMEM, "out of memory for its state");
			}
		}
	}
	if (!m->primed || at > m->done)
		m->done = at;
	m->primed = 1;
	(void)domain;
}

/*
 * Processing time (Flink's ProcTime*PrecedingFunction): rows are taken in arrival order and
 * never late. Unbounded frames (ROWS or RANGE: Flink runs both alike) add the row to the
 * accumulators in ACC and emit it at once. ROWS n emits at once over the row and the n
 * rows that arrived before it. RANGE d keeps each row with the shard's clock when it came
 * (aux) and emits at the end of that millisecond (a processing timer at t + 1), every row
 * of millisecond t with one result over the rows of [t - d, t]; a timer still pending at
 * the end of input does not fire, as in Flink. Stored rows are one entry each (the hash
 * mixes in the arrival number), so identical rows leave the frame in their own order.
 * O(frame) per row, as the bounded event-time frames.
 */
static uint64_t arrival_hash(const struct sl_row *row, int64_t seq)
{
	return sl_rowset_hash(row) ^ ((uint64_t)seq * 0x9e3779b97f4a7c15ull);
}

static int cmp_seq(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The partition's stored rows into s->items sorted by arrival, ts = their aux. */
static struct item *proc_items(struct sl_ctx *ctx, struct scratch *s, size_t *n)
{
	struct item *it;

	if (sl_rowset_scan(ctx, ROWSET, &s->scan))
		return NULL;
	*n = s->scan.out.n;
	s->items.n = 0;
	it = sl_rowset_vec_grow(&s->items, sizeof(*it), *n ? *n : 1);
	if (!it)
		return NULL;
	for (size_t i = 0; i < *n; i++) {
		const struct sl_rowset_row *r = (const struct sl_rowset_row *)s->scan.out.p + i;

		/* count is one entry's arrival number + 1 (over_proc_process) */
		it[i] = (struct item){ r, r->v.aux, r->v.count };
	}
	qsort(it, *n, sizeof(*it), cmp_seq);
	return it;
}

static void over_proc_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	const struct over *o = arg;
	struct scratch *s = tls;
	struct meta *m = sl_value_put(ctx, META);
	struct sl_rowset_val v;
	struct item *it;
	size_t n;
	int64_t seq;

	if (!m) {
		fail(ctx, -ENOMEM, "out of memory for its state");
		return;
	}
	if (o->preceding < 0) {
		void *acc = sl_value_put(ctx, ACC);

		if (!acc) {
			fail(ctx, -ENOMEM, "out of memory for its accumulators");
			return;
		}
		if (!m->primed && o->has_init)
			acc_reset(o, acc);
		m->primed = 1;
		acc_add(o, acc, row, 1);
		emit(ctx, o, row, ts, acc, 1);
		return;
	}
	seq = m->seq++;
	/* count: the arrival number + 1 (the sort key, >= 1 as rowset wants); aux: RANGE the
	 * clock */
	v = (struct sl_rowset_val){ .count = seq + 1, .aux = seq };
	if (o->frame == SL_OVER_RANGE) {
		sl_ts_t now = sl_ctx_proctime(ctx);

		v.aux = now;
		if ((!m->primed || m->done != now) && sl_timer_proc(ctx, now + 1) < 0) {
			fail(ctx, -ENOMEM, "out of memory for its timers");
			return;
		}
		m->done = now;
		m->primed = 1;
	}
	if (sl_rowset_store(ctx, ROWSET, row, arrival_hash(row, seq), &v)) {
		fail(ctx, -ENOMEM, "out of memory for its state");
		return;
	}
	if (o->frame == SL_OVER_RANGE)
		return; /* emitted by the timer at the end of this millisecond */
	it = proc_items(ctx, s, &n);
	if (!it) {
		fail(ctx, -ENOMEM, "out of memory reading a partition");
		return;
	}
	/* ROWS n: this row (the last) and the n before it; older ones are never needed again */
	acc_reset(o, s->acc);
	for (size_t k = n > (size_t)o->preceding ? n - 1 - (size_t)o->preceding : 0; k < n; k++)
		acc_add(o, s->acc, sl_rowset_row_at(&s->scan, it[k].r), 1);
	emit(ctx, o, row, ts, s->acc, 1);
	acc_destroy(o, s->acc);
	for (size_t k = 0; k + (size_t)o->preceding < n; k++)
		sl_rowset_remove(ctx, ROWSET, sl_rowset_row_at(&s->scan, it[k].r), it[k].r->h);
}

/* RANGE d: the rows of millisecond at - 1, each with the aggregates of [at - 1 - d, at - 1]. */
static void over_proc_timer(struct sl_ctx *ctx, sl_ts_t at, enum sl_time_domain domain, void *arg)
{
	const struct over *o = arg;
	struct scratch *s = tls;
	sl_ts_t cur = at - 1;
	struct item *it;
	size_t n;

	if (domain != SL_TIME_PROC)
		return;
	it = proc_items(ctx, s, &n);
	if (!it) {
		fail(ctx, -ENOMEM, "out of memory reading a partition");
		return;
	}
	acc_reset(o, s->acc);
	for (size_t k = 0; k < n; k++)
		if (it[k].ts >= cur - o->preceding && it[k].ts <= cur)
			acc_add(o, s->acc, sl_rowset_row_at(&s->scan, it[k].r), 1);
	for (size_t k = 0; k < n; k++)
		if (it[k].ts == cur)
			emit(ctx, o, sl_rowset_row_at(&s->scan, it[k].r), cur, s->acc, 1);
	acc_destroy(o, s->acc);
	/* a later millisecond t > cur reaches back to t - d > cur - d */
	for (size_t k = 0; k < n; k++)
		if (it[k].ts <= cur - o->preceding)
			sl_rowset_remove(ctx, ROWSET, sl_rowset_row_at(&s->scan, it[k].r),
					 it[k].r->h);
}

enum sl_type sl_over_agg_type(const struct sl_over_cfg *cfg, int i, int *prec, int *scale,
			      char *err, size_t errcap)
{
	struct sl_agg_bound b;

	memset(&b, 0, sizeof(b));
	if (sl_agg_bind(&b, &cfg->aggs[i], cfg->in_schema, err, errcap))
		return 0;
	*prec = b.out_prec;
	*scale = b.out_scale;
	return b.out_type;
}

int sl_over_build(const struct sl_over_cfg *cfg, struct sl_process_fn *out, char *err,
		  size_t errcap)
{
	const struct sl_schema *s = cfg->in_schema;
	struct over *o;
	uint32_t off = 0;

	if (!s || cfg->naggs < 1 || cfg->naggs > SL_OVER_MAX_AGGS ||
	    (!cfg->proctime && (cfg->rowtime < 0 || cfg->rowtime >= sl_schema_nfields(s))) ||
	    (cfg->frame != SL_OVER_ROWS && cfg->frame != SL_OVER_RANGE))
		return reject(err, errcap, "needs a rowtime field, a frame and 1 to %d aggregates",
			      SL_OVER_MAX_AGGS);
	if (!cfg->proctime && sl_schema_type(s, cfg->rowtime) != SL_TYPE_TIMESTAMP &&
	    sl_schema_type(s, cfg->rowtime) != SL_TYPE_TIMESTAMP_LTZ)
		return reject(err, errcap, "ORDER BY must be a TIMESTAMP rowtime");
	if (sl_schema_nfields(s) + cfg->naggs > SL_SCHEMA_MAX_FIELDS)
		return reject(err, errcap, "too many output fields");
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->proctime = cfg->proctime;
	o->rowtime = cfg->rowtime;
	o->frame = cfg->frame;
	o->preceding = cfg->preceding;
	o->nin = sl_schema_nfields(s);
	for (int i = 0; i < o->nin; i++)
		o->in_types[i] = sl_schema_type(s, i);
	o->naggs = cfg->naggs;
	for (int i = 0; i < cfg->naggs; i++) {
		struct sl_agg_bound *b = &o->agg[i];

		if (sl_agg_bind(b, &cfg->aggs[i], s, err, errcap)) {
			free(o);
			return -EINVAL;
		}
		/* unbounded frames keep accumulators in value state as bytes: no pointers */
		if (cfg->preceding < 0 && b->k->destroy) {
			reject(err, errcap,
			       "%s over this input keeps its values out of line, which an "
			       "UNBOUNDED PRECEDING frame cannot keep yet: use a bounded frame "
			       "(ROWS n or RANGE INTERVAL)",
			       sl_agg_kind_name(b->kind));
			free(o);
			return -EINVAL;
		}
		b->off = off;
		off += (sl_agg_acc_size(b) + 7) & ~7u;
		o->has_init |= b->k->init != NULL;
	}
	o->acc_size = off ? off : 8;
	o->states[ROWSET] = (struct sl_state_desc){ "over-rows", SL_STATE_MAP,
						    sizeof(struct sl_rowset_val), 0 };
	o->states[META] =
		(struct sl_state_desc){ "over-meta", SL_STATE_VALUE, sizeof(struct meta), 0 };
	o->states[ACC] = (struct sl_state_desc){ "over-acc", SL_STATE_VALUE, o->acc_size, 0 };
	o->nstates = cfg->preceding < 0 ? 3 : 2;
	memset(out, 0, sizeof(*out));
	out->states = o->states;
	out->nstates = o->nstates;
	out->open = over_open;
	out->process = cfg->proctime ? over_proc_process : over_process;
	out->on_timer = cfg->proctime ? over_proc_timer : over_timer;
	out->close = over_close;
	out->arg = o;
	return 0;
}

void sl_over_free(struct sl_process_fn *fn)
{
	if (!fn)
		return;
	free(fn->arg);
	memset(fn, 0, sizeof(*fn));
}
