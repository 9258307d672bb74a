#!/usr/bin/env python3
"""A zombie's state files never land on its successor's: run A of a windowed job is stopped
(SIGSTOP, SLUICE_FAULT=stop:barrier-injected:N) after it began checkpoint N; run B takes over
the same checkpoint directory, restores the checkpoint before, makes its own chk-N and is
stopped at the same point; A is let go, writes its state files of checkpoint N into what
is now B's chk-N, and is killed; then B goes on. B must complete its checkpoints (the
default tolerable-failed-checkpoints, 0, fails the job at the first failure) and end with
the output of an uninterrupted run. Before state file names carried their run, A's files
took B's names and B's own write of them failed (files are created O_EXCL): B failed.

Usage: zombie_files.py [--state-backend B] [--job NAME] SLUICE [ROWS]   (NAME of common.JOBS;
with rocksdb, keyed state is a native checkpoint directory, named by its run as well)
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import common

N = 3  # the checkpoint the zombie is stopped in


def spawn(sluice, job, ck, errf):
    env = dict(os.environ, SLUICE_FAULT="stop:barrier-injected:%d" % N)
    return subprocess.Popen(common.cmd(sluice, job, 1, ck), stdout=subprocess.DEVNULL,
                            stderr=errf, env=env)


def text(errf):
    errf.seek(0)
    return errf.read().decode(errors="replace")


def wait_for(pred, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.005)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--state-backend")
    ap.add_argument("--job", default="window")
    ap.add_argument("sluice")
    ap.add_argument("rows", nargs="?", type=int, default=300000)
    a = ap.parse_args()
    sluice, rows = os.path.abspath(a.sluice), a.rows
    if a.state_backend:
        common.EXTRA[:] = ["--state-backend", a.state_backend]
    work = tempfile.mkdtemp(prefix="sluice-zombie-")
    fails = []

    def check(cond, what):
        print("  %s %s" % ("ok  " if cond else "FAIL", what), flush=True)
        if not cond:
            fails.append(what)
        return cond

    data = common.make_data(work, rows)
    out = os.path.join(work, "out")
    ck = os.path.join(work, "ck")
    job = common.write_job(work, a.job, data, out, "50 ms")
    rc, err = common.run(sluice, job, 1)
    if rc != 0:
        print("FAIL: the uninterrupted run exited %d: %s" % (rc, err[-300:]))
        return 1
    expected, _ = common.visible(out)
    common.fresh(out, ck)
    a_err, b_err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    a = spawn(sluice, job, ck, a_err)
    b = None
    try:
        if not check(wait_for(lambda: "SLUICE_FAULT: stopped" in text(a_err)),
                     "run A stopped in checkpoint %d" % N):
            return 1
        b = spawn(sluice, job, ck, b_err)
        if not check(wait_for(lambda: "SLUICE_FAULT: stopped" in text(b_err)),
                     "run B took over and stopped in its checkpoint %d: %s" % (
                         N, " | ".join(text(b_err).splitlines()[:3]))):
            return 1
        check(re.search(r"restoring checkpoint %d" % (N - 1), text(b_err)),
              "run B restored checkpoint %d" % (N - 1))
        chk = os.path.join(ck, "chk-%d" % N)
        before = set(os.listdir(chk)) if os.path.isdir(chk) else set()
        check(not [n for n in before if n.startswith("op")],
              "B's chk-%d holds no state file yet: %s" % (N, sorted(before)))
        a.send_signal(signal.SIGCONT)
        landed = wait_for(lambda: any(n.startswith("op") for n in os.listdir(chk)))
        zombie = sorted(n for n in os.listdir(chk) if n.startswith("op"))
        a.kill()
        a.wait()
        check(landed, "the zombie A wrote its state files of checkpoint %d into B's "
              "directory: %s" % (N, zombie))
        b.send_signal(signal.SIGCONT)
        try:
            rc = b.wait(timeout=120)
        except subprocess.TimeoutExpired:
            b.kill()
            rc = -1
        err = text(b_err)
        for line in [l for l in err.splitlines() if l.strip()][:6]:
            print("    | " + line)
        check(rc == 0, "run B finished (exit %d)" % rc)
        check("File exists" not in err, "no state file of B's was already there")
        got, hidden = common.visible(out)
        d = common.diff(expected, got)
        check(not d, "B's output equals the uninterrupted run's%s" % (": " + d if d else ""))
    finally:
        for p in (a, b):
            if p and p.poll() is None:
                p.kill()
                p.wait()
    print("zombie_files: %s" % ("PASS" if not fails else "FAIL (%d)" % len(fails)))
    if not fails:
        common.fresh(work)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
