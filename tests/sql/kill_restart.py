#!/usr/bin/env python3
"""Exactly-once across kill -9: a SQL job (datagen -> filesystem sink with
'sink.delivery-guarantee' = 'exactly-once', checkpoints every 50 ms into --checkpoint-dir) is
killed with SIGKILL at 20 random moments and restarted each time; it then runs to its end.
The visible output must hold every generated id exactly once: nothing lost, nothing
duplicated, whatever the kill interrupted (records, a barrier, a pre-commit, a manifest, a
commit). Then more kills at random moments until a run gets to its end by itself, so the end
of input, the final checkpoint and its commit are cut too; and one more run after the end
must add nothing (it restores the final checkpoint, whose sources are at their ends).

Usage: kill_restart.py SLUICE [SEED]
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROWS = 200000
RATE = 20000  # rows per second over the job: a full run takes 10 s

JOB = """SET 'execution.checkpointing.interval' = '50 ms';
CREATE TABLE gen (id BIGINT, k BIGINT) WITH ('connector' = 'datagen',
  'number-of-rows' = '%(rows)d', 'rows-per-second' = '%(rate)d',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%(last)d',
  'fields.k.min' = '0', 'fields.k.max' = '9');
CREATE TABLE out_t (id BIGINT, k BIGINT) WITH ('connector' = 'filesystem',
  'path' = '%(out)s', 'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO out_t SELECT id, k FROM gen;
"""


def main():
    sluice = os.path.abspath(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else int(time.time())
    rnd = random.Random(seed)
    work = tempfile.mkdtemp(prefix="sluice-kill-")
    try:
        out, ck = os.path.join(work, "out"), os.path.join(work, "ck")
        job = os.path.join(work, "job.sql")
        with open(job, "w") as f:
            f.write(JOB % {"rows": ROWS, "rate": RATE, "last": ROWS - 1, "out": out})
        cmd = [sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck, "--quiet"]
        kills = 0
        while kills < 20:
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(rnd.uniform(0.1, 0.35))
            if p.poll() is not None:
                print("FAIL: the job ended before kill %d (seed %d): %s" % (
                    kills + 1, seed, p.stderr.read().decode()[-300:]))
                return 1
            p.send_signal(signal.SIGKILL)
            p.wait()
            kills += 1
        tail_kills = 0
        while True:
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                p.wait(timeout=rnd.uniform(0.2, 1.5))
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                p.wait()
                tail_kills += 1
                continue
            if p.returncode != 0:
                print("FAIL: a run exited %d (seed %d): %s" % (
                    p.returncode, seed, p.stderr.read().decode()[-300:]))
                return 1
            break
        kills += tail_kills
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
        if p.returncode != 0:
            print("FAIL: the run after the end exited %d: %s" % (p.returncode,
                                                                p.stderr.decode()[-300:]))
            return 1
        ids = []
        for name in os.listdir(out):
            if name.startswith("."):
                continue
            with open(os.path.join(out, name)) as f:
                ids += [int(line.split(",")[0]) for line in f if line.strip()]
        hidden = [n for n in os.listdir(out) if n.startswith(".")]
        seen = set(ids)
        lost = ROWS - len(seen & set(range(ROWS)))
        dups = len(ids) - len(seen)
        print("kill_restart: %d kills, %d rows visible, %d lost, %d duplicated, %d hidden "
              "files left (seed %d)" % (kills, len(ids), lost, dups, len(hidden), seed))
        return 0 if lost == 0 and dups == 0 and len(seen) == ROWS and not hidden else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
