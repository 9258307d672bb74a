#!/usr/bin/env python3
"""Property test: regular joins against SQLite over random inputs.

Per run: two (sometimes three) tables of random rows with keys from a small domain and a
few NULL keys, written as JSON lines (append-only) or as Debezium changelogs with inserts,
updates and deletes; a random join (INNER, LEFT, RIGHT or FULL OUTER, sometimes with an extra
non-equi condition in ON, sometimes a second join onto a third table, sometimes an interval
join over rowtimes whose disorder stays within the watermark's delay), run through
`sluice run` on 1, 2 or 3 shards. The changelog sluice prints is applied (+I/+U add a row,
-U/-D take one back; taking back a row that is not there fails) and the result must equal,
as a multiset, what SQLite's same query returns over the tables' final contents.

Usage: join_sqlite.py SLUICE [RUNS]  (a failing run prints its job and reruns alone with
       join_sqlite.py SLUICE FIRST-LAST)
"""
import collections
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile

LINE = re.compile(r"^(?:\d+> )?([+-])([IUD])\[(.*)\]$")
KINDS = ["INNER", "LEFT", "RIGHT", "FULL"]


def ts_text(ms):
    return "1970-01-01 00:%02d:%02d.%03d" % (ms // 60000, ms // 1000 % 60, ms % 1000)


def gen_table(rng, cols, n, cdc, timed=False):
    """Returns (the lines of its input file, its final rows as dicts). Timed tables get a
    time `ts` (ms) rising 500 ms a row on average with under 2 s of disorder, so with a
    watermark 2 s behind no row is ever late."""
    rows, lines, next_id = {}, [], 0

    def new_row():
        nonlocal next_id
        next_id += 1
        r = {"id": next_id}
        for c in cols:
            r[c] = rng.randint(0, 4)
        # timed rows meet only within a few seconds: fewer keys, so that they do
        r["k"] = None if rng.random() < 0.1 else rng.randint(0, 1 if timed else 3)
        if timed:
            r["ts"] = max(0, next_id * 500 - rng.randint(0, 1999))
        return r

    for _ in range(n):
        op = rng.random()
        if not cdc or not rows or op < 0.6:
            r = new_row()
            rows[r["id"]] = r
            line = dict(r, ts=ts_text(r["ts"])) if timed else r
            lines.append({"before": None, "after": r, "op": "c"} if cdc else line)
        elif op < 0.85:
            old = rows[rng.choice(sorted(rows))]
            new = dict(old)
            field = rng.choice(["k"] + cols)
            new[field] = None if field == "k" and rng.random() < 0.1 else rng.randint(0, 4)
            rows[old["id"]] = new
            lines.append({"before": old, "after": new, "op": "u"})
        else:
            old = rows.pop(rng.choice(sorted(rows)))
            lines.append({"before": old, "after": None, "op": "d"})
    return [json.dumps(l) for l in lines], list(rows.values())


def ddl(name, cols, path, cdc, timed=False):
    fields = ", ".join(["id INT", "k INT"] + ["%s INT" % c for c in cols] +
                       (["ts TIMESTAMP(3)", "WATERMARK FOR ts AS ts - INTERVAL '2' SECOND"]
                        if timed else []))
    # on-event watermarks: the interval join's state expires while rows still arrive
    return ("CREATE TABLE %s (%s) WITH ('connector' = 'filesystem', 'path' = '%s', "
            "'format' = '%s'%s);\n" % (name, fields, path, "debezium-json" if cdc else "json",
                                       ", 'scan.watermark.emit.strategy' = 'on-event'"
                                       if timed else ""))


# interval bounds (sluice's text, SQLite's over ms): l.ts - r.ts within them
INTERVALS = [
    ("r.ts BETWEEN l.ts - INTERVAL '2' SECOND AND l.ts + INTERVAL '3' SECOND",
     "r.ts BETWEEN l.ts - 2000 AND l.ts + 3000"),
    ("l.ts >= r.ts AND l.ts < r.ts + INTERVAL '4' SECOND", "l.ts >= r.ts AND l.ts < r.ts + 4000"),
    ("r.ts > l.ts - INTERVAL '1' SECOND AND r.ts <= l.ts + INTERVAL '1' SECOND",
     "r.ts > l.ts - 1000 AND r.ts <= l.ts + 1000"),
]


def make_case(rng):
    """Returns (cdc, timed, tables, data, sluice's query, SQLite's query)."""
    cdc = rng.random() < 0.5
    timed = not cdc and rng.random() < 0.4  # an interval join: insert-only inputs
    tables = {"l": ["v"], "r": ["w"]}
    three = not timed and rng.random() < 0.3
    if three:
        tables["m"] = ["x"]
    kind = rng.choice(KINDS)
    on = "l.k = r.k"
    on_sqlite = on
    if timed:
        bounds = rng.choice(INTERVALS)
        on += " AND " + bounds[0]
        on_sqlite += " AND " + bounds[1]
    pred = rng.choice([None, None, "l.v < r.w", "l.v + r.w > 4", "r.w <> 2"])
    if pred:
        on += " AND " + pred
        on_sqlite += " AND " + pred
    sel = "l.id, l.k, l.v, r.id, r.k, r.w"
    frm = "l %s JOIN r ON %s" % (kind, on)
    if rng.random() < 0.5:
        # the same join written the other way round: r is then the planner's left side
        # (and the source read first), so both sides' state expiry gets exercised
        mirrored = {"LEFT": "RIGHT", "RIGHT": "LEFT"}.get(kind, kind)
        frm = "r %s JOIN l ON %s" % (mirrored, on)
    frm_sqlite = "l %s JOIN r ON %s" % (kind, on_sqlite)
    if three:
        kind2 = rng.choice(["INNER", "LEFT"])
        second = " %s JOIN m ON m.k = %s" % (kind2, rng.choice(["l.k", "r.k"]))
        frm += second
        frm_sqlite += second
        sel += ", m.id, m.x"
    data = {t: gen_table(rng, cols, rng.randint(3, 25), cdc, timed)
            for t, cols in tables.items()}
    return (cdc, timed, tables, data, "SELECT %s FROM %s" % (sel, frm),
            "SELECT %s FROM %s" % (sel, frm_sqlite))


def value(v):
    return "NULL" if v is None else str(v)


def run_case(sluice, run, work):
    rng = random.Random(run)
    cdc, timed, tables, data, query, query_sqlite = make_case(rng)
    shards = rng.choice([1, 2, 3])
    job = ""
    for t, cols in tables.items():
        path = os.path.join(work, "%s-%d.jsonl" % (t, run))
        with open(path, "w") as f:
            f.write("".join(l + "\n" for l in data[t][0]))
        job += ddl(t, cols, path, cdc, timed)
    job += query + ";\n"
    job_path = os.path.join(work, "job-%d.sql" % run)
    with open(job_path, "w") as f:
        f.write(job)
    p = subprocess.run([sluice, "run", job_path, "--shards", str(shards), "--quiet"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, p.stderr.decode().strip()[-300:]), job
    got = collections.Counter()
    for line in p.stdout.decode().splitlines():
        m = LINE.match(line)
        if not m:
            continue
        row = m.group(3)
        if m.group(2) in "IU" and m.group(1) == "+":
            got[row] += 1
        else:
            if got[row] == 0:
                return "retracts a row that is not there: %s" % line, job
            got[row] -= 1
    got = +got
    db = sqlite3.connect(":memory:")
    for t, cols in tables.items():
        names = ["id", "k"] + cols + (["ts"] if timed else [])
        db.execute("CREATE TABLE %s (%s)" % (t, ", ".join(n + " INTEGER" for n in names)))
        db.executemany("INSERT INTO %s VALUES (%s)" % (t, ", ".join("?" * len(names))),
                       [[r[n] for n in names] for r in data[t][1]])
    want = collections.Counter(", ".join(value(v) for v in row)
                               for row in db.execute(query_sqlite))
    if got != want:
        return ("on %d shards: missing %s, unexpected %s" % (
            shards, sorted((want - got).elements())[:6],
            sorted((got - want).elements())[:6])), job
    return None, job


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    sluice = os.path.abspath(sys.argv[1])
    arg = sys.argv[2] if len(sys.argv) > 2 else "100"
    lo, hi = (int(x) for x in arg.split("-")) if "-" in arg else (1, int(arg))
    failed = 0
    with tempfile.TemporaryDirectory(prefix="join-sqlite-") as work:
        for run in range(lo, hi + 1):
            err, job = run_case(sluice, run, work)
            if err:
                failed += 1
                print("FAIL run %d: %s\n%s" % (run, err, job))
    print("join_sqlite: %d/%d runs agree with SQLite" % (hi - lo + 1 - failed, hi - lo + 1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
