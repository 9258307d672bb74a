/*
 * window_sqlite_test.c - property test: for random out-of-order keyed events, the engine's
 * windows equal SQLite's batch GROUP BY over the records that were not late.
 *
 * Per run: one source split emits N events in a shuffled-by-disorder order, with a few very
 * late ones, through key_by and a window operator on 2 shards; the watermark is emitted after
 * every record (max event time - delay). Because there is one split, the watermark each
 * record meets is a pure function of the records before it, so the test computes which
 * records are late on its own and checks the engine's late side output against it (tumbling
 * and hopping); for sessions, whose lateness depends on merging, the engine's late output is
 * taken as given and only the windows are compared. The engine's changelog is applied (+I,
 * -U, +U) and the final rows compared with SQLite's, row for row.
 *
 * Two-stage aggregation: every spec runs with the agg-phase strategy ONE and TWO, and every
 * other run draws its keys from a Zipf distribution (s = 1.2 over 500 keys: the first key
 * carries about a quarter of the rows), so partials, raw late rows and re-fires meet on the
 * owner; a TWO run of a slice window must have combined rows (or it checks nothing new).
 *
 * Usage: window_sqlite_test [RUNS]
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/job.h>

#include "test.h"

#define MAXN 4000
#define DELAY 2000
#define LATE_TAG 1

struct ev {
	int64_t k, ts, v;
	bool v_null;
};

static struct ev evs[MAXN];
static int nev;

/* ---- source: evs[] in order ---- */

struct cursor {
	int next;
};

static int src_nsplits(const void *cfg)
{
	return 1;
}

static void *src_open(const void *cfg, int split, struct sl_error *err)
{
	return calloc(1, sizeof(struct cursor));
}

static int src_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct cursor *cur = state;
	int n = 0;

	if (cur->next == nev)
		return SL_SRC_EOF;
	while (n < max && cur->next < nev) {
		const struct ev *e = &evs[cur->next++];
		struct sl_row_builder b;

		sl_rowb_init(&b, sl_src_scratch(c), SL_ROW_SCRATCH, 3);
		sl_rowb_set_i64(&b, 0, e->k);
		sl_rowb_set_i64(&b, 1, e->ts);
		if (!e->v_null)
			sl_rowb_set_i64(&b, 2, e->v);
		if (sl_src_emit(c, sl_rowb_finish(&b)))
			return -1;
		n++;
	}
	return n;
}

static void src_close(void *state)
{
	free(state);
}

static const struct sl_source_ops src_ops = {
	.name = "events",
	.nsplits = src_nsplits,
	.open = src_open,
	.poll = src_poll,
	.close = src_close,
};

/* ---- sinks: the changelog of windows, and the late records ---- */

#define MAXROWS 40000

struct wrow {
	int64_t f[8];      /* k, start, end, count(*), count(v), sum, min, max */
	uint64_t nulls;
	bool live;
};

static struct wrow rows[MAXROWS];
static int nrows;
static int changelog_errors;
static bool late_seen[MAXN];
static int nlate_seen;
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;

#define NOUT 8 /* k, ws, we, cnt, cntv, sum, min, max */

static void *win_open(const void *cfg, const struct sl_schema *s, int shard, int n,
		      struct sl_error *err)
{
	return (void *)1;
}

static bool same(const struct wrow *r, const struct sl_row *row)
{
	for (int i = 0; i < 3; i++)
		if (r->f[i] != sl_row_i64(row, i))
			return false;
	return true;
}

/* Applies one changelog row. Window rows of different shards never share a key, but the
 * lock keeps the shared table simple. */
static int win_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	pthread_mutex_lock(&sink_lock);
	if (row->kind == SL_ROW_INSERT || row->kind == SL_ROW_UPDATE_AFTER) {
		for (int i = 0; i < nrows; i++)
			if (rows[i].live && same(&rows[i], row))
				changelog_errors++; /* +I/+U while a row for it is live */
		if (nrows < MAXROWS) {
			struct wrow *r = &rows[nrows++];

			r->live = true;
			r->nulls = row->nulls;
			for (int i = 0; i < 8; i++)
				r->f[i] = sl_row_i64(row, i);
		}
	} else {
		int found = 0;

		for (int i = 0; i < nrows; i++) {
			if (rows[i].live && same(&rows[i], row) && rows[i].nulls == row->nulls &&
			    !memcmp(&rows[i].f[3], &row->slot[3], 5 * 8)) {
				rows[i].live = false;
				found = 1;
				break;
			}
		}
		if (!found)
			changelog_errors++; /* -U of a row that was never emitted */
	}
	pthread_mutex_unlock(&sink_lock);
	return 0;
}

static int late_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	/* events are identified by their unique event time */
	pthread_mutex_lock(&sink_lock);
	for (int i = 0; i < nev; i++)
		if (evs[i].ts == sl_row_i64(row, 1)) {
			late_seen[i] = true;
			nlate_seen++;
			break;
		}
	pthread_mutex_unlock(&sink_lock);
	return 0;
}

static const struct sl_sink_ops win_sink = { .name = "windows", .open = win_open,
					     .write = win_write };
static const struct sl_sink_ops late_sink = { .name = "late", .open = win_open,
					      .write = late_write };

/* ---- input generation ---- */

static uint64_t rng;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Zipf(1.2) over ZIPF_KEYS keys by inverse CDF: key r has weight 1 / (r + 1)^1.2. */
#define ZIPF_KEYS 500
static double zipf_cdf[ZIPF_KEYS];

static void zipf_init(void)
{
	double sum = 0, run = 0;

	for (int r = 0; r < ZIPF_KEYS; r++)
		sum += 1.0 / pow(r + 1, 1.2);
	for (int r = 0; r < ZIPF_KEYS; r++) {
		run += 1.0 / pow(r + 1, 1.2) / sum;
		zipf_cdf[r] = run;
	}
	zipf_cdf[ZIPF_KEYS - 1] = 1.0;
}

static int64_t zipf_key(void)
{
	double u = (double)(next_rand() >> 11) / 9007199254740992.0;
	int lo = 0, hi = ZIPF_KEYS - 1;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_ts(const void *a, const void *b)
{
	int64_t x = evs[*(const int *)a].ts, y = evs[*(const int *)b].ts;

	return x < y ? -1 : x > y;
}

/* Events i*100 ms apart, shifted back by up to 3 s of disorder, 2% by up to 40 s more (late).
 * Event times are made unique so a late record is identified by its time.
 *
 * For session windows the disorder stays below the watermark delay and nothing is very late:
 * a record that would bridge into a session already fired and purged starts a new session in
 * Flink (the purged one is gone), which a batch GROUP BY cannot express. Session lateness is
 * covered by the window unit tests instead. */
static void generate(uint64_t run, int n, bool session, bool zipf)
{
	int64_t disorder = session ? DELAY - 100 : 3000;
	int late_one_in = session ? 0 : 50;

	static int order[MAXN];
	bool again = true;

	rng = run * 0x9e3779b97f4a7c15ULL + 1;
	nev = n;
	for (int i = 0; i < n; i++) {
		struct ev *e = &evs[i];

		e->k = zipf ? zipf_key() : (int64_t)(next_rand() % 13);
		e->ts = 1700000000000LL + (int64_t)i * 100 - (int64_t)(next_rand() % (uint64_t)disorder);
		if (late_one_in && next_rand() % (uint64_t)late_one_in == 0)
			e->ts -= (int64_t)(next_rand() % 40000);
		e->v = (int64_t)(next_rand() % 1000);
		e->v_null = next_rand() % 17 == 0;
		order[i] = i;
	}
	while (again) {
		again = false;
		qsort(order, (size_t)n, sizeof(int), cmp_ts);
		for (int i = 1; i < n; i++) {
			if (evs[order[i]].ts == evs[order[i - 1]].ts) {
				evs[order[i]].ts++;
				again = true;
			}
		}
	}
}

/* ---- expected lateness (single split, on-event watermark) ---- */

static int64_t floor_to(int64_t t, int64_t unit)
{
	return t - (((t % unit) + unit) % unit);
}

static void expected_late(const struct sl_window_spec *w, bool *late)
{
	int64_t maxts = INT64_MIN;

	for (int i = 0; i < nev; i++) {
		int64_t wm = maxts == INT64_MIN ? INT64_MIN : maxts - DELAY;
		int64_t last_end;

		if (w->kind == SL_WIN_TUMBLE)
			last_end = floor_to(evs[i].ts, w->size_ms) + w->size_ms;
		else /* the last hopping window containing ts ends after the slice holding ts */
			last_end = floor_to(evs[i].ts, w->slide_ms) + w->size_ms;
		late[i] = wm != INT64_MIN && last_end - 1 + w->allowed_lateness_ms <= wm;
		if (evs[i].ts > maxts)
			maxts = evs[i].ts;
	}
}

/* ---- the oracle ---- */

static void sql(sqlite3 *db, const char *q)
{
	char *err = NULL;

	if (sqlite3_exec(db, q, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sqlite: %s\n  in: %s\n", err, q);
		exit(T_EXIT_FAIL);
	}
}

static int cmp_row(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void fmt(char *buf, size_t cap, const int64_t *f, uint64_t nulls)
{
	size_t n = 0;

	for (int i = 0; i < NOUT; i++)
		n += (size_t)snprintf(buf + n, cap - n, (nulls >> i) & 1 ? "NULL," : "%" PRId64 ",",
				      f[i]);
}

static void compare(const struct sl_window_spec *w, const bool *excluded)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	char q[2048];
	char **want = calloc(MAXROWS, sizeof(char *)), **got = calloc(MAXROWS, sizeof(char *));
	int nwant = 0, ngot = 0;

	T_ASSERT(sqlite3_open(":memory:", &db) == SQLITE_OK);
	/* wm: the watermark each record met (one split, on-event: max earlier time - delay) */
	sql(db, "CREATE TABLE ev (k INTEGER, ts INTEGER, v INTEGER, wm INTEGER)");
	sqlite3_prepare_v2(db, "INSERT INTO ev VALUES (?, ?, ?, ?)", -1, &st, NULL);
	int64_t maxts = INT64_MIN;

	for (int i = 0; i < nev; i++) {
		int64_t wm = maxts == INT64_MIN ? INT64_MIN : maxts - DELAY;

		if (evs[i].ts > maxts)
			maxts = evs[i].ts;
		if (excluded[i])
			continue;
		sqlite3_bind_int64(st, 1, evs[i].k);
		sqlite3_bind_int64(st, 2, evs[i].ts);
		if (evs[i].v_null)
			sqlite3_bind_null(st, 3);
		else
			sqlite3_bind_int64(st, 3, evs[i].v);
		sqlite3_bind_int64(st, 4, wm);
		T_ASSERT(sqlite3_step(st) == SQLITE_DONE);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	const char *aggs = "COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v)";

	if (w->kind == SL_WIN_TUMBLE) {
		snprintf(q, sizeof q,
			 "SELECT k, ws, ws + %" PRId64 ", %s FROM (SELECT k, v, ts - (((ts %% %" PRId64
			 ") + %" PRId64 ") %% %" PRId64 ") AS ws FROM ev) GROUP BY k, ws",
			 w->size_ms, aggs, w->size_ms, w->size_ms, w->size_ms);
	} else if (w->kind == SL_WIN_HOP) {
		sql(db, "CREATE TABLE o (i INTEGER)");
		/* windows start on the slide grid (Flink's getWindowStartWithOffset), so a
		 * record is in ceil(size / slide) of them or one fewer */
		for (int64_t i = 0; i < (w->size_ms + w->slide_ms - 1) / w->slide_ms; i++) {
			char ins[64];

			snprintf(ins, sizeof ins, "INSERT INTO o VALUES (%" PRId64 ")", i);
			sql(db, ins);
		}
		/* a record joins each of its windows that has not been dropped when it arrives
		 * (Flink drops it from windows past their lateness, keeps it in the others) */
		snprintf(q, sizeof q,
			 "SELECT k, ws, ws + %" PRId64 ", %s FROM (SELECT k, v, ts, wm, ts - (((ts %% %"
			 PRId64 ") + %" PRId64 ") %% %" PRId64 ") - o.i * %" PRId64 " AS ws FROM ev, o) "
			 "WHERE ts >= ws AND ts < ws + %" PRId64 " AND ws + %" PRId64 " - 1 + %" PRId64
			 " > wm GROUP BY k, ws",
			 w->size_ms, aggs, w->slide_ms, w->slide_ms, w->slide_ms, w->slide_ms,
			 w->size_ms, w->size_ms, w->allowed_lateness_ms);
	} else {
		snprintf(q, sizeof q,
			 "WITH a AS (SELECT k, ts, v, CASE WHEN ts - LAG(ts) OVER (PARTITION BY k "
			 "ORDER BY ts) <= %" PRId64 " THEN 0 ELSE 1 END AS new FROM ev), "
			 "b AS (SELECT k, ts, v, SUM(new) OVER (PARTITION BY k ORDER BY ts ROWS "
			 "UNBOUNDED PRECEDING) AS sid FROM a) "
			 "SELECT k, MIN(ts), MAX(ts) + %" PRId64 ", %s FROM b GROUP BY k, sid",
			 w->gap_ms, w->gap_ms, aggs);
	}
	T_ASSERT(sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t f[NOUT];
		uint64_t nulls = 0;
		char buf[256];

		for (int i = 0; i < NOUT; i++) {
			if (sqlite3_column_type(st, i) == SQLITE_NULL)
				nulls |= 1ull << i;
			f[i] = sqlite3_column_int64(st, i);
			if ((nulls >> i) & 1)
				f[i] = 0;
		}
		fmt(buf, sizeof buf, f, nulls);
		want[nwant++] = strdup(buf);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	for (int i = 0; i < nrows; i++) {
		char buf[256];
		int64_t f[NOUT];

		if (!rows[i].live)
			continue;
		memcpy(f, rows[i].f, sizeof rows[i].f);
		fmt(buf, sizeof buf, f, rows[i].nulls);
		got[ngot++] = strdup(buf);
	}
	qsort(want, (size_t)nwant, sizeof(char *), cmp_row);
	qsort(got, (size_t)ngot, sizeof(char *), cmp_row);
	for (int i = 0; i < nwant || i < ngot; i++) {
		if (i >= nwant || i >= ngot || strcmp(want[i], got[i])) {
			fprintf(stderr, "window kind %d size %" PRId64 " slide %" PRId64 " gap %" PRId64
					" lateness %" PRId64 ": mismatch at row %d of %d/%d:\n"
					"  sqlite: %s\n  sluice: %s\n",
				w->kind, w->size_ms, w->slide_ms, w->gap_ms, w->allowed_lateness_ms, i,
				nwant, ngot, i < nwant ? want[i] : "-", i < ngot ? got[i] : "-");
			if (getenv("SL_DEBUG_EVENTS"))
				for (int e = 0; e < nev; e++)
					fprintf(stderr, "  ev %d k %" PRId64 " ts %" PRId64 " v %s%" PRId64
							" late %d\n", e, evs[e].k, evs[e].ts,
						evs[e].v_null ? "NULL " : "", evs[e].v, excluded[e]);
			exit(T_EXIT_FAIL);
		}
	}
	for (int i = 0; i < nwant; i++)
		free(want[i]);
	for (int i = 0; i < ngot; i++)
		free(got[i]);
	free(want);
	free(got);
}

static void run_one(uint64_t run, const struct sl_window_spec *spec, enum sl_agg_phase phase)
{
	struct sl_window_spec ws = *spec;
	const struct sl_window_spec *w = &ws;
	struct sl_schema *sch = sl_schema_create();
	struct sl_wm_strategy wm = { .kind = SL_WM_BOUNDED, .max_delay_ms = DELAY, .ts_field = 1,
				     .interval_ms = 0 };
	struct sl_run_opts opts = { .nshards = 2, .ring_bytes = 65536 };
	struct sl_agg_spec aggs[] = {
		{ .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "cnt" },
		{ .kind = SL_AGG_COUNT, .field = 2, .name = "cntv" },
		{ .kind = SL_AGG_SUM, .field = 2, .name = "sumv" },
		{ .kind = SL_AGG_MIN, .field = 2, .name = "minv" },
		{ .kind = SL_AGG_MAX, .field = 2, .name = "maxv" },
	};
	static bool late[MAXN];
	int key[1] = { 0 };

	ws.agg_phase = phase;
	generate(run, 1500 + (int)(run % 7) * 300, w->kind == SL_WIN_SESSION, run % 2 == 0);
	nrows = 0;
	changelog_errors = 0;
	nlate_seen = 0;
	memset(late_seen, 0, sizeof late_seen);
	sl_schema_add(sch, "k", SL_TYPE_BIGINT);
	sl_schema_add(sch, "ts", SL_TYPE_TIMESTAMP);
	sl_schema_add(sch, "v", SL_TYPE_BIGINT);

	struct sl_job *job = sl_job_create("property");
	struct sl_stream *s = sl_job_source(job, "events", &src_ops, NULL, sch, &wm);
	struct sl_stream *win = sl_stream_window(sl_stream_key_by(s, key, 1), "window", w, aggs,
						 5);

	T_ASSERT(sl_stream_sink(win, "windows", &win_sink, NULL) == 0);
	T_ASSERT(sl_stream_sink(sl_stream_side_output(win, LATE_TAG, sch), "late", &late_sink,
				NULL) == 0);
	if (sl_job_run(job, &opts)) {
		fprintf(stderr, "run %" PRIu64 ": %s\n", run, sl_job_error(job)->msg);
		exit(T_EXIT_FAIL);
	}
	struct sl_job_stats st;

	sl_job_stats(job, &st);
	T_ASSERT_EQ_I64(changelog_errors, 0);
	if (phase == SL_AGG_PHASE_ONE || w->kind == SL_WIN_SESSION)
		T_ASSERT_EQ_I64(st.records_combined, 0);
	else
		T_ASSERT(st.records_combined > 0 && st.partials > 0 &&
			 st.partials < st.records_combined);
	T_ASSERT_EQ_I64(st.late_records, nlate_seen);
	if (w->kind != SL_WIN_SESSION) {
		expected_late(w, late);
		for (int i = 0; i < nev; i++) {
			if (late[i] != late_seen[i]) {
				fprintf(stderr, "run %" PRIu64 ": event %d (k %" PRId64 " ts %" PRId64
						") late: expected %d, engine %d\n",
					run, i, evs[i].k, evs[i].ts, late[i], late_seen[i]);
				exit(T_EXIT_FAIL);
			}
		}
	}
	compare(w, late_seen);
	sl_job_destroy(job);
	sl_schema_destroy(sch);
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 20;
	const struct sl_window_spec specs[] = {
		{ .kind = SL_WIN_TUMBLE, .size_ms = 10000, .late_tag = LATE_TAG },
		{ .kind = SL_WIN_TUMBLE, .size_ms = 7000, .allowed_lateness_ms = 5000,
		  .late_tag = LATE_TAG },
		{ .kind = SL_WIN_HOP, .size_ms = 20000, .slide_ms = 5000, .late_tag = LATE_TAG },
		{ .kind = SL_WIN_HOP, .size_ms = 9000, .slide_ms = 3000,
		  .allowed_lateness_ms = 4000, .late_tag = LATE_TAG },
		/* size not a multiple of the slide: windows start on the slide grid */
		{ .kind = SL_WIN_HOP, .size_ms = 5000, .slide_ms = 4000, .late_tag = LATE_TAG },
		{ .kind = SL_WIN_HOP, .size_ms = 7000, .slide_ms = 3000,
		  .allowed_lateness_ms = 2000, .late_tag = LATE_TAG },
		{ .kind = SL_WIN_SESSION, .gap_ms = 1500, .late_tag = LATE_TAG },
		{ .kind = SL_WIN_SESSION, .gap_ms = 800, .allowed_lateness_ms = 3000,
		  .late_tag = LATE_TAG },
	};

	zipf_init();
	for (int s = 1; s <= runs; s++)
		for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
			run_one((uint64_t)s, &specs[i], SL_AGG_PHASE_ONE);
			run_one((uint64_t)s, &specs[i], SL_AGG_PHASE_TWO);
		}
	printf("window property: %d runs x %zu window specs x one and two phases agree with "
	       "SQLite\n",
	       runs, sizeof specs / sizeof specs[0]);
	return T_EXIT_PASS;
}
