"""Shared pieces of the Flink differential tests (differential.py, fuzz.py): splitting a job
file into statements, running jobs on sluice and, many at once in one JVM, on Flink
(tools/flink-sql --batch), and comparing two changelogs once applied.

A changelog is compared the way its consumer would see it: rows as a multiset when both sides
only insert (+I), else the final table each side's -U/+U/-D leave behind (a retraction of a
row that is not there is itself a disagreement). Values are compared as text: the Flink runner
prints them with Flink's own CAST(... AS STRING) rules (--format sql), which is what sluice
prints.
"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LINE = re.compile(r"^(?:\S+> )?([+-][IUD])\[(.*)\]$")
SET_BEGIN = re.compile(r"(?is)^EXECUTE\s+STATEMENT\s+SET\s+BEGIN\b")
ENDS_WITH_END = re.compile(r"(?is)\bEND\s*$")
SKIP = 77


ON_EVENT = re.compile(r"'scan\.watermark\.emit\.strategy'\s*=\s*'on-event'", re.I)


def flink_job(text):
    """Flink's copy of a job file. 'scan.watermark.emit.strategy' = 'on-event' (a watermark
    after every row) is honoured by sluice on every source, but by Flink only on sources with
    watermark push-down: its filesystem source has none, so Flink accepts the option there
    and ignores it. Its SQL watermark assigner then emits every
    pipeline.auto-watermark-interval (200 ms) of wall time and whenever the watermark has
    moved more than that interval past the last one sent; with the interval 0 it emits on
    every advance, which is what the option asks for. So a job that asks for on-event gets
    that SET in front on the Flink side (the last SET wins, so a job's own still counts)."""
    if ON_EVENT.search(text):
        return "SET 'pipeline.auto-watermark-interval' = '0';\n" + text
    return text


def split_statements(text):
    """[(first line, statement text without comments or ';')], as the SQL client splits a
    file: at ';' outside quotes and comments, EXECUTE STATEMENT SET BEGIN ... END; as one
    (the same rules as tools/flink/.../Statements.java)."""
    out, cur, line, start = [], [], 1, None
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise ValueError("%d: unterminated comment" % line)
            line += text.count("\n", i, j)
            cur.append(" ")
            i = j + 2
            continue
        if c in "'\"`":
            if start is None:
                start = line
            j = i + 1
            while True:
                if j >= n:
                    raise ValueError("%d: unterminated %s" % (line, c))
                if text[j] == c:
                    if j + 1 < n and text[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            line += text.count("\n", i, j)
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if c == ";":
            s = "".join(cur).strip()
            if SET_BEGIN.match(s) and not ENDS_WITH_END.search(s):
                cur.append(";")
                i += 1
                continue
            if s:
                out.append((start, s))
            cur, start = [], None
            i += 1
            continue
        if c == "\n":
            line += 1
        elif start is None and not c.isspace():
            start = line
        cur.append(c)
        i += 1
    s = "".join(cur).strip()
    if s:
        out.append((start, s))
    return out


def top_level_split(text, sep=","):
    """TEXT split at each SEP outside parentheses, angle brackets and quotes."""
    parts, depth, cur, q = [], 0, [], None
    for ch in text:
        if q:
            q = None if ch == q else q
        elif ch in "'`\"":
            q = ch
        elif ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def first_word(stmt):
    m = re.match(r"[A-Za-z]+", stmt)
    return m.group(0).upper() if m else stmt[:1]


def is_job(stmt):
    """A statement that runs as a job (its output is what the two engines must agree on)."""
    return first_word(stmt) in ("SELECT", "WITH", "VALUES", "(", "INSERT", "EXECUTE")


def is_info(stmt):
    """A statement that prints the catalog (SHOW TABLES, DESCRIBE t ...): its text output,
    Flink's tableau, is what the two engines must agree on."""
    return first_word(stmt) in ("SHOW", "DESCRIBE", "DESC")


def split_jobs(text):
    """One job file per job or catalog statement: every SET and DDL before it, then it."""
    pre, jobs = [], []
    for line, st in split_statements(text):
        if is_job(st) or is_info(st):
            jobs.append((line, st, ";\n".join(pre + [st]) + ";\n"))
        else:
            pre.append(st)
    return jobs


def run_sluice(sluice, job, cwd, shards=1, timeout=120, extra=()):
    """(exit status, stdout lines, stderr) of `sluice run JOB`."""
    try:
        p = subprocess.run([sluice, "run", job, "--shards", str(shards), "--quiet"] + list(extra),
                           cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, [], "timed out after %d s" % timeout
    return p.returncode, p.stdout.decode(errors="replace").splitlines(), \
        p.stderr.decode(errors="replace")


def flink_prepare(flink_sql):
    """Builds the Flink runner once; on 77 (no Java, Maven or Maven Central) says why loudly
    and exits 77, the skip status."""
    p = subprocess.run([flink_sql, "--prepare"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode == SKIP:
        msg = p.stderr.decode().strip()
        print("*" * 72)
        print("SKIPPED: Flink cannot run here, so sluice was NOT compared with it:")
        print("  " + msg)
        print("*" * 72)
        sys.exit(SKIP)
    if p.returncode != 0:
        sys.stdout.write(p.stderr.decode())
        print("FAIL: tools/flink-sql --prepare exited %d" % p.returncode)
        sys.exit(1)


class FlinkBatch:
    """Many job files run on one Flink JVM and MiniCluster: add() them, start(), then
    result() each (waits for the JVM)."""

    def __init__(self, flink_sql, work, cwd=ROOT, timeout=120):
        self.flink_sql, self.work, self.cwd, self.timeout = flink_sql, work, cwd, timeout
        self.jobs, self.proc = [], None

    def add(self, job):
        out = job + ".flink"
        self.jobs.append((job, out))
        return out

    def start(self):
        lst = os.path.join(self.work, "flink-jobs.txt")
        with open(lst, "w") as f:
            for job, out in self.jobs:
                f.write("%s\t%s\n" % (job, out))
        self.log = open(os.path.join(self.work, "flink.log"), "w")
        self.proc = subprocess.Popen([self.flink_sql, "--format", "sql", "--parallelism", "1",
                                      "--timeout", str(self.timeout), "--batch", lst],
                                     cwd=self.cwd, stdout=self.log, stderr=subprocess.STDOUT)

    def wait(self, limit):
        try:
            rc = self.proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = "killed after %d s" % limit
        self.log.close()
        return rc

    @staticmethod
    def result(out):
        """(error or None, stdout lines) of one job."""
        err = out + ".err"
        if os.path.exists(err):
            return open(err).readline().strip(), []
        if not os.path.exists(out):
            return "the Flink runner did not get to this job", []
        return None, open(out).read().splitlines()


def changelog(lines):
    """[(kind, row text)] of the changelog lines among LINES."""
    out = []
    for l in lines:
        m = LINE.match(l)
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def apply(log):
    """(final multiset of rows, problem or None) after applying a changelog."""
    table = collections.Counter()
    for kind, row in log:
        if kind in ("+I", "+U"):
            table[row] += 1
        elif table[row] > 0:
            table[row] -= 1
        else:
            return table, "%s[%s] retracts a row that is not there" % (kind, row)
    return +table, None


def compare(sluice_log, flink_log):
    """None when the two changelogs agree once applied, else a description."""
    append = all(k == "+I" for k, _ in sluice_log + flink_log)
    s, s_bad = apply(sluice_log)
    f, f_bad = apply(flink_log)
    if s_bad:
        return "sluice: " + s_bad
    if f_bad:
        return "flink: " + f_bad
    if s == f:
        return None
    what = "rows (append-only, as a multiset)" if append else "final tables"
    only_s = sorted((s - f).elements())
    only_f = sorted((f - s).elements())
    return "%s differ: %d rows vs %d;\n    only sluice: %s\n    only flink:  %s" % (
        what, sum(s.values()), sum(f.values()), show(only_s), show(only_f))


def show(rows, limit=8):
    rows = ["[%s]" % r for r in rows]
    return ", ".join(rows[:limit]) + (" ... (%d more)" % (len(rows) - limit)
                                      if len(rows) > limit else "") if rows else "-"


def sink_rows(path):
    """The rows every visible file under PATH holds (a file or a folder of part files, as a
    filesystem sink leaves it; hidden in-progress files are not rows yet)."""
    rows = []
    if os.path.isfile(path):
        return [l for l in open(path).read().splitlines() if l]
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        for fn in files:
            if not fn.startswith((".", "_")):
                rows += [l for l in open(os.path.join(root, fn)).read().splitlines() if l]
    return rows


def json_row(line):
    """A JSON line as a canonical text (key order aside, values exactly as written)."""
    try:
        return json.dumps(json.loads(line, parse_float=str, parse_int=str), sort_keys=True)
    except ValueError:
        return line
