"""Shared pieces of the recovery tests: the three SQL jobs (and one run by hand), running sluice, reading a sink
directory the way a consumer would (only names not starting with '.'), and comparing two
outputs as multisets of lines."""
import collections
import os
import re
import shutil
import subprocess
import time

import gen_data

# Every job reads the generated files and writes through an exactly-once filesystem sink.
# Watermarks lag 1 s behind the highest timestamp and the data's disorder is at most 300 ms,
# so no row is late: the output depends on the input alone, not on how runs were cut.
HEAD = """SET 'execution.checkpointing.interval' = '%(interval)s';
"""
SINK = """WITH ('connector' = 'filesystem', 'path' = '%(out)s', 'format' = 'csv',
        'sink.delivery-guarantee' = 'exactly-once')"""
ORDERS = """CREATE TABLE orders (id BIGINT, cur STRING, amount BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%(data)s/orders.jsonl', 'format' = 'json');
"""

JOBS = {
    # (a) event-time HOP windows: every order lands in 20 windows per currency
    "window": HEAD + ORDERS + """
CREATE TABLE out_t (cur STRING, ws TIMESTAMP(3), we TIMESTAMP(3), total BIGINT, n BIGINT)
  """ + SINK + """;
INSERT INTO out_t SELECT cur, window_start, window_end, SUM(amount), COUNT(*)
FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '20' SECOND))
GROUP BY cur, window_start, window_end;
""",
    # (b) event-time temporal join: each order takes its currency's rate valid at its time
    "temporal_join": HEAD + ORDERS + """
CREATE TABLE rates (cur STRING, rate BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, PRIMARY KEY (cur) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '%(data)s/rates.jsonl', 'format' = 'json');
CREATE TABLE out_t (id BIGINT, cur STRING, v BIGINT, rate BIGINT)
  """ + SINK + """;
INSERT INTO out_t SELECT o.id, o.cur, o.amount * r.rate, r.rate
FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur;
""",
    # (c) ROW_NUMBER dedup (each user's first click) feeding event-time TUMBLE windows.
    # "First" is first to arrive (ORDER BY proc), so the file is one split: cut into byte
    # ranges read side by side, arrival order and so the kept rows would depend on timing
    # (as in Flink with a parallel source), and the output would not be a function of the input.
    "dedup_window": HEAD + """
CREATE TABLE events (id BIGINT, usr STRING, ts TIMESTAMP(3), proc AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%(data)s/events.jsonl', 'format' = 'json',
        'source.split-size' = '0');
CREATE TABLE out_t (b BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, s BIGINT)
  """ + SINK + """;
INSERT INTO out_t
SELECT MOD(id, 8), TUMBLE_START(ts, INTERVAL '1' SECOND), TUMBLE_END(ts, INTERVAL '1' SECOND),
       COUNT(*), SUM(id)
FROM (SELECT id, usr, ts
      FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY usr ORDER BY proc ASC) AS rn
            FROM events)
      WHERE rn = 1)
GROUP BY TUMBLE(ts, INTERVAL '1' SECOND), MOD(id, 8);
""",
}

# jobs crash_sql.py runs only when --jobs names them
HAND_JOBS = {
    # a regular join: each order with itself, so both sides keep every row in keyed state
    # and each order gives one row. By hand only (crash_sql.py --jobs regular_join): its
    # heap state of 2 M rows, snapshot every 100 ms, makes a run take minutes
    "regular_join": HEAD + ORDERS + """
CREATE TABLE out_t (id BIGINT, cur STRING, amount BIGINT)
  """ + SINK + """;
INSERT INTO out_t SELECT a.id, a.cur, b.amount
FROM orders AS a JOIN orders AS b ON a.id = b.id AND a.cur = b.cur;
""",
}
JOBS_BY_NAME = dict(JOBS, **HAND_JOBS)


def make_data(work, rows):
    d = os.path.join(work, "data")
    t = time.monotonic()
    gen_data.generate(d, rows)
    print("data: %d rows a file generated in %.1f s" % (rows, time.monotonic() - t), flush=True)
    return d


def write_job(work, name, data, out, interval="100 ms"):
    path = os.path.join(work, name + ".sql")
    with open(path, "w") as f:
        f.write(JOBS_BY_NAME[name] % {"data": data, "out": out, "interval": interval})
    return path


def fresh(*dirs):
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


# extra `sluice run` arguments of every run, e.g. ["--state-backend", "rocksdb"]
EXTRA = []


def cmd(sluice, job, shards, ckpt=None):
    c = [sluice, "run", job, "--shards", str(shards), "--quiet"] + EXTRA
    return c + (["--checkpoint-dir", ckpt] if ckpt else [])


def run(sluice, job, shards, ckpt=None, env=None, timeout=120):
    """Runs to the end; returns (exit code, stderr text)."""
    p = subprocess.run(cmd(sluice, job, shards, ckpt), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, env=env, timeout=timeout)
    return p.returncode, p.stderr.decode(errors="replace")


def visible(out):
    """The sink's output as a consumer sees it: a Counter of lines of files not starting with
    '.', and the list of hidden names left."""
    lines = collections.Counter()
    hidden = []
    if not os.path.isdir(out):
        return lines, hidden
    for name in sorted(os.listdir(out)):
        if name.startswith("."):
            hidden.append(name)
            continue
        with open(os.path.join(out, name)) as f:
            lines.update(line.rstrip("\n") for line in f)
    return lines, hidden


def diff(expected, got):
    """'' if equal, else a one-line account of lost and duplicated rows with examples."""
    if expected == got:
        return ""
    lost = expected - got
    extra = got - expected
    msg = "%d rows lost, %d rows extra (duplicated or wrong) of %d expected" % (
        sum(lost.values()), sum(extra.values()), sum(expected.values()))
    if lost:
        msg += "; lost e.g. %r" % sorted(lost)[:3]
    if extra:
        msg += "; extra e.g. %r (x%d)" % (sorted(extra)[0], extra[sorted(extra)[0]])
    return msg


def ckpt_ids(ck, complete_only=False):
    """Ids of DIR/chk-<n> (with MANIFEST if complete_only)."""
    ids = []
    try:
        names = os.listdir(ck)
    except OSError:
        return ids
    for n in names:
        m = re.fullmatch(r"chk-(\d+)", n)
        if m and (not complete_only or os.path.exists(os.path.join(ck, n, "MANIFEST"))):
            ids.append(int(m.group(1)))
    return sorted(ids)


def norm(line):
    """A stderr line with paths and numbers blurred, to count kinds of messages."""
    line = re.sub(r"/[^\s:]*", "PATH", line)
    return re.sub(r"\d+", "N", line)
