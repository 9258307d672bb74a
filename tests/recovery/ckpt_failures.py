#!/usr/bin/env python3
"""Failed checkpoints and what the job does about them (issue 13, item 4).

A bounded datagen job counts its rows in 1 s tumbling windows into a filesystem sink
(exactly-once: the job checkpoints every 50 ms). `execution.checkpointing.tolerable-failed-checkpoints` means what it means in
Flink: the number of failed checkpoints in a row the job tolerates; the default, 0, fails
the job at the first failure. Whatever happens, the job never ends with exit 0 while
output is left uncommitted.

  read-only      the checkpoint directory is on a read-only filesystem (a tmpfs mounted
                 read-only in a mount namespace of its own when run as root, else a mode
                 0555 directory): with the default the job fails at its first checkpoint,
                 exit 1, one last line naming the checkpoint, the cause and the option;
                 never "done"
  tolerated 2    the same with the option at 2: it fails at the third failure in a row
  final          the option at 1000, so every checkpoint failure is tolerated: at the end
                 of input the final checkpoint cannot complete either, and the job says the
                 output is not committed, exit 1 (before: exit 0, "done", nothing visible)
  one EIO        SLUICE_CKPT_FAULT=EIO:3 fails one checkpoint's state file write: with the
                 default the job fails naming it; with the option at 1 it goes on, the next
                 checkpoints complete and every window is visible exactly once, exit 0

Usage: ckpt_failures.py SLUICE
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROWS = 40000

JOB = """SET 'execution.checkpointing.interval' = '50 ms';
%(tol)s
CREATE TABLE gen (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (
  'connector' = 'datagen', 'number-of-rows' = '%(rows)d', 'rows-per-second' = '20000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '%(last)d',
  'fields.ts.kind' = 'event-time', 'fields.ts.step' = '10 ms');
CREATE TABLE out_t (k BIGINT, w TIMESTAMP(3), n BIGINT) WITH ('connector' = 'filesystem',
  'path' = '%(out)s', 'format' = 'csv');
INSERT INTO out_t SELECT MOD(id, 7), window_start, COUNT(*)
FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY MOD(id, 7), window_start, window_end;
"""

FAILS = []


def check(cond, what):
    print("  %s %s" % ("ok  " if cond else "FAIL", what), flush=True)
    if not cond:
        FAILS.append(what)
    return cond


def write_job(work, name, tol):
    out = os.path.join(work, name + "-out")
    job = os.path.join(work, name + ".sql")
    with open(job, "w") as f:
        f.write(JOB % {"rows": ROWS, "last": ROWS - 1, "out": out,
                       "tol": "SET 'execution.checkpointing.tolerable-failed-checkpoints' = "
                              "'%d';" % tol if tol is not None else ""})
    return job, out


def visible(out):
    lines = collections.Counter()
    if os.path.isdir(out):
        for name in os.listdir(out):
            if name[0] in "._":
                continue
            with open(os.path.join(out, name)) as f:
                lines.update(l.strip() for l in f if l.strip())
    return lines


def readonly_cmd(sluice, job, ck):
    """The command line that runs job with checkpoint dir ck read-only, or None."""
    os.makedirs(ck, exist_ok=True)
    run = [sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck]
    if os.geteuid() != 0:
        os.chmod(ck, 0o555)
        return run
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o ro,size=1m tmpfs "
                            "'%s' && touch '%s/x'" % (ck, ck)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    if b"Read-only" not in probe.stdout:
        print("  cannot mount a read-only tmpfs here (%s)" % probe.stdout.decode().strip())
        return None
    return ["unshare", "-m", "sh", "-c",
            "mount -t tmpfs -o ro,size=1m tmpfs \"$0\" && exec \"$@\"", ck] + run


def last_line(err):
    lines = [l for l in err.strip().splitlines() if l.strip()]
    return lines[-1] if lines else ""


def case_readonly(sluice, work, name, tol, want_fails):
    print("%s (tolerable-failed-checkpoints %s):" % (name, "default" if tol is None else tol))
    job, out = write_job(work, name, tol)
    cmd = readonly_cmd(sluice, job, os.path.join(work, name + "-ck"))
    if cmd is None:
        return "skip"
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode(errors="replace")
    last = last_line(err)
    print("    | " + last)
    failed = len(re.findall(r"checkpoint \d+: cannot create its directory: Read-only", err))
    check(p.returncode == 1, "exit 1 (got %d)" % p.returncode)
    check("done:" not in err, "no \"done\" line")
    if want_fails is not None:
        check(re.search(r"checkpoint \d+ failed .*Read-only file system.*%d in a row.*"
                        r"execution\.checkpointing\.tolerable-failed-checkpoints" % want_fails,
                        last), "the last line names the checkpoint, the cause, %d failures "
                               "in a row and the option" % want_fails)
        check(failed == want_fails, "%d checkpoints failed before the job stopped (got %d)"
              % (want_fails, failed))
    else:
        check(re.search(r"not committed", last) and "Read-only file system" in last,
              "the last line says the output is not committed, and why")
    return "run"


def case_eio(sluice, work):
    print("one EIO:")
    env = dict(os.environ, SLUICE_CKPT_FAULT="EIO:3")
    job, out = write_job(work, "reference", None)
    p = subprocess.run([sluice, "run", job, "--shards", "2"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=120)
    want = visible(out)
    if not check(p.returncode == 0 and sum(int(l.split(",")[2]) for l in want) == ROWS,
                 "the reference run without checkpoints counts every row"):
        return
    for tol in (None, 1):
        job, out = write_job(work, "eio-%s" % tol, tol)
        ck = os.path.join(work, "eio-%s-ck" % tol)
        p = subprocess.run([sluice, "run", job, "--shards", "2", "--checkpoint-dir", ck],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=120)
        err = p.stderr.decode(errors="replace")
        last = last_line(err)
        print("    | " + last)
        if tol is None:
            check(p.returncode == 1 and re.search(r"checkpoint \d+ failed .*Input/output error"
                                                  r".*1 in a row", last),
                  "default: the job fails at the failed checkpoint, naming it (exit %d)"
                  % p.returncode)
        else:
            got = visible(out)
            check(p.returncode == 0 and "Input/output error" in err,
                  "tolerated 1: the failure is reported and the job ends (exit %d)"
                  % p.returncode)
            check(got == want, "tolerated 1: every window visible exactly once (%d lost, "
                  "%d extra of %d)" % (sum((want - got).values()), sum((got - want).values()),
                                       sum(want.values())))


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-ckfail-")
    try:
        ran = [case_readonly(sluice, work, "read-only", None, 1),
               case_readonly(sluice, work, "tolerated-2", 2, 3),
               case_readonly(sluice, work, "final", 1000, None)]
        case_eio(sluice, work)
    finally:
        subprocess.run(["chmod", "-R", "u+w", work])
        shutil.rmtree(work, ignore_errors=True)
    if FAILS:
        print("FAIL: %d checks failed" % len(FAILS))
        return 1
    if "skip" in ran:
        print("ok (the read-only cases were skipped: no read-only filesystem to be had)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
