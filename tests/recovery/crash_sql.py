#!/usr/bin/env python3
"""Exactly-once across SIGKILL for three stateful SQL jobs reading files (event-time HOP
windows, an event-time temporal join, ROW_NUMBER dedup feeding TUMBLE windows), each writing
through the exactly-once filesystem sink with a checkpoint every 100 ms.

For each job: an uninterrupted run gives the expected output. Then the job runs with
--checkpoint-dir and is killed with SIGKILL, restarted, killed again ..., and when it is let
run it must finish with a visible output (files not starting with '.') equal to the
expected one as a multiset of lines, and no hidden file left. A round ends when a run finishes
on its own; rounds repeat (fresh directories) until the job had KILLS kills. Kill moments:
  random   a random delay into the run (mostly mid-record)
  early    within the first 60 ms: mid-restore (pending commits, discards, state loading)
  barrier  1-4 ms after a new chk-<n> directory appears: shards snapshotting, state files
           being written (store.c: begin makes chk-<n> before the barrier is injected)
  commit   0-2 ms after chk-<n>/MANIFEST appears: the sink's renames of checkpoint n
Phase "same" restarts with --shards 2 every time; phase "rescale" restarts with 2, 1, 3
shards in turn (key groups move between shards; the sink's part files change owners).
Last, "after-finish": the job is started once more on the checkpoint directory of a run that
finished, which is what a SIGKILL landing after the end-of-input flush (the last part files
renamed) and before the process exits leaves behind: it must not change the output.

Usage: crash_sql.py [--state-backend B] [--kills N] [--jobs a,b] SLUICE [SEED] [ROWS]
(the seed is printed; pass it to replay the kill plan, 0 for a new one; the moments themselves are timing and
only approximately replayed). --state-backend rocksdb runs every job on RocksDB, whose
checkpoints are native (hard-linked SST files); --kills N sets the kills of phase "same"
(default 20; "rescale" keeps a third of it, at least 2); --jobs picks jobs of common.JOBS
or common.HAND_JOBS (those run only when named: regular_join, a self-join of the orders
holding 2 M rows of join state, passes 26 kills with rescaling in about 6 minutes).
"""
import os
import signal
import subprocess
import sys
import tempfile
import time
import random
import shutil
import collections

import common

KILLS = 20          # per job, phase "same"
RESCALE_KILLS = 6   # per job, phase "rescale"
MODES = ["random"] * 4 + ["early", "barrier", "barrier", "commit", "commit"]


def wait_new(p, pred, timeout):
    """Polls every 0.5 ms until pred() or the process exits; True if pred() held."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        if p.poll() is not None:
            return False
        time.sleep(0.0005)
    return False


def kill_at(p, mode, rnd, ck, span):
    """Kills p at a moment of the given kind; returns True if it was killed, False if it
    exited first (then the run is complete)."""
    if mode == "random":
        time.sleep(rnd.uniform(0.05, span))
    elif mode == "early":
        time.sleep(rnd.uniform(0.0, 0.06))
    else:
        before = max(common.ckpt_ids(ck) or [0])
        if mode == "barrier":
            def pred():
                return any(i > before for i in common.ckpt_ids(ck))
            lag = rnd.uniform(0.001, 0.004)
        else:
            def pred():
                return any(i > before for i in common.ckpt_ids(ck, complete_only=True))
            lag = rnd.uniform(0.0, 0.002)
        if wait_new(p, pred, 5.0):
            time.sleep(lag)
    if p.poll() is not None:
        return False
    p.send_signal(signal.SIGKILL)
    p.wait()
    return True


def phase(sluice, job, out, ck, shards_cycle, kills_wanted, rnd, span, expected, log, msgs):
    """Kill/restart rounds until kills_wanted kills; returns the list of failures."""
    fails = []
    kills = rounds = 0
    while kills < kills_wanted:
        common.fresh(out, ck)
        rounds += 1
        runs = 0
        plan = []
        while True:
            shards = shards_cycle[runs % len(shards_cycle)]
            errf = tempfile.TemporaryFile()
            p = subprocess.Popen(common.cmd(sluice, job, shards, ck),
                                 stdout=subprocess.DEVNULL, stderr=errf)
            runs += 1
            if kills < kills_wanted:
                mode = rnd.choice(MODES)
                killed = kill_at(p, mode, rnd, ck, span)
            else:
                mode = "none"
                killed = False
            if not killed:
                try:
                    p.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            errf.seek(0)
            err = errf.read().decode(errors="replace")
            errf.close()
            for line in err.splitlines():
                msgs[common.norm(line)] += 1
            if killed:
                kills += 1
                plan.append("%s@%d" % (mode, shards))
                continue
            plan.append("end@%d" % shards)
            if p.returncode != 0:
                fails.append("round %d: run %d (shards %d) exited %d: %s" % (
                    rounds, runs, shards, p.returncode, err.strip()[-400:]))
            break
        got, hidden = common.visible(out)
        d = common.diff(expected, got)
        log.append("  round %d: %s -> %s" % (rounds, " ".join(plan), d or "exact"))
        if d:
            fails.append("round %d (%s): %s" % (rounds, " ".join(plan), d))
        if hidden:
            fails.append("round %d: %d hidden files left, e.g. %s" % (
                rounds, len(hidden), hidden[0]))
        if fails:
            break
    return fails, kills


def check_job(sluice, work, data, name, rnd):
    out, ck = os.path.join(work, name + "-out"), os.path.join(work, name + "-ck")
    job = common.write_job(work, name, data, out)
    t0 = time.monotonic()
    rc, err = common.run(sluice, job, 2)
    base = time.monotonic() - t0
    if rc != 0:
        print("FAIL %s: the uninterrupted run exited %d: %s" % (name, rc, err[-400:]))
        return False
    expected, _ = common.visible(out)
    print("%s: uninterrupted run %.2f s, %d rows" % (name, base, sum(expected.values())),
          flush=True)
    ok = True
    msgs = collections.Counter()
    # random kills within the first 0.2-0.6 s of a run: a restart's progress is what the
    # last checkpoint kept, so short runs between kills still walk through the whole input
    span = min(0.6, max(0.2, base * 0.8))
    for label, cycle, n in (("same", [2], KILLS), ("rescale", [2, 1, 3], RESCALE_KILLS)):
        log = []
        t0 = time.monotonic()
        fails, kills = phase(sluice, job, out, ck, cycle, n, rnd, span, expected, log, msgs)
        print("%s/%s: %d kills in %.1f s, %s" % (name, label, kills, time.monotonic() - t0,
                                                   "FAIL" if fails else "exact"))
        print("\n".join(log))
        for f in fails:
            print("FAIL %s/%s: %s" % (name, label, f))
        ok &= not fails
    # the output of the last round is complete and exact here (or a failure was printed)
    if ok:
        rc, err = common.run(sluice, job, 2, ck)
        got, hidden = common.visible(out)
        d = common.diff(expected, got)
        print("%s/after-finish: restart on a finished run's checkpoints: %s" % (
            name, d or "exact"))
        if d or rc != 0:
            print("FAIL %s/after-finish: %s (exit %d; %s)" % (
                name, d, rc, " | ".join(err.strip().splitlines()[:3])))
            ok = False
    print("%s: stderr lines seen: %s" % (name, "; ".join(
        "%dx %s" % (c, m) for m, c in msgs.most_common(8))))
    return ok


def main():
    global KILLS, RESCALE_KILLS
    args = sys.argv[1:]
    jobs = list(common.JOBS)
    while args and args[0].startswith("--"):
        opt, val = args[0], args[1]
        args = args[2:]
        if opt == "--state-backend":
            common.EXTRA = ["--state-backend", val]
        elif opt == "--kills":
            KILLS = int(val)
            RESCALE_KILLS = max(2, KILLS // 3)
        elif opt == "--jobs":
            jobs = val.split(",")
        else:
            print("crash_sql: unknown option %s" % opt)
            return 2
    sluice = os.path.abspath(args[0])
    seed = int(args[1]) if len(args) > 1 else 0   # 0: a new one
    seed = seed or int(time.time() * 1000) % 1000000007 or 1
    rows = int(args[2]) if len(args) > 2 else 1000000
    print("crash_sql: seed %d (replay: crash_sql.py %sSLUICE %d %d)" % (
        seed, " ".join(sys.argv[1:-len(args)] + [""]) if len(args) < len(sys.argv) - 1
        else "", seed, rows), flush=True)
    rnd = random.Random(seed)
    work = tempfile.mkdtemp(prefix="sluice-crash-")
    t0 = time.monotonic()
    try:
        data = common.make_data(work, rows)
        ok = True
        for name in jobs:
            ok &= check_job(sluice, work, data, name, rnd)
        print("crash_sql: %s in %.0f s (seed %d)" % ("PASS" if ok else "FAIL",
                                                     time.monotonic() - t0, seed))
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
