#!/usr/bin/env python3
"""Differential fuzz test: random queries over random out-of-order inputs with late rows, on
sluice (1 shard) and on Apache Flink (tools/flink-sql --serve: one JVM answering job after
job), compared as differential.py compares (tests/flink/oracle.py). Seeded and bounded: the
same seed gives the same queries and inputs; at most --count queries and --time seconds.

The queries cover what sluice runs: projections and filters (arithmetic, CASE, COALESCE,
strings, IN, BETWEEN, IS NULL), window TVFs (TUMBLE, HOP, CUMULATE; SESSION per PARTITION BY
key or over all rows) aggregated or not, legacy GROUP BY TUMBLE/HOP/SESSION with and without
table.exec.emit.allow-lateness, the updating GROUP BY with HAVING and FILTER, DISTINCT,
deduplication keeping the first or the last row, and event-time temporal joins (inner and
LEFT). The watermark is emitted on every row ('scan.watermark.emit.strategy' = 'on-event' on
both sides) and about one row in seven arrives behind it, so late rows are dropped (or, within
the allowed lateness, update what was emitted).

A disagreement is shrunk (rows removed while it stays, then the query simplified while it
stays) and printed as the minimal query, its input files and both outputs.

Not generated, on purpose:
- SESSION TVFs grouped by a key without PARTITION BY that key: Flink makes one session
  stream over all rows and then a non-window GROUP BY, sluice refuses (it keys sessions by
  GROUP BY); the refusal is a golden case (err_session_tvf_unpartitioned).
- Processing time (PROCTIME()): results depend on the wall clock on both sides.
- HOP windows whose size is not a multiple of the slide, and allow-lateness on window TVFs:
  Flink refuses or ignores them (checked by the golden cases, not here).

Usage: fuzz.py SLUICE FLINK_SQL [--seed N] [--count N] [--time S] [--keep]
Exit 0 when every query agrees, 1 on a disagreement, 77 when Flink cannot run here.
"""
import argparse
import copy
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

BASE_S = 1704067200  # 2024-01-01 00:00:00 UTC
KEYS = ["a", "b", "c", "d"]


def ts_text(ms):
    s, f = divmod(ms, 1000)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(BASE_S + s)) + ".%03d" % f


# --- input ------------------------------------------------------------------------------

def gen_rows(rng, n, delay_ms, late=True):
    """n rows of t in arrival order: an event clock that moves on by 0 to 1.5 s, each row
    behind it by no more than the watermark delay (on time) or, one in seven, by 2 to 8 s
    (late once the watermark has passed its window). Times are on 250 ms steps, so rows fall
    on window bounds."""
    rows, clock = [], 0
    for _ in range(n):
        clock += rng.choice([0, 250, 500, 750, 1000, 1500])
        if late and rng.random() < 0.15:
            ts = clock - rng.choice([2000, 3000, 5000, 8000])
        else:
            ts = clock - min(delay_ms, rng.choice([0, 0, 250, 500, 1000]))
        ts = max(ts, 0)
        rows.append({"k": rng.choice(KEYS),
                     "v": None if rng.random() < 0.1 else rng.randint(-3, 9),
                     "p": "%d.%02d" % (rng.randint(0, 20), rng.choice([0, 5, 25, 50, 99])),
                     "ts": ts})
    return rows


def gen_rates(rng):
    """Versions of table r (k, rate, ts): a few per key, in time order, some keys without."""
    rows, t = [], 0
    for _ in range(rng.randint(1, 7)):
        t += rng.choice([0, 500, 1000, 3000])
        rows.append({"k": rng.choice(KEYS[:3]), "rate": rng.randint(1, 5), "ts": t})
    return rows


def write_rows(path, rows):
    with open(path, "w") as f:
        for r in rows:
            cells = []
            for k, v in r.items():
                if k == "ts":
                    v = ts_text(v)
                if v is None:
                    cells.append('"%s": null' % k)
                elif isinstance(v, str) and k != "p":
                    cells.append('"%s": "%s"' % (k, v))
                else:
                    cells.append('"%s": %s' % (k, v))
            f.write("{%s}\n" % ", ".join(cells))


# --- queries ----------------------------------------------------------------------------

def gen_pred(rng, t="", depth=0):
    """A WHERE condition on t's columns (named with the prefix T)."""
    atoms = ["{t}v > %d" % rng.randint(-1, 6), "{t}v IS NULL", "{t}v IS NOT NULL",
             "{t}k IN ('a', 'b')", "{t}k <> 'c'",
             "{t}v BETWEEN %d AND %d" % (rng.randint(-2, 2), rng.randint(3, 7)),
             "MOD({t}v, 2) = 0", "{t}p >= 10", "{t}v * 2 < %d" % rng.randint(0, 12)]
    if depth < 1 and rng.random() < 0.3:
        op = rng.choice(["AND", "OR"])
        return "(%s %s %s)" % (gen_pred(rng, t, depth + 1), op, gen_pred(rng, t, depth + 1))
    if depth < 1 and rng.random() < 0.1:
        return "NOT (%s)" % gen_pred(rng, t, depth + 1)
    return rng.choice(atoms).format(t=t)


EXPRS = ["k", "v", "p", "ts", "v + 1", "v * 2", "v / 2", "p * 2", "p + v", "UPPER(k)",
         "k || '!'", "COALESCE(v, -1)", "CASE WHEN v > 3 THEN 'hi' ELSE 'lo' END",
         "CAST(v AS BIGINT) * 10", "CHAR_LENGTH(k)", "ABS(v - 5)", "v IS NULL",
         "CAST(v AS STRING)", "CAST(p AS INT)", "CAST(v AS DOUBLE) / 4"]
WIN_AGGS = ["COUNT(*)", "COUNT(v)", "SUM(v)", "MIN(v)", "MAX(v)", "AVG(v)", "SUM(p)",
            "MAX(p)", "COUNT(DISTINCT v)", "SUM(v) FILTER (WHERE v > 2)",
            "COUNT(*) FILTER (WHERE k = 'a')", "MIN(k)", "AVG(p)"]
# FIRST_VALUE and LAST_VALUE only in the updating GROUP BY: Flink 2.3's window aggregates
# need a merge() these two lack, so Flink refuses them in every window (sluice runs them)
AGGS = WIN_AGGS + ["FIRST_VALUE(v)", "LAST_VALUE(v)"]


def pick(rng, pool, lo, hi):
    return rng.sample(pool, rng.randint(lo, min(hi, len(pool))))


def gen_query(rng, kind):
    q = {"kind": kind,
         "where": gen_pred(rng, "t." if kind == "temporal" else "") if rng.random() < 0.4
         else None,
         "having": None, "sets": []}
    if kind == "select":
        q["items"] = pick(rng, EXPRS, 1, 4)
    elif kind == "distinct":
        q["items"] = pick(rng, ["k", "v", "MOD(v, 3)", "UPPER(k)", "v > 2"], 1, 2)
    elif kind in ("tvf", "tvf_plain"):
        w = rng.choice(["TUMBLE", "HOP", "CUMULATE"])
        if w == "TUMBLE":
            args = [rng.choice([1000, 2000, 3000, 5000])]
        elif w == "HOP":
            slide = rng.choice([1000, 2000])
            args = [slide, slide * rng.choice([2, 3])]
        else:
            step = rng.choice([1000, 2000])
            args = [step, step * rng.choice([2, 3])]
        q["win"], q["args"] = w, args
        q["keys"] = ["k"] if rng.random() < 0.7 else []
        if kind == "tvf":
            q["aggs"] = pick(rng, WIN_AGGS, 1, 3)
            if rng.random() < 0.2:
                q["having"] = rng.choice(["COUNT(*) > 1", "SUM(v) >= 3", "MAX(v) < 8"])
        else:
            q["items"] = pick(rng, ["k", "v", "p", "ts"], 1, 3)
    elif kind == "session_tvf":
        q["gap"] = rng.choice([1000, 2000, 3000])
        q["keys"] = ["k"] if rng.random() < 0.7 else []
        q["aggs"] = pick(rng, WIN_AGGS, 1, 3)
    elif kind == "legacy":
        w = rng.choice(["TUMBLE", "HOP", "SESSION"])
        if w == "TUMBLE":
            args = [rng.choice([1000, 2000, 5000])]
        elif w == "HOP":
            slide = rng.choice([1000, 2000])
            args = [slide, slide * rng.choice([2, 3])]
        else:
            args = [rng.choice([1000, 2000, 3000])]
        q["win"], q["args"] = w, args
        q["keys"] = ["k"] if rng.random() < 0.7 else []
        q["aggs"] = pick(rng, WIN_AGGS, 1, 3)
        if w != "SESSION" and rng.random() < 0.4:
            q["sets"] = [("table.exec.emit.allow-lateness", "%d ms" % rng.choice([1000, 3000])),
                         ("table.exec.emit.late-fire.enabled", "true"),
                         ("table.exec.emit.late-fire.delay", "0 ms")]
    elif kind == "group":
        q["keys"] = rng.choice([["k"], ["k"], ["MOD(v, 2)"], ["k", "MOD(v, 2)"]])
        q["aggs"] = pick(rng, AGGS, 1, 3)
        if rng.random() < 0.3:
            q["having"] = rng.choice(["COUNT(*) > 1", "SUM(v) >= 3", "MAX(v) < 8"])
    elif kind == "dedup":
        q["desc"] = rng.random() < 0.5
        q["items"] = pick(rng, ["k", "v", "p", "ts"], 1, 3)
        if "k" not in q["items"]:
            q["items"].insert(0, "k")
    elif kind == "temporal":
        q["left"] = rng.random() < 0.5
        q["items"] = pick(rng, ["t.k", "t.v", "r.rate", "t.v * r.rate", "t.ts", "r.ts"], 1, 3)
    return q


def interval(ms):
    return "INTERVAL '%s' SECOND" % (("%d" % (ms // 1000)) if ms % 1000 == 0
                                     else "%.3f" % (ms / 1000.0))


def render(q, t_path, r_path, delay):
    """The job file of query Q over t (and r) as both engines run it."""
    wm = "WATERMARK FOR ts AS ts - %s" % interval(delay) if delay else "WATERMARK FOR ts AS ts"
    opts = ("'connector' = 'filesystem', 'path' = '%s', 'format' = 'json', "
            "'scan.watermark.emit.strategy' = 'on-event'")
    out = ["SET '%s' = '%s';" % kv for kv in q["sets"]]
    out.append("CREATE TABLE t (k STRING, v INT, p DECIMAL(6, 2), ts TIMESTAMP(3), %s)\n"
               "  WITH (%s);" % (wm, opts % t_path))
    if q["kind"] == "temporal":
        out.append("CREATE TABLE r (k STRING, rate INT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
                   "ts, PRIMARY KEY (k) NOT ENFORCED)\n  WITH (%s);" % (opts % r_path))
    where = " WHERE %s" % q["where"] if q["where"] else ""
    having = " HAVING %s" % q["having"] if q["having"] else ""
    kind = q["kind"]
    if kind == "select":
        sql = "SELECT %s FROM t%s" % (", ".join(q["items"]), where)
    elif kind == "distinct":
        sql = "SELECT DISTINCT %s FROM t%s" % (", ".join(q["items"]), where)
    elif kind in ("tvf", "tvf_plain"):
        tvf = "TABLE(%s(TABLE t, DESCRIPTOR(ts), %s))" % (
            q["win"], ", ".join(interval(a) for a in q["args"]))
        if kind == "tvf":
            cols = q["keys"] + ["window_start", "window_end"]
            sql = "SELECT %s, %s FROM %s%s GROUP BY %s%s" % (
                ", ".join(cols), ", ".join(q["aggs"]), tvf, where, ", ".join(cols), having)
        else:
            sql = "SELECT %s, window_start, window_end FROM %s%s" % (
                ", ".join(q["items"]), tvf, where)
    elif kind == "session_tvf":
        part = " PARTITION BY k" if q["keys"] else ""
        cols = q["keys"] + ["window_start", "window_end"]
        src = "TABLE(SESSION(TABLE t%s, DESCRIPTOR(ts), %s))" % (part, interval(q["gap"]))
        if q["where"]:  # filter first: sessions are made of the rows that pass
            src = "TABLE(SESSION(TABLE tw%s, DESCRIPTOR(ts), %s))" % (part, interval(q["gap"]))
            out.append("CREATE VIEW tw AS SELECT * FROM t WHERE %s;" % q["where"])
        sql = "SELECT %s, %s FROM %s GROUP BY %s" % (
            ", ".join(cols), ", ".join(q["aggs"]), src, ", ".join(cols))
    elif kind == "legacy":
        args = ", ".join(interval(a) for a in q["args"])
        w = q["win"]
        sql = "SELECT %s%s_START(ts, %s) AS ws, %s_END(ts, %s) AS we, %s FROM t%s " \
              "GROUP BY %s%s(ts, %s)%s" % (
                  "".join(k + ", " for k in q["keys"]), w, args, w, args, ", ".join(q["aggs"]),
                  where, "".join(k + ", " for k in q["keys"]), w, args, having)
    elif kind == "group":
        sql = "SELECT %s, %s FROM t%s GROUP BY %s%s" % (
            ", ".join(q["keys"]), ", ".join(q["aggs"]), where, ", ".join(q["keys"]), having)
    elif kind == "dedup":
        sql = ("SELECT %s FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts %s) "
               "AS rn FROM t%s) WHERE rn = 1" % (", ".join(q["items"]),
                                                 "DESC" if q["desc"] else "ASC", where))
    elif kind == "temporal":
        sql = "SELECT %s FROM t %sJOIN r FOR SYSTEM_TIME AS OF t.ts ON t.k = r.k%s" % (
            ", ".join(q["items"]), "LEFT " if q["left"] else "", where)
    out.append(sql + ";")
    return "\n".join(out) + "\n"


def simpler(q):
    """Queries like Q with one part fewer (shrinking candidates), simplest first."""
    out = []

    def with_(**kv):
        c = copy.deepcopy(q)
        c.update(kv)
        out.append(c)
    if q["sets"]:
        with_(sets=[])
    if q["where"]:
        with_(where=None)
    if q["having"]:
        with_(having=None)
    for field in ("aggs", "items"):
        if len(q.get(field) or []) > 1:
            for i in range(len(q[field])):
                with_(**{field: q[field][:i] + q[field][i + 1:]})
    if q.get("keys") and q["kind"] in ("tvf", "tvf_plain", "session_tvf", "legacy"):
        with_(keys=[])
    if q.get("keys") and len(q["keys"]) > 1:
        for i in range(len(q["keys"])):
            with_(keys=q["keys"][:i] + q["keys"][i + 1:])
    return out


# --- running ----------------------------------------------------------------------------

class Flink:
    """tools/flink-sql --serve: one JVM, job after job."""

    def __init__(self, flink_sql, log):
        self.log = open(log, "w")
        self.p = subprocess.Popen([flink_sql, "--format", "sql", "--parallelism", "1",
                                   "--timeout", "120", "--serve"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.log, text=True)

    def run(self, job):
        out = job + ".flink"
        self.p.stdin.write("%s\t%s\n" % (job, out))
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if line.strip() != "done " + out:
            raise RuntimeError("the Flink runner died (see its log): %r" % line)
        return oracle.FlinkBatch.result(out)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)
        self.log.close()


class Trial:
    """One query and its input; check() runs both engines and says how they differ."""

    def __init__(self, work, n, q, rows, rates, delay):
        self.work, self.n, self.q, self.rows, self.rates, self.delay = \
            work, n, q, rows, rates, delay
        self.checks = 0

    def files(self, q, rows, rates):
        d = os.path.join(self.work, "q%03d" % self.n)
        os.makedirs(d, exist_ok=True)
        self.checks += 1
        t_path, r_path = os.path.join(d, "t.jsonl"), os.path.join(d, "r.jsonl")
        write_rows(t_path, rows)
        write_rows(r_path, rates)
        job = os.path.join(d, "job-%d.sql" % self.checks)
        text = render(q, t_path, r_path, self.delay)
        open(job, "w").write(text)
        open(job + ".flink.sql", "w").write(oracle.flink_job(text))
        return job

    def check(self, sluice, flink, q=None, rows=None, rates=None):
        """(kind of outcome, description, sluice output, Flink output): kind is 'agree',
        'invalid' (both refuse: a generator fault), or a disagreement's kind."""
        q = q or self.q
        rows = self.rows if rows is None else rows
        rates = self.rates if rates is None else rates
        job = self.files(q, rows, rates)
        s_rc, s_out, s_err = oracle.run_sluice(sluice, job, oracle.ROOT, timeout=60)
        f_err, f_out = flink.run(job + ".flink.sql")
        if s_rc != 0 and f_err is not None:
            return "invalid", "both refuse: sluice: %s; Flink: %s" % (
                s_err.strip()[-300:], f_err[:300]), s_out, f_out
        if s_rc != 0:
            return "sluice-fails", "sluice fails (exit %d): %s" % (
                s_rc, s_err.strip()[-400:]), s_out, f_out
        if f_err is not None:
            return "flink-fails", "Flink fails: %s" % f_err[:500], s_out, f_out
        why = oracle.compare(oracle.changelog(s_out), oracle.changelog(f_out))
        return ("agree", None, s_out, f_out) if why is None else ("differ", why, s_out, f_out)


def late_rows(rows, delay):
    """The rows behind t's watermark (max ts so far - delay) when they arrive."""
    late, top = [], None
    for r in rows:
        if top is not None and r["ts"] < top - delay:
            late.append(r)
        top = r["ts"] if top is None else max(top, r["ts"])
    return late


def known(trial, sluice, flink, outcome):
    """Why the trial's disagreement is a known one, or None. Each class is checked, not
    assumed: without the rows that cause it the two engines must agree."""
    q = trial.q
    if q["kind"] == "dedup" and not q["desc"] and outcome == "differ":
        # Flink 2.3's rowtime keep-first deduplication (RowTimeDeduplicateKeepFirstRow-
        # Function) drops rows behind the watermark and emits the first row per key only
        # when the watermark passes it (insert-only); sluice's, as Flink 1.x's, takes every
        # row and replaces an emitted row by an earlier one (-U/+U). Listed in the report of
        # issue 12; not fixed yet.
        late = late_rows(trial.rows, trial.delay)
        on_time = [r for r in trial.rows if r not in late]
        if late and trial.check(sluice, flink, q, on_time)[0] == "agree":
            return ("rowtime keep-first dedup with %d late rows: Flink 2.3 drops them, sluice "
                    "takes them (agree without them)" % len(late))
    return None


def ddmin(items, still, budget):
    """A small sub-list of ITEMS for which still(sub) holds (delta debugging), within
    BUDGET calls of still."""
    n = 2
    while len(items) >= 2 and budget[0] > 0:
        chunk = max(1, len(items) // n)
        reduced = False
        for i in range(0, len(items), chunk):
            cand = items[:i] + items[i + chunk:]
            if budget[0] <= 0:
                break
            budget[0] -= 1
            if cand and still(cand):
                items, n, reduced = cand, max(n - 1, 2), True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(items), n * 2)
    return items


def shrink(trial, sluice, flink, kind, deadline):
    """The trial's query and rows made as small as they go while the outcome stays KIND."""
    budget = [60]

    def same(q, rows, rates):
        if time.time() > deadline:
            return False
        return trial.check(sluice, flink, q, rows, rates)[0] == kind
    q, rows, rates = trial.q, trial.rows, trial.rates
    rows = ddmin(rows, lambda r: same(q, r, rates), budget)
    if q["kind"] == "temporal":
        rates = ddmin(rates, lambda r: same(q, rows, r), budget)
    progress = True
    while progress and budget[0] > 0:
        progress = False
        for cand in simpler(q):
            budget[0] -= 1
            if same(cand, rows, rates):
                q, progress = cand, True
                break
    rows = ddmin(rows, lambda r: same(q, r, rates), budget)
    return q, rows, rates


KINDS = ["select", "tvf", "legacy", "group", "dedup", "temporal", "session_tvf", "distinct",
         "tvf_plain"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sluice")
    ap.add_argument("flink_sql")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--count", type=int, default=90)
    ap.add_argument("--time", type=float, default=420, help="seconds for all queries")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args()
    sluice = os.path.abspath(a.sluice)
    oracle.flink_prepare(os.path.abspath(a.flink_sql))
    t0 = time.time()
    deadline = t0 + a.time
    work = tempfile.mkdtemp(prefix="flink-fuzz-")
    flink = Flink(os.path.abspath(a.flink_sql), os.path.join(work, "flink.log"))
    rng = random.Random(a.seed)
    counts = {k: 0 for k in KINDS}
    agree, invalid, failures, known_count = 0, [], [], 0
    done = 0
    try:
        for n in range(a.count):
            if time.time() > deadline:
                break
            kind = KINDS[n % len(KINDS)]
            delay = rng.choice([0, 1000, 2000])
            # no late rows into a temporal join: whether a row is behind the watermark of
            # both inputs depends on how the two sources interleave, on either engine
            rows = gen_rows(rng, rng.randint(3, 30), delay, late=kind != "temporal")
            trial = Trial(work, n, gen_query(rng, kind), rows, gen_rates(rng), delay)
            outcome, why, s_out, f_out = trial.check(sluice, flink)
            done += 1
            counts[kind] += 1
            if outcome == "agree":
                agree += 1
                continue
            if outcome == "invalid":
                invalid.append("query %d: %s" % (n, why))
                continue
            again = trial.check(sluice, flink)
            if again[0] != outcome or again[2] != s_out or again[3] != f_out:
                failures.append(n)
                print("FAIL query %d (%s, seed %d): not deterministic: %s, then %s" % (
                    n, kind, a.seed, why, again[1] or "agree"))
                print("  job: %s" % os.path.join(work, "q%03d" % n, "job-1.sql"))
                continue
            known_why = known(trial, sluice, flink, outcome)
            if known_why:
                known_count += 1
                print("KNOWN query %d (%s): %s" % (n, kind, known_why))
                continue
            q, rows, rates = shrink(trial, sluice, flink, outcome,
                                    max(deadline, time.time() + 60))
            outcome2, why2, s_out, f_out = trial.check(sluice, flink, q, rows, rates)
            job = trial.files(q, rows, rates)
            d = os.path.dirname(job)
            failures.append(n)
            print("FAIL query %d (%s, seed %d): %s" % (n, kind, a.seed, why2 or why))
            print("  minimal job (%s):" % job)
            print("    " + open(job).read().strip().replace("\n", "\n    "))
            print("  t.jsonl:\n    " + (open(os.path.join(d, "t.jsonl")).read().strip()
                                        .replace("\n", "\n    ") or "(empty)"))
            if q["kind"] == "temporal":
                print("  r.jsonl:\n    " + (open(os.path.join(d, "r.jsonl")).read().strip()
                                            .replace("\n", "\n    ") or "(empty)"))
            print("  sluice printed:\n    " + ("\n    ".join(s_out) or "(nothing)"))
            print("  Flink printed:\n    " + ("\n    ".join(f_out) or "(nothing)"))
    finally:
        flink.close()
    for i in invalid:
        print("INVALID (a generator fault: both engines refuse) %s" % i)
    print("fuzz: seed %d: %d queries (%s): %d agree, %d disagree, %d known disagreements, "
          "%d invalid (%.0f s)" % (a.seed, done, ", ".join("%s %d" % kv for kv in counts.items()),
                                   agree, len(failures), known_count, len(invalid),
                                   time.time() - t0))
    if failures or invalid:
        print("work files kept in %s" % work)
        return 1
    if a.keep:
        print("work files kept in %s" % work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
