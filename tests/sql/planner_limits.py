#!/usr/bin/env python3
"""No input crashes the planner (issue 13, item 12): huge or deeply nested job files are
planned without a stack frame per element, or refused at a stated limit with one line
naming FILE:LINE:COL and the limit.

Each generated job runs through `sluice explain` and `sluice run`; a refusal must be exit 1
(never a signal) with its last line matching the expected text. The accepted ones must
also give the right rows.

  union 2000        2,000 branches of UNION ALL (before: a segfault in explain and run)
  union 64          64 branches: one keyed union of 64 inputs, 64 x 3 rows
  union nested      UNION ALL nested in parentheses 3,000 deep
  plus 10000        a + a + ... with 10,000 terms
  parens 5000       5,000 nested parentheses around a column
  functions 5000    ABS(ABS(...)) 5,000 deep
  in 10000          IN with 10,000 values
  subquery 3000     FROM (SELECT ... FROM (...)) 3,000 deep
  views 3000        a chain of 3,000 views (before: "view refers to itself", which none did)
  views 60          a chain of 60 views: planned and run
  view cycle        a view reading itself: "refers to itself"

Usage: planner_limits.py SLUICE
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HEAD = """CREATE TABLE t (a BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3',
  'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '3');
CREATE TABLE o (a BIGINT) WITH ('connector' = 'print');
"""


def views(n):
    return "".join("CREATE VIEW v%d AS SELECT a FROM %s;\n" % (i, "t" if i == 0 else
                                                              "v%d" % (i - 1))
                   for i in range(n)) + "INSERT INTO o SELECT a FROM v%d;\n" % (n - 1)


# name: (job after HEAD, expected error regex or None, rows printed when accepted)
CASES = {
    "union 2000": ("INSERT INTO o " + " UNION ALL ".join(["SELECT a FROM t"] * 2000) + ";\n",
                   r"UNION ALL of more than 64 branches", None),
    "union 64": ("INSERT INTO o " + " UNION ALL ".join(["SELECT a FROM t"] * 64) + ";\n",
                 None, 64 * 3),
    "union nested": ("INSERT INTO o " + "(" * 3000 + "SELECT a FROM t" +
                     " UNION ALL SELECT a FROM t)" * 3000 + ";\n",
                     r"nested more than \d+ deep", None),
    "plus 10000": ("INSERT INTO o SELECT " + " + ".join(["a"] * 10000) + " FROM t;\n",
                   r"expression too large \(more than \d+ values\)", None),
    "parens 5000": ("INSERT INTO o SELECT " + "(" * 5000 + "a" + ")" * 5000 + " FROM t;\n",
                    r"expression nested more than \d+ deep", None),
    "functions 5000": ("INSERT INTO o SELECT " + "ABS(" * 5000 + "a" + ")" * 5000 +
                       " FROM t;\n", r"expression nested more than \d+ deep", None),
    "in 10000": ("INSERT INTO o SELECT a FROM t WHERE a IN (" +
                 ",".join(str(i) for i in range(10000)) + ");\n",
                 r"expression too large \(more than \d+ values\)", None),
    "subquery 3000": ("INSERT INTO o " + "SELECT a FROM (" * 3000 + "SELECT a FROM t" +
                      ")" * 3000 + ";\n", r"FROM nested more than \d+ deep", None),
    "views 3000": (views(3000), r"views nested more than 64 deep \(view 'v\d+'", None),
    "views 60": (views(60), None, 3),
    "view cycle": ("CREATE VIEW w AS SELECT a FROM w;\nINSERT INTO o SELECT a FROM w;\n",
                   r"view 'w' refers to itself", None),
}


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-limits-")
    fails = 0
    try:
        for name, (body, err_re, rows) in CASES.items():
            job = os.path.join(work, name.replace(" ", "_") + ".sql")
            with open(job, "w") as f:
                f.write(HEAD + body)
            for verb in ("explain", "run"):
                p = subprocess.run([sluice, verb, job, "--shards", "2"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=120)
                err = p.stderr.decode(errors="replace").strip()
                last = err.splitlines()[-1] if err else ""
                if err_re:
                    ok = p.returncode == 1 and re.search(
                        re.escape(job) + r":\d+:\d+: .*" + err_re, last)
                    what = "refused: %s" % last[len(work):][:150]
                else:
                    printed = [l for l in p.stdout.decode().splitlines() if "+I[" in l]
                    ok = p.returncode == 0 and (verb == "explain" or len(printed) == rows)
                    what = "accepted (exit %d, %s)" % (p.returncode, "%d rows of %d" % (
                        len(printed), rows) if verb == "run" else "planned")
                if p.returncode < 0:
                    what = "killed by signal %d" % -p.returncode
                print("%s %-15s %-7s %s" % ("ok  " if ok else "FAIL", name, verb, what),
                      flush=True)
                fails += not ok
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if fails:
        print("FAIL: %d checks failed" % fails)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
