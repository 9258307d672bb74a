#!/usr/bin/env python3
"""Nexmark queries on sluice against Flink over the same events (issue 14).

Flink has no generator that sluice's can be compared with (the Java one is unseeded), so the
events are made once: sluice's 'connector' = 'nexmark' table (bench/nexmark/ddl.sql, with
EVENTS events at RATE events/s of event time) is written in event order to a JSON file by
sluice, and Flink reads that file as the same table (the same ROW columns, computed dateTime
and watermark, on-event). Each query bench/nexmark/qN.sql then runs:

- on sluice, straight from the nexmark connector (its default 8 splits) on 1, 2 and 3
  shards: the events again, not the file, so this also checks that the source gives the rows
  the file holds whatever the split and shard count;
- on Flink 2.3 (tools/flink-sql, parallelism 1, one JVM for every query) from the file.

Each query's sink (blackhole in the benchmark) becomes a print table on both sides, values
printed as CAST(v AS STRING) does (the runner's --format sql): the changelogs must agree once
applied (rows as a multiset when both only insert, else the final tables) and hold rows.
q5's MaxBids groups a window aggregate's output by its window bounds, which Flink plans as a
window aggregate (its input's windows attached) and sluice, lacking that, as an updating
GROUP BY: its changelog updates, and its final table must equal Flink's rows (said in a NOTE).
q9's Flink changelog is an upsert stream (+U with no -U, keyed by the auction), so q9 is
compared as upsert tables; q19's row numbers of tied prices follow arrival order, so beyond
one shard its rows are compared without them (UPSERT_KEY, TIES_NUMBERED below).
q10 writes a partitioned filesystem table instead: each side writes its own directory, and
the two trees must hold the same partition directories (names as written), the same rows in
each (multisets of CSV records' values) and the same _SUCCESS files (FILE_SINKS below).
q13's lookup join of a bounded side input runs on Flink as a regular join on the same key
(Flink 2.3's filesystem connector has no lookup source): over a table that never changes,
both give each bid one row per matching side row (SIDE_MARK below).

Usage: nexmark.py SLUICE FLINK_SQL [--events N] [--rate R] [QUERY ...]   (QUERY: q0, q5, ...)
Exit 0 when every query agrees, 1 otherwise, 77 when Flink cannot run here.
"""
import argparse
import atexit
import csv
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

BENCH = os.path.join(oracle.ROOT, "bench", "nexmark")
QUERIES = ["q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q9", "q11", "q15", "q16", "q17",
           "q18", "q19", "q20", "q21", "q22", "q14", "q10", "q13"]
# Queries whose sink is a filesystem table: its 'path' is this placeholder, replaced by a
# directory of each run's own; the rows are compared as the directories hold them.
FILE_SINKS = {"q10"}
DIR_MARK = "${NEXMARK_Q10_DIR}"
# q13's side input: the Nexmark SideInputGenerator's file (10,000 lines "i,i"), written once
# per process to a scratch file that this placeholder names. Flink 2.3's filesystem
# connector has no lookup source, so on Flink the lookup join is a regular join on the same
# key: over a bounded table that never changes, both give each bid one row per match.
SIDE_MARK = "${NEXMARK_SIDE_INPUT}"
SIDE_ROWS = 10000
LOOKUP = "JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S"
# Queries whose result has a unique key that Flink's planner knows, so that it sends only
# +U for a changed row (no -U: upsert changelog): compared as upsert tables on that many
# leading columns. q9's Top-1 per auction is keyed by the auction id.
UPSERT_KEY = {"q9": 1}
# Queries whose last column is a ROW_NUMBER: rows that tie on the ORDER BY take numbers in
# arrival order, which parallel splits change (as in Flink at parallelism > 1), so beyond one
# shard the rows are compared without it (q19: equal prices among an auction's top 10).
TIES_NUMBERED = {"q19"}
# Once events share a millisecond (--rate above 1,000 a second), rows can tie on a
# ranking's ORDER BY itself: which of them is q18's last bid, or q19's tenth, is then
# arrival order too, which sluice's 8 generator splits interleave otherwise than the file
# Flink reads. Such runs compare these queries on the columns the ranking fixes: the
# partition key and the ORDER BY column (q18: auction, bidder, dateTime; q19: auction,
# price), as multisets.
TIES_COLUMNS = {"q18": (0, 1, 5), "q19": (0, 2)}
SHARDS = (1, 2, 3)
# the physical columns of the table, as the materialized file holds them
LEAVES = ["event_type"] + ["person.%s" % f for f in (
    "id", "name", "emailAddress", "creditCard", "city", "state", "`dateTime`", "extra")] + [
    "auction.%s" % f for f in ("id", "itemName", "description", "initialBid", "reserve",
                               "`dateTime`", "expires", "seller", "category", "extra")] + [
    "bid.%s" % f for f in ("auction", "bidder", "price", "channel", "url", "`dateTime`",
                           "extra")]
NEXMARK_WITH = re.compile(r"WITH \(\s*'connector' = 'nexmark'.*?\);", re.S)


def option(text, key, value):
    """TEXT with the nexmark option KEY set to VALUE (it must be there)."""
    new, n = re.subn(r"'%s' = '[^']*'" % re.escape(key), "'%s' = '%s'" % (key, value), text)
    if n != 1:
        raise ValueError("bench/nexmark/ddl.sql: option '%s' found %d times" % (key, n))
    return new


def ddl(events, rate):
    text = open(os.path.join(BENCH, "ddl.sql")).read()
    text = option(text, "events.num", events)
    text = option(text, "first-event.rate", rate)
    return option(text, "next-event.rate", rate)


def table_columns(text):
    """The column list of CREATE TABLE datagen, without its computed column and watermark."""
    body = text[text.index("CREATE TABLE datagen (") + len("CREATE TABLE datagen ("):
                NEXMARK_WITH.search(text).start()]
    body = body[:body.rindex(")")]
    cols = [c.strip() for c in oracle.top_level_split(body)]
    return [c for c in cols if not re.match(r"(?is)(WATERMARK\b|`dateTime`\s+AS\b)", c)]


def materialize(sluice, text, work):
    """Sluice writes the table's events, in event order (one split, one shard), to a JSON
    file; returns Flink's DDL reading that file."""
    rows = os.path.join(work, "events.jsonl")
    job = os.path.join(work, "materialize.sql")
    one = text.replace("'connector' = 'nexmark',", "'connector' = 'nexmark', 'splits' = '1',")
    open(job, "w").write(one + (
        "\nCREATE TABLE `__rows` (%s) WITH ('connector' = 'filesystem', 'path' = '%s', "
        "'format' = 'json');\nINSERT INTO `__rows` SELECT %s FROM datagen;\n") % (
        ", ".join(table_columns(text)), rows, ", ".join(LEAVES)))
    rc, _, err = oracle.run_sluice(sluice, job, work)
    if rc != 0:
        raise RuntimeError("materialize: sluice failed: %s" % err)
    return NEXMARK_WITH.sub(
        "WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json', "
        "'scan.watermark.emit.strategy' = 'on-event');" % rows, text), rows


def upsert(log, nkey):
    """The changelog as an upsert table on its first nkey columns, as a changelog of +I."""
    table = {}
    for kind, row in log:
        key = ", ".join(row.split(", ")[:nkey])
        if kind in ("+I", "+U"):
            table[key] = row
        else:
            table.pop(key, None)
    return [("+I", r) for r in table.values()]


def without_last(log):
    return [(k, r.rsplit(", ", 1)[0]) for k, r in log]


def columns(log, keep):
    """The changelog applied (upsert-free: +I/+U add, -U/-D remove) with only columns
    `keep` of each row. Values hold no ', ' in these columns (numbers, timestamps)."""
    rows = {}
    for kind, row in log:
        part = row.split(", ")
        r = ", ".join(part[i] for i in keep)
        rows[r] = rows.get(r, 0) + (1 if kind in ("+I", "+U") else -1)
    return [("+I", r) for r, n in sorted(rows.items()) for _ in range(max(n, 0))]


# q14's user function: sluice loads bench/nexmark/count_char.c built beside the binary
# (build/bench), Flink the same function in Java from its runner (tools/flink)
UDF_LINE = "CREATE FUNCTION count_char AS 'libnexmark_udf.so:count_char' LANGUAGE C;"
FLINK_UDF_LINE = "CREATE FUNCTION count_char AS 'sluice.flink.CountChar';"


_scratch = []


def out_dir(query):
    """A fresh directory for a filesystem sink's placeholder path (the benchmark's runs,
    which name none), removed at exit."""
    if DIR_MARK not in query:
        return query
    return query.replace(DIR_MARK, tempfile.mkdtemp(dir=scratch()))


def scratch():
    """This process's scratch directory, removed at exit."""
    if not _scratch:
        _scratch.append(tempfile.mkdtemp(prefix="nexmark-out-"))
        atexit.register(shutil.rmtree, _scratch[0], True)
    return _scratch[0]


def side_input(query):
    """QUERY with q13's side input placeholder naming the generated file."""
    if SIDE_MARK not in query:
        return query
    path = os.path.join(scratch(), "side_input.csv")
    if not os.path.exists(path):
        with open(path + ".tmp", "w") as f:
            f.writelines("%d,%d\n" % (i, i) for i in range(SIDE_ROWS))
        os.rename(path + ".tmp", path)
    return query.replace(SIDE_MARK, path)


def for_sluice(query, sluice):
    lib = os.path.join(os.path.dirname(sluice), "bench", "libnexmark_udf.so")
    return side_input(out_dir(query.replace("'libnexmark_udf.so:", "'%s:" % lib)))


def for_flink(query):
    if LOOKUP in query:
        query = query.replace(LOOKUP, "JOIN side_input AS S")
    return side_input(out_dir(query.replace(UDF_LINE, FLINK_UDF_LINE)))


def read_tree(root):
    """A partitioned table as written: {partition dir: (sorted rows, has _SUCCESS)}, the
    part files' CSV records as their values (hidden in-progress files skipped: quoting is
    not compared, Flink's CSV writer quotes any value over 24 characters), or a string
    saying what is wrong."""
    if not os.path.isdir(root):
        return "no directory %s" % root
    tree = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        rel = os.path.relpath(d, root)
        rows, success = [], False
        for f in files:
            if f == "_SUCCESS":
                success = True
            elif not f.startswith((".", "_")):
                with open(os.path.join(d, f), encoding="utf-8", newline="") as fh:
                    rows += [", ".join(r) for r in csv.reader(fh)]
        if rows or success:
            tree[rel] = (sorted(rows), success)
    return tree


def compare_trees(s_tree, f_tree):
    if isinstance(s_tree, str) or isinstance(f_tree, str):
        return "sluice: %s; Flink: %s" % (s_tree if isinstance(s_tree, str) else "ok",
                                          f_tree if isinstance(f_tree, str) else "ok")
    if sorted(s_tree) != sorted(f_tree):
        return "partition directories differ: sluice %s, Flink %s" % (
            sorted(s_tree)[:6], sorted(f_tree)[:6])
    for part in sorted(s_tree):
        (s_rows, s_ok), (f_rows, f_ok) = s_tree[part], f_tree[part]
        if s_rows != f_rows:
            extra = [r for r in s_rows if r not in set(f_rows)][:2]
            missing = [r for r in f_rows if r not in set(s_rows)][:2]
            return "%s: %d rows on sluice, %d on Flink (sluice only %s, Flink only %s)" % (
                part, len(s_rows), len(f_rows), extra, missing)
        if s_ok != f_ok:
            return "%s: _SUCCESS %s on sluice, %s on Flink" % (part, s_ok, f_ok)
    return None


def with_sink(query):
    if DIR_MARK in query:
        return query
    new, n = re.subn(r"WITH \('connector' = 'blackhole'\)", "WITH ('connector' = 'print')",
                     query)
    if n != 1:
        raise ValueError("query: expected one blackhole sink, found %d" % n)
    return new


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sluice")
    ap.add_argument("flink_sql")
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--rate", type=int, default=1000)  # 20 s of event time: windows close
    ap.add_argument("queries", nargs="*", default=QUERIES)
    a = ap.parse_args()
    sluice, flink_sql = os.path.abspath(a.sluice), os.path.abspath(a.flink_sql)
    t0 = time.time()
    oracle.flink_prepare(flink_sql)
    work = tempfile.mkdtemp(prefix="nexmark-flink-")
    text = ddl(a.events, a.rate)
    flink_ddl, events = materialize(sluice, text, work)
    n_events = len(oracle.sink_rows(events))
    if n_events != a.events:
        print("FAIL materialize: %d events in the file, %d asked" % (n_events, a.events))
        return 1
    batch = oracle.FlinkBatch(flink_sql, work)
    jobs = []
    for q in a.queries:
        query = with_sink(open(os.path.join(BENCH, q + ".sql")).read())
        f_job = os.path.join(work, q + ".flink.sql")
        f_query = query.replace(DIR_MARK, os.path.join(work, q + ".flink.out"))
        open(f_job, "w").write(oracle.flink_job(flink_ddl + "\n" + for_flink(f_query)))
        jobs.append((q, query, batch.add(f_job)))
    batch.start()  # Flink works through the queries while sluice runs them here
    sluice_logs, failures, notes = {}, [], []
    for q, query, _ in jobs:
        for n in SHARDS:
            s_job = os.path.join(work, "%s.%d.sluice.sql" % (q, n))
            s_out = os.path.join(work, "%s.%d.sluice.out" % (q, n))
            open(s_job, "w").write(text + "\n" + for_sluice(query.replace(DIR_MARK, s_out),
                                                            sluice))
            rc, out, err = oracle.run_sluice(sluice, s_job, work, shards=n)
            if rc != 0:
                sluice_logs[q, n] = "sluice failed (exit %d): %s" % (rc, err.strip()[-400:])
            elif q in FILE_SINKS:
                sluice_logs[q, n] = read_tree(s_out)
            else:
                sluice_logs[q, n] = oracle.changelog(out)
    rc = batch.wait(600)
    for q, _, f_res in jobs:
        f_err, f_lines = batch.result(f_res)
        f_log = oracle.changelog(f_lines)
        why = "Flink failed: %s" % f_err[:600] if f_err else None
        if q in FILE_SINKS and not why:
            f_tree = read_tree(os.path.join(work, q + ".flink.out"))
            for n in SHARDS:
                s_tree = sluice_logs[q, n]
                why = s_tree if isinstance(s_tree, str) else compare_trees(s_tree, f_tree)
                if why:
                    why = "%d shards: %s" % (n, why)
                    break
            if not why and (isinstance(f_tree, str) or not f_tree):
                why = "no partitions written by Flink"
            if why:
                failures.append(q)
                print("FAIL %s: %s" % (q, why))
            else:
                print("PASS %s (%d partitions, %d rows, sluice on %s shards = Flink)" % (
                    q, len(f_tree), sum(len(r) for r, _ in f_tree.values()),
                    "/".join(map(str, SHARDS))))
            continue
        if not why and not f_log:
            why = "no rows on Flink: the query compares nothing over these events"
        for n in SHARDS:
            s_log = sluice_logs[q, n]
            if why:
                break
            if isinstance(s_log, str):
                why = "%d shards: %s" % (n, s_log)
                break
            s_cmp, f_cmp = s_log, f_log
            if q in UPSERT_KEY:
                s_cmp, f_cmp = upsert(s_log, UPSERT_KEY[q]), upsert(f_log, UPSERT_KEY[q])
            if q in TIES_NUMBERED and n > 1:
                s_cmp, f_cmp = without_last(s_cmp), without_last(f_cmp)
            if q in TIES_COLUMNS and a.rate > 1000:
                s_cmp = columns(s_cmp, TIES_COLUMNS[q])
                f_cmp = columns(f_cmp, TIES_COLUMNS[q])
            why = oracle.compare(s_cmp, f_cmp)
            if why:
                why = "%d shards: %s" % (n, why)
            elif n == 1 and any(k != "+I" for k, _ in s_log + f_log):
                notes.append("%s: sluice's changelog is %s, Flink's %s (the final tables "
                             "agree)" % (q, "updating" if any(k != "+I" for k, _ in s_log)
                                         else "insert-only",
                                         "updating" if any(k != "+I" for k, _ in f_log)
                                         else "insert-only"))
        if why:
            failures.append(q)
            print("FAIL %s: %s" % (q, why))
        else:
            print("PASS %s (%d rows, sluice on %s shards = Flink)" % (
                q, len(f_log), "/".join(map(str, SHARDS))))
    for n in notes:
        print("NOTE " + n)
    print("nexmark: %d events, %d queries: %d agree, %d disagree (%.0f s; Flink JVM exit %s)" % (
        n_events, len(jobs), len(jobs) - len(failures), len(failures), time.time() - t0, rc))
    if failures:
        print("work files kept in %s" % work)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
