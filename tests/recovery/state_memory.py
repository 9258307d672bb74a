#!/usr/bin/env python3
"""Window and session state is state: it is held to the job's memory limit (issue 13,
item 13; engine/runtime/memory_guard.c).

A session window over keys that never repeat keeps one open session per record until the
end of input (the gap outlasts the input), so its state grows with every row, as 1.73 M
open sessions grew RSS to 522 MB under a 64 MiB RocksDB budget before this guard.

  heap     --state-memory 16m: the job stops with exit 1 and an error naming the limit,
           the flag and the operator, while its peak RSS is still small (far from what
           the whole input would need), instead of growing until the kernel kills it
  rocksdb  the same with --state-backend rocksdb: window state stays on the heap with
           either backend, and is held to the same limit
  restore  with checkpoints and an exactly-once sink: the job fails on the limit, is run
           again on its checkpoint directory with room enough, and its output is every
           session exactly once (nothing committed twice, nothing lost)
  metric   a run that fits reports the window's state bytes in --metrics

Usage: state_memory.py SLUICE
"""
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

ROWS = 600000

JOB = """SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE ev (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen', 'number-of-rows' = '%(rows)d', 'rows-per-second' = '%(rate)d',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%(last)d',
  'fields.ts.kind' = 'event-time', 'fields.ts.step' = '1 ms');
CREATE TABLE out_t (k BIGINT, ws TIMESTAMP(3), n BIGINT) WITH (%(sink)s);
INSERT INTO out_t SELECT id, window_start, COUNT(*)
FROM TABLE(SESSION(TABLE ev PARTITION BY id, DESCRIPTOR(ts), INTERVAL '2' HOUR))
GROUP BY id, window_start, window_end;
"""

FAILED = 0


def check(cond, what):
    global FAILED
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILED += 1


def write_job(tmp, name, sink, rate=0, rows=ROWS):
    path = os.path.join(tmp, name + ".sql")
    with open(path, "w") as f:
        f.write(JOB % dict(rows=rows, last=rows - 1, rate=rate, sink=sink))
    return path


def run(sluice, args, timeout=300):
    """Runs sluice in a child; returns (rc, stderr, the child's peak RSS in MiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = subprocess.run([sluice, "run", *args], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=timeout)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the largest of any child so far: only a new maximum shows
    return p.returncode, p.stderr, max(peak, before) / 1024.0


def visible_rows(out):
    rows = []
    for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
        if name[0] in "._":
            continue
        with open(os.path.join(out, name)) as f:
            rows += [l for l in f.read().splitlines() if l]
    return rows


def over_limit(err):
    return re.search(r"heap state [0-9.]+ MiB over its limit 16\.0 MiB \(--state-memory\); "
                     r"largest: 'session window'", err)


def main():
    sluice = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="sluice-statemem-")
    try:
        blackhole = "'connector' = 'blackhole'"
        job = write_job(tmp, "heap", blackhole)
        rc, err, peak = run(sluice, [job, "--state-memory", "16m"])
        check(rc == 1 and over_limit(err), "heap: stops on the 16 MiB limit, naming the "
              "operator (rc %d: %s)" % (rc, err.strip()[-300:]))
        check(peak < 256, "heap: peak RSS %.0f MiB, far below the whole input's" % peak)

        rc, err, _ = run(sluice, [job, "--state-memory", "16m", "--state-backend", "rocksdb"])
        check(rc == 1 and over_limit(err) and "either backend" in err,
              "rocksdb: window state held to the same limit (rc %d: %s)"
              % (rc, err.strip()[-300:]))

        rc, err, _ = run(sluice, [job, "--metrics"])
        m = re.search(r"session window .*? state (\d+) \((\d+) bytes\)", err)
        check(rc == 0 and m and int(m.group(1)) == 0 and int(m.group(2)) > 0,
              "metric: --metrics reports the window's state bytes (%s)"
              % (m.group(0) if m else err.strip()[-300:]))
        rc, err, _ = run(sluice, [job, "--state-memory", "256m"])
        check(rc == 0 and "done: %d records in, %d rows out" % (ROWS, ROWS) in err,
              "a limit the state fits under: the job completes (rc %d)" % rc)

        out = os.path.join(tmp, "out")
        ckdir = os.path.join(tmp, "ck")
        sink = ("'connector' = 'filesystem', 'path' = '%s', 'format' = 'csv', "
                "'sink.delivery-guarantee' = 'exactly-once'" % out)
        # paced, so that checkpoints complete before the limit is reached
        paced = write_job(tmp, "paced", sink, rate=50000)
        rc, err, _ = run(sluice, [paced, "--checkpoint-dir", ckdir, "--state-memory", "16m"])
        check(rc == 1 and over_limit(err), "restore: the first run stops on the limit "
              "(rc %d: %s)" % (rc, err.strip()[-300:]))
        check(not visible_rows(out), "restore: no session was committed before the end")
        rc, err, _ = run(sluice, [paced, "--checkpoint-dir", ckdir, "--state-memory", "1g"])
        rows = visible_rows(out)
        keys = sorted(int(r.split(",")[0]) for r in rows)
        check(rc == 0 and "restoring checkpoint" in err, "restore: the second run restores "
              "the checkpoint and ends (rc %d: %s)" % (rc, err.strip()[-300:]))
        check(keys == list(range(ROWS)) and all(r.endswith(",1") for r in rows),
              "restore: every session exactly once (%d rows, %d distinct keys)"
              % (len(rows), len(set(keys))))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failed" % FAILED)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
