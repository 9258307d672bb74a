#!/usr/bin/env python3
"""One large file read by every shard: the filesystem source cuts a file into byte ranges
('source.split-size'), and the rows do not depend on the cut or the shard count.

  every shard    a passthrough job on 2 shards printing with Flink's "N> " subtask prefix:
                 both shards print rows when the file is cut, one when it is not
                 ('source.split-size' = '0'), and the rows are the file's, each once
  same rows      a TUMBLE count and sum over a CSV file with quoted fields that hold line
                 breaks: the same changelog, as a multiset, on 1 and 2 shards, cut or not
  dead letters   malformed records far into the file are dead-lettered once each with their
                 line number in the whole file, whichever range read them
  errors         a 'source.split-size' that is not a memory size is refused naming it

Usage: file_splits.py SLUICE
"""
import collections
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROWS = 60000


def write_csv(path):
    """user_id, ts_ms, amount, note; about 2 MB. Every 97th record's note holds a quoted line
    break, every 1013th record is malformed. Returns (good rows, malformed line numbers)."""
    rnd = random.Random(7)
    good, bad, line = [], [], 1
    with open(path, "w") as f:
        for i in range(ROWS):
            ts = i * 5 + rnd.randint(0, 300)
            if i % 1013 == 500:
                f.write("x%d,%d,oops,bad\n" % (i, ts))
                bad.append(line)
                line += 1
                continue
            user, amount = rnd.randint(0, 499), rnd.randint(1, 100)
            note = '"two\nlines, %d"' % i if i % 97 == 0 else "n%d" % i
            f.write("%d,%d,%d,%s\n" % (user, ts, amount, note))
            good.append((user, ts, amount))
            line += 2 if i % 97 == 0 else 1
    return good, bad


def job(path, split, query):
    return """
CREATE TABLE ev (user_id BIGINT, ts_ms BIGINT, amount BIGINT, note STRING,
  ts AS TO_TIMESTAMP_LTZ(ts_ms, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv',
        'source.split-size' = '%s');
CREATE TABLE out_t (a BIGINT, b BIGINT, c BIGINT) WITH ('connector' = 'print');
%s
""" % (path, split, query)


PASS = "INSERT INTO out_t SELECT user_id, ts_ms, amount FROM ev;"
TUMBLE = """INSERT INTO out_t SELECT user_id, COUNT(*), SUM(amount)
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND))
  GROUP BY user_id, window_start, window_end;"""


def run(sluice, work, sql, shards, extra=()):
    p = os.path.join(work, "job.sql")
    with open(p, "w") as f:
        f.write(sql)
    r = subprocess.run([sluice, "run", p, "--shards", str(shards)] + list(extra), cwd=work,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def rows(out):
    """The printed rows as a multiset, without the subtask prefixes; and the prefixes seen."""
    got, prefixes = collections.Counter(), set()
    for line in out.splitlines():
        pre, sep, rest = line.partition("> ")
        if sep and pre.isdigit():
            prefixes.add(pre)
            line = rest
        got[line] += 1
    return got, prefixes


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-file-splits-")
    fails = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            fails.append(what)

    try:
        data = os.path.join(work, "ev.csv")
        good, bad = write_csv(data)
        want = collections.Counter("+I[%d, %d, %d]" % g for g in good)
        dl = os.path.join(work, "dead.jsonl")

        rc, out, err = run(sluice, work, job(data, "64kb", PASS), 2, ["--dead-letter", dl])
        got, prefixes = rows(out)
        check(rc == 0, "cut file, 2 shards: exit 0 (%d: %s)" % (rc, err[-300:]))
        check(prefixes == {"1", "2"}, "cut file, 2 shards: both shards read it (%s)"
              % sorted(prefixes))
        check(got == want, "cut file, 2 shards: every row once (%d rows, want %d)"
              % (sum(got.values()), len(good)))
        with open(dl) as f:
            where = sorted(json.loads(l)["where"] for l in f)
        want_where = sorted("%s:%d" % (data, n) for n in bad)
        check(where == want_where, "dead letters name their line in the whole file "
              "(%d of %d; first %s, want %s)" % (len(where), len(bad), where[:2], want_where[:2]))

        rc, out, err = run(sluice, work, job(data, "0", PASS), 2)
        got, prefixes = rows(out)
        check(rc == 0 and len(prefixes) == 1 and got == want,
              "one split per file ('0'), 2 shards: one shard reads it, same rows (%s)"
              % sorted(prefixes))

        ref = None
        for shards, split in ((1, "0"), (1, "64kb"), (2, "64kb"), (2, "100kb"), (2, "7kb")):
            rc, out, err = run(sluice, work, job(data, split, TUMBLE), shards)
            got, _ = rows(out)
            if ref is None:
                ref = got
                check(rc == 0 and sum(got.values()) > 10000,
                      "tumble, 1 shard, one split: %d rows" % sum(got.values()))
                continue
            diff = (ref - got) + (got - ref)
            check(rc == 0 and got == ref, "tumble, %d shards, split %s: same rows as one split "
                  "on 1 shard (%d differ)" % (shards, split, sum(diff.values())))

        rc, out, err = run(sluice, work, job(data, "lots", PASS), 1)
        check(rc != 0 and "source.split-size" in err and "'lots'" in err,
              "a bad split size is refused naming the option (%s)" % err.strip()[-160:])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("file_splits: %s" % ("FAIL" if fails else "ok"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
