#!/usr/bin/env python3
"""bench/nexmark_bench.py - the Nexmark queries (bench/nexmark/qN.sql) on sluice and on Apache
Flink's MiniCluster (tools/flink-sql) in one run, over the same events.

usage: nexmark_bench.py SLUICE [--events N] [--only q0,q5,...] [-v]

The events: N Nexmark events (1M by default; bench/nexmark/ddl.sql's options, 10M events a
second of event time) written once to a JSON file by sluice's own generator, in event order
(tests/flink/nexmark.py's materialize, the file the differential test compares on), and the
same for 1,000 events. Both engines then run each query with its blackhole sink over those
files: Flink at parallelism 1 and 2 (one JVM per parallelism, every query in turn, a warm-up
job first and discarded), sluice on 1 and 2 shards. As in bench/peer.py, the small job's time
is subtracted from the full one's, and the figures are events per CPU second ("per core":
(N - 1000) / (CPU(N) - CPU(1000)), every thread of the process, a JVM's GC and JIT included)
with the ratio sluice / Flink of the same run, and events per wall second (_wall). What each
side's time includes is bench/peer.py's: sluice's whole process (start, planning, reading and
parsing the file); Flink's job from planning to its end, the JVM's and the cluster's start
outside it. A third sluice figure, _gen, reads the events from 'connector' = 'nexmark' itself
(no file), as the Nexmark benchmark runs: what sluice does without JSON parsing.

q12 (processing-time windows) is measured too, though the differential test cannot compare
its rows. A query that fails on one side is listed as UNMEASURED with the reason and the others are
printed; the exit status is then 1.
"""

import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "flink"))
import peer  # noqa: E402  (the Flink batch runner, sluice's timed run, the rates)
import nexmark  # noqa: E402  (the event file and the query list of the differential test)

RATE = 10000000  # events a second of event time: the Nexmark suite's default rate
# measured here though not compared with Flink's rows (they depend on the clock)
CLOCK_QUERIES = ["q12"]


def job_text(ddl, query, side, sluice):
    """The job of `query` over `ddl` for one side: q14's user function is C on sluice, Java
    on Flink (nexmark.for_sluice, for_flink)."""
    text = ddl + "\n" + open(os.path.join(nexmark.BENCH, query + ".sql")).read()
    return nexmark.for_flink(text) if side == "flink" else nexmark.for_sluice(text, sluice)


def main():
    ap = argparse.ArgumentParser(description="Nexmark on sluice and Flink, same run.")
    ap.add_argument("sluice")
    ap.add_argument("--events", type=int, default=1000000)
    ap.add_argument("--only", default="", help="comma-separated queries (default: all)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    peer.VERBOSE = a.verbose
    sluice = os.path.abspath(a.sluice)
    queries = [q for q in a.only.split(",") if q] or sorted(
        nexmark.QUERIES + CLOCK_QUERIES, key=lambda q: int(q[1:]))
    t0 = time.monotonic()
    p = peer.subprocess.run([peer.FLINK_SQL, "--prepare"], stderr=peer.subprocess.PIPE,
                            text=True)
    if p.returncode:
        peer.log("tools/flink-sql --prepare exited %d: %s" % (p.returncode,
                                                             p.stderr.strip()[-400:]))
        return 1
    work = tempfile.mkdtemp(prefix="sluice-nexmark-bench-")
    files, gen = {}, {}
    for z, n in (("small", peer.SMALL), ("full", a.events)):
        d = os.path.join(work, z)
        os.makedirs(d)
        text = nexmark.ddl(n, RATE)
        files[z], _ = nexmark.materialize(sluice, text, d)
        gen[z] = text
    peer.log("nexmark: %d events in a file (%.0f s)" % (a.events, time.monotonic() - t0))
    jobs = {}  # (query, "file" | "gen" | "flink", size) -> job file
    for q in queries:
        for z in ("small", "full"):
            for src, ddl in (("file", files[z]), ("gen", gen[z]), ("flink", files[z])):
                path = os.path.join(work, "%s_%s_%s.sql" % (q, src, z))
                with open(path, "w") as f:
                    f.write(job_text(ddl, q, src, sluice))
                jobs[(q, src, z)] = path
    results, unmeasured = {}, {}
    n = a.events
    for par in (1, 2):
        warm = os.path.join(work, "warmup.sql")
        with open(warm, "w") as f:
            f.write(job_text(files["small"], queries[0], "flink", sluice))
        order = [warm] + [jobs[(q, "flink", z)] for q in queries for z in ("small", "full")]
        try:
            r = peer.flink_batch(par, order, work)
        except peer.Failed as e:
            for q in queries:
                unmeasured[(q, "flink", par)] = str(e)
            continue
        for q in queries:
            peer.measure(results, unmeasured, (q, "flink", par),
                         lambda q=q: peer.rates(n, r[jobs[(q, "flink", "full")]],
                                                r[jobs[(q, "flink", "small")]]))
    for par in (1, 2):
        for q in queries:
            for src in ("file", "gen"):
                side = "sluice" if src == "file" else "sluice_gen"

                def one(q=q, src=src, par=par):
                    # every event read, once per scan of the table (q5 and q9 scan it twice)
                    small = peer.sluice_run(sluice, jobs[(q, src, "small")], par,
                                            lambda got: got and got % peer.SMALL == 0,
                                            False, work)
                    full = peer.sluice_run(sluice, jobs[(q, src, "full")], par,
                                           lambda got: got and got % n == 0, False, work)
                    return peer.rates(n, full, small)
                peer.measure(results, unmeasured, (q, side, par), one)
    for q in queries:
        for par in (1, 2):
            f = results.get((q, "flink", par))
            s = results.get((q, "sluice", par))
            g = results.get((q, "sluice_gen", par))
            if f:
                print("FIGURE nexmark/%s_flink_%d %.0f events/s - -" % (q, par, f[0]))
            if s:
                print("FIGURE nexmark/%s_sluice_%d %.0f events/s %s" % (
                    q, par, s[0], "%.4f nexmark/%s_flink_%d" % (s[0] / f[0], q, par)
                    if f else "- -"))
            if g:
                print("FIGURE nexmark/%s_sluice_%d_gen %.0f events/s - -" % (q, par, g[0]))
            for side, r in (("sluice", s), ("flink", f)):
                if r:
                    print("FIGURE nexmark/%s_%s_%d_wall %.0f events/s - -" % (q, side, par,
                                                                            r[1]))
    for (q, side, par), why in sorted(unmeasured.items()):
        print("UNMEASURED nexmark/%s_%s_%d: %s" % (q, side, par, why))
    sys.stdout.flush()
    peer.log("the Nexmark suite took %.0f s" % (time.monotonic() - t0))
    peer.shutil.rmtree(work, ignore_errors=True)
    return 1 if unmeasured else 0


if __name__ == "__main__":
    sys.exit(main())
