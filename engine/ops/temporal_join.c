/*
 * temporal_join.c - the event-time temporal join (FOR SYSTEM_TIME AS OF) as a keyed process
 * function; semantics, input shape and state layout in temporal_join.h (Flink's
 * TemporalRowTimeJoinOperator).
 *
 * Record path (process): a left row or a version is appended to its map under the key's
 * next sequence number, and the key's single timer is moved down to the row's time if that
 * is earlier. Nothing else happens until the watermark passes.
 *
 * Timer path (on_timer, once per key and watermark advance at most):
 *
 *   collect   walk both maps into the shard scratch (pointers to the map keys: entries
 *             never move while we hold them, state.c / kvtab.h)
 *   sort      left chunks by (seq, chunk); right chunks by (time, seq, chunk): a run of
 *             equal seq is one row; among versions of equal time the last to arrive wins
 *   join      each left row with time <= watermark, in seq (arrival) order: binary search
 *             of the live versions for the greatest time <= its time
 *   clean     remove the joined left rows, the replaced versions, and every live version
 *             older than the latest one <= watermark; re-arm the timer at the earliest left
 *             time still buffered; drop the meta value once both maps are empty
 *
 * Cost: O((L + R) log(L + R)) per firing for the key's L buffered chunks and R version
 * chunks; R stays small because versions below the watermark are cleaned at every firing.
 *
 * Idle-state retention (ttl_ms > 1, Flink's BaseTwoInputStreamOperatorWithStateRetention):
 * every row refreshes the key's one processing-time cleanup timer, moved to now + 1.5 ttl
 * when now + ttl has passed the registered one; a firing that leaves state refreshes it too,
 * one that leaves nothing deletes it. When it fires, the key's state goes, pending left rows
 * included (they are never emitted, as in Flink).
 *
 * Invariants: meta.has_timer <=> an event timer of this key is registered at meta.timer;
 * meta.has_cleanup <=> a processing timer of this key is registered at meta.cleanup_at;
 * every buffered row's chunks are all present (stored together, removed together).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "temporal_join.h"

enum { LEFT = 0, RIGHT = 1, META = 2 };

#define PREFIX 10u /* u64 seq, u16 chunk */

struct meta {
	uint64_t next_seq;  /* arrival number of the key's next row (both sides) */
	sl_ts_t timer;	    /* the registered event timer, if has_timer */
	sl_ts_t cleanup_at; /* the registered retention timer, if has_cleanup */
	uint32_t has_timer;
	uint32_t has_cleanup;
};

struct tjoin {
	struct sl_state_desc states[3];
	int nleft;
	int nright;
	int left_time;
	int right_time;
	bool left_outer;
	sl_ts_t min_retention; /* 0: keep state until the watermark cleans it */
	sl_ts_t max_retention;
	int nkey;
	int left_key[SL_TJOIN_MAX_KEYS];
	bool (*cond)(const struct sl_row *joined, void *arg);
	void *cond_arg;
	enum sl_type types[SL_SCHEMA_MAX_FIELDS]; /* of the input (union) schema */
};

/* One chunk of a stored row, as collected from a map. */
struct ent {
	const uint8_t *mkey; /* the map key: [seq][chunk][bytes], owned by state */
	uint32_t mklen;
	uint16_t chunk;
	uint64_t seq;
	sl_ts_t t; /* the row's time (the entry's value) */
};

/* One stored row: a run of entries. */
struct run {
	size_t first;
	uint32_t n;
	sl_ts_t t;
	uint8_t kind;
	bool live; /* versions: not replaced by a later version of the same time */
};

struct vec {
	void *p;
	size_t n;
	size_t cap;
};

/* Per shard (thread): what one firing works in. Firings never nest on a shard (emission
 * reaches only process hooks downstream, never a timer), so instances share it. */
struct scratch {
	int users;	  /* open instances on this shard */
	struct vec left;  /* struct ent */
	struct vec right; /* struct ent */
	struct vec lruns; /* struct run */
	struct vec vers;  /* struct run */
	uint8_t *lrow;	  /* SL_ROW_SCRATCH bytes: the left row being joined */
	uint8_t *rrow;	  /* SL_ROW_SCRATCH bytes: the version it joins */
};

static _Thread_local struct scratch *tls;

static void fail(struct sl_ctx *ctx, int code, const char *what)
{
	/* unit tests drive the function without a shard; the job path always has one */
	if (ctx->shard)
		sl_shard_fail(ctx->shard, code, "temporal join '%s': %s", ctx->def->name, what);
}

/* Returns a slot for one more element of `size` bytes, or NULL on ENOMEM. Grows by
 * doubling: allocation happens only while a shard's largest firing grows. */
static void *vec_push(struct vec *v, size_t size)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 64;
		void *p = realloc(v->p, cap * size);

		if (!p)
			return NULL;
		v->p = p;
		v->cap = cap;
	}
	return (uint8_t *)v->p + size * v->n++;
}

/* ---- open / close: the shard's scratch --------------------------------------------------- */

static void scratch_free(struct scratch *s)
{
	free(s->left.p);
	free(s->right.p);
	free(s->lruns.p);
	free(s->vers.p);
	free(s->lrow);
	free(s->rrow);
	free(s);
}

static int tj_open(struct sl_ctx *ctx, void *arg)
{
	struct scratch *s = tls;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->lrow = aligned_alloc(8, SL_ROW_SCRATCH);
		s->rrow = aligned_alloc(8, SL_ROW_SCRATCH);
		if (!s->lrow || !s->rrow) {
			scratch_free(s);
			return -ENOMEM;
		}
		tls = s;
	}
	s->users++;
	return 0;
}

static void tj_close(struct sl_ctx *ctx, void *arg)
{
	if (tls && --tls->users == 0) {
		scratch_free(tls);
		tls = NULL;
	}
}

/* ---- record path ------------------------------------------------------------------------- */

static int store_row(struct sl_ctx *ctx, int id, const struct sl_row *row, uint64_t seq, sl_ts_t t)
{
	const uint8_t *src = (const uint8_t *)row;
	uint8_t key[PREFIX + SL_TJOIN_CHUNK];

	memcpy(key, &seq, 8);
	for (uint32_t off = 0, i = 0; off < row->size; off += SL_TJOIN_CHUNK, i++) {
		uint32_t n = row->size - off < SL_TJOIN_CHUNK ? row->size - off : SL_TJOIN_CHUNK;
		uint16_t idx = (uint16_t)i;
		sl_ts_t *v;

		memcpy(key + 8, &idx, 2);
		memcpy(key + PREFIX, src + off, n);
		v = sl_map_put(ctx, id, key, PREFIX + n);
		if (!v)
			return -ENOMEM;
		*v = t;
	}
	return 0;
}

/* Moves the key's one timer down to `t` (Flink's registerSmallestTimer). */
static int arm_timer(struct sl_ctx *ctx, struct meta *m, sl_ts_t t)
{
	int rc;

	if (m->has_timer && m->timer <= t)
		return 0;
	if (m->has_timer)
		sl_timer_event_delete(ctx, m->timer);
	rc = sl_timer_event(ctx, t);
	if (rc)
		return rc;
	m->timer = t;
	m->has_timer = 1;
	return 0;
}

/* Pushes the key's cleanup timer out (Flink's registerProcessingCleanupTimer). */
static int keep_alive(struct sl_ctx *ctx, const struct tjoin *j, struct meta *m)
{
	sl_ts_t now;
	int rc;

	if (!j->min_retention)
		return 0;
	now = sl_ctx_proctime(ctx);
	if (m->has_cleanup && now + j->min_retention <= m->cleanup_at)
		return 0;
	if (m->has_cleanup)
		sl_timer_proc_delete(ctx, m->cleanup_at);
	rc = sl_timer_proc(ctx, now + j->max_retention);
	if (rc)
		return rc;
	m->cleanup_at = now + j->max_retention;
	m->has_cleanup = 1;
	return 0;
}

/* Forgets the key: both maps, its timers, its meta. */
static void drop_key(struct sl_ctx *ctx)
{
	struct meta *m = sl_value_get(ctx, META);

	if (m && m->has_timer)
		sl_timer_event_delete(ctx, m->timer);
	if (m && m->has_cleanup)
		sl_timer_proc_delete(ctx, m->cleanup_at);
	sl_map_clear(ctx, LEFT);
	sl_map_clear(ctx, RIGHT);
	sl_value_clear(ctx, META);
}

/* Hot path. */
static void tj_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row, void *arg)
{
	const struct tjoin *j = arg;
	int64_t side = sl_row_is_null(row, 0) ? -1 : sl_row_i64(row, 0);
	int tf = side == 0 ? j->left_time : j->right_time;
	struct meta *m;
	uint64_t seq;
	sl_ts_t t;

	if (side != 0 && side != 1) {
		fail(ctx, -EINVAL, "__side is neither 0 (left) nor 1 (right)");
		return;
	}
	if (side == 1 && row->kind == SL_ROW_UPDATE_BEFORE)
		return; /* the version it retracts ends where the +U that follows begins */
	if (sl_row_is_null(row, tf)) {
		fail(ctx, -EINVAL, "NULL rowtime");
		return;
	}
	t = sl_row_i64(row, tf);
	m = sl_value_put(ctx, META);
	if (!m)
		goto out_nomem;
	seq = m->next_seq++;
	if (arm_timer(ctx, m, t) || keep_alive(ctx, j, m))
		goto out_nomem;
	if (store_row(ctx, side == 0 ? LEFT : RIGHT, row, seq, t))
		goto out_nomem;
	return;

out_nomem:
	fail(ctx, -ENOMEM, "out of memory");
}

/* ---- timer path -------------------------------------------------------------------------- */

struct collecting {
	struct vec *v;
	bool nomem;
};

static bool collect(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct collecting *c = arg;
	struct ent *e;

	if (mklen <= PREFIX)
		return true; /* not ours; cannot happen */
	e = vec_push(c->v, sizeof(*e));
	if (!e) {
		c->nomem = true;
		return false;
	}
	e->mkey = mkey;
	e->mklen = mklen;
	memcpy(&e->seq, mkey, 8);
	memcpy(&e->chunk, (const uint8_t *)mkey + 8, 2);
	memcpy(&e->t, value, sizeof(e->t));
	return true;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (x->chunk > y->chunk) - (x->chunk < y->chunk);
}

static int cmp_time_seq(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return cmp_seq(a, b);
}

/* Cuts sorted entries into runs of one row each. Returns 0 or -ENOMEM / -EIO (a row whose
 * chunks are not 0..n-1: a broken invariant). */
static int make_runs(const struct vec *ents, struct vec *runs)
{
	const struct ent *e = ents->p;

	runs->n = 0;
	for (size_t i = 0; i < ents->n;) {
		struct run *r = vec_push(runs, sizeof(*r));
		size_t k = i;

		if (!r)
			return -ENOMEM;
		while (k < ents->n && e[k].seq == e[i].seq) {
			if (e[k].chunk != k - i)
				return -EIO;
			k++;
		}
		*r = (struct run){ .first = i,
				   .n = (uint32_t)(k - i),
				   .t = e[i].t,
				   .live = true,
				   .kind = e[i].mkey[PREFIX + offsetof(struct sl_row, kind)] };
		i = k;
	}
	return 0;
}

/* Reassembles a run's row into dst (SL_ROW_SCRATCH bytes). Returns it or NULL if damaged. */
static const struct sl_row *assemble(const struct vec *ents, const struct run *r, uint8_t *dst)
{
	const struct ent *e = (const struct ent *)ents->p + r->first;
	uint32_t off = 0;

	for (uint32_t i = 0; i < r->n; i++) {
		uint32_t n = e[i].mklen - PREFIX;

		if (off + n > SL_ROW_SCRATCH)
			return NULL;
		memcpy(dst + off, e[i].mkey + PREFIX, n);
		off += n;
	}
	if (off < SL_ROW_HDR || ((const struct sl_row *)dst)->size != off)
		return NULL;
	return (const struct sl_row *)dst;
}

/* Index of the live version with the greatest time <= t, or -1. vers holds live ones only,
 * sorted by time, one per time. */
static long find_version(const struct run *v, size_t n, sl_ts_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* Builds left ++ right (right NULL: NULL fields) in the output scratch with the left kind. */
static const struct sl_row *join_row(struct sl_ctx *ctx, const struct tjoin *j,
				     const struct sl_row *l, const struct sl_row *r)
{
	struct sl_row_builder *b = sl_ctx_out(ctx);

	for (int i = 0; i < j->nleft; i++)
		sl_rowb_copy_field(b, i, l, 1 + i, j->types[1 + i]);
	for (int i = 0; r && i < j->nright; i++)
		sl_rowb_copy_field(b, j->nleft + i, r, 1 + j->nleft + i,
				   j->types[1 + j->nleft + i]);
	sl_rowb_set_kind(b, (enum sl_row_kind)l->kind);
	return sl_rowb_finish(b);
}

static bool null_key(const struct tjoin *j, const struct sl_row *l)
{
	for (int i = 0; i < j->nkey; i++)
		if (sl_row_is_null(l, j->left_key[i]))
			return true;
	return false;
}

/* Joins one left row with the version found for it (or none) and emits the result. */
static int emit_joined(struct sl_ctx *ctx, const struct tjoin *j, sl_ts_t lt,
		       const struct sl_row *l, const struct sl_row *r)
{
	const struct sl_row *out = NULL;

	if (r && !null_key(j, l)) {
		out = join_row(ctx, j, l, r);
		if (!out)
			return -ENOSPC;
		if (j->cond && !j->cond(out, j->cond_arg))
			out = NULL;
	}
	if (!out && j->left_outer) {
		out = join_row(ctx, j, l, NULL);
		if (!out)
			return -ENOSPC;
	}
	if (out)
		sl_emit(ctx, lt, out);
	return 0;
}

static void remove_run(struct sl_ctx *ctx, int id, const struct vec *ents, const struct run *r)
{
	const struct ent *e = (const struct ent *)ents->p + r->first;
	uint8_t key[PREFIX + SL_TJOIN_CHUNK];

	for (uint32_t i = 0; i < r->n; i++) {
		/* copied: the key bytes live in the entry being removed */
		memcpy(key, e[i].mkey, e[i].mklen);
		sl_map_remove(ctx, id, key, e[i].mklen);
	}
}

/* Keeps, of each time, the version that arrived last; packs the live ones to the front of
 * s->vers.p (the replaced ones after them) and returns how many are live. */
static size_t pick_versions(struct scratch *s)
{
	struct run *v = s->vers.p;
	size_t nlive = 0;

	for (size_t i = 0; i < s->vers.n; i++)
		if (i + 1 < s->vers.n && v[i + 1].t == v[i].t)
			v[i].live = false; /* sorted by (time, seq): the next one replaces it */
	/* stable partition: live first, in time order */
	for (size_t i = 0; i < s->vers.n; i++) {
		if (!v[i].live)
			continue;
		struct run tmp = v[i];

		memmove(&v[nlive + 1], &v[nlive], (i - nlive) * sizeof(*v));
		v[nlive++] = tmp;
	}
	return nlive;
}

static int fire(struct sl_ctx *ctx, const struct tjoin *j, struct scratch *s, sl_ts_t wm,
		sl_ts_t *pending)
{
	const struct run *lr, *vr;
	long cached = -1, keep;
	size_t nlive;
	int rc;
	struct collecting cl = { &s->left, false }, cr = { &s->right, false };

	s->left.n = s->right.n = 0;
	sl_map_foreach(ctx, LEFT, collect, &cl);
	sl_map_foreach(ctx, RIGHT, collect, &cr);
	if (cl.nomem || cr.nomem)
		return -ENOMEM;
	if (s->left.n)
		qsort(s->left.p, s->left.n, sizeof(struct ent), cmp_seq);
	if (s->right.n)
		qsort(s->right.p, s->right.n, sizeof(struct ent), cmp_time_seq);
	rc = make_runs(&s->left, &s->lruns);
	if (!rc)
		rc = make_runs(&s->right, &s->vers);
	if (rc)
		return rc;
	nlive = pick_versions(s);
	lr = s->lruns.p;
	vr = s->vers.p;

	*pending = SL_TS_MAX;
	for (size_t i = 0; i < s->lruns.n; i++) {
		const struct sl_row *l, *r = NULL;
		long k;

		if (lr[i].t > wm) {
			*pending = lr[i].t < *pending ? lr[i].t : *pending;
			continue;
		}
		l = assemble(&s->left, &lr[i], s->lrow);
		if (!l)
			return -EIO;
		k = find_version(vr, nlive, lr[i].t);
		/* a -D version means "no row from here on" */
		if (k >= 0 && (vr[k].kind == SL_ROW_INSERT || vr[k].kind == SL_ROW_UPDATE_AFTER)) {
			r = (const struct sl_row *)s->rrow;
			if (k != cached && !assemble(&s->right, &vr[k], s->rrow))
				return -EIO;
			cached = k;
		}
		rc = emit_joined(ctx, j, lr[i].t, l, r);
		if (rc)
			return rc;
	}

	/* clean up: joined left rows, replaced versions, versions older than the latest one
	 * at or below the watermark (Flink's firstIndexToKeep) */
	for (size_t i = 0; i < s->lruns.n; i++)
		if (lr[i].t <= wm)
			remove_run(ctx, LEFT, &s->left, &lr[i]);
	keep = find_version(vr, nlive, wm);
	for (size_t i = 0; i < s->vers.n; i++)
		if ((long)i < keep || i >= nlive)
			remove_run(ctx, RIGHT, &s->right, &vr[i]);
	return 0;
}

static void tj_on_timer(struct sl_ctx *ctx, sl_ts_t at, enum sl_time_domain domain, void *arg)
{
	const struct tjoin *j = arg;
	struct meta *m;
	sl_ts_t pending;
	bool versions;
	int rc;

	if (domain == SL_TIME_PROC) {
		m = sl_value_get(ctx, META);
		if (m && m->has_cleanup && m->cleanup_at == at) {
			m->has_cleanup = 0; /* the timer that fires */
			drop_key(ctx);
		}
		return;
	}
	m = sl_value_get(ctx, META);
	if (m)
		m->has_timer = 0; /* the timer that fires */
	rc = fire(ctx, j, tls, sl_ctx_watermark(ctx), &pending);
	if (rc) {
		fail(ctx, rc,
		     rc == -ENOMEM   ? "out of memory"
		     : rc == -ENOSPC ? "joined row exceeds SL_ROW_SCRATCH"
				     : "stored row is damaged");
		return;
	}
	versions = tls->vers.n > 0;
	if (pending == SL_TS_MAX && !versions) {
		drop_key(ctx); /* nothing left of this key: nor its cleanup timer */
		return;
	}
	m = sl_value_put(ctx, META);
	if (!m || (pending != SL_TS_MAX && arm_timer(ctx, m, pending)) || keep_alive(ctx, j, m))
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

static bool is_time(enum sl_type t)
{
	return t == SL_TYPE_TIMESTAMP || t == SL_TYPE_TIMESTAMP_LTZ;
}

int sl_temporal_join_build(const struct sl_temporal_join_cfg *cfg, struct sl_process_fn *out,
			   char *err, size_t errcap)
{
	const struct sl_schema *s = cfg ? cfg->in_schema : NULL;
	struct tjoin *j;
	int n;

	memset(out, 0, sizeof(*out));
	if (!s)
		return reject(err, errcap, "temporal join: no input schema");
	n = sl_schema_nfields(s);
	/* fields after the right side (the planner's join key columns) are not output */
	if (cfg->nleft < 1 || cfg->nright < 1 || n < 1 + cfg->nleft + cfg->nright)
		return reject(err, errcap,
			      "temporal join: input has %d fields, expected 1 + %d left + %d right",
			      n, cfg->nleft, cfg->nright);
	if (sl_schema_type(s, 0) != SL_TYPE_BIGINT)
		return reject(err, errcap, "temporal join: field 0 (__side) must be BIGINT");
	if (cfg->left_time < 1 || cfg->left_time > cfg->nleft ||
	    !is_time(sl_schema_type(s, cfg->left_time)))
		return reject(err, errcap,
			      "temporal join: FOR SYSTEM_TIME AS OF needs a left time attribute "
			      "(TIMESTAMP) among the left fields");
	if (cfg->right_time <= cfg->nleft || cfg->right_time >= n ||
	    !is_time(sl_schema_type(s, cfg->right_time)))
		return reject(err, errcap,
			      "temporal join: the versioned table needs a time attribute "
			      "(TIMESTAMP with a watermark) among the right fields");
	if (cfg->nkey < 0 || cfg->nkey > SL_TJOIN_MAX_KEYS)
		return reject(err, errcap, "temporal join: %d key fields", cfg->nkey);
	for (int i = 0; i < cfg->nkey; i++)
		if (cfg->left_key[i] < 1 || cfg->left_key[i] > cfg->nleft)
			return reject(err, errcap, "temporal join: left key %d is not a left field",
				      cfg->left_key[i]);
	if (cfg->ttl_ms < 0)
		return reject(err, errcap, "temporal join: negative state TTL");
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	/* Flink: cleaning needs a retention > 1 ms; the upper bound is 1.5 times it */
	if (cfg->ttl_ms > 1) {
		j->min_retention = cfg->ttl_ms;
		j->max_retention = cfg->ttl_ms + cfg->ttl_ms / 2;
	}
	j->nkey = cfg->nkey;
	memcpy(j->left_key, cfg->left_key, sizeof(j->left_key));
	j->nleft = cfg->nleft;
	j->nright = cfg->nright;
	j->left_time = cfg->left_time;
	j->right_time = cfg->right_time;
	j->left_outer = cfg->left_outer;
	j->cond = cfg->cond;
	j->cond_arg = cfg->cond_arg;
	for (int i = 0; i < n; i++)
		j->types[i] = sl_schema_type(s, i);
	j->states[LEFT] = (struct sl_state_desc){ "tj-left", SL_STATE_MAP, 8, 0 };
	j->states[RIGHT] = (struct sl_state_desc){ "tj-right", SL_STATE_MAP, 8, 0 };
	j->states[META] =
		(struct sl_state_desc){ "tj-meta", SL_STATE_VALUE, sizeof(struct meta), 0 };
	out->states = j->states;
	out->nstates = 3;
	out->open = tj_open;
	out->process = tj_process;
	out->on_timer = tj_on_timer;
	out->close = tj_close;
	out->arg = j;
	return 0;
}

void sl_temporal_join_free(struct sl_process_fn *fn)
{
	if (!fn)
		return;
	free(fn->arg);
	memset(fn, 0, sizeof(*fn));
}
