/*
 * join.c - the regular join (INNER, LEFT, RIGHT, FULL) as a keyed process function;
 * semantics, input shape and state layout in join.h (Flink's StreamingJoinOperator).
 *
 * Record path (process), for a row of side s and its key:
 *
 *   side row   the row's own fields are copied into a row of their own (kind +I), whose
 *              bytes are its identity in state: the builder writes equal rows as equal bytes
 *   matches    the other side's map is copied into the shard scratch (entries by (hash,
 *              chunk), a run of one hash is one row, reassembled), each row joined with the
 *              input and kept if `cond` holds
 *   emit       the results Flink emits for the input's kind and the two sides' outerness,
 *              one per copy of a matching row
 *   update     the input's count in its side's map; the associations of each matching row
 *              of an outer other side
 *
 * Cost: O(m log m) per record for the m rows the other side holds under the key (Flink
 * walks the same m). No allocation except while a shard's largest key grows the scratch and
 * the state's own first insertion of a key.
 *
 * Invariants: a stored row's chunks are all written together (so under TTL they expire
 * together); chunk 0's value holds count >= 1; assoc is the number of other-side rows
 * (counted with multiplicity) the row matches, kept for outer sides only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "join.h"
#include "op.h"

enum { LEFT = 0, RIGHT = 1 };

#define PREFIX 10u /* u64 row hash, u16 chunk */

/* The value of a row's chunk 0 (the other chunks' are zero). */
struct cnt {
	int64_t count; /* copies of the row */
	int64_t assoc; /* other-side rows it matches (outer sides only) */
};

struct join {
	struct sl_state_desc states[2];
	int n[2];   /* fields of each side */
	int off[2]; /* first input field of each side */
	bool outer[2];
	int nkey;
	int key[SL_JOIN_MAX_KEYS];
	bool (*cond)(struct sl_ctx *ctx, const struct sl_row *joined, void *arg);
	void *cond_arg;
	enum sl_type types[SL_SCHEMA_MAX_FIELDS]; /* of the input (union) schema */
};

/* One map entry of the other side, copied out of state. */
struct ent {
	size_t koff; /* its map key in scratch.keys */
	uint32_t klen;
	uint16_t chunk;
	uint64_t h;
	struct cnt v;
};

/* One row of the other side that matches the input. */
struct match {
	size_t roff; /* its bytes in scratch.rows */
	uint32_t len;
	uint64_t h;
	struct cnt v;
};

struct vec {
	void *p;
	size_t n;
	size_t cap;
};

/* Per shard (thread): what one record works in. Records never nest on a shard (emission
 * reaches only operators downstream, never this instance again), so instances share it. */
struct scratch {
	int users;	    /* open instances on this shard */
	struct vec ents;    /* struct ent */
	struct vec keys;    /* bytes: copied map keys */
	struct vec rows;    /* bytes: reassembled rows */
	struct vec matches; /* struct match */
	uint8_t *in;	    /* SL_ROW_SCRATCH bytes: the input's side row */
};

static _Thread_local struct scratch *tls;

static void fail(struct sl_ctx *ctx, int code, const char *what)
{
	/* unit tests drive the function without a shard; the job path always has one */
	if (ctx->shard)
		sl_shard_fail(ctx->shard, code, "join '%s': %s", ctx->def->name, what);
}

/* Makes room for n more elements of `size` bytes and returns the first, or NULL on ENOMEM.
 * Grows by doubling: allocation happens only while a shard's largest key grows. */
static void *vec_grow(struct vec *v, size_t size, size_t n)
{
	if (v->n + n > v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 64;
		void *p;

		while (cap < v->n + n)
			cap *= 2;
		p = realloc(v->p, cap * size);
		if (!p)
			return NULL;
		v->p = p;
		v->cap = cap;
	}
	v->n += n;
	return (uint8_t *)v->p + size * (v->n - n);
}

/* ---- open / close: the shard's scratch --------------------------------------------------- */

static void scratch_free(struct scratch *s)
{
	free(s->ents.p);
	free(s->keys.p);
	free(s->rows.p);
	free(s->matches.p);
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

/* ---- state: a row's chunks ---------------------------------------------------------------- */

static uint32_t chunk_key(uint8_t *key, uint64_t h, uint16_t i, const uint8_t *row, uint32_t len)
{
	uint32_t off = (uint32_t)i * SL_JOIN_CHUNK;
	uint32_t n = len - off < SL_JOIN_CHUNK ? len - off : SL_JOIN_CHUNK;

	memcpy(key, &h, 8);
	memcpy(key + 8, &i, 2);
	memcpy(key + PREFIX, row + off, n);
	return PREFIX + n;
}

/* Writes every chunk of the row (refreshing their TTL together), chunk 0 with v. */
static int store_row(struct sl_ctx *ctx, int id, const uint8_t *row, uint32_t len, uint64_t h,
		     const struct cnt *v)
{
	uint8_t key[PREFIX + SL_JOIN_CHUNK];

	for (uint32_t off = 0, i = 0; off < len; off += SL_JOIN_CHUNK, i++) {
		uint32_t klen = chunk_key(key, h, (uint16_t)i, row, len);
		struct cnt *slot = sl_map_put(ctx, id, key, klen);

		if (!slot)
			return -ENOMEM;
		*slot = i ? (struct cnt){ 0, 0 } : *v;
	}
	return 0;
}

static void remove_row(struct sl_ctx *ctx, int id, const uint8_t *row, uint32_t len, uint64_t h)
{
	uint8_t key[PREFIX + SL_JOIN_CHUNK];

	for (uint32_t off = 0, i = 0; off < len; off += SL_JOIN_CHUNK, i++)
		sl_map_remove(ctx, id, key, chunk_key(key, h, (uint16_t)i, row, len));
}

/* The row's chunk-0 value, copied into *v; false when the row is not stored. */
static bool get_row(struct sl_ctx *ctx, int id, const uint8_t *row, uint32_t len, uint64_t h,
		    struct cnt *v)
{
	uint8_t key[PREFIX + SL_JOIN_CHUNK];
	const struct cnt *slot = sl_map_get(ctx, id, key, chunk_key(key, h, 0, row, len));

	if (!slot)
		return false;
	*v = *slot;
	return true;
}

/* One more copy of the input row on its side; assoc: its matches, for an outer side. */
static int add_row(struct sl_ctx *ctx, int id, const uint8_t *row, uint32_t len, uint64_t h,
		   int64_t assoc)
{
	struct cnt v = { 0, 0 };

	get_row(ctx, id, row, len, h, &v);
	v.count++;
	v.assoc = assoc;
	return store_row(ctx, id, row, len, h, &v);
}

/* One copy fewer; a row that is not there is left alone (Flink warns and goes on). */
static int retract_row(struct sl_ctx *ctx, int id, const uint8_t *row, uint32_t len, uint64_t h)
{
	struct cnt v;

	if (!get_row(ctx, id, row, len, h, &v))
		return 0;
	if (v.count <= 1) {
		remove_row(ctx, id, row, len, h);
		return 0;
	}
	v.count--;
	return store_row(ctx, id, row, len, h, &v);
}

/* ---- matches ------------------------------------------------------------------------------ */

struct collecting {
	struct scratch *s;
	bool nomem;
};

static bool collect(const void *mkey, uint32_t mklen, void *value, void *arg)
{
	struct collecting *c = arg;
	struct ent *e;
	uint8_t *k;

	if (mklen <= PREFIX)
		return true; /* not ours; cannot happen */
	e = vec_grow(&c->s->ents, sizeof(*e), 1);
	k = e ? vec_grow(&c->s->keys, 1, mklen) : NULL;
	if (!k) {
		c->nomem = true;
		return false;
	}
	memcpy(k, mkey, mklen);
	e->koff = (size_t)(k - (uint8_t *)c->s->keys.p);
	e->klen = mklen;
	memcpy(&e->h, mkey, 8);
	memcpy(&e->chunk, (const uint8_t *)mkey + 8, 2);
	memcpy(&e->v, value, sizeof(e->v));
	return true;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return (x->chunk > y->chunk) - (x->chunk < y->chunk);
}

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
 * Fills s->matches with the other side's rows that join with `in` (side `side`), ordered
 * by (hash, bytes). Returns 0, -ENOMEM, or -ENOSPC (a joined row over SL_ROW_SCRATCH).
 */
static int find_matches(struct sl_ctx *ctx, const struct join *j, struct scratch *s, int side,
			const struct sl_row *in)
{
	struct collecting cl = { s, false };
	const struct ent *e;

	s->ents.n = s->keys.n = s->rows.n = s->matches.n = 0;
	sl_map_foreach(ctx, 1 - side, collect, &cl);
	if (cl.nomem)
		return -ENOMEM;
	if (s->ents.n > 1)
		qsort(s->ents.p, s->ents.n, sizeof(struct ent), cmp_ent);
	e = s->ents.p;
	for (size_t i = 0; i < s->ents.n;) {
		size_t k = i, len = 0;
		bool whole = true;
		struct match *m;
		uint8_t *dst;

		while (k < s->ents.n && e[k].h == e[i].h) {
			whole &= e[k].chunk == k - i;
			len += e[k].klen - PREFIX;
			k++;
		}
		/* a row missing a chunk cannot be rebuilt: skipped (chunks are written
		 * together, so this needs a damaged state) */
		if (!whole || len < SL_ROW_HDR || len > SL_ROW_SCRATCH || e[i].v.count < 1) {
			i = k;
			continue;
		}
		dst = vec_grow(&s->rows, 1, len);
		if (!dst)
			return -ENOMEM;
		for (size_t c = i, o = 0; c < k; c++) {
			memcpy(dst + o, (uint8_t *)s->keys.p + e[c].koff + PREFIX,
			       e[c].klen - PREFIX);
			o += e[c].klen - PREFIX;
		}
		if (((const struct sl_row *)dst)->size != len) {
			s->rows.n -= len;
			i = k;
			continue;
		}
		if (j->cond) {
			const struct sl_row *joined =
				pair_row(ctx, j, side, in, (const struct sl_row *)dst, SL_ROW_INSERT);

			if (!joined)
				return -ENOSPC;
			if (!j->cond(ctx, joined, j->cond_arg)) {
				s->rows.n -= len;
				i = k;
				continue;
			}
		}
		m = vec_grow(&s->matches, sizeof(*m), 1);
		if (!m)
			return -ENOMEM;
		*m = (struct match){ .roff = (size_t)(dst - (uint8_t *)s->rows.p),
				     .len = (uint32_t)len,
				     .h = e[i].h,
				     .v = e[i].v };
		i = k;
	}
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

	if (!s->matches.n && j->outer[side])
		rc = emit(ctx, ts, pair_row(ctx, j, side, in, NULL, SL_ROW_INSERT));
	for (size_t i = 0; !rc && i < s->matches.n; i++) {
		struct match *m = (struct match *)s->matches.p + i;
		const struct sl_row *o = (const struct sl_row *)((uint8_t *)s->rows.p + m->roff);
		/* an inner join forwards the input's kind; an outer one always inserts */
		enum sl_row_kind k = j->outer[0] || j->outer[1] ? SL_ROW_INSERT : kind;

		for (int64_t c = 0; !rc && c < m->v.count; c++) {
			if (j->outer[other] && m->v.assoc == 0)
				rc = emit(ctx, ts, pair_row(ctx, j, other, o, NULL, SL_ROW_DELETE));
			if (!rc)
				rc = emit(ctx, ts, pair_row(ctx, j, side, in, o, k));
		}
		if (!rc && j->outer[other]) {
			m->v.assoc++;
			rc = store_row(ctx, other, (const uint8_t *)o, m->len, m->h, &m->v);
		}
		total += m->v.count;
	}
	if (rc)
		return rc;
	return add_row(ctx, side, (const uint8_t *)in, in->size, h, j->outer[side] ? total : 0);
}

/* -U / -D of side `side`: remove it, retract its results, give outer rows back their NULLs. */
static int retract(struct sl_ctx *ctx, const struct join *j, struct scratch *s, int side,
		   sl_ts_t ts, const struct sl_row *in, uint64_t h, enum sl_row_kind kind)
{
	int other = 1 - side;
	int rc = retract_row(ctx, side, (const uint8_t *)in, in->size, h);

	if (!rc && !s->matches.n && j->outer[side])
		rc = emit(ctx, ts, pair_row(ctx, j, side, in, NULL, SL_ROW_DELETE));
	for (size_t i = 0; !rc && i < s->matches.n; i++) {
		struct match *m = (struct match *)s->matches.p + i;
		const struct sl_row *o = (const struct sl_row *)((uint8_t *)s->rows.p + m->roff);
		enum sl_row_kind k = j->outer[side] ? SL_ROW_DELETE : kind;

		for (int64_t c = 0; !rc && c < m->v.count; c++) {
			rc = emit(ctx, ts, pair_row(ctx, j, side, in, o, k));
			if (!rc && j->outer[other] && m->v.assoc == 1)
				rc = emit(ctx, ts, pair_row(ctx, j, other, o, NULL, SL_ROW_INSERT));
		}
		if (!rc && j->outer[other] && m->v.assoc > 0) {
			m->v.assoc--;
			rc = store_row(ctx, other, (const uint8_t *)o, m->len, m->h, &m->v);
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
	h = sl_hash_bytes(in, in->size);
	s->matches.n = 0;
	if (!null_key(j, row))
		rc = find_matches(ctx, j, s, (int)side, in);
	if (!rc)
		rc = kind == SL_ROW_INSERT || kind == SL_ROW_UPDATE_AFTER
			     ? accumulate(ctx, j, s, (int)side, ts, in, h, kind)
			     : retract(ctx, j, s, (int)side, ts, in, h, kind);
	if (rc)
		fail(ctx, rc, rc == -ENOMEM ? "out of memory" : "joined row exceeds SL_ROW_SCRATCH");
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
		return reject(err, errcap, "join: input has %d fields, expected 1 + %d left + %d right",
			      n, cfg->nleft, cfg->nright);
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
	for (int i = 0; i < n; i++)
		j->types[i] = sl_schema_type(s, i);
	j->states[LEFT] =
		(struct sl_state_desc){ "join-left", SL_STATE_MAP, sizeof(struct cnt), cfg->ttl_ms };
	j->states[RIGHT] =
		(struct sl_state_desc){ "join-right", SL_STATE_MAP, sizeof(struct cnt), cfg->ttl_ms };
	out->states = j->states;
	out->nstates = 2;
	out->open = join_open;
	out->process = join_process;
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
