/*
 * topn.c - Top-N (ROW_NUMBER, RANK, DENSE_RANK ... WHERE rn <= N) as a keyed process
 * function; semantics and state in topn.h (Flink's AppendOnlyTopNFunction and
 * RetractableTopNFunction).
 *
 * Record path (process), for a row and its partition:
 *
 *   read     the partition's rows into the shard scratch (sl_rowset_scan), sorted by the
 *            ORDER BY fields then arrival; the result before: the rows ranked in range
 *   apply    the record to that list in memory (a copy more or less, a new row placed by
 *            its arrival number), sorted again; the result after
 *   emit     the difference, by position (rank in the output) or as a multiset (not)
 *   write    the record's row back to state; for an insert-only input, drop the rows that
 *            now rank below the range, which nothing can lift again
 *
 * A window Top-N (window_process) only applies and writes while its window is open, and
 * emits its result once when the window's timer fires (window_fire):
 *
 *   open --window_process--> open (rows kept: those that may still rank in range)
 *   open --window_fire (watermark >= window_end - 1)--> +I per ranked row, state cleared
 *   fired --window_process--> late (counted, to the late side output)
 *
 * Cost O(m log m) per record for the m rows of the partition; no allocation once the
 * shard's largest partition has grown the scratch.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "rowset.h"
#include "topn.h"

enum { ROWS = 0, SEQ = 1 };

struct topn {
	struct sl_state_desc states[2];
	struct sl_topn_cfg cfg;
	enum sl_type types[SL_SCHEMA_MAX_FIELDS];
};

/* A distinct row of the partition in order. */
struct item {
	const struct sl_row *row;
	uint64_t h;
	int64_t count;
	int64_t seq; /* arrival number: ties go in arrival order */
};

/* One position of a result: a copy of a row and its rank. */
struct pos {
	const struct item *it; /* into s->items or s->next; rows compared by their bytes */
	int64_t rank;
};

struct scratch {
	int users;
	struct sl_rowset_scan scan;
	struct sl_rowset_vec items;	    /* struct item: the partition before the record */
	struct sl_rowset_vec next;	    /* struct item: and after it */
	struct sl_rowset_vec before, after; /* struct pos: the results, into items / next */
	uint8_t *in;			    /* SL_ROW_SCRATCH: the record's row */
};

static _Thread_local struct scratch *tls;
/* the function being sorted for; qsort has no argument (one sort at a time per thread) */
static _Thread_local const struct topn *sorting;

static void fail(struct sl_ctx *ctx, int code, const char *what)
{
	/* unit tests drive the function without a shard; the job path always has one */
	if (ctx->shard)
		sl_shard_fail(ctx->shard, code, "top-n '%s': %s", ctx->def->name, what);
}

static void scratch_free(struct scratch *s)
{
	sl_rowset_scan_free(&s->scan);
	free(s->items.p);
	free(s->next.p);
	free(s->before.p);
	free(s->after.p);
	free(s->in);
	free(s);
}

static int topn_open(struct sl_ctx *ctx, void *arg)
{
	struct scratch *s = tls;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->in = aligned_alloc(8, SL_ROW_SCRATCH);
		if (!s->in) {
			scratch_free(s);
			return -ENOMEM;
		}
		tls = s;
	}
	s->users++;
	return 0;
}

static void topn_close(struct sl_ctx *ctx, void *arg)
{
	if (tls && --tls->users == 0) {
		scratch_free(tls);
		tls = NULL;
	}
}

/* ---- order ---------------------------------------------------------------------------- */

static int cmp_field(enum sl_type t, const struct sl_row *a, const struct sl_row *b, int f)
{
	bool na = sl_row_is_null(a, f), nb = sl_row_is_null(b, f);

	if (na || nb)
		return na == nb ? 0 : na ? -1 : 1; /* NULL is the smallest value */
	switch (t) {
	case SL_TYPE_DOUBLE:
	case SL_TYPE_FLOAT: {
		double x = sl_row_f64(a, f), y = sl_row_f64(b, f);

		return (x > y) - (x < y);
	}
	case SL_TYPE_STRING: {
		uint32_t la, lb;
		const char *x = sl_row_str(a, f, &la), *y = sl_row_str(b, f, &lb);
		int c = memcmp(x, y, la < lb ? la : lb);

		return c ? (c > 0 ? 1 : -1) : (la > lb) - (la < lb);
	}
	default: {
		int64_t x = sl_row_i64(a, f), y = sl_row_i64(b, f);

		return (x > y) - (x < y);
	}
	}
}

/* By the ORDER BY fields only: 0 for rows that tie. */
static int cmp_order(const struct topn *t, const struct sl_row *a, const struct sl_row *b)
{
	for (int i = 0; i < t->cfg.norder; i++) {
		int f = t->cfg.order[i];
		int c = cmp_field(t->types[f], a, b, f);

		if (c)
			return t->cfg.desc[i] ? -c : c;
	}
	return 0;
}

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = cmp_order(sorting, x->row, y->row);

	if (c)
		return c;
	c = (x->seq > y->seq) - (x->seq < y->seq);
	return sorting->cfg.ties_last ? -c : c;
}

/* The positions of items[0..n) ranked in [lo, hi] into v. 0 or -ENOMEM. */
static int result(const struct topn *t, const struct item *items, size_t n, struct sl_rowset_vec *v)
{
	int64_t p = 0, rank = 0, dense = 0;

	v->n = 0;
	for (size_t i = 0; i < n; i++) {
		bool tie = i > 0 && !cmp_order(t, items[i - 1].row, items[i].row);

		if (!tie)
			dense++;
		for (int64_t c = 0; c < items[i].count; c++) {
			struct pos *q;
			int64_t r;

			p++;
			if (!tie && c == 0)
				rank = p;
			r = t->cfg.fn == SL_TOPN_ROW_NUMBER ? p
			    : t->cfg.fn == SL_TOPN_RANK	    ? rank
							    : dense;
			if (r > t->cfg.rank_hi)
				return 0;
			if (r < t->cfg.rank_lo)
				continue;
			q = sl_rowset_vec_grow(v, sizeof(*q), 1);
			if (!q)
				return -ENOMEM;
			*q = (struct pos){ &items[i], r };
		}
	}
	return 0;
}

static bool same_row(const struct item *a, const struct item *b)
{
	return a->h == b->h && a->row->size == b->row->size &&
	       !memcmp(a->row, b->row, a->row->size);
}

/* ---- emission --------------------------------------------------------------------------- */

static int emit(struct sl_ctx *ctx, const struct topn *t, sl_ts_t ts, const struct pos *p,
		enum sl_row_kind k)
{
	struct sl_row_builder *b = sl_ctx_out(ctx);
	const struct sl_row *out;

	for (int i = 0; i < t->cfg.nout; i++)
		sl_rowb_copy_field(b, i, p->it->row, i, t->types[i]);
	if (t->cfg.emit_rank)
		sl_rowb_set_i64(b, t->cfg.nout, p->rank);
	sl_rowb_set_kind(b, k);
	out = sl_rowb_finish(b);
	if (!out)
		return -ENOSPC;
	sl_emit(ctx, ts, out);
	return 0;
}

/* Position by position: what changed at each rank. */
static int emit_ranked(struct sl_ctx *ctx, const struct topn *t, sl_ts_t ts,
		       const struct sl_rowset_vec *bv, const struct sl_rowset_vec *av)
{
	const struct pos *b = bv->p, *a = av->p;
	size_t n = bv->n > av->n ? bv->n : av->n;
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++) {
		if (i < bv->n && i < av->n) {
			if (b[i].rank == a[i].rank && same_row(b[i].it, a[i].it))
				continue;
			rc = emit(ctx, t, ts, &b[i], SL_ROW_UPDATE_BEFORE);
			if (!rc)
				rc = emit(ctx, t, ts, &a[i], SL_ROW_UPDATE_AFTER);
		} else if (i < av->n) {
			rc = emit(ctx, t, ts, &a[i], SL_ROW_INSERT);
		} else {
			rc = emit(ctx, t, ts, &b[i], SL_ROW_DELETE);
		}
	}
	return rc;
}

/* Copies of `it`'s row among the positions v. */
static int64_t copies(const struct sl_rowset_vec *v, const struct item *it)
{
	const struct pos *p = v->p;
	int64_t n = 0;

	for (size_t i = 0; i < v->n; i++)
		n += same_row(p[i].it, it);
	return n;
}

/* As a multiset: -D for each copy that left the result, then +I for each that entered. */
static int emit_unranked(struct sl_ctx *ctx, const struct topn *t, sl_ts_t ts,
			 const struct sl_rowset_vec *bv, const struct sl_rowset_vec *av)
{
	const struct pos *b = bv->p, *a = av->p;
	int rc = 0;

	for (size_t i = 0; !rc && i < bv->n; i++)
		if ((i == 0 || !same_row(b[i - 1].it, b[i].it)))
			for (int64_t k = copies(av, b[i].it); !rc && k < copies(bv, b[i].it); k++)
				rc = emit(ctx, t, ts, &b[i], SL_ROW_DELETE);
	for (size_t i = 0; !rc && i < av->n; i++)
		if ((i == 0 || !same_row(a[i - 1].it, a[i].it)))
			for (int64_t k = copies(bv, a[i].it); !rc && k < copies(av, a[i].it); k++)
				rc = emit(ctx, t, ts, &a[i], SL_ROW_INSERT);
	return rc;
}

/* ---- record path ------------------------------------------------------------------------ */

/* The record's row (its first nout fields, kind +I) in s->in: its identity in state. */
static const struct sl_row *own_row(const struct topn *t, struct scratch *s,
				    const struct sl_row *row)
{
	struct sl_row_builder b;

	sl_rowb_init(&b, s->in, SL_ROW_SCRATCH, t->cfg.nout);
	for (int i = 0; i < t->cfg.nout; i++)
		sl_rowb_copy_field(&b, i, row, i, t->types[i]);
	return sl_rowb_finish(&b);
}

/* Reads the partition into s->items, sorted. Returns 0 or -ENOMEM. */
static int read_items(struct sl_ctx *ctx, const struct topn *t, struct scratch *s)
{
	const struct sl_rowset_row *r;
	int rc = sl_rowset_scan(ctx, ROWS, &s->scan);

	if (rc)
		return rc;
	s->items.n = 0;
	r = s->scan.out.p;
	if (!sl_rowset_vec_grow(&s->items, sizeof(struct item), s->scan.out.n + 1))
		return -ENOMEM;
	s->items.n = s->scan.out.n;
	for (size_t i = 0; i < s->scan.out.n; i++)
		((struct item *)s->items.p)[i] = (struct item){ sl_rowset_row_at(&s->scan, &r[i]),
								r[i].h, r[i].v.count, r[i].v.aux };
	sorting = t;
	if (s->items.n > 1)
		qsort(s->items.p, s->items.n, sizeof(struct item), cmp_item);
	return 0;
}

/* Drops from state the rows ranked below the range (insert-only input only): everything
 * after the last row of the result, which no later row can lift again. With nothing in the
 * range every row ranks before it, and stays. */
static void forget_below(struct sl_ctx *ctx, const struct item *items, size_t n,
			 const struct sl_rowset_vec *after)
{
	const struct pos *p = after->p;

	if (!after->n)
		return;
	for (size_t i = (size_t)(p[after->n - 1].it - items) + 1; i < n; i++)
		sl_rowset_remove(ctx, ROWS, items[i].row, items[i].h);
}

/*
 * s->next: the partition with the record applied (a copy more or less of its row, placed
 * by arrival when new), sorted; *v: what state must hold for the row afterwards (count 0:
 * nothing). Returns 0, 1 when the record changes nothing (a retraction of a row that is
 * not there), or -ENOMEM.
 */
static int apply(struct sl_ctx *ctx, const struct topn *t, struct scratch *s, bool add,
		 const struct sl_row *in, uint64_t h, struct sl_rowset_val *v)
{
	const struct item *items = s->items.p;
	struct item *next;
	size_t n = s->items.n, at = n;

	for (size_t i = 0; i < n && at == n; i++)
		if (items[i].h == h && items[i].row->size == in->size &&
		    !memcmp(items[i].row, in, in->size))
			at = i;
	if (!add && at == n)
		return 1;
	s->next.n = 0;
	next = sl_rowset_vec_grow(&s->next, sizeof(struct item), n + 1);
	if (!next)
		return -ENOMEM;
	memcpy(next, items, n * sizeof(*next));
	s->next.n = n;
	if (at < n) {
		next[at].count += add ? 1 : -1;
		*v = (struct sl_rowset_val){ next[at].count, next[at].seq };
		if (!next[at].count) {
			memmove(&next[at], &next[at + 1], (n - at - 1) * sizeof(*next));
			s->next.n--;
		}
		return 0;
	}
	int64_t *seq = sl_value_put(ctx, SEQ);

	if (!seq)
		return -ENOMEM;
	*v = (struct sl_rowset_val){ 1, (*seq)++ };
	next[n] = (struct item){ in, h, 1, v->aux };
	s->next.n++;
	sorting = t;
	qsort(next, s->next.n, sizeof(*next), cmp_item);
	return 0;
}

/* Hot path. */
static void topn_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	const struct topn *t = arg;
	struct scratch *s = tls;
	bool add = row->kind == SL_ROW_INSERT || row->kind == SL_ROW_UPDATE_AFTER;
	const struct sl_row *in = own_row(t, s, row);
	struct sl_rowset_val v;
	uint64_t h;
	int rc;

	if (!in) {
		fail(ctx, -ENOSPC, "row exceeds SL_ROW_SCRATCH");
		return;
	}
	h = sl_rowset_hash(in);
	rc = read_items(ctx, t, s);
	if (!rc)
		rc = result(t, s->items.p, s->items.n, &s->before);
	if (!rc)
		rc = apply(ctx, t, s, add, in, h, &v);
	if (rc == 1)
		return;
	if (!rc)
		rc = result(t, s->next.p, s->next.n, &s->after);
	if (!rc)
		rc = t->cfg.emit_rank ? emit_ranked(ctx, t, ts, &s->before, &s->after)
				      : emit_unranked(ctx, t, ts, &s->before, &s->after);
	if (!rc && v.count)
		rc = sl_rowset_store(ctx, ROWS, in, h, &v);
	else if (!rc)
		sl_rowset_remove(ctx, ROWS, in, h);
	if (!rc && t->cfg.input_insert_only)
		forget_below(ctx, s->next.p, s->next.n, &s->after);
	if (rc)
		fail(ctx, rc,
		     rc == -ENOMEM ? "out of memory" : "output row exceeds SL_ROW_SCRATCH");
}

/* ---- window Top-N ----------------------------------------------------------------------- */

/* Hot path: the row joins its window's partition, keeping only the rows that may still rank
 * in range; a row whose window has fired is late. */
static void window_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	const struct topn *t = arg;
	struct scratch *s = tls;
	const struct sl_row *in;
	struct sl_rowset_val v;
	sl_ts_t end;
	uint64_t h;
	int rc;

	if (row->kind != SL_ROW_INSERT || sl_row_is_null(row, t->cfg.window_end)) {
		fail(ctx, -EINVAL,
		     row->kind != SL_ROW_INSERT ? "a window Top-N takes inserts only (+I)"
						: "a row without its window_end");
		return;
	}
	end = sl_row_i64(row, t->cfg.window_end);
	if (end - 1 <= sl_ctx_watermark(ctx)) {
		/* its window fired already: late, never dropped without a trace */
		sl_ctx_count_late(ctx);
		if (t->cfg.late_tag)
			sl_emit_side(ctx, t->cfg.late_tag, ts, row);
		return;
	}
	in = own_row(t, s, row);
	if (!in) {
		fail(ctx, -ENOSPC, "row exceeds SL_ROW_SCRATCH");
		return;
	}
	h = sl_rowset_hash(in);
	rc = read_items(ctx, t, s);
	if (!rc)
		rc = apply(ctx, t, s, true, in, h, &v);
	if (!rc)
		rc = result(t, s->next.p, s->next.n, &s->after);
	if (!rc)
		rc = sl_rowset_store(ctx, ROWS, in, h, &v);
	if (!rc)
		forget_below(ctx, s->next.p, s->next.n, &s->after);
	/* one timer per partition (window): registering it again fires it once */
	if (!rc)
		rc = sl_timer_event(ctx, end - 1);
	if (rc)
		fail(ctx, rc, rc == -ENOMEM ? "out of memory" : "cannot keep the row");
}

/* The watermark reached the window's last millisecond: its rows in range come out once, in
 * rank order, and the window's state goes. */
static void window_fire(struct sl_ctx *ctx, sl_ts_t at, enum sl_time_domain domain, void *arg)
{
	const struct topn *t = arg;
	struct scratch *s = tls;
	const struct pos *p;
	int rc;

	if (domain != SL_TIME_EVENT)
		return;
	rc = read_items(ctx, t, s);
	if (!rc)
		rc = result(t, s->items.p, s->items.n, &s->before);
	p = s->before.p;
	for (size_t i = 0; !rc && i < s->before.n; i++)
		rc = emit(ctx, t, at, &p[i], SL_ROW_INSERT);
	sl_map_clear(ctx, ROWS);
	sl_value_clear(ctx, SEQ);
	if (rc)
		fail(ctx, rc,
		     rc == -ENOMEM ? "out of memory" : "output row exceeds SL_ROW_SCRATCH");
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

int sl_topn_build(const struct sl_topn_cfg *cfg, struct sl_process_fn *out, char *err,
		  size_t errcap)
{
	const struct sl_schema *s = cfg ? cfg->in_schema : NULL;
	struct topn *t;
	int n;

	memset(out, 0, sizeof(*out));
	if (!s)
		return reject(err, errcap, "top-n: no input schema");
	n = sl_schema_nfields(s);
	if (cfg->nout < 1 || cfg->nout > n || (cfg->emit_rank && cfg->nout >= SL_SCHEMA_MAX_FIELDS))
		return reject(err, errcap, "top-n: %d output fields of %d", cfg->nout, n);
	if (cfg->norder < 1 || cfg->norder > SL_TOPN_MAX_ORDER)
		return reject(err, errcap, "top-n: %d ORDER BY fields (1 to %d)", cfg->norder,
			      SL_TOPN_MAX_ORDER);
	for (int i = 0; i < cfg->norder; i++)
		if (cfg->order[i] < 0 || cfg->order[i] >= cfg->nout)
			return reject(err, errcap,
				      "top-n: ORDER BY field %d is not an output field",
				      cfg->order[i]);
	if (cfg->rank_lo < 1 || cfg->rank_hi < cfg->rank_lo)
		return reject(err, errcap, "top-n: rank range [%lld, %lld] is empty",
			      (long long)cfg->rank_lo, (long long)cfg->rank_hi);
	if (cfg->fn != SL_TOPN_ROW_NUMBER && cfg->fn != SL_TOPN_RANK &&
	    cfg->fn != SL_TOPN_DENSE_RANK)
		return reject(err, errcap, "top-n: unknown ranking function %d", (int)cfg->fn);
	if (cfg->ttl_ms < 0)
		return reject(err, errcap, "top-n: negative state TTL");
	if (cfg->window && (cfg->window_end < 0 || cfg->window_end >= cfg->nout ||
			    (sl_schema_type(s, cfg->window_end) != SL_TYPE_TIMESTAMP &&
			     sl_schema_type(s, cfg->window_end) != SL_TYPE_TIMESTAMP_LTZ) ||
			    !cfg->input_insert_only || cfg->ttl_ms || cfg->late_tag < 0))
		return reject(err, errcap,
			      "window top-n: needs a TIMESTAMP window_end among the output fields, "
			      "an insert-only input, no state TTL (the watermark cleans its state) "
			      "and a late tag >= 0");
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cfg = *cfg;
	t->cfg.in_schema = NULL;
	for (int i = 0; i < n; i++)
		t->types[i] = sl_schema_type(s, i);
	t->states[ROWS] = (struct sl_state_desc){ "topn-rows", SL_STATE_MAP,
						  sizeof(struct sl_rowset_val), cfg->ttl_ms };
	t->states[SEQ] =
		(struct sl_state_desc){ "topn-seq", SL_STATE_VALUE, sizeof(int64_t), cfg->ttl_ms };
	out->states = t->states;
	out->nstates = 2;
	out->open = topn_open;
	out->process = cfg->window ? window_process : topn_process;
	if (cfg->window)
		out->on_timer = window_fire;
	out->close = topn_close;
	out->arg = t;
	return 0;
}

void sl_topn_free(struct sl_process_fn *fn)
{
	if (!fn)
		return;
	free(fn->arg);
	memset(fn, 0, sizeof(*fn));
}
