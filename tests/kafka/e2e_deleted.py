#!/usr/bin/env python3
"""Input records deleted before the job read them: the Kafka source loses those and no more,
and says so (against the development broker, 127.0.0.1 only).

librdkafka's mock cluster keeps at most 5 MiB (or 100,000 message sets) a partition and
drops the oldest beyond that, as a real broker's retention deletes old segments. A
source whose position falls below the log's start then fetches an offset that is gone.
librdkafka's own answer (auto.offset.reset, 'latest' by default) moved it to the END of
the partition: every record still there was skipped, silently, which lost contiguous
blocks of input in the issue's kill -9 run on this broker. The source now goes on at the
log's start and prints how many records were deleted unread.

  A. mid-run: the job has read ids 0..999 and checkpointed; it is paused (SIGSTOP) while
     30,000 larger records are written, which pushes the log's start past its position,
     then resumed: it must read every id still in the topic, and report the deleted ones.
  B. on restore: the job is killed (SIGKILL) after a checkpoint, the same happens while it
     is down, and it restarts bounded from its checkpoint: the same.

Each phase first checks that the broker really deleted records past the job's position
(else it would prove nothing). In the end the output (an exactly-once filesystem sink)
holds each id at most once, every id still in the topic, and exactly as many fewer ids
than were written as the source reported deleted.

Usage: e2e_deleted.py SLUICE BROKER   (exit 77 when kcat is missing)
"""
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from dev_broker import Broker

TIMEOUT = 60
PAD = "p" * 200  # ~250-byte records: 30,000 of them are more than the mock keeps

JOB = """SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE src (id BIGINT, pad STRING) WITH (
  'connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = '%(addr)s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = '%(bound)s',
  'format' = 'json');
CREATE TABLE out_t (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%(out)s',
  'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO out_t SELECT id FROM src;
"""
DELETED = re.compile(r"sluice: kafka in/0: offsets (\d+)\.\.(\d+) were deleted before this "
                     r"job read them .*: (\d+) records lost; reading on from offset (\d+)")


def produce(addr, ids, pad=""):
    subprocess.run(["kcat", "-P", "-b", addr, "-t", "in", "-p", "0", "-X", "log_level=3"],
                   input="".join('{"id": %d, "pad": "%s"}\n' % (i, pad) for i in ids),
                   text=True, check=True, timeout=TIMEOUT)


def topic_ids(addr):
    out = subprocess.run(["kcat", "-C", "-b", addr, "-t", "in", "-e", "-q", "-X",
                          "log_level=3", "-f", "%o %s\n"], capture_output=True, text=True,
                         check=True, timeout=TIMEOUT).stdout
    first = None
    ids = set()
    for line in out.splitlines():
        off, val = line.split(" ", 1)
        first = int(off) if first is None else first
        ids.add(int(re.search(r'"id": (\d+)', val).group(1)))
    return first, ids


def output_ids(out):
    ids = collections.Counter()
    if os.path.isdir(out):
        for fn in sorted(os.listdir(out)):
            if not fn.startswith((".", "_")):
                with open(os.path.join(out, fn)) as f:
                    ids.update(int(l) for l in f if l.strip())
    return ids


def wait_output(out, want, job, what):
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        got = output_ids(out)
        if want <= set(got):
            return got
        if job.poll() is not None:
            break
        time.sleep(0.1)
    missing = sorted(want - set(output_ids(out)))
    raise SystemExit("FAIL: %s: %d ids still in the topic never reached the output (%d..%d "
                     "among them): the source skipped records that were there" % (
                         what, len(missing), missing[0], missing[-1]))


def reported(stderr):
    """(first, last, count, resumed) of each deletion the source reported."""
    return [tuple(map(int, m.groups())) for m in DELETED.finditer(stderr)]


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    sluice, exe = (os.path.abspath(a) for a in sys.argv[1:3])
    if not shutil.which("kcat"):
        print("SKIP: kcat is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="sluice-kafka-deleted-")
    broker = Broker(exe, ["in:1"], nbrokers=1)
    job = None
    try:
        addr = broker.addr
        path, ck, out = (os.path.join(work, n) for n in ("job.sql", "ck", "out"))
        errs = [os.path.join(work, "a.err"), os.path.join(work, "b.err")]

        def write(bound):
            with open(path, "w") as f:
                f.write(JOB % {"addr": addr, "bound": bound, "out": out})

        def start(err):
            return subprocess.Popen([sluice, "run", path, "--shards", "1",
                                     "--checkpoint-dir", ck], stdout=subprocess.DEVNULL,
                                    stderr=open(err, "w"))

        # A: mid-run
        write("unbounded")
        produce(addr, range(1000))
        job = start(errs[0])
        wait_output(out, set(range(1000)), job, "before the deletion")
        job.send_signal(signal.SIGSTOP)
        produce(addr, range(1000, 31000), PAD)
        lo, _ = topic_ids(addr)
        if lo <= 1000:
            print("FAIL: setup: the broker kept offsets from %d, the job's position 1000 was "
                  "not deleted" % lo)
            return 1
        job.send_signal(signal.SIGCONT)
        _, present = topic_ids(addr)
        wait_output(out, present, job, "A (deleted while the job ran)")
        job.send_signal(signal.SIGKILL)
        job.wait()
        with open(errs[0]) as f:
            rep_a = reported(f.read())
        if [(1000, lo - 1, lo - 1000, lo)] != rep_a:
            print("FAIL: A: the source reported %s, want offsets 1000..%d deleted (%d records)"
                  % (rep_a, lo - 1, lo - 1000))
            return 1
        print("ok: A: offsets 1000..%d deleted under the running job: reported, every one of "
              "the %d ids still there read" % (lo - 1, len(present)))

        # B: on restore (the position is that of A's last checkpoint: 31000, all read)
        produce(addr, range(31000, 61000), PAD)
        lo2, present = topic_ids(addr)
        if lo2 <= 31000:
            print("FAIL: setup: the broker kept offsets from %d, the checkpointed position "
                  "31000 was not deleted" % lo2)
            return 1
        write("latest-offset")
        job = start(errs[1])
        try:
            rc = job.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            print("FAIL: B: the bounded run did not end")
            return 1
        with open(errs[1]) as f:
            err_b = f.read()
        if rc != 0:
            print("FAIL: B: the bounded run exited %d: %s" % (rc, err_b[-600:]))
            return 1
        wait_output(out, present, job, "B (deleted while the job was down)")
        rep_b = reported(err_b)
        if [(31000, lo2 - 1, lo2 - 31000, lo2)] != rep_b:
            print("FAIL: B: the source reported %s, want offsets 31000..%d deleted (%d "
                  "records)" % (rep_b, lo2 - 1, lo2 - 31000))
            return 1
        print("ok: B: offsets 31000..%d deleted while the job was down: reported on restore, "
              "every one of the %d ids still there read" % (lo2 - 1, len(present)))

        got = output_ids(out)
        dup = sorted(i for i, c in got.items() if c > 1)
        lost = 61000 - len(got)
        deleted = (lo - 1000) + (lo2 - 31000)
        if dup or lost != deleted or any(i >= 61000 for i in got):
            print("FAIL: output: %d ids of 61000, %d duplicated (%s), %d missing, %d reported "
                  "deleted" % (len(got), len(dup), dup[:5], lost, deleted))
            return 1
        print("ok: output: %d of 61000 ids, each once; the %d missing are exactly those "
              "reported deleted" % (len(got), lost))
        return 0
    finally:
        if job and job.poll() is None:
            job.kill()
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
