#!/usr/bin/env python3
"""A job's identity for its checkpoints (issue 13, item 7): its pipeline name (by default
the job file's name) and the shape of its plan, not the path as typed nor the line a
statement starts on; a refused restore says which operator changed.

A rate-limited datagen job (1 s tumbling counts into an exactly-once filesystem sink)
is killed with SIGKILL once two checkpoints completed, and restarted with the same
checkpoint directory as

  ./job.sql        from its own folder (the path typed differently)
  copy/job.sql     a copy in another folder
  line added       two comment lines added above the INSERT

each of which must restore ("restoring checkpoint") and end with every window exactly once
(before: each was refused, "state layout differs"). Then

  upgrade-check    `sluice upgrade-check job.sql --checkpoint-dir DIR` before the restart:
                   the same job, every operator's state restored (exit 0); TUMBLE made
                   HOP, the window refused with what the checkpoint has there (exit 1)
  window changed   TUMBLE made HOP: refused, exit 1, naming the window operator both ways
  pipeline.name    SET 'pipeline.name' to another name: refused, naming both names

Usage: job_identity.py SLUICE
"""
import collections
import os
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
CREATE TABLE out_t (k BIGINT, w TIMESTAMP(3), n BIGINT) WITH ('connector' = 'filesystem',
  'path' = '%(out)s', 'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once');
%(above)sINSERT INTO out_t SELECT MOD(id, 7), window_start, COUNT(*)
FROM TABLE(%(window)s)
GROUP BY MOD(id, 7), window_start, window_end;
"""
TUMBLE = "TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '1' SECOND)"
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


def write(path, out, rate, head="", above="", window=TUMBLE):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(JOB % {"rows": ROWS, "last": ROWS - 1, "out": out, "rate": rate,
                       "head": head, "above": above, "window": window})


def complete(ck):
    if not os.path.isdir(ck):
        return 0
    return sum(1 for n in os.listdir(ck)
               if n.startswith("chk-") and os.path.exists(os.path.join(ck, n, "MANIFEST")))


def killed_run(sluice, work, name):
    """Starts work/name/job.sql, kills it after two checkpoints; returns (job, out, ck)."""
    d = os.path.join(work, name)
    job, out, ck = os.path.join(d, "job.sql"), os.path.join(d, "out"), os.path.join(d, "ck")
    write(job, out, 10000)
    p = subprocess.Popen([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t0 = time.monotonic()
    while complete(ck) < 2 and p.poll() is None and time.monotonic() - t0 < 60:
        time.sleep(0.005)
    p.send_signal(signal.SIGKILL)
    p.wait()
    p.stderr.close()
    return job, out, ck


def restart(sluice, job, ck, cwd=None):
    p = subprocess.run([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120, cwd=cwd)
    return p.returncode, p.stderr.decode(errors="replace")


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-ident-")
    try:
        ref = os.path.join(work, "ref", "job.sql")
        write(ref, os.path.join(work, "ref", "out"), 0)
        subprocess.run([sluice, "run", ref, "--shards", "2", "--quiet"], check=True,
                       stdout=subprocess.DEVNULL, timeout=120)
        want = visible(os.path.join(work, "ref", "out"))

        for how in ("./job.sql", "copy/job.sql", "line added"):
            print(how + ":")
            job, out, ck = killed_run(sluice, work, how.replace("/", "_").replace(" ", "_"))
            cwd = None
            if how == "./job.sql":
                cwd, job = os.path.dirname(job), "./job.sql"
            elif how == "copy/job.sql":
                copy = os.path.join(work, "copy", "job.sql")
                os.makedirs(os.path.dirname(copy), exist_ok=True)
                shutil.copy(job, copy)
                job = copy
            else:
                write(job, out, 10000, above="-- counts per residue\n-- of 7\n")
            rc, err = restart(sluice, job, ck, cwd)
            last = (err.strip().splitlines() or [""])[-1]
            check(rc == 0 and "restoring checkpoint" in err,
                  "restored from the checkpoint (exit %d): %s" % (rc, last))
            got = visible(out)
            check(got == want, "every window exactly once (%d lost, %d extra of %d)" % (
                sum((want - got).values()), sum((got - want).values()), sum(want.values())))

        print("refusals:")
        job, out, ck = killed_run(sluice, work, "changed")
        u = subprocess.run([sluice, "upgrade-check", job, "--checkpoint-dir", ck],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        text = u.stdout.decode()
        print("    | " + "\n    | ".join(text.strip().splitlines()))
        check(u.returncode == 0 and "verdict: restored" in text and
              "3:window:tumble window: restored (state)" in text and "0:source:gen: restored (state)" in text,
              "upgrade-check of the same job: every operator's state restored")
        write(job, out, 10000, window=HOP)
        u = subprocess.run([sluice, "upgrade-check", job, "--checkpoint-dir", ck],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        text = u.stdout.decode()
        print("    | " + "\n    | ".join(text.strip().splitlines()))
        check(u.returncode == 1 and "hop window: refused: the checkpoint has 3:window:tumble "
              "window here" in text and "verdict: refused: the plan changed at operator 3"
              in text, "upgrade-check of TUMBLE made HOP: the window refused, and why")
        rc, err = restart(sluice, job, ck)
        print("    | " + next((l for l in err.splitlines() if "refusing" in l), ""))
        check(rc == 1 and "plan changed at operator" in err and "hop window" in err and
              "tumble window" in err, "TUMBLE made HOP: refused, naming the window both ways")
        write(job, out, 10000, head="SET 'pipeline.name' = 'other';\n")
        rc, err = restart(sluice, job, ck)
        print("    | " + next((l for l in err.splitlines() if "refusing" in l), ""))
        check(rc == 1 and "'job.sql'" in err and "'other'" in err and "pipeline.name" in err,
              "another pipeline.name: refused, naming both")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if FAILS:
        print("FAIL: %d checks failed" % len(FAILS))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
