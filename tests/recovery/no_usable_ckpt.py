#!/usr/bin/env python3
"""No usable checkpoint (issue 13, item 3): a job whose checkpoint directory holds complete
checkpoints it cannot use refuses to start, instead of starting from scratch and writing its
exactly-once output a second time.

A bounded datagen job (keep-first dedup feeding 1 s tumbling counts, into an exactly-once
filesystem sink) runs to its end with checkpoints every 100 ms; retention keeps two. Then:

  heap      one byte of a state file flipped in each retained checkpoint (and, in the
            second round, the newest one's MANIFEST truncated)
  rocksdb   one byte flipped in one SST file that both retained checkpoints share (the
            same inode: native checkpoints hard-link unchanged files; if a compaction
            between them rewrote every file, one SST of each)

and the job is started again with the same directory. It must exit 1 with one last line
naming the checkpoint directory, the damaged checkpoints, --from-savepoint and
--start-fresh; the lines above name each damaged file and its cause; the sink's visible
output must be exactly what the first run committed (before: the run started from
scratch, printed the first start's lines and every row came out twice). The directory is
left as it was, so a second try says the same. `--start-fresh` then runs from scratch on
purpose: exit 0, the damaged checkpoints moved aside as corrupt-chk-<n>.

Usage: no_usable_ckpt.py SLUICE
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROWS = 12000

JOB = """SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE ev (id BIGINT, usr BIGINT, ts TIMESTAMP(3), proc AS PROCTIME(),
  WATERMARK FOR ts AS ts) WITH (
  'connector' = 'datagen', 'number-of-rows' = '%(rows)d', 'rows-per-second' = '8000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%(last)d',
  'fields.usr.kind' = 'sequence', 'fields.usr.start' = '0', 'fields.usr.end' = '%(last)d',
  'fields.ts.kind' = 'event-time', 'fields.ts.step' = '1 ms');
CREATE TABLE out_t (b BIGINT, w TIMESTAMP(3), n BIGINT) WITH ('connector' = 'filesystem',
  'path' = '%(out)s', 'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO out_t
SELECT MOD(id, 5), TUMBLE_START(ts, INTERVAL '1' SECOND), COUNT(*)
FROM (SELECT id, usr, ts
      FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY usr ORDER BY proc ASC) AS rn FROM ev)
      WHERE rn = 1)
GROUP BY TUMBLE(ts, INTERVAL '1' SECOND), MOD(id, 5);
"""

FAILS = []


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


def run(sluice, job, ck, backend, *extra):
    p = subprocess.run([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck,
                        "--state-backend", backend] + list(extra),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stderr.decode(errors="replace")


def complete(ck):
    return sorted((int(n[4:]) for n in os.listdir(ck)
                   if re.fullmatch(r"chk-\d+", n) and
                   os.path.exists(os.path.join(ck, n, "MANIFEST"))), reverse=True)


def flip(path):
    with open(path, "r+b") as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(size // 2)
        b = f.read(1)
        f.seek(size // 2)
        f.write(bytes([b[0] ^ 0x5a]))
    return size


def damage_heap(ck, ids, truncate_manifest):
    names = []
    for n in ids:
        d = os.path.join(ck, "chk-%d" % n)
        if truncate_manifest and n == ids[0]:
            os.truncate(os.path.join(d, "MANIFEST"), 40)
            names.append("chk-%d/MANIFEST" % n)
            continue
        states = sorted(f for f in os.listdir(d) if f.endswith(".state") and
                        os.path.getsize(os.path.join(d, f)) > 64)
        flip(os.path.join(d, states[-1]))
        names.append("chk-%d/%s" % (n, states[-1]))
    return names


def damage_shared_sst(ck, ids):
    """Flips a byte of an SST both checkpoints hold (one inode); its name, or None."""
    inodes = {}
    for n in ids:
        for root, _, files in os.walk(os.path.join(ck, "chk-%d" % n)):
            for f in files:
                if f.endswith(".sst"):
                    p = os.path.join(root, f)
                    inodes.setdefault(os.stat(p).st_ino, []).append(p)
    shared = sorted(v for v in inodes.values() if len(v) == len(ids))
    if not shared:
        # a compaction between the two rewrote every file: damage one of each
        print("    (no SST shared by both: a compaction rewrote them; one of each flipped)")
        names = []
        for n in ids:
            mine = sorted(v[0] for v in inodes.values()
                          if v[0].startswith(os.path.join(ck, "chk-%d/" % n)))
            flip(mine[0])
            names.append(os.path.relpath(mine[0], ck))
        return names
    flip(shared[0][0])
    return [os.path.relpath(shared[0][0], ck)]


def case(sluice, work, backend, how):
    print("%s, %s:" % (backend, how))
    out, ck = os.path.join(work, backend + how + "-out"), os.path.join(work, backend + how + "-ck")
    job = os.path.join(work, backend + how + ".sql")
    with open(job, "w") as f:
        f.write(JOB % {"rows": ROWS, "last": ROWS - 1, "out": out})
    rc, err = run(sluice, job, ck, backend)
    want = visible(out)
    if not check(rc == 0 and sum(int(l.split(",")[2]) for l in want) == ROWS,
                 "the first run commits every row (exit %d): %s" % (rc, err.strip()[-300:])):
        return
    ids = complete(ck)
    if not check(len(ids) == 2, "two complete checkpoints retained (%s)" % ids):
        return
    if backend == "rocksdb":
        damaged = damage_shared_sst(ck, ids)
    else:
        damaged = damage_heap(ck, ids, how == "manifest")
    print("    damaged " + ", ".join(damaged))
    for attempt in (1, 2):
        rc, err = run(sluice, job, ck, backend)
        lines = [l for l in err.strip().splitlines() if l.strip()]
        last = lines[-1] if lines else ""
        print("    | " + last)
        got = visible(out)
        check(rc == 1, "restart %d: refused, exit 1 (got %d)" % (attempt, rc))
        check("restoring" not in err and "done:" not in err,
              "restart %d: nothing restored, nothing run" % attempt)
        check(ck in last and "no usable checkpoint" in last and
              all("chk-%d" % n in last for n in ids) and "--from-savepoint" in last and
              "--start-fresh" in last,
              "restart %d: the last line names the directory, chk-%s, --from-savepoint "
              "and --start-fresh" % (attempt, " and chk-".join(map(str, ids))))
        check(all(os.path.basename(d) in err for d in damaged),
              "restart %d: the damaged files are named" % attempt)
        check(got == want, "restart %d: the committed output is untouched (%d lost, %d "
              "duplicated of %d)" % (attempt, sum((want - got).values()),
                                     sum((got - want).values()), sum(want.values())))
        check(complete(ck) == ids, "restart %d: the checkpoints are left in place" % attempt)
    if how == "flip":
        rc, err = run(sluice, job, ck, backend, "--start-fresh")
        check(rc == 0 and "--start-fresh" in err and "starting from scratch" in err,
              "--start-fresh runs from scratch, saying so (exit %d)" % rc)
        check("corrupt-chk-<n>" in err and complete(ck) and min(complete(ck)) > max(ids),
              "--start-fresh moves the damaged checkpoints aside and checkpoints anew")


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-nockpt-")
    try:
        case(sluice, work, "heap", "flip")
        case(sluice, work, "heap", "manifest")
        case(sluice, work, "rocksdb", "flip")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if FAILS:
        print("FAIL: %d checks failed" % len(FAILS))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
