/*
 * snapshot.c - checkpoints of the window operator (DESIGN §7): the snapshot hook writes every
 * live accumulator block with its key, key group and window bounds, the restore hook rebuilds
 * the tables, fire lists and timers from it, keeping only the key groups the instance owns.
 *
 * Layout of one instance's snapshot (integers little-endian, as in memory; snap.h):
 *
 *   u32 magic "SLWN", u32 version            refused when unknown
 *   shape: u32 kind, nkey, key types, naggs, max_par; i64 size, slide, slice, gap, offset;
 *          per aggregate u32 kind, input type, output type, accumulator bytes, input scale
 *   i64 lateness (informative: a savepoint may restore with another allowed lateness)
 *   u64 checkpoint, i64 watermark, i64 fired_upto (slices) / u64 next session id
 *   u64 body length, body (slice.c / session.c), u64 checksum of everything before it
 *
 * Restore checks, in this order: magic and version, length, checksum (corrupt bytes:
 * -EINVAL), then the shape against this operator's configuration (another window or other
 * aggregates: -EPROTO, with both shapes in the message). Only then does it touch state, so a
 * refused snapshot leaves the instance as it was; a body that passes the checksum but does not
 * parse (a bug, not a disk error) still fails cleanly, every entry it added being valid.
 *
 * Rescaling: restore runs once per old instance's snapshot. The watermark and fired_upto of
 * the instance become the minimum over them. Aligned barriers make them equal in practice
 * (every old instance saw the same watermarks from every input channel before the barrier);
 * the minimum is the safe side for sessions, which remember per session that they fired.
 *
 * Cost: the snapshot is one pass over the live entries on the shard thread, a copy of each
 * key and accumulator block into the buffer, then a checksum pass; nothing else stalls the
 * record path. Measured with 1M live keys (window_snapshot_test bench, release build, CPU
 * time, busy 2-core machine): plain accumulators (COUNT, SUM, AVG(DECIMAL)) 69 bytes and
 * 24-33 ns an entry, 2.8-3.2 GB/s, tumble and session alike; accumulators owning memory
 * (a STRING MAX and a COUNT(DISTINCT)) about 220 ns, the dependent cache misses of their
 * out-of-line values. Restore is one hash and one table insert per entry: about what the
 * records that created the entries cost.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "snap.h"
#include "hash.h"
#include "kvtab.h"
#include "window_int.h"

#define SNAP_MAGIC    0x4e574c53u /* "SLWN" */
#define SNAP_VERSION  1u
#define SNAP_MAX_AGGS 1024	   /* more in a snapshot header is corrupt */
#define SNAP_SEQ_MAX  (1ull << 62) /* session ids: one a session, never near wrapping */

/* Restored timestamps stay within +-2^62 ms, so sums of two of them cannot overflow. */
#define TS_SANE ((sl_ts_t)1 << 62)

bool sl_win_snap_ts_ok(sl_ts_t t)
{
	return t > -TS_SANE && t < TS_SANE;
}

/*
 * The checksum of a snapshot: four independent multiply-rotate lanes over 8-byte words (about
 * 10 GB/s, so it costs a fraction of the copy). Each step is a bijection of the lane for a
 * fixed word and of the word for a fixed lane, so any change confined to one word (a flipped
 * bit, a torn byte) always changes the result; the length is mixed in for truncations.
 */
static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

#define LANE(h, w) ((h) = rotl((h) ^ (w), 29) * 0x9e3779b97f4a7c15ULL)

static uint64_t checksum(const uint8_t *p, size_t n)
{
	uint64_t h0 = 1, h1 = 2, h2 = 3, h3 = 4, w0, w1, w2, w3;
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {
		memcpy(&w0, p + i, 8);
		memcpy(&w1, p + i + 8, 8);
		memcpy(&w2, p + i + 16, 8);
		memcpy(&w3, p + i + 24, 8);
		LANE(h0, w0);
		LANE(h1, w1);
		LANE(h2, w2);
		LANE(h3, w3);
	}
	for (; i + 8 <= n; i += 8) {
		memcpy(&w0, p + i, 8);
		LANE(h0, w0);
	}
	if (i < n) {
		w1 = 0;
		memcpy(&w1, p + i, n - i);
		LANE(h1, w1);
	}
	return sl_hash_mix64(h0) ^ sl_hash_mix64(h1 + 1) ^ sl_hash_mix64(h2 + 2) ^
	       sl_hash_mix64(h3 + 3) ^ sl_hash_mix64((uint64_t)n);
}

/* A watermark or fired_upto: the ends of time or a sane timestamp. */
static bool ts_restorable(sl_ts_t t)
{
	return t == SL_TS_MIN || t == SL_TS_MAX || sl_win_snap_ts_ok(t);
}

/* ---- keys and accumulator blocks --------------------------------------------------------- */

int sl_win_snap_put_key(struct sl_snap_buf *out, uint32_t kg, const uint8_t *key, uint32_t klen)
{
	uint16_t h[2] = { (uint16_t)kg, (uint16_t)klen };

	sl_snap_put(out, h, sizeof h);
	return sl_snap_put(out, key, klen);
}

/* Whether key bytes are an encoding key.c could have made for these key types: output rows
 * decode keys without bounds checks, so restored keys are checked once here. O(klen). */
static bool key_valid(const struct sl_op_def *def, const uint8_t *key, uint32_t klen)
{
	uint32_t n = 0, len;

	for (int i = 0; i < def->nkey; i++) {
		if (n >= klen)
			return false;
		switch (key[n++]) {
		case 0:
			break;
		case 1:
			if (def->key_types[i] == SL_TYPE_STRING || klen - n < 8)
				return false;
			n += 8;
			break;
		case 2:
			if (def->key_types[i] != SL_TYPE_STRING || klen - n < 4)
				return false;
			memcpy(&len, key + n, 4);
			n += 4;
			if (len > klen - n)
				return false;
			n += len;
			break;
		default:
			return false;
		}
	}
	return n == klen;
}

int sl_win_snap_get_key(const struct win *w, struct sl_snap_reader *r, uint32_t *kg,
			const uint8_t **key, uint32_t *klen, uint64_t *hash)
{
	uint16_t h[2];

	if (sl_snap_get(r, h, sizeof h))
		return r->error;
	*kg = h[0];
	*klen = h[1];
	if (*klen > SL_KEY_MAX || *klen > r->len - r->pos)
		return r->error = -EINVAL;
	*key = r->p + r->pos;
	r->pos += *klen;
	if (!key_valid(w->def, *key, *klen))
		return -EINVAL;
	*hash = sl_hash_bytes(*key, *klen);
	/* also catches a snapshot taken with another max parallelism */
	if (sl_key_group(*hash, w->max_par) != *kg)
		return -EINVAL;
	return 0;
}

int sl_win_acc_serialize(const struct win *w, const void *acc, struct sl_snap_buf *out)
{
	const struct sl_window_cfg *c = w->cfg;

	for (int i = 0; i < c->naggs; i++)
		c->agg[i].k->serialize(&c->agg[i], (const uint8_t *)acc + c->agg[i].off, out);
	return out->error;
}

int sl_win_acc_deserialize(const struct win *w, void *acc, struct sl_snap_reader *r)
{
	const struct sl_window_cfg *c = w->cfg;
	int rc = 0;

	memset(acc, 0, c->acc_size);
	for (int i = 0; i < c->naggs && !rc; i++)
		rc = c->agg[i].k->deserialize(&c->agg[i], (uint8_t *)acc + c->agg[i].off, r);
	if (rc)
		sl_win_acc_destroy(w, acc);
	return rc;
}

/* ---- the header --------------------------------------------------------------------------- */

/* What the state layout depends on; a snapshot restores only into the same shape. */
struct shape {
	uint32_t kind, nkey, naggs, max_par;
	int64_t size, slide, slice, gap, offset;
	uint32_t key_type[SL_MAX_KEY_FIELDS];
};

struct agg_shape {
	uint32_t kind, in_type, out_type, acc_size, in_scale;
};

/* agg_shape.kind of SUM(DISTINCT) and AVG(DISTINCT): their set of values is not the plain
 * accumulator of the same size, so a restore across the change is refused */
#define SHAPE_DISTINCT 0x10000u

static void shape_of(const struct sl_ctx *ctx, const struct win *w, struct shape *s)
{
	const struct sl_window_cfg *c = w->cfg;

	memset(s, 0, sizeof(*s));
	s->kind = (uint32_t)c->spec.kind;
	s->nkey = (uint32_t)ctx->def->nkey;
	s->naggs = (uint32_t)c->naggs;
	s->max_par = w->max_par;
	s->size = c->spec.size_ms;
	s->slide = c->slide;
	s->slice = c->slice;
	s->gap = c->spec.gap_ms;
	s->offset = c->spec.offset_ms;
	for (uint32_t i = 0; i < s->nkey && i < SL_MAX_KEY_FIELDS; i++)
		s->key_type[i] = (uint32_t)ctx->def->key_types[i];
}

static void agg_shape_of(const struct sl_agg_bound *a, struct agg_shape *s)
{
	s->kind = (uint32_t)a->kind | (a->inner ? SHAPE_DISTINCT : 0);
	s->in_type = (uint32_t)a->in_type;
	s->out_type = (uint32_t)a->out_type;
	s->acc_size = sl_agg_acc_size(a);
	s->in_scale = (uint32_t)a->in_scale;
}

static void put_shape(struct sl_snap_buf *out, const struct shape *s)
{
	sl_snap_put_u32(out, s->kind);
	sl_snap_put_u32(out, s->nkey);
	for (uint32_t i = 0; i < s->nkey; i++)
		sl_snap_put_u32(out, s->key_type[i]);
	sl_snap_put_u32(out, s->naggs);
	sl_snap_put_u32(out, s->max_par);
	sl_snap_put_u64(out, (uint64_t)s->size);
	sl_snap_put_u64(out, (uint64_t)s->slide);
	sl_snap_put_u64(out, (uint64_t)s->slice);
	sl_snap_put_u64(out, (uint64_t)s->gap);
	sl_snap_put_u64(out, (uint64_t)s->offset);
}

static int get_shape(struct sl_snap_reader *r, struct shape *s)
{
	memset(s, 0, sizeof(*s));
	sl_snap_get_u32(r, &s->kind);
	if (sl_snap_get_u32(r, &s->nkey) || s->nkey > SL_MAX_KEY_FIELDS)
		return r->error = -EINVAL;
	for (uint32_t i = 0; i < s->nkey; i++)
		sl_snap_get_u32(r, &s->key_type[i]);
	sl_snap_get_u32(r, &s->naggs);
	sl_snap_get_u32(r, &s->max_par);
	sl_snap_get_u64(r, (uint64_t *)&s->size);
	sl_snap_get_u64(r, (uint64_t *)&s->slide);
	sl_snap_get_u64(r, (uint64_t *)&s->slice);
	sl_snap_get_u64(r, (uint64_t *)&s->gap);
	sl_snap_get_u64(r, (uint64_t *)&s->offset);
	if (!r->error && s->naggs > SNAP_MAX_AGGS)
		r->error = -EINVAL;
	return r->error;
}

static const char *kind_name(uint32_t k)
{
	switch (k) {
	case SL_WIN_TUMBLE:
		return "TUMBLE";
	case SL_WIN_HOP:
		return "HOP";
	case SL_WIN_SESSION:
		return "SESSION";
	case SL_WIN_CUMULATE:
		return "CUMULATE";
	}
	return "?";
}

/* "HOP(size 10000 ms, slide 5000 ms, key STRING, 128 key groups)" into buf. */
static int describe(char *buf, size_t cap, const struct shape *s)
{
	int n;

	if (s->kind == SL_WIN_SESSION)
		n = snprintf(buf, cap, "SESSION(gap %lld ms", (long long)s->gap);
	else if (s->kind == SL_WIN_TUMBLE)
		n = snprintf(buf, cap, "TUMBLE(size %lld ms, offset %lld ms", (long long)s->size,
			     (long long)s->offset);
	else
		n = snprintf(buf, cap, "%s(size %lld ms, %s %lld ms, offset %lld ms",
			     kind_name(s->kind), (long long)s->size,
			     s->kind == SL_WIN_HOP ? "slide" : "step", (long long)s->slide,
			     (long long)s->offset);
	for (uint32_t i = 0; i < s->nkey && n >= 0 && (size_t)n < cap; i++)
		n += snprintf(buf + n, cap - (size_t)n, "%s%s", i ? ", " : ", key ",
			      sl_type_name((enum sl_type)s->key_type[i]));
	if (n >= 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, ", %u key groups)", s->max_par);
	return n;
}

static void describe_agg(char *buf, size_t cap, size_t *len, uint32_t i, const struct agg_shape *a)
{
	const char *name = sl_agg_kind_name((enum sl_agg_kind)(a->kind & ~SHAPE_DISTINCT));
	int n;

	if (*len >= cap)
		return;
	if (a->kind == SL_AGG_USER)
		n = snprintf(buf + *len, cap - *len, "%sUSER(%u bytes)", i ? ", " : "",
			     a->acc_size);
	else if (a->kind == SL_AGG_COUNT_STAR)
		n = snprintf(buf + *len, cap - *len, "%s%s", i ? ", " : "", name);
	else
		n = snprintf(buf + *len, cap - *len, "%s%s(%s%s)", i ? ", " : "", name,
			     a->kind & SHAPE_DISTINCT ? "DISTINCT " : "",
			     sl_type_name((enum sl_type)a->in_type));
	if (n > 0)
		*len += (size_t)n;
}

/* The window and its key; the aggregates are compared one by one. */
static bool shape_eq(const struct shape *a, const struct shape *b)
{
	struct shape x = *a, y = *b;

	x.naggs = y.naggs = 0;
	return !memcmp(&x, &y, sizeof x);
}

static bool agg_eq(const struct agg_shape *a, const struct agg_shape *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* ---- the hooks ------------------------------------------------------------------------------ */

int sl_window_snapshot(struct sl_ctx *ctx, uint64_t ckpt, struct sl_snap_buf *out)
{
	struct win *w = ctx->self;
	const struct sl_window_cfg *c = w->cfg;
	size_t start = out->len, len_at, body;
	struct shape s;
	uint64_t n;
	int rc;

	shape_of(ctx, w, &s);
	sl_snap_put_u32(out, SNAP_MAGIC);
	sl_snap_put_u32(out, SNAP_VERSION);
	put_shape(out, &s);
	for (int i = 0; i < c->naggs; i++) {
		struct agg_shape a;

		agg_shape_of(&c->agg[i], &a);
		sl_snap_put(out, &a, sizeof a);
	}
	sl_snap_put_u64(out, (uint64_t)c->lateness);
	sl_snap_put_u64(out, ckpt);
	sl_snap_put_u64(out, (uint64_t)ctx->watermark);
	sl_snap_put_u64(out, c->spec.kind == SL_WIN_SESSION ? w->seq : (uint64_t)w->fired_upto);
	len_at = out->len;
	sl_snap_put_u64(out, 0);
	body = out->len;
	rc = w->kind->snapshot(w, out);
	if (rc || out->error)
		return rc ? rc : out->error;
	n = out->len - body;
	memcpy(out->data + len_at, &n, sizeof n);
	return sl_snap_put_u64(out, checksum(out->data + start, out->len - start));
}

/* Records why a restore failed (one line, naming the window) and fails the job with it. */
static int refuse(struct sl_ctx *ctx, struct win *w, int code, const char *why)
{
	snprintf(w->err, sizeof w->err, "window '%s': %s", ctx->def->name, why);
	sl_win_fail(ctx, code, why);
	return code;
}

int sl_window_restore(struct sl_ctx *ctx, struct sl_snap_reader *r, uint32_t kg_lo, uint32_t kg_hi)
{
	struct win *w = ctx->self;
	const struct sl_window_cfg *c = w->cfg;
	char have[160], want[160], why[400], msg[480];
	size_t start = r->pos, hlen = 0, wlen = 0;
	uint64_t ckpt, wm, fired, len, sum;
	struct agg_shape diff_have, diff_want;
	struct sl_snap_reader body;
	struct shape s, mine;
	uint32_t magic = 0, version = 0;
	int64_t diff = -1, lateness;
	int rc;

	w->err[0] = 0;
	if (r->error)
		return r->error;
	sl_snap_get_u32(r, &magic);
	sl_snap_get_u32(r, &version);
	if (r->error || magic != SNAP_MAGIC)
		return refuse(ctx, w, -EINVAL, "not a window snapshot (corrupt state)");
	if (version != SNAP_VERSION) {
		snprintf(why, sizeof why, "snapshot format version %u, this build reads version %u",
			 version, SNAP_VERSION);
		return refuse(ctx, w, -EPROTO, why);
	}
	shape_of(ctx, w, &mine);
	if (get_shape(r, &s))
		goto out_corrupt;
	for (uint32_t i = 0; i < s.naggs; i++) {
		struct agg_shape a, b;

		if (sl_snap_get(r, &a, sizeof a))
			goto out_corrupt;
		if (i < mine.naggs && diff < 0) {
			agg_shape_of(&c->agg[i], &b);
			if (!agg_eq(&a, &b)) {
				diff = i;
				diff_have = a;
				diff_want = b;
			}
		}
	}
	sl_snap_get_u64(r, (uint64_t *)&lateness);
	sl_snap_get_u64(r, &ckpt);
	sl_snap_get_u64(r, &wm);
	sl_snap_get_u64(r, &fired);
	if (sl_snap_get_u64(r, &len) || len > r->len - r->pos || r->len - r->pos - len < 8)
		goto out_corrupt;
	memcpy(&sum, r->p + r->pos + len, sizeof sum);
	if (sum != checksum(r->p + start, r->pos + len - start))
		goto out_corrupt;
	if (!ts_restorable((sl_ts_t)wm) ||
	    (c->spec.kind != SL_WIN_SESSION && !ts_restorable((sl_ts_t)fired)) ||
	    (c->spec.kind == SL_WIN_SESSION && fired > SNAP_SEQ_MAX))
		goto out_corrupt;
	/* the layout: the window first, then the aggregates' count, then the first that differs */
	if (!shape_eq(&s, &mine)) {
		describe(have, sizeof have, &s);
		describe(want, sizeof want, &mine);
	} else if (diff >= 0) {
		describe_agg(have, sizeof have, &hlen, 0, &diff_have);
		describe_agg(want, sizeof want, &wlen, 0, &diff_want);
		snprintf(why, sizeof why, "aggregate %d is %s in the snapshot, %s in this job",
			 (int)diff + 1, have, want);
	} else if (s.naggs != mine.naggs) {
		snprintf(why, sizeof why, "the snapshot has %u aggregates, this job %u", s.naggs,
			 mine.naggs);
	}
	if (!shape_eq(&s, &mine))
		snprintf(why, sizeof why, "the snapshot holds %s, this job has %s", have, want);
	if (!shape_eq(&s, &mine) || diff >= 0 || s.naggs != mine.naggs) {
		snprintf(msg, sizeof msg, "state layout does not match: %s; refusing to restore",
			 why);
		return refuse(ctx, w, -EPROTO, msg);
	}
	sl_snap_reader_init(&body, r->p + r->pos, len);
	rc = w->kind->restore(w, &body, kg_lo, kg_hi);
	if (rc == -ENOMEM)
		return refuse(ctx, w, -ENOMEM, "out of memory restoring window state");
	if (rc || body.pos != body.len)
		goto out_corrupt;
	r->pos += len + 8;
	/* the minimum over the old instances restored (see the file comment) */
	if (!w->nrestored++ || (sl_ts_t)wm < ctx->watermark)
		ctx->watermark = (sl_ts_t)wm;
	if (c->spec.kind == SL_WIN_SESSION) {
		if (fired > w->seq)
			w->seq = fired;
	} else if (w->nrestored == 1 || (sl_ts_t)fired < w->fired_upto) {
		w->fired_upto = (sl_ts_t)fired;
	}
	{
		uint64_t n;
		size_t bytes;

		w->kind->measure(w, &n, &bytes);
		ctx->m.state_entries = n;
	}
	sl_win_account(w, ctx);
	return 0;

out_corrupt:
	r->error = -EINVAL;
	return refuse(ctx, w, -EINVAL, "corrupt snapshot (bad length, checksum or entry)");
}

const char *sl_window_restore_error(const struct sl_ctx *ctx)
{
	const struct win *w = ctx->self;

	return w ? w->err : "";
}
