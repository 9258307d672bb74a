#!/usr/bin/env python3
"""The partitioned filesystem sink (Flink's PARTITIONED BY, issue 14's q10).

  layout   rows with awkward partition values (a '/', '=', '%', '{', quotes, a tab, a
           backslash, '', NULL, ' ', non-ASCII) go to the directories Flink 2.3 makes for
           them (the names below were taken from Flink's own output: its PartitionPathUtils
           escaping, '' and NULL as __DEFAULT_PARTITION__), the part files hold the other
           columns only, and at the end of the bounded input every partition has _SUCCESS
  commit   a job with checkpoints, partition-time commit ('$dt $hm:00', delay 1 min: the
           partition's length, as q10 has it) and success-file,
           killed with SIGKILL after new checkpoints, while part files are in progress, 3
           times and restarted: while it runs,
           a partition never has _SUCCESS before all of its rows are visible, some
           partition is committed before the input ends, and at the end every id is in its
           partition exactly once, every partition has _SUCCESS and no hidden file is left

Kills wait for conditions (new checkpoints, in-progress files), not for a time. Usage: fs_partitioned.py SLUICE
"""
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# value of p -> directory Flink 2.3 writes for it (PARTITIONED BY (p, n), n an INT)
LAYOUT = [
    ("a/b", 1, "p=a%2Fb/n=1"),
    ("x=y", 2, "p=x%3Dy/n=2"),
    ("", 3, "p=__DEFAULT_PARTITION__/n=3"),
    (None, None, "p=__DEFAULT_PARTITION__/n=__DEFAULT_PARTITION__"),
    (" ", 5, "p= /n=5"),
    ("\u00e9%#:?*", 6, "p=\u00e9%25%23%3A%3F%2A/n=6"),
    ("A B{[]}^\"'", 7, "p=A B%7B%5B%5D%7D%5E%22%27/n=7"),
    ("\ttab", 8, "p=%09tab/n=8"),
    ("a\\b", 9, "p=a%5Cb/n=9"),
    ("<>|~!@$&()+,;`", -10, "p=<>|~!@$&()+,;`/n=-10"),
    ("..", 11, "p=../n=11"),
]

LAYOUT_JOB = """CREATE TABLE src (id BIGINT, name STRING, p STRING, n INT) WITH (
  'connector' = 'filesystem', 'path' = '%(src)s', 'format' = 'json');
CREATE TABLE out_t (id BIGINT, p STRING, name STRING, n INT) PARTITIONED BY (p, n) WITH (
  'connector' = 'filesystem', 'path' = '%(out)s', 'format' = 'csv',
  'sink.partition-commit.policy.kind' = 'success-file');
INSERT INTO out_t SELECT id, p, name, n FROM src;
"""

# 12 s of input at the job's 5,000 rows/s: each of the KILLS runs needs three new
# checkpoints and an open part file before its kill, slower under ASan on a loaded machine;
# with 6 s the third run could find the input nearly used up and end first (a flake)
ROWS = 60000
PER_PART = 6000  # ids a minute of event time (10 ms apart)
KILLS = 3
# rows padded to about 200 bytes: more than a partition's 64 KiB buffer arrives between two
# checkpoints, so a kill finds in-progress part files open, which recovery must delete
COMMIT_JOB = """SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE gen (id BIGINT, pad STRING, ts AS CAST(TO_TIMESTAMP_LTZ(id * 10, 3) AS TIMESTAMP(3)),
  WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen',
  'number-of-rows' = '%(rows)d', 'rows-per-second' = '5000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%(last)d',
  'fields.pad.length' = '200');
CREATE TABLE out_t (id BIGINT, pad STRING, dt STRING, hm STRING) PARTITIONED BY (dt, hm) WITH (
  'connector' = 'filesystem', 'path' = '%(out)s', 'format' = 'csv',
  'sink.partition-commit.trigger' = 'partition-time',
  'sink.partition-commit.delay' = '1 min',
  'sink.partition-commit.policy.kind' = 'success-file',
  'partition.time-extractor.timestamp-pattern' = '$dt $hm:00');
INSERT INTO out_t SELECT id, pad, DATE_FORMAT(ts, 'yyyy-MM-dd'), DATE_FORMAT(ts, 'HH:mm') FROM gen;
"""


def tree(root):
    """{partition dir: (Counter of complete visible lines, has _SUCCESS, hidden files)}."""
    out = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".")]  # as readers skip them
        rel = os.path.relpath(d, root)
        lines, success, hidden = collections.Counter(), False, 0
        for f in files:
            if f == "_SUCCESS":
                success = True
            elif f.startswith("."):
                hidden += 1
            elif not f.startswith("_"):
                with open(os.path.join(d, f), encoding="utf-8") as fh:
                    for line in fh.read().split("\n")[:-1]:
                        lines[line] += 1
        if files:
            out[rel] = (lines, success, hidden)
    return out


def layout(sluice, work):
    src, out = os.path.join(work, "src.jsonl"), os.path.join(work, "layout-out")
    with open(src, "w", encoding="utf-8") as f:
        for i, (p, n, _) in enumerate(LAYOUT):
            f.write(json.dumps({"id": i, "name": "r%d" % i, "p": p, "n": n}) + "\n")
    job = os.path.join(work, "layout.sql")
    open(job, "w").write(LAYOUT_JOB % {"src": src, "out": out})
    p = subprocess.run([sluice, "run", job, "--shards", "2", "--quiet"], capture_output=True,
                       timeout=60)
    if p.returncode != 0:
        return "the job exited %d: %s" % (p.returncode, p.stderr.decode()[-300:])
    got = tree(out)
    want = collections.defaultdict(collections.Counter)
    for i, (_, _, d) in enumerate(LAYOUT):
        want[d]["%d,r%d" % (i, i)] += 1
    if sorted(got) != sorted(want):
        return "directories %s, want %s" % (sorted(got), sorted(want))
    for d, (lines, success, hidden) in got.items():
        if lines != want[d]:
            return "%s holds %s, want %s (the partition columns are not in the files)" % (
                d, dict(lines), dict(want[d]))
        if not success or hidden:
            return "%s: _SUCCESS %s, %d hidden files at the end of the input" % (
                d, success, hidden)
    print("layout: %d partitions as Flink names them, rows without p and n, all _SUCCESS" %
          len(got))
    return None


def newest_checkpoint(ck):
    best = 0
    if os.path.isdir(ck):
        for name in os.listdir(ck):
            if name.startswith("chk-") and os.path.exists(os.path.join(ck, name, "MANIFEST")):
                best = max(best, int(name[4:]))
    return best


def part_of(i):
    m = i * 10 // 60000
    return "dt=1970-01-01/hm=%02d%%3A%02d" % (m // 60, m % 60)


class Watch:
    """Checks, at every poll, that no partition shows _SUCCESS before all its rows."""

    def __init__(self, out):
        self.out, self.early, self.bad = out, False, None

    def poll(self):
        t = tree(self.out)
        done = [d for d, (_, s, _) in t.items() if s]
        for d in done:
            n = sum(t[d][0].values())
            if n < PER_PART and not self.bad:
                self.bad = "%s had _SUCCESS with %d of its %d rows visible" % (d, n, PER_PART)
        if done and len(done) < len(t):
            self.early = True


def commit(sluice, work):
    out, ck = os.path.join(work, "commit-out"), os.path.join(work, "commit-ck")
    job = os.path.join(work, "commit.sql")
    open(job, "w").write(COMMIT_JOB % {"rows": ROWS, "last": ROWS - 1, "out": out})
    cmd = [sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck, "--quiet"]
    w = Watch(out)
    for kill in range(KILLS):
        start = newest_checkpoint(ck)
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        t0 = time.monotonic()
        # after new checkpoints, and while a part file is in progress (recovery's work)
        while newest_checkpoint(ck) < start + 3 or not any(
                h for _, _, h in tree(out).values()):
            w.poll()
            if p.poll() is not None or time.monotonic() - t0 > 60:
                p.kill()
                return "kill %d: no new checkpoint (exit %s): %s" % (
                    kill + 1, p.returncode, p.stderr.read().decode()[-300:])
            time.sleep(0.02)
        p.send_signal(signal.SIGKILL)
        p.wait()
        p.stderr.close()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while p.poll() is None:
        w.poll()
        time.sleep(0.02)
    err = p.stderr.read().decode()
    if p.returncode != 0:
        return "the last run exited %d: %s" % (p.returncode, err[-300:])
    if w.bad:
        return w.bad
    t = tree(out)
    seen = collections.Counter()
    for d, (lines, success, hidden) in t.items():
        if not success or hidden:
            return "%s: _SUCCESS %s, %d hidden files left at the end" % (d, success, hidden)
        for line, n in lines.items():
            i = int(line.split(",")[0])
            if part_of(i) != d:
                return "id %d in %s, want %s" % (i, d, part_of(i))
            seen[i] += n
    lost = sum(1 for i in range(ROWS) if not seen[i])
    dups = sum(n - 1 for n in seen.values() if n > 1)
    print("commit: %d kills, %d partitions, %d rows visible, %d lost, %d duplicated, "
          "committed while running: %s" % (KILLS, len(t), sum(seen.values()), lost, dups,
                                            w.early))
    if lost or dups:
        return "%d ids lost, %d duplicated" % (lost, dups)
    if not w.early:
        return "no partition was committed before the input ended"
    return None


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-fs-part-")
    failed = False
    try:
        for name, fn in (("layout", layout), ("commit", commit)):
            why = fn(sluice, work)
            if why:
                print("FAIL %s: %s" % (name, why))
                failed = True
    finally:
        if not failed:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("work files kept in %s" % work)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
