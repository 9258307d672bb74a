#!/usr/bin/env python3
"""Exactly-once Kafka -> sluice -> Kafka on a real broker, the engine killed with SIGKILL at
least 50 times (127.0.0.1 only; the cluster is tools/kafka-cluster's, started and stopped
here).

An unbounded job (checkpoints every 200 ms, 2 shards, 'sink.delivery-guarantee' =
'exactly-once') reads a 4-partition topic that a feeder keeps writing ids into, and is
killed with SIGKILL at moments drawn from a seeded RNG (the plan is printed): a quarter
within 0.8 s of its start (recovery: fencing, the marker read, the first epoch), the
others 1-3 of its own checkpoints after the start plus up to 250 ms (rows in flight, a
precommit, a manifest being written, a commit). After each kill it is started again on the
same checkpoint directory. Then the feeder stops and the job runs bounded
('scan.bounded.mode' = 'latest-offset') to the end from its last checkpoint.

The output topic is read from its start to its end by two independent clients, kcat
(librdkafka) and Kafka's Java consumer, both with isolation.level = read_committed:

  passthrough  a filter and a projection: every input record whose id is not divisible
               by 5 exactly once, with its projected values; nothing else.
  window       1-second TUMBLE windows per MOD(id, 7) over event time id * 10 ms: every
               (window, key, count, sum) row equal to the one computed here from the
               input topic's records, exactly once.

Read with read_uncommitted (both clients again) the topic must hold more rows than that:
rows of transactions the kills aborted, which a real broker keeps in the log and hides from
read_committed readers. None would mean the kills never hit a transaction with rows, and
the test fails, so it cannot pass without exercising what it claims.

Usage: real_kill.py SLUICE passthrough|window [--kills N] [--seed S]
(exit 77 when the cluster cannot be had: java, mvn or kcat missing, Maven Central
unreachable on the first fetch)
"""
import collections
import json
import os
import random
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_cluster  # noqa: E402

BASE_MS = 1706781600000  # event time of id 0

HEAD = """SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '200 ms';
CREATE TABLE src (id BIGINT, v BIGINT, ts_ms BIGINT, tag STRING,
  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = '%(addr)s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = '%(bound)s',
  'format' = 'json');
"""
SINK = """WITH ('connector' = 'kafka', 'topic' = 'out',
  'properties.bootstrap.servers' = '%(addr)s', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'kill',
  'sink.marker-topic' = 'markers')"""
JOBS = {
    "passthrough": HEAD + """CREATE TABLE out_t (id BIGINT, w BIGINT, tag STRING) """ + SINK + """;
INSERT INTO out_t SELECT id, v * 2 + 1, UPPER(tag) FROM src WHERE MOD(id, 5) <> 0;
""",
    "window": HEAD + """CREATE TABLE out_t (ws TIMESTAMP(3), k BIGINT, n BIGINT, s BIGINT)
""" + SINK + """;
INSERT INTO out_t SELECT TUMBLE_START(ts, INTERVAL '1' SECOND), MOD(id, 7), COUNT(*), SUM(id)
FROM src GROUP BY TUMBLE(ts, INTERVAL '1' SECOND), MOD(id, 7);
""",
}


def value(i):
    return json.dumps({"id": i, "v": (i * 37) % 1000, "ts_ms": BASE_MS + 10 * i,
                       "tag": "t%d" % (i % 13)})


def norm_ts(v):
    """'2024-02-01 10:00:01' however the JSON format spells a TIMESTAMP(3)."""
    v = str(v).replace("T", " ").rstrip("Z")
    if "." in v:
        v = v.rstrip("0").rstrip(".")
    return v


def expected(job, ids):
    """The output rows the input (a Counter of ids, as the topic holds them) must give."""
    rows = collections.Counter()
    if job == "passthrough":
        for i, c in ids.items():
            if i % 5:
                rows[(i, ((i * 37) % 1000) * 2 + 1, "T%d" % (i % 13))] += c
        return rows
    win = collections.defaultdict(lambda: [0, 0])
    for i, c in ids.items():
        w = win[(i // 100, i % 7)]  # 100 ids of 10 ms in a 1 s window
        w[0] += c
        w[1] += i * c
    for (wi, k), (cnt, s) in win.items():
        ws = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime((BASE_MS // 1000) + wi))
        rows[(ws, k, cnt, s)] += 1
    return rows


def parse(job, lines):
    rows = collections.Counter()
    for l in lines:
        r = json.loads(l)
        if job == "passthrough":
            rows[(r["id"], r["w"], r["tag"])] += 1
        else:
            rows[(norm_ts(r["ws"]), r["k"], r["n"], r["s"])] += 1
    return rows


def make_plan(rnd, kills):
    """[(kind, checkpoints to wait for, seconds)]: where each kill lands."""
    plan = []
    for _ in range(kills):
        if rnd.random() < 0.25:
            plan.append(("start", 0, rnd.uniform(0.0, 0.8)))
        else:
            plan.append(("run", rnd.randint(1, 3), rnd.uniform(0.0, 0.25)))
    return plan


def compare(what, got, want):
    """'' when got == want, else a line: lost, duplicated and unexpected rows."""
    if got == want:
        return ""
    lost = want - got
    dup = collections.Counter({r: c - want[r] for r, c in got.items() if r in want and
                               c > want[r]})
    extra = collections.Counter({r: c for r, c in got.items() if r not in want})
    return ("%s: %d rows, want %d: %d lost (e.g. %s), %d duplicated (e.g. %s), %d "
            "unexpected (e.g. %s)" % (what, sum(got.values()), sum(want.values()),
                                      sum(lost.values()), sorted(lost)[:3],
                                      sum(dup.values()), sorted(dup)[:3],
                                      sum(extra.values()), sorted(extra)[:3]))


def main():
    args = sys.argv[1:]
    opts = {"--kills": "50", "--seed": "12"}
    for o in list(opts):
        if o in args:
            i = args.index(o)
            opts[o] = args[i + 1]
            del args[i:i + 2]
    if len(args) != 2 or args[1] not in JOBS:
        print(__doc__)
        return 2
    sluice, job = os.path.abspath(args[0]), args[1]
    kills, seed = int(opts["--kills"]), int(opts["--seed"])
    real_cluster.skip_unless_available()
    t_start = time.monotonic()
    work = tempfile.mkdtemp(prefix="sluice-real-kill-")
    cluster = real_cluster.Cluster(work, 1, ["in:4", "out:3", "markers:1"])
    ok = False
    try:
        ok = run(sluice, job, kills, seed, cluster, work)
    finally:
        cluster.stop()
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("the runs' stderr is kept in %s" % work)
    print("%s: %.0f s in all" % (job, time.monotonic() - t_start))
    return 0 if ok else 1


def run(sluice, job, kills, seed, cluster, work):
    path, ck = os.path.join(work, job + ".sql"), os.path.join(work, "ck")

    def write_job(bound):
        with open(path, "w") as f:  # one path: it names the job in its checkpoints
            f.write(JOBS[job] % {"addr": cluster.addr, "bound": bound})

    write_job("unbounded")
    plan = make_plan(random.Random(seed), kills)
    print("plan (seed %d): %d kills, %d within 0.8 s of the start, %d after 1-3 of the "
          "run's checkpoints" % (seed, kills, sum(k == "start" for k, _, _ in plan),
                                 sum(k == "run" for k, _, _ in plan)), flush=True)
    feeder = real_cluster.Feeder(cluster, "in", value, rate=2000)
    try:
        return kill_loop(sluice, job, plan, cluster, work, path, ck, write_job, feeder)
    finally:
        feeder.close()


def kill_loop(sluice, job, plan, cluster, work, path, ck, write_job, feeder):
    kills = len(plan)
    t0 = time.monotonic()
    for k, (kind, nckpt, delay) in enumerate(plan):
        before = (real_cluster.complete_checkpoints(ck) or [0])[-1]
        eng = real_cluster.Engine(sluice, path, ck, os.path.join(work, "run%02d.err" % k))
        if kind == "start":
            time.sleep(delay)
        else:
            after = before
            for _ in range(nckpt):
                after = real_cluster.wait_checkpoint_after(ck, after, eng, 120)
                if after is None:
                    break
            if after is None:
                eng.kill(15)
                print("FAIL: run %d made no checkpoint within 120 s (or exited %s): %s" % (
                    k, eng.p.poll(), eng.stderr()))
                return False
            time.sleep(delay)
        if not eng.alive():
            print("FAIL: run %d exited %d by itself: %s" % (k, eng.p.returncode,
                                                            eng.stderr()))
            return False
        eng.kill(9)
    n = feeder.stop()
    t_kills = time.monotonic() - t0
    print("ok: %d kill -9s in %.0f s while %d ids were written" % (kills, t_kills, n),
          flush=True)
    write_job("latest-offset")
    eng = real_cluster.Engine(sluice, path, ck, os.path.join(work, "final.err"))
    t1 = time.monotonic()
    rc = eng.wait(timeout=300)
    if rc != 0:
        print("FAIL: the final bounded run exited %d: %s" % (rc, eng.stderr()))
        return False
    print("ok: the final bounded run read to the end in %.1f s" % (time.monotonic() - t1))
    logs = "".join(open(os.path.join(work, f), errors="replace").read()
                   for f in sorted(os.listdir(work)) if f.endswith(".err"))
    back = logs.count("going back one checkpoint")
    restored = logs.count("sluice: restoring checkpoint")
    print("   %d runs restored a checkpoint, %d recoveries stepped back from a checkpoint "
          "whose transaction had not committed" % (restored, back))

    want = expected(job, feeder.input_ids())
    ok = True
    views = {}
    for client in ("kcat", "java"):
        for iso in ("read_committed", "read_uncommitted"):
            read = cluster.kcat_values if client == "kcat" else cluster.java_values
            views[(client, iso)] = parse(job, read("out", iso))
    for client in ("kcat", "java"):
        got = views[(client, "read_committed")]
        bad = compare("%s read_committed" % client, got, want)
        if bad:
            print("FAIL: " + bad)
            ok = False
        else:
            print("ok: %s read_committed: %d rows, each expected row exactly once" % (
                client, sum(got.values())))
    for client in ("kcat", "java"):
        committed, everything = views[(client, "read_committed")], views[(client,
                                                                           "read_uncommitted")]
        aborted = everything - committed
        if committed - everything:
            print("FAIL: %s: read_uncommitted lacks %d committed rows" % (
                client, sum((committed - everything).values())))
            ok = False
        elif not aborted:
            print("FAIL: %s read_uncommitted shows no row beyond the committed ones: no kill "
                  "hit a transaction with rows, so exactly-once was not exercised" % client)
            ok = False
        else:
            print("ok: %s read_uncommitted: %d rows, %d of them from aborted transactions "
                  "(there, and hidden from read_committed)" % (
                      client, sum(everything.values()), sum(aborted.values())))
    if views[("kcat", "read_uncommitted")] != views[("java", "read_uncommitted")]:
        print("FAIL: kcat and the Java consumer read different rows read_uncommitted")
        ok = False
    return ok


if __name__ == "__main__":
    sys.exit(main())
