#!/usr/bin/env python3
"""Soak: a windowed job under kill -9 for a long time (issue 13, item 15). Not a test and
not a throughput figure: run it by hand, e.g. for the 30 minutes the issue asks for

    bench/soak.py build-release/sluice --minutes 30

A rate-limited bounded datagen job (a sequence id, an event-time column, 1 s tumbling
counts and sums per MOD(id, 16), into an exactly-once filesystem sink) checkpoints every
second on 2 shards, with RocksDB state when --state-backend rocksdb. Every ~20 s (uniform
in 15..25 s) the run is killed with SIGKILL and started again with the same checkpoint
directory, until the input is done. Before each kill it samples the process: RSS, open
file descriptors, and the disk used by the checkpoint directory and the state's $TMPDIR.
At the end the sink's visible output is compared with an uninterrupted run of the same job
(at full speed), and the samples are printed with their first and last thirds' averages,
so growth over time shows: a flat soak has RSS, files and disk within noise of each other.

Exit 0 when the output is exact; 1 otherwise. Prints one line per kill and a summary.
"""
import argparse
import collections
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

JOB = """SET 'execution.checkpointing.interval' = '1 s';
CREATE TABLE gen (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen', 'number-of-rows' = '%(rows)d', 'rows-per-second' = '%(rate)d',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%(last)d',
  'fields.ts.kind' = 'event-time', 'fields.ts.step' = '1 ms');
CREATE TABLE out_t (k BIGINT, w TIMESTAMP(3), n BIGINT, s BIGINT) WITH (
  'connector' = 'filesystem', 'path' = '%(out)s', 'format' = 'csv',
  'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO out_t SELECT MOD(id, 16), window_start, COUNT(*), SUM(id)
FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY MOD(id, 16), window_start, window_end;
"""


def visible(out):
    lines = collections.Counter()
    if os.path.isdir(out):
        for name in os.listdir(out):
            if name[0] in "._":
                continue
            with open(os.path.join(out, name)) as f:
                lines.update(l.strip() for l in f if l.strip())
    return lines


def du(path):
    total = 0
    seen = set()
    for root, _, files in os.walk(path):
        for f in files:
            try:
                st = os.lstat(os.path.join(root, f))
            except OSError:
                continue
            if st.st_ino not in seen:  # hard links (RocksDB checkpoints) once
                seen.add(st.st_ino)
                total += st.st_blocks * 512
    return total


def sample(pid, ck, tmp):
    rss = 0
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
        fds = len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return None
    return rss, fds, du(ck) + du(tmp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sluice")
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--kill-every", type=float, default=20)
    ap.add_argument("--rate", type=int, default=20000)
    ap.add_argument("--state-backend", default="heap")
    a = ap.parse_args()
    sluice = os.path.abspath(a.sluice)
    rows = int(a.rate * a.minutes * 60)
    work = tempfile.mkdtemp(prefix="sluice-soak-")
    rng = random.Random(15)
    try:
        tmp = os.path.join(work, "tmp")
        os.mkdir(tmp)
        env = dict(os.environ, TMPDIR=tmp)
        jobs = {}
        for name, rate in (("ref", 0), ("soak", a.rate)):
            out = os.path.join(work, name + "-out")
            jobs[name] = (os.path.join(work, name + ".sql"), out)
            with open(jobs[name][0], "w") as f:
                f.write(JOB % {"rows": rows, "last": rows - 1, "rate": rate, "out": out})
        job, out = jobs["soak"]
        ck = os.path.join(work, "ck")
        cmd = [sluice, "run", job, "--shards", "2", "--quiet", "--checkpoint-dir", ck,
               "--state-backend", a.state_backend]
        samples, kills, t0 = [], 0, time.monotonic()
        print("soak: %d rows at %d/s (%.0f min), a kill every ~%.0f s, %s state" % (
            rows, a.rate, a.minutes, a.kill_every, a.state_backend), flush=True)
        while True:
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            try:
                p.wait(timeout=rng.uniform(0.75, 1.25) * a.kill_every)
            except subprocess.TimeoutExpired:
                s = sample(p.pid, ck, tmp)
                p.send_signal(signal.SIGKILL)
                p.wait()
                kills += 1
                if s:
                    samples.append(s)
                    print("kill %3d at %6.0f s: RSS %6.1f MiB, %4d fds, disk %8.0f KiB" % (
                        kills, time.monotonic() - t0, s[0] / 2**20, s[1], s[2] / 1024),
                        flush=True)
                p.stderr.close()
                continue
            err = p.stderr.read().decode(errors="replace")
            p.stderr.close()
            if p.returncode:
                print("FAIL: a run exited %d: %s" % (p.returncode, err[-400:]))
                return 1
            break
        ref_job, ref_out = jobs["ref"]
        subprocess.run([sluice, "run", ref_job, "--shards", "2", "--quiet"], check=True,
                       stdout=subprocess.DEVNULL, timeout=3600)
        want, got = visible(ref_out), visible(out)
        lost, extra = want - got, got - want
        print("%d kills in %.0f s; %d windows, %d lost, %d duplicated or wrong" % (
            kills, time.monotonic() - t0, sum(want.values()), sum(lost.values()),
            sum(extra.values())))
        if len(samples) >= 3:
            third = max(1, len(samples) // 3)
            for i, what, unit, div in ((0, "RSS", "MiB", 2**20), (1, "open files", "", 1),
                                       (2, "disk", "KiB", 1024)):
                first = sum(s[i] for s in samples[:third]) / third / div
                last = sum(s[i] for s in samples[-third:]) / third / div
                print("%-10s first third %8.1f %s, last third %8.1f %s (x%.2f)" % (
                    what, first, unit, last, unit, last / first if first else 0))
        return 0 if want == got else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
