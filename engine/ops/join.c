/*
 * join.c - the regular join (INNER, LEFT, RIGHT, FULL) as a keyed process function;
 * semantics, input shape and state layout in join.h (Flink's StreamingJoinOperator).
 *
 * Record path (process), for a row of side s and its key:
 *
 *   side row   the row's own fields are copied into a row of their own (kind +I), whose
 *              bytes are its identity in state: the builder writes equal rows as equal bytes
 *   matches    the other side's rows are read into the shard scratch (sl_rowset_scan,
 *              rowset.h), each joined with the input and kept if `cond` holds
 *   emit       the results Flink emits for the input's kind and the two sides' outerness,
 *              one per copy of a matching row
 *   update     the input's count in its side's map; the associations of each matching row
 *              of an outer other side
 *
 * Cost: O(m log m) per record for the m rows the other side holds under the key (Flink
 * walks the same m). No allocation except while a shard's largest key grows the scratch and
 * the state's own first insertion of a key.
 *
 * A window join (window_process, window_fire) only stores while a window is open and joins
 * when it fires:
 *
 *   open --window_process--> open (the row added to its side)
 *   open --window_fire (watermark >= window_end - 1)--> +I per result, both sides cleared
 *   fired --window_process--> late (counted, to the side's late output)
 *
 * Invariants: a stored row's value (struct sl_rowset_val) holds count >= 1 and, on an outer
 * side, aux = its associations: the number of other-side rows (counted with multiplicity)
 * it matches; in a window join aux = 1 marks a row whose key holds a NULL.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "join.h"
#include "op.h"
#include "rowset.h"

enum { LEFT = 0, RIGHT = 1 };

struct join {
	struct sl_state_desc states[2];
	int n[2];   /* fields of each side */
	int off[2]; /* first input field of each side */
	bool outer[2];
	int nkey;
	int key[SL_JOIN_MAX_KEYS];
	bool (*cond)(struct sl_ctx *ctx, const struct sl_row *joined, void *arg);
	void *cond_arg;
	bool interval;	  /* padding deferred to expiry; rows expire at the watermark */
	int time[2];	  /* interval: each side's time field, in its side row */
	sl_ts_t after[2]; /* interval: a side's row at t expires when the watermark is t + after */
	bool window;	  /* window join: rows kept until their window fires */
	int wend[2];	  /* window: each side's window_end field, in the input row */
	int late_tag[2];  /* window: side outputs of late rows */
	bool semi, anti;  /* window: left rows with / without a match */
	enum sl_type types[SL_SCHEMA_MAX_FIELDS]; /* of the input (union) schema */
};

/* Per shard (thread): what one record works in. Records never nest on a shard (emission
 * reaches only operators downstream, never this instance again), so instances share it. */
struct scratch {
	int users;		     /* open instances on this shard */
	struct sl_rowset_scan other; /* the other side's rows; out: those that match */
	uint8_t *in;		     /* SL_ROW_SCRATCH bytes: the input's side row */
	struct sl_rowset_scan mine;  /* window join: the left rows of the window firing */
	struct sl_rowset_vec hit;    /* window join: which right rows met a left one (bytes) */
	uint8_t *pair;		     /* window join: SL_ROW_SCRATCH bytes, the joined pair */
};

static _Thread_local struct scratch *tls;

static void fail(struct sl_ctx *ctx, int code, const char *what)
{
	/* unit tests drive the function without a shard; the job path always has one */
	if (ctx->shard)
		sl_shard_fail(ctx->shard, code, "join '%s': %s", ctx->def->name, what);
}

/* ---- open / close: the shard's scratch --------------------------------------------------- */

static void scratch_free(struct scratch *s)
{
	sl_rowset_scan_free(&s->other);
	sl_rowset_scan_free(&s->mine);
	free(s->hit.p);
	free(s->in);
	free(s->pair);
	free(s);
}

static int join_open(struct sl_ctx *ctx, void *arg)
{
	struct scratch *s = tls;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->in = aligned_alloc(8, SL_ROW_SCRATCH);
		s->pair = aligned_alloc(8, SL_ROW_SCRATCH);
		if (!s->in || !s->pair) {
			scratch_free(s);
			return -ENOMEM;
		}
		tls = s;
	}
	s->users++;
	return 0;
}

static void join_close(struct sl_ctx *ctx, void *arg)
{
	if (tls && --tls->users == 0) {
		scratch_free(tls);
		tls = NULL;
	}
}

/* ---- state: each side's multiset ---------------------------------------------------------- */

/* One more copy of the input row on its side; assoc: its matches, for an outer side. */
static int add_row(struct sl_ctx *ctx, int id, const struct sl_row *row, uint64_t h, int64_t assoc)
{
	struct sl_rowset_val v = { 0, 0 };

	sl_rowset_get(ctx, id, row, h, &v);
	v.count++;
	v.aux = assoc;
	return sl_rowset_store(ctx, id, row, h, &v);
}

/* One copy fewer; a row that is not there is left alone (Flink warns and goes on). */
static int retract_row(struct sl_ctx *ctx, int id, const struct sl_row *row, uint64_t h)
{
	struct sl_rowset_val v;

	if (!sl_rowset_get(ctx, id, row, h, &v))
		return 0;
	if (v.count <= 1) {
		sl_rowset_remove(ctx, id, row, h);
		return 0;
	}
	v.count--;
	return sl_rowset_store(ctx, id, row, h, &v);
}

/* ---- matches ------------------------------------------------------------------------------ */

/* Builds left ++ right (a side NULL: its fields NULL) in the output scratch with kind k. */
static const struct sl_row *join_row(struct sl_ctx *ctx, const struct join *j,
				     const struct sl_row *l, const struct sl_row *r,
				     enum sl_row_kind k)
{
	struct sl_row_builder *b = sl_ctx_out(ctx);

	for (int i = 0; l && i < j->n[LEFT]; i++)
		sl_rowb_copy_field(b, i, l, i, j->types[j->off[LEFT] + i]);
	for (int i = 0; r && i < j->n[RIGHT]; i++)
		sl_rowb_copy_field(b, j->n[LEFT] + i, r, i, j->types[j->off[RIGHT] + i]);
	sl_rowb_set_kind(b, k);
	return sl_rowb_finish(b);
}

/* The joined row of the input (side `side`) and another-side row, as output row kind k. */
static const struct sl_row *pair_row(struct sl_ctx *ctx, const struct join *j, int side,
				     const struct sl_row *in, const struct sl_row *other,
				     enum sl_row_kind k)
{
	return side == LEFT ? join_row(ctx, j, in, other, k) : join_row(ctx, j, other, in, k);
}

/*
 * Leaves in s->other.out the other side's rows that join with `in` (side `side`), ordered
 * by (hash, bytes). Returns 0, -ENOMEM, or -ENOSPC (a joined row over SL_ROW_SCRATCH).
 */
static int find_matches(struct sl_ctx *ctx, const struct join *j, struct scratch *s, int side,
			const struct sl_row *in)
{
	struct sl_rowset_row *r;
	size_t kept = 0;
	int rc = sl_rowset_scan(ctx, 1 - side, &s->other);

	if (rc || !j->cond)
		return rc;
	r = s->other.out.p;
	for (size_t i = 0; i < s->other.out.n; i++) {
		const struct sl_row *joined = pair_row(
			ctx, j, side, in, sl_rowset_row_at(&s->other, &r[i]), SL_ROW_INSERT);

		if (!joined)
			return -ENOSPC;
		if (j->cond(ctx, joined, j->cond_arg))
			r[kept++] = r[i];
	}
	s->other.out.n = kept;
	return 0;
}

static bool null_key(const struct join *j, const struct sl_row *row)
{
	for (int i = 0; i < j->nkey; i++)
		if (sl_row_is_null(row, j->key[i]))
			return true;
	return false;
}

/* The input's own fields as a row of their own (kind +I): its identity in state. */
static const struct sl_row *side_row(const struct join *j, struct scratch *s, int side,
				     const struct sl_row *row)
{
	struct sl_row_builder b;

	sl_rowb_init(&b, s->in, SL_ROW_SCRATCH, j->n[side]);
	for (int i = 0; i < j->n[side]; i++)
		sl_rowb_copy_field(&b, i, row, j->off[side] + i, j->types[j->off[side] + i]);
	return sl_rowb_finish(&b);
}

static int emit(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *out)
{
	if (!out)
		return -ENOSPC;
	sl_emit(ctx, ts, out);
	return 0;
}

/* +I / +U of side `side`: add it, join it, and update the outer other side's rows. */
static int accumulate(struct sl_ctx *ctx, const struct join *j, struct scratch *s, int side,
		      sl_ts_t ts, const struct sl_row *in, uint64_t h, enum sl_row_kind kind)
{
	int other = 1 - side;
	int64_t total = 0;
	int rc = 0;

	if (!s->other.out.n && j->outer[side] && !j->interval)
		rc = emit(ctx, ts, pair_row(ctx, j, side, in, NULL, SL_ROW_INSERT));
	for (size_t i = 0; !rc && i < s->other.out.n; i++) {
		struct sl_rowset_row *m = (struct sl_rowset_row *)s->other.out.p + i;
		const struct sl_row *o = sl_rowset_row_at(&s->other, m);
		/* an inner join forwards the input's kind; an outer one always inserts */
		enum sl_row_kind k = j->outer[0] || j->outer[1] ? SL_ROW_INSERT : kind;

		for (int64_t c = 0; !rc && c < m->v.count; c++) {
			if (j->outer[other] && m->v.aux == 0 && !j->interval)
				rc = emit(ctx, ts, pair_row(ctx, j, other, o, NULL, SL_ROW_DELETE));
			if (!rc)
				rc = emit(ctx, ts, pair_row(ctx, j, side, in, o, k));
		}
		if (!rc && j->outer[other]) {
			m->v.aux++;
			rc = sl_rowset_store(ctx, other, o, m->h, &m->v);
		}
		total += m->v.count;
	}
	if (rc)
		return rc;
	rc = add_row(ctx, side, in, h, j->outer[side] ? total : 0);
	/* interval: the row's last chance to match; one timer per (key, time) */
	if (!rc && j->interval)
		rc = sl_timer_event(ctx, sl_row_i64(in, j->time[side]) + j->after[side]);
	return rc;
}

/* Interval join, at the watermark: the rows whose last chance has passed leave state, and
 * an outer side's rows that never matched come out NULL-padded (once per copy). */
static void join_on_timer(struct sl_ctx *ctx, sl_ts_t at, enum sl_time_domain domain, void *arg)
{
	const struct join *j = arg;
	struct scratch *s = tls;
	sl_ts_t wm = sl_ctx_watermark(ctx);
	int rc = 0;

	if (domain != SL_TIME_EVENT)
		return;
	for (int side = LEFT; !rc && side <= RIGHT; side++) {
		const struct sl_rowset_row *r;

		rc = sl_rowset_scan(ctx, side, &s->other);
		r = s->other.out.p;
		for (size_t i = 0; !rc && i < s->other.out.n; i++) {
			const struct sl_row *row = sl_rowset_row_at(&s->other, &r[i]);
			sl_ts_t t = sl_row_i64(row, j->time[side]);

			if (t + j->after[side] > wm)
				continue;
			for (int64_t c = 0;
			     !rc && j->outer[side] && !r[i].v.aux && c < r[i].v.count; c++)
				rc = emit(ctx, t, pair_row(ctx, j, side, row, NULL, SL_ROW_INSERT));
			sl_rowset_remove(ctx, side, row, r[i].h);
		}
	}
	if (rc)
		fail(ctx, rc,
		     rc == -ENOMEM ? "out of memory" : "joined row exceeds SL_ROW_SCRATCH");
}

/* -U / -D of side `side`: remove it, retract its results, give outer rows back their NULLs. */
static int retract(struct sl_ctx *ctx, const struct join *j, struct scratch *s, int side,
		   sl_ts_t ts, const struct sl_row *in, uint64_t h, enum sl_row_kind kind)
{
	int other = 1 - side;
	int rc = retract_row(ctx, side, in, h);

	if (!rc && !s->other.out.n && j->outer[side])
		rc = emit(ctx, ts, pair_row(ctx, j, side, in, NULL, SL_ROW_DELETE));
	for (size_t i = 0; !rc && i < s->other.out.n; i++) {
		struct sl_rowset_row *m = (struct sl_rowset_row *)s->other.out.p + i;
		const struct sl_row *o = sl_rowset_row_at(&s->other, m);
		enum sl_row_kind k = j->outer[side] ? SL_ROW_DELETE : kind;

		for (int64_t c = 0; !rc && c < m->v.count; c++) {
			rc = emit(ctx, ts, pair_row(ctx, j, side, in, o, k));
			if (!rc && j->outer[other] && m->v.aux == 1)
				rc = emit(ctx, ts, pair_row(ctx, j, other, o, NULL, SL_ROW_INSERT));
		}
		if (!rc && j->outer[other] && m->v.aux > 0) {
			m->v.aux--;
			rc = sl_rowset_store(ctx, other, o, m->h, &m->v);
		}
	}
	return rc;
}

/* Hot path. */
static void join_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	const struct join *j = arg;
	struct scratch *s = tls;
	int64_t side = sl_row_is_null(row, 0) ? -1 : sl_row_i64(row, 0);
	enum sl_row_kind kind = (enum sl_row_kind)row->kind;
	const struct sl_row *in;
	uint64_t h;
	int rc = 0;

	if (side != LEFT && side != RIGHT) {
		fail(ctx, -EINVAL, "__side is neither 0 (left) nor 1 (right)");
		return;
	}
	in = side_row(j, s, (int)side, row);
	if (!in) {
		fail(ctx, -ENOSPC, "row exceeds SL_ROW_SCRATCH");
		return;
	}
	h = sl_rowset_hash(in);
	s->other.out.n = 0;
	if (!null_key(j, row))
		rc = find_matches(ctx, j, s, (int)side, in);
	if (!rc)
		rc = kind == SL_ROW_INSERT || kind == SL_ROW_UPDATE_AFTER
			     ? accumulate(ctx, j, s, (int)side, ts, in, h, kind)
			     : retract(ctx, j, s, (int)side, ts, in, h, kind);
	if (rc)
		fail(ctx, rc,
		     rc == -ENOMEM ? "out of memory" : "joined row exceeds SL_ROW_SCRATCH");
}

/* ---- window join ------------------------------------------------------------------------ */

/* Hot path: the row joins its window's side, or is late. */
static void window_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	const struct join *j = arg;
	struct scratch *s = tls;
	int64_t side = sl_row_is_null(row, 0) ? -1 : sl_row_i64(row, 0);
	const struct sl_row *in;
	bool nokey;
	sl_ts_t end;
	int rc;

	if (side != LEFT && side != RIGHT) {
		fail(ctx, -EINVAL, "__side is neither 0 (left) nor 1 (right)");
		return;
	}
	if (row->kind != SL_ROW_INSERT || sl_row_is_null(row, j->wend[side])) {
		fail(ctx, -EINVAL,
		     row->kind != SL_ROW_INSERT ? "a window join takes inserts only (+I)"
						: "a row without its window_end");
		return;
	}
	in = side_row(j, s, (int)side, row);
	if (!in) {
		fail(ctx, -ENOSPC, "row exceeds SL_ROW_SCRATCH");
		return;
	}
	end = sl_row_i64(row, j->wend[side]);
	if (end - 1 <= sl_ctx_watermark(ctx)) {
		/* its window fired already: late, never dropped without a trace */
		sl_ctx_count_late(ctx);
		if (j->late_tag[side])
			sl_emit_side(ctx, j->late_tag[side], ts, in);
		return;
	}
	/* a NULL key meets nothing: only a side whose unmatched rows come out keeps it,
	 * marked (aux 1) so that the firing does not pair it */
	nokey = null_key(j, row);
	if (nokey && !j->outer[side] && !(j->anti && side == LEFT))
		return;
	rc = add_row(ctx, (int)side, in, sl_rowset_hash(in), nokey);
	/* one timer per key (window): registering it again fires it once */
	if (!rc)
		rc = sl_timer_event(ctx, end - 1);
	if (rc)
		fail(ctx, rc, rc == -ENOMEM ? "out of memory" : "cannot keep the row");
}

/* left ++ right in the pair scratch (for the condition and the results). */
static const struct sl_row *pair_into(const struct join *j, struct scratch *s,
				      const struct sl_row *l, const struct sl_row *r)
{
	struct sl_row_builder b;

	sl_rowb_init(&b, s->pair, SL_ROW_SCRATCH, j->n[LEFT] + j->n[RIGHT]);
	for (int i = 0; i < j->n[LEFT]; i++)
		sl_rowb_copy_field(&b, i, l, i, j->types[j->off[LEFT] + i]);
	for (int i = 0; r && i < j->n[RIGHT]; i++)
		sl_rowb_copy_field(&b, j->n[LEFT] + i, r, i, j->types[j->off[RIGHT] + i]);
	return sl_rowb_finish(&b);
}

/* n copies of out (NULL: a row too large) as +I at `at`. */
static int emit_n(struct sl_ctx *ctx, sl_ts_t at, const struct sl_row *out, int64_t n)
{
	for (int64_t c = 0; c < n; c++)
		if (emit(ctx, at, out))
			return -ENOSPC;
	return 0;
}

/* One left row against the window's right rows: its results, or whether it met one. */
static int window_left(struct sl_ctx *ctx, const struct join *j, struct scratch *s, sl_ts_t at,
		       const struct sl_row *l, const struct sl_rowset_row *lr, bool *met)
{
	const struct sl_rowset_row *rr = s->other.out.p;
	uint8_t *hit = s->hit.p;
	int rc = 0;

	*met = false;
	/* a NULL key meets nothing; the rows under one key share it, so the left row tells */
	for (size_t i = 0; !rc && !lr->v.aux && i < s->other.out.n; i++) {
		const struct sl_row *r = sl_rowset_row_at(&s->other, &rr[i]);
		const struct sl_row *pair = pair_into(j, s, l, r);

		if (!pair)
			return -ENOSPC;
		if (j->cond && !j->cond(ctx, pair, j->cond_arg))
			continue;
		*met = true;
		hit[i] = 1;
		if (j->semi || j->anti)
			return 0; /* one match decides */
		rc = emit_n(ctx, at, pair, lr->v.count * rr[i].v.count);
	}
	return rc;
}

/* The watermark reached the window's last millisecond: both sides' rows of the window are
 * joined at once, then the window's state goes. O(left rows x right rows) of the window, as
 * Flink's nested loop. */
static void window_fire(struct sl_ctx *ctx, sl_ts_t at, enum sl_time_domain domain, void *arg)
{
	const struct join *j = arg;
	struct scratch *s = tls;
	const struct sl_rowset_row *lr, *rr;
	int rc;

	if (domain != SL_TIME_EVENT)
		return;
	rc = sl_rowset_scan(ctx, LEFT, &s->mine);
	if (!rc)
		rc = sl_rowset_scan(ctx, RIGHT, &s->other);
	s->hit.n = 0;
	if (!rc && !sl_rowset_vec_grow(&s->hit, 1, s->other.out.n + 1))
		rc = -ENOMEM;
	if (!rc)
		memset(s->hit.p, 0, s->other.out.n);
	lr = s->mine.out.p;
	for (size_t i = 0; !rc && i < s->mine.out.n; i++) {
		const struct sl_row *l = sl_rowset_row_at(&s->mine, &lr[i]);
		bool met;

		rc = window_left(ctx, j, s, at, l, &lr[i], &met);
		/* the left row alone: semi when it met one, anti or outer when it met none */
		if (!rc && (j->semi ? met : (j->anti || j->outer[LEFT]) && !met))
			rc = emit_n(ctx, at, join_row(ctx, j, l, NULL, SL_ROW_INSERT),
				    lr[i].v.count);
	}
	rr = s->other.out.p;
	for (size_t i = 0; !rc && j->outer[RIGHT] && i < s->other.out.n; i++)
		if (!((uint8_t *)s->hit.p)[i])
			rc = emit_n(ctx, at,
				    join_row(ctx, j, NULL, sl_rowset_row_at(&s->other, &rr[i]),
					     SL_ROW_INSERT),
				    rr[i].v.count);
	sl_map_clear(ctx, LEFT);
	sl_map_clear(ctx, RIGHT);
	if (rc)
		fail(ctx, rc,
		     rc == -ENOMEM ? "out of memory" : "joined row exceeds SL_ROW_SCRATCH");
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

int sl_join_build(const struct sl_join_cfg *cfg, struct sl_process_fn *out, char *err,
		  size_t errcap)
{
	const struct sl_schema *s = cfg ? cfg->in_schema : NULL;
	struct join *j;
	int n;

	memset(out, 0, sizeof(*out));
	if (!s)
		return reject(err, errcap, "join: no input schema");
	n = sl_schema_nfields(s);
	if (cfg->nleft < 1 || cfg->nright < 1 || n < 1 + cfg->nleft + cfg->nright)
		return reject(err, errcap,
			      "join: input has %d fields, expected 1 + %d left + %d right", n,
			      cfg->nleft, cfg->nright);
	if (sl_schema_type(s, 0) != SL_TYPE_BIGINT)
		return reject(err, errcap, "join: field 0 (__side) must be BIGINT");
	if (cfg->nkey < 0 || cfg->nkey > SL_JOIN_MAX_KEYS)
		return reject(err, errcap, "join: %d key fields", cfg->nkey);
	for (int i = 0; i < cfg->nkey; i++)
		if (cfg->key[i] < 1 || cfg->key[i] >= n)
			return reject(err, errcap, "join: key field %d is not an input field",
				      cfg->key[i]);
	if (cfg->ttl_ms < 0)
		return reject(err, errcap, "join: negative state TTL");
	if ((cfg->semi || cfg->anti) &&
	    (!cfg->window || (cfg->semi && cfg->anti) || cfg->left_outer || cfg->right_outer))
		return reject(err, errcap, "join: semi and anti joins are inner window joins");
	if (cfg->window) {
		for (int side = LEFT; side <= RIGHT; side++) {
			int f = cfg->window_end[side];
			int lo = side == LEFT ? 1 : 1 + cfg->nleft;
			int hi = side == LEFT ? cfg->nleft : cfg->nleft + cfg->nright;

			if (f < lo || f > hi ||
			    (sl_schema_type(s, f) != SL_TYPE_TIMESTAMP &&
			     sl_schema_type(s, f) != SL_TYPE_TIMESTAMP_LTZ))
				return reject(err, errcap,
					      "window join: the %s side's window_end must be one "
					      "of its TIMESTAMP fields",
					      side == LEFT ? "left" : "right");
		}
		if (cfg->interval || cfg->ttl_ms || cfg->late_tag[0] < 0 || cfg->late_tag[1] < 0)
			return reject(err, errcap,
				      "window join: no interval, no state TTL (the watermark "
				      "cleans its state), late tags >= 0");
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->n[LEFT] = cfg->nleft;
	j->n[RIGHT] = cfg->nright;
	j->off[LEFT] = 1;
	j->off[RIGHT] = 1 + cfg->nleft;
	j->outer[LEFT] = cfg->left_outer;
	j->outer[RIGHT] = cfg->right_outer;
	j->nkey = cfg->nkey;
	memcpy(j->key, cfg->key, sizeof(j->key));
	j->cond = cfg->cond;
	j->cond_arg = cfg->cond_arg;
	j->interval = cfg->interval;
	if (cfg->interval) {
		if (cfg->left_time < 1 || cfg->left_time > cfg->nleft ||
		    cfg->right_time <= cfg->nleft || cfg->right_time > cfg->nleft + cfg->nright ||
		    cfg->lower > cfg->upper) {
			free(j);
			return reject(err, errcap,
				      "join: an interval join needs a time field on each side and "
				      "lower <= upper");
		}
		/* left at t meets right rows in [t - upper, t - lower]: done at t - lower;
		 * right at t meets left rows in [t + lower, t + upper]: done at t + upper */
		j->time[LEFT] = cfg->left_time - 1;
		j->time[RIGHT] = cfg->right_time - 1 - cfg->nleft;
		j->after[LEFT] = -cfg->lower;
		j->after[RIGHT] = cfg->upper;
	}
	j->window = cfg->window;
	j->semi = cfg->semi;
	j->anti = cfg->anti;
	for (int side = LEFT; cfg->window && side <= RIGHT; side++) {
		j->wend[side] = cfg->window_end[side];
		j->late_tag[side] = cfg->late_tag[side];
	}
	for (int i = 0; i < n; i++)
		j->types[i] = sl_schema_type(s, i);
	j->states[LEFT] = (struct sl_state_desc){ "join-left", SL_STATE_MAP,
						  sizeof(struct sl_rowset_val), cfg->ttl_ms };
	j->states[RIGHT] = (struct sl_state_desc){ "join-right", SL_STATE_MAP,
						   sizeof(struct sl_rowset_val), cfg->ttl_ms };
	out->states = j->states;
	out->nstates = 2;
	out->open = join_open;
	out->process = cfg->window ? window_process : join_process;
	if (cfg->interval)
		out->on_timer = join_on_timer;
	if (cfg->window)
		out->on_timer = window_fire;
	out->close = join_close;
	out->arg = j;
	return 0;
}

void sl_join_free(struct sl_process_fn *fn)
{
	if (!fn)
		return;
	free(fn->arg);
	memset(fn, 0, sizeof(*fn));
}
