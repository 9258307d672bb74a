#!/usr/bin/env python3
""""Why has my window not fired?" on the idle-partition case, against the development Kafka
broker (tools/kafka_broker.c, librdkafka's mock cluster, 127.0.0.1 only).

A windowed job reads a 2-partition topic without an idle timeout; both partitions get
events up to 2.5 s, then only partition 0 goes on (to 10.5 s). Partition 1 is silent and
holds the watermark back, so the windows after 2 s never fire (tests/kafka/e2e_source.py
shows that much from the output). Here the job must say why:

  1. `sluice status --why PID` names kafka partition idle_a/1 as what holds the window
     back, how long it has been silent, and the remedy (table.exec.source.idle-timeout);
  2. /api/status says the same as JSON (why[].held_by), lists both partitions with their
     offsets and lag 0, and /metrics carries the split series, accepted by promtool;
  3. `sluice status --json` through the control socket is the same document, and
     `sluice jobs` lists the job by pid and name;
  4. stopped with SIGTERM, the job prints at its end which windows never fired and that
     partition idle_a/1 held them back;
  5. EXPLAIN WATERMARK FOR ev_view (a view over the table, a sluice extension): asked of
     the running job (`sluice status --watermark ev PID`) and printed by the statement
     after the job stopped: the table's WATERMARK clause, no idle timeout, both splits
     with their watermarks, the window's, and the why entry naming idle_a/1; a name that
     is neither a table nor a view is refused with its place;
  6. the same job with 'table.exec.source.idle-timeout' = '300 ms': partition 1 goes idle,
     the windows fire, and nothing names it as holding anything back.

Usage: why_idle_partition.py SLUICE BROKER   (exit 77 when kcat is missing)
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import fail, get, parse, poll  # noqa: E402

BASE = 1706781600000
JOB = """%(set)s
SET 'pipeline.name' = 'idle_%(topic)s';
CREATE TABLE ev (k INT, ts_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts) WITH (
  'connector' = 'kafka', 'topic' = '%(topic)s', 'properties.bootstrap.servers' = '%(addr)s',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json',
  'scan.watermark.emit.strategy' = 'on-event');
CREATE VIEW ev_view AS SELECT k, ts FROM ev WHERE k > 0;
SELECT TUMBLE_START(ts, INTERVAL '1' SECOND) AS w, COUNT(*) AS n FROM ev_view
GROUP BY TUMBLE(ts, INTERVAL '1' SECOND);
EXPLAIN WATERMARK FOR ev_view;
"""


def produce(addr, topic, partition, lines):
    r = subprocess.run(["kcat", "-P", "-b", addr, "-t", topic, "-p", str(partition),
                        "-X", "log_level=3"], input="\n".join(lines) + "\n", text=True,
                       capture_output=True, timeout=30)
    if r.returncode != 0:
        fail("kcat could not produce to %s/%d: %s" % (topic, partition, r.stderr))


def event(ms):
    return '{"k": 1, "ts_ms": %d}' % (BASE + ms)


class Run:
    """sluice run JOB --http 127.0.0.1:0 with its control socket in a private dir."""

    def __init__(self, sluice, job, rundir):
        env = dict(os.environ, SLUICE_RUN_DIR=rundir)
        self.p = subprocess.Popen([sluice, "run", job, "--shards", "1", "--http",
                                   "127.0.0.1:0"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env)
        self.err, self.out, self.url = [], [], None
        threading.Thread(target=self._read_err, daemon=True).start()
        self.t_out = threading.Thread(target=self._read_out, daemon=True)
        self.t_out.start()
        poll("the job's status page URL", lambda: self.url or self.p.poll() is not None)
        if not self.url:
            fail("sluice exited early: %s" % "".join(self.err))

    def _read_out(self):
        for line in self.p.stdout:
            self.out.append(line)

    def _read_err(self):
        for line in self.p.stderr:
            self.err.append(line)
            m = re.search(r"status page at (http://\S+)/$", line.strip())
            if m:
                self.url = m.group(1)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            fail("the job did not stop on SIGTERM")
        self.t_out.join(10)  # the pipes close with the process
        return rc


def status(sluice, rundir, *args):
    env = dict(os.environ, SLUICE_RUN_DIR=rundir)
    return subprocess.run([sluice, *args], capture_output=True, text=True, env=env,
                          timeout=30)


def start(sluice, addr, work, rundir, topic, idle_timeout):
    produce(addr, topic, 0, [event(500 * i) for i in range(6)])
    produce(addr, topic, 1, [event(500 * i) for i in range(6)])
    job = os.path.join(work, topic + ".sql")
    with open(job, "w") as f:
        f.write(JOB % {"addr": addr, "topic": topic, "set":
                       "SET 'table.exec.source.idle-timeout' = '300 ms';"
                       if idle_timeout else ""})
    run = Run(sluice, job, rundir)
    # partition 0 alone moves on, one event at a time, to 10.5 s
    for i in range(16):
        produce(addr, topic, 0, [event(3000 + 500 * i)])
    return run


def stuck_job(sluice, addr, work, rundir):  # noqa: C901 (one scenario, in order)
    run = start(sluice, addr, work, rundir, "idle_a", False)
    pid = str(run.p.pid)

    # 1. the terminal view names the partition once it has been silent a while
    def why_names_partition():
        r = status(sluice, rundir, "status", "--why", pid)
        if r.returncode != 0:
            fail("sluice status --why %s exited %d: %s" % (pid, r.returncode, r.stderr))
        ok = ("held back by split 1: kafka partition idle_a/1" in r.stdout and
              "has been silent for" in r.stdout and
              "table.exec.source.idle-timeout" in r.stdout)
        return r.stdout if ok else None
    text = poll("status --why to name partition idle_a/1 with the idle-timeout remedy",
                why_names_partition, timeout=40, every=0.3)
    if "'tumble window'" not in text or "windows or timers waiting" not in text:
        fail("status --why does not name the waiting window operator:\n" + text)
    print("status --why:\n" + text[text.index("why:"):], flush=True)

    # 2. /api/status as JSON, /metrics with the split series
    st, ctype, body = get(run.url + "/api/status")
    if st != 200 or ctype != "application/json":
        fail("/api/status answered %d %r" % (st, ctype))
    doc = json.loads(body)
    whys = [w for w in doc["why"] if w["operator"] == "tumble window"]
    if not whys or not whys[0]["held_by"] or whys[0]["held_by"]["name"] != "idle_a/1" or \
            whys[0]["held_by"]["kind"] != "kafka partition" or \
            "idle-timeout" not in whys[0]["remedy"]:
        fail("/api/status why does not name idle_a/1: %r" % doc["why"])
    if whys[0]["held_by"]["silent_ms"] < 1000:
        fail("/api/status: partition 1 silent for only %r ms" % whys[0]["held_by"])
    splits = {s["name"]: s for s in doc["splits"]}
    if set(splits) != {"idle_a/0", "idle_a/1"}:
        fail("/api/status splits: %r" % list(splits))
    if splits["idle_a/1"]["position"] != 6 or splits["idle_a/0"]["position"] < 6:
        fail("/api/status split positions: %r" % splits)
    if splits["idle_a/1"]["lag"] not in (0, -1) or splits["idle_a/1"]["idle"]:
        fail("/api/status: partition 1 has lag or is idle: %r" % splits["idle_a/1"])
    st, _, metrics = get(run.url + "/metrics")
    samples = parse(metrics)
    if not any(n == "sluice_source_split_position" and 'name="idle_a/1"' in lab
               and v == 6 for (n, lab), v in samples.items()):
        fail("/metrics has no sluice_source_split_position 6 for idle_a/1")
    if not any(n == "sluice_stage_busy_ratio" for (n, _) in samples):
        fail("/metrics has no sluice_stage_busy_ratio")
    promtool = shutil.which("promtool")
    if promtool:
        chk = subprocess.run([promtool, "check", "metrics"], input=metrics, text=True,
                             capture_output=True)
        if chk.returncode != 0:
            fail("promtool check metrics: %s%s" % (chk.stdout, chk.stderr))

    # 3. --json through the control socket, and the jobs list
    r = status(sluice, rundir, "status", "--json", pid)
    if r.returncode != 0:
        fail("status --json exited %d: %s" % (r.returncode, r.stderr))
    sdoc = json.loads(r.stdout)
    if sdoc["job"] != "idle_idle_a" or not any(
            w["held_by"] and w["held_by"]["name"] == "idle_a/1" for w in sdoc["why"]):
        fail("status --json: %r" % sdoc.get("why"))
    r = status(sluice, rundir, "jobs")
    if r.returncode != 0 or not re.search(r"^%s\s+idle_idle_a\s+running" % pid, r.stdout,
                                          re.M):
        fail("sluice jobs does not list pid %s: %r %r" % (pid, r.stdout, r.stderr))
    r = status(sluice, rundir, "status", "--watermark", "ev", pid)
    if r.returncode != 0 or "table 'ev': WATERMARK FOR ts AS ts (ascending)" not in r.stdout \
            or "kafka partition idle_a/1" not in r.stdout:
        fail("status --watermark ev: %d %r %r" % (r.returncode, r.stdout, r.stderr))
    r = status(sluice, rundir, "status", "--watermark", "nope", pid)
    if r.returncode == 0 or "reads no table named 'nope'" not in r.stderr:
        fail("status --watermark nope: %d %r" % (r.returncode, r.stderr))
    r = status(sluice, rundir, "status", "999999999")
    if r.returncode == 0 or "no running job" not in r.stderr:
        fail("status of a pid without a job: %d %r" % (r.returncode, r.stderr))

    # 4. the end of the run says which windows never fired and why
    if run.stop() != 0:
        fail("the stuck job exited non-zero: %s" % "".join(run.err))
    err = "".join(run.err)
    if "never fired" not in err or "kafka partition idle_a/1" not in err or \
            "table.exec.source.idle-timeout" not in err:
        fail("the end of the run does not say what held the windows back:\n" + err)
    fired = [line for line in run.out if line.startswith("+I")]
    if len(fired) != 2:
        fail("the stuck job fired %d windows, want 2: %r" % (len(fired), fired))
    out = "".join(run.out)
    for want in ("EXPLAIN WATERMARK FOR ev_view", "job 'idle_idle_a' (its last run)",
                 "table 'ev': WATERMARK FOR ts AS ts (ascending); emitted on every event; "
                 "no idle timeout", "split 0 kafka partition idle_a/0",
                 "split 1 kafka partition idle_a/1", "operator 'tumble window' shard 0",
                 "held back by split 1: kafka partition idle_a/1"):
        if want not in out:
            fail("EXPLAIN WATERMARK FOR ev_view lacks %r:\n%s" % (want, out))
    bad = os.path.join(work, "bad.sql")
    with open(bad, "w") as f:
        f.write(JOB.replace("FOR ev_view", "FOR nope") % {"addr": addr, "topic": "idle_a",
                                                          "set": ""})
    r = subprocess.run([sluice, "explain", bad], capture_output=True, text=True)
    if r.returncode == 0 or "EXPLAIN WATERMARK FOR nope: no table or view of that name" \
            not in r.stderr or not re.search(r"bad\.sql:\d+:\d+:", r.stderr):
        fail("EXPLAIN WATERMARK FOR nope: %d %r" % (r.returncode, r.stderr))
    print("ok: the stuck job names idle_a/1 in status --why, /api/status, --json and at "
          "its end", flush=True)


def moving_job(sluice, addr, work, rundir):
    run = start(sluice, addr, work, rundir, "idle_b", True)
    def fired():
        doc = json.loads(get(run.url + "/api/status")[2] or "{}")
        return sum(i["records_out"] for o in doc.get("operators", [])
                   if o["name"] == "tumble window" for i in o["instances"]) >= 10
    poll("windows to fire with the idle timeout", fired, timeout=40)
    r = status(sluice, rundir, "status", "--why", str(run.p.pid))
    if r.returncode != 0 or "idle_b/1" in r.stdout.split("why:")[-1]:
        fail("with an idle timeout, status --why still blames idle_b/1:\n" + r.stdout)
    doc = json.loads(get(run.url + "/api/status")[2])
    p1 = [s for s in doc["splits"] if s["name"] == "idle_b/1"]
    if not p1 or not p1[0]["idle"]:
        fail("with an idle timeout, partition 1 is not idle: %r" % p1)
    if run.stop() != 0:
        fail("the moving job exited non-zero")
    if "idle_b/1" in "".join(run.err):
        fail("the moving job's end blames idle_b/1:\n" + "".join(run.err))
    print("ok: with an idle timeout the partition is idle and blamed for nothing", flush=True)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    sluice, broker = (os.path.abspath(a) for a in sys.argv[1:3])
    if not shutil.which("kcat"):
        print("SKIP: kcat is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="sluice-why-")
    rundir = os.path.join(work, "run")
    os.mkdir(rundir, 0o700)
    b = subprocess.Popen([broker, "--brokers", "1", "--topic", "idle_a:2", "--topic",
                          "idle_b:2"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        addr = b.stdout.readline().strip()
        if not addr.startswith("127.0.0.1:"):
            fail("the broker printed %r" % addr)
        stuck_job(sluice, addr, work, rundir)
        moving_job(sluice, addr, work, rundir)
    finally:
        b.terminate()
        b.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
