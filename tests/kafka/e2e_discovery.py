#!/usr/bin/env python3
"""Kafka partition discovery end to end, against the development broker (127.0.0.1 only).

librdkafka 2.0.2's mock cluster cannot add partitions to a topic, so discovery is shown the
other way Flink's option covers: a 'topic-pattern' source that finds a matching topic
created while the job runs (sluice-kafka-broker's `topic` command on its stdin).

  1. an unbounded job reads 'ev-.*' (topic ev-m, 2 partitions, at plan time) on 2 shards,
     with 'scan.topic-partition-discovery.interval' = '300 ms', checkpoints every 100 ms,
     into an exactly-once filesystem sink, the topic/partition/offset of each record as
     metadata columns;
  2. topic ev-a (3 partitions) is created and written to while the job runs: its records
     must all arrive, including those written before the job noticed the topic (new
     partitions start at their earliest offset);
  3. once they are in the output (committed by a checkpoint that holds ev-a's positions)
     the job is killed with kill -9; more records go to ev-m and ev-a, and topic ev-b is
     created while the job is down. ev-a sorts before ev-m, so a fresh plan numbers the
     splits differently from the run that found it: the restore must number them as its
     checkpoint did (and fail loudly otherwise, never read one partition from another's
     offset);
  4. the restarted job (same checkpoint directory) must bring every record of the three
     topics into the output exactly once, then stops with SIGTERM;
  5. watermarks: a windowed job (1 s tumbling windows, watermark = event time, idle
     timeout 4 s) over 'wm-.*' has fired the windows up to 10 s from wm-m when topic wm-a
     appears with one record at 11.2 s; wm-m then runs on to 20.5 s. The new split joins
     the watermark minimum: only the window [10 s, 11 s) fires while wm-a is active, and
     once it is idle (4 s without a record) the windows up to [19 s, 20 s) fire, its
     record counted in [11 s, 12 s).

Usage: e2e_discovery.py SLUICE BROKER   (exit 77 when kcat is missing)
"""
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from dev_broker import Broker

TIMEOUT = 60

JOB = """SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE src (id BIGINT, tp STRING, part INT, off BIGINT) WITH (
  'connector' = 'kafka', 'topic-pattern' = 'ev-.*',
  'properties.bootstrap.servers' = '%(addr)s',
  'scan.startup.mode' = 'earliest-offset',
  'scan.topic-partition-discovery.interval' = '300 ms',
  'format' = 'json', 'sluice.metadata.tp' = 'topic', 'sluice.metadata.part' = 'partition',
  'sluice.metadata.off' = 'offset');
CREATE TABLE out_t (id BIGINT, tp STRING, part INT, off BIGINT) WITH (
  'connector' = 'filesystem', 'path' = '%(out)s', 'format' = 'csv',
  'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO out_t SELECT id, tp, part, off FROM src;
"""


def produce(addr, topic, ids):
    """Keyed by id, so the records spread over the topic's partitions."""
    lines = "".join("%d\t{\"id\": %d}\n" % (i, i) for i in ids)
    subprocess.run(["kcat", "-P", "-b", addr, "-t", topic, "-K", "\t", "-X", "log_level=3"],
                   input=lines, text=True, check=True, timeout=TIMEOUT)


def read_out(out):
    """(id, topic, partition, offset) of every committed output row."""
    rows = []
    if not os.path.isdir(out):
        return rows
    for fn in sorted(os.listdir(out)):
        if fn.startswith((".", "_")):
            continue
        with open(os.path.join(out, fn)) as f:
            for l in f:
                if l.strip():
                    i, tp, part, off = l.strip().split(",")
                    rows.append((int(i), tp, int(part), int(off)))
    return rows


def wait_for(out, want, p, what):
    """Waits until every id of `want` is in the output; fails if the job died first."""
    deadline = time.time() + 20
    while time.time() < deadline:
        got = {r[0] for r in read_out(out)}
        if want <= got:
            return True
        if p.poll() is not None:
            print("FAIL: %s: the job exited %d: %s" % (what, p.returncode,
                                                     p.stderr.read()[-600:]))
            return False
        time.sleep(0.1)
    print("FAIL: %s: %d of %d ids in the output after 20 s" % (
        what, len(want & {r[0] for r in read_out(out)}), len(want)))
    return False


def start_job(sluice, job, ck):
    return subprocess.Popen([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def check(sluice, broker, work):
    out, ck, job = (os.path.join(work, n) for n in ("out", "ck", "discovery.sql"))
    with open(job, "w") as f:
        f.write(JOB % {"addr": broker.addr, "out": out})
    produce(broker.addr, "ev-m", range(0, 200))
    p = start_job(sluice, job, ck)
    if not wait_for(out, set(range(0, 200)), p, "ev-m at plan time"):
        return False
    # a matching topic created while the job runs; written at once, before the job can
    # have looked again: those records are read only if new partitions start earliest
    broker.command("topic ev-a 3")
    produce(broker.addr, "ev-a", range(1000, 1300))
    if not wait_for(out, set(range(1000, 1300)), p, "ev-a created while running"):
        return False
    time.sleep(0.3)  # a checkpoint or two more holding ev-a's positions
    p.send_signal(signal.SIGKILL)
    p.wait()
    err = p.stderr.read()
    found = [l for l in err.splitlines() if "found ev-a/" in l]
    if len(found) != 3:
        print("FAIL: the job reported %d new partitions of ev-a, want 3: %s" % (
            len(found), err[-600:]))
        return False
    # while it is down: more for both, and a third topic the checkpoint knows nothing of
    produce(broker.addr, "ev-m", range(200, 300))
    produce(broker.addr, "ev-a", range(1300, 1400))
    broker.command("topic ev-b 1")
    produce(broker.addr, "ev-b", range(2000, 2050))
    p = start_job(sluice, job, ck)
    want = set(range(0, 300)) | set(range(1000, 1400)) | set(range(2000, 2050))
    if not wait_for(out, want, p, "after the restore"):
        return False
    p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        print("FAIL: the restored job did not stop on SIGTERM")
        return False
    if p.returncode != 0:
        print("FAIL: the restored job exited %d: %s" % (p.returncode, err[-600:]))
        return False
    rows = read_out(out)
    if os.environ.get("SLUICE_TEST_VERBOSE"):
        print(err)
    ids = collections.Counter(r[0] for r in rows)
    places = collections.Counter((r[1], r[2], r[3]) for r in rows)
    dup = sorted(i for i, c in ids.items() if c > 1)
    lost = sorted(want - set(ids))
    extra = sorted(set(ids) - want)
    if dup or lost or extra or any(c > 1 for c in places.values()):
        print("FAIL: after discovery and restore: %d rows; %d ids duplicated %s, %d lost %s, "
              "%d unexpected %s" % (len(rows), len(dup), dup[:5], len(lost), lost[:5],
                                    len(extra), extra[:5]))
        return False
    topics = collections.Counter(r[1] for r in rows)
    print("ok: discovery: ev-a (created while running) and ev-b (while down) read from "
          "their start; after kill -9 and restore every record once: %s" % dict(topics))
    return True


WM_JOB = """SET 'table.exec.source.idle-timeout' = '4 s';
SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE ev (k INT, ts_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts) WITH (
  'connector' = 'kafka', 'topic-pattern' = 'wm-.*', 'properties.bootstrap.servers' = '%(addr)s',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json',
  'scan.watermark.emit.strategy' = 'on-event',
  'scan.topic-partition-discovery.interval' = '200 ms');
CREATE TABLE wins (w BIGINT, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '%(out)s',
  'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO wins SELECT UNIX_TIMESTAMP(CAST(TUMBLE_START(ts, INTERVAL '1' SECOND) AS STRING))
  - %(base_s)d, COUNT(*) FROM ev GROUP BY TUMBLE(ts, INTERVAL '1' SECOND);
"""


def check_watermarks(sluice, broker, work):
    """The windows fired so far are visible within a checkpoint (100 ms): the sink commits
    its files at each one."""
    base = 1706781600000
    out, ck, job = (os.path.join(work, n) for n in ("wins", "wm_ck", "wm.sql"))

    def ev(ms):
        return "{\"k\": 1, \"ts_ms\": %d}" % (base + ms)

    def plain(topic, vals):
        subprocess.run(["kcat", "-P", "-b", broker.addr, "-t", topic, "-X", "log_level=3"],
                       input="".join(v + "\n" for v in vals), text=True, check=True,
                       timeout=TIMEOUT)

    def windows():
        got = {}
        if os.path.isdir(out):
            for fn in os.listdir(out):
                if not fn.startswith((".", "_")):
                    with open(os.path.join(out, fn)) as f:
                        for l in f:
                            if l.strip():
                                w, n = l.strip().split(",")
                                got[int(w)] = int(n)
        return got

    def wait(pred, secs):
        deadline = time.time() + secs
        while time.time() < deadline:
            if pred():
                return True
            time.sleep(0.05)
        return pred()

    broker.command("topic wm-m 1")  # one partition: its watermark is its records' order
    plain("wm-m", [ev(500 * i) for i in range(22)])  # 0 .. 10.5 s
    with open(job, "w") as f:
        f.write(WM_JOB % {"addr": broker.addr, "out": out, "base_s": base // 1000})
    errf = open(os.path.join(work, "wm.err"), "w+")
    p = subprocess.Popen([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck],
                         stdout=subprocess.DEVNULL, stderr=errf, text=True)

    def err():
        errf.flush()
        with open(errf.name) as f:
            return f.read()
    try:
        if not wait(lambda: len(windows()) >= 10, 20):
            print("FAIL: watermarks: %d windows before wm-a, want 10: %s" % (
                len(windows()), err()[-400:]))
            return False
        broker.command("topic wm-a 1")
        plain("wm-a", [ev(11200)])
        if not wait(lambda: "new split" in err(), 10):
            print("FAIL: watermarks: the job opened no split for wm-a: %s" % err()[-400:])
            return False
        time.sleep(0.5)  # its record fetched and emitted
        plain("wm-m", [ev(11000 + 500 * i) for i in range(20)])  # 11 .. 20.5 s
        # window 10 fires once both wm-a's record (11.2 s) and wm-m's (11 s on) are in;
        # for the idle timeout after wm-a's record no later one may
        if not wait(lambda: 10 in windows(), 10):
            print("FAIL: watermarks: window 10 did not fire: %s" % sorted(windows()))
            return False
        for _ in range(2):
            held = sorted(windows())
            if held != list(range(11)):
                print("FAIL: watermarks: windows %s fired while wm-a holds the watermark "
                      "at 11.2 s, want 0..10: is the new split left out of the minimum?" %
                      held)
                return False
            time.sleep(0.5)
        if not wait(lambda: len(windows()) >= 20, 10):
            print("FAIL: watermarks: windows %s after wm-a went idle, want 0..19" % (
                sorted(windows().items())))
            return False
        time.sleep(0.3)
        got = windows()
        if sorted(got) != list(range(20)) or got[11] != 3:
            print("FAIL: watermarks: want windows 0..19, 11 with 3 records: %s" % got)
            return False
        print("ok: watermarks: a split found while running holds the watermark back (windows "
              "0..10 fired) until it is idle (0..19), its record counted in window 11")
        return True
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
        errf.close()


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    sluice, exe = (os.path.abspath(a) for a in sys.argv[1:3])
    if not shutil.which("kcat"):
        print("SKIP: kcat is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="sluice-kafka-discovery-")
    broker = Broker(exe, ["ev-m:2"])
    try:
        ok = os.environ.get("ONLY_WM") or check(sluice, broker, work)
        ok = check_watermarks(sluice, broker, work) and ok
        return 0 if ok else 1
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
