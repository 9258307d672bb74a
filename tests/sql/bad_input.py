#!/usr/bin/env python3
"""Bad input through `sluice run`: whatever a record holds, the dead-letter output is one
valid JSON object per line (strict UTF-8, RFC 8259), with the place, the cause and the record.

  dead letters   a Debezium event with an unknown op (its cause quotes the op), a CSV record
                 whose cause holds a line break and quotes, bytes that are not UTF-8, control
                 characters, a record longer than a dead letter shows (cut on a character
                 boundary, its length given), and an input path with a quote and a backslash in its name: each
                 line parses, `why` and `where` read back as they were meant, and `raw` (or,
                 when the record is not UTF-8, `raw_base64`) gives back the record's bytes

  UTF-8          a CSV record whose STRING is not UTF-8 is a record error (dead letter, as
                 Flink's CSV format fails on it), never bytes that break the JSON sink's lines
  DECIMAL        a value beyond its DECIMAL type is NULL (Flink) but counted per operator,
                 in the source that decoded it and in the calc that computed it, and named in
                 the run's summary; with '<format>.fail-on-decimal-overflow' = 'true' (csv,
                 json) the source record goes to the dead-letter output instead

Usage: bad_input.py SLUICE
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run(sluice, work, sql, extra=()):
    job = os.path.join(work, "job.sql")
    with open(job, "w") as f:
        f.write(sql)
    p = subprocess.run([sluice, "run", job, "--shards", "1"] + list(extra), cwd=work,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def sql_str(s):
    return "'" + s.replace("'", "''") + "'"


def read_dead_letters(path):
    """Every line as a dict; a line that is not strict UTF-8 JSON fails the test."""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        raise ValueError("the dead-letter output does not end with a newline")
    for n, line in enumerate(data.split(b"\n")[:-1], 1):
        try:
            out.append(json.loads(line.decode("utf-8", "strict")))
        except (UnicodeDecodeError, ValueError) as e:
            raise ValueError("dead-letter line %d is not JSON (%s): %r" % (n, e, line[:200]))
    return out


def raw_bytes(d):
    return base64.b64decode(d["raw_base64"]) if "raw_base64" in d else d["raw"].encode()


def check_dead_letters(sluice, work):
    # a folder whose name holds a quote and a backslash: it is part of every `where`
    src = os.path.join(work, 'in "q" \\ dir')
    os.mkdir(src)
    dbz = os.path.join(src, "cdc.json")
    with open(dbz, "wb") as f:
        f.write(b'{"before":null,"after":{"id":1,"name":"a"},"op":"c"}\n')
        f.write(b'{"before":null,"after":{"id":2,"name":"b"},"op":"z"}\n')
        f.write(b'{"before":null,"after":{"id":3,"name":"c"},"op":"c"}\n')
    csv = os.path.join(src, "in.csv")
    bad_utf8 = b'x4,caf\xe9 \xff\xfe\n'
    ctrl = b'5,x\x01y\x1f"\\z,extra\n'
    long_rec = b'x7,' + "\u00e9".encode() * 3000
    with open(csv, "wb") as f:
        f.write(b'1,ok\n')
        f.write(b'2,"b"x\n')             # text after a closing quote
        f.write(b'3,"two\nlines"\n')     # good
        f.write(b'"x\n3",a\n')           # not an INT; the cause quotes a line break
        f.write(bad_utf8)
        f.write(ctrl)
        f.write(long_rec + b'\n')       # longer than a dead letter shows
        f.write(b'6,end\n')
    dl = os.path.join(work, "dead.jsonl")
    sql = """
CREATE TABLE cdc (id INT, name STRING) WITH ('connector' = 'filesystem',
  'path' = %s, 'format' = 'debezium-json');
CREATE TABLE c (id INT, s STRING) WITH ('connector' = 'filesystem',
  'path' = %s, 'format' = 'csv');
CREATE TABLE out_t (id INT, s STRING) WITH ('connector' = 'blackhole');
EXECUTE STATEMENT SET BEGIN
INSERT INTO out_t SELECT id, name FROM cdc;
INSERT INTO out_t SELECT id, s FROM c;
END;
""" % (sql_str(dbz), sql_str(csv))
    rc, out, err = run(sluice, work, sql, ["--dead-letter", dl])
    if rc != 0:
        print("FAIL: dead letters: exit %d: %s" % (rc, err[-400:]))
        return False
    try:
        dls = read_dead_letters(dl)
    except ValueError as e:
        print("FAIL: %s" % e)
        return False
    by_where = {d.get("where"): d for d in dls}
    want = {dbz + ":2", csv + ":2", csv + ":5", csv + ":7", csv + ":8", csv + ":9"}
    if set(by_where) != want:
        print("FAIL: dead letters at %s, want %s" % (sorted(by_where), sorted(want)))
        return False
    op = by_where[dbz + ":2"]
    if '"op"' not in op["why"] or '"z"' not in op["why"]:
        print("FAIL: the op's cause reads back as %r" % op["why"])
        return False
    if raw_bytes(op) != b'{"before":null,"after":{"id":2,"name":"b"},"op":"z"}':
        print("FAIL: the Debezium record reads back as %r" % raw_bytes(op))
        return False
    if "\n" not in by_where[csv + ":5"]["why"] or raw_bytes(by_where[csv + ":5"]) != b'"x\n3",a':
        print("FAIL: the two-line CSV record reads back as %r" % raw_bytes(by_where[csv + ":5"]))
        return False
    u = by_where[csv + ":7"]
    if "raw_base64" not in u or raw_bytes(u) != bad_utf8[:-1] or "\ufffd" not in u["raw"]:
        print("FAIL: the record that is not UTF-8 reads back as %r" % u)
        return False
    if raw_bytes(by_where[csv + ":8"]) != ctrl[:-1]:
        print("FAIL: the record with control characters reads back as %r" %
              raw_bytes(by_where[csv + ":8"]))
        return False
    lg = by_where[csv + ":9"]
    if lg.get("raw_len") != len(long_rec) or not long_rec.startswith(lg["raw"].encode()) \
            or len(lg["raw"].encode()) != 4095 or "raw_base64" in lg:
        print("FAIL: the long record reads back as %r..., raw_len %r" % (lg["raw"][:20],
                                                                     lg.get("raw_len")))
        return False
    print("ok: %d dead letters, each valid JSON; causes, places and records read back" % len(dls))
    return True


def check_utf8(sluice, work):
    csv = os.path.join(work, "utf8.csv")
    bad = b"2,caf\xe9 \xc3\x28 \xed\xa0\x80"   # Latin-1, a broken pair, a surrogate
    with open(csv, "wb") as f:
        f.write(b"1,caf\xc3\xa9 \xf0\x9f\x98\x80\n" + bad + b"\n3,ok\n")
    out = os.path.join(work, "utf8-out")
    dl = os.path.join(work, "utf8-dead.jsonl")
    sql = """
CREATE TABLE c (id INT, s STRING) WITH ('connector' = 'filesystem', 'path' = %s,
  'format' = 'csv');
CREATE TABLE o (id INT, s STRING) WITH ('connector' = 'filesystem', 'path' = %s,
  'format' = 'json');
INSERT INTO o SELECT id, s FROM c;
""" % (sql_str(csv), sql_str(out))
    rc, _, err = run(sluice, work, sql, ["--dead-letter", dl])
    if rc != 0:
        print("FAIL: utf-8: exit %d: %s" % (rc, err[-400:]))
        return False
    rows = []
    files = [os.path.join(out, n) for n in sorted(os.listdir(out))] if os.path.isdir(out) \
        else [out]
    for name in files:
        with open(name, "rb") as f:
            for line in f.read().splitlines():
                try:
                    rows.append(json.loads(line.decode("utf-8", "strict")))
                except (UnicodeDecodeError, ValueError) as e:
                    print("FAIL: utf-8: a sink line is not UTF-8 JSON (%s): %r" % (e, line))
                    return False
    want = [{"id": 1, "s": "caf\u00e9 \U0001f600"}, {"id": 3, "s": "ok"}]
    if sorted(rows, key=lambda r: r["id"]) != want:
        print("FAIL: utf-8: sink rows %r, want %r" % (rows, want))
        return False
    try:
        dls = read_dead_letters(dl)
    except ValueError as e:
        print("FAIL: utf-8: %s" % e)
        return False
    if len(dls) != 1 or dls[0]["where"] != csv + ":2" or "UTF-8" not in dls[0]["why"] \
            or raw_bytes(dls[0]) != bad:
        print("FAIL: utf-8: dead letters %r" % dls)
        return False
    print("ok: utf-8: the record that is not UTF-8 is a dead letter (%s), the sink's lines "
          "are UTF-8 JSON" % dls[0]["why"])
    return True


def check_decimal(sluice, work):
    csv = os.path.join(work, "dec.csv")
    with open(csv, "w") as f:
        f.write("a,1.50\nb,12345.678\nc,-99999\nd,9.99\ne,50.00\n")
    jsn = os.path.join(work, "dec.json")
    with open(jsn, "w") as f:
        f.write('{"k":"a","amount":1.5}\n{"k":"b","amount":"1000"}\n{"k":"c","amount":1e3}\n')
    ok = True
    for strict in (False, True):
        dl = os.path.join(work, "dec-dead-%d.jsonl" % strict)
        opt = ", 'csv.fail-on-decimal-overflow' = 'true'" if strict else ""
        jopt = ", 'json.fail-on-decimal-overflow' = 'true'" if strict else ""
        sql = """
CREATE TABLE t (k STRING, amount DECIMAL(5, 2)) WITH ('connector' = 'filesystem',
  'path' = %s, 'format' = 'csv'%s);
CREATE TABLE j (k STRING, amount DECIMAL(5, 2)) WITH ('connector' = 'filesystem',
  'path' = %s, 'format' = 'json'%s);
SELECT k, amount, CAST(amount * 100 AS DECIMAL(5, 2)) AS big FROM t;
SELECT k, amount FROM j;
""" % (sql_str(csv), opt, sql_str(jsn), jopt)
        rc, out, err = run(sluice, work, sql, ["--metrics", "--dead-letter", dl])
        if rc != 0:
            print("FAIL: decimal (strict %s): exit %d: %s" % (strict, rc, err[-400:]))
            return False
        lines = sorted(l for l in out.decode().splitlines() if l.startswith("+I"))
        dls = read_dead_letters(dl) if os.path.exists(dl) else []
        if not strict:
            want = sorted(["+I[a, 1.50, 150.00]", "+I[b, NULL, NULL]", "+I[c, NULL, NULL]",
                           "+I[d, 9.99, 999.00]", "+I[e, 50.00, NULL]",
                           "+I[a, 1.50]", "+I[b, NULL]", "+I[c, NULL]"])
            checks = [(r"operator t\s+stage \d+ in 5 .* overflow 2\b", "the csv source's 2"),
                      (r"operator select\s+stage \d+ in 5 .* overflow 1\b", "the calc's 1"),
                      (r"operator j\s+stage \d+ in 3 .* overflow 2\b", "the json source's 2"),
                      (r"sluice: 3 DECIMAL values did not fit their type and became NULL",
                       "the first job's summary"),
                      (r"sluice: 2 DECIMAL values did not fit their type and became NULL",
                       "the second job's summary")]
            want_dl = []
        else:
            want = sorted(["+I[a, 1.50, 150.00]", "+I[d, 9.99, 999.00]", "+I[e, 50.00, NULL]",
                           "+I[a, 1.50]"])
            checks = [(r"operator t\s+stage \d+ in 3 ", "3 rows from the csv source"),
                      (r"operator select\s+stage \d+ in 3 .* overflow 1\b", "the calc's 1")]
            want_dl = [(csv + ":2", "field 'amount': 12345.678 does not fit DECIMAL(5, 2)"),
                       (csv + ":3", "field 'amount': -99999 does not fit DECIMAL(5, 2)"),
                       (jsn + ":2", "field 'amount': 1000 does not fit DECIMAL(5, 2)"),
                       (jsn + ":3", "field 'amount': 1e3 does not fit DECIMAL(5, 2)")]
        if lines != want:
            print("FAIL: decimal (strict %s): rows %r, want %r" % (strict, lines, want))
            ok = False
        for rx, what in checks:
            if not re.search(rx, err):
                print("FAIL: decimal (strict %s): no %s in:\n%s" % (strict, what, err[-1500:]))
                ok = False
        got_dl = sorted((d["where"], d["why"]) for d in dls)
        if got_dl != sorted(want_dl):
            print("FAIL: decimal (strict %s): dead letters %r, want %r" % (strict, got_dl,
                                                                          want_dl))
            ok = False
    if ok:
        print("ok: decimal overflow: NULL and counted per operator; dead letters when strict")
    return ok


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-bad-input-")
    try:
        ok = check_dead_letters(sluice, work)
        ok = check_utf8(sluice, work) and ok
        ok = check_decimal(sluice, work) and ok
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
