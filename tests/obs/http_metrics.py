#!/usr/bin/env python3
"""sluice run --http: /metrics and /api/metrics while a job runs.

1. A windowed datagen job (2 shards, ~5 s) runs with --http 127.0.0.1:0: /metrics answers
   in the Prometheus content type, `promtool check metrics` accepts it, the source's
   records_in grows between scrapes, the window counts late rows and keeps state, every
   counter is monotonic from scrape to scrape, and /api/metrics is the same as JSON.
2. A file of three short jobs scraped in a tight loop from start to exit (the handshake
   with shards that wire and unwire, and runs that replace each other): no failed
   scrape while the process lives, counters never go backwards within a job, the exit
   is clean, and every job shows up under its own name.
3. The address: a port alone binds 127.0.0.1, a bad address is refused naming it, a
   method other than GET is refused, unknown paths are 404.
4. Time and checkpoints: a checkpointing job (every 200 ms) shows, in /api/status and
   /metrics, busy / backpressured / idle per stage instance adding up to 1000 ms a
   second, its splits' positions against their ends, every exchange channel's fill
   within its capacity, and completed checkpoints with a duration, an alignment and a
   size, the bytes written growing with them.

Usage: http_metrics.py SLUICE
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Job, datagen_job, fail, get, parse, poll, total  # noqa: E402

COUNTERS = ("sluice_operator_records_in_total", "sluice_operator_records_out_total",
            "sluice_operator_records_late_total", "sluice_stage_backpressured_seconds_total",
            "sluice_exchange_ring_full_total", "sluice_dead_letters_total",
            "sluice_shard_loop_turns_total", "sluice_checkpoints_completed_total")


def check_monotonic(prev, cur, where):
    for key, v in cur.items():
        if key[0].endswith("_total") and key in prev and v < prev[key]:
            fail("%s: counter %s%s went back from %g to %g" % (where, key[0], key[1],
                                                               prev[key], v))


def live_job(sluice, tmp):
    path = os.path.join(tmp, "live.sql")
    datagen_job(path, rows=25000, rate=5000)
    job = Job(sluice, path)
    # counters grow while it runs: two scrapes with more records in between
    first = poll("records from the source", lambda: (lambda s: s if total(
        s, "sluice_operator_records_in_total", operator="gen") > 0 else None)(
            parse(job.metrics()[2])))
    n0 = total(first, "sluice_operator_records_in_total", operator="gen")
    st, ctype, body = job.metrics()
    if st != 200 or not ctype.startswith("text/plain; version=0.0.4"):
        fail("/metrics answered %d %r" % (st, ctype))
    promtool = shutil.which("promtool")
    if not promtool:
        print("SKIP: promtool (Debian's prometheus) is not installed", flush=True)
        job.stop()
        sys.exit(77)
    chk = subprocess.run([promtool, "check", "metrics"], input=body, text=True,
                         capture_output=True)
    if chk.returncode != 0:
        fail("promtool check metrics: %s%s" % (chk.stdout, chk.stderr))
    for name in COUNTERS + ("sluice_operator_state_entries", "process_resident_memory_bytes"):
        if not any(k[0] == name for k in parse(body)):
            fail("/metrics has no %s" % name)
    prev = parse(body)
    grown = poll("records_in to grow", lambda: (lambda s: s if total(
        s, "sluice_operator_records_in_total", operator="gen") > n0 else None)(
            parse(job.metrics()[2])))
    check_monotonic(prev, grown, "live job")
    poll("late rows counted", lambda: total(parse(job.metrics()[2]),
                                            "sluice_operator_records_late_total",
                                            operator="tumble window") > 0)
    poll("a watermark on the window", lambda: any(
        k[0] == "sluice_operator_watermark_seconds" and 'operator="tumble window"' in k[1]
        for k in parse(job.metrics()[2])))
    if total(grown, "process_resident_memory_bytes") <= 0:
        fail("process_resident_memory_bytes is not positive")
    st, ctype, body = get(job.url + "/api/metrics")
    if st != 200 or ctype != "application/json":
        fail("/api/metrics answered %d %r" % (st, ctype))
    doc = json.loads(body)
    if doc["job"] != "obs_counts" or doc["shards_total"] != 2 or not doc["started"]:
        fail("/api/metrics: unexpected header %r" % {k: doc[k] for k in ("job", "started")})
    gen = [o for o in doc["operators"] if o["name"] == "gen"]
    if len(gen) != 1 or gen[0]["kind"] != "source" or \
            sum(i["records_in"] for i in gen[0]["instances"]) <= n0:
        fail("/api/metrics: the source's records_in is not there or did not grow: %r" % gen)
    win = [o for o in doc["operators"] if o["name"] == "tumble window"]
    if not win or not any(isinstance(i["watermark_ms"], int) for i in win[0]["instances"]):
        fail("/api/metrics: no watermark on the window: %r" % win)
    rc = job.stop()
    if rc != 0:
        fail("the live job exited %d: %s" % (rc, "".join(job.err)))


def switching_jobs(sluice, tmp):
    """Three short jobs one after another in one file, scraped as fast as possible."""
    path = os.path.join(tmp, "three.sql")
    datagen_job(path, rows=30000, rate=0, shards=2, name="switch_0")
    insert = open(path).read().split("INSERT INTO", 1)[1]
    with open(path, "a") as f:
        for k in (1, 2):
            f.write("SET 'pipeline.name' = 'switch_%d';\nINSERT INTO%s" % (k, insert))
    job = Job(sluice, path)
    seen, prev, prev_job, scrapes = [], {}, None, 0
    while True:
        st, _, body = job.metrics()
        if st == 0:
            if poll("sluice to exit after a refused scrape",
                    lambda: not job.running(), timeout=5):
                break
        if st != 200:
            fail("/metrics answered %d" % st)
        cur = parse(body)
        scrapes += 1
        names = {lab.split('job="')[1].split('"')[0] for (_, lab) in cur if 'job="' in lab}
        if len(names) > 1:
            fail("one scrape shows two jobs: %r" % names)
        name = names.pop() if names else None
        if name is not None and name == prev_job:
            check_monotonic(prev, cur, "job " + name)
        if name is not None and name not in seen:
            seen.append(name)
        prev, prev_job = cur, name
        if get(job.url + "/api/metrics")[0] not in (0, 200):
            fail("/api/metrics failed while switching jobs")
    rc = job.stop()
    if rc != 0:
        fail("the three jobs exited %d: %s" % (rc, "".join(job.err)))
    # the endpoint follows the jobs in order (a job that ran between two scrapes may be
    # missed, but never shown out of order); the first is shown from before its start
    if not seen or seen[0] != "switch_0" or seen != sorted(seen):
        fail("jobs seen in this order: %r" % seen)
    print("switching jobs: %d scrapes, jobs seen %s" % (scrapes, seen), flush=True)


def addresses(sluice, tmp):
    path = os.path.join(tmp, "addr.sql")
    datagen_job(path, rows=200000, rate=20000)
    job = Job(sluice, path, addr="0")  # a port alone: loopback
    if not job.url.startswith("http://127.0.0.1:"):
        fail("--http 0 bound %s, not 127.0.0.1" % job.url)
    r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST",
                        job.url + "/metrics"], capture_output=True, text=True) \
        if shutil.which("curl") else None
    if r is not None and r.stdout != "405":
        fail("POST /metrics answered %s, not 405" % r.stdout)
    if get(job.url + "/nope")[0] != 404:
        fail("an unknown path is not 404")
    job.stop()
    bad = subprocess.run([sluice, "run", path, "--http", "nowhere:80"], capture_output=True,
                         text=True)
    if bad.returncode == 0 or "--http 'nowhere:80'" not in bad.stderr:
        fail("--http nowhere:80 was not refused by name: %r" % bad.stderr)


def times_and_checkpoints(sluice, tmp):
    path = os.path.join(tmp, "ckpt.sql")
    datagen_job(path, rows=60000, rate=15000, name="obs_ckpt")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write("SET 'execution.checkpointing.interval' = '200 ms';\n" + text)
    job = Job(sluice, path, "--checkpoint-dir", os.path.join(tmp, "ck"))

    def status():
        st, ctype, body = get(job.url + "/api/status")
        if st != 200 or ctype != "application/json":
            fail("/api/status answered %d %r" % (st, ctype))
        return json.loads(body)

    def two_checkpoints():
        doc = status()  # not started yet: no checkpoints at all
        ok = [h for h in doc.get("checkpoints", {}).get("history", []) if h["ok"]]
        return doc if len(ok) >= 2 else None
    doc = poll("two completed checkpoints in /api/status", two_checkpoints, timeout=30)
    ok = [h for h in doc["checkpoints"]["history"] if h["ok"]]
    if any(h["size_bytes"] <= 0 or h["duration_ms"] < 0 or h["alignment_us"] < 0 for h in ok):
        fail("/api/status: a checkpoint without a size or with a bad time: %r" % ok)
    if doc["checkpoints"]["written_bytes"] < sum(h["size_bytes"] for h in ok):
        fail("/api/status: written_bytes %d below the checkpoints' sizes %r" % (
            doc["checkpoints"]["written_bytes"], ok))
    if [h["id"] for h in ok] != sorted(h["id"] for h in ok):
        fail("/api/status: checkpoint history out of order: %r" % ok)
    for st in doc["stages"]:
        for i in st["instances"]:
            t = i["busy_ms_per_s"] + i["backpressured_ms_per_s"] + i["idle_ms_per_s"]
            if abs(t - 1000) > 1 and t != 0:
                fail("/api/status: stage %d shard %d: busy+backpressured+idle = %g ms/s" %
                     (st["id"], i["shard"], t))
    src = [i for st in doc["stages"] if st["id"] == 0 for i in st["instances"]]
    if not src or not any(i["busy_ns"] > 0 for i in src):
        fail("/api/status: the source stage was never busy: %r" % src)
    for c in doc["channels"]:
        if c["capacity_bytes"] <= 0 or not 0 <= c["used_bytes"] <= c["capacity_bytes"]:
            fail("/api/status: channel fill out of range: %r" % c)
    if not any(c["frames"] > 0 for c in doc["channels"]):
        fail("/api/status: no frames on any exchange channel")
    splits = doc["splits"]
    if len(splits) != 2 or any(s["end"] != 30000 or not 0 <= s["position"] <= 30000
                               for s in splits):
        fail("/api/status: datagen splits %r" % splits)
    st, _, body = job.metrics()
    samples = parse(body)
    for name in ("sluice_checkpoint_last_size_bytes", "sluice_checkpoint_written_bytes_total",
                 "sluice_stage_busy_seconds_total", "sluice_source_split_position"):
        if total(samples, name) <= 0:
            fail("/metrics: %s is not positive" % name)
    for name in ("sluice_checkpoint_last_duration_seconds",
                 "sluice_checkpoint_last_alignment_seconds", "sluice_stage_idle_ratio",
                 "sluice_operator_watermark_lag_seconds",
                 "sluice_exchange_ring_used_bytes"):
        if not any(k[0] == name for k in samples):
            fail("/metrics has no %s" % name)
    promtool = shutil.which("promtool")
    if promtool:
        chk = subprocess.run([promtool, "check", "metrics"], input=body, text=True,
                             capture_output=True)
        if chk.returncode != 0:
            fail("promtool check metrics (checkpointing job): %s%s" % (chk.stdout, chk.stderr))
    rc = job.stop()
    if rc != 0:
        fail("the checkpointing job exited %d: %s" % (rc, "".join(job.err)))
    print("times and checkpoints: %d checkpoints, last %r" % (len(ok), ok[-1]), flush=True)


def main():
    sluice = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="sluice-obs-")
    try:
        live_job(sluice, tmp)
        switching_jobs(sluice, tmp)
        addresses(sluice, tmp)
        times_and_checkpoints(sluice, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
