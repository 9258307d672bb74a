#!/usr/bin/env python3
"""Property test: regular joins against SQLite over random inputs.

Per seed: two (sometimes three) tables of random rows with keys from a small domain and a
few NULL keys, written as JSON lines (append-only) or as Debezium changelogs with inserts,
updates and deletes; a random join (INNER, LEFT, RIGHT or FULL OUTER, sometimes with an extra
non-equi condition in ON, sometimes a second join onto a third table), run through
`sluice run` on 1, 2 or 3 shards. The changelog sluice prints is applied (+I/+U add a row,
-U/-D take one back; taking back a row that is not there fails) and the result must equal,
as a multiset, what SQLite's same query returns over the tables' final contents.

Usage: join_sqlite.py SLUICE [SEEDS]  (a failing seed prints its job and reruns alone with
       join_sqlite.py SLUICE SEED-SEED)
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


def gen_table(rng, cols, n, cdc):
    """Returns (the lines of its input file, its final rows as dicts)."""
    rows, lines, next_id = {}, [], 0

    def new_row():
        nonlocal next_id
        next_id += 1
        r = {"id": next_id}
        for c in cols:
            r[c] = rng.randint(0, 4)
        r["k"] = None if rng.random() < 0.1 else rng.randint(0, 3)
        return r

    for _ in range(n):
        op = rng.random()
        if not cdc or not rows or op < 0.6:
            r = new_row()
            rows[r["id"]] = r
            lines.append({"before": None, "after": r, "op": "c"} if cdc else r)
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


def ddl(name, cols, path, cdc):
    fields = ", ".join(["id INT", "k INT"] + ["%s INT" % c for c in cols])
    return ("CREATE TABLE %s (%s) WITH ('connector' = 'filesystem', 'path' = '%s', "
            "'format' = '%s');\n" % (name, fields, path, "debezium-json" if cdc else "json"))


def make_case(rng):
    cdc = rng.random() < 0.5
    tables = {"l": ["v"], "r": ["w"]}
    three = rng.random() < 0.3
    if three:
        tables["m"] = ["x"]
    kind = rng.choice(KINDS)
    on = "l.k = r.k"
    pred = rng.choice([None, None, "l.v < r.w", "l.v + r.w > 4", "r.w <> 2"])
    if pred:
        on += " AND " + pred
    sel = "l.id, l.k, l.v, r.id, r.k, r.w"
    frm = "l %s JOIN r ON %s" % (kind, on)
    if three:
        kind2 = rng.choice(["INNER", "LEFT"])
        frm = "%s %s JOIN m ON m.k = %s" % (frm, kind2, rng.choice(["l.k", "r.k"]))
        sel += ", m.id, m.x"
    data = {t: gen_table(rng, cols, rng.randint(3, 25), cdc) for t, cols in tables.items()}
    return cdc, tables, data, "SELECT %s FROM %s" % (sel, frm)


def value(v):
    return "NULL" if v is None else str(v)


def run_seed(sluice, seed, work):
    rng = random.Random(seed)
    cdc, tables, data, query = make_case(rng)
    shards = rng.choice([1, 2, 3])
    job = ""
    for t, cols in tables.items():
        path = os.path.join(work, "%s-%d.jsonl" % (t, seed))
        with open(path, "w") as f:
            f.write("".join(l + "\n" for l in data[t][0]))
        job += ddl(t, cols, path, cdc)
    job += query + ";\n"
    job_path = os.path.join(work, "job-%d.sql" % seed)
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
        names = ["id", "k"] + cols
        db.execute("CREATE TABLE %s (%s)" % (t, ", ".join(n + " INTEGER" for n in names)))
        db.executemany("INSERT INTO %s VALUES (%s)" % (t, ", ".join("?" * len(names))),
                       [[r[n] for n in names] for r in data[t][1]])
    want = collections.Counter(", ".join(value(v) for v in row)
                               for row in db.execute(query))
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
    arg = sys.argv[2] if len(sys.argv) > 2 else "40"
    lo, hi = (int(x) for x in arg.split("-")) if "-" in arg else (1, int(arg))
    failed = 0
    with tempfile.TemporaryDirectory(prefix="join-sqlite-") as work:
        for seed in range(lo, hi + 1):
            err, job = run_seed(sluice, seed, work)
            if err:
                failed += 1
                print("FAIL seed %d: %s\n%s" % (seed, err, job))
    print("join_sqlite: %d/%d seeds agree with SQLite" % (hi - lo + 1 - failed, hi - lo + 1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
