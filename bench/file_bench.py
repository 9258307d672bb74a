#!/usr/bin/env python3
"""bench/file_bench.py - keyed windows over one large CSV file: sluice on 2 and 1 shards
against DuckDB computing the same aggregation over the same file, in the same run.

usage: file_bench.py SLUICE [--events N]

The workload of issue 15's table: 10 M events (CSV user_id, ts, amount; 10 events per ms,
up to 1 s disorder), per-key COUNT + SUM, blackhole sink:

    file/csv_1k_tumble    1 k keys, TUMBLE 1 min
    file/csv_1m_tumble    1 M keys, TUMBLE 1 min
    file/csv_1m_hop       1 M keys, HOP 10 min / 1 min

Each prints sluice's events/s on 2 shards with its ratio to DuckDB (2 threads, the same
file, the same groups), the 1-shard figure, and the 1 -> 2 shard scaling. What each side's
time includes: sluice, `sluice run` from exec to exit (plan, reading and parsing the file,
windows, watermarks, the sink; process start is about 5 ms); DuckDB, one query from submit to
its result inside an already started node process (reading and parsing the CSV with the
column types given, no sniffing, the GROUP BY, an outer sum so no aggregate is optimized
away). DuckDB is batch: it sees the whole file at once and keeps no window state between
rows, so the comparison flatters it, not sluice.

The files are generated once into ~/.cache/sluice/bench (about 200 MB each) with a fixed
seed; DuckDB is @duckdb/node-api from npm, installed by `tools/dev bench` into
~/.cache/sluice/duckdb. Standard library only.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                     "sluice")
DUCKDB_DIR = os.path.join(CACHE, "duckdb")

WORKLOADS = [
    # figure, keys, sluice window TVF, DuckDB window starts (in minutes) per event
    ("csv_1k_tumble", 1000, "TUMBLE(TABLE ev, DESCRIPTOR(t), INTERVAL '1' MINUTE)", 1),
    ("csv_1m_tumble", 1000000, "TUMBLE(TABLE ev, DESCRIPTOR(t), INTERVAL '1' MINUTE)", 1),
    ("csv_1m_hop", 1000000,
     "HOP(TABLE ev, DESCRIPTOR(t), INTERVAL '1' MINUTE, INTERVAL '10' MINUTE)", 10),
]


def die(msg):
    print("file_bench: " + msg, file=sys.stderr)
    sys.exit(1)


def gen_file(keys, events):
    """The CSV for `keys` keys, made once: event i at ms i/10 minus up to 1 s of disorder."""
    d = os.path.join(CACHE, "bench")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "events_%dk_%d.csv" % (keys // 1000, events))
    if os.path.exists(path):
        return path
    rnd = random.Random(keys)
    base = 1700000000000
    tmp = path + ".tmp"
    t0 = time.monotonic()
    with open(tmp, "w") as f:
        chunk = 100000
        for lo in range(0, events, chunk):
            f.write("".join("%d,%d,%d\n" % (rnd.randrange(keys),
                                            base + i // 10 - rnd.randrange(1000),
                                            rnd.randrange(1, 1000))
                            for i in range(lo, min(events, lo + chunk))))
    os.rename(tmp, path)
    print("file_bench: generated %s in %.0f s" % (path, time.monotonic() - t0), file=sys.stderr)
    return path


SQL = """CREATE TABLE ev (user_id BIGINT, ts BIGINT, amount BIGINT,
  t AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR t AS t - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE sink (user_id BIGINT, ws TIMESTAMP(3), n BIGINT, s BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT user_id, window_start, COUNT(*), SUM(amount)
FROM TABLE(%s) GROUP BY user_id, window_start, window_end;
"""


def run_sluice(sluice, work, path, tvf, shards):
    job = os.path.join(work, "job.sql")
    with open(job, "w") as f:
        f.write(SQL % (path, tvf))
    t0 = time.monotonic()
    p = subprocess.run([sluice, "run", job, "--shards", str(shards)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=1200)
    dt = time.monotonic() - t0
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        die("sluice failed (%d): %s" % (p.returncode, err[-500:]))
    if " 0 late" not in err:
        die("sluice dropped late rows, the comparison would be unfair: " + err[-300:])
    return dt


DUCK_JS = r"""
import { DuckDBInstance } from '@duckdb/node-api';
const [path, hops] = process.argv.slice(2);
const inst = await DuckDBInstance.create(':memory:', { threads: '2' });
const con = await inst.connect();
const src = `read_csv('${path}', header = false, auto_detect = false,
  columns = {'user_id': 'BIGINT', 'ts': 'BIGINT', 'amount': 'BIGINT'})`;
const q = Number(hops) === 1
  ? `SELECT sum(n), sum(s), count(*) FROM (SELECT user_id, ts // 60000 AS w, count(*) AS n,
       sum(amount) AS s FROM ${src} GROUP BY ALL)`
  : `SELECT sum(n), sum(s), count(*) FROM (SELECT user_id, ts // 60000 - k AS w,
       count(*) AS n, sum(amount) AS s FROM ${src}, range(${hops}) r(k) GROUP BY ALL)`;
const t0 = process.hrtime.bigint();
const r = await con.runAndReadAll(q);
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
console.log(JSON.stringify({ ms, rows: r.getRows().map(x => x.map(String)) }));
"""


def run_duckdb(work, path, hops):
    if not os.path.isdir(os.path.join(DUCKDB_DIR, "node_modules", "@duckdb", "node-api")):
        die("DuckDB is not installed in %s: run `tools/dev bench file` (it installs "
            "@duckdb/node-api from npm)" % DUCKDB_DIR)
    js = os.path.join(DUCKDB_DIR, "file_bench_query.mjs")
    with open(js, "w") as f:
        f.write(DUCK_JS)
    p = subprocess.run(["node", js, path, str(hops)], cwd=DUCKDB_DIR, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=1200)
    if p.returncode != 0:
        die("DuckDB failed: " + p.stderr.decode(errors="replace")[-500:])
    import json
    out = json.loads(p.stdout.decode().strip().splitlines()[-1])
    return out["ms"] / 1000.0, out["rows"][0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sluice")
    ap.add_argument("--events", type=int, default=10000000)
    a = ap.parse_args()
    sluice = os.path.abspath(a.sluice)
    with tempfile.TemporaryDirectory(prefix="sluice-file-bench-") as work:
        for name, keys, tvf, hops in WORKLOADS:
            path = gen_file(keys, a.events)
            duck, rows = run_duckdb(work, path, hops)
            if int(rows[0]) != a.events * hops:
                die("DuckDB counted %s events for %s, want %d" % (rows[0], name,
                                                                  a.events * hops))
            two = run_sluice(sluice, work, path, tvf, 2)
            one = run_sluice(sluice, work, path, tvf, 1)
            ev = a.events
            print("FIGURE file/%s_duckdb %.0f events/s - -" % (name, ev / duck))
            print("FIGURE file/%s %.0f events/s %.3f file/%s_duckdb"
                  % (name, ev / two, duck / two, name))
            print("FIGURE file/%s_1shard %.0f events/s %.3f file/%s_duckdb"
                  % (name, ev / one, duck / one, name))
            print("FIGURE file/%s_scaling_1_to_2 %.3f x %.3f file/%s_1shard"
                  % (name, one / two, one / two, name))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
