#!/usr/bin/env python3
"""bench/contention_bench.py - what waiting costs, and what sharing the machine costs.

usage: contention_bench.py SLUICE [--events N]

  contention/keyed_2shards_hogged   slowdown of the 1 k-keys TUMBLE job over one CSV file on
                                    2 shards while as many busy processes as cores run
                                    beside it, against the same job quiet, same run
                                    (wall time hogged / quiet; 1.0 = no slowdown)
  contention/keyed_1shard_hogged    the same on 1 shard; the figure of 2 shards is also
                                    given as a ratio to it (target: 2 shards slow down no
                                    more than 1 shard, ratio <= 1)
  contention/idle_cpu_pct           CPU use of a datagen job limited to 1,000 rows/s (a TUMBLE
                                    count, 2 shards), percent of one core, over 6 s of wall
                                    time (target < 5 %)

The hogs are plain busy loops in separate processes (os.cpu_count() of them), started after
the job's input is cached and stopped after each run. Times are `sluice run` from exec to
exit; CPU use is the child's user + system time (getrusage). Standard library only.
"""
import argparse
import multiprocessing
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                     "sluice", "bench")

FILE_SQL = """CREATE TABLE ev (user_id BIGINT, ts BIGINT, amount BIGINT,
  t AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR t AS t - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv');
CREATE TABLE sink (user_id BIGINT, ws TIMESTAMP(3), n BIGINT, s BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT user_id, window_start, COUNT(*), SUM(amount)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(t), INTERVAL '1' MINUTE))
GROUP BY user_id, window_start, window_end;
"""

IDLE_SQL = """CREATE TABLE ev (user_id BIGINT, amount BIGINT, t TIMESTAMP(3),
  WATERMARK FOR t AS t - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen', 'rows-per-second' = '1000', 'number-of-rows' = '6000',
        'fields.user_id.min' = '0', 'fields.user_id.max' = '999');
CREATE TABLE sink (user_id BIGINT, ws TIMESTAMP(3), n BIGINT)
  WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT user_id, window_start, COUNT(*)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(t), INTERVAL '1' SECOND))
GROUP BY user_id, window_start, window_end;
"""


def die(msg):
    print("contention_bench: " + msg, file=sys.stderr)
    sys.exit(1)


def gen_file(events):
    os.makedirs(CACHE, exist_ok=True)
    path = os.path.join(CACHE, "contention_1k_%d.csv" % events)
    if not os.path.exists(path):
        rnd = random.Random(1000)
        with open(path + ".tmp", "w") as f:
            for lo in range(0, events, 100000):
                f.write("".join("%d,%d,%d\n" % (rnd.randrange(1000),
                                                1700000000000 + i // 10 - rnd.randrange(1000),
                                                rnd.randrange(1, 1000))
                                for i in range(lo, min(events, lo + 100000))))
        os.rename(path + ".tmp", path)
    with open(path, "rb") as f:  # into the page cache before any timing
        while f.read(1 << 22):
            pass
    return path


def run(sluice, work, sql, shards):
    job = os.path.join(work, "job.sql")
    with open(job, "w") as f:
        f.write(sql)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run([sluice, "run", job, "--shards", str(shards)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=1800)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        die("sluice failed (%d): %s" % (p.returncode, p.stderr.decode(errors="replace")[-400:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def hog(stop):
    x = 0
    while not stop.is_set():
        for _ in range(100000):
            x += 1


def hogged(fn):
    stop = multiprocessing.Event()
    procs = [multiprocessing.Process(target=hog, args=(stop,), daemon=True)
             for _ in range(os.cpu_count() or 2)]
    for p in procs:
        p.start()
    time.sleep(0.3)  # every hog running
    try:
        return fn()
    finally:
        stop.set()
        for p in procs:
            p.join()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sluice")
    ap.add_argument("--events", type=int, default=3000000)
    a = ap.parse_args()
    sluice = os.path.abspath(a.sluice)
    path = gen_file(a.events)
    sql = FILE_SQL % path
    with tempfile.TemporaryDirectory(prefix="sluice-contention-") as work:
        slow = {}
        for shards in (1, 2):
            quiet, _ = run(sluice, work, sql, shards)
            busy, _ = hogged(lambda: run(sluice, work, sql, shards))
            slow[shards] = busy / quiet
            print("contention: %d shard(s): quiet %.2f s, hogged %.2f s"
                  % (shards, quiet, busy), file=sys.stderr)
        print("FIGURE contention/keyed_1shard_hogged %.3f x - -" % slow[1])
        print("FIGURE contention/keyed_2shards_hogged %.3f x %.3f contention/keyed_1shard_hogged"
              % (slow[2], slow[2] / slow[1]))
        wall, cpu = run(sluice, work, IDLE_SQL, 2)
        print("FIGURE contention/idle_cpu_pct %.2f %% - -" % (100.0 * cpu / wall))
        print("contention: 1,000 rows/s job: %.2f s wall, %.3f s CPU" % (wall, cpu),
              file=sys.stderr)


if __name__ == "__main__":
    main()
