#!/usr/bin/env python3
"""Kafka source end to end, against the development broker (127.0.0.1 only).

Starts sluice-kafka-broker, checks that kcat can produce to and consume from it, produces
the PyFlink lesson's order events (Debezium JSON lines: those of the shared acceptance case
seed_tumble_5min_per_customer when the checkout has ../shared, else generated ones of the
same shape) with kcat, and runs `sluice run` on SQL jobs reading the topic with
'scan.bounded.mode' = 'latest-offset' into a filesystem sink:

  1. the lesson's 5-minute tumbling window per customer over a 1-partition topic (one split,
     so the watermark sees the events in file order): the rows must equal those of the same
     job reading the events from a file, and, with the shared case, its expected.json
     (Flink's output);
  2. a passthrough over a 3-partition topic keyed by order id on 2 shards, with the
     partition and offset as metadata columns: every event arrives exactly once, and its
     (partition, offset) pairs are exactly the topic's;
  3. malformed messages mixed in: they go to the dead-letter file as topic/partition/offset
     and the job finishes with the good rows;
  4. exactly-once across 20 kill -9s: an unbounded job (checkpoints every 50 ms, exactly-once
     filesystem sink) is killed at random moments while more messages arrive, restarted
     from its checkpoints each time, and finally run bounded to the end: every message is
     in the output exactly once (the source resumed each partition at its checkpointed
     offset);
  5. an idle partition: an unbounded windowed job over 2 partitions, one of which stops
     receiving data, stopped with SIGTERM after a while: with
     'table.exec.source.idle-timeout' the windows after the silent partition's last event
     fire (the busy partition alone moves the watermark); without it they do not.

Usage: e2e_source.py SLUICE BROKER [CASE_DIR]   (exit 77 when kcat is missing)
"""
import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TIMEOUT = 120


def start_broker(broker, topics):
    args = [broker, "--brokers", "2"]
    for t in topics:
        args += ["--topic", t]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    addr = p.stdout.readline().strip()
    if not addr or not all(a.startswith("127.0.0.1:") for a in addr.split(",")):
        p.kill()
        raise SystemExit("FAIL: the broker printed %r, not a 127.0.0.1 bootstrap list" % addr)
    return p, addr


def kcat_produce(addr, topic, lines, partition=None, keyed=False):
    args = ["kcat", "-P", "-b", addr, "-t", topic, "-X", "log_level=3"]
    if partition is not None:
        args += ["-p", str(partition)]
    if keyed:
        args += ["-K", "\t"]
    subprocess.run(args, input="".join(l + "\n" for l in lines), text=True, check=True,
                   timeout=TIMEOUT)


def kcat_count(addr, topic):
    out = subprocess.run(["kcat", "-C", "-b", addr, "-t", topic, "-e", "-q", "-X",
                          "log_level=3", "-f", "%p %o\n"], capture_output=True, text=True,
                         check=True, timeout=TIMEOUT).stdout
    return [tuple(map(int, l.split())) for l in out.splitlines()]


def run_job(sluice, work, name, sql, extra=()):
    job = os.path.join(work, name + ".sql")
    with open(job, "w") as f:
        f.write(sql)
    p = subprocess.run([sluice, "run", job, "--shards", "2"] + list(extra),
                       capture_output=True, text=True, timeout=TIMEOUT)
    if p.returncode != 0:
        raise SystemExit("FAIL: job %s exited %d: %s" % (name, p.returncode, p.stderr[-600:]))
    return p


def read_rows(path):
    rows = []
    files = [path] if os.path.isfile(path) else [
        os.path.join(path, f) for f in sorted(os.listdir(path)) if not f.startswith((".", "_"))]
    for fn in files:
        with open(fn) as f:
            rows += [json.loads(l) for l in f if l.strip()]
    return rows


def norm_ts(v):
    v = str(v).replace("T", " ").rstrip("Z")
    if "." in v:
        v = v.rstrip("0").rstrip(".")
    if len(v) == 16:
        v += ":00"
    return v


SOURCE_COLS = """  payload ROW<
    after ROW<id INT, customer_id INT, total DECIMAL(10,2), status STRING,
              created_at TIMESTAMP(3)>,
    op STRING,
    ts_ms BIGINT
  >"""

TUMBLE = """SET 'table.local-time-zone' = 'UTC';
CREATE TABLE orders_cdc (
%(cols)s,
  event_time AS TO_TIMESTAMP_LTZ(payload.ts_ms, 3),
  WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
) WITH (
  %(source)s,
  'format' = 'json',
  'scan.watermark.emit.strategy' = 'on-event'
);
CREATE TABLE out_t (window_start TIMESTAMP(3), window_end TIMESTAMP(3), customer_id INT,
  order_count BIGINT, total_revenue DECIMAL(18,2))
  WITH ('connector' = 'filesystem', 'path' = '%(out)s', 'format' = 'json');
CREATE VIEW orders_current AS
SELECT payload.after.id AS id, payload.after.customer_id AS customer_id,
       payload.after.total AS total, event_time
FROM orders_cdc WHERE payload.op IN ('c', 'u', 'r');
INSERT INTO out_t
SELECT TUMBLE_START(event_time, INTERVAL '5' MINUTES), TUMBLE_END(event_time, INTERVAL '5' MINUTES),
       customer_id, COUNT(*), SUM(total)
FROM orders_current
GROUP BY TUMBLE(event_time, INTERVAL '5' MINUTES), customer_id;
"""

PASS = """CREATE TABLE orders_cdc (
%(cols)s,
  part INT METADATA FROM 'partition' VIRTUAL,
  `offset` BIGINT METADATA VIRTUAL
) WITH (
  'connector' = 'kafka',
  'topic' = '%(topic)s',
  'properties.bootstrap.servers' = '%(addr)s',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);
CREATE TABLE out_t (id INT, op STRING, ts_ms BIGINT, part INT, off BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%(out)s', 'format' = 'json');
INSERT INTO out_t SELECT payload.after.id, payload.op, payload.ts_ms, part, `offset` FROM orders_cdc;
"""


KAFKA_SRC = """'connector' = 'kafka',
  'topic' = 'orders1',
  'properties.bootstrap.servers' = '%s',
  'properties.group.id' = 'e2e-tumble',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset'"""


def tumble_rows(path):
    return collections.Counter(
        (norm_ts(r["window_start"]), norm_ts(r["window_end"]), r["customer_id"],
         r["order_count"], "%.2f" % r["total_revenue"]) for r in read_rows(path))


def differ(what, got, want):
    print("FAIL: %s: %d rows, expected %d; missing %s; extra %s" % (
        what, sum(got.values()), sum(want.values()), list((want - got).items())[:3],
        list((got - want).items())[:3]))
    return False


def check_tumble(sluice, addr, work, events, case_dir):
    out, fout = os.path.join(work, "tumble_out"), os.path.join(work, "tumble_file_out")
    src = os.path.join(work, "events.jsonl")
    with open(src, "w") as f:
        f.write("".join(e + "\n" for e in events))
    kcat_produce(addr, "orders1", events, partition=0)
    run_job(sluice, work, "tumble", TUMBLE % {"cols": SOURCE_COLS, "out": out,
                                              "source": KAFKA_SRC % addr})
    run_job(sluice, work, "tumble_file", TUMBLE % {
        "cols": SOURCE_COLS, "out": fout,
        "source": "'connector' = 'filesystem', 'path' = '%s'" % src})
    got, from_file = tumble_rows(out), tumble_rows(fout)
    if got != from_file:
        return differ("tumble over Kafka vs over a file", got, from_file)
    if not sum(got.values()):
        print("FAIL: tumble: no windows fired")
        return False
    if case_dir:
        with open(os.path.join(case_dir, "expected.json")) as f:
            want = collections.Counter(
                (norm_ts(r[0]), norm_ts(r[1]), r[2], r[3], r[4])
                for r in json.load(f)["rows"])
        if got != want:
            return differ("tumble over Kafka vs Flink's expected rows", got, want)
    print("ok: tumble 5 min per customer over Kafka: %d rows, equal to the file source's%s" % (
        sum(got.values()), " and to Flink's" if case_dir else ""))
    return True


def gen_events(n=600, seed=5):
    """Debezium order events of the lesson's shape: ts_ms rising with some disorder."""
    rnd = random.Random(seed)
    out, live, ts = [], {}, 1706781600000
    for i in range(n):
        ts += rnd.randint(0, 4000)
        t = ts - rnd.randint(0, 3000)
        if live and rnd.random() < 0.3:
            oid = rnd.choice(sorted(live))
            before = live[oid]
            after = None if rnd.random() < 0.2 else dict(before, status="paid")
            op = "d" if after is None else "u"
        else:
            oid, before, op = 1000 + i, None, "c"
            after = {"id": oid, "customer_id": rnd.randint(1, 20),
                     "total": round(rnd.uniform(5, 500), 2), "status": "pending",
                     "created_at": "2024-02-01 10:00:00.000"}
        if after is None:
            live.pop(oid)
        else:
            live[oid] = after
        out.append(json.dumps({"schema": {"type": "struct"}, "payload": {
            "before": before, "after": after, "op": op, "ts_ms": t}}))
    return out


def check_passthrough(sluice, addr, work, events):
    out = os.path.join(work, "pass_out")
    keyed = []
    for e in events:
        p = json.loads(e)["payload"]
        key = (p["after"] or p["before"])["id"]
        keyed.append("%d\t%s" % (key, e))
    kcat_produce(addr, "orders3", keyed, keyed=True)
    topic = sorted(kcat_count(addr, "orders3"))
    if len(topic) != len(events) or len({p for p, _ in topic}) != 3:
        print("FAIL: kcat consumed %d messages over partitions %s, produced %d" % (
            len(topic), sorted({p for p, _ in topic}), len(events)))
        return False
    run_job(sluice, work, "pass", PASS % {"cols": SOURCE_COLS, "addr": addr, "out": out,
                                          "topic": "orders3"})
    rows = read_rows(out)
    got = sorted((r["part"], r["off"]) for r in rows)
    if got != topic:
        print("FAIL: passthrough read %d (partition, offset) pairs, the topic has %d; "
              "first difference near %s" % (len(got), len(topic),
                                             next((a for a, b in zip(got, topic) if a != b),
                                                  None)))
        return False
    want = collections.Counter((json.loads(e)["payload"]["ts_ms"], json.loads(e)["payload"]["op"])
                               for e in events)
    if collections.Counter((r["ts_ms"], r["op"]) for r in rows) != want:
        print("FAIL: passthrough rows differ from the events produced")
        return False
    print("ok: passthrough over 3 partitions on 2 shards: %d events, each once" % len(rows))
    return True


def check_dead_letters(sluice, addr, work, events):
    out = os.path.join(work, "dl_out")
    dl = os.path.join(work, "dead.jsonl")
    lines = events[:10] + ["{not json", "[1, 2"] + events[10:20]
    kcat_produce(addr, "bad", lines, partition=0)
    run_job(sluice, work, "dl", PASS % {"cols": SOURCE_COLS, "addr": addr, "out": out,
                                        "topic": "bad"}, ["--dead-letter", dl])
    rows = read_rows(out)
    with open(dl) as f:
        places = sorted(json.loads(l)["where"] for l in f if l.strip())
    if len(rows) != 20 or places != ["bad/0/10", "bad/0/11"]:
        print("FAIL: dead letters: %d rows (want 20), dead letters at %s" % (len(rows), places))
        return False
    print("ok: 2 malformed messages dead-lettered as bad/0/10 and bad/0/11, 20 rows read")
    return True


CKPT = """SET 'execution.checkpointing.interval' = '50 ms';
CREATE TABLE src (id BIGINT, part INT, off BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'ck', 'properties.bootstrap.servers' = '%(addr)s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = '%(bound)s',
  'format' = 'json', 'sluice.metadata.part' = 'partition', 'sluice.metadata.off' = 'offset');
CREATE TABLE out_t (id BIGINT, part INT, off BIGINT) WITH ('connector' = 'filesystem',
  'path' = '%(out)s', 'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO out_t SELECT id, part, off FROM src;
"""


def check_kill_restart(sluice, addr, work, kills=20, seed=None):
    seed = int(time.time()) if seed is None else seed
    rnd = random.Random(seed)
    out, ck = os.path.join(work, "ck_out"), os.path.join(work, "ck_dir")
    job = os.path.join(work, "ck.sql")  # one path: it names the job in its checkpoints

    def write_job(bound):
        with open(job, "w") as f:
            f.write(CKPT % {"addr": addr, "bound": bound, "out": out})
    write_job("unbounded")
    n = 0
    for k in range(kills):
        batch = ["%d\t{\"id\": %d}" % (i, i) for i in range(n, n + 1500)]
        n += len(batch)
        kcat_produce(addr, "ck", batch, keyed=True)
        p = subprocess.Popen([sluice, "run", job, "--shards", "2",
                              "--checkpoint-dir", ck], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        time.sleep(rnd.uniform(0.3, 0.9))
        if p.poll() is not None:
            print("FAIL: the unbounded job ended by itself (kill %d, seed %d): %s" % (
                k + 1, seed, p.stderr.read().decode()[-400:]))
            return False
        p.send_signal(signal.SIGKILL)
        p.wait()
    write_job("latest-offset")
    p = subprocess.run([sluice, "run", job, "--shards", "2",
                        "--checkpoint-dir", ck], capture_output=True, text=True,
                       timeout=TIMEOUT)
    if p.returncode != 0:
        print("FAIL: the final bounded run exited %d: %s" % (p.returncode, p.stderr[-400:]))
        return False
    ids = collections.Counter()
    for fn in sorted(os.listdir(out)):
        if fn.startswith((".", "_")):
            continue
        with open(os.path.join(out, fn)) as f:
            ids.update(int(l.split(",")[0]) for l in f if l.strip())
    dup = [i for i, c in ids.items() if c > 1]
    lost = [i for i in range(n) if i not in ids]
    if dup or lost or len(ids) != n:
        print("FAIL: kill -9 (seed %d): %d ids, want %d; %d duplicated (%s), %d lost (%s)" % (
            seed, len(ids), n, len(dup), dup[:5], len(lost), lost[:5]))
        return False
    print("ok: %d kill -9 and restarts: %d messages in the output exactly once" % (kills, n))
    return True


IDLE = """%(set)s
CREATE TABLE ev (k INT, ts_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts) WITH (
  'connector' = 'kafka', 'topic' = '%(topic)s', 'properties.bootstrap.servers' = '%(addr)s',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json',
  'scan.watermark.emit.strategy' = 'on-event');
SELECT TUMBLE_START(ts, INTERVAL '1' SECOND) AS w, COUNT(*) AS n FROM ev
GROUP BY TUMBLE(ts, INTERVAL '1' SECOND);
"""


def idle_windows(sluice, addr, work, topic, with_timeout):
    """Runs the job while partition 0 keeps receiving data after partition 1 went silent."""
    base = 1706781600000
    # both partitions up to 2.5 s before the job starts ...
    both = ["{\"k\": 1, \"ts_ms\": %d}" % (base + 500 * i) for i in range(6)]
    kcat_produce(addr, topic, both, partition=0)
    kcat_produce(addr, topic, both, partition=1)
    job = os.path.join(work, topic + ".sql")
    with open(job, "w") as f:
        f.write(IDLE % {"addr": addr, "topic": topic, "set":
                        "SET 'table.exec.source.idle-timeout' = '300 ms';"
                        if with_timeout else ""})
    p = subprocess.Popen([sluice, "run", job, "--shards", "1"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    # ... then partition 0 alone, up to 10.5 s, one event at a time over ~3 s, so the last
    # ones arrive after partition 1 has been silent past the idle timeout however long the
    # job takes to start
    for i in range(16):
        time.sleep(0.15)
        kcat_produce(addr, topic, ["{\"k\": 1, \"ts_ms\": %d}" % (base + 3000 + 500 * i)],
                     partition=0)
    time.sleep(0.8)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=TIMEOUT)
    if p.returncode != 0:
        raise SystemExit("FAIL: idle job exited %d: %s" % (p.returncode, err[-400:]))
    return sorted(l for l in out.splitlines() if l.startswith("+I"))


def check_idle_partition(sluice, addr, work):
    stuck = idle_windows(sluice, addr, work, "idle_a", False)
    moving = idle_windows(sluice, addr, work, "idle_b", True)
    # without idleness the watermark waits for partition 1 (2.5 s): windows [0, 1) and
    # [1, 2) fire; with it, partition 0 alone reaches 10.5 s: windows up to [9, 10)
    if len(stuck) != 2 or len(moving) != 10:
        print("FAIL: idle partition: %d windows fired without an idle timeout (want 2), %d "
              "with one (want 10): %s / %s" % (len(stuck), len(moving), stuck, moving))
        return False
    print("ok: idle partition: 2 windows fire while it holds the watermark back, 10 once "
          "it is idle")
    return True


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    sluice, broker = (os.path.abspath(a) for a in sys.argv[1:3])
    case_dir = sys.argv[3] if len(sys.argv) == 4 else None
    if not shutil.which("kcat"):
        print("SKIP: kcat is not installed")
        return 77
    if case_dir and os.path.isfile(os.path.join(case_dir, "orders_cdc.jsonl")):
        with open(os.path.join(case_dir, "orders_cdc.jsonl")) as f:
            events = [l.rstrip("\n") for l in f if l.strip()]
    else:
        print("NOTE: the shared acceptance case %s is not there (../shared beside the "
              "checkout): running on generated events, without Flink's expected rows"
              % case_dir, file=sys.stderr)
        case_dir = None
        events = gen_events()
    work = tempfile.mkdtemp(prefix="sluice-kafka-e2e-")
    proc, addr = start_broker(broker, ["probe:1", "orders1:1", "orders3:3", "bad:1", "ck:3", "idle_a:2", "idle_b:2"])
    try:
        kcat_produce(addr, "probe", ["hello"], partition=0)
        if kcat_count(addr, "probe") != [(0, 0)]:
            print("FAIL: kcat could not produce to and consume from the broker")
            return 1
        print("ok: kcat produces to and consumes from the broker at %s" % addr)
        ok = check_tumble(sluice, addr, work, events, case_dir)
        ok = check_passthrough(sluice, addr, work, events) and ok
        ok = check_dead_letters(sluice, addr, work, events) and ok
        ok = check_kill_restart(sluice, addr, work) and ok
        ok = check_idle_partition(sluice, addr, work) and ok
        return 0 if ok else 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
