#!/usr/bin/env python3
"""Property test: OVER aggregations against SQLite's window functions over random input.

Per run: random rows (a key of a few values, an INT value with NULLs, a rowtime in ms with
many ties and some disorder, an arrival id) in a JSON file whose watermark lags more than the
disorder, so that no row is late and every row has its output. One frame per run: ROWS n
PRECEDING, RANGE INTERVAL d PRECEDING, ROWS or RANGE UNBOUNDED PRECEDING, run as

    SELECT id, k, v, COUNT(*) OVER w, COUNT(a) OVER w, SUM(a) OVER w, MIN(a) OVER w,
           MAX(a) OVER w FROM t WINDOW w AS (<partition> ORDER BY ts <frame>)

where the argument a is v or an expression of it (computed before the OVER operator), and
the partition is PARTITION BY k, by an expression of k, or none (one partition, one shard).
Some runs order by a PROCTIME() column instead of ts (ROWS frames and UNBOUNDED ones, which
Flink runs as ROWS on processing time): the frame is then the rows that arrived before, in
file order, so SQLite's is ORDER BY id with a ROWS frame.

through `sluice run` on 1, 2 or 3 shards; the rows (a multiset) must equal SQLite's same
query, whose ORDER BY ts, id puts rows of equal rowtime in arrival order for a ROWS frame as
sluice does (a RANGE frame takes every peer whatever their order). Rows are all distinct
(the id), so the multiset is the full answer.

Usage: over_sqlite.py SLUICE [RUNS]
"""
import collections
import datetime
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile

LINE = re.compile(r"^(?:\d+> )?\+I\[(.*)\]$")
BASE = 1704067200000  # 2024-01-01 00:00:00 UTC


def ts_text(ms):
    t = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%d %H:%M:%S.") + "%03d" % (ms % 1000)


def frame_of(rng):
    kind = rng.choice(["rows", "range", "rows_unb", "range_unb"])
    if kind == "rows":
        n = rng.choice([0, 1, 2, 5, 30])
        return "ROWS BETWEEN %d PRECEDING AND CURRENT ROW" % n, \
               "ROWS BETWEEN %d PRECEDING AND CURRENT ROW" % n
    if kind == "range":
        d = rng.choice([0, 1, 7, 50, 400, 2500])
        return "RANGE BETWEEN INTERVAL '%d.%03d' SECOND PRECEDING AND CURRENT ROW" % \
               divmod(d, 1000), "RANGE BETWEEN %d PRECEDING AND CURRENT ROW" % d
    if kind == "rows_unb":
        return "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW", \
               "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
    return "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW", \
           "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"


def main():
    sluice = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    failed = 0
    tmp = tempfile.mkdtemp(prefix="sluice-over-")
    for run in range(runs):
        rng = random.Random(run)
        n = rng.choice([50, 300, 2000])
        nkeys = rng.choice([1, 3, 20])
        rows, t = [], BASE
        for i in range(n):
            t += rng.choice([0, 0, 1, 2, 5, 20])  # ties are common
            ts = t - rng.randint(0, 30)           # disorder of at most 30 ms
            v = None if rng.random() < 0.1 else rng.randint(-50, 100)
            rows.append((i, "k%d" % rng.randrange(nkeys), v, ts))
        data = os.path.join(tmp, "t%d.jsonl" % run)
        with open(data, "w") as f:
            for i, k, v, ts in rows:
                f.write(json.dumps({"id": i, "k": k, "v": v, "ts": ts_text(ts)}) + "\n")
        fs, fq = frame_of(rng)
        proc = not fs.startswith("RANGE BETWEEN INTERVAL") and rng.random() < 0.3
        if proc:
            fq = fq.replace("RANGE", "ROWS")
        arg = rng.choice(["v", "v", "v * 2 - 1"])
        aggs = ("COUNT(*) OVER w, COUNT(%s) OVER w, SUM(%s) OVER w, MIN(%s) OVER w, "
                "MAX(%s) OVER w" % ((arg,) * 4))
        part, qpart = rng.choice([("PARTITION BY k",) * 2, ("PARTITION BY k",) * 2, ("", ""),
                                  ("PARTITION BY CHAR_LENGTH(k)", "PARTITION BY LENGTH(k)")])
        job = os.path.join(tmp, "job%d.sql" % run)
        with open(job, "w") as f:
            f.write("""CREATE TABLE t (id BIGINT, k STRING, v INT, ts TIMESTAMP(3),
  pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '0.1' SECOND) WITH ('connector' = 'filesystem',
  'path' = '%s', 'format' = 'json');
SELECT id, k, v, %s FROM t WINDOW w AS (%s ORDER BY %s %s);
""" % (data, aggs, part, "pt" if proc else "ts", fs))
        db = sqlite3.connect(":memory:")
        db.execute("CREATE TABLE t (id INTEGER, k TEXT, v INTEGER, ts INTEGER)")
        db.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
        order = "id" if proc else "ts, id" if fq.startswith("ROWS") else "ts"
        want = collections.Counter()
        for r in db.execute("SELECT id, k, v, %s FROM t WINDOW w AS (%s ORDER BY "
                            "%s %s)" % (aggs, qpart, order, fq)):
            want[", ".join("NULL" if x is None else str(x) for x in r)] += 1
        shards = rng.choice([1, 2, 3])
        p = subprocess.run([sluice, "run", job, "--shards", str(shards)],
                           capture_output=True, text=True, timeout=120)
        got = collections.Counter(m.group(1) for m in map(LINE.match, p.stdout.splitlines())
                                  if m)
        late = re.search(r", (\d+) late,", p.stderr)
        ok = p.returncode == 0 and got == want and late and late.group(1) == "0"
        print("%s run %d: %d rows, %d keys, %d shards, %s, %s, arg %s" %
              ("ok  " if ok else "FAIL", run, n, nkeys, shards, part or "no partition",
               ("PROCTIME " if proc else "") + fs, arg))
        if not ok:
            failed += 1
            print("  rc %d, stderr: %s" % (p.returncode, p.stderr.strip()[-300:]))
            for r in list((want - got).elements())[:5]:
                print("  missing:    %s" % r)
            for r in list((got - want).elements())[:5]:
                print("  unexpected: %s" % r)
    print("%d of %d runs failed" % (failed, runs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
