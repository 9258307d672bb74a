#!/usr/bin/env python3
"""Fault tests of checkpointing and recovery through the sluice CLI, each against the output
of an uninterrupted run (as a multiset of lines of the visible sink files):

  enospc     the checkpoint directory is on a small tmpfs that is filled up after two good
             checkpoints: the failing checkpoints are reported naming the file and "No space
             left on device", the job keeps running to a correct end; a second run is killed
             while the disk is full, space is freed, and the restart restores the last good
             checkpoint. Without permission to mount, SLUICE_CKPT_FAULT=ENOSPC stands in
             (and the output says so).
  eio        SLUICE_CKPT_FAULT=EIO:K fails the K-th state file write: reported with the file
             and "Input/output error", the checkpoint is abandoned (its directory removed),
             later checkpoints succeed; killed after one of them, the restart restores it.
  manifest   the newest complete checkpoint's MANIFEST is truncated after a kill (at a stop
             point right after that checkpoint's commit made output visible): the restart
             names it and the cause, restores the checkpoint before it, and quarantines the
             broken one as corrupt-chk-<n>.
  state      bytes in the middle of a state file of the newest checkpoint are flipped: the
             restart names the file and the CRC32C mismatch, restores the one before.
Every case must end with the exact output of the uninterrupted run: nothing lost, nothing
duplicated.

Usage: faults.py SLUICE [ROWS]
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import common

INTERVAL = "50 ms"


class Case:
    def __init__(self, name):
        self.name = name
        self.fails = []

    def check(self, cond, what):
        print("  %s %s" % ("ok  " if cond else "FAIL", what), flush=True)
        if not cond:
            self.fails.append(what)
        return cond


class Run:
    """A sluice run in the background with its stderr collected in a file."""

    def __init__(self, sluice, job, ck, shards=2, env=None):
        self.errf = tempfile.TemporaryFile()
        self.p = subprocess.Popen(common.cmd(sluice, job, shards, ck),
                                  stdout=subprocess.DEVNULL, stderr=self.errf, env=env)

    def stderr(self):
        self.errf.seek(0)
        return self.errf.read().decode(errors="replace")

    def wait_for(self, pred, timeout=20.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return True
            if self.p.poll() is not None:
                return pred()
            time.sleep(0.002)
        return False

    def kill(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGKILL)
        self.p.wait()

    def finish(self, timeout=120):
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return -1


def show(err, limit=6):
    lines = [l for l in err.splitlines() if l.strip()]
    for l in lines[:limit]:
        print("    | " + l)
    if len(lines) > limit:
        print("    | ... %d more lines" % (len(lines) - limit))


def restored_id(err):
    m = re.findall(r"restoring checkpoint (\d+)", err)
    return int(m[-1]) if m else None


def compare(case, expected, out, what):
    got, hidden = common.visible(out)
    d = common.diff(expected, got)
    case.check(not d, "%s: output equals the uninterrupted run's%s" % (what, ": " + d if d else ""))
    case.check(not hidden, "%s: no hidden part file left (%d)" % (what, len(hidden)))


def fill(path):
    """Writes a file until the filesystem is full; returns the bytes written."""
    n = 0
    chunk = b"\0" * 65536
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                n += f.write(chunk)
        except OSError:
            pass
        try:
            while True:
                n += f.write(b"\0" * 512)
        except OSError:
            pass
    return n


def case_enospc(sluice, work, job, out, expected):
    case = Case("enospc")
    mnt = os.path.join(work, "mnt")
    os.makedirs(mnt, exist_ok=True)
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", mnt],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if m.returncode != 0:
        print("  mount -t tmpfs not permitted (%s): falling back to SLUICE_CKPT_FAULT=ENOSPC:5"
              % m.stdout.decode().strip())
        return case_injected(sluice, work, job, out, expected, "ENOSPC", 5,
                             "No space left on device", case)
    try:
        ck = os.path.join(mnt, "ck")
        filler = os.path.join(mnt, "filler")
        nospace = "No space left on device"
        for part in ("keeps running", "restart after freeing space"):
            print(" %s:" % part)
            common.fresh(out, ck)
            r = Run(sluice, job, ck)
            two = r.wait_for(lambda: len(common.ckpt_ids(ck, True)) >= 2)
            full = fill(filler)
            good = common.ckpt_ids(ck, True)
            hit = r.wait_for(lambda: nospace in r.stderr(), 10.0)
            if part == "keeps running":
                rc = r.finish()
                err = r.stderr()
                show(err)
                case.check(two and hit, "checkpoints ran out of space (tmpfs filled with %d "
                           "bytes after checkpoints %s)" % (full, good))
                case.check(re.search(r"%s/chk-\d+/\S+: .*%s" % (re.escape(ck), nospace), err),
                           "the error names the checkpoint file and the cause")
                case.check(re.search(r"checkpoint \d+ (in \S+ )?(failed|not completed)", err),
                           "the error says the checkpoint failed")
                if rc == 0:
                    print("  the job kept running to its end (exit 0)")
                    compare(case, expected, out, "after the full disk")
                else:
                    # failing the job is a design choice; its last word must be the cause
                    last = err.strip().splitlines()[-1] if err.strip() else ""
                    print("  the job failed (exit %d): %s" % (rc, last))
                    case.check(nospace in last, "the job's final error names the cause (%s)"
                               % nospace)
                    os.unlink(filler)
                    rc, err = common.run(sluice, job, 2, ck)
                    show(err)
                    case.check(rc == 0, "after freeing space the restart finished (exit %d)"
                               % rc)
                    compare(case, expected, out, "after the full disk and a restart")
            else:
                time.sleep(0.1)
                r.kill()
                good = common.ckpt_ids(ck, True)
                os.unlink(filler)
                rc, err = common.run(sluice, job, 2, ck)
                show(err)
                case.check(hit and good, "killed while out of space, complete checkpoints %s"
                           % good)
                case.check(rc == 0, "the restart finished (exit %d)" % rc)
                case.check(good and restored_id(err) == good[-1],
                           "the restart restored the last good checkpoint %s (got %s)" % (
                               good[-1] if good else None, restored_id(err)))
                compare(case, expected, out, "after the restart")
            if os.path.exists(filler):
                os.unlink(filler)
    finally:
        subprocess.run(["umount", "-l", mnt])
    return case


def case_injected(sluice, work, job, out, expected, err_name, nth, cause, case=None):
    """SLUICE_CKPT_FAULT=ERR:nth: a run to the end, then a run killed after a checkpoint newer
    than the failed one and restarted without the fault."""
    case = case or Case(err_name.lower())
    ck = os.path.join(work, "ck-" + case.name)
    env = dict(os.environ, SLUICE_CKPT_FAULT="%s:%d" % (err_name, nth))
    pat = r"checkpoint state file %s/chk-(\d+)/(\S+): write failed: %s" % (re.escape(ck),
                                                                             cause)
    for part in ("to the end", "killed after a later checkpoint"):
        print(" %s:" % part)
        common.fresh(out, ck)
        r = Run(sluice, job, ck, env=env)
        if part == "to the end":
            rc = r.finish()
            err = r.stderr()
            show(err)
            m = re.search(pat, err)
            case.check(m, "the injected %s is reported naming the state file and the cause"
                       % err_name)
            case.check(m and re.search(r"checkpoint %s (in \S+ )?failed" % m.group(1), err),
                       "the checkpoint is reported failed")
            case.check(rc == 0, "the job kept running to its end (exit %d)" % rc)
            compare(case, expected, out, "with the fault")
            continue

        def later():
            m = re.search(pat, r.stderr())
            return m and any(i > int(m.group(1)) for i in common.ckpt_ids(ck, True))
        ok = r.wait_for(later)
        r.kill()
        m = re.search(pat, r.stderr())
        good = common.ckpt_ids(ck, True)
        case.check(ok, "a checkpoint after the failed one completed: %s" % good)
        if m:
            bad = int(m.group(1))
            case.check(not os.path.exists(os.path.join(ck, "chk-%d" % bad)),
                       "the failed checkpoint's directory chk-%d was removed" % bad)
        rc, err = common.run(sluice, job, 2, ck)
        show(err)
        case.check(rc == 0, "the restart finished (exit %d)" % rc)
        case.check(good and restored_id(err) == good[-1],
                   "restored the newest good checkpoint %s (got %s)" % (
                       good[-1] if good else None, restored_id(err)))
        compare(case, expected, out, "after the restart")
    return case


def committed_by_newest(ck, out):
    """True when DIR holds two complete checkpoints and a visible part file the newest one
    committed: its name carries the checkpoint whose precommit named it (jsonl_sink.c), so a
    file named after a checkpoint newer than the one before the newest."""
    ids = common.ckpt_ids(ck, True)
    if len(ids) < 2:
        return False
    for n in os.listdir(out) if os.path.isdir(out) else []:
        m = re.fullmatch(r"part-\d+-(\d+)-\d+\.csv", n)
        if m and ids[-2] < int(m.group(1)) <= ids[-1]:
            return True
    return False


def stop_after_commit(sluice, job, ck, out, first=2, last=60):
    """Runs the job stopped (SIGSTOP, SLUICE_FAULT=stop:sink-commit:N) right after the sink
    commit of checkpoint N, for N = first, first+1, ... until that commit made rows visible,
    and kills it there. The job is short (a few checkpoints of 50 ms), so waiting for that
    moment by the clock races with the next checkpoint and with the end of input; a stop
    point makes the moment the same on every machine. Returns (ok, N or None)."""
    for n in range(first, last + 1):
        common.fresh(out, ck)
        env = dict(os.environ, SLUICE_FAULT="stop:sink-commit:%d" % n)
        r = Run(sluice, job, ck, env=env)
        stopped = r.wait_for(lambda: "SLUICE_FAULT: stopped" in r.stderr(), timeout=120)
        hit = stopped and committed_by_newest(ck, out)
        r.kill()
        if hit:
            return True, n
        if not stopped:  # the job ended before checkpoint n: no later n can stop it
            return False, None
    return False, None


def case_broken(sluice, work, job, out, expected, kind):
    """Kills a run right after a checkpoint whose commit made output visible (with one
    complete checkpoint before it), breaks that newest checkpoint, restarts: falling back to
    the one before must take that output back."""
    case = Case(kind)
    ck = os.path.join(work, "ck-" + kind)
    ok, n = stop_after_commit(sluice, job, ck, out)
    good = common.ckpt_ids(ck, True)
    if not case.check(ok and len(good) >= 2 and good[-1] == n,
                      "stopped and killed right after the commit of checkpoint %s, which made "
                      "output visible; complete checkpoints %s" % (n, good)):
        return case
    newest, prev = good[-1], good[-2]
    d = os.path.join(ck, "chk-%d" % newest)
    if kind == "manifest":
        path = os.path.join(d, "MANIFEST")
        size = os.path.getsize(path)
        os.truncate(path, size // 2)
        print("  truncated %s from %d to %d bytes" % (path, size, size // 2))
        want = r"%s: .+; using an older checkpoint" % re.escape(path)
    else:
        states = sorted(n for n in os.listdir(d) if n.endswith(".state") and
                        os.path.getsize(os.path.join(d, n)) > 0)
        if not case.check(states, "the newest checkpoint has a non-empty state file"):
            return case
        path = os.path.join(d, states[0])
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            f.seek(size // 2)
            b = f.read(4)
            f.seek(size // 2)
            f.write(bytes(x ^ 0x5A for x in b))
        print("  flipped 4 bytes at offset %d of %s (%d bytes)" % (size // 2, path, size))
        want = r"%s: CRC32C [0-9a-f]{8}, the manifest says [0-9a-f]{8} \(corrupt\); using an " \
               r"older checkpoint" % re.escape(path)
    r = Run(sluice, job, ck)
    # retention drops corrupt-chk-<n> once two newer checkpoints complete: look early
    r.wait_for(lambda: "restoring checkpoint" in r.stderr())
    kept = os.path.isdir(os.path.join(ck, "corrupt-chk-%d" % newest))
    later = [i for i in common.ckpt_ids(ck, True) if i > newest]
    rc = r.finish()
    err = r.stderr()
    show(err)
    case.check(re.search(want, err), "the restart names %s and the cause" % path)
    case.check(restored_id(err) == prev, "restored the previous checkpoint %d (got %s)" % (
        prev, restored_id(err)))
    case.check(kept or len(later) >= 2, "the broken checkpoint was kept aside as "
               "corrupt-chk-%d (or already retired by two newer ones: %s)" % (newest, later))
    case.check(rc == 0, "the restart finished (exit %d)" % rc)
    compare(case, expected, out, "after the restart")
    return case


def main():
    sluice = os.path.abspath(sys.argv[1])
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    work = tempfile.mkdtemp(prefix="sluice-faults-")
    t0 = time.monotonic()
    cases = []
    try:
        data = common.make_data(work, rows)
        expected = {}
        jobs = {}
        for name in ("window", "dedup_window"):
            out = os.path.join(work, name + "-out")
            jobs[name] = (common.write_job(work, name, data, out, INTERVAL), out)
            # these cases are about recovering from checkpoints that failed while the job
            # went on: tolerate them (the default, 0, fails the job at the first; that is
            # tests/recovery/ckpt_failures.py)
            with open(jobs[name][0]) as f:
                text = f.read()
            with open(jobs[name][0], "w") as f:
                f.write("SET 'execution.checkpointing.tolerable-failed-checkpoints' = "
                        "'1000';\n" + text)
            rc, err = common.run(sluice, jobs[name][0], 2)
            if rc != 0:
                print("FAIL: the uninterrupted %s run exited %d: %s" % (name, rc, err[-300:]))
                return 1
            expected[name], _ = common.visible(out)
        for title, fn in (
                ("enospc (dedup_window)", lambda: case_enospc(
                    sluice, work, *jobs["dedup_window"], expected["dedup_window"])),
                ("eio (window)", lambda: case_injected(
                    sluice, work, *jobs["window"], expected["window"], "EIO", 3,
                    "Input/output error")),
                ("truncated manifest (window)", lambda: case_broken(
                    sluice, work, *jobs["window"], expected["window"], "manifest")),
                ("corrupt state file (dedup_window)", lambda: case_broken(
                    sluice, work, *jobs["dedup_window"], expected["dedup_window"], "state"))):
            print("%s:" % title, flush=True)
            cases.append((title, fn()))
        bad = [(t, c) for t, c in cases if c.fails]
        for t, c in bad:
            print("FAIL %s: %s" % (t, "; ".join(c.fails)))
        print("faults: %s in %.0f s" % ("FAIL" if bad else "PASS", time.monotonic() - t0))
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
