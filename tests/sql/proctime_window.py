#!/usr/bin/env python3
"""Processing-time windows (issue 14): TUMBLE, HOP and SESSION over a PROCTIME() column, as
Flink runs them: a record belongs to the windows of the wall clock when it reaches the window
operator, and a window fires when the clock passes its end, not by a watermark (the source
here has none). The output cannot be compared row by row with Flink's (it depends on the
clock), so a rate-limited datagen source (3,000 rows at 1,000 a second, 2 shards) is checked
for what must hold on any run:

  tumble   TVF TUMBLE 1 s, COUNT per key: windows [s, s + 1 s) on whole seconds, inside the
           run's wall-clock span; the counts add up to every row once; windows come out
           while the job runs, each within a second of its end (not all at the end of input)
  hop      GROUP BY HOP(pt, 0.5 s, 1 s): every row in exactly two windows
  session  SESSION TVF with PARTITION BY, gap 1 s: the steady source makes one session per
           key, which fires at the end of input (sluice fires what is open then; Flink drops
           processing-time windows still open at the end of a bounded input)
  restore  the tumble job into an exactly-once filesystem sink, kill -9 after two
           checkpoints, restarted: the committed counts add up to every row exactly once
  refused  a processing-time TVF without aggregation (window Top-N over it): a clear error

Usage: proctime_window.py SLUICE
"""
import datetime
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROWS = 3000
SRC = """SET 'table.local-time-zone' = 'UTC';
%(head)sCREATE TABLE gen (id BIGINT, pt AS PROCTIME()) WITH (
  'connector' = 'datagen', 'number-of-rows' = '%(rows)d', 'rows-per-second' = '1000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%(last)d');
"""
TUMBLE = SRC + """CREATE TABLE out_t (k BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT)
  WITH (%(sink)s);
INSERT INTO out_t SELECT MOD(id, 3), window_start, window_end, COUNT(*)
FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(pt), INTERVAL '1' SECOND))
GROUP BY MOD(id, 3), window_start, window_end;
"""
HOP = SRC + """CREATE TABLE out_t (k BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT)
  WITH ('connector' = 'print');
INSERT INTO out_t SELECT MOD(id, 3), HOP_START(pt, INTERVAL '0.5' SECOND, INTERVAL '1' SECOND),
  HOP_END(pt, INTERVAL '0.5' SECOND, INTERVAL '1' SECOND), COUNT(*)
FROM gen GROUP BY MOD(id, 3), HOP(pt, INTERVAL '0.5' SECOND, INTERVAL '1' SECOND);
"""
SESSION = SRC + """CREATE TABLE out_t (k BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT)
  WITH ('connector' = 'print');
CREATE VIEW keyed AS SELECT MOD(id, 3) AS k, pt FROM gen;
INSERT INTO out_t SELECT k, window_start, window_end, COUNT(*)
FROM TABLE(SESSION(TABLE keyed PARTITION BY k, DESCRIPTOR(pt), INTERVAL '1' SECOND))
GROUP BY k, window_start, window_end;
"""
TOPN = SRC + """CREATE TABLE out_t (id BIGINT) WITH ('connector' = 'print');
INSERT INTO out_t SELECT id FROM (
  SELECT id, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY id) AS rn
  FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(pt), INTERVAL '1' SECOND))) WHERE rn <= 1;
"""
ROW = re.compile(r"\+I\[(\d+), ([\d-]+ [\d:.]+), ([\d-]+ [\d:.]+), (\d+)\]")
FAILS = []


def check(cond, what):
    print("  %s %s" % ("ok  " if cond else "FAIL", what), flush=True)
    if not cond:
        FAILS.append(what)
    return cond


def ms(text):
    d = datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f")
    return int(d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)


def write(work, name, text, **kw):
    path = os.path.join(work, name + ".sql")
    with open(path, "w") as f:
        f.write(text % dict({"rows": ROWS, "last": ROWS - 1, "head": "",
                             "sink": "'connector' = 'print'"}, **kw))
    return path


def run_timed(sluice, job):
    """[(arrival ms, k, start ms, end ms, n)] of a print job, and its exit status, stderr."""
    p = subprocess.Popen([sluice, "run", job, "--shards", "2"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    rows = []
    for line in p.stdout:
        m = ROW.search(line)
        if m:
            rows.append((int(time.time() * 1000), int(m.group(1)), ms(m.group(2)),
                         ms(m.group(3)), int(m.group(4))))
    err = p.stderr.read()
    return rows, p.wait(), err


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-proctime-")
    try:
        print("tumble:")
        t0 = int(time.time() * 1000)
        rows, rc, err = run_timed(sluice, write(work, "tumble", TUMBLE))
        t1 = int(time.time() * 1000)
        check(rc == 0, "exit 0 (%s)" % err.strip()[-200:])
        check(sum(r[4] for r in rows) == ROWS,
              "every row counted once (%d of %d)" % (sum(r[4] for r in rows), ROWS))
        check(all(s % 1000 == 0 and e == s + 1000 and t0 - 1000 <= s <= t1
                  for _, _, s, e, _ in rows),
              "windows of 1 s on whole seconds, in the run's wall-clock span")
        live = [r for r in rows if r[0] < t1 - 500]
        check(len(live) >= 3 and all(a - e < 1000 for a, _, _, e, _ in live),
              "windows fire while the job runs, within 1 s of their end (%d of %d rows before "
              "its last half second)" % (len(live), len(rows)))

        print("hop:")
        rows, rc, err = run_timed(sluice, write(work, "hop", HOP))
        check(rc == 0 and sum(r[4] for r in rows) == 2 * ROWS and
              all(e - s == 1000 and s % 500 == 0 for _, _, s, e, _ in rows),
              "every row in two 1 s windows on the 0.5 s grid (%d counted, want %d)" % (
                  sum(r[4] for r in rows), 2 * ROWS))

        print("session:")
        rows, rc, err = run_timed(sluice, write(work, "session", SESSION))
        check(rc == 0 and sum(r[4] for r in rows) == ROWS and
              sorted(r[1] for r in rows) == [0, 1, 2],
              "one session per key, every row once (%d rows, %d counted)" % (
                  len(rows), sum(r[4] for r in rows)))

        print("restore:")
        out, ck = os.path.join(work, "out"), os.path.join(work, "ck")
        job = write(work, "restore", TUMBLE,
                    head="SET 'execution.checkpointing.interval' = '200 ms';\n",
                    sink="'connector' = 'filesystem', 'path' = '%s', 'format' = 'csv', "
                         "'sink.delivery-guarantee' = 'exactly-once'" % out)
        p = subprocess.Popen([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t = time.monotonic()
        while p.poll() is None and time.monotonic() - t < 60 and sum(
                1 for n in (os.listdir(ck) if os.path.isdir(ck) else [])
                if os.path.exists(os.path.join(ck, n, "MANIFEST"))) < 2:
            time.sleep(0.01)
        time.sleep(0.3)
        p.send_signal(signal.SIGKILL)
        p.wait()
        r = subprocess.run([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=120)
        total = 0
        for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
            if name[0] in "._":
                continue
            with open(os.path.join(out, name)) as f:
                total += sum(int(l.strip().split(",")[3]) for l in f if l.strip())
        check(r.returncode == 0 and "restoring checkpoint" in r.stderr and total == ROWS,
              "killed and restored: every row counted exactly once (%d of %d)" % (total, ROWS))

        print("refused:")
        r = subprocess.run([sluice, "explain", write(work, "topn", TOPN)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=60)
        print("    | " + r.stderr.strip())
        check(r.returncode != 0 and "processing time" in r.stderr and "topn.sql:" in r.stderr,
              "a processing-time TVF without aggregation: refused, at its place")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if FAILS:
        print("FAIL: %d checks failed" % len(FAILS))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
