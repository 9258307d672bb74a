#!/usr/bin/env python3
"""Property test: the updating GROUP BY in two phases against SQLite over Zipf-skewed input.

Per run: a table of random rows whose key follows a Zipf law (s = 1.2 over 300 keys, so
the first key carries about a quarter of the rows), with NULL values sprinkled in, run as
`SELECT k, COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v), AVG(v) ... GROUP BY k` through
`sluice run` on 2 or 3 shards with mini-batch on (the senders' local stage combines rows per
key; the latency and size vary per run, so partials are flushed by time, by size and at the
end), and once on 1 shard. The changelog is applied (+I/+U add a row, -U/-D take one back;
taking back a row that is not there fails) and must equal SQLite's GROUP BY, and the 2-3
shard runs must have combined rows (--metrics), or the test checks nothing new.

Every fourth run has sparse keys instead (5,000 rows over 1M keys, a mini-batch of 2,000
keys): the first flush gives about one partial a row, so the senders turn their local
stage off (engine/runtime/exchange.c) and send the rest raw: the rows must still be
SQLite's, and fewer than all of them combined.

Usage: group_by_sqlite.py SLUICE [RUNS]
"""
import bisect
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


def zipf_keys(rng, n, nkeys=300, s=1.2):
    w = [1.0 / (r + 1) ** s for r in range(nkeys)]
    total = sum(w)
    cdf, acc = [], 0.0
    for x in w:
        acc += x / total
        cdf.append(acc)
    return [min(bisect.bisect_left(cdf, rng.random()), nkeys - 1) for _ in range(n)]


def run(sluice, job, shards):
    p = subprocess.run([sluice, "run", job, "--shards", str(shards), "--metrics"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise SystemExit("FAIL: sluice exited %d: %s" % (p.returncode, p.stderr[-500:]))
    rows = collections.Counter()
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        if m.group(1) == "+":
            rows[m.group(3)] += 1
        else:
            if rows[m.group(3)] == 0:
                raise SystemExit("FAIL: %d shards: retraction of a row never added: %s"
                                 % (shards, line))
            rows[m.group(3)] -= 1
    return +rows, p.stderr


def fmt(v):
    return "NULL" if v is None else str(v)


def one(sluice, case, tmp):
    rng = random.Random(case)
    sparse = case % 4 == 0
    n = 5000 if sparse else rng.choice([500, 2000, 5000])
    keys = [rng.randrange(1000000) for _ in range(n)] if sparse else zipf_keys(rng, n)
    data = os.path.join(tmp, "t.jsonl")
    rows = []
    with open(data, "w") as f:
        for k in keys:
            v = None if rng.random() < 0.05 else rng.randrange(-1000, 1000)
            rows.append(("k%d" % k, v))
            f.write(json.dumps({"k": "k%d" % k, "v": v}) + "\n")
    latency = "10 s" if sparse else rng.choice(["1 ms", "20 ms", "1 s"])
    size = 2000 if sparse else rng.choice([2, 50, 5000])
    job = os.path.join(tmp, "job.sql")
    with open(job, "w") as f:
        f.write("""SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '%s';
SET 'table.exec.mini-batch.size' = '%d';
CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '%s',
  'format' = 'json');
SELECT k, COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v), AVG(v) FROM t GROUP BY k;
""" % (latency, size, data))
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (k TEXT, v INTEGER)")
    db.executemany("INSERT INTO t VALUES (?, ?)", rows)
    want = collections.Counter()
    # Flink's AVG(INT) is an INT: the sum divided by the count, truncated toward zero
    for k, c, cv, s, lo, hi in db.execute(
            "SELECT k, COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v) FROM t GROUP BY k"):
        avg = None if not cv else int(s / cv) if s >= 0 else -int(-s / cv)
        want[", ".join([k, fmt(c), fmt(cv), fmt(s), fmt(lo), fmt(hi), fmt(avg)])] += 1
    for shards in (1, rng.choice([2, 3])):
        got, err = run(sluice, job, shards)
        if got != want:
            missing, extra = want - got, got - want
            raise SystemExit("FAIL case %d, %d shards (latency %s, size %d): missing %s, "
                             "unexpected %s" % (case, shards, latency, size,
                                                list(missing)[:3], list(extra)[:3]))
        combined = re.search(r"combined (\d+) rows into (\d+) partials", err)
        if shards > 1 and not combined:
            raise SystemExit("FAIL case %d: %d shards combined nothing:\n%s"
                             % (case, shards, err))
        if shards > 1 and sparse and int(combined.group(1)) >= n:
            raise SystemExit("FAIL case %d: sparse keys, yet all %d rows were combined (the "
                             "local stage did not turn itself off):\n%s" % (case, n, err))


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sluice = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(1, runs + 1):
            one(sluice, case, tmp)
    print("group by property: %d random inputs agree with SQLite on 1 and 2-3 shards, two phases"
          % runs)


if __name__ == "__main__":
    main()
