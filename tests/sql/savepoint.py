#!/usr/bin/env python3
"""Savepoints through the control socket, end to end with the CLI.

A windowed count (datagen with event time -> TUMBLE -> exactly-once filesystem sink) is run
once without interruption for the expected rows. Then:

1. stop-with-savepoint: the job runs with --control SOCK; `sluice stop --savepoint=DIR SOCK`
   stops it and prints the savepoint; `sluice run --from-savepoint PATH` finishes the job
   (on the same shard count: datagen deals its rows over one split per shard, so another
   count would generate other rows; restoring on other shard counts is covered by
   tests/unit/runtime/checkpoint_dir_test.c and the recovery tests). The visible rows of both runs must be the expected rows exactly.
2. savepoint then crash: `sluice savepoint SOCK DIR` while the job runs, then kill -9; a run
   from that savepoint must end with the expected rows exactly (what the killed run wrote
   after the savepoint was never committed, and recovery discards it).
3. refusal: the savepoint restored into a job with another query is refused with a message
   naming the savepoint, and a missing savepoint directory is an error naming it; a
   savepoint into a directory that cannot be written fails with its name, and the job goes
   on.
4. RocksDB keyed state: an updating GROUP BY (keyed state in RocksDB, not window slices)
   with --state-backend rocksdb and a checkpoint directory, so its checkpoints are native;
   a savepoint taken while it runs is in the logical format (state files only, no
   op<id>-s<shard>/ RocksDB directories) and restores on the heap and on RocksDB to the
   reference's final counts; the native checkpoint restored on the heap is refused with a
   message saying so.

Usage: savepoint.py SLUICE
"""
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROWS = 120000
RATE = 30000  # a run takes about 4 s

JOB = """SET 'parallelism.default' = '2';
CREATE TABLE gen (user_id BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen',
  'number-of-rows' = '%(rows)d', 'rows-per-second' = '%(rate)d', 'seed' = '7',
  'fields.user_id.min' = '1', 'fields.user_id.max' = '40',
  'fields.ts.kind' = 'event-time', 'fields.ts.step' = '10 ms',
  'fields.ts.max-disorder' = '300 ms');
CREATE TABLE out_t (user_id BIGINT, w TIMESTAMP(3), c BIGINT) WITH (
  'connector' = 'filesystem', 'path' = '%(out)s', 'format' = 'csv',
  'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO out_t SELECT user_id, window_start, %(agg)s
FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '2' SECOND))
GROUP BY user_id, window_start, window_end;
"""


GROUP_JOB = """SET 'parallelism.default' = '2';
CREATE TABLE gen (user_id BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'datagen',
  'number-of-rows' = '%(rows)d', 'rows-per-second' = '%(rate)d', 'seed' = '7',
  'fields.user_id.min' = '1', 'fields.user_id.max' = '5000',
  'fields.ts.kind' = 'event-time', 'fields.ts.step' = '10 ms');
CREATE TABLE out_t (user_id BIGINT, n BIGINT) WITH ('connector' = 'print');
INSERT INTO out_t SELECT user_id, COUNT(*) FROM gen GROUP BY user_id;
"""


def final_counts(text):
    """The last count printed per user by an updating GROUP BY (+I / +U rows)."""
    last = {}
    for line in text.splitlines():
        for tag in ("+I[", "+U["):
            i = line.find(tag)
            if i >= 0:
                k, v = line[i + 3:line.index("]", i)].split(", ")
                last[int(k)] = int(v)
    return last


def rocksdb_phase(sluice, work):
    job = os.path.join(work, "group.sql")
    with open(job, "w") as f:
        f.write(GROUP_JOB % {"rows": ROWS, "rate": RATE})
    ref = subprocess.run([sluice, "run", job, "--quiet"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=120)
    want = final_counts(ref.stdout.decode())
    if ref.returncode or sum(want.values()) != ROWS:
        fail("group reference run: %d rows counted: %s" % (sum(want.values()),
                                                          ref.stderr.decode()[-400:]))
    ck, spdir, sock = (os.path.join(work, n) for n in ("gck", "gsp", "g.sock"))
    p = subprocess.Popen([sluice, "run", job, "--quiet", "--state-backend", "rocksdb",
                          "--checkpoint-dir", ck, "--control", sock],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_socket(sock, p)
    time.sleep(1.0)
    s = subprocess.run([sluice, "savepoint", sock, spdir], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    if p.wait(timeout=120) or s.returncode:
        fail("rocksdb run or its savepoint failed: " + s.stderr.decode()[-400:])
    sp = s.stdout.decode().strip().splitlines()[-1]
    for root, dirs, files in os.walk(sp):
        if any(d.startswith("op") for d in dirs):
            fail("the savepoint %s holds native RocksDB directories %s" % (sp, dirs))
    natives = [d for c in os.listdir(ck) for d in os.listdir(os.path.join(ck, c))
               if d.startswith("op") and os.path.isdir(os.path.join(ck, c, d))]
    if not natives:
        fail("the rocksdb run's checkpoints in %s are not native" % ck)
    for backend in ("heap", "rocksdb"):
        r = subprocess.run([sluice, "run", job, "--quiet", "--state-backend", backend,
                            "--from-savepoint", sp], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        got = final_counts(r.stdout.decode())
        if r.returncode or got != want:
            fail("savepoint of the rocksdb job restored on %s: %d of %d users right: %s" % (
                backend, sum(1 for k in want if got.get(k) == want[k]), len(want),
                r.stderr.decode()[-400:]))
    r = subprocess.run([sluice, "run", job, "--quiet", "--state-backend", "heap",
                        "--checkpoint-dir", ck], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=120)
    err = r.stderr.decode()
    if r.returncode == 0 or "native format" not in err:
        fail("a native checkpoint restored on the heap was not refused clearly: " + err[-400:])
    print("ok: rocksdb: native checkpoints, a logical savepoint restored on heap and rocksdb, "
          "the native checkpoint refused on the heap")


def write_job(work, name, out, agg="COUNT(*)"):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(JOB % {"rows": ROWS, "rate": RATE, "out": out, "agg": agg})
    return path


def visible_rows(out):
    rows = collections.Counter()
    if not os.path.isdir(out):
        return rows
    for name in os.listdir(out):
        if name.startswith(".") or name.startswith("_"):
            continue
        with open(os.path.join(out, name)) as f:
            rows.update(l for l in f.read().splitlines() if l)
    return rows


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def wait_socket(sock, p):
    for _ in range(200):
        if os.path.exists(sock):
            return
        if p.poll() is not None:
            fail("the job exited before its control socket appeared: " +
                 p.stderr.read().decode()[-400:])
        time.sleep(0.02)
    fail("no control socket at " + sock)


def compare(got, want, what):
    if got != want:
        lost = want - got
        dup = got - want
        fail("%s: %d rows lost, %d extra (e.g. lost %s, extra %s)" % (
            what, sum(lost.values()), sum(dup.values()), list(lost)[:3], list(dup)[:3]))


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-sp-")
    try:
        ref_out = os.path.join(work, "ref")
        p = subprocess.run([sluice, "run", write_job(work, "ref.sql", ref_out), "--quiet"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
        if p.returncode:
            fail("reference run: " + p.stderr.decode()[-400:])
        want = visible_rows(ref_out)
        if sum(want.values()) < 100:
            fail("the reference run wrote only %d rows" % sum(want.values()))

        # 1. stop with a savepoint, resume
        out = os.path.join(work, "out1")
        job = write_job(work, "job1.sql", out)
        sock = os.path.join(work, "c1.sock")
        spdir = os.path.join(work, "savepoints")
        p = subprocess.Popen([sluice, "run", job, "--control", sock, "--quiet"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_socket(sock, p)
        time.sleep(1.5)
        s = subprocess.run([sluice, "stop", "--savepoint=" + spdir, sock],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if s.returncode:
            fail("sluice stop --savepoint: " + s.stderr.decode())
        sp = s.stdout.decode().strip()
        if not sp.startswith(spdir + "/savepoint-") or not os.path.isdir(sp):
            fail("stop printed %r, not a savepoint under %s" % (sp, spdir))
        if p.wait(timeout=60) != 0:
            fail("the stopped job exited %d: %s" % (p.returncode, p.stderr.read().decode()))
        before = sum(visible_rows(out).values())
        if before >= sum(want.values()):
            fail("the job was not stopped early (%d rows of %d)" % (before,
                                                                     sum(want.values())))
        r = subprocess.run([sluice, "run", job, "--from-savepoint", sp],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
        err = r.stderr.decode()
        if r.returncode:
            fail("run --from-savepoint: " + err[-400:])
        if "restoring savepoint" not in err:
            fail("the resumed run did not say it restored the savepoint: " + err[-400:])
        compare(visible_rows(out), want, "stop-with-savepoint then resume")
        print("ok: stop --savepoint after %d of %d rows, resumed: exact" % (
            before, sum(want.values())))

        # 2. savepoint while running, then kill -9, then restore
        out = os.path.join(work, "out2")
        job = write_job(work, "job2.sql", out)
        sock = os.path.join(work, "c2.sock")
        p = subprocess.Popen([sluice, "run", job, "--control", sock, "--quiet"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_socket(sock, p)
        time.sleep(1.0)
        s = subprocess.run([sluice, "savepoint", sock, spdir], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        if s.returncode:
            fail("sluice savepoint: " + s.stderr.decode())
        sp2 = s.stdout.decode().strip()
        # a directory that cannot be written: the savepoint fails with the cause, the job
        # goes on (its checkpoint itself was fine)
        s = subprocess.run([sluice, "savepoint", sock, "/proc/sluice-no-such-dir"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        err = s.stderr.decode()
        if s.returncode == 0 or "/proc/sluice-no-such-dir" not in err:
            fail("a savepoint into an unwritable directory did not fail with its name: "
                 "exit %d: %s" % (s.returncode, err))
        time.sleep(0.5)
        if p.poll() is not None:
            fail("the job ended before it could be killed")
        p.send_signal(signal.SIGKILL)
        p.wait()
        r = subprocess.run([sluice, "run", job, "--from-savepoint", sp2],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
        if r.returncode:
            fail("run from the savepoint after kill -9: " + r.stderr.decode()[-400:])
        compare(visible_rows(out), want, "savepoint, kill -9, restore")
        print("ok: savepoint while running, kill -9, restore: exact")

        # 3. refusals
        other = write_job(work, "other.sql", os.path.join(work, "out3"), agg="MAX(user_id)")
        r = subprocess.run([sluice, "run", other, "--from-savepoint", sp], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        err = r.stderr.decode()
        if r.returncode == 0 or sp not in err:
            fail("a savepoint of another job was not refused with its name: exit %d: %s" %
                 (r.returncode, err[-400:]))
        missing = os.path.join(work, "no-such-savepoint")
        r = subprocess.run([sluice, "run", job, "--from-savepoint", missing],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        err = r.stderr.decode()
        if r.returncode == 0 or missing not in err or "No such file" not in err:
            fail("a missing savepoint was not an error naming it: " + err[-400:])
        r = subprocess.run([sluice, "savepoint", os.path.join(work, "nobody.sock"), spdir],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if r.returncode == 0 or "no running job" not in r.stderr.decode():
            fail("a savepoint of no job did not fail clearly: " + r.stderr.decode())
        print("ok: refusals name the savepoint and the cause")
        rocksdb_phase(sluice, work)
        print("savepoint: all passed")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
