#!/usr/bin/env python3
"""`sluice profile PID --seconds N -o OUT.svg`: a flame graph of a running job, drawn by
tools/flamegraph (perf record on the process, folded and rendered by flamegraph.py). The
SVG must be well-formed, hold frames of the job's own shard loop, and come with its folded
stacks; a pid that is no process is refused by name.

Usage: profile.py SLUICE   (exit 77 when perf is missing or not allowed here)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Job, datagen_job, fail, parse, poll, total  # noqa: E402


def main():
    sluice = sys.argv[1]
    if not shutil.which("perf"):
        print("SKIP: perf is not installed")
        return 77
    probe = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", os.devnull,
                            "--", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        print("SKIP: perf may not record here: %s" % probe.stderr.strip()[-200:])
        return 77
    tmp = tempfile.mkdtemp(prefix="sluice-profile-")
    try:
        path = os.path.join(tmp, "job.sql")
        # rate-limited: at full speed the two datagen shards drift apart in event time, the
        # window then holds thousands of slices per key, and nearly every sample lands in
        # the kvtab's insert (a key's namespaces share one probe run: engine/state/kvtab.c),
        # whose frames perf cannot always unwind
        datagen_job(path, rows=10000000, rate=400000, name="obs_profile")
        job = Job(sluice, path)
        poll("records flowing", lambda: total(parse(job.metrics()[2]),
                                              "sluice_operator_records_in_total") > 0)
        svg = os.path.join(tmp, "job.svg")
        r = subprocess.run([sluice, "profile", str(job.p.pid), "--seconds", "1", "-o", svg],
                           capture_output=True, text=True, timeout=120)
        job.stop()
        if r.returncode != 0:
            fail("sluice profile exited %d: %s" % (r.returncode, r.stderr[-600:]))
        root = ET.parse(svg).getroot()
        if not root.tag.endswith("svg"):
            fail("not an SVG: %s" % root.tag)
        text = open(svg).read()
        if "sl_shard_main" not in text:
            fail("the flame graph has no frame of the shard loop (sl_shard_main)")
        if not os.path.getsize(svg[:-4] + ".folded"):
            fail("no folded stacks beside the SVG")
        r = subprocess.run([sluice, "profile", "999999999", "--seconds", "1"],
                           capture_output=True, text=True)
        if r.returncode == 0 or "no such process" not in r.stderr:
            fail("profile of no process: %d %r" % (r.returncode, r.stderr))
        print("PASS: %d bytes of SVG" % len(text))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
