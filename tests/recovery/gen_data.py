#!/usr/bin/env python3
"""Deterministic inputs for the recovery tests: the same seed always gives the same bytes.

orders.jsonl  id, cur, amount, ts: event time advancing ~2 ms a row with up to 300 ms of
              disorder (all within the jobs' watermark delay, so no row is late and the
              output does not depend on how the input was cut by checkpoints and restarts)
rates.jsonl   cur, rate, ts: a new version of each currency's rate every few seconds, in
              event-time order, starting before the first order
events.jsonl  id, usr, ts: clicks with many repeats of each user, for deduplication

Usage: gen_data.py DIR [ROWS]   (or import and call generate)
"""
import os
import random
import sys

CURRENCIES = ["C%02d" % i for i in range(24)]
BASE_MS = 1704067200000  # 2024-01-01 00:00:00 UTC


def ts_text(ms):
    s, milli = divmod(ms, 1000)
    m, sec = divmod(s, 60)
    h, mi = divmod(m, 60)
    d, hour = divmod(h, 24)
    return "2024-01-%02d %02d:%02d:%02d.%03d" % (1 + d, hour, mi, sec, milli)


def generate(out_dir, rows, seed=20261129):
    """Writes the three files into out_dir; returns their paths by name."""
    rnd = random.Random(seed)
    os.makedirs(out_dir, exist_ok=True)
    paths = {n: os.path.join(out_dir, n + ".jsonl") for n in ("orders", "rates", "events")}
    span = rows * 2 + 10000
    with open(paths["rates"], "w") as f:
        lines = []
        for cur in CURRENCIES:
            t = -rnd.randint(1000, 5000)
            while t < span:
                lines.append((t, '{"cur":"%s","rate":%d,"ts":"%s"}\n' % (
                    cur, rnd.randint(1, 100), ts_text(t + 3600000))))
                t += rnd.randint(1000, 8000)
        lines.sort(key=lambda x: (x[0], x[1]))
        f.writelines(line for _, line in lines)
    with open(paths["orders"], "w") as fo, open(paths["events"], "w") as fe:
        t = 0
        ob, eb = [], []
        for i in range(rows):
            t += rnd.randint(0, 4)
            d = max(0, t - rnd.randint(0, 300)) + 3600000  # all after the first rates
            ob.append('{"id":%d,"cur":"%s","amount":%d,"ts":"%s"}\n' % (
                i, rnd.choice(CURRENCIES), rnd.randint(1, 1000), ts_text(d)))
            eb.append('{"id":%d,"usr":"u%d","ts":"%s"}\n' % (
                i, rnd.randint(0, rows // 4), ts_text(d)))
            if len(ob) >= 10000:
                fo.writelines(ob)
                fe.writelines(eb)
                ob, eb = [], []
        fo.writelines(ob)
        fe.writelines(eb)
    return paths


if __name__ == "__main__":
    print(generate(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1000000))
