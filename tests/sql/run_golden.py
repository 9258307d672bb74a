#!/usr/bin/env python3
"""SQL golden tests: each folder under tests/sql/cases/ holds job.sql (@DIR@ = the folder),
its input files and what the run must print.

  expected.out    the exact changelog (+I[...] lines) the job prints on 1 shard, in order;
                  on 2 and 3 shards the same lines must appear as a multiset (order across
                  keys depends on shard timing, the rows may not)
  expected.err    instead of expected.out: the job must fail planning, exit 1, and stderr
                  must contain this text (an error naming FILE:LINE:COL)
  shards          optional: the shard counts to run (default "1 2 3")
  unordered       optional: compare as a multiset on 1 shard too (several sources race)
  applied         optional: compare the changelog once applied (the rows it leaves, as a
                  multiset; a retraction of a row that is not there fails) on every shard
                  count: for jobs whose intermediate changes depend on which source's rows
                  arrive first (an outer join pads a row with NULLs until its match comes)
  expected.explain optional: the exact output of `sluice explain` (the job file's path
                  written as @JOB@)
  expected.sink   optional: the lines every file under @OUT@/sink holds together (sorted),
                  for jobs writing a filesystem sink; @OUT@ is a fresh folder per run
  expected.stdout optional: the exact stdout of the 1-shard run (changelog and what SHOW and
                  DESCRIBE print, in the file's order)

Usage: run_golden.py SLUICE [--state-backend B] [CASE ...]
  (prints PASS/FAIL per case, exit 1 on any failure; with --state-backend every run keeps
  its keyed state in backend B, and must print exactly what the heap backend prints)
       run_golden.py SLUICE --update CASE ...
  (writes the named cases' expected.out from a 1-shard run, and their expected.explain and
  expected.sink where the case has them, for review with `git diff` before committing; a
  case with expected.err is left alone: write the error text you want by hand. The runs
  that check the case follow as usual, so a case whose rows differ on other shard counts
  still fails.)
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
LINE = re.compile(r"^(?:\d+> )?([+-][IUD]\[.*\])$")


EXTRA = []


def run(sluice, job, shards, cwd):
    p = subprocess.run([sluice, "run", job, "--shards", str(shards), "--quiet"] + EXTRA, cwd=cwd,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def applied(lines):
    """The rows a changelog leaves (a Counter), or None when it retracts a missing row."""
    rows = {}
    for l in lines:
        row = l[2:]
        if l[0] == "+":
            rows[row] = rows.get(row, 0) + 1
        elif rows.get(row, 0) == 0:
            return None
        else:
            rows[row] -= 1
    return sorted(r for r, n in rows.items() for _ in range(n))


def check_case(sluice, d):
    name = os.path.basename(d)
    with open(os.path.join(d, "job.sql")) as f:
        text = f.read().replace("@DIR@", d)
    sink_path = os.path.join(d, "expected.sink")
    want_sink = sorted(l for l in open(sink_path).read().splitlines() if l) \
        if os.path.exists(sink_path) else None
    shards = [1, 2, 3]
    if os.path.exists(os.path.join(d, "shards")):
        shards = [int(x) for x in open(os.path.join(d, "shards")).read().split()]
    with tempfile.TemporaryDirectory(prefix="golden-") as work:
        job = os.path.join(work, "job.sql")
        with open(job, "w") as f:
            f.write(text.replace("@OUT@", work))
        explain_path = os.path.join(d, "expected.explain")
        if os.path.exists(explain_path):
            p = subprocess.run([sluice, "explain", job], cwd=work, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60)
            got = p.stdout.decode().replace(job, "@JOB@")
            if p.returncode != 0 or got != open(explain_path).read():
                return "FAIL %s: explain (exit %d) printed:\n%s" % (name, p.returncode, got)
        err_path = os.path.join(d, "expected.err")
        if os.path.exists(err_path):
            want = open(err_path).read().strip().replace("@JOB@", job)
            rc, out, err = run(sluice, job, 1, work)
            if rc != 1 or want not in err:
                return "FAIL %s: want exit 1 and stderr containing %r, got exit %d: %s" % (
                    name, want, rc, err.strip()[-300:])
            return "PASS %s (error)" % name
        want = [l for l in open(os.path.join(d, "expected.out")).read().splitlines() if l]
        for n in shards:
            out_dir = os.path.join(work, "out%d" % n)
            os.mkdir(out_dir)
            with open(job, "w") as f:
                f.write(text.replace("@OUT@", out_dir))
            rc, out, err = run(sluice, job, n, work)
            if rc != 0:
                return "FAIL %s: %d shards: exit %d: %s" % (name, n, rc, err.strip()[-300:])
            got = [m.group(1) for m in map(LINE.match, out.splitlines()) if m]
            stdout_path = os.path.join(d, "expected.stdout")
            if n == 1 and os.path.exists(stdout_path) and out != open(stdout_path).read():
                return "FAIL %s: 1 shard: stdout differs from expected.stdout:\n%s" % (
                    name, out[-1500:])
            if want_sink is not None:
                got_sink = []
                sink = os.path.join(out_dir, "sink")
                if os.path.isfile(sink):  # one shard writes the path itself
                    got_sink = [l for l in open(sink).read().splitlines() if l]
                for root, _, files in os.walk(sink):
                    for fn in files:
                        got_sink += [l for l in open(os.path.join(root, fn)).read().splitlines()
                                     if l]
                if sorted(got_sink) != want_sink:
                    return "FAIL %s: %d shards: sink holds %s, want %s" % (
                        name, n, sorted(got_sink)[:6], want_sink[:6])
            exact = n == 1 and not os.path.exists(os.path.join(d, "unordered"))
            if os.path.exists(os.path.join(d, "applied")):
                if applied(got) is None or applied(got) != applied(want):
                    return "FAIL %s: %d shards: once applied, the changelog leaves %s, want %s" % (
                        name, n, applied(got), applied(want))
                continue
            ok = got == want if exact else sorted(got) == sorted(want)
            if not ok:
                missing = [l for l in want if l not in got][:5]
                extra = [l for l in got if l not in want][:5]
                return "FAIL %s: %d shards: %d lines, want %d; missing %s; unexpected %s%s" % (
                    name, n, len(got), len(want), missing, extra,
                    "" if missing or extra else "; order differs:\n  got  %s\n  want %s" % (
                        got, want))
    return "PASS %s" % name


def update_case(sluice, d):
    """Writes what the job prints now as the case's expected output (1 shard)."""
    name = os.path.basename(d)
    if os.path.exists(os.path.join(d, "expected.err")):
        return "SKIP %s: an error case (expected.err is written by hand)" % name
    with open(os.path.join(d, "job.sql")) as f:
        text = f.read().replace("@DIR@", d)
    with tempfile.TemporaryDirectory(prefix="golden-") as work:
        out_dir = os.path.join(work, "out")
        os.mkdir(out_dir)
        job = os.path.join(work, "job.sql")
        with open(job, "w") as f:
            f.write(text.replace("@OUT@", out_dir))
        rc, out, err = run(sluice, job, 1, work)
        if rc != 0:
            return "FAIL %s: exit %d: %s" % (name, rc, err.strip()[-300:])
        got = [m.group(1) for m in map(LINE.match, out.splitlines()) if m]
        with open(os.path.join(d, "expected.out"), "w") as f:
            f.write("".join(l + "\n" for l in got))
        if os.path.exists(os.path.join(d, "expected.sink")):
            lines = []
            for root, _, files in os.walk(out_dir):
                for fn in files:
                    lines += [l for l in open(os.path.join(root, fn)).read().splitlines() if l]
            with open(os.path.join(d, "expected.sink"), "w") as f:
                f.write("".join(l + "\n" for l in sorted(lines)))
        if os.path.exists(os.path.join(d, "expected.explain")):
            p = subprocess.run([sluice, "explain", job], cwd=work, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60)
            with open(os.path.join(d, "expected.explain"), "w") as f:
                f.write(p.stdout.decode().replace(job, "@JOB@"))
    return "UPDATED %s: %d lines (review: git diff %s)" % (name, len(got), d)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    sluice = os.path.abspath(sys.argv[1])
    args = sys.argv[2:]
    if args[:1] == ["--state-backend"]:
        EXTRA.extend(args[:2])
        args = args[2:]
    update = args[:1] == ["--update"]
    if update:
        args = args[1:]
        if not args:
            print("run_golden.py: --update needs the cases to write (it never rewrites all)",
                  file=sys.stderr)
            return 2
    names = args or sorted(os.listdir(CASES))
    failed = 0
    for n in names if update else []:
        d = n if os.path.isdir(n) else os.path.join(CASES, n)
        res = update_case(sluice, os.path.abspath(d))
        print(res)
        failed += res.startswith("FAIL")
    for n in names:
        d = n if os.path.isdir(n) else os.path.join(CASES, n)
        res = check_case(sluice, os.path.abspath(d))
        print(res)
        failed += res.startswith("FAIL")
    print("golden: %d/%d pass" % (len(names) - failed, len(names)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
