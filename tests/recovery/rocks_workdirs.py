#!/usr/bin/env python3
"""RocksDB working directories after kill -9 (issue 13, item 9).

A job with keyed state in RocksDB (an updating GROUP BY) makes its working directory
$TMPDIR/sluice-state-XXXXXX (here a temp dir). SIGKILL leaves it behind; the next start must
remove what dead runs left, and only that:

  - 5 runs killed with SIGKILL once their DBs are open, then one run to its end: afterwards
    $TMPDIR holds no working directory at all;
  - a run that is alive keeps its directory while another job starts, runs and ends in the
    same $TMPDIR, and then ends normally itself;
  - a directory of that name that is not a run's (no owner lock file) is left alone.

Every wait is for a condition (a directory with DB files, a process gone).
Usage: rocks_workdirs.py SLUICE
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

JOB = """CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen',
  'number-of-rows' = '%(rows)d', 'rows-per-second' = '%(rate)d', 'seed' = '3',
  'fields.k.min' = '1', 'fields.k.max' = '5000');
CREATE TABLE out_t (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out_t SELECT k, COUNT(*) FROM gen GROUP BY k;
"""


def workdirs(tmp):
    return sorted(n for n in os.listdir(tmp) if n.startswith("sluice-state-"))


def has_db(tmp, name):
    """Whether the working directory holds an opened RocksDB (its LOCK file)."""
    for root, _, files in os.walk(os.path.join(tmp, name)):
        if "LOCK" in files:
            return True
    return False


def wait(cond, p, what, limit=60):
    t0 = time.monotonic()
    while not cond():
        if p is not None and p.poll() is not None:
            return "the run ended (exit %d) before %s: %s" % (
                p.returncode, what, p.stderr.read().decode()[-300:])
        if time.monotonic() - t0 > limit:
            return "no %s within %d s" % (what, limit)
        time.sleep(0.01)
    return None


def start(sluice, job, env):
    return subprocess.Popen([sluice, "run", job, "--quiet", "--shards", "2",
                             "--state-backend", "rocksdb"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-workdirs-")
    ok = True
    try:
        tmp = os.path.join(work, "tmp")
        os.mkdir(tmp)
        env = dict(os.environ, TMPDIR=tmp)
        slow, fast = os.path.join(work, "slow.sql"), os.path.join(work, "fast.sql")
        with open(slow, "w") as f:
            f.write(JOB % {"rows": 1000000, "rate": 20000})
        with open(fast, "w") as f:
            f.write(JOB % {"rows": 20000, "rate": 0})
        # not a run's: made by someone else, no owner lock file in it
        foreign = os.path.join(tmp, "sluice-state-foreign")
        os.mkdir(foreign)
        with open(os.path.join(foreign, "keep"), "w") as f:
            f.write("x")

        for kill in range(5):
            before = set(workdirs(tmp))
            p = start(sluice, slow, env)
            err = wait(lambda: any(has_db(tmp, n) for n in set(workdirs(tmp)) - before),
                       p, "open DB of kill %d" % (kill + 1))
            if err:
                print("FAIL: " + err)
                p.kill()
                p.wait()
                return 1
            p.send_signal(signal.SIGKILL)
            p.wait()
            p.stderr.close()
        left = [n for n in workdirs(tmp) if n != "sluice-state-foreign"]
        # each start sweeps the directories of the runs killed before it
        print("after 5 kills: %d working director%s left" % (len(left),
                                                             "y" if len(left) == 1 else "ies"))

        # a live run and a second job in the same TMPDIR
        live = start(sluice, slow, env)
        err = wait(lambda: any(has_db(tmp, n) for n in set(workdirs(tmp)) - set(left)
                               if n != "sluice-state-foreign"), live, "the live run's DB")
        if err:
            print("FAIL: " + err)
            live.kill()
            live.wait()
            return 1
        mine = [n for n in set(workdirs(tmp)) - set(left) if n != "sluice-state-foreign"]
        r = subprocess.run([sluice, "run", fast, "--quiet", "--shards", "2", "--state-backend",
                            "rocksdb"], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=120)
        if r.returncode:
            print("FAIL: the second job exited %d: %s" % (r.returncode,
                                                           r.stderr.decode()[-300:]))
            ok = False
        stale = [n for n in left if os.path.exists(os.path.join(tmp, n))]
        if stale:
            print("FAIL: %d of the killed runs' working directories are still there after "
                  "the next start: %s" % (len(stale), stale))
            ok = False
        gone = [n for n in mine if not os.path.exists(os.path.join(tmp, n))]
        if gone:
            print("FAIL: the live run's working directory %s was removed" % gone)
            ok = False
        live.send_signal(signal.SIGTERM)  # a clean stop
        live.wait(timeout=120)
        if live.returncode:
            print("FAIL: the live run exited %d after the other job: %s" % (
                live.returncode, live.stderr.read().decode()[-300:]))
            ok = False
        live.stderr.close()
        if workdirs(tmp) != ["sluice-state-foreign"] or \
                not os.path.exists(os.path.join(foreign, "keep")):
            print("FAIL: at the end $TMPDIR holds %s, want only the foreign directory" %
                  workdirs(tmp))
            ok = False
        if ok:
            print("ok: the next start removed %d dead runs' directories, kept a live run's "
                  "and a foreign one" % len(left))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
