/*
 * window_snapshot_test.c - checkpoints of the window operator: snapshot at a cut, restore into
 * fresh instances, run the rest; the combined output must equal an uninterrupted run's.
 *
 * Every window kind (tumble, hop, cumulate, session) with and without allowed lateness, over
 * generated input that is out of order, has records late within lateness (-U/+U re-fires)
 * and beyond it (the late side output, also captured), NULL values, and aggregates of every
 * accumulator family: COUNT, SUM, AVG (INT and DECIMAL), MIN/MAX (DECIMAL and STRING),
 * COUNT(DISTINCT) (STRING and DECIMAL), FIRST/LAST_VALUE (STRING, DECIMAL, INT), LISTAGG
 * (its values in order).
 *
 *   - 1 -> 1 at many cuts, and chained (restore, run, snapshot again, ...): output equal
 *     byte for byte, in order. Each phase runs on its own thread, as after a real restart,
 *     so FIRST/LAST_VALUE must carry their arrival order across (agg.h).
 *   - snapshot without restore: the instance goes on as if nothing happened.
 *   - rescaling 2 -> 3, 3 -> 2, 1 -> 3, 3 -> 1, 2 -> 3 -> 2: every new instance restores all
 *     old snapshots keeping its key groups; records go to the owner of their key group.
 *     Output equal per key, in order (instances interleave keys differently).
 *   - a snapshot of another window shape or other aggregates is refused with a message.
 *   - corrupt snapshots: truncated at every offset, random bit flips (all refused, the
 *     instance left as it was), and flips with the checksum recomputed so the body parser
 *     sees garbage (never a crash under ASan/UBSan, whatever it returns).
 *   - the cost of a snapshot and a restore per live entry (printed; `bench` as argv[1]
 *     measures 1M keys).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snap.h"
#include "hash.h"
#include "op.h"
#include "window.h"
#include "tests/test.h"

/* The harness runs instances without a shard: these only satisfy the linker (weak, so the
 * library's win if it brings them). */
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
	fprintf(stderr, "shard failure %d: %s\n", code, fmt);
	exit(T_EXIT_FAIL);
}

#define MAX_PAR	 128
#define LATE_TAG 7
#define NOV	 INT64_MIN /* NULL v or d */

/* ---- captured output -------------------------------------------------------------------- */

struct text {
	char *p;
	size_t len, cap;
};

static void text_add(struct text *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		t->p = realloc(t->p, t->cap);
		T_ASSERT(t->p);
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = 0;
}

static void text_free(struct text *t)
{
	free(t->p);
	memset(t, 0, sizeof(*t));
}

struct cap {
	struct sl_ctx ctx; /* first: the process hook gets this pointer */
	struct sl_op_def def;
	struct text *out;
	char tag; /* 'M' main output, 'L' late side output */
};

static void cap_process(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *row)
{
	struct cap *c = (struct cap *)ctx;
	char buf[4096];
	int n = snprintf(buf, sizeof buf, "%c ", c->tag);

	n += sl_row_format(row, c->def.in_schema, buf + n, sizeof buf - (size_t)n);
	T_ASSERT(n > 0 && (size_t)n < sizeof buf - 40);
	n += snprintf(buf + n, sizeof buf - (size_t)n, " @%" PRId64 "\n", ts);
	text_add(c->out, buf, (size_t)n);
}

static const struct sl_op_ops cap_ops = { .name = "capture", .process = cap_process };

/* ---- the operator under test -------------------------------------------------------------- */

/* Input: user STRING (the key), v INT, d DECIMAL(10, 2), s STRING. */
static const struct sl_agg_spec aggs[] = {
	{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "c" },
	{ .kind = SL_AGG_COUNT, .field = 1, .name = "cv" },
	{ .kind = SL_AGG_SUM, .field = 1, .name = "sv" },
	{ .kind = SL_AGG_AVG, .field = 1, .name = "av" },
	{ .kind = SL_AGG_AVG, .field = 2, .name = "ad" },
	{ .kind = SL_AGG_SUM, .field = 2, .name = "sd" },
	{ .kind = SL_AGG_MIN, .field = 2, .name = "mind" },
	{ .kind = SL_AGG_MAX, .field = 2, .name = "maxd" },
	{ .kind = SL_AGG_MIN, .field = 3, .name = "mins" },
	{ .kind = SL_AGG_MAX, .field = 3, .name = "maxs" },
	{ .kind = SL_AGG_COUNT_DISTINCT, .field = 3, .name = "cds" },
	{ .kind = SL_AGG_COUNT_DISTINCT, .field = 2, .name = "cdd" },
	{ .kind = SL_AGG_FIRST_VALUE, .field = 3, .name = "fs" },
	{ .kind = SL_AGG_LAST_VALUE, .field = 3, .name = "ls" },
	{ .kind = SL_AGG_FIRST_VALUE, .field = 2, .name = "fd" },
	{ .kind = SL_AGG_LAST_VALUE, .field = 1, .name = "lv" },
	{ .kind = SL_AGG_LISTAGG, .field = 3, .name = "la", .sep = "; " },
};
#define NAGGS ((int)(sizeof aggs / sizeof aggs[0]))

/* One window configuration: the plan-time parts every instance shares. */
struct env {
	const char *name;
	struct sl_window_spec spec;
	struct sl_schema *in, *out;
	struct sl_window_cfg *cfg;
	struct sl_op_def def;
};

static struct sl_schema *input_schema(void)
{
	struct sl_schema *s = sl_schema_create();

	T_ASSERT(s);
	T_ASSERT(sl_schema_add(s, "user", SL_TYPE_STRING) == 0);
	T_ASSERT(sl_schema_add(s, "v", SL_TYPE_INT) == 1);
	T_ASSERT(sl_schema_add_decimal(s, "d", 10, 2) == 2);
	T_ASSERT(sl_schema_add(s, "s", SL_TYPE_STRING) == 3);
	return s;
}

static void env_init(struct env *e, const char *name, const struct sl_window_spec *spec,
		     const struct sl_agg_spec *a, int naggs)
{
	static const int key_fields[] = { 0 };
	struct sl_error err = { 0 };
	struct sl_agg_spec sa[NAGGS];

	T_ASSERT(naggs <= NAGGS);
	for (int i = 0; i < naggs; i++) {
		sa[i] = a[i];
		sa[i].sql_types = true;
	}
	memset(e, 0, sizeof(*e));
	e->name = name;
	e->spec = *spec;
	e->in = input_schema();
	e->cfg = sl_window_cfg_create(spec, sa, naggs, e->in, key_fields, 1, &e->out, &err);
	if (!e->cfg)
		fprintf(stderr, "%s: %s\n", name, err.msg);
	T_ASSERT(e->cfg);
	e->def.ops = &sl_window_ops;
	e->def.name = name;
	e->def.cfg = e->cfg;
	e->def.in_schema = e->in;
	e->def.out_schema = e->out;
	e->def.nkey = 1;
	e->def.key_fields[0] = 0;
	e->def.key_types[0] = SL_TYPE_STRING;
}

static void env_fini(struct env *e)
{
	sl_window_cfg_destroy(e->cfg);
	sl_schema_destroy(e->out);
	sl_schema_destroy(e->in);
}

struct inst {
	struct sl_ctx ctx;
	struct cap main, late;
	struct text out;
	uint8_t key[SL_KEY_MAX];
	_Alignas(8) uint8_t rowbuf[4096];
};

static void cap_init(struct cap *c, const struct sl_schema *schema, struct text *out, char tag)
{
	memset(c, 0, sizeof(*c));
	c->def.ops = &cap_ops;
	c->def.name = "capture";
	c->def.in_schema = schema;
	c->ctx.def = &c->def;
	c->ctx.watermark = SL_TS_MIN;
	c->out = out;
	c->tag = tag;
}

static struct inst *inst_open(struct env *e)
{
	struct inst *in = calloc(1, sizeof(*in));

	T_ASSERT(in);
	cap_init(&in->main, e->out, &in->out, 'M');
	cap_init(&in->late, e->in, &in->out, 'L');
	in->ctx.def = &e->def;
	in->ctx.watermark = SL_TS_MIN;
	in->ctx.out_buf = aligned_alloc(8, SL_ROW_SCRATCH);
	T_ASSERT(in->ctx.out_buf);
	in->ctx.port[0].n = 1;
	in->ctx.port[0].to[0] = &in->main.ctx;
	in->ctx.port[1].n = 1;
	in->ctx.port[1].to[0] = &in->late.ctx;
	in->ctx.port_tag[1] = e->spec.late_tag;
	in->ctx.nports = e->spec.late_tag ? 2 : 1;
	T_ASSERT(sl_window_ops.open(&in->ctx) == 0);
	return in;
}

static void inst_close(struct inst *in)
{
	sl_window_ops.close(&in->ctx);
	free(in->ctx.out_buf);
	text_free(&in->out);
	free(in);
}

/* ---- input ---------------------------------------------------------------------------------- */

#define NKEYS 24

struct ev {
	bool wm;
	sl_ts_t ts; /* record time, or the watermark */
	int key;
	int64_t v, d; /* NOV: NULL */
	int s;	      /* index into strs, -1: NULL */
};

static char keys[NKEYS][64];
static const char *const strs[] = {
	"apple", "pear", "fig", "kiwi-fruit", "", "banana", "cherry-with-a-longer-name-than-sixteen"
};
#define NSTRS ((int)(sizeof strs / sizeof strs[0]))

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/*
 * n events: times advance about 12 ms a record, most records up to 40 ms out of order, some
 * up to 300 (late within lateness), a few 1.5-2 s behind (beyond it); a watermark every 8
 * records at the largest time seen - 60, and the final +inf one.
 */
static int gen_events(uint64_t seed, int n, struct ev *ev)
{
	sl_ts_t t = 1000, maxts = SL_TS_MIN;
	int k = 0;

	rnd_state = seed;
	for (int i = 0; i < NKEYS; i++) {
		if (i % 5 == 0)
			snprintf(keys[i], sizeof keys[i], "user-with-a-rather-long-name-%02d", i);
		else
			snprintf(keys[i], sizeof keys[i], "k%02d", i);
	}
	for (int i = 0; i < n; i++) {
		struct ev *e = &ev[k++];
		uint64_t r = rnd();

		t += (sl_ts_t)(r % 25);
		e->wm = false;
		if (r % 100 < 3)
			e->ts = t - 1500 - (sl_ts_t)(rnd() % 500);
		else if (r % 100 < 75)
			e->ts = t - (sl_ts_t)(rnd() % 40);
		else
			e->ts = t - (sl_ts_t)(rnd() % 300);
		e->key = (int)(rnd() % NKEYS);
		e->v = rnd() % 10 == 0 ? NOV : (int64_t)(rnd() % 2001) - 1000;
		e->d = rnd() % 10 == 0 ? NOV : (int64_t)(rnd() % 200001) - 100000;
		e->s = rnd() % 8 == 0 ? -1 : (int)(rnd() % NSTRS);
		if (e->ts > maxts)
			maxts = e->ts;
		if (i % 8 == 7)
			ev[k++] = (struct ev){ .wm = true, .ts = maxts - 60 };
	}
	ev[k++] = (struct ev){ .wm = true, .ts = SL_TS_MAX };
	return k;
}

/* The instance (of n) owning key group kg: contiguous ranges, as the runtime assigns them. */
static int owner(uint32_t kg, int n)
{
	return (int)sl_key_group_shard(kg, MAX_PAR, (uint32_t)n);
}

static void kg_range(int i, int n, uint32_t *lo, uint32_t *hi)
{
	*lo = MAX_PAR;
	*hi = 0;
	for (uint32_t kg = 0; kg < MAX_PAR; kg++) {
		if (owner(kg, n) != i)
			continue;
		if (kg < *lo)
			*lo = kg;
		*hi = kg + 1;
	}
	if (*lo > *hi)
		*lo = *hi;
}

/* Feeds one event to the instances: a record to its key group's owner, a watermark to all. */
static void feed(struct inst **in, int n, const struct ev *e)
{
	struct sl_row_builder b;
	const struct sl_row *row;
	struct inst *x;
	uint8_t key[SL_KEY_MAX];
	uint32_t klen;
	uint64_t hash;

	if (e->wm) {
		for (int i = 0; i < n; i++)
			sl_op_watermark(&in[i]->ctx, e->ts);
		return;
	}
	/* the key is encoded once to find its owner, as the exchange does */
	{
		_Alignas(8) uint8_t buf[512];

		sl_rowb_init(&b, buf, sizeof buf, 4);
		sl_rowb_set_str(&b, 0, keys[e->key], (uint32_t)strlen(keys[e->key]));
		row = sl_rowb_finish(&b);
		T_ASSERT(row);
		klen = sl_key_encode(row, (const int[]){ 0 },
				     (const enum sl_type[]){ SL_TYPE_STRING }, 1, key);
		hash = sl_hash_bytes(key, klen);
	}
	x = in[owner(sl_key_group(hash, MAX_PAR), n)];
	sl_rowb_init(&b, x->rowbuf, sizeof x->rowbuf, 4);
	sl_rowb_set_str(&b, 0, keys[e->key], (uint32_t)strlen(keys[e->key]));
	if (e->v != NOV)
		sl_rowb_set_i64(&b, 1, e->v);
	if (e->d != NOV)
		sl_rowb_set_i64(&b, 2, e->d);
	if (e->s >= 0)
		sl_rowb_set_str(&b, 3, strs[e->s], (uint32_t)strlen(strs[e->s]));
	row = sl_rowb_finish(&b);
	T_ASSERT(row);
	memcpy(x->key, key, klen);
	x->ctx.key = x->key;
	x->ctx.klen = klen;
	x->ctx.hash = hash;
	x->ctx.m.in++;
	sl_window_ops.process(&x->ctx, e->ts, row);
}

/* ---- runs -------------------------------------------------------------------------------------
 */

#define MAX_PHASES 4
#define MAX_INST   4

struct run {
	struct env *env;
	const struct ev *ev;
	int nev;
	int nphase;
	int ninst[MAX_PHASES];		   /* instances of each phase */
	int cut[MAX_PHASES];		   /* phase p runs events [cut[p - 1], cut[p]) */
	struct sl_snap_buf snap[MAX_INST]; /* the last phase's snapshots */
	int nsnap;
	struct text out;
	int phase; /* the phase the thread runs */
};

/* One phase on its own thread: open (restore from the previous phase's snapshots), feed,
 * snapshot, close. */
static void *phase_main(void *arg)
{
	struct run *r = arg;
	int p = r->phase, n = r->ninst[p];
	int from = p ? r->cut[p - 1] : 0, to = p + 1 < r->nphase ? r->cut[p] : r->nev;
	struct inst *in[MAX_INST];

	for (int i = 0; i < n; i++) {
		uint32_t lo, hi;

		in[i] = inst_open(r->env);
		kg_range(i, n, &lo, &hi);
		if (p == 0)
			continue;
		/* all old snapshots one after another, as the runtime hands them */
		struct sl_snap_buf all;

		sl_snap_init(&all);
		for (int j = 0; j < r->nsnap; j++)
			T_ASSERT(sl_snap_put(&all, r->snap[j].data, r->snap[j].len) == 0);
		struct sl_snap_reader rd;

		sl_snap_reader_init(&rd, all.data, all.len);
		for (int j = 0; j < r->nsnap; j++) {
			int rc = sl_window_ops.restore(&in[i]->ctx, &rd, lo, hi);

			if (rc)
				fprintf(stderr, "%s: restore: %d %s\n", r->env->name, rc,
					sl_window_restore_error(&in[i]->ctx));
			T_ASSERT(rc == 0);
		}
		T_ASSERT(rd.pos == rd.len);
		sl_snap_free(&all);
	}
	for (int e = from; e < to; e++)
		feed(in, n, &r->ev[e]);
	for (int j = 0; j < r->nsnap; j++)
		sl_snap_free(&r->snap[j]);
	r->nsnap = 0;
	for (int i = 0; i < n; i++) {
		if (p + 1 < r->nphase) {
			sl_snap_init(&r->snap[i]);
			T_ASSERT(sl_window_ops.snapshot(&in[i]->ctx, (uint64_t)p + 1,
							&r->snap[i]) == 0);
			r->nsnap++;
		}
		text_add(&r->out, in[i]->out.p ? in[i]->out.p : "", in[i]->out.len);
		inst_close(in[i]);
	}
	return NULL;
}

static void run(struct run *r)
{
	for (r->phase = 0; r->phase < r->nphase; r->phase++) {
		pthread_t th;

		T_ASSERT(pthread_create(&th, NULL, phase_main, r) == 0);
		T_ASSERT(pthread_join(th, NULL) == 0);
	}
	T_ASSERT(r->nsnap == 0);
}

/* The output of phases with the given instance counts and cuts. Caller frees. */
static struct text run_phases(struct env *env, const struct ev *ev, int nev, int nphase,
			      const int *ninst, const int *cut)
{
	struct run r = { .env = env, .ev = ev, .nev = nev, .nphase = nphase };

	for (int p = 0; p < nphase; p++) {
		r.ninst[p] = ninst[p];
		r.cut[p] = p + 1 < nphase ? cut[p] : nev;
	}
	run(&r);
	return r.out;
}

/* Lines ordered by key, each key's lines in their original order. */
struct line {
	const char *p;
	size_t len, klen;
	const char *key;
	int idx;
};

static int line_cmp(const void *pa, const void *pb)
{
	const struct line *a = pa, *b = pb;
	size_t n = a->klen < b->klen ? a->klen : b->klen;
	int r = memcmp(a->key, b->key, n);

	if (r)
		return r;
	if (a->klen != b->klen)
		return a->klen < b->klen ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static struct text by_key(const struct text *t)
{
	struct text o = { 0 };
	struct line *l = NULL;
	int n = 0, cap = 0;

	for (const char *p = t->p; p && *p;) {
		const char *nl = strchr(p, '\n'), *k = strchr(p, '[');

		T_ASSERT(nl && k && k < nl);
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			l = realloc(l, (size_t)cap * sizeof(*l));
			T_ASSERT(l);
		}
		l[n].p = p;
		l[n].len = (size_t)(nl + 1 - p);
		l[n].key = k + 1;
		l[n].klen = strcspn(k + 1, ",\n");
		l[n].idx = n;
		n++;
		p = nl + 1;
	}
	qsort(l, (size_t)n, sizeof(*l), line_cmp);
	for (int i = 0; i < n; i++)
		text_add(&o, l[i].p, l[i].len);
	if (!o.p)
		text_add(&o, "", 0);
	free(l);
	return o;
}

static void expect_same(const char *what, const struct env *env, const struct text *want,
			const struct text *got)
{
	if (!strcmp(want->p, got->p))
		return;
	size_t i = 0;

	while (want->p[i] && want->p[i] == got->p[i])
		i++;
	fprintf(stderr, "%s, %s: output differs at byte %zu\n--- want\n%.600s\n--- got\n%.600s\n",
		env->name, what, i, want->p + (i > 200 ? i - 200 : 0),
		got->p + (i > 200 ? i - 200 : 0));
	exit(T_EXIT_FAIL);
}

/* ---- the equivalence tests ---------------------------------------------------------------------
 */

#define NREC 700

static struct ev events[NREC + NREC / 8 + 2];

static void equivalence(struct env *env, uint64_t seed)
{
	int nev = gen_events(seed, NREC, events);
	int one[1] = { 1 };
	struct text ref = run_phases(env, events, nev, 1, one, NULL), ref_k = by_key(&ref);
	int cuts[] = { 0, 1, nev / 7, nev / 3, nev / 2, 2 * nev / 3, nev - 2, nev };
	int late = 0, upd = 0;

	/* the input must exercise what it claims to */
	for (const char *p = ref.p; (p = strstr(p, "\nL ")); p++)
		late++;
	for (const char *p = ref.p; (p = strstr(p, "\nM -")); p++)
		upd++; /* -U of a late re-fire, -D of a fired session merged away */
	T_ASSERT(env->spec.late_tag == 0 || late > 0);
	T_ASSERT(env->spec.allowed_lateness_ms == 0 || upd > 0);

	/* 1 -> 1 at every cut: identical, in order */
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		int ninst[2] = { 1, 1 };
		struct text t = run_phases(env, events, nev, 2, ninst, &cuts[i]);
		char what[64];

		snprintf(what, sizeof what, "1 -> 1 at event %d", cuts[i]);
		expect_same(what, env, &ref, &t);
		text_free(&t);
	}
	/* chained: three restarts */
	{
		int ninst[4] = { 1, 1, 1, 1 }, c[3] = { nev / 4, nev / 2, 3 * nev / 4 };
		struct text t = run_phases(env, events, nev, 4, ninst, c);

		expect_same("1 -> 1 -> 1 -> 1", env, &ref, &t);
		text_free(&t);
	}
	/* rescaling: equal per key */
	{
		static const struct {
			int nphase, ninst[3], cut_num[2];
		} rs[] = {
			{ 2, { 2, 3 }, { 1 } },	      { 2, { 3, 2 }, { 1 } },
			{ 2, { 1, 3 }, { 2 } },	      { 2, { 3, 1 }, { 2 } },
			{ 3, { 2, 3, 2 }, { 1, 2 } },
		};

		for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) {
			int c[2] = { rs[i].cut_num[0] * nev / 3, rs[i].cut_num[1] * nev / 3 };
			struct text t = run_phases(env, events, nev, rs[i].nphase, rs[i].ninst, c);
			struct text tk = by_key(&t);
			char what[64];

			snprintf(what, sizeof what, "rescale %d -> %d%s", rs[i].ninst[0],
				 rs[i].ninst[1], rs[i].nphase > 2 ? " -> 2" : "");
			expect_same(what, env, &ref_k, &tk);
			text_free(&t);
			text_free(&tk);
		}
	}
	text_free(&ref_k);
	text_free(&ref);
}

/* A snapshot changes nothing: the same instance goes on and matches the reference. */
static void snapshot_is_pure(struct env *env)
{
	int nev = gen_events(77, NREC, events);
	int one[1] = { 1 };
	struct text ref = run_phases(env, events, nev, 1, one, NULL);
	struct inst *in = inst_open(env);
	struct sl_snap_buf b;

	sl_snap_init(&b);
	for (int e = 0; e < nev; e++) {
		if (e % 97 == 13) {
			sl_snap_reset(&b);
			T_ASSERT(sl_window_ops.snapshot(&in->ctx, (uint64_t)e, &b) == 0);
		}
		feed(&in, 1, &events[e]);
	}
	expect_same("snapshots in passing", env, &ref, &in->out);
	sl_snap_free(&b);
	inst_close(in);
	text_free(&ref);
}

/* ---- refusals ----------------------------------------------------------------------------------
 */

/* A snapshot of env after `n` events. */
static void snapshot_after(struct env *env, int n, struct sl_snap_buf *b)
{
	struct inst *in = inst_open(env);

	for (int e = 0; e < n; e++)
		feed(&in, 1, &events[e]);
	sl_snap_init(b);
	T_ASSERT(sl_window_ops.snapshot(&in->ctx, 1, b) == 0);
	inst_close(in);
}

static void mismatch(void)
{
	struct sl_window_spec tumble = { .kind = SL_WIN_TUMBLE, .size_ms = 100 };
	struct sl_window_spec tumble2 = { .kind = SL_WIN_TUMBLE, .size_ms = 200 };
	struct sl_window_spec tumble_late = { .kind = SL_WIN_TUMBLE,
					      .size_ms = 100,
					      .allowed_lateness_ms = 500 };
	struct sl_window_spec hop = { .kind = SL_WIN_HOP, .size_ms = 100, .slide_ms = 50 };
	struct sl_window_spec sess = { .kind = SL_WIN_SESSION, .gap_ms = 100 };
	static const char *const want[5] = {
		"the snapshot holds TUMBLE(size 100 ms, offset 0 ms, key STRING, 128 key groups), "
		"this job has HOP(size 100 ms, slide 50 ms, offset 0 ms, key STRING, 128 key "
		"groups)",
		"the snapshot holds TUMBLE(size 100 ms, offset 0 ms, key STRING, 128 key groups), "
		"this job has TUMBLE(size 200 ms, offset 0 ms, key STRING, 128 key groups)",
		"the snapshot has 17 aggregates, this job 16",
		"this job has SESSION(gap 100 ms, key STRING, 128 key groups)",
		"aggregate 4 is AVG(INT) in the snapshot, SUM(INT) in this job",
	};
	struct sl_agg_spec swapped[NAGGS];
	struct env a, other[5], same;
	struct sl_snap_buf b;

	memcpy(swapped, aggs, sizeof aggs);
	swapped[3].kind = SL_AGG_SUM;
	gen_events(5, 100, events);
	env_init(&a, "tumble", &tumble, aggs, NAGGS);
	env_init(&other[0], "tumble", &hop, aggs, NAGGS);
	env_init(&other[1], "tumble", &tumble2, aggs, NAGGS);
	env_init(&other[2], "tumble", &tumble, aggs, NAGGS - 1);
	env_init(&other[3], "tumble", &sess, aggs, NAGGS);
	env_init(&other[4], "tumble", &tumble, swapped, NAGGS);
	snapshot_after(&a, 60, &b);
	for (int i = 0; i < 5; i++) {
		struct inst *in = inst_open(&other[i]);
		struct sl_snap_reader r;
		const char *msg;

		sl_snap_reader_init(&r, b.data, b.len);
		T_ASSERT_EQ_I64(sl_window_ops.restore(&in->ctx, &r, 0, MAX_PAR), -EPROTO);
		msg = sl_window_restore_error(&in->ctx);
		fprintf(stderr, "refusal: %s\n", msg);
		T_ASSERT(!strncmp(msg, "window 'tumble': state layout does not match: ", 46));
		T_ASSERT(strstr(msg, want[i]));
		T_ASSERT(strstr(msg, "; refusing to restore"));
		T_ASSERT_EQ_I64(in->ctx.m.state_entries, 0);
		inst_close(in);
		env_fini(&other[i]);
	}
	/* a format this build does not know */
	{
		struct inst *in = inst_open(&a);
		struct sl_snap_reader r;
		uint32_t v2 = 2;

		memcpy(b.data + 4, &v2, 4);
		sl_snap_reader_init(&r, b.data, b.len);
		T_ASSERT_EQ_I64(sl_window_ops.restore(&in->ctx, &r, 0, MAX_PAR), -EPROTO);
		T_ASSERT(!strcmp(sl_window_restore_error(&in->ctx),
				 "window 'tumble': snapshot format version 2, this build reads "
				 "version 1"));
		v2 = 1;
		memcpy(b.data + 4, &v2, 4);
		inst_close(in);
	}
	/* another allowed lateness is not another layout: a savepoint may change it */
	env_init(&same, "tumble", &tumble_late, aggs, NAGGS);
	{
		struct inst *in = inst_open(&same);
		struct sl_snap_reader r;

		sl_snap_reader_init(&r, b.data, b.len);
		T_ASSERT_EQ_I64(sl_window_ops.restore(&in->ctx, &r, 0, MAX_PAR), 0);
		T_ASSERT(in->ctx.m.state_entries > 0);
		inst_close(in);
	}
	env_fini(&same);
	sl_snap_free(&b);
	env_fini(&a);
}

/* The format's checksum (snapshot.c), to forge snapshots whose body is garbage. */
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

/* Restores bytes into a fresh instance; when it must fail, the instance must be untouched
 * (its snapshot equals an empty one's). Accepted bytes are then run on events [from, nev). */
static int try_restore(struct env *env, const uint8_t *p, size_t len,
		       const struct sl_snap_buf *empty, int from, int nev, bool must_fail)
{
	struct inst *in = inst_open(env);
	struct sl_snap_reader r;
	int rc;

	sl_snap_reader_init(&r, p, len);
	rc = sl_window_ops.restore(&in->ctx, &r, 0, MAX_PAR);
	if (must_fail && rc == 0) {
		fprintf(stderr, "%s: corrupt snapshot of %zu bytes accepted\n", env->name, len);
		exit(T_EXIT_FAIL);
	}
	if (rc) {
		struct sl_snap_buf b;

		T_ASSERT(rc == -EINVAL || rc == -EPROTO);
		T_ASSERT(sl_window_restore_error(&in->ctx)[0]);
		if (must_fail) {
			sl_snap_init(&b);
			T_ASSERT(sl_window_ops.snapshot(&in->ctx, 1, &b) == 0);
			T_ASSERT(b.len == empty->len && !memcmp(b.data, empty->data, b.len));
			sl_snap_free(&b);
		}
	} else {
		for (int e = from; e < nev; e++)
			feed(&in, 1, &events[e]);
	}
	inst_close(in);
	return rc;
}

static void *corrupt_main(void *arg)
{
	struct env *env = arg;
	int nev = gen_events(11, 40, events);
	struct sl_snap_buf b, empty;
	uint8_t *x;
	int accepted = 0;

	snapshot_after(env, nev / 2, &b);
	{
		struct inst *in = inst_open(env);

		sl_snap_init(&empty);
		T_ASSERT(sl_window_ops.snapshot(&in->ctx, 1, &empty) == 0);
		inst_close(in);
	}
	x = malloc(b.len);
	T_ASSERT(x);
	/* the intact snapshot restores, so every refusal below is the corruption's */
	T_ASSERT(try_restore(env, b.data, b.len, &empty, nev / 2, nev, false) == 0);
	for (size_t len = 0; len < b.len; len++)
		try_restore(env, b.data, len, &empty, 0, 0, true);
	rnd_state = 99;
	for (int i = 0; i < 3000; i++) {
		int flips = 1 + (int)(rnd() % 3);

		memcpy(x, b.data, b.len);
		for (int f = 0; f < flips; f++)
			x[rnd() % b.len] ^= (uint8_t)(1u << (rnd() % 8));
		if (memcmp(x, b.data, b.len))
			try_restore(env, x, b.len, &empty, 0, 0, true);
	}
	/* garbage under a valid checksum: the parser must hold on its own */
	for (int i = 0; i < 3000; i++) {
		uint64_t sum;
		int flips = 1 + (int)(rnd() % 4);

		memcpy(x, b.data, b.len);
		for (int f = 0; f < flips; f++) {
			size_t at = rnd() % (b.len - 8);

			if (rnd() % 2)
				x[at] ^= (uint8_t)(1u << (rnd() % 8));
			else
				x[at] = (uint8_t)rnd();
		}
		sum = checksum(x, b.len - 8);
		memcpy(x + b.len - 8, &sum, 8);
		accepted += try_restore(env, x, b.len, &empty, nev / 2, nev, false) == 0;
	}
	fprintf(stderr,
		"%s: %zu-byte snapshot: every truncation and 3000 flips refused; "
		"3000 forged bodies: %d accepted and run, none crashed\n",
		env->name, b.len, accepted);
	free(x);
	sl_snap_free(&empty);
	sl_snap_free(&b);
	return NULL;
}

/* On its own thread: forged FIRST/LAST_VALUE arrival numbers that are accepted move that
 * thread's arrival counter (agg.h), which must not leak into the other tests. */
static void corrupt(struct env *env)
{
	pthread_t th;

	T_ASSERT(pthread_create(&th, NULL, corrupt_main, env) == 0);
	T_ASSERT(pthread_join(th, NULL) == 0);
}

/* ---- cost
 * ---------------------------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* CPU time: the machine may be busy */
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Snapshot and restore of `nkeys` live (key, window) entries. */
static void cost(const char *name, const struct sl_window_spec *spec, const struct sl_agg_spec *a,
		 int naggs, int nkeys, const char *sval)
{
	struct env env;
	struct inst *in, *in2;
	struct sl_snap_buf b;
	struct sl_snap_reader r;
	double t0, t_build, t_snap, t_rest, best = 1e9;
	char key[32];

	env_init(&env, name, spec, a, naggs);
	in = inst_open(&env);
	t0 = now_s();
	for (int i = 0; i < nkeys; i++) {
		struct sl_row_builder rb;
		const struct sl_row *row;
		int kl = snprintf(key, sizeof key, "key-%08d", i);

		sl_rowb_init(&rb, in->rowbuf, sizeof in->rowbuf, 4);
		sl_rowb_set_str(&rb, 0, key, (uint32_t)kl);
		sl_rowb_set_i64(&rb, 1, i);
		sl_rowb_set_i64(&rb, 2, i * 7);
		sl_rowb_set_str(&rb, 3, sval, (uint32_t)strlen(sval));
		row = sl_rowb_finish(&rb);
		in->ctx.klen =
			sl_key_encode(row, env.def.key_fields, env.def.key_types, 1, in->key);
		in->ctx.key = in->key;
		in->ctx.hash = sl_hash_bytes(in->key, in->ctx.klen);
		sl_window_ops.process(&in->ctx, 1000 + i % 50, row);
	}
	t_build = now_s() - t0;
	T_ASSERT_EQ_I64(in->ctx.m.state_entries, nkeys);
	sl_snap_init(&b);
	for (int rep = 0; rep < 3; rep++) { /* the first grows the buffer; it is kept after */
		sl_snap_reset(&b);
		t0 = now_s();
		T_ASSERT(sl_window_ops.snapshot(&in->ctx, 1, &b) == 0);
		t_snap = now_s() - t0;
		if (rep && t_snap < best)
			best = t_snap;
	}
	in2 = inst_open(&env);
	sl_snap_reader_init(&r, b.data, b.len);
	t0 = now_s();
	T_ASSERT(sl_window_ops.restore(&in2->ctx, &r, 0, MAX_PAR) == 0);
	t_rest = now_s() - t0;
	T_ASSERT_EQ_I64(in2->ctx.m.state_entries, nkeys);
	printf("%-28s %8d entries %6.1f MB: snapshot %6.1f ns/entry %6.0f MB/s; restore %6.1f "
	       "ns/entry; (records creating them: %6.1f ns each)\n",
	       name, nkeys, (double)b.len / 1e6, best * 1e9 / nkeys, (double)b.len / best / 1e6,
	       t_rest * 1e9 / nkeys, t_build * 1e9 / nkeys);
	sl_snap_free(&b);
	inst_close(in2);
	inst_close(in);
	env_fini(&env);
}

static void costs(int nkeys)
{
	static const struct sl_agg_spec plain[] = {
		{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "c" },
		{ .kind = SL_AGG_SUM, .field = 1, .name = "sv" },
		{ .kind = SL_AGG_AVG, .field = 2, .name = "ad" },
	};
	static const struct sl_agg_spec dyn[] = {
		{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "c" },
		{ .kind = SL_AGG_MAX, .field = 3, .name = "maxs" },
		{ .kind = SL_AGG_COUNT_DISTINCT, .field = 2, .name = "cdd" },
	};
	struct sl_window_spec tumble = { .kind = SL_WIN_TUMBLE, .size_ms = 1000000 };
	struct sl_window_spec sess = { .kind = SL_WIN_SESSION, .gap_ms = 1000000 };

	cost("tumble COUNT, SUM, AVG", &tumble, plain, 3, nkeys, "x");
	cost("tumble COUNT, MAX(s), CD(d)", &tumble, dyn, 3, nkeys, "a-string-value");
	cost("session COUNT, SUM, AVG", &sess, plain, 3, nkeys, "x");
}

/* A user aggregate with a non-zero empty state: MIN(v) starting at INT64_MAX. Its
 * accumulator is plain bytes, snapshotted as they are. */
static void umin_init(void *acc, void *arg)
{
	*(int64_t *)acc = INT64_MAX;
}

static void umin_add(void *acc, const struct sl_row *row, void *arg)
{
	if (!sl_row_is_null(row, 1) && sl_row_i64(row, 1) < *(int64_t *)acc)
		*(int64_t *)acc = sl_row_i64(row, 1);
}

static void umin_merge(void *acc, const void *other, void *arg)
{
	if (*(const int64_t *)other < *(int64_t *)acc)
		*(int64_t *)acc = *(const int64_t *)other;
}

static void umin_result(const void *acc, struct sl_row_builder *out, int field, void *arg)
{
	if (*(const int64_t *)acc == INT64_MAX)
		sl_rowb_set_null(out, field);
	else
		sl_rowb_set_i64(out, field, *(const int64_t *)acc);
}

static void user_aggregate(void)
{
	static const struct sl_agg_spec ua[] = {
		{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "c" },
		{ .kind = SL_AGG_USER,
		  .field = 1,
		  .name = "umin",
		  .user = { .acc_size = 8,
			    .init = umin_init,
			    .add = umin_add,
			    .merge = umin_merge,
			    .result = umin_result,
			    .result_type = SL_TYPE_BIGINT } },
		{ .kind = SL_AGG_LAST_VALUE, .field = 3, .name = "ls" },
	};
	static const struct sl_window_spec specs[] = {
		{ .kind = SL_WIN_HOP, .size_ms = 300, .slide_ms = 100, .allowed_lateness_ms = 120 },
		{ .kind = SL_WIN_SESSION, .gap_ms = 50, .allowed_lateness_ms = 80 },
	};

	for (int i = 0; i < 2; i++) {
		struct env env;

		env_init(&env, i ? "session user" : "hop user", &specs[i], ua, 3);
		equivalence(&env, 500 + i);
		env_fini(&env);
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		struct sl_window_spec spec;
	} cfgs[] = {
		{ "tumble", { .kind = SL_WIN_TUMBLE, .size_ms = 100, .late_tag = LATE_TAG } },
		{ "tumble lateness",
		  { .kind = SL_WIN_TUMBLE,
		    .size_ms = 100,
		    .offset_ms = 30,
		    .allowed_lateness_ms = 150,
		    .late_tag = LATE_TAG } },
		{ "hop lateness",
		  { .kind = SL_WIN_HOP,
		    .size_ms = 300,
		    .slide_ms = 100,
		    .allowed_lateness_ms = 120,
		    .late_tag = LATE_TAG } },
		{ "hop", { .kind = SL_WIN_HOP, .size_ms = 250, .slide_ms = 100 } },
		{ "cumulate lateness",
		  { .kind = SL_WIN_CUMULATE,
		    .size_ms = 400,
		    .slide_ms = 100,
		    .allowed_lateness_ms = 100,
		    .late_tag = LATE_TAG } },
		{ "session lateness",
		  { .kind = SL_WIN_SESSION,
		    .gap_ms = 50,
		    .allowed_lateness_ms = 80,
		    .late_tag = LATE_TAG } },
		{ "session", { .kind = SL_WIN_SESSION, .gap_ms = 30, .late_tag = LATE_TAG } },
	};

	if (argc > 1 && !strcmp(argv[1], "bench")) {
		costs(1000000);
		return T_EXIT_PASS;
	}
	for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
		struct env env;

		env_init(&env, cfgs[i].name, &cfgs[i].spec, aggs, NAGGS);
		equivalence(&env, 1 + i);
		equivalence(&env, 1000 + i);
		snapshot_is_pure(&env);
		corrupt(&env);
		env_fini(&env);
	}
	user_aggregate();
	mismatch();
	costs(50000);
	return T_EXIT_PASS;
}
