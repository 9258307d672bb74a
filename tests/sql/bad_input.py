#!/usr/bin/env python3
"""Bad input through `sluice run`: whatever a record holds, the dead-letter output is one
valid JSON object per line (strict UTF-8, RFC 8259), with the place, the cause and the record.

  dead letters   a Debezium event with an unknown op (its cause quotes the op), a CSV record
                 whose cause holds a line break and quotes, bytes that are not UTF-8, control
                 characters, a record longer than a dead letter shows (cut on a character
                 boundary, its length given), and an input path with a quote and a backslash in its name: each
                 line parses, `why` and `where` read back as they were meant, and `raw` (or,
                 when the record is not UTF-8, `raw_base64`) gives back the record's bytes

Usage: bad_input.py SLUICE
"""
import base64
import json
import os
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


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-bad-input-")
    try:
        ok = check_dead_letters(sluice, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
