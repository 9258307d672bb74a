#!/usr/bin/env python3
"""Property test: lookup joins against SQLite's joins over random inputs.

Per run: a random stream of orders (a key from a small domain, some NULL) in a JSON file
and a random dimension table (keys with duplicates, some NULL) in a CSV file, joined with
`JOIN dim FOR SYSTEM_TIME AS OF o.pt AS d ON o.k = d.k` (INNER or LEFT, sometimes with a
condition on the match, sometimes keyed by an expression of the order) through `sluice run`
on 1 to 3 shards. The table is static, so the join's rows (a multiset) must be SQLite's
same join's.

Usage: lookup_sqlite.py SLUICE [RUNS]
"""
import collections
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

LINE = re.compile(r"^(?:\d+> )?\+I\[(.*)\]$")


def text(x):
    return "NULL" if x is None else str(x)


def main():
    sluice = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    failed = 0
    tmp = tempfile.mkdtemp(prefix="sluice-lookup-")
    try:
        for run in range(runs):
            rng = random.Random(run)
            nk = rng.choice([3, 20, 200])
            orders = [(i, None if rng.random() < 0.1 else rng.randrange(nk), rng.randint(0, 9))
                      for i in range(rng.choice([20, 500, 3000]))]
            dim = [(None if rng.random() < 0.05 else rng.randrange(nk), "n%d" % j,
                    rng.randint(0, 9)) for j in range(rng.choice([1, 30, 400]))]
            left = rng.random() < 0.5
            cond = not left and rng.random() < 0.5
            expr = rng.random() < 0.3
            of, df = os.path.join(tmp, "o%d.jsonl" % run), os.path.join(tmp, "d%d.csv" % run)
            with open(of, "w") as f:
                for i, k, q in orders:
                    f.write(json.dumps({"id": i, "k": k, "q": q}) + "\n")
            with open(df, "w") as f:
                for k, n, p in dim:
                    f.write("%s,%s,%d\n" % ("" if k is None else k, n, p))
            key = "MOD(o.k + 1, %d)" % nk if expr else "o.k"
            on = "%s = d.k%s" % (key, " AND d.p > o.q" if cond else "")
            job = os.path.join(tmp, "job%d.sql" % run)
            with open(job, "w") as f:
                f.write("""CREATE TABLE o (id BIGINT, k BIGINT, q INT, pt AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE d (k BIGINT, n STRING, p INT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
SELECT o.id, o.k, d.n, d.p FROM o %s JOIN d FOR SYSTEM_TIME AS OF o.pt AS d ON %s;
""" % (of, df, "LEFT" if left else "", on))
            db = sqlite3.connect(":memory:")
            db.execute("CREATE TABLE o (id INTEGER, k INTEGER, q INTEGER)")
            db.execute("CREATE TABLE d (k INTEGER, n TEXT, p INTEGER)")
            db.executemany("INSERT INTO o VALUES (?, ?, ?)", orders)
            db.executemany("INSERT INTO d VALUES (?, ?, ?)", dim)
            skey = "((o.k + 1) %% %d)" % nk if expr else "o.k"
            want = collections.Counter(
                ", ".join(map(text, r)) for r in db.execute(
                    "SELECT o.id, o.k, d.n, d.p FROM o %s JOIN d ON %s = d.k%s" % (
                        "LEFT" if left else "", skey, " AND d.p > o.q" if cond else "")))
            shards = rng.choice([1, 2, 3])
            p = subprocess.run([sluice, "run", job, "--shards", str(shards)],
                               capture_output=True, text=True, timeout=120)
            got = collections.Counter(m.group(1) for m in map(LINE.match, p.stdout.splitlines())
                                      if m)
            ok = p.returncode == 0 and got == want
            print("%s run %d: %d orders, %d table rows, %s join on %s, %d shards, %d rows" % (
                "ok  " if ok else "FAIL", run, len(orders), len(dim),
                "LEFT" if left else "INNER", on, shards, sum(want.values())))
            if not ok:
                failed += 1
                print("  rc %d: %s" % (p.returncode, p.stderr.strip()[-300:]))
                for r in list((want - got).elements())[:5]:
                    print("  missing:    %s" % r)
                for r in list((got - want).elements())[:5]:
                    print("  unexpected: %s" % r)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d of %d runs failed" % (failed, runs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
