#!/usr/bin/env python3
"""Runs the SQL examples (examples/sql/*.sql) with `sluice run` and checks what they print.

For the file-based examples the expected rows are computed here, independently of the
engine, from the input files and Flink's semantics (the rules the acceptance cases pin down):

  - with 'scan.watermark.emit.strategy' = 'on-event' the watermark after each record is
    max(event time so far) - delay; a record meets the watermark of the records before it;
  - a window [start, end) fires when the watermark reaches end - 1 ms, and a record whose
    window has fired is late and dropped (HOP: per window, and the record counts as late
    when all its windows fired; SESSION: when the session it merges into has already
    closed; sessions that touch merge); sluice's "N late" must match;
  - an event-time temporal join picks the version with the greatest time <= the order's;
  - rowtime keep-first deduplication replaces the kept row only by a strictly earlier one.

Each file-based example runs on 1 and 2 shards and must print exactly the expected changelog
as a multiset (row order across keys depends on the shards). The datagen example's rows come
from sluice's generator, so it is checked by invariants: window bounds, one row per
(sensor, window), min <= max within range, counts + late rows = 'number-of-rows', and the
same rows on a second 1-shard run.

Usage: run_examples.py SLUICE [EXAMPLE ...]   (run from the repository root; EXAMPLE is a
file name in examples/sql without .sql; prints PASS/FAIL and the wall time of each run)
"""
import collections
import json
import os
import re
import subprocess
import sys
import time
from decimal import ROUND_HALF_UP, Decimal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "examples", "data")
SQL = os.path.join(ROOT, "examples", "sql")
LINE = re.compile(r"^([+-][IUD])\[(.*)\]$")
STATS = re.compile(r"sluice: done: (\d+) records in, (\d+) rows out, (\d+) late")
SEC, MIN = 1000, 60 * 1000


# ---------------------------------------------------------------- formatting (Flink's print)

def ts_text(ms):
    """TIMESTAMP(3) as Flink prints it in UTC: 'yyyy-MM-dd HH:mm:ss.SSS'."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms // 1000)) + ".%03d" % (ms % 1000)


def parse_ts(text):
    """'yyyy-MM-dd HH:mm:ss[.SSS]' (UTC) to epoch ms."""
    whole, _, frac = text.partition(".")
    t = time.strptime(whole, "%Y-%m-%d %H:%M:%S")
    return (int(time.mktime(t)) - time.timezone) * 1000 + int((frac + "000")[:3])


def dec(x, scale):
    """A JSON number read into DECIMAL(p, scale), printed with exactly `scale` digits."""
    return Decimal(repr(x) if isinstance(x, float) else str(x)).quantize(
        Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)


def row(op, *cols):
    return "%s[%s]" % (op, ", ".join("NULL" if c is None else str(c) for c in cols))


def read_jsonl(name):
    with open(os.path.join(DATA, name)) as f:
        return [json.loads(l) for l in f if l.strip()]


# ---------------------------------------------------------------- the independent models

def order_events():
    """The CDC orders as (event_time_ms, watermark_before_ms, kept, customer_id, total):
    every event moves the watermark (the table's WATERMARK covers all of them), only 'c',
    'u' and 'r' pass the view's WHERE."""
    out, mx = [], None
    for e in read_jsonl("orders_cdc.jsonl"):
        p = e["payload"]
        ts = p["ts_ms"]
        wm = None if mx is None else mx - 5 * SEC
        a = p["after"] or {}
        out.append((ts, wm, p["op"] in ("c", "u", "r"), a.get("customer_id"),
                    None if a.get("total") is None else dec(a["total"], 2)))
        mx = ts if mx is None else max(mx, ts)
    return out


def fired(end, wm):
    """A window [., end) has fired once the watermark reached end - 1 ms."""
    return wm is not None and end - 1 <= wm


def expect_tumble():
    size = 5 * MIN
    win, late = collections.defaultdict(list), 0
    for ts, wm, kept, cust, total in order_events():
        if not kept:
            continue
        start = ts - ts % size
        if fired(start + size, wm):
            late += 1
            continue
        win[(start, cust)].append(total)
    rows = [row("+I", ts_text(s), ts_text(s + size), c, len(v), sum(v))
            for (s, c), v in win.items()]
    return rows, late


def expect_hop():
    size, slide = 10 * MIN, 2 * MIN
    win, late = collections.defaultdict(list), 0
    for ts, wm, kept, _cust, total in order_events():
        if not kept:
            continue
        start, counted = ts - ts % slide, False
        while start > ts - size:
            if not fired(start + size, wm):
                win[start].append(total)
                counted = True
            start -= slide
        late += not counted  # a row is late (dropped) when all its windows fired, as in Flink
    rows = []
    for s, v in win.items():
        # AVG(DECIMAL(10,2)) is DECIMAL(38,6) in Flink: the exact quotient, rounded half up
        avg = (sum(v) / len(v)).quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)
        rows.append(row("+I", ts_text(s), ts_text(s + size), len(v), avg))
    return rows, late


def expect_sessions():
    """Flink's merging window operator: a record's window [ts, ts + gap) merges with every
    open session of its key it intersects (touching counts); the merged window being
    already fired makes the record late; a watermark closes sessions with end - 1 <= wm."""
    gap = 30 * MIN
    open_, done, late = collections.defaultdict(list), [], 0

    def close(wm):
        for cust, sessions in open_.items():
            for s in [s for s in sessions if wm is None or fired(s[1], wm)]:
                done.append((cust, s))
                sessions.remove(s)

    for ts, wm, kept, cust, total in order_events():
        if wm is not None:
            close(wm)
        if not kept:
            continue
        start, end, vals = ts, ts + gap, [total]
        rest = []
        for s in open_[cust]:
            if s[0] <= end and s[1] >= start:
                start, end, vals = min(start, s[0]), max(end, s[1]), vals + s[2]
            else:
                rest.append(s)
        if fired(end, wm):
            late += 1
            continue
        open_[cust] = rest + [(start, end, vals)]
    close(None)
    rows = [row("+I", ts_text(s), ts_text(e), c, len(v), sum(v), max(v))
            for c, (s, e, v) in done]
    return rows, late


def expect_temporal_join():
    versions = collections.defaultdict(list)
    for p in read_jsonl("products.jsonl"):
        versions[p["product_id"]].append((parse_ts(p["update_time"]), p))
    rows = []
    for o in read_jsonl("orders.jsonl"):
        t = parse_ts(o["order_time"])
        cands = [v for v in versions.get(o["product_id"], []) if v[0] <= t]
        p = max(cands, key=lambda v: v[0])[1] if cands else None
        price = None if p is None else dec(p["price"], 2)
        rows.append(row("+I", o["order_id"], o["customer_id"], o["quantity"],
                        p and p["product_name"], price, p and p["category"],
                        None if p is None else o["quantity"] * price,
                        ts_text(t)))
    return rows, 0  # the orders come in time order: none is behind the watermark


def expect_dedup():
    kept, rows = {}, []
    for c in read_jsonl("clicks.jsonl"):
        r = (c["click_id"], c["user_id"], c["url"], ts_text(parse_ts(c["ts"])))
        old = kept.get(c["click_id"])
        if old is None:
            rows.append(row("+I", *r))
        elif parse_ts(c["ts"]) < parse_ts(old[3]):
            rows += [row("-U", *old), row("+U", *r)]
        else:
            continue
        kept[c["click_id"]] = r
    # a copy behind the watermark is still only a duplicate: rowtime deduplication drops
    # nothing as late in Flink
    return rows, 0


# ---------------------------------------------------------------- running and checking

def run(sluice, name, shards):
    t0 = time.monotonic()
    p = subprocess.run([sluice, "run", os.path.join("examples", "sql", name + ".sql"),
                        "--shards", str(shards)], cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    secs = time.monotonic() - t0
    out, err = p.stdout.decode(), p.stderr.decode()
    if p.returncode != 0:
        raise AssertionError("%d shards: exit %d: %s" % (shards, p.returncode,
                                                        err.strip()[-400:]))
    m = STATS.search(err)
    if not m:
        raise AssertionError("%d shards: no 'sluice: done: ...' line on stderr" % shards)
    lines = [l for l in out.splitlines() if LINE.match(l)]
    return lines, int(m.group(3)), err, secs


def compare(got, want, what):
    if sorted(got) == sorted(want):
        return
    g, w = collections.Counter(got), collections.Counter(want)
    extra = list((g - w).elements())[:5]
    missing = list((w - g).elements())[:5]
    raise AssertionError("%s: %d rows, want %d; unexpected %s; missing %s" % (
        what, len(got), len(want), extra, missing))


def check_file_example(sluice, name, model, notice=None):
    want, want_late = model()
    if not want:
        raise AssertionError("the model expects no rows: the input files are wrong")
    times = []
    for shards in (1, 2):
        got, late, err, secs = run(sluice, name, shards)
        times.append("%d shard%s %.2f s" % (shards, "s" if shards > 1 else "", secs))
        compare(got, want, "%d shards" % shards)
        if want_late is not None and late != want_late:
            raise AssertionError("%d shards: %d late rows reported, want %d" % (
                shards, late, want_late))
        if notice and notice not in err:
            raise AssertionError("%d shards: stderr lacks the notice %r" % (shards, notice))
    return "%d rows%s; %s" % (len(want), "" if want_late is None else
                              ", %d late" % want_late, ", ".join(times))


def check_datagen(sluice, name):
    nrows = 20000
    times, first = [], None
    for shards in (1, 1, 2):
        got, late, _err, secs = run(sluice, name, shards)
        times.append("%d shard%s %.2f s" % (shards, "s" if shards > 1 else "", secs))
        seen, total = set(), 0
        for l in got:
            op, body = LINE.match(l).groups()
            sensor, ws, we, n, lo, hi = [x.strip() for x in body.split(",")]
            s, e = parse_ts(ws), parse_ts(we)
            if op != "+I" or e - s != MIN or s % MIN:
                raise AssertionError("%d shards: bad window row %s" % (shards, l))
            if not 1 <= int(sensor) <= 8 or int(n) < 1:
                raise AssertionError("%d shards: bad sensor or count in %s" % (shards, l))
            if not 0 <= float(lo) <= float(hi) <= 100:
                raise AssertionError("%d shards: min/max out of order in %s" % (shards, l))
            if (sensor, s) in seen:
                raise AssertionError("%d shards: window emitted twice: %s" % (shards, l))
            seen.add((sensor, s))
            total += int(n)
        # 1000 s of event time from 10:00 (less up to 31 s of disorder and lateness)
        if not 8 * 16 <= len(got) <= 8 * 18:
            raise AssertionError("%d shards: %d window rows, want 128..144" % (shards,
                                                                              len(got)))
        # 1% of the rows (about 200) are moved 30 s back; about half miss their window
        if total + late != nrows or not 0 < late <= 400:
            raise AssertionError("%d shards: counts %d + late %d, want %d with late in "
                                 "1..400" % (shards, total, late, nrows))
        if first is None:
            first = sorted(got)
        elif shards == 1 and sorted(got) != first:
            raise AssertionError("two 1-shard runs with the same seed printed different rows")
    return "%d rows, %d late; %s" % (len(got), late, ", ".join(times))


EXAMPLES = {
    "orders_per_customer_tumble":
        lambda s, n: check_file_example(s, n, expect_tumble),
    "orders_moving_average_hop":
        lambda s, n: check_file_example(s, n, expect_hop,
                                        notice="WATERMARK in CREATE VIEW is a sluice extension"),
    "customer_sessions":
        lambda s, n: check_file_example(s, n, expect_sessions),
    "orders_enriched_temporal_join":
        lambda s, n: check_file_example(s, n, expect_temporal_join),
    "clicks_dedup":
        lambda s, n: check_file_example(s, n, expect_dedup),
    "sensor_readings_datagen": check_datagen,
}


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sluice = os.path.abspath(sys.argv[1])
    names = sys.argv[2:] or sorted(EXAMPLES)
    on_disk = sorted(f[:-4] for f in os.listdir(SQL) if f.endswith(".sql"))
    failed = 0
    if not sys.argv[2:] and on_disk != sorted(EXAMPLES):
        print("FAIL examples/sql holds %s, this test knows %s" % (on_disk, sorted(EXAMPLES)))
        failed = 1
    for name in names:
        try:
            print("PASS %s: %s" % (name, EXAMPLES[name](sluice, name)))
        except (AssertionError, subprocess.TimeoutExpired) as e:
            print("FAIL %s: %s" % (name, e))
            failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
