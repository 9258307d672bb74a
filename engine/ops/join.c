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
 * Invariants: a stored row's value (struct sl_rowset_val) holds count >= 1 and, on an outer
 * side, aux = its associations: the number of other-side rows (counted with multiplicity)
 * it matches.
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
	enum sl_type types[SL_SCHEMA_MAX_FIELDS]; /* of the input (union) schema */
};

/* Per shard (thread): what one record works in. Records never nest on a shard (emission
 * reaches only operators downstream, never this instance again), so instances share it. */
struct scratch {
	int users;		     /* open instances on this shard */
	struct sl_rowset_scan other; /* the other side's rows; out: those that match */
	uint8_t *in;		     /* SL_ROW_SCRATCH bytes: the input's side row */
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
	free(s->in);
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
		if (!s->in) {
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
	for (int i = 0; i < n; i++)
		j->types[i] = sl_schema_type(s, i);
	j->states[LEFT] = (struct sl_state_desc){ "join-left", SL_STATE_MAP,
						  sizeof(struct sl_rowset_val), cfg->ttl_ms };
	j->states[RIGHT] = (struct sl_state_desc){ "join-right", SL_STATE_MAP,
						   sizeof(struct sl_rowset_val), cfg->ttl_ms };
	out->states = j->states;
	out->nstates = 2;
	out->open = join_open;
	out->process = join_process;
	if (cfg->interval)
		out->on_timer = join_on_timer;
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
