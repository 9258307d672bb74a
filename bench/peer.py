#!/usr/bin/env python3
"""bench/peer.py - the peer suite: the same workloads on the same input files, in one run, on
sluice (1 and 2 shards), on Apache Flink's MiniCluster (parallelism 1 and 2: tools/flink-sql)
and, for the Kafka passthrough through a real broker (tools/kafka-cluster), on Kafka Streams
(1 and 2 stream threads: tools/kafka-streams). Prints the FIGURE protocol of bench/README.md.

usage: peer.py SLUICE PEER_GEN [--events N] [--orders N] [--cdc N] [--kafka N]
               [--only NAME,...] [--data DIR] [-v]

Workloads (the SQL below is the job file both engines run, byte for byte):

  tumble_1m, tumble_1k     keyed CSV (k, v, ts_ms; 1M events a minute of event time, in
                           order; keys uniform over 1M / 1k), TUMBLE 1 min, COUNT(*) and
                           SUM(v) per key, into a blackhole
  hop_1m, hop_1k           the same with HOP size 5 min, slide 1 min
  session_1m, session_1k   the same with SESSION (PARTITION BY k) gap 30 s
  filter_project           order CSV in two files: WHERE (drops 1/4), 4-column projection
                           with arithmetic, into a blackhole
  cdc_decode               Debezium JSON change events (schema included, ~560 B) in two
                           files, 'debezium-json' (updates as -U/+U), into a blackhole
  kafka_passthrough        Kafka (4 partitions) -> JSON decode, WHERE, 4-column projection ->
                           Kafka (JSON, at-least-once), through a real Kafka 4.4.0 broker

How a figure is measured, the same way on every side: a job's time is taken from its start
to its end, and the same job over a small input of the same shape (1000 records, run just
before it) is subtracted, so that what is left is the time spent on the other N - 1000
records. Both the wall time and the CPU time (every thread of the process: for a JVM also
its GC and JIT compiler) are measured; the figure "events/s per core" is
(N - 1000) / (CPU(N) - CPU(1000)), and "_wall" figures are (N - 1000) / (wall(N) -
wall(1000)). What each side's time includes:

  sluice         the process `sluice run JOB --shards S`: its start, planning, reading and
                 parsing the files (or consuming), the job, its end (wait4's rusage for CPU).
  Flink          one JVM per parallelism runs every Flink job of the run in turn on one
                 MiniCluster (tools/flink-sql --batch): the JVM's start and the cluster's are
                 outside the figures; each job's time is SqlRunner's, from planning through
                 submission to its end (the JVM's process CPU time over that span). A first
                 warm-up job (the first small job) is run and discarded so that class loading
                 does not inflate the subtracted small job; the JIT's warm-up on the job's own
                 generated code stays inside the job, as it would in a real one.
  Kafka Streams  one JVM, every run in turn (warm-up run first, discarded): from start() to
                 close() returned, producers flushed (tools/kstreams/Passthrough.java).

Every side reads the same files from the page cache (they were just written or read) and
checks nothing during the timing; sluice's "done" line must show every record read and no
late row. Flink runs with its defaults (hashmap state, G1, full JIT) in a 4 GiB heap, no
checkpoints on any side. The broker's own CPU is not counted on any side.

Input sizes (defaults): 5M keyed events, 10M order rows, 2M change events, 2M Kafka
messages, so that the steady state dominates every job on both sides (Flink's slowest job,
HOP at 1M keys, then runs for minutes against a JIT warm-up of seconds) and the whole suite
stays near 15 minutes on 2 cores. The files are written once by PEER_GEN into DATA
(default ~/.cache/sluice/peer-data).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLINK_SQL = os.path.join(ROOT, "tools", "flink-sql")
KAFKA_CLUSTER = os.path.join(ROOT, "tools", "kafka-cluster")
KAFKA_STREAMS = os.path.join(ROOT, "tools", "kafka-streams")
GEN_VERSION = 1  # bump when peer_gen.c's output changes
SMALL = 1000  # records of the subtracted small job
FLINK_JAVA_OPTS = "-Xms4g -Xmx4g"
VERBOSE = False

KEYED_SRC = """CREATE TABLE src (
  k BIGINT, v BIGINT, ts_ms BIGINT,
  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = '%(path)s', 'format' = 'csv');
CREATE TABLE sink (k BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT,
  s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT k, window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(%(window)s)
GROUP BY k, window_start, window_end;
"""

WINDOWS = {
    "tumble": "TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE)",
    "hop": "HOP(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)",
    "session": "SESSION(TABLE src PARTITION BY k, DESCRIPTOR(ts), INTERVAL '30' SECOND)",
}

FILTER_SQL = """CREATE TABLE src (id BIGINT, customer_id INT, amount DOUBLE, status STRING,
  ts_ms BIGINT) WITH ('connector' = 'filesystem', 'path' = '%(path)s', 'format' = 'csv');
CREATE TABLE sink (id BIGINT, customer_id INT, amount_eur DOUBLE, ts_ms BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT id, customer_id, amount * 0.92, ts_ms FROM src
WHERE status <> 'void' AND amount > 5;
"""

CDC_SQL = """CREATE TABLE src (id INT, customer_id INT, product_id INT, quantity INT,
  total DECIMAL(10, 2), status STRING, created_at TIMESTAMP(3)) WITH (
  'connector' = 'filesystem', 'path' = '%(path)s', 'format' = 'debezium-json',
  'debezium-json.schema-include' = 'true');
CREATE TABLE sink (id INT, customer_id INT, product_id INT, quantity INT,
  total DECIMAL(10, 2), status STRING, created_at TIMESTAMP(3))
  WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT * FROM src;
"""

KAFKA_SQL = """CREATE TABLE src (order_id BIGINT, customer_id INT, amount DOUBLE, status STRING,
  ts_ms BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '%(in)s', 'properties.bootstrap.servers' = '%(addr)s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'format' = 'json');
CREATE TABLE dst (order_id BIGINT, customer_id INT, amount DOUBLE, ts_ms BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '%(out)s', 'properties.bootstrap.servers' = '%(addr)s',
  'format' = 'json', 'sink.delivery-guarantee' = 'at-least-once');
INSERT INTO dst SELECT order_id, customer_id, amount, ts_ms FROM src WHERE status <> 'void';
"""


class Failed(Exception):
    pass


def log(msg):
    print("peer: " + msg, file=sys.stderr, flush=True)


# ---- the input files --------------------------------------------------------------------------

def gen(peer_gen, data, name, args):
    """data/name written by peer_gen ARGS... once (kept across runs)."""
    path = os.path.join(data, name)
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        t = time.monotonic()
        subprocess.run([peer_gen] + [str(a) for a in args] + [path], check=True)
        log("wrote %s (%.1f s)" % (path, time.monotonic() - t))
    return path


def inputs(peer_gen, data, sizes):
    """{dataset: (full path, small path, full records)} for every dataset."""
    d = os.path.join(data, "v%d" % GEN_VERSION)
    out = {}
    for keys, tag in ((1000000, "1m"), (1000, "1k")):
        n = sizes["events"]
        out["keyed_" + tag] = (gen(peer_gen, d, "keyed_%s_%d.csv" % (tag, n), ["keyed", keys, n]),
                               gen(peer_gen, d, "keyed_%s_%d.csv" % (tag, SMALL),
                                   ["keyed", keys, SMALL]), n)
    # the stateless inputs in two files: each side's source can read them in parallel
    for kind, ext in (("orders", "csv"), ("cdc", "jsonl")):
        n = sizes[kind]
        full = os.path.join(d, "%s_%d" % (kind, n))
        small = os.path.join(d, "%s_%d" % (kind, SMALL))
        for part in (0, 1):
            gen(peer_gen, d, os.path.join(os.path.basename(full), "part-%d.%s" % (part, ext)),
                [kind, n // 2])
            gen(peer_gen, d, os.path.join(os.path.basename(small), "part-%d.%s" % (part, ext)),
                [kind, SMALL // 2])
        out[kind] = (full, small, n // 2 * 2)
    n = sizes["kafka"]
    out["kafka"] = (gen(peer_gen, d, "kafka_%d.jsonl" % n, ["kafka", n]),
                    gen(peer_gen, d, "kafka_%d.jsonl" % SMALL, ["kafka", SMALL]), n)
    return out


def workloads(data):
    """[(name, dataset, SQL template)] in run order."""
    w = []
    for win in ("tumble", "hop", "session"):
        for tag in ("1m", "1k"):
            w.append(("%s_%s" % (win, tag), "keyed_" + tag,
                      KEYED_SRC.replace("%(window)s", WINDOWS[win])))
    w.append(("filter_project", "orders", FILTER_SQL))
    w.append(("cdc_decode", "cdc", CDC_SQL))
    return w


# ---- the sides ----------------------------------------------------------------------------------

def sluice_run(sluice, job, shards, want_in, windowed, work):
    """(wall s, cpu s) of `sluice run job --shards shards`; checks its done line."""
    err = os.path.join(work, os.path.basename(job) + ".s%d.err" % shards)
    with open(err, "w") as ef:
        t0 = time.monotonic()
        p = subprocess.Popen([sluice, "run", job, "--shards", str(shards)],
                             stdout=subprocess.DEVNULL, stderr=ef)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    with open(err) as f:
        text = f.read()
    if p.returncode != 0:
        raise Failed("sluice run %s --shards %d exited %d: %s" % (job, shards, p.returncode,
                                                                  text[-600:]))
    m = re.search(r"done: (\d+) records in, (\d+) rows out, (\d+) late", text)
    if not m:
        raise Failed("sluice run %s: no 'done' line on stderr: %s" % (job, text[-400:]))
    got, late = int(m.group(1)), int(m.group(3))
    # want_in: the records, or a test of the count (a query that scans its table twice)
    if (got != want_in if isinstance(want_in, int) else not want_in(got)) or (windowed and late):
        raise Failed("sluice run %s --shards %d: %d records in (want %s), %d late: %s" % (
            job, shards, got, want_in if isinstance(want_in, int) else "another count", late,
            m.group(0)))
    if VERBOSE:
        log("sluice %s --shards %d: %.3f s, cpu %.3f s: %s" % (
            os.path.basename(job), shards, wall, ru.ru_utime + ru.ru_stime, m.group(0)))
    return wall, ru.ru_utime + ru.ru_stime


LINE = re.compile(r"flink-sql: (\S+) (ok|FAILED) \(([\d.]+) s, cpu ([\d.]+) s\)")


def flink_batch(par, jobs, work):
    """{job path: (wall s, cpu s)} for jobs run in turn in one Flink JVM at parallelism par."""
    lst = os.path.join(work, "flink-p%d.list" % par)
    with open(lst, "w") as f:
        for j in jobs:
            f.write("%s\t%s.p%d.out\n" % (j, j, par))
    env = dict(os.environ, FLINK_SQL_JAVA_OPTS=FLINK_JAVA_OPTS)
    t = time.monotonic()
    p = subprocess.run([FLINK_SQL, "--parallelism", str(par), "--timeout", "1200", "--batch",
                        lst], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode == 77:
        raise Failed("Flink is not available: " + p.stderr.strip()[-400:])
    out = {}
    for line in p.stderr.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        if m.group(2) != "ok":
            with open("%s.p%d.out.err" % (m.group(1), par)) as f:
                raise Failed("Flink job %s (parallelism %d) failed: %s" % (
                    m.group(1), par, f.readline().strip()))
        out[m.group(1)] = (float(m.group(3)), float(m.group(4)))
        if VERBOSE:
            log("flink p%d %s: %s s, cpu %s s" % (par, os.path.basename(m.group(1)),
                                                   m.group(3), m.group(4)))
    missing = [j for j in jobs if j not in out]
    if p.returncode != 0 or missing:
        raise Failed("tools/flink-sql --batch (parallelism %d) exited %d, %d job(s) without a "
                     "time: %s" % (par, p.returncode, len(missing), p.stderr[-800:]))
    log("flink parallelism %d: %d jobs in %.0f s" % (par, len(jobs), time.monotonic() - t))
    return out


def rates(n, full, small):
    """(events per CPU second, events per wall second) over the records beyond the small
    job's, from (wall, cpu) of the full and the small job."""
    dw, dc = full[0] - small[0], full[1] - small[1]
    if dw <= 0 or dc <= 0:
        raise Failed("the full job took no longer than the small one (%r vs %r): the input "
                     "is too small to measure" % (full, small))
    return (n - SMALL) / dc, (n - SMALL) / dw


# ---- the Kafka passthrough ----------------------------------------------------------------------

def kafka_tool(*args, timeout=300):
    p = subprocess.run([KAFKA_CLUSTER] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout)
    if p.returncode != 0:
        raise Failed("tools/kafka-cluster %s exited %d: %s" % (" ".join(args), p.returncode,
                                                               p.stderr.strip()[-600:]))
    return p.stdout.strip()


def fill(addr, topic, path):
    """Every line of path as one message of topic (kcat, no key, acknowledged)."""
    with open(path, "rb") as f:
        subprocess.run(["kcat", "-P", "-b", addr, "-t", topic, "-X", "log_level=3",
                        "-X", "linger.ms=20", "-X", "batch.num.messages=10000"],
                       stdin=f, check=True, timeout=600)


def topic_count(addr, topic):
    """Messages in topic: the sum over its partitions of the last offset + 1 (kcat reads the
    last message of each)."""
    p = subprocess.run(["kcat", "-C", "-b", addr, "-t", topic, "-o", "-1", "-e", "-q",
                        "-X", "log_level=3", "-f", "%p %o\n"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    if p.returncode != 0:
        raise Failed("kcat could not read topic %s: %s" % (topic, p.stderr[-300:]))
    last = {}
    for line in p.stdout.split("\n"):
        if line.strip():
            part, off = map(int, line.split())
            last[part] = max(last.get(part, -1), off)
    return sum(o + 1 for o in last.values())


def kafka_suite(sluice, data, work, only):
    """{(side, par): (rate per core, wall rate)} for the passthrough on every side."""
    full_path, small_path, n = data["kafka"]
    sides = [("flink", 1), ("flink", 2), ("kstreams", 1), ("kstreams", 2), ("sluice", 1),
             ("sluice", 2)]
    outs = ["out_%s%d_%s" % (s, p, size) for s, p in sides for size in ("warm", "small", "full")]
    cdir = os.path.join(work, "kafka")
    os.makedirs(cdir)
    t = time.monotonic()
    addr = kafka_tool("start", "--dir", cdir, "--topic", "in:4", "--topic", "in_small:4",
                      *sum((["--topic", o + ":4"] for o in outs), []))
    try:
        fill(addr, "in", full_path)
        fill(addr, "in_small", small_path)
        got = topic_count(addr, "in")
        if got != n:
            raise Failed("topic in holds %d messages, want %d" % (got, n))
        log("kafka: a broker at %s, %d messages in 4 partitions (%.0f s)" % (
            addr, n, time.monotonic() - t))
        jobs = {}
        for s, p in sides:
            for size, topic in (("warm", "in_small"), ("small", "in_small"), ("full", "in")):
                path = os.path.join(work, "kafka_%s%d_%s.sql" % (s, p, size))
                with open(path, "w") as f:
                    f.write(KAFKA_SQL % {"in": topic, "out": "out_%s%d_%s" % (s, p, size),
                                         "addr": addr})
                jobs[(s, p, size)] = path
        times = {}
        for p in (1, 2):
            r = flink_batch(p, [jobs[("flink", p, z)] for z in ("warm", "small", "full")], work)
            for z in ("small", "full"):
                times[("flink", p, z)] = r[jobs[("flink", p, z)]]
        runs = []
        for p in (1, 2):
            for z, topic, cnt in (("warm", "in_small", SMALL), ("small", "in_small", SMALL),
                                  ("full", "in", n)):
                runs.append("%s%d:%s:out_kstreams%d_%s:%d:%d" % (z, p, topic, p, z, cnt, p))
        ks = subprocess.run([KAFKA_STREAMS, addr] + runs, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, timeout=1800)
        if ks.returncode != 0:
            raise Failed("tools/kafka-streams exited %d: %s" % (ks.returncode, ks.stderr[-800:]))
        for line in ks.stdout.splitlines():
            f = line.split()
            if len(f) == 5 and f[0] == "run":
                z, p = f[1][:-1], int(f[1][-1])
                times[("kstreams", p, z)] = (float(f[3]), float(f[4]))
                if VERBOSE:
                    log("kstreams %s: %s" % (f[1], line))
        for p in (1, 2):
            for z, cnt in (("small", SMALL), ("full", n)):
                times[("sluice", p, z)] = sluice_run(sluice, jobs[("sluice", p, z)], p, cnt,
                                                     False, work)
        res = {}
        for s, p in sides:
            for z, cnt in (("small", SMALL), ("full", n)):
                out = "out_%s%d_%s" % (s, p, z)
                c = topic_count(addr, out)
                if c < cnt:
                    raise Failed("%s parallelism %d: topic %s holds %d messages, want %d" % (
                        s, p, out, c, cnt))
            if (s, p, "full") not in times or (s, p, "small") not in times:
                raise Failed("no time for %s parallelism %d" % (s, p))
            res[(s, p)] = rates(n, times[(s, p, "full")], times[(s, p, "small")])
        return res
    finally:
        subprocess.run([KAFKA_CLUSTER, "stop", "--dir", cdir], stdout=subprocess.DEVNULL,
                       timeout=120)


# ---- the run ---------------------------------------------------------------------------------------

def main():
    global VERBOSE
    ap = argparse.ArgumentParser(description="sluice against Flink and Kafka Streams.")
    ap.add_argument("sluice")
    ap.add_argument("peer_gen")
    ap.add_argument("--events", type=int, default=5000000, help="keyed events (5M)")
    ap.add_argument("--orders", type=int, default=10000000, help="filter/project rows (10M)")
    ap.add_argument("--cdc", type=int, default=2000000, help="change events (2M)")
    ap.add_argument("--kafka", type=int, default=2000000, help="Kafka messages (2M)")
    ap.add_argument("--only", default="", help="comma-separated workloads (default: all)")
    ap.add_argument("--data", default=os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sluice",
        "peer-data"))
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    VERBOSE = a.verbose
    sluice, peer_gen = os.path.abspath(a.sluice), os.path.abspath(a.peer_gen)
    only = set(filter(None, a.only.split(",")))
    t_start = time.monotonic()
    for tool in (FLINK_SQL, KAFKA_STREAMS):
        p = subprocess.run([tool, "--prepare"], stderr=subprocess.PIPE, text=True)
        if p.returncode:
            log("%s --prepare exited %d: %s" % (tool, p.returncode, p.stderr.strip()[-400:]))
            return 1
    data = inputs(peer_gen, a.data, {"events": a.events, "orders": a.orders, "cdc": a.cdc,
                                      "kafka": a.kafka})
    work = tempfile.mkdtemp(prefix="sluice-peer-")
    results = {}  # (workload, side, par) -> (per core, wall)
    unmeasured = {}  # (workload, side, par) -> why not
    try:
        wl = [w for w in workloads(data) if not only or w[0] in only]
        jobs = {}
        for name, ds, sql in wl:
            full, small, n = data[ds]
            for z, path in (("small", small), ("full", full)):
                jp = os.path.join(work, "%s_%s.sql" % (name, z))
                with open(jp, "w") as f:
                    f.write("-- bench/peer.py: %s over %s\n" % (name, path) +
                            sql.replace("%(path)s", path))
                jobs[(name, z)] = jp
        if wl:
            for p in (1, 2):
                order = [jobs[(wl[0][0], "small")]]  # the warm-up, discarded
                for name, _, _ in wl:
                    order += [jobs[(name, "small")], jobs[(name, "full")]]
                # the warm-up job is the first small job: run it under another name
                warm = os.path.join(work, "warmup.sql")
                shutil.copy(order[0], warm)
                order[0] = warm
                r = flink_batch(p, order, work)
                for name, ds, _ in wl:
                    n = data[ds][2]
                    measure(results, unmeasured, (name, "flink", p),
                            lambda: rates(n, r[jobs[(name, "full")]], r[jobs[(name, "small")]]))
            t = time.monotonic()
            for p in (1, 2):
                for name, ds, _ in wl:
                    n = data[ds][2]
                    win = ds.startswith("keyed")
                    small = sluice_run(sluice, jobs[(name, "small")], p,
                                       rows_in(ds, SMALL), win, work)
                    full = sluice_run(sluice, jobs[(name, "full")], p, rows_in(ds, n), win,
                                      work)
                    measure(results, unmeasured, (name, "sluice", p),
                            lambda: rates(n, full, small))
            log("sluice: %d jobs in %.0f s" % (4 * len(wl), time.monotonic() - t))
        if not only or "kafka_passthrough" in only:
            try:
                for (s, p), r in kafka_suite(sluice, data, work, only).items():
                    results[("kafka_passthrough", s, p)] = r
            except Failed as e:
                unmeasured[("kafka_passthrough", "all", 0)] = str(e)
    except Failed as e:
        log("FAILED: %s (work files kept in %s)" % (e, work))
        emit(results)
        return 1
    emit(results)
    # one workload that could not be measured (a stall on a loaded machine) must not cost
    # the figures of the others: they are printed, and the missing ones said, exit 1
    for (w, side, p), why in unmeasured.items():
        log("UNMEASURED %s %s%s: %s" % (w, side, " parallelism %d" % p if p else "", why))
    log("the peer suite took %.0f s" % (time.monotonic() - t_start))
    if unmeasured:
        log("work files kept in %s" % work)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


def measure(results, unmeasured, key, fn):
    """results[key] = fn(), or the reason it failed in unmeasured[key]."""
    try:
        results[key] = fn()
    except Failed as e:
        unmeasured[key] = str(e)


def rows_in(ds, n):
    """Records sluice's file source reports read for a dataset of n records: rows for the
    change events (in each file, per 10 events: 6 c, 2 u of two rows, -U and +U, 1 r, 1 d)."""
    if ds != "cdc":
        return n
    per_file = n // 2
    tens, rest = divmod(per_file, 10)
    return 2 * (tens * 12 + sum((1, 1, 1, 1, 1, 1, 2, 2, 1, 1)[i] for i in range(rest)))


def emit(results):
    names = []
    for (w, _, _) in results:
        if w not in names:
            names.append(w)
    for w in names:
        for p in (1, 2):
            f = results.get((w, "flink", p))
            s = results.get((w, "sluice", p))
            if f:
                print("FIGURE peer/%s_flink_%d %.0f events/s - -" % (w, p, f[0]))
            if s and f:
                print("FIGURE peer/%s_sluice_%d %.0f events/s %.4f peer/%s_flink_%d" % (
                    w, p, s[0], s[0] / f[0], w, p))
            k = results.get((w, "kstreams", p))
            if k:
                print("FIGURE peer/%s_kstreams_%d %.0f events/s - -" % (w, p, k[0]))
                if s:
                    print("FIGURE peer/%s_sluice_%d_vs_kstreams %.4f x %.4f peer/%s_kstreams_%d"
                          % (w, p, s[0] / k[0], s[0] / k[0], w, p))
        for side in ("sluice", "flink", "kstreams"):
            for p in (1, 2):
                r = results.get((w, side, p))
                if r:
                    print("FIGURE peer/%s_%s_%d_wall %.0f events/s - -" % (w, side, p, r[1]))
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
