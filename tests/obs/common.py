"""Helpers for the HTTP endpoint tests: a job run with --http on a free 127.0.0.1 port,
its /metrics parsed, and polling with a deadline (no fixed sleep is ever the check)."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def poll(what, cond, timeout=20.0, every=0.05):
    """Calls cond() until it returns something truthy; fails naming `what` at the deadline."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > end:
            fail("timed out waiting for " + what)
        time.sleep(every)


def get(url, timeout=5.0):
    """(status, content type, body) of a GET; status 0 when the connection failed."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()
    except (urllib.error.URLError, ConnectionError, OSError):
        return 0, "", ""


def parse(text):
    """{(name, labels): float} of an exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            fail("not an exposition line: %r" % line)
        out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return out


def total(samples, name, **labels):
    """Sum of the samples of family `name` whose labels include `labels`."""
    s = 0.0
    for (n, lab), v in samples.items():
        if n == name and all('%s="%s"' % kv in lab for kv in labels.items()):
            s += v
    return s


DATAGEN_JOB = """SET 'parallelism.default' = '%(shards)d';
SET 'pipeline.name' = '%(name)s';
CREATE TABLE gen (user_id BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen',
  'number-of-rows' = '%(rows)d', 'rows-per-second' = '%(rate)d', 'seed' = '7',
  'fields.user_id.min' = '1', 'fields.user_id.max' = '40',
  'fields.ts.kind' = 'event-time', 'fields.ts.step' = '10 ms',
  'fields.ts.max-disorder' = '300 ms', 'fields.ts.late-fraction' = '0.01',
  'fields.ts.late-by' = '30 s');
CREATE TABLE out_t (user_id BIGINT, w TIMESTAMP(3), c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out_t SELECT user_id, window_start, COUNT(*)
FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '2' SECOND))
GROUP BY user_id, window_start, window_end;
"""


def datagen_job(path, rows, rate, shards=2, name="obs_counts"):
    with open(path, "w") as f:
        f.write(DATAGEN_JOB % dict(rows=rows, rate=rate, shards=shards, name=name))


class Job:
    """`sluice run JOB --http 127.0.0.1:0 ...`; .url is the endpoint's base once up."""

    def __init__(self, sluice, job, *args, addr="127.0.0.1:0"):
        self.p = subprocess.Popen([sluice, "run", job, "--http", addr, *args],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True)
        self.err = []
        self.url = None
        got = threading.Event()

        def read():
            for line in self.p.stderr:
                self.err.append(line)
                m = re.search(r"metrics at (http://\S+)/metrics", line)
                if m and not self.url:
                    self.url = m.group(1)
                    got.set()
            got.set()
        self.t = threading.Thread(target=read, daemon=True)
        self.t.start()
        if not got.wait(20) or not self.url:
            self.stop()
            fail("no 'metrics at' line from sluice; stderr: %s" % "".join(self.err))

    def metrics(self):
        st, ctype, body = get(self.url + "/metrics")
        return (st, ctype, body)

    def running(self):
        return self.p.poll() is None

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        self.t.join(5)
        return rc
