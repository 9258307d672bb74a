#!/usr/bin/env python3
"""Broker faults during produce, commit and fetch, end to end (127.0.0.1 only).

An unbounded job Kafka -> sluice -> Kafka ('sink.delivery-guarantee' = 'exactly-once',
checkpoints every 200 ms, 2 shards, 3 brokers) runs while sluice-kafka-broker injects
faults through its stdin commands, each acknowledged before the test goes on, and more
input arrives around each one:

  A. faults that abort no transaction: Produce, Fetch, AddPartitionsToTxn and EndTxn
     errors that librdkafka retries (NOT_LEADER_FOR_PARTITION, CONCURRENT_TRANSACTIONS,
     COORDINATOR_NOT_AVAILABLE), the leaders of an input and an output partition moved,
     and a broker down for a second then up again. The job must keep running and the
     output, read back, must hold every input id exactly once.
  B. faults that abort one: a Produce error librdkafka does not retry
     (MSG_SIZE_TOO_LARGE), then an EndTxn (commit) error it does not retry
     (INVALID_TXN_STATE). Each time the job must stop with an error that names the topic
     and the cause (the sink's transaction is doomed; sluice has no restart strategy of
     its own, so this test plays Flink's: it restarts the job from its checkpoint
     directory), and after the restart every input id must be in the output: none lost.

Duplicates after B are counted and printed, not failed: librdkafka 2.0.2's mock cluster
does not hide aborted transactions from read_committed consumers (EndTxn writes no control
records), so the rows of the aborted transaction stay visible on this broker and the
restarted job writes them again; a real broker hides them. After A, where nothing was
aborted, duplicates fail the test.

Usage: e2e_faults.py SLUICE BROKER   (exit 77 when kcat is missing)
"""
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from dev_broker import Broker

TIMEOUT = 30
WAIT = 15  # seconds an injected fault may take to be recovered from

JOB = """SET 'execution.checkpointing.interval' = '200 ms';
CREATE TABLE src (id BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = '%(addr)s',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE out_t (id BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = '%(addr)s',
  'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'faults', 'sink.marker-topic' = 'faults_markers');
INSERT INTO out_t SELECT id FROM src;
"""

# (command, what it shows); each is followed by a batch of input and a wait for its output
NO_ABORT = [
    ("error Produce 3 NOT_LEADER_FOR_PARTITION", "produce retried"),
    ("error Fetch 3 NOT_LEADER_FOR_PARTITION", "fetch retried"),
    ("error AddPartitionsToTxn 2 CONCURRENT_TRANSACTIONS", "AddPartitionsToTxn retried"),
    ("error EndTxn 2 COORDINATOR_NOT_AVAILABLE", "commit (EndTxn) retried"),
    ("leader in 0 2", "input leader moved"),
    ("leader out 0 3", "output leader moved"),
]


def produce_start(addr, ids):
    """kcat writing ids to the input; it waits for their acknowledgement (a broker down
    holds it back), so it runs beside the test: produce_wait() collects it."""
    p = subprocess.Popen(["kcat", "-P", "-b", addr, "-t", "in", "-K", "\t", "-X",
                          "log_level=0"], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    p.stdin.write("".join("%d\t{\"id\": %d}\n" % (i, i) for i in ids))
    p.stdin.close()
    return p


def produce_wait(p):
    if p.wait(timeout=TIMEOUT) != 0:
        raise SystemExit("FAIL: kcat could not write the input (exit %d)" % p.returncode)


def produce(addr, ids):
    produce_wait(produce_start(addr, ids))


def output_ids(addr):
    """Every id in the output topic, as a read_committed consumer sees it here."""
    out = subprocess.run(["kcat", "-C", "-b", addr, "-t", "out", "-e", "-q", "-X",
                          "log_level=3", "-X", "isolation.level=read_committed",
                          "-f", "%s\n"], capture_output=True, text=True, timeout=TIMEOUT)
    if out.returncode != 0:
        return collections.Counter()  # the topic has no message yet
    return collections.Counter(json.loads(l)["id"] for l in out.stdout.splitlines()
                               if l.strip())


class Job:
    def __init__(self, sluice, path, ck):
        self.p = subprocess.Popen([sluice, "run", path, "--shards", "2",
                                   "--checkpoint-dir", ck], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)

    def alive(self):
        return self.p.poll() is None

    def stderr(self):
        return self.p.stderr.read()


def wait_ids(addr, want, job, what):
    """Waits until every id of `want` is in the output; returns (ok, counts)."""
    deadline = time.time() + WAIT
    got = collections.Counter()
    while time.time() < deadline:
        got = output_ids(addr)
        if want <= set(got):
            return True, got
        if not job.alive():
            print("FAIL: %s: the job exited %d: %s" % (what, job.p.returncode,
                                                     job.stderr()[-600:]))
            return False, got
        time.sleep(0.2)
    print("FAIL: %s: %d of %d ids in the output after %d s" % (
        what, len(want & set(got)), len(want), WAIT))
    return False, got


def phase_a(broker, job, next_id):
    """Faults that abort nothing: the job rides them out, output exactly once."""
    addr = broker.addr
    want = set(range(next_id))
    steps = NO_ABORT + [("down 2", "broker 2 down for a second, then up")]
    for cmd, what in steps:
        # an injected error is for the next request of that API from anyone: the input is
        # written first and the output not looked at for a while, so that the requests
        # meeting it are the job's (its fetches, rows, AddPartitionsToTxn, markers, EndTxn)
        batch = range(next_id, next_id + 400)
        next_id += 400
        produce(addr, batch)
        want |= set(batch)
        broker.command(cmd)
        if cmd.startswith("down"):
            time.sleep(1.0)  # the job's fetches, produces and commits meet it down
            broker.command("up 2")
        time.sleep(0.5)
        ok, got = wait_ids(addr, want, job, "after '%s' (%s)" % (cmd, what))
        if not ok:
            return False, next_id
        print("ok: %-50s %5d ids in the output" % ("'%s': %s" % (cmd, what), len(want)))
    dup = sorted(i for i, c in got.items() if c > 1)
    extra = sorted(set(got) - want)
    if dup or extra:
        print("FAIL: after faults that abort no transaction: %d ids duplicated %s, %d "
              "unexpected %s" % (len(dup), dup[:5], len(extra), extra[:5]))
        return False, next_id
    print("ok: phase A: %d ids, each exactly once, through %d faults" % (len(want),
                                                                           len(steps)))
    return True, next_id


# (command, what it dooms, a test on the job's error lines naming the cause)
ABORTS = [
    # the next Produce after the input is written is the job's (its rows or the marker it
    # produces into every checkpoint's transaction)
    ("error Produce 1 MSG_SIZE_TOO_LARGE", "a Produce error librdkafka does not retry",
     lambda l: "delivery failed" in l and "too large" in l and
     ("topic 'out'" in l or "topic 'faults_markers'" in l)),
    # a commit (EndTxn) the coordinator refuses for good
    ("error EndTxn 1 INVALID_TXN_STATE", "an EndTxn error librdkafka does not retry",
     lambda l: "committing checkpoint" in l and "topic 'out'" in l and
     "state" in l.lower()),
]


def phase_abort(broker, sluice, path, ck, job, next_id, cmd, what, names_cause):
    """A fault that dooms the open transaction: the job stops with a clear error; a restart
    from the checkpoint directory loses nothing. Returns (ok, running job, next id)."""
    addr = broker.addr
    before = output_ids(addr)
    batch = range(next_id, next_id + 400)
    next_id += 400
    produce(addr, batch)
    broker.command(cmd)
    try:
        job.p.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        print("FAIL: '%s' (%s) did not stop the job" % (cmd, what))
        return False, job, next_id
    err = job.stderr()
    cause = [l for l in err.splitlines() if names_cause(l)]
    if job.p.returncode == 0 or not cause:
        print("FAIL: after '%s' the job exited %d without an error naming the topic and the "
              "cause: %s" % (cmd, job.p.returncode, err[-600:]))
        return False, job, next_id
    print("ok: '%s' (%s) stopped the job: %s" % (cmd, what, cause[0].strip()))
    # Flink's restart strategy, by hand: the same job from its checkpoint directory
    job = Job(sluice, path, ck)
    want = set(range(next_id))
    ok, got = wait_ids(addr, want, job, "after the restart that followed '%s'" % cmd)
    if not ok:
        return False, job, next_id
    lost = sorted(want - set(got))
    extra = sorted(set(got) - want)
    dup = sum(c - 1 for c in got.values() if c > 1)
    dup_before = sum(c - 1 for c in before.values() if c > 1)
    if lost or extra:
        print("FAIL: after '%s' and a restart: %d ids lost %s, %d unexpected %s" % (
            cmd, len(lost), lost[:5], len(extra), extra[:5]))
        return False, job, next_id
    print("ok: after it and a restart from the checkpoint all %d ids are in the output, "
          "none lost; %d duplicate rows (%d before): rows of the aborted transaction that "
          "landed and were written again, which this mock broker shows to read_committed "
          "and a real broker hides" % (len(want), dup, dup_before))
    return True, job, next_id


def stop(job):
    job.p.send_signal(signal.SIGTERM)
    try:
        job.p.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        job.p.kill()
        print("FAIL: the job did not stop on SIGTERM")
        return False
    if job.p.returncode != 0:
        print("FAIL: the job exited %d on SIGTERM: %s" % (job.p.returncode,
                                                        job.stderr()[-600:]))
        return False
    return True


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    sluice, exe = (os.path.abspath(a) for a in sys.argv[1:3])
    if not shutil.which("kcat"):
        print("SKIP: kcat is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="sluice-kafka-faults-")
    broker = Broker(exe, ["in:4", "out:2", "faults_markers:1"], nbrokers=3)
    job = None
    try:
        path, ck = os.path.join(work, "faults.sql"), os.path.join(work, "ck")
        with open(path, "w") as f:
            f.write(JOB % {"addr": broker.addr})
        produce(broker.addr, range(0, 1000))
        job = Job(sluice, path, ck)
        ok, _ = wait_ids(broker.addr, set(range(1000)), job, "before any fault")
        if not ok:
            return 1
        ok, next_id = phase_a(broker, job, 1000)
        if not ok:
            return 1
        for cmd, what, names_cause in ABORTS:
            ok, job, next_id = phase_abort(broker, sluice, path, ck, job, next_id, cmd, what,
                                           names_cause)
            if not ok:
                return 1
        return 0 if stop(job) else 1
    finally:
        if job and job.alive():
            job.p.kill()
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
