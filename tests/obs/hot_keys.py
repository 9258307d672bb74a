#!/usr/bin/env python3
"""Hot keys (issue 15 §1, issue 16): the key_by senders' heavy-hitter sketches, seen while a
job runs and at its end.

1. A datagen job on 2 shards at 5,000 rows/s whose grouping key k is 0 for 80 % of the rows
   (user_id 1..32 of 1..40) and user_id otherwise, into a tumbling COUNT: /metrics shows
   sluice_hot_key_share{key="k=0",two_phase="true"} between 0.6 and 0.9 while it runs, no
   other key above 0.1 (the sketch never reports a key beyond its share), /api/status (the
   status page's source) lists it likewise, and promtool accepts the page; at the end `--metrics` names k=0 with its share, absorbed by the
   two-phase aggregation.
2. The same rows with 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE': the key is named
   with "one owner shard", and nothing was combined.

Usage: hot_keys.py SLUICE
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Job, fail, get, parse, poll, total  # noqa: E402

JOB = """SET 'parallelism.default' = '2';
SET 'pipeline.name' = 'hot_keys';
%(phase)s
CREATE TABLE gen (user_id BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen',
  'number-of-rows' = '%(rows)d', 'rows-per-second' = '%(rate)d', 'seed' = '7',
  'fields.user_id.min' = '1', 'fields.user_id.max' = '40',
  'fields.ts.kind' = 'event-time', 'fields.ts.step' = '10 ms');
CREATE TABLE out_t (k BIGINT, w TIMESTAMP(3), c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out_t SELECT k, TUMBLE_START(ts, INTERVAL '2' SECOND), COUNT(*)
FROM (SELECT CASE WHEN user_id <= 32 THEN 0 ELSE user_id END AS k, ts FROM gen) AS t
GROUP BY k, TUMBLE(ts, INTERVAL '2' SECOND);
"""


def hot_samples(body):
    """{(key, two_phase): share} of the sluice_hot_key_share series."""
    out = {}
    for (name, labels), v in parse(body).items():
        if name != "sluice_hot_key_share":
            continue
        key = re.search(r'key="([^"]*)"', labels).group(1)
        two = re.search(r'two_phase="([^"]*)"', labels).group(1)
        out[(key, two)] = v
    return out


def live(sluice, tmp):
    path = os.path.join(tmp, "live.sql")
    with open(path, "w") as f:
        f.write(JOB % dict(rows=20000, rate=5000, phase=""))
    job = Job(sluice, path, "--metrics")
    # a sketch over the first few samples says little: look once 8,000 rows have gone by
    body = poll("8,000 rows through the key_by",
                lambda: (lambda b: b if total(parse(b), "sluice_operator_records_in_total",
                                              operator="gen") >= 8000 else None)(
                    job.metrics()[2]), timeout=30)
    hot = hot_samples(body)
    if not 0.6 <= hot.get(("k=0", "true"), 0) <= 0.9:
        fail("k=0 carries 80 %% of the rows, /metrics says %r" % hot)
    others = {k: v for k, v in hot.items() if k[0] != "k=0" and v > 0.1}
    if others:
        fail("keys of 2.5 %% each reported above 10 %%: %r" % others)
    st, _, doc = get(job.url + "/api/status")
    js = [h for h in json.loads(doc).get("hot_keys", []) if h["key"] == "k=0"] if st == 200 else []
    if not js or not js[0]["two_phase"] or not 0.6 <= js[0]["share"] <= 0.9:
        fail("/api/status has no hot key k=0 at 0.6-0.9, two-phase: %s" % doc[:2000])
    promtool = shutil.which("promtool")
    if promtool:
        chk = subprocess.run([promtool, "check", "metrics"], input=body, text=True,
                             capture_output=True)
        if chk.returncode != 0:
            fail("promtool check metrics: %s%s" % (chk.stdout, chk.stderr))
    rc = job.p.wait(60)
    job.t.join(5)
    err = "".join(job.err)
    if rc != 0:
        fail("the job exited %d: %s" % (rc, err))
    m = re.search(r"hot key of \S+: k=0, ([\d.]+)-([\d.]+) % of its records \(([^)]*)\)", err)
    if not m or not (70 <= float(m.group(1)) <= 90) or "two-phase" not in m.group(3):
        fail("--metrics does not name k=0 as absorbed by the two-phase aggregation:\n" + err)
    if re.search(r"hot key of \S+: k=[1-9]", err):
        fail("--metrics names a key of 2.5 %% as hot:\n" + err)
    if not re.search(r"combined \d+ rows into \d+ partials", err):
        fail("--metrics shows no rows combined by the two-phase aggregation:\n" + err)
    print("ok   live: /metrics and --metrics name k=0 (%.1f-%.1f %%), two-phase" %
          (float(m.group(1)), float(m.group(2))), flush=True)


def one_phase(sluice, tmp):
    path = os.path.join(tmp, "one.sql")
    with open(path, "w") as f:
        f.write(JOB % dict(rows=20000, rate=1000000,
                           phase="SET 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE';"))
    p = subprocess.run([sluice, "run", path, "--metrics"], capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 0:
        fail("the one-phase job exited %d: %s" % (p.returncode, p.stderr))
    if not re.search(r"hot key of \S+: k=0, [\d.]+-[\d.]+ % of its records \(one owner shard\)",
                     p.stderr):
        fail("--metrics does not name k=0 with one owner shard:\n" + p.stderr)
    if "combined" in p.stderr:
        fail("ONE_PHASE combined rows:\n" + p.stderr)
    print("ok   one phase: k=0 named, one owner shard, nothing combined", flush=True)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sluice = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        live(sluice, tmp)
        one_phase(sluice, tmp)
    print("hot keys: ok", flush=True)


if __name__ == "__main__":
    main()
