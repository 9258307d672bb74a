#!/usr/bin/env python3
"""OVER windows ordered by processing time with a RANGE frame (issue 14), as Flink's
ProcTimeRangeBoundedPrecedingFunction runs them: a row waits until the millisecond it
arrived in is over, then every row of that millisecond comes out with one result over the
rows of its partition that arrived in [t - d, t]. The rows depend on the clock, so they
cannot be compared with Flink's one by one (ROWS and unbounded frames can:
tests/sql/cases/over_proctime_rows). A rate-limited datagen (3,000 ids in sequence at
1,000 a second, 1 shard, so each key's rows arrive in id order) is checked for what must
hold on any run, with d = 200 ms and three partitions (id mod 3):

  once      every id comes out at most once, and all come out but a few of the last (a
            processing timer still pending at the end of input does not fire, as in Flink)
  frame     the frame is the partition's rows in one stretch of arrival ending at the
            row's millisecond: MIN(id) <= id <= MAX(id), all of its key, and
            COUNT = (MAX - MIN) / 3 + 1 (no gap)
  peers     rows with the same MAX(id) (one millisecond) have one result; the frame only
            slides forward (MIN and MAX never go back as ids grow)
  bounded   rows leave the frame (not a running total): fewer than half of the second
            half's rows have a frame reaching back to their key's first row (the source
            catches up after a stall in a burst, so no tighter bound holds on a loaded
            machine), yet a frame holds more than the row itself on average
  restore   ROWS 2 PRECEDING on processing time into an exactly-once filesystem sink,
            kill -9 after two checkpoints, restarted: every id committed once, each with
            its key's two rows before it (the frame's rows survive the restore)
  refused   an OVER window ordered by a column that is no time attribute: a clear error
            naming the place

Usage: over_proctime.py SLUICE
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

ROWS = 3000
RATE = 1000
D_MS = 200
JOB = """CREATE TABLE gen (id BIGINT, pt AS PROCTIME()) WITH (
  'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '%d',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%d');
SELECT id, COUNT(*) OVER w, MIN(id) OVER w, MAX(id) OVER w FROM gen
WINDOW w AS (PARTITION BY MOD(id, 3) ORDER BY pt
             RANGE BETWEEN INTERVAL '0.%03d' SECOND PRECEDING AND CURRENT ROW);
""" % (ROWS, RATE, ROWS - 1, D_MS)
BAD = """CREATE TABLE gen (id BIGINT, pt AS PROCTIME()) WITH ('connector' = 'datagen');
SELECT id, COUNT(*) OVER (ORDER BY id) FROM gen;
"""
ROWS_JOB = """SET 'execution.checkpointing.interval' = '200 ms';
CREATE TABLE gen (id BIGINT, pt AS PROCTIME()) WITH (
  'connector' = 'datagen', 'number-of-rows' = '%d', 'rows-per-second' = '%d',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%d');
CREATE TABLE out_t (id BIGINT, n BIGINT, lo BIGINT, hi BIGINT) WITH ('connector' = 'filesystem',
  'path' = '%%s', 'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO out_t SELECT id, COUNT(*) OVER w, MIN(id) OVER w, MAX(id) OVER w FROM gen
WINDOW w AS (PARTITION BY MOD(id, 3) ORDER BY pt ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);
""" % (ROWS, RATE, ROWS - 1)
LINE = re.compile(r"^\+I\[(\d+), (\d+), (\d+), (\d+)\]$")


def check(out):
    """The failures of the properties above over the printed rows."""
    bad = []
    rows = [tuple(int(x) for x in m.groups()) for m in map(LINE.match, out.splitlines()) if m]
    ids = [r[0] for r in rows]
    if len(set(ids)) != len(ids):
        bad.append("an id came out twice")
    missing = sorted(set(range(ROWS)) - set(ids))
    if missing and missing[0] < ROWS - 50:
        bad.append("ids missing before the last 50: %s" % missing[:5])
    last = {}
    peers = {}
    for i, n, lo, hi in rows:
        if not (lo <= i <= hi and lo % 3 == i % 3 == hi % 3 and n == (hi - lo) // 3 + 1):
            bad.append("id %d: frame count %d, min %d, max %d is not one stretch" %
                       (i, n, lo, hi))
        if peers.setdefault(hi, (n, lo)) != (n, lo):
            bad.append("id %d: peers of max %d differ: %s and %s" % (i, hi, peers[hi], (n, lo)))
        k = i % 3
        if k in last and (lo < last[k][0] or hi < last[k][1]):
            bad.append("id %d: the frame went back (%s after %s)" % (i, (lo, hi), last[k]))
        last[k] = (lo, hi)
    counts = [r[1] for r in rows]
    if rows and sum(counts) / len(counts) <= 2:
        bad.append("frames hold %.1f rows on average: not the d before each row" %
                   (sum(counts) / len(counts)))
    second = [r for r in rows if r[0] > ROWS // 2]
    reach = sum(1 for r in second if r[2] < 3)
    if second and reach * 2 >= len(second):
        bad.append("%d of the second half's %d frames reach back to the first rows: not "
                   "bounded" % (reach, len(second)))
    return bad[:10]


def restore(sluice, tmp):
    """The failures of the restore check."""
    out, ck = os.path.join(tmp, "out"), os.path.join(tmp, "ck")
    job = os.path.join(tmp, "rows.sql")
    with open(job, "w") as f:
        f.write(ROWS_JOB % out)
    cmd = [sluice, "run", job, "--shards", "1", "--checkpoint-dir", ck]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t = time.monotonic()
    while p.poll() is None and time.monotonic() - t < 60 and sum(
            1 for n in (os.listdir(ck) if os.path.isdir(ck) else [])
            if os.path.exists(os.path.join(ck, n, "MANIFEST"))) < 2:
        time.sleep(0.01)
    time.sleep(0.3)
    p.send_signal(signal.SIGKILL)
    p.wait()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=120)
    if r.returncode or "restoring checkpoint" not in r.stderr:
        return ["restart: exit %d, %s" % (r.returncode, r.stderr.strip()[-300:])]
    rows = []
    for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
        if name[0] not in "._":
            with open(os.path.join(out, name)) as f:
                rows += [tuple(int(x) for x in l.strip().split(",")) for l in f if l.strip()]
    bad = []
    if sorted(r[0] for r in rows) != list(range(ROWS)):
        bad.append("%d rows committed for %d ids" % (len(rows), ROWS))
    for i, n, lo, hi in rows:
        want = min(3, i // 3 + 1)
        if (n, lo, hi) != (want, i - 3 * (want - 1), i):
            bad.append("id %d: frame (%d, %d, %d), want (%d, %d, %d)" %
                       (i, n, lo, hi, want, i - 3 * (want - 1), i))
    return bad[:10]


def main():
    sluice = os.path.abspath(sys.argv[1])
    failed = 0
    with tempfile.TemporaryDirectory(prefix="sluice-overproc-") as tmp:
        job = os.path.join(tmp, "job.sql")
        with open(job, "w") as f:
            f.write(JOB)
        p = subprocess.run([sluice, "run", job, "--shards", "1", "--quiet"],
                           capture_output=True, text=True, timeout=60)
        bad = ["exit %d: %s" % (p.returncode, p.stderr.strip()[-300:])] if p.returncode else []
        bad += check(p.stdout)
        counts = [int(m.group(2)) for m in map(LINE.match, p.stdout.splitlines()) if m]
        print("%s range: %d rows, frames of %.1f rows on average" %
              ("FAIL" if bad else "ok  ", len(counts), sum(counts) / max(len(counts), 1)))
        for b in bad:
            print("  " + b)
        failed += bool(bad)
        bad = restore(sluice, tmp)
        print("%s restore: killed after two checkpoints, restarted" % ("FAIL" if bad else "ok  "))
        for b in bad:
            print("  " + b)
        failed += bool(bad)
        with open(job, "w") as f:
            f.write(BAD)
        p = subprocess.run([sluice, "run", job, "--quiet"], capture_output=True, text=True,
                           timeout=60)
        ok = p.returncode == 1 and "job.sql:2:" in p.stderr and "time attribute" in p.stderr
        print("%s refused: %s" % ("ok  " if ok else "FAIL", p.stderr.strip()[-200:]))
        failed += not ok
    print("%d of 3 checks failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
