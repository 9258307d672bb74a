#!/usr/bin/env python3
"""Every named crash point of a checkpoint (engine/base/fault.h) under an exactly-once
Kafka -> sluice -> Kafka job on a real broker (issue 13, item 14, the Kafka part; 127.0.0.1
only, tools/kafka-cluster's single node started once for all points and stopped here).

The job is real_kill.py's window job: 1-second TUMBLE windows per MOD(id, 7) over event time
id * 10 ms, keyed state on the heap or in RocksDB, checkpoints every 200 ms on 2 shards, an
exactly-once Kafka sink. For every state backend and every point (SLUICE_FAULT=<point>:2)
it gets a fresh input and output topic and a transactional-id prefix of its own:

  1. a feeder writes ids into the input topic at 2000 a second while the job runs
     unbounded with the fault set: it must die by SIGKILL (exit -9) with the point's line
     on stderr, at checkpoint 2, within DEADLINE seconds;
  2. the feeder stops; the job is started again without the fault on the same checkpoint
     directory, bounded ('scan.bounded.mode' = 'latest-offset'), and must run to the end;
  3. the output topic, read read_committed by kcat and by Kafka's Java consumer, must hold
     exactly the rows an uninterrupted run gives (computed here from the input topic's
     records, as real_kill.py does): nothing lost, nothing duplicated, nothing else;
  4. read read_uncommitted (both clients), it holds those rows and the aborted ones. At
     the points before checkpoint 2 is complete (sink-precommit, snapshot-written,
     manifest-temp-written) the crash cuts a transaction that was flushed with rows and
     must be aborted, so aborted rows are required there: without them the crash did not
     hit what it claims. At the other points the open transaction is the next epoch's,
     which may hold nothing yet; its aborted rows are counted, not required.

Usage: real_fault_points.py SLUICE [--backends heap,rocksdb]   (exit 77 when the cluster
cannot be had)
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_cluster  # noqa: E402
import real_kill  # noqa: E402  (the window job's input, expected rows and comparison)

POINTS = ["barrier-injected", "sink-precommit", "snapshot-written", "manifest-temp-written",
          "manifest-renamed", "sink-commit", "kafka-txn-ended", "kafka-txn-begun"]
# where checkpoint 2 is not complete yet and its transaction holds flushed rows
MUST_ABORT = {"sink-precommit", "snapshot-written", "manifest-temp-written"}
FAULT_CKPT = 2
DEADLINE = 300  # polled waits: a hang fails, a loaded machine is only slower

JOB = """SET 'table.local-time-zone' = 'UTC';
SET 'execution.checkpointing.interval' = '200 ms';
CREATE TABLE src (id BIGINT, v BIGINT, ts_ms BIGINT, tag STRING,
  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = '%(in)s', 'properties.bootstrap.servers' = '%(addr)s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = '%(bound)s',
  'format' = 'json');
CREATE TABLE out_t (ws TIMESTAMP(3), k BIGINT, n BIGINT, s BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '%(out)s', 'properties.bootstrap.servers' = '%(addr)s',
  'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = '%(prefix)s', 'sink.marker-topic' = 'markers');
INSERT INTO out_t SELECT TUMBLE_START(ts, INTERVAL '1' SECOND), MOD(id, 7), COUNT(*), SUM(id)
FROM src GROUP BY TUMBLE(ts, INTERVAL '1' SECOND), MOD(id, 7);
"""


def cases(backends):
    """[(index, backend, point)], each with topics in<index> and out<index>."""
    return [(i, b, p) for i, (b, p) in enumerate((b, p) for b in backends for p in POINTS)]


def leaders_ready(cluster, topics, partitions=4):
    """Waits until the broker answers offset queries for every partition of topics: just
    after 33 topics are created a loaded node can say "not leader" for some of them for
    longer than a source's 10 s open timeout, which is the broker's start, not the job's
    fault."""
    t0 = time.monotonic()
    args = ["kcat", "-Q", "-b", cluster.addr, "-X", "log_level=3"]
    for t in topics:
        for p in range(partitions):
            args += ["-t", "%s:%d:-1" % (t, p)]
    while True:
        q = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=real_cluster.TIMEOUT)
        if q.returncode == 0 and "rror" not in q.stdout:
            break
        if time.monotonic() - t0 > DEADLINE:
            raise SystemExit("FAIL: the input topics have no leader after %d s: %s" % (
                DEADLINE, q.stdout[-400:]))
        time.sleep(0.5)
    print("ok: every input partition has its leader (%.1f s)" % (time.monotonic() - t0),
          flush=True)


def one_case(sluice, cluster, work, i, backend, point):
    """Runs one point; returns (ok, a line of figures)."""
    name = "%s-%s" % (backend, point)
    path, ck = os.path.join(work, name + ".sql"), os.path.join(work, name + "-ck")
    topics = {"in": "in%d" % i, "out": "out%d" % i, "prefix": "fp%d" % i,
              "addr": cluster.addr}

    def write_job(bound):  # one path: it names the job in its checkpoints
        with open(path, "w") as f:
            f.write(JOB % dict(topics, bound=bound))

    args = ["--state-backend", backend]
    env = dict(os.environ, SLUICE_FAULT="%s:%d" % (point, FAULT_CKPT))
    write_job("unbounded")
    feeder = real_cluster.Feeder(cluster, topics["in"], real_kill.value, rate=2000)
    try:
        eng = real_cluster.Engine(sluice, path, ck, os.path.join(work, name + "-1.err"),
                                  args=args, env=env)
        try:
            rc1 = eng.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            eng.kill(9)
            return False, "FAIL %-7s %-22s did not die within %d s: %s" % (
                backend, point, DEADLINE, eng.stderr(300))
        n = feeder.stop()
    finally:
        feeder.close()
    err1 = eng.stderr(4000)
    line = "sluice: SLUICE_FAULT: killed at %s of checkpoint %d" % (point, FAULT_CKPT)
    if rc1 != -9 or line not in err1:
        return False, "FAIL %-7s %-22s the faulted run exited %d without '%s': %s" % (
            backend, point, rc1, line, err1[-600:])
    write_job("latest-offset")
    eng = real_cluster.Engine(sluice, path, ck, os.path.join(work, name + "-2.err"),
                              args=args)
    rc2 = eng.wait(timeout=DEADLINE)
    if rc2 != 0:
        return False, "FAIL %-7s %-22s the restart exited %d: %s" % (backend, point, rc2,
                                                                     eng.stderr(600))
    want = real_kill.expected("window", feeder.input_ids())
    views = {}
    for client, read in (("kcat", cluster.kcat_values), ("java", cluster.java_values)):
        for iso in ("read_committed", "read_uncommitted"):
            views[(client, iso)] = real_kill.parse("window", read(topics["out"], iso))
    bad = []
    for client in ("kcat", "java"):
        got = views[(client, "read_committed")]
        b = real_kill.compare("%s read_committed" % client, got, want)
        if b:
            bad.append(b)
        if got - views[(client, "read_uncommitted")]:
            bad.append("%s: read_uncommitted lacks committed rows" % client)
    if views[("kcat", "read_uncommitted")] != views[("java", "read_uncommitted")]:
        bad.append("kcat and the Java consumer read different rows read_uncommitted")
    committed = views[("kcat", "read_committed")]
    aborted = sum((views[("kcat", "read_uncommitted")] - committed).values())
    if point in MUST_ABORT and not aborted:
        bad.append("read_uncommitted shows no aborted row: the crash cut no transaction "
                   "with rows, so exactly-once was not exercised at this point")
    lost = sum((want - committed).values())
    dup = sum((committed - want).values())
    figures = "%-7s %-22s killed, %d ids in, %d rows committed (want %d): %d lost, %d " \
              "duplicated or unexpected; %d aborted rows%s" % (
                  backend, point, n, sum(committed.values()), sum(want.values()), lost, dup,
                  aborted, " (required)" if point in MUST_ABORT else "")
    if bad:
        return False, "FAIL " + figures + "\n   | " + "\n   | ".join(bad)
    return True, "ok   " + figures


def main():
    args = sys.argv[1:]
    backends = ["heap", "rocksdb"]
    if "--backends" in args:
        i = args.index("--backends")
        backends = args[i + 1].split(",")
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__)
        return 2
    sluice = os.path.abspath(args[0])
    real_cluster.skip_unless_available()
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix="sluice-real-faultpts-")
    todo = cases(backends)
    topics = ["markers:1"] + [s for i, _, _ in todo for s in ("in%d:4" % i, "out%d:2" % i)]
    cluster = real_cluster.Cluster(work, 1, topics)
    fails = 0
    try:
        leaders_ready(cluster, ["in%d" % i for i, _, _ in todo])
        for i, backend, point in todo:
            ok, line = one_case(sluice, cluster, work, i, backend, point)
            print(line, flush=True)
            fails += not ok
    finally:
        cluster.stop()
        if fails:
            print("the runs' stderr is kept in %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("%d points x %d backends: %d runs, %d kills, %d failed, %.0f s in all" % (
        len(POINTS), len(backends), 2 * len(todo), len(todo), fails, time.monotonic() - t0))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
