#!/usr/bin/env python3
"""A real Prometheus server (Debian's `prometheus`) scrapes `sluice run --http` every
second; its HTTP API must then answer a rate of the source's records that is > 0 and a
scrape target that is up.

Both listen on 127.0.0.1 only: the job on a port it picks itself (--http 127.0.0.1:0),
Prometheus on a free port found just before, with a temporary config and TSDB that are
removed at the end. Everything is polled with a deadline; no sleep is the check.

Usage: prometheus_e2e.py SLUICE
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Job, datagen_job, fail, get, poll  # noqa: E402

CONFIG = """global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: sluice
    metrics_path: /metrics
    static_configs:
      - targets: ['%s']
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(base, expr):
    """The vector result of an instant query, [] while there is none."""
    st, _, body = get(base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    if st != 200:
        return []
    doc = json.loads(body)
    return doc["data"]["result"] if doc.get("status") == "success" else []


def main():
    sluice = sys.argv[1]
    prom_bin = shutil.which("prometheus")
    if not prom_bin:
        print("SKIP: the prometheus server (Debian's prometheus) is not installed", flush=True)
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="sluice-prom-")
    prom = job = None
    try:
        path = os.path.join(tmp, "job.sql")
        # long enough for many scrapes; stopped as soon as the check passed
        datagen_job(path, rows=600000, rate=5000)
        job = Job(sluice, path)
        target = job.url.split("//", 1)[1]
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write(CONFIG % target)
        port = free_port()
        base = "http://127.0.0.1:%d" % port
        log = open(os.path.join(tmp, "prometheus.log"), "w")
        prom = subprocess.Popen([prom_bin, "--config.file=" + os.path.join(tmp, "prometheus.yml"),
                                 "--storage.tsdb.path=" + os.path.join(tmp, "data"),
                                 "--web.listen-address=127.0.0.1:%d" % port],
                                stdout=log, stderr=subprocess.STDOUT)

        def prom_alive():
            if prom.poll() is not None:
                fail("prometheus exited %d: %s" % (prom.returncode,
                                                   open(log.name).read()[-2000:]))
            return True

        poll("prometheus to be ready",
             lambda: prom_alive() and get(base + "/-/ready")[0] == 200, timeout=60, every=0.2)
        up = poll("the sluice target to be up", lambda: prom_alive() and job.running() and [
            r for r in query(base, 'up{job="sluice"}') if r["value"][1] == "1"],
            timeout=60, every=0.2)
        expr = 'sum(rate(sluice_operator_records_in_total{operator="gen"}[5s]))'
        res = poll("a rate > 0 from prometheus", lambda: prom_alive() and job.running() and [
            r for r in query(base, expr) if float(r["value"][1]) > 0], timeout=60, every=0.2)
        rate = float(res[0]["value"][1])
        # datagen is paced at 5000 rows/s (per split at most): a rate far above that is a
        # wrong counter, not a fast machine; a low one is only the start of the run
        if rate > 4 * 2 * 5000:
            fail("rate of the source's records is %g/s, above what datagen paces" % rate)
        print("prometheus: target up (%s), %s = %.0f/s" % (up[0]["metric"].get("instance"),
                                                           expr, rate), flush=True)
    finally:
        if prom and prom.poll() is None:
            prom.terminate()
            try:
                prom.wait(30)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()
        if job:
            rc = job.stop()
            if rc != 0:
                print("sluice exited %d: %s" % (rc, "".join(job.err)), flush=True)
                sys.exit(1)
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
