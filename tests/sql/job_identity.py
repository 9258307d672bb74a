#!/usr/bin/env python3
"""A job's identity for its checkpoints (issue 13, item 7): its pipeline name (by default
the job file's name), and each operator's uid - "<statement>/<name>", the statement being
the table it inserts into or its UID hint - not the path as typed, the line a statement
starts on, nor the operator's place in the plan; a refused restore says which operator.

A rate-limited datagen job (1 s tumbling counts into an exactly-once filesystem sink)
is killed with SIGKILL once two checkpoints completed, and restarted with the same
checkpoint directory as

  ./job.sql        from its own folder (the path typed differently)
  copy/job.sql     a copy in another folder
  line added       two comment lines added above the INSERT
  filter added     a WHERE before the window (an operator more, before the window's place);
                   also for a GROUP BY count on RocksDB, whose keys name their operator
  insert added     the INSERT in a statement set, another INSERT added before it
  sink renamed     started with SELECT /*+ UID('counts') */, restarted with the sink table
                   renamed and the same hint

each of which must restore ("restoring checkpoint") and end with every window exactly once
(before: the first three were refused, "state layout differs"; the last three, "the plan
changed"). Then

  upgrade-check    `sluice upgrade-check job.sql --checkpoint-dir DIR` before the restart:
                   the same job, every operator's state restored (exit 0); TUMBLE made
                   HOP, the tumble window's state refused and the hop window new (exit 1),
                   and with --allow-non-restored-state the tumble window's state dropped
                   (exit 0)
  window changed   TUMBLE made HOP: refused, exit 1, naming the tumble window; with
                   --allow-non-restored-state restored, saying the state is dropped
  pipeline.name    SET 'pipeline.name' to another name: refused, naming both names
  bad hint         a UID hint on an inner SELECT, or two statements with one UID: refused

Usage: job_identity.py SLUICE
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

ROWS = 20000

JOB = """%(head)sSET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE gen (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
  'connector' = 'datagen', 'number-of-rows' = '%(rows)d', 'rows-per-second' = '%(rate)d',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%(last)d',
  'fields.ts.kind' = 'event-time', 'fields.ts.step' = '10 ms');
CREATE TABLE %(sink)s (k BIGINT, w TIMESTAMP(3), n BIGINT) WITH ('connector' = 'filesystem',
  'path' = '%(out)s', 'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once');
CREATE TABLE other_t (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
%(above)s%(begin)sINSERT INTO %(sink)s SELECT %(hint)sMOD(id, 7), window_start, COUNT(*)
FROM TABLE(%(window)s)
GROUP BY MOD(id, 7), window_start, window_end;
%(end)s"""
GROUP_JOB = """SET 'pipeline.name' = 'counts';
SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE gen (id BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '%(rows)d', 'rows-per-second' = '10000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%(last)d');
CREATE TABLE p (k BIGINT, n BIGINT) WITH ('connector' = 'print');
INSERT INTO p SELECT MOD(id, 5), COUNT(*) FROM gen %(where)sGROUP BY MOD(id, 5);
"""
SET_BEGIN = "EXECUTE STATEMENT SET BEGIN\n"
OTHER_INSERT = "INSERT INTO other_t SELECT MOD(id, 3), COUNT(*) FROM gen GROUP BY MOD(id, 3);\n"
SET_END = "END;\n"
TUMBLE = "TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '1' SECOND)"
FILTERED = "TUMBLE(TABLE gen_kept, DESCRIPTOR(ts), INTERVAL '1' SECOND)"
KEPT_VIEW = "CREATE VIEW gen_kept AS SELECT %s* FROM gen WHERE id >= 0;\n"
HOP = "HOP(TABLE gen, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '2' SECOND)"

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


def write(path, out, rate, head="", above="", window=TUMBLE, sink="out_t", hint="",
          begin="", end=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(JOB % {"rows": ROWS, "last": ROWS - 1, "out": out, "rate": rate,
                       "head": head, "above": above, "window": window, "sink": sink,
                       "hint": hint, "begin": begin, "end": end})


def complete(ck):
    if not os.path.isdir(ck):
        return 0
    return sum(1 for n in os.listdir(ck)
               if n.startswith("chk-") and os.path.exists(os.path.join(ck, n, "MANIFEST")))


def killed_run(sluice, work, name, **first):
    """Starts work/name/job.sql (written with `first`), kills it after two checkpoints;
    returns (job, out, ck)."""
    d = os.path.join(work, name)
    job, out, ck = os.path.join(d, "job.sql"), os.path.join(d, "out"), os.path.join(d, "ck")
    write(job, out, 10000, **first)
    p = subprocess.Popen([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t0 = time.monotonic()
    while complete(ck) < 2 and p.poll() is None and time.monotonic() - t0 < 60:
        time.sleep(0.005)
    p.send_signal(signal.SIGKILL)
    p.wait()
    p.stderr.close()
    return job, out, ck


def restart(sluice, job, ck, cwd=None, extra=()):
    p = subprocess.run([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck] +
                       list(extra), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=120, cwd=cwd)
    return p.returncode, p.stderr.decode(errors="replace")


def upgrade_check(sluice, job, ck, extra=()):
    u = subprocess.run([sluice, "upgrade-check", job, "--checkpoint-dir", ck] + list(extra),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    text = u.stdout.decode()
    print("    | " + "\n    | ".join(text.strip().splitlines()))
    return u.returncode, text


def refusal(err):
    line = next((l for l in err.splitlines() if "refusing" in l or "dropping" in l), "")
    print("    | " + line)
    return line


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-ident-")
    try:
        ref = os.path.join(work, "ref", "job.sql")
        write(ref, os.path.join(work, "ref", "out"), 0)
        subprocess.run([sluice, "run", ref, "--shards", "2", "--quiet"], check=True,
                       stdout=subprocess.DEVNULL, timeout=120)
        want = visible(os.path.join(work, "ref", "out"))

        changes = {
            "filter added": ({}, {"window": FILTERED, "above": KEPT_VIEW % ""}),
            "insert added": ({"begin": SET_BEGIN, "end": SET_END},
                             {"begin": SET_BEGIN + OTHER_INSERT, "end": SET_END}),
            "sink renamed": ({"hint": "/*+ UID('counts') */ "},
                             {"hint": "/*+ UID('counts') */ ", "sink": "counts_t"}),
        }
        for how in ("./job.sql", "copy/job.sql", "line added") + tuple(changes):
            print(how + ":")
            first, then = changes.get(how, ({}, {}))
            job, out, ck = killed_run(sluice, work, how.replace("/", "_").replace(" ", "_"),
                                      **first)
            cwd = None
            if how == "./job.sql":
                cwd, job = os.path.dirname(job), "./job.sql"
            elif how == "copy/job.sql":
                copy = os.path.join(work, "copy", "job.sql")
                os.makedirs(os.path.dirname(copy), exist_ok=True)
                shutil.copy(job, copy)
                job = copy
            elif how == "line added":
                write(job, out, 10000, above="-- counts per residue\n-- of 7\n")
            else:
                write(job, out, 10000, **then)
            rc, err = restart(sluice, job, ck, cwd)
            last = (err.strip().splitlines() or [""])[-1]
            check(rc == 0 and "restoring checkpoint" in err,
                  "restored from the checkpoint (exit %d): %s" % (rc, last))
            got = visible(out)
            check(got == want, "every window exactly once (%d lost, %d extra of %d)" % (
                sum((want - got).values()), sum((got - want).values()), sum(want.values())))

        print("rocksdb, filter added:")
        # keyed state in RocksDB, whose keys name their operator: a GROUP BY count restored
        # into the plan with a WHERE before it must count on from the checkpoint
        d = os.path.join(work, "rocks")
        os.makedirs(d)
        job, ck = os.path.join(d, "job.sql"), os.path.join(d, "ck")
        counts = GROUP_JOB % {"rows": ROWS, "last": ROWS - 1, "where": ""}
        with open(job, "w") as f:
            f.write(counts)
        p = subprocess.Popen([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck,
                              "--state-backend", "rocksdb"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.monotonic()
        while complete(ck) < 2 and p.poll() is None and time.monotonic() - t0 < 60:
            time.sleep(0.005)
        p.send_signal(signal.SIGKILL)
        p.wait()
        with open(job, "w") as f:
            f.write(GROUP_JOB % {"rows": ROWS, "last": ROWS - 1, "where": "WHERE id >= 0 "})
        r = subprocess.run([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck,
                            "--state-backend", "rocksdb"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        final = {}
        for line in r.stdout.decode().splitlines():
            m = re.search(r"([+-][IU])\[(\d+), (\d+)\]", line)
            if m and m.group(1) in ("+I", "+U"):
                final[m.group(2)] = int(m.group(3))
        check(r.returncode == 0 and "restoring checkpoint" in r.stderr.decode() and
              final == {str(k): ROWS // 5 for k in range(5)},
              "counts go on from the checkpoint: %s" % sorted(final.items()))

        print("refusals:")
        job, out, ck = killed_run(sluice, work, "changed")
        rc, text = upgrade_check(sluice, job, ck)
        check(rc == 0 and "verdict: restored" in text and
              "window 'out_t/tumble window': restored (state)" in text and
              "source 'out_t/gen': restored (state)" in text,
              "upgrade-check of the same job: every operator's state restored")
        write(job, out, 10000, window=HOP)
        rc, text = upgrade_check(sluice, job, ck)
        check(rc == 1 and "window 'out_t/tumble window': refused: not in the new job" in text
              and "window 'out_t/hop window': new: starts empty" in text and
              "verdict: refused: window 'out_t/tumble window' is not in the new job" in text,
              "upgrade-check of TUMBLE made HOP: the tumble window refused, the hop window new")
        rc, text = upgrade_check(sluice, job, ck, ["--allow-non-restored-state"])
        check(rc == 0 and "window 'out_t/tumble window': dropped" in text and
              "verdict: restored" in text,
              "upgrade-check --allow-non-restored-state: the tumble window's state dropped")
        rc, err = restart(sluice, job, ck)
        line = refusal(err)
        check(rc == 1 and "window 'out_t/tumble window'" in line and
              "--allow-non-restored-state" in line,
              "TUMBLE made HOP: refused, naming the tumble window and the way on")
        rc, err = restart(sluice, job, ck, extra=["--allow-non-restored-state"])
        line = refusal(err)
        check(rc == 0 and "dropping the state of window 'out_t/tumble window'" in line and
              "restoring checkpoint" in err,
              "TUMBLE made HOP with --allow-non-restored-state: restored, the state dropped")
        write(job, out, 10000, head="SET 'pipeline.name' = 'other';\n")
        rc, err = restart(sluice, job, ck)
        line = refusal(err)
        check(rc == 1 and "'job.sql'" in line and "'other'" in line and "pipeline.name" in line,
              "another pipeline.name: refused, naming both")

        print("bad hints:")
        bad = os.path.join(work, "bad", "job.sql")
        write(bad, os.path.join(work, "bad", "out"), 0, window=FILTERED,
              above=KEPT_VIEW % "/*+ UID('x') */ ")
        p = subprocess.run([sluice, "explain", bad], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=60)
        err = p.stderr.decode()
        print("    | " + err.strip())
        check(p.returncode != 0 and "outer SELECT" in err and ":9:" in err,
              "a UID hint on an inner SELECT: refused at its place")
        write(bad, os.path.join(work, "bad", "out"), 0, begin=SET_BEGIN,
              end=OTHER_INSERT.replace("SELECT ", "SELECT /*+ UID('c') */ ") + SET_END,
              hint="/*+ UID('c') */ ")
        p = subprocess.run([sluice, "explain", bad], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=60)
        err = p.stderr.decode()
        print("    | " + err.strip())
        check(p.returncode != 0 and "UID 'c': another statement" in err,
              "two statements with one UID: refused")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if FAILS:
        print("FAIL: %d checks failed" % len(FAILS))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
