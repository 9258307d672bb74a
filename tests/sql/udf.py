#!/usr/bin/env python3
"""Scalar SQL functions in C loaded from a shared object (CREATE FUNCTION ... LANGUAGE C,
sluice/udf.h), end to end through `sluice run`.

Not a golden case: Flink cannot load a C library (its UDFs are Java classes), so there is
nothing to compare with; this is a deliberate sluice extension. The expected values are
computed here, independently of the library (rot13, 64-bit FNV-1a, clamping), so a call
that is not made, or made with the wrong arguments, fails the test. Then every refusal:
a missing file, a missing symbol, another ABI, a descriptor without a function, a call
that does not match the declared types or count, a name taken, LANGUAGE JAVA.

Usage: udf.py SLUICE LIBTEXT_UDF.so LIBUDF_BAD.so"""
import codecs
import json
import os
import subprocess
import sys
import tempfile

sluice, text_so, bad_so = (os.path.abspath(a) for a in sys.argv[1:4])


def fnv1a(s):
    h = 14695981039346656037
    for b in s.encode():
        h = ((h ^ b) * 1099511628211) & (2 ** 64 - 1)
    return h - 2 ** 64 if h >= 2 ** 63 else h


def run(d, text, shards=1):
    job = os.path.join(d, "job.sql")
    with open(job, "w") as f:
        f.write(text)
    p = subprocess.run([sluice, "run", "job.sql", "--shards", str(shards)], cwd=d,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


ROWS = [("abc", 5), ("Hello, World", -3), ("héllo", 250), (None, None), ("", 100)]

JOB = """
CREATE FUNCTION rot13 AS '%(t)s:sl_example_rot13' LANGUAGE C;
CREATE TEMPORARY FUNCTION IF NOT EXISTS fnv1a AS '%(t)s:sl_example_fnv1a' LANGUAGE C;
CREATE FUNCTION IF NOT EXISTS fnv1a AS '%(t)s:no_such_symbol' LANGUAGE C;
CREATE TEMPORARY SYSTEM FUNCTION clamp AS '%(t)s:sl_example_clamp' LANGUAGE C;
CREATE FUNCTION half AS '%(b)s:t_half' LANGUAGE C;
CREATE FUNCTION fail AS '%(b)s:t_fail' LANGUAGE C;
CREATE FUNCTION stray AS '%(b)s:t_stray' LANGUAGE C;
CREATE TABLE t (s STRING, x INT)
  WITH ('connector' = 'filesystem', 'path' = 'in.jsonl', 'format' = 'json');
SELECT s, ROT13(s) AS r, UPPER(rot13(rot13(s))) AS rr, fnv1a(s) AS h, clamp(x, 0, 100) AS c,
       clamp(x, NULL, 10) AS c2, half(x) AS hf, fail(x) AS f, stray() AS st
FROM t;
""" % {"t": text_so, "b": bad_so}


def rot13(s):
    return codecs.encode(s, "rot13")


def show(v):
    if v is None:
        return "NULL"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def expect():
    out = []
    for s, x in ROWS:
        c = None if x is None else min(max(x, 0), 100)
        c2 = None if x is None else min(x, 10)
        vals = [s, None if s is None else rot13(s), None if s is None else s.upper(),
                None if s is None else fnv1a(s), c, c2, None if x is None else x / 2,
                None, None]
        out.append("+I[" + ", ".join(show(v) for v in vals) + "]")
    return out


SHOW_JOB = """
CREATE FUNCTION Rot13 AS '%(t)s:sl_example_rot13' LANGUAGE C;
CREATE TEMPORARY FUNCTION clamp AS '%(t)s:sl_example_clamp' LANGUAGE C;
CREATE FUNCTION FNV1A AS '%(t)s:sl_example_fnv1a' LANGUAGE C;
SHOW USER FUNCTIONS;
""" % {"t": text_so}
SHOW_WANT = """+---------------+
| function name |
+---------------+
|         clamp |
|         fnv1a |
|         rot13 |
+---------------+
3 rows in set
"""

ERRORS = [
    ("CREATE FUNCTION f AS '/nonexistent/libx.so:sym' LANGUAGE C;",
     ["job.sql:1:22:", "cannot load '/nonexistent/libx.so'"]),
    ("CREATE FUNCTION f AS '%s:no_such_symbol' LANGUAGE C;" % text_so,
     ["job.sql:1:22:", "'%s' has no symbol 'no_such_symbol'" % text_so]),
    ("CREATE FUNCTION f AS '%s:t_future_abi' LANGUAGE C;" % bad_so,
     ["job.sql:1:22:", "'t_future_abi' is of UDF ABI 2, this sluice reads ABI 1", bad_so]),
    ("CREATE FUNCTION f AS '%s:t_no_fn' LANGUAGE C;" % bad_so,
     ["job.sql:1:22:", "'t_no_fn' has no function pointer"]),
    ("CREATE FUNCTION f AS '%s' LANGUAGE C;" % text_so,
     ["job.sql:1:22:", "expected 'path/lib.so:symbol'"]),
    ("CREATE FUNCTION upper AS '%s:sl_example_rot13' LANGUAGE C;" % text_so,
     ["job.sql:1:17:", "function upper: a built-in function has that name"]),
    ("CREATE FUNCTION f AS 'com.example.F' LANGUAGE JAVA;",
     ["1:47:", "C after LANGUAGE"]),
    ("CREATE FUNCTION f AS 'com.example.F';",
     ["1:37:", "LANGUAGE C"]),
    ("CREATE FUNCTION r AS '%s:sl_example_rot13' LANGUAGE C;\n"
     "CREATE FUNCTION R AS '%s:sl_example_fnv1a' LANGUAGE C;" % (text_so, text_so),
     ["job.sql:2:17:", "function R already exists"]),
    ("CREATE FUNCTION r AS '%s:sl_example_rot13' LANGUAGE C;\nSELECT r(42);" % text_so,
     ["job.sql:2:10:", "argument 1 of r is INT, but %s:sl_example_rot13 declares STRING"
      % text_so]),
    ("CREATE FUNCTION r AS '%s:sl_example_rot13' LANGUAGE C;\nSELECT r('a', 'b');" % text_so,
     ["job.sql:2:8:", "r (%s:sl_example_rot13) takes 1 argument, got 2" % text_so]),
]


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "in.jsonl"), "w") as f:
            for s, x in ROWS:
                f.write(json.dumps({"s": s, "x": x}, ensure_ascii=False) + "\n")
        want = expect()
        for shards in (1, 2):
            rc, out, err = run(d, JOB, shards)
            got = [l for l in out.splitlines() if l.startswith("+I")]
            if rc != 0 or sorted(got) != sorted(want):
                print("FAIL rows on %d shard(s) (exit %d):\n  got  %s\n  want %s\n%s"
                      % (shards, rc, got, want, err[-500:]))
                failures += 1
            else:
                print("PASS rows on %d shard(s)" % shards)
        rc, out, err = run(d, SHOW_JOB)
        if rc != 0 or out != SHOW_WANT:
            print("FAIL SHOW USER FUNCTIONS (exit %d):\n%s%s" % (rc, out, err[-300:]))
            failures += 1
        else:
            print("PASS SHOW USER FUNCTIONS")
        for text, needles in ERRORS:
            rc, out, err = run(d, text)
            if rc != 1 or not all(n in err for n in needles):
                print("FAIL %r: want exit 1 and %r in stderr, got exit %d: %s"
                      % (text, needles, rc, err.strip()[-400:]))
                failures += 1
            else:
                print("PASS refused: %s" % needles[-1])
    print("udf: %d failure(s)" % failures)
    return 1 if failures else 0


sys.exit(main())
