#!/usr/bin/env python3
"""bench/nexmark_bench.py - the Nexmark queries (bench/nexmark/qN.sql) on sluice and on Apache
Flink's MiniCluster (tools/flink-sql) in one run, over the same events.

usage: nexmark_bench.py SLUICE [--events N] [--only q0,q5,...] [--memory [--memory-events M]]
                        [-v]

The events: N Nexmark events (10M by default, as the issue asks: about two hours with Flink's
every query on both parallelisms on 2 cores; --events 1000000 for a 15-minute run; bench/nexmark/ddl.sql's options, 10M events a
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
its rows.

Beside each figure the published per-core anchors are printed (ANCHOR lines, and FIGURE
nexmark/qN_sluice_P_vs_<anchor> as sluice's multiple of them): Flink 2.0 (nexmark's
GUIDE_V2, 4 x 16 cores) and Feldera (its benchmark README, 16 cores). They were measured on
other machines: a ratio to them is a pointer, the same-run ratio to Flink the figure.

--memory: for every windowed query (state cleaned by watermarks: q5, q7, q8, q11, q12), M
events (100M by default) from sluice's generator on 2 shards at 100,000 events a second of
event time (so that windows close as the run goes), the process's RSS sampled
every 0.2 s: FIGURE nexmark/qN_rss_peak (MiB) and nexmark/qN_rss_growth, the peak of the
run's last half over the peak of its first half (1.0: flat; state that grows with the input
shows as about 2). q5 and q7 join by regular joins, whose state grows on Flink too. A query that fails on one side is listed as UNMEASURED with the reason and the others are
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
# published events/s per core: Flink 2.0 (nexmark GUIDE_V2, 4 x 16 cores), Feldera (16 cores)
ANCHORS = {
    "flink20": {"q0": 379e3, "q1": 395e3, "q2": 414e3, "q5": 74.5e3, "q7": 22.9e3,
                "q8": 162e3, "q11": 46e3, "q12": 194e3},
    "feldera": {"q0": 436e3, "q5": 412e3, "q7": 196e3, "q8": 415e3},
}
WINDOWED = ["q5", "q7", "q8", "q11", "q12"]
# the memory run's event rate: 100M events are 1,000 s of event time, a hundred 10 s windows
# (at RATE they would be 10 s, one window: nothing would ever be cleaned)
MEMORY_RATE = 100000
# q5 and q7 join a window aggregate's rows by a regular join (on the window's bounds, or a
# BETWEEN over window_end, which is no time attribute): Flink plans them so too, and their
# state grows with the input on both engines. A processing-time TTL would not help: it
# expires q5's per-window maximum while the window is still open, which changes the rows
# and multiplies the work (1M events: 8 s without, 96 s with a 5 s TTL). They are measured
# as they are, and their growth is theirs.


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def memory_run(sluice, job, events, work):
    """(peak MiB, growth) of `sluice run job --shards 2`, RSS sampled every 0.2 s."""
    err = open(os.path.join(work, os.path.basename(job) + ".mem.err"), "w")
    p = peer.subprocess.Popen([sluice, "run", job, "--shards", "2"],
                              stdout=peer.subprocess.DEVNULL, stderr=err)
    samples = []
    while p.poll() is None:
        r = rss_kib(p.pid)
        if r is not None:
            samples.append(r)
        time.sleep(0.2)
    err.close()
    if p.returncode != 0:
        raise peer.Failed("sluice run %s exited %d (see %s)" % (job, p.returncode, err.name))
    if len(samples) < 10:
        raise peer.Failed("%s ran %d samples long: too short to see growth" % (
            job, len(samples)))
    half = len(samples) // 2
    return max(samples) / 1024.0, max(samples[half:]) / max(1, max(samples[:half]))


def job_text(ddl, query, side, sluice):
    """The job of `query` over `ddl` for one side: q14's user function is C on sluice, Java
    on Flink (nexmark.for_sluice, for_flink)."""
    text = ddl + "\n" + open(os.path.join(nexmark.BENCH, query + ".sql")).read()
    return nexmark.for_flink(text) if side == "flink" else nexmark.for_sluice(text, sluice)


def main():
    ap = argparse.ArgumentParser(description="Nexmark on sluice and Flink, same run.")
    ap.add_argument("sluice")
    ap.add_argument("--events", type=int, default=10000000)
    ap.add_argument("--memory", action="store_true",
                    help="only the memory run of the windowed queries")
    ap.add_argument("--memory-events", type=int, default=100000000)
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
    if a.memory:
        return memory_suite(sluice, [q for q in queries if q in WINDOWED] if a.only
                            else WINDOWED, a.memory_events, work, t0)
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
            for name, table in sorted(ANCHORS.items()):
                if s and q in table:
                    print("FIGURE nexmark/%s_sluice_%d_vs_%s %.4f x - -" % (
                        q, par, name, s[0] / table[q]))
        anchors = ["%s %.0f" % (name, table[q]) for name, table in sorted(ANCHORS.items())
                   if q in table]
        if anchors:
            print("ANCHOR nexmark/%s per core: %s" % (q, ", ".join(anchors)))
    for (q, side, par), why in sorted(unmeasured.items()):
        print("UNMEASURED nexmark/%s_%s_%d: %s" % (q, side, par, why))
    sys.stdout.flush()
    peer.log("the Nexmark suite took %.0f s" % (time.monotonic() - t0))
    peer.shutil.rmtree(work, ignore_errors=True)
    return 1 if unmeasured else 0


def memory_suite(sluice, queries, events, work, t0):
    """The memory run: FIGURE lines of peak RSS and growth per windowed query."""
    bad = {}
    for q in queries:
        job = os.path.join(work, "%s_memory.sql" % q)
        with open(job, "w") as f:
            f.write(job_text(nexmark.ddl(events, MEMORY_RATE), q, "sluice", sluice))
        try:
            peak, growth = memory_run(sluice, job, events, work)
            print("FIGURE nexmark/%s_rss_peak %.1f MiB - -" % (q, peak))
            print("FIGURE nexmark/%s_rss_growth %.3f x - -" % (q, growth))
            sys.stdout.flush()
        except peer.Failed as e:
            bad[q] = str(e)
    for q, why in sorted(bad.items()):
        print("UNMEASURED nexmark/%s_rss: %s" % (q, why))
    peer.log("the memory runs (%d events each) took %.0f s" % (events, time.monotonic() - t0))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
