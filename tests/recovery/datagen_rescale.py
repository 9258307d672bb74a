#!/usr/bin/env python3
"""A datagen job restored on another shard count continues the same stream (issue 13,
item 6).

datagen deals record i of the source to split i mod nsplits, and a fresh run has one split
a shard; its rows therefore depend on that count. A restore must keep the first run's
splits, whatever the shard count now (as Flink's generator source fixes its splits at the
first start), or it reads other rows than the ones left (before: kill -9 on 2 shards, then
--shards 1, read far more records than were left; a savepoint restored on one shard made
thousands of records late).

A rate-limited bounded datagen job (a sequence id, an event-time column, 1 s tumbling
counts per MOD(id, 7) into an exactly-once filesystem sink) is run uninterrupted on 2
shards for the reference. Then:

  kill -9    on 2 shards once two checkpoints completed, restarted with --shards 1 to its end
  savepoint  stopped with `sluice stop --savepoint` on 2 shards, resumed with
             --from-savepoint on 1 shard, and again on 3 shards

Each time the sink's visible rows must equal the reference as a multiset, and the restored
run must read exactly the records that were left (its "done" line).

With `nexmark` the job reads the nexmark connector instead (8 splits whatever the shard
count, paced with max-emit-speed = 'false'; the reference at full speed): counts and bid
price sums per event type, auction and second, the same checks.

Usage: datagen_rescale.py SLUICE [nexmark]
"""
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROWS = 30000

JOB = """SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE gen (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
  'connector' = 'datagen', 'number-of-rows' = '%(rows)d', 'rows-per-second' = '%(rate)d',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%(last)d',
  'fields.ts.kind' = 'event-time', 'fields.ts.step' = '10 ms');
CREATE TABLE out_t (k BIGINT, w TIMESTAMP(3), n BIGINT, s BIGINT) WITH (
  'connector' = 'filesystem', 'path' = '%(out)s', 'format' = 'csv',
  'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO out_t SELECT MOD(id, 7), window_start, COUNT(*), SUM(id)
FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY MOD(id, 7), window_start, window_end;
"""

NEXMARK_JOB = """SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE datagen (
  event_type INT,
  person ROW<`dateTime` TIMESTAMP(3)>,
  auction ROW<`dateTime` TIMESTAMP(3)>,
  bid ROW<auction BIGINT, price BIGINT, `dateTime` TIMESTAMP(3)>,
  `dateTime` AS CASE WHEN event_type = 0 THEN person.`dateTime`
                     WHEN event_type = 1 THEN auction.`dateTime` ELSE bid.`dateTime` END,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'events.num' = '%(rows)d', 'first-event.rate' = '10000',
        'max-emit-speed' = '%(max_speed)s');
CREATE TABLE out_t (k BIGINT, w TIMESTAMP(3), n BIGINT, s BIGINT) WITH (
  'connector' = 'filesystem', 'path' = '%(out)s', 'format' = 'csv',
  'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO out_t SELECT event_type * 10 + MOD(COALESCE(bid.auction, 0), 7), window_start,
  COUNT(*), SUM(COALESCE(bid.price, 0))
FROM TABLE(TUMBLE(TABLE datagen, DESCRIPTOR(`dateTime`), INTERVAL '1' SECOND))
GROUP BY event_type * 10 + MOD(COALESCE(bid.auction, 0), 7), window_start, window_end;
"""

FAILS = []
MODE = ["datagen"]


def check(cond, what):
    print("  %s %s" % ("ok  " if cond else "FAIL", what), flush=True)
    if not cond:
        FAILS.append(what)
    return cond


def visible(out):
    lines = collections.Counter()
    if os.path.isdir(out):
        for name in sorted(os.listdir(out)):
            if name[0] in "._":
                continue
            with open(os.path.join(out, name)) as f:
                lines.update(l.strip() for l in f if l.strip())
    return lines


def write_job(work, name, rate):
    out = os.path.join(work, name + "-out")
    job = os.path.join(work, name + ".sql")
    with open(job, "w") as f:
        if MODE[0] == "nexmark":  # paced at its first-event.rate (10000/s) when rate > 0
            f.write(NEXMARK_JOB % {"rows": ROWS, "out": out,
                                   "max_speed": "false" if rate else "true"})
        else:
            f.write(JOB % {"rows": ROWS, "last": ROWS - 1, "out": out, "rate": rate})
    return job, out


def records_in(err):
    m = re.search(r"done: (\d+) records in", err)
    return int(m.group(1)) if m else -1


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stderr.decode(errors="replace")


def compare(want, got, what):
    lost, extra = want - got, got - want
    check(got == want, "%s: every window exactly once (%d lost, %d extra of %d)" % (
        what, sum(lost.values()), sum(extra.values()), sum(want.values())))


def complete(ck):
    if not os.path.isdir(ck):
        return 0
    return sum(1 for n in os.listdir(ck)
               if n.startswith("chk-") and os.path.exists(os.path.join(ck, n, "MANIFEST")))


def wait(cond, p, what, limit=60):
    t0 = time.monotonic()
    while not cond():
        if p.poll() is not None or time.monotonic() - t0 > limit:
            return False
        time.sleep(0.005)
    return True


def case_kill(sluice, work, want):
    print("kill -9 on 2 shards, restart on 1:")
    job, out = write_job(work, "kill", 15000)
    ck = os.path.join(work, "kill-ck")
    p = subprocess.Popen([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if not check(wait(lambda: complete(ck) >= 2, p, "two checkpoints"),
                 "two checkpoints complete before the kill"):
        p.kill()
        p.wait()
        return
    p.send_signal(signal.SIGKILL)
    p.wait()
    p.stderr.close()
    rc, err = run([sluice, "run", job, "--shards", "1", "--checkpoint-dir", ck])
    check(rc == 0, "the restart on 1 shard ends (exit %d): %s" % (rc, err.strip()[-200:]))
    left = records_in(err)
    check(0 < left < ROWS, "it read only what was left (%d of %d records)" % (left, ROWS))
    compare(want, visible(out), "kill -9, then 1 shard")


def case_savepoint(sluice, work, want, shards):
    print("stop --savepoint on 2 shards, resume on %d:" % shards)
    job, out = write_job(work, "sp%d" % shards, 15000)
    sock = os.path.join(work, "sp%d.sock" % shards)
    spdir = os.path.join(work, "sp%d-savepoints" % shards)
    p = subprocess.Popen([sluice, "run", job, "--shards", "2", "--control", sock],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if not check(wait(lambda: os.path.exists(sock), p, "control socket"),
                 "the control socket appears"):
        p.kill()
        p.wait()
        return
    time.sleep(0.5)  # some windows fired and committed
    s = subprocess.run([sluice, "stop", "--savepoint=" + spdir, sock], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    sp = s.stdout.decode().strip()
    err1 = p.communicate(timeout=120)[1].decode(errors="replace")
    first = records_in(err1)
    if not check(s.returncode == 0 and os.path.isdir(sp) and p.returncode == 0 and
                 0 < first < ROWS, "stopped with a savepoint after %d of %d records (%s)"
                 % (first, ROWS, s.stderr.decode().strip())):
        return
    rc, err = run([sluice, "run", job, "--shards", str(shards), "--from-savepoint", sp])
    check(rc == 0, "resumed on %d shard(s) (exit %d): %s" % (shards, rc, err.strip()[-200:]))
    left = records_in(err)
    check(left == ROWS - first, "it read exactly the %d records left (%d)" % (
        ROWS - first, left))
    check(re.search(r"done: .* 0 late", err), "no record late after the restore")
    compare(want, visible(out), "savepoint, then %d shard(s)" % shards)


def main():
    sluice = os.path.abspath(sys.argv[1])
    MODE[0] = sys.argv[2] if len(sys.argv) > 2 else "datagen"
    work = tempfile.mkdtemp(prefix="sluice-dgrescale-")
    try:
        job, out = write_job(work, "reference", 0)
        rc, err = run([sluice, "run", job, "--shards", "2"])
        want = visible(out)
        if not check(rc == 0 and sum(int(l.split(",")[2]) for l in want) == ROWS,
                     "the reference run on 2 shards counts every row"):
            return 1
        case_kill(sluice, work, want)
        case_savepoint(sluice, work, want, 1)
        case_savepoint(sluice, work, want, 3)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if FAILS:
        print("FAIL: %d checks failed" % len(FAILS))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
