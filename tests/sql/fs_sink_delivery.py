#!/usr/bin/env python3
"""The filesystem sink across kill -9 when the table names no delivery guarantee, and when it
asks for at-least-once (issue 13, item 1).

  default        a job with checkpoints (--checkpoint-dir) into a filesystem table without
                 'sink.delivery-guarantee' is exactly-once, as Flink's FileSink is whenever
                 checkpointing is on: killed with SIGKILL after each of 4 new checkpoints and
                 restarted, then run to its end, every id is visible exactly once
  at-least-once  the same job with 'sink.delivery-guarantee' = 'at-least-once': nothing is
                 lost, and no row that was visible before a kill is gone after the restart
                 (the part files are never truncated, replaced or hidden); duplicates are
                 allowed, and counted

Kills wait for conditions (a checkpoint newer than the run's start, rows visible), never for
a time. Usage: fs_sink_delivery.py SLUICE
"""
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROWS = 60000
RATE = 15000  # rows per second over the job: a run takes 4 s
KILLS = 4

JOB = """SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE gen (id BIGINT, k BIGINT) WITH ('connector' = 'datagen',
  'number-of-rows' = '%(rows)d', 'rows-per-second' = '%(rate)d',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%(last)d',
  'fields.k.min' = '0', 'fields.k.max' = '9');
CREATE TABLE out_t (id BIGINT, k BIGINT) WITH ('connector' = 'filesystem',
  'path' = '%(out)s', 'format' = 'csv'%(opt)s);
INSERT INTO out_t SELECT id, k FROM gen;
"""


def newest_checkpoint(ck):
    """The id of the newest complete checkpoint (its MANIFEST is written last), or 0."""
    best = 0
    if os.path.isdir(ck):
        for name in os.listdir(ck):
            if name.startswith("chk-") and os.path.exists(os.path.join(ck, name, "MANIFEST")):
                best = max(best, int(name[4:]))
    return best


def visible_lines(out):
    """Complete lines of the files a reader sees (names not starting with '.' or '_')."""
    lines = collections.Counter()
    if not os.path.isdir(out):
        return lines
    for name in sorted(os.listdir(out)):
        if name[0] in "._":
            continue
        with open(os.path.join(out, name)) as f:
            data = f.read()
        for line in data.split("\n")[:-1]:  # a last line without '\n' is still being written
            if line:
                lines[line] += 1
    return lines


def wait_for(cond, p, what, limit=60):
    """Polls cond() until it holds; fails when the run ends first or after `limit` s."""
    t0 = time.monotonic()
    while not cond():
        if p.poll() is not None:
            return "the run ended (exit %d) before %s" % (p.returncode, what)
        if time.monotonic() - t0 > limit:
            return "no %s within %d s" % (what, limit)
        time.sleep(0.01)
    return None


def run_case(sluice, work, name, opt):
    out, ck = os.path.join(work, name + "-out"), os.path.join(work, name + "-ck")
    job = os.path.join(work, name + ".sql")
    with open(job, "w") as f:
        f.write(JOB % {"rows": ROWS, "rate": RATE, "last": ROWS - 1, "out": out, "opt": opt})
    cmd = [sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck, "--quiet"]
    kept_lost = 0
    shown = collections.Counter()  # lines a reader saw before some kill
    for kill in range(KILLS):
        start = newest_checkpoint(ck)
        before = visible_lines(out)
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # a new checkpoint, and for at-least-once more rows than the last run left
        err = wait_for(lambda: newest_checkpoint(ck) >= start + 2 and
                       (not opt or sum(visible_lines(out).values()) > sum(before.values())),
                       p, "new checkpoint")
        if err:
            print("FAIL: %s: kill %d: %s: %s" % (name, kill + 1, err,
                                                 p.stderr.read().decode()[-300:]))
            p.kill()
            p.wait()
            return False
        # what a reader saw before must still be there; what it sees now must survive
        seen = visible_lines(out)
        p.send_signal(signal.SIGKILL)
        p.wait()
        p.stderr.close()
        kept_lost += sum((shown - seen).values())
        shown = seen
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0:
        print("FAIL: %s: the last run exited %d: %s" % (name, p.returncode,
                                                         p.stderr.decode()[-300:]))
        return False
    final = visible_lines(out)
    kept_lost += sum((shown - final).values())
    ids = collections.Counter()
    for line, n in final.items():
        ids[int(line.split(",")[0])] += n
    lost = sum(1 for i in range(ROWS) if ids[i] == 0)
    dups = sum(n - 1 for n in ids.values() if n > 1)
    hidden = [n for n in os.listdir(out) if n.startswith(".")] if os.path.isdir(out) else []
    print("%s: %d kills, %d rows visible, %d lost, %d duplicated, %d visible rows gone "
          "after a kill, %d hidden files left" % (name, KILLS, sum(final.values()), lost,
                                                  dups, kept_lost, len(hidden)))
    if lost or kept_lost:
        return False
    if not opt and (dups or hidden):
        return False
    return True


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-fs-delivery-")
    try:
        ok = run_case(sluice, work, "default", "")
        ok = run_case(sluice, work, "at-least-once",
                      ", 'sink.delivery-guarantee' = 'at-least-once'") and ok
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
