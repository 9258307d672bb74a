#!/usr/bin/env python3
"""A clean stop of a multi-INSERT job, then a restart (issue 13, item 2).

An EXECUTE STATEMENT SET with two INSERTs into exactly-once filesystem sinks -- a keep-first
deduplication and a 1 s tumbling count -- over one JSON folder of two files (one split,
so one shard, each; the second file's event time runs 10 s ahead of the first's; watermarks
on every record), checkpointing every 20 ms on 2 shards. The dedup key MOD(id, 998) keeps
each key in one file, so "first" does not depend on how the shards interleave. Each round
starts the job, sends SIGTERM soon after its first commit (the moment varies), waits for
exit 0, then runs it again with the same checkpoint directory to its end. Both sinks'
visible output must equal an uninterrupted run's as multisets.

Before the fix, 7 of 8 rounds were wrong: a window committed twice with partial counts
(`2,...16,327` and `2,...16,7` for `2,...16,334`). The shard that stopped first ended its
channels; the receivers dropped them from the watermark as if their input were exhausted,
so the other shard's watermark, 10 s ahead, fired windows without the stopped shard's
records still to come; the restart then sent those into windows already committed. A
stopped channel now holds the watermark where it was (runtime/shard.c, chan_update).

Usage: stop_statement_set.py SLUICE [ROUNDS]
"""
import collections
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROWS = 300000  # both files together


def make_data(work):
    """Two files, one split each (one a shard): even ids in a.jsonl, odd ones in b.jsonl
    whose event time runs 10 s ahead, so the two shards' watermarks are far apart."""
    d = os.path.join(work, "data")
    os.makedirs(d)
    base = 1700000000000
    for name, parity, ahead in (("a.jsonl", 0, 0), ("b.jsonl", 1, 10000)):
        with open(os.path.join(d, name), "w") as f:
            f.write("".join('{"id":%d,"ts":"%s"}\n' % (
                i, time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime((base + ahead + i) // 1000))
                + ".%03d" % ((base + ahead + i) % 1000))
                for i in range(parity, ROWS, 2)))
    return d

JOB = """SET 'execution.checkpointing.interval' = '20 ms';
CREATE TABLE ev (id BIGINT, ts TIMESTAMP(3), usr AS MOD(id, 998), proc AS PROCTIME(),
  WATERMARK FOR ts AS ts) WITH ('connector' = 'filesystem', 'path' = '%(data)s',
  'format' = 'json', 'scan.watermark.emit.strategy' = 'on-event');
CREATE TABLE firsts (usr BIGINT, id BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem',
  'path' = '%(out)s/firsts', 'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once');
CREATE TABLE counts (k BIGINT, w TIMESTAMP(3), n BIGINT) WITH ('connector' = 'filesystem',
  'path' = '%(out)s/counts', 'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once');
EXECUTE STATEMENT SET BEGIN
INSERT INTO firsts SELECT usr, id, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY usr
  ORDER BY proc ASC) AS rn FROM ev) WHERE rn = 1;
INSERT INTO counts SELECT MOD(id, 3), window_start, COUNT(*)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY MOD(id, 3), window_start, window_end;
END;
"""


def visible(out):
    lines = collections.Counter()
    for sink in ("firsts", "counts"):
        d = os.path.join(out, sink)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name[0] in "._":
                continue
            with open(os.path.join(d, name)) as f:
                lines.update(sink + ":" + l.strip() for l in f if l.strip())
    return lines


def write_job(work, name, data):
    out = os.path.join(work, name + "-out")
    job = os.path.join(work, name + ".sql")
    with open(job, "w") as f:
        f.write(JOB % {"data": data, "out": out})
    os.makedirs(out, exist_ok=True)
    return job, out


def cmd(sluice, job, ck):
    return [sluice, "run", job, "--shards", "2", "--quiet"] + (
        ["--checkpoint-dir", ck] if ck else [])


def main():
    sluice = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    work = tempfile.mkdtemp(prefix="sluice-stopset-")
    rng = random.Random(13)
    bad = 0
    stopped_at = []
    try:
        data = make_data(work)
        job, out = write_job(work, "reference", data)
        p = subprocess.run(cmd(sluice, job, None), stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=120)
        want = visible(out)
        counted = sum(int(l.split(",")[-1]) for l in want if l.startswith("counts:"))
        if p.returncode or counted != ROWS:
            print("FAIL: the reference run (exit %d) counted %d of %d rows: %s" % (
                p.returncode, counted, ROWS, p.stderr.decode()[-300:]))
            return 1
        t0 = time.monotonic()
        for r in range(rounds):
            job, out = write_job(work, "r%d" % r, data)
            ck = os.path.join(work, "r%d-ck" % r)
            # without --quiet: its "done" line says where the stop cut the input
            p = subprocess.Popen([c for c in cmd(sluice, job, ck) if c != "--quiet"],
                                 stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            # once the first checkpoint has committed something, at a moment of its own
            deadline = time.monotonic() + 60
            while not visible(out) and p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(rng.uniform(0, 0.05))
            p.send_signal(signal.SIGTERM)
            err1 = p.communicate(timeout=120)[1].decode(errors="replace")
            m = re.search(r"done: (\d+) records in", err1)
            stopped_at.append(int(m.group(1)) if m else -1)
            r2 = subprocess.run(cmd(sluice, job, ck), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, timeout=120)
            got = visible(out)
            if p.returncode or r2.returncode or got != want:
                bad += 1
                lost, extra = want - got, got - want
                print("round %d: FAIL: stop exit %d, restart exit %d; %d lost, %d extra%s%s"
                      % (r, p.returncode, r2.returncode, sum(lost.values()),
                         sum(extra.values()),
                         "; lost e.g. %s" % sorted(lost)[:2] if lost else "",
                         "; extra e.g. %s" % sorted(extra)[:2] if extra else ""))
                print("   | " + (err1.strip().splitlines() or [""])[-1])
                print("   | " + (r2.stderr.decode().strip().splitlines() or [""])[-1])
            shutil.rmtree(ck, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
        print("stopped after %s of %d records" % (stopped_at, 2 * ROWS))
        print("%d rounds (SIGTERM, restart) in %.0f s: %d wrong; %d rows a run, %d output "
              "lines" % (rounds, time.monotonic() - t0, bad, ROWS, sum(want.values())), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
