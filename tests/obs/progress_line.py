#!/usr/bin/env python3
"""The progress line of `sluice run` (engine/cli/progress.c): on a terminal, a bounded job
(datagen at a fixed rate, ~2 s) redraws one line in place on stderr, with records, their
rate, the watermark and the share of the input read, and clears it before its summary; in
a pipe there is no such line, only the summary.

Usage: progress_line.py SLUICE
"""
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import datagen_job, fail  # noqa: E402


def on_terminal(sluice, job):
    """Runs sluice with stderr on a pseudo-terminal; returns what it wrote there."""
    master, slave = pty.openpty()
    p = subprocess.Popen([sluice, "run", job], stdout=subprocess.DEVNULL, stderr=slave,
                         stdin=subprocess.DEVNULL)
    os.close(slave)
    out, deadline = b"", time.monotonic() + 60
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 1.0)
        if not r:
            if p.poll() is not None:
                break
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    if p.wait(30) != 0:
        fail("sluice on a terminal exited %d: %r" % (p.returncode, out[-400:]))
    return out.decode(errors="replace")


def main():
    sluice = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="sluice-progress-")
    try:
        job = os.path.join(tmp, "job.sql")
        datagen_job(job, rows=30000, rate=12000, name="obs_progress")
        text = on_terminal(sluice, job)
        lines = re.findall(r"\r(sluice: \d+ records, \d+/s, watermark [^,\r]+, (\d+) % read)"
                           r"\x1b\[K", text)
        if len(lines) < 2:
            fail("fewer than two progress lines on the terminal: %r" % text[-600:])
        pct = [int(m[1]) for m in lines]
        if pct != sorted(pct) or pct[-1] <= 0 or pct[-1] > 100:
            fail("the share read does not grow: %r" % pct)
        if "\r\x1b[Ksluice: done: 30000 records in" not in text:
            fail("the line is not cleared before the summary: %r" % text[-300:])
        piped = subprocess.run([sluice, "run", job], capture_output=True, text=True,
                               timeout=60)
        if piped.returncode != 0 or "\r" in piped.stderr or "% read" in piped.stderr:
            fail("a progress line in a pipe: %r" % piped.stderr)
        print("PASS: %d progress lines, read %r" % (len(lines), pct))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
