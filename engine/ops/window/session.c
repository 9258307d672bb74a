/*
 * session.c - merging session windows (DESIGN §5), Flink's semantics.
 *
 * A record at ts opens the window [ts, ts + gap). Per key, the live sessions form a list
 * sorted by start in which no two touch: a new window merges with every session it touches
 * or overlaps (end >= next start), accumulators merged into the earliest one. The key's list
 * head is in `dir` (one entry per key); sessions are kvtab entries whose namespace is a
 * per-instance sequence number, which never changes when a session grows, so the entry and
 * its timers stay valid across merges.
 *
 * Timers are lazy to keep the per-record path free of heap operations: a session only needs
 * some timer at or before its due time (end - 1 before firing, end - 1 + lateness after).
 * When a timer pops early because the session grew, it is re-registered at the new due time;
 * timers of sessions merged away find no session and are ignored. A session therefore fires
 * exactly when a timer at end - 1 pops, in the timer service's (time, hash, key) order.
 *
 * Lateness (Flink's MergingWindowSet rule): the record's window is merged first; the record
 * is late only if the merged session's end - 1 + lateness <= watermark. A record that joins a
 * live session therefore always counts, even when its own [ts, ts + gap) is past lateness.
 * Changelog for fired sessions: a record inside a fired session without moving its bounds
 * re-fires it as -U/+U; a merge that changes the bounds of fired sessions retracts each of
 * them with -D and emits the merged session with +I when it is already due.
 *
 * Checkpoints (snapshot.c has the header): the body is the keys of `dir`, each with its
 * session list (bounds, id, fired flag, accumulator block). Timers are not written: restore
 * arms one per session at its due time, which is where the lazy timers above fire it too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snap.h"
#include "kvtab.h"
#include "timer.h"
#include "window_int.h"

struct sess {
	struct sess *next; /* next session of the key, by start */
	sl_ts_t start;
	sl_ts_t end;	/* exclusive: last record's ts + gap */
	uint64_t seq;	/* state namespace and timer id */
	uint64_t fired; /* its result has been emitted */
};

/*
 * A key's directory entry, followed by room for one session of its own (a struct sess and
 * its accumulator block): the key's first session lives there, so the common key with one
 * live session costs a record one table lookup (slot, entry) where a session reached
 * through d->head was a third dependent miss (27 % self of session_process in the 1M-key
 * profile). Further sessions of the key are entries of w->tab. Either kind is reached
 * only through the key's list, so nothing else tells them apart; the inline one stays put
 * while the directory entry lives, which is as long as the key has a session.
 */
struct sdir {
	struct sess *head;
	uint64_t own_used; /* the session at own_of(d) is in the list */
};

static inline struct sess *own_of(struct sdir *d)
{
	return (struct sess *)(d + 1);
}

static void session_close(struct win *w);

static int session_open(struct win *w, uint32_t max_par)
{
	w->hdr = sizeof(struct sess);
	w->tab = sl_kvtab_create(w->hdr + w->cfg->acc_size, max_par);
	w->dir = sl_kvtab_create(sizeof(struct sdir) + w->hdr + w->cfg->acc_size, max_par);
	w->timers = sl_timers_create();
	if (!w->tab || !w->dir || !w->timers) {
		session_close(w);
		return -ENOMEM;
	}
	return 0;
}

static bool destroy_one(const struct sl_kv *kv, void *arg)
{
	struct win *w = arg;

	sl_win_acc_destroy(w, accs_of(w, kv->value));
	return true;
}

static bool destroy_own(const struct sl_kv *kv, void *arg)
{
	struct win *w = arg;
	struct sdir *d = kv->value;

	if (d->own_used)
		sl_win_acc_destroy(w, accs_of(w, own_of(d)));
	return true;
}

static void session_close(struct win *w)
{
	if (w->tab && w->cfg->has_dyn)
		sl_kvtab_foreach(w->tab, destroy_one, w);
	if (w->dir && w->cfg->has_dyn)
		sl_kvtab_foreach(w->dir, destroy_own, w);
	sl_timers_destroy(w->timers);
	sl_kvtab_destroy(w->dir);
	sl_kvtab_destroy(w->tab);
	w->timers = NULL;
	w->dir = NULL;
	w->tab = NULL;
}

static sl_ts_t cleanup_at(const struct win *w, const struct sess *s)
{
	return ts_add_sat(s->end - 1, w->cfg->lateness);
}

static void arm(struct win *w, struct sl_ctx *ctx, sl_ts_t at)
{
	if (sl_timers_add(w->timers, at, ctx->hash, ctx->key, ctx->klen, 0) < 0)
		sl_win_fail(ctx, -ENOMEM, "out of memory for session timers");
}

/* Emits a session that is already due (a late record within lateness) and arms its
 * cleanup. */
static void fire_now(struct win *w, struct sl_ctx *ctx, struct sess *s)
{
	sl_win_emit(w, ctx, s->start, s->end, accs_of(w, s), SL_ROW_INSERT);
	s->fired = 1;
	arm(w, ctx, cleanup_at(w, s));
}

/* Room for a new session of key d with id seq: the key's own slot when free, else an
 * entry of w->tab. NULL on ENOMEM, or when w->tab already has seq (a corrupt snapshot). */
static struct sess *sess_alloc(struct win *w, struct sdir *d, uint64_t hash, const uint8_t *key,
			       uint32_t klen, uint64_t seq)
{
	struct sess *s;
	bool created;

	if (!d->own_used) {
		d->own_used = 1;
		s = own_of(d);
	} else {
		s = sl_kvtab_put(w->tab, hash, key, klen, seq, &created);
		if (!s || !created)
			return NULL;
	}
	w->nsess++;
	return s;
}

/* Releases the room of session s of key d (its accumulators already destroyed). */
static void sess_free(struct win *w, struct sdir *d, struct sess *s)
{
	if (s == own_of(d))
		d->own_used = 0;
	else
		sl_kvtab_remove_value(w->tab, s);
	w->nsess--;
}

static struct sess *session_new(struct win *w, struct sl_ctx *ctx, struct sdir *d,
				struct sess **link, sl_ts_t start, sl_ts_t end)
{
	struct sess *s;

	s = sess_alloc(w, d, ctx->hash, ctx->key, ctx->klen, w->seq++);
	if (!s)
		return NULL;
	s->start = start;
	s->end = end;
	s->seq = w->seq - 1;
	s->fired = 0;
	sl_win_acc_init(w, accs_of(w, s));
	s->next = *link;
	*link = s;
	ctx->m.state_entries++;
	return s;
}

/* Removes s (found at *link) and the key's directory entry once it has no session.
 * Returns true when the key's directory entry went too. */
static bool session_drop(struct win *w, struct sl_ctx *ctx, struct sdir *d, struct sess **link,
			 struct sess *s)
{
	*link = s->next;
	sl_win_acc_destroy(w, accs_of(w, s));
	sess_free(w, d, s);
	ctx->m.state_entries--;
	if (d->head)
		return false;
	sl_kvtab_remove_value(w->dir, d);
	return true;
}

/* Merges the k sessions from *link on into the first, which grows to [lo, hi). Fired ones
 * are retracted first since their rows no longer describe a session. */
static struct sess *merge_run(struct win *w, struct sl_ctx *ctx, struct sdir *d, struct sess **link,
			      int k, sl_ts_t lo, sl_ts_t hi)
{
	struct sess *first = *link, *s = first;
	bool was_fired = first->fired;

	for (int i = 0; i < k; i++, s = s->next)
		if (s->fired)
			sl_win_emit(w, ctx, s->start, s->end, accs_of(w, s), SL_ROW_DELETE);
	for (int i = 1; i < k; i++) {
		s = first->next;
		sl_win_acc_merge(w, accs_of(w, first), accs_of(w, s));
		session_drop(w, ctx, d, &first->next, s);
	}
	first->start = lo;
	first->end = hi;
	first->fired = 0;
	/* an unfired session already has a timer at or before its old (earlier) due time */
	if (was_fired)
		arm(w, ctx, hi - 1);
	return first;
}

static void session_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	struct win *w = ctx->self;
	sl_ts_t wm = ctx->watermark;
	sl_ts_t lo = ts, hi = ts_add_sat(ts, w->cfg->spec.gap_ms);
	struct sess **link, *s, *first;
	struct sdir *d;
	bool created;
	int k = 0;

	d = sl_kvtab_put(w->dir, ctx->hash, ctx->key, ctx->klen, 0, &created);
	if (!d) {
		sl_win_fail(ctx, -ENOMEM, "out of memory for session state");
		return;
	}
	/* skip the sessions ending before lo, then take the run touching [lo, hi] */
	for (link = &d->head; *link && (*link)->end < ts; link = &(*link)->next)
		;
	for (s = *link; s && s->start <= hi; s = s->next, k++) {
		if (s->start < lo)
			lo = s->start;
		if (s->end > hi)
			hi = s->end;
	}
	if (ts_add_sat(hi - 1, w->cfg->lateness) <= wm) {
		if (created)
			sl_kvtab_remove_value(w->dir, d);
		sl_win_late(w, ctx, ts, row);
		return;
	}
	first = *link;
	if (k == 0) {
		s = session_new(w, ctx, d, link, lo, hi);
		if (!s) {
			if (!d->head)
				sl_kvtab_remove_value(w->dir, d);
			sl_win_fail(ctx, -ENOMEM, "out of memory for session state");
			return;
		}
		sl_win_acc_add(w, accs_of(w, s), row);
		if (hi - 1 <= wm)
			fire_now(w, ctx, s);
		else
			arm(w, ctx, hi - 1);
		return;
	}
	if (k == 1 && lo == first->start && hi == first->end) {
		/* inside one session: bounds unchanged */
		if (!first->fired) {
			sl_win_acc_add(w, accs_of(w, first), row);
			return;
		}
		sl_win_acc_copy(w, w->save, accs_of(w, first));
		sl_win_acc_add(w, accs_of(w, first), row);
		sl_win_emit_update(w, ctx, first->start, first->end, w->save, accs_of(w, first));
		sl_win_acc_destroy(w, w->save);
		return;
	}
	s = merge_run(w, ctx, d, link, k, lo, hi);
	sl_win_acc_add(w, accs_of(w, s), row);
	if (hi - 1 <= wm)
		fire_now(w, ctx, s);
}

/* One popped timer of the current key at time `at`: fire, clean up, or re-arm a timer that
 * the session outgrew. */
static void on_timer(struct win *w, struct sl_ctx *ctx, sl_ts_t at)
{
	struct sess **link, *s;
	struct sdir *d;
	sl_ts_t due;

	d = sl_kvtab_get(w->dir, ctx->hash, ctx->key, ctx->klen, 0);
	if (!d)
		return; /* every session of the key is gone */
	for (;;) {
		/* the timer names no session: find the key's one due at or after `at`, if any */
		for (link = &d->head; (s = *link); link = &s->next) {
			due = s->fired ? cleanup_at(w, s) : s->end - 1;
			if (due <= at)
				break;
		}
		if (!s)
			break;
		if (!s->fired) {
			sl_win_emit(w, ctx, s->start, s->end, accs_of(w, s), SL_ROW_INSERT);
			s->fired = 1;
			if (cleanup_at(w, s) > at) {
				arm(w, ctx, cleanup_at(w, s));
				continue;
			}
		}
		if (session_drop(w, ctx, d, link, s))
			return;
	}
	/* sessions that grew past this timer need one at their new due time */
	for (s = d->head; s; s = s->next)
		arm(w, ctx, s->fired ? cleanup_at(w, s) : s->end - 1);
}

static void session_on_watermark(struct sl_ctx *ctx, sl_ts_t wm)
{
	struct win *w = ctx->self;
	struct sl_timer t;

	while (sl_timers_pop(w->timers, wm, &t)) {
		/* the timer's key is only valid until the next timer call */
		memcpy(w->keybuf, t.key, t.klen);
		ctx->key = w->keybuf;
		ctx->klen = t.klen;
		ctx->hash = t.hash;
		on_timer(w, ctx, t.at);
	}
}

struct snap_walk {
	struct win *w;
	struct sl_snap_buf *out;
	uint64_t nkeys;
};

static bool snap_key(const struct sl_kv *kv, void *arg)
{
	struct snap_walk *sw = arg;
	const struct sdir *d = kv->value;
	uint32_t n = 0;

	for (const struct sess *s = d->head; s; s = s->next)
		n++;
	sl_win_snap_put_key(sw->out, kv->kg, kv->key, kv->klen);
	sl_snap_put_u32(sw->out, n);
	for (const struct sess *s = d->head; s; s = s->next) {
		uint64_t h[4] = { (uint64_t)s->start, (uint64_t)s->end, s->seq, s->fired };

		sl_snap_put(sw->out, h, sizeof h);
		sl_win_acc_serialize(sw->w, accs_of(sw->w, (void *)s), sw->out);
	}
	sw->nkeys++;
	return !sw->out->error;
}

/* O(keys + sessions): the key count, then each key's sessions in list order. */
static int session_snapshot(struct win *w, struct sl_snap_buf *out)
{
	struct snap_walk sw = { .w = w, .out = out };
	size_t at = out->len;

	sl_snap_put_u64(out, 0);
	sl_kvtab_foreach(w->dir, snap_key, &sw);
	if (!out->error)
		memcpy(out->data + at, &sw.nkeys, sizeof sw.nkeys);
	return out->error;
}

/* Reads the sessions of one key; keeps them (with a timer each) when `keep`. */
static int restore_key(struct win *w, struct sl_snap_reader *r, bool keep, uint64_t hash,
		       const uint8_t *key, uint32_t klen)
{
	struct sdir *d = NULL;
	struct sess **link, *s;
	sl_ts_t prev_end = 0;
	bool created;
	uint32_t n;
	int rc = 0;

	if (sl_snap_get_u32(r, &n))
		return r->error;
	if (!n)
		return -EINVAL; /* a key without sessions has no directory entry */
	if (keep) {
		d = sl_kvtab_put(w->dir, hash, key, klen, 0, &created);
		if (!d)
			return -ENOMEM;
		if (!created)
			return -EINVAL; /* the same key twice */
	}
	link = d ? &d->head : NULL;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t h[4];
		sl_ts_t start, end;

		if (sl_snap_get(r, h, sizeof h)) {
			rc = r->error;
			break;
		}
		start = (sl_ts_t)h[0];
		end = (sl_ts_t)h[1];
		/* sorted, non-touching sessions of sane bounds and a usable id */
		if (!sl_win_snap_ts_ok(start) || !sl_win_snap_ts_ok(end) || start >= end ||
		    (i && start <= prev_end) || h[2] >= (1ull << 62) || h[3] > 1) {
			rc = -EINVAL;
			break;
		}
		prev_end = end;
		if ((rc = sl_win_acc_deserialize(w, w->tmp, r)))
			break;
		if (!keep) {
			sl_win_acc_destroy(w, w->tmp);
			continue;
		}
		s = sess_alloc(w, d, hash, key, klen, h[2]);
		if (!s) {
			sl_win_acc_destroy(w, w->tmp);
			rc = sl_kvtab_get(w->tab, hash, key, klen, h[2]) ? -EINVAL : -ENOMEM;
			break;
		}
		s->start = start;
		s->end = end;
		s->seq = h[2];
		s->fired = h[3];
		s->next = NULL;
		/* a move of the block (see slice.c's restore_entry) */
		memcpy(accs_of(w, s), w->tmp, w->cfg->acc_size);
		*link = s;
		link = &s->next;
		if (h[2] >= w->seq)
			w->seq = h[2] + 1;
		if (sl_timers_add(w->timers, s->fired ? cleanup_at(w, s) : s->end - 1, hash, key,
				  klen, 0) < 0) {
			rc = -ENOMEM;
			break;
		}
	}
	if (d && !d->head)
		sl_kvtab_remove_value(w->dir, d);
	return rc;
}

static int session_restore(struct win *w, struct sl_snap_reader *r, uint32_t kg_lo, uint32_t kg_hi)
{
	uint64_t nkeys;

	if (sl_snap_get_u64(r, &nkeys))
		return r->error;
	/* every key takes at least 8 bytes: a corrupt count fails at the first short read */
	for (uint64_t i = 0; i < nkeys; i++) {
		const uint8_t *key;
		uint32_t kg, klen;
		uint64_t hash;
		int rc;

		rc = sl_win_snap_get_key(w, r, &kg, &key, &klen, &hash);
		if (rc || (rc = restore_key(w, r, kg >= kg_lo && kg < kg_hi, hash, key, klen)))
			return rc;
	}
	return 0;
}

/* Observers: the earliest session timer (a session's end - 1, or a fired one's cleanup
 * after the allowed lateness) and how many are armed. */
static void session_pending(const struct win *w, sl_ts_t *at, uint64_t *n)
{
	*n = sl_timers_count(w->timers);
	*at = *n ? sl_timers_next(w->timers) : SL_TS_MAX;
}

static void session_measure(const struct win *w, uint64_t *entries, size_t *bytes)
{
	*entries = w->nsess;
	*bytes = sl_kvtab_bytes(w->tab) + sl_kvtab_bytes(w->dir);
}

/* The key's directory entry is the first miss of every record: its slot line far ahead, the
 * entry (with the key's own session) near. */
static void session_prefetch(const struct win *w, uint64_t hash, sl_ts_t ts, int stage)
{
	(void)ts;
	if (stage == 0)
		sl_kvtab_prefetch(w->dir, hash, 0);
	else
		sl_kvtab_prefetch_entry(w->dir, hash, 0);
}

const struct sl_win_kind_ops sl_win_sessions = {
	.open = session_open,
	.close = session_close,
	.process = session_process,
	.prefetch = session_prefetch,
	.on_watermark = session_on_watermark,
	.snapshot = session_snapshot,
	.restore = session_restore,
	.pending = session_pending,
	.measure = session_measure,
};
