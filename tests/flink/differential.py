#!/usr/bin/env python3
"""Differential test: every golden SQL case (tests/sql/cases/*/job.sql), every SQL example
(examples/sql/*.sql) and, where ../shared/acceptance is beside the checkout, every shared
acceptance case runs on sluice (1 shard) and on Apache Flink (tools/flink-sql, one JVM
and one MiniCluster for all of them, parallelism 1), and the two must agree.

Each job of a file (a bare SELECT, an INSERT, a statement set) is compared on its own, run
with every SET and DDL before it: its changelog (print tables and SELECTs) once applied, rows
as a multiset for append-only output and the final table for updating output; and the rows
of every file a filesystem sink wrote under @OUT@. A case sluice must refuse (expected.err)
must be refused by Flink too.

A case file where sluice deliberately differs says so with `-- flink-oracle:` lines
(tests/flink/README.md lists them): `differs REASON` (required with any other), `skip`,
`sluice-only-rows REGEX`, `flink-only-rows REGEX`, `flink-replace OLD => NEW` (\\n: a line
break), `materialize TABLE` (a source only sluice has, such as its datagen's event-time
fields: sluice first writes its rows to a JSON file in order, and Flink reads that file with
the same columns and watermark), and
`known-disagreement WHAT` (compared, and must still disagree: remove it once fixed).

Usage: differential.py SLUICE FLINK_SQL [NAME ...]   (NAME: a case folder or example name)
Prints one line per job, then "differential: ..." with the counts; exit 0 when all agree, 1
on any disagreement, 77 when Flink cannot run here.
"""
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

CASES = os.path.join(oracle.ROOT, "tests", "sql", "cases")
EXAMPLES = os.path.join(oracle.ROOT, "examples", "sql")
# the shared Flink-derived acceptance cases, where the checkout has them beside it; they are
# read-only here, so their flink-oracle lines are kept in this table
ACCEPTANCE = os.path.join(oracle.ROOT, "..", "shared", "acceptance", "cases")
ACCEPTANCE_MARKS = {
    "seed_lab_view_wm_tumble": "-- flink-oracle: differs WATERMARK inside CREATE VIEW is a "
                               "sluice extension, not Flink SQL\n-- flink-oracle: skip\n",
}
MARK = re.compile(r"^\s*--\s*flink-oracle:\s*([a-z-]+)\s*(.*?)\s*$", re.M)
KEYS = ("differs", "skip", "sluice-only-rows", "flink-only-rows", "flink-replace",
        "materialize", "known-disagreement")


class Case:
    def __init__(self, name, path, cwd, folder, marks=""):
        self.name, self.path, self.cwd, self.folder = name, path, cwd, folder
        self.text = marks + open(path).read()
        self.err = folder and os.path.exists(os.path.join(folder, "expected.err"))
        self.marks = {}
        for key, val in MARK.findall(self.text):
            if key not in KEYS:
                raise ValueError("%s: unknown marker 'flink-oracle: %s'" % (path, key))
            self.marks.setdefault(key, []).append(val)
        if set(self.marks) - {"differs", "known-disagreement"} and "differs" not in self.marks:
            raise ValueError("%s: a flink-oracle marker needs a 'differs REASON' line" % path)

    def texts(self, out_s, out_f):
        """(sluice's text, Flink's text) of the job file."""
        t = self.text
        if self.folder:
            t = t.replace("@DIR@", self.folder)
        f = t
        for rep in self.marks.get("flink-replace", []):
            old, sep, new = rep.replace("\\n", "\n").partition(" => ")
            if not sep or old not in f:
                raise ValueError("%s: flink-replace %r: no ' => ' or no such text" % (
                    self.path, rep))
            f = f.replace(old, new)
        return t.replace("@OUT@", out_s), oracle.flink_job(f.replace("@OUT@", out_f))


def materialize(c, sluice, d):
    """For `materialize TABLE`: sluice writes TABLE's rows, in order, to a JSON file under D;
    returns Flink's text of the case with TABLE reading that file instead."""
    name = c.marks["materialize"][0]
    text = c.texts("@OUT@", "@OUT@")[1]
    stmts = oracle.split_statements(text)
    ddl = [s for _, s in stmts if re.match(r"(?is)CREATE\s+TABLE\s+`?%s\b" % name, s)]
    if len(ddl) != 1:
        raise ValueError("%s: materialize %s: no CREATE TABLE %s" % (c.path, name, name))
    body = ddl[0][ddl[0].index("(") + 1:ddl[0].upper().rindex(") WITH")]
    cols = [col.strip() for col in oracle.top_level_split(body)]
    phys = [col for col in cols if not re.match(r"(?is)(WATERMARK|PRIMARY|CONSTRAINT)\b", col)
            and not re.match(r"(?is)`?\w+`?\s+AS\b", col)]
    rows = os.path.join(d, name + ".jsonl")
    pre = [s for _, s in stmts if not oracle.is_job(s) and not oracle.is_info(s)]
    names = ", ".join(re.match(r"`?\w+`?", col).group(0) for col in phys)
    job = os.path.join(d, "materialize.sql")
    open(job, "w").write(";\n".join(pre + [
        "CREATE TABLE `__rows` (%s) WITH ('connector' = 'filesystem', 'path' = '%s', "
        "'format' = 'json')" % (", ".join(phys), rows),
        "INSERT INTO `__rows` SELECT %s FROM %s" % (names, name)]) + ";\n")
    rc, _, err = oracle.run_sluice(sluice, job, c.cwd)
    if rc != 0:
        raise RuntimeError("%s: materialize %s: sluice failed: %s" % (c.path, name, err))
    with_at = ddl[0].upper().rindex(") WITH")
    new = ddl[0][:with_at] + (") WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = "
                              "'json', 'scan.watermark.emit.strategy' = 'on-event')" % rows)
    return text.replace(ddl[0], new)


def cases(names):
    found = []
    for n in sorted(os.listdir(CASES)):
        d = os.path.join(CASES, n)
        if os.path.exists(os.path.join(d, "job.sql")):
            found.append(Case(n, os.path.join(d, "job.sql"), d, d))
    for n in sorted(os.listdir(EXAMPLES)):
        if n.endswith(".sql"):
            found.append(Case("example:" + n[:-4], os.path.join(EXAMPLES, n), oracle.ROOT, None))
    for n in sorted(os.listdir(ACCEPTANCE)) if os.path.isdir(ACCEPTANCE) else []:
        d = os.path.join(ACCEPTANCE, n)
        if os.path.exists(os.path.join(d, "job.sql")):
            found.append(Case("acceptance:" + n, os.path.join(d, "job.sql"), d, d,
                              ACCEPTANCE_MARKS.get(n, "")))
    if names:
        found = [c for c in found if c.name in names or c.name.split(":")[-1] in names]
    return found


def filtered(log, regexes):
    pats = [re.compile(r) for r in regexes]
    return [(k, r) for k, r in log if not any(p.search("%s[%s]" % (k, r)) for p in pats)]


def shape(log):
    return "insert-only" if all(k == "+I" for k, _ in log) else "updating"


def compare_sinks(c, out_s, out_f):
    """None or how the files the sinks wrote under the two @OUT@ folders differ."""
    names = sorted(set(os.listdir(out_s)) | set(os.listdir(out_f)))
    only_s = [re.compile(r) for r in c.marks.get("sluice-only-rows", [])]
    only_f = [re.compile(r) for r in c.marks.get("flink-only-rows", [])]
    for n in names:
        s = sorted(r for r in map(oracle.json_row, oracle.sink_rows(os.path.join(out_s, n)))
                   if not any(p.search(r) for p in only_s))
        f = sorted(r for r in map(oracle.json_row, oracle.sink_rows(os.path.join(out_f, n)))
                   if not any(p.search(r) for p in only_f))
        if s != f:
            only_s = [r for r in s if r not in f]
            only_f = [r for r in f if r not in s]
            return "sink %s: %d rows vs %d;\n    only sluice: %s\n    only flink:  %s" % (
                n, len(s), len(f), only_s[:6] or "-", only_f[:6] or "-")
    return None


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    sluice, flink_sql = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    t0 = time.time()
    oracle.flink_prepare(flink_sql)
    work = tempfile.mkdtemp(prefix="flink-diff-")
    batch = oracle.FlinkBatch(flink_sql, work)
    jobs = []  # (case, label, sluice job, flink out, out_s, out_f)
    skipped = []
    for c in cases(sys.argv[3:]):
        if "skip" in c.marks:
            skipped.append("%s (%s)" % (c.name, " ".join(c.marks["differs"])))
            continue
        d = os.path.join(work, c.name.replace(":", "_"))
        os.mkdir(d)
        probe_s, probe_f = c.texts("@OUT@", "@OUT@")
        if "materialize" in c.marks:
            probe_f = materialize(c, sluice, d)
        js, jf = oracle.split_jobs(probe_s), oracle.split_jobs(probe_f)
        if len(js) != len(jf):
            raise ValueError("%s: flink-replace changed the number of jobs" % c.path)
        if c.err:  # the whole file, which must fail planning on both sides
            js, jf = [(1, "", probe_s)], [(1, "", probe_f)]
        for i, ((line, stmt, s_text), (_, _, f_text)) in enumerate(zip(js, jf)):
            out_s, out_f = os.path.join(d, "out%d-sluice" % i), os.path.join(d, "out%d-flink" % i)
            os.mkdir(out_s)
            os.mkdir(out_f)
            s_job, f_job = os.path.join(d, "job%d.sql" % i), os.path.join(d, "job%d.flink.sql" % i)
            open(s_job, "w").write(s_text.replace("@OUT@", out_s))
            open(f_job, "w").write(f_text.replace("@OUT@", out_f))
            label = "%s%s" % (c.name, "" if c.err else ":%d" % line)
            if not c.err and oracle.is_info(stmt):
                label += " (text)"
            jobs.append((c, label, s_job, batch.add(f_job), out_s, out_f))
    batch.start()  # Flink works through its list while sluice runs the same jobs here
    results = []
    for c, label, s_job, f_out, out_s, out_f in jobs:
        results.append(oracle.run_sluice(sluice, s_job, c.cwd))
    t_sluice = time.time() - t0
    rc = batch.wait(900)
    agree = disagree = xfail = 0
    failures, notes = [], []
    for (c, label, s_job, f_out, out_s, out_f), (s_rc, s_out, s_err) in zip(jobs, results):
        f_err, f_lines = batch.result(f_out)
        n_rows = 0
        if c.err:
            if s_rc == 0:
                why = "sluice runs a job it must refuse"
            elif f_err is None:
                why = "sluice refuses it (%s), Flink runs it" % s_err.strip().splitlines()[-1]
            else:
                why = None
        elif s_rc != 0:
            why = "sluice failed (exit %d): %s" % (s_rc, s_err.strip()[-400:])
        elif f_err is not None:
            why = "Flink failed: %s" % f_err[:600]
        elif label.endswith(" (text)"):  # SHOW / DESCRIBE: the printed text, line by line
            s_text = [l for l in s_out if not l.startswith("sluice:")]
            why = None if s_text == f_lines else "printed text differs:\n    sluice: %s\n" \
                "    flink:  %s" % ("\n            ".join(s_text), "\n            ".join(f_lines))
            s_log = f_log = []
            n_rows = len(s_text)
        else:
            s_log = filtered(oracle.changelog(s_out), c.marks.get("sluice-only-rows", []))
            f_log = filtered(oracle.changelog(f_lines), c.marks.get("flink-only-rows", []))
            why = oracle.compare(s_log, f_log) or compare_sinks(c, out_s, out_f)
            n_rows = len(s_log) + sum(len(oracle.sink_rows(os.path.join(out_s, n)))
                                      for n in os.listdir(out_s))
        known = c.marks.get("known-disagreement")
        if known:
            if why is None:
                disagree += 1
                failures.append(label)
                print("FAIL %s: agrees with Flink now; remove its 'known-disagreement' marker"
                      % label)
            else:
                xfail += 1
                print("XFAIL %s: known disagreement (%s):\n    %s" % (label, " ".join(known), why))
        elif why is None:
            agree += 1
            if not c.err and shape(s_log) != shape(f_log):
                notes.append("%s: sluice's changelog is %s, Flink's %s (the final tables "
                             "agree)" % (label, shape(s_log), shape(f_log)))
            print("PASS %s (%s)" % (label, "both refuse it" if c.err else
                                    "%d lines" % n_rows if label.endswith(" (text)") else
                                    "%d changelog and sink rows" % n_rows))
        else:
            disagree += 1
            failures.append(label)
            print("FAIL %s: %s\n    job: %s" % (label, why, s_job))
    for s in skipped:
        print("SKIP %s" % s)
    for n in notes:
        print("NOTE %s" % n)
    print("differential: %d jobs compared: %d agree, %d disagree, %d known disagreements; "
          "%d cases skipped (%.0f s: sluice done at %.0f s; Flink JVM exit %s)" % (
              len(jobs), agree, disagree, xfail, len(skipped), time.time() - t0, t_sluice, rc))
    if failures:
        print("work files kept in %s" % work)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
