#!/usr/bin/env python3
"""Writes the example input files in examples/data/ (plain Python, fixed seed: the same files
on every run, so the committed files can be checked with `gen.py --check`).

  orders_cdc.jsonl   Debezium change events of a shop's `orders` table as Kafka Connect's JSON
                     converter writes them ({"schema": ..., "payload": {before, after, op,
                     ts_ms, ...}}): a snapshot ('r'), inserts ('c'), status updates ('u') and
                     deletes ('d'), in arrival order. Customers order in bursts (visits), so
                     30-minute sessions both split and merge; customer 7's two orders are
                     exactly 30 minutes apart (touching sessions merge). Arrival is out of
                     order by up to 3 s (inside the jobs' 5 s watermark delay), three events
                     are redelivered (at-least-once), a few events arrive 40 s to 4 min late
                     (some land in windows that already fired, some do not) and one order
                     40 min late (late even for its 30-minute session).
                     Two pairs pin the watermark rule: at 11:00 an order at 10:59:59.999
                     meets a watermark of exactly 10:59:59.999 (late: its window fired), at
                     12:00 one at 11:59:59.999 meets 11:59:59.998 (on time). A delete's
                     ts_ms never exceeds the largest ts_ms before it, so a watermark taken
                     before or after a `WHERE op IN ('c', 'u', 'r')` filter is the same.
  products.jsonl     versions of the `products` dimension table (price and name changes), in
                     time order, for the temporal join.
  orders.jsonl       plain order rows for the temporal join, in time order: some reference a
                     product before its first version or a product that does not exist
                     (LEFT JOIN -> NULLs), one is placed exactly at a version's time.
  clicks.jsonl       click events with redelivered duplicates (same click_id, same content),
                     for deduplication.

Usage: gen.py [--check]   (--check: exit 1 if a file here differs from what would be written)
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BASE_MS = 1706781600000  # 2024-02-01 10:00:00 UTC
MIN = 60 * 1000


def ts_text(ms):
    """TIMESTAMP(3) text as Flink's JSON format reads it: 'yyyy-MM-dd HH:mm:ss.SSS' (UTC)."""
    s, milli = divmod(ms, 1000)
    d, rem = divmod(s, 86400)
    h, rem = divmod(rem, 3600)
    mi, se = divmod(rem, 60)
    # days since 1970-01-01 to a civil date (Howard Hinnant's algorithm)
    z = d + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    y += month <= 2
    return "%04d-%02d-%02d %02d:%02d:%02d.%03d" % (y, month, day, h, mi, se, milli)


def envelope(op, before, after, ts_ms, lsn):
    return {
        "schema": {"type": "struct", "name": "dbserver1.public.orders.Envelope",
                   "optional": False},
        "payload": {
            "before": before, "after": after,
            "source": {"version": "2.5.0.Final", "connector": "postgresql",
                       "name": "dbserver1", "db": "shop", "schema": "public",
                       "table": "orders", "lsn": lsn},
            "op": op, "ts_ms": ts_ms, "transaction": None,
        },
    }


def money(rng, lo, hi):
    return round(rng.randint(lo * 100, hi * 100) / 100.0, 2)


def gen_orders_cdc(rng):
    """Returns the change events in arrival order (dicts)."""
    events = []  # (ts_ms, op, before, after)
    next_id = 1001
    # snapshot: three orders placed the day before, read when the connector starts
    for cust in (1, 2, 3):
        row = {"id": next_id, "customer_id": cust, "product_id": rng.randint(101, 106),
               "quantity": rng.randint(1, 3), "total": money(rng, 20, 300),
               "status": "paid",
               "created_at": ts_text(BASE_MS - rng.randint(60, 600) * MIN)}
        next_id += 1
        events.append((BASE_MS + rng.randint(0, 400), "r", None, row))
    # live orders: each customer visits a few times and orders in bursts
    for cust in range(1, 7):
        t = BASE_MS + rng.randint(0, 20) * MIN
        for _visit in range(rng.randint(2, 4)):
            for _ in range(rng.randint(1, 4)):
                t += rng.randint(30, 6 * 60) * 1000 + rng.randint(0, 999)
                row = {"id": next_id, "customer_id": cust,
                       "product_id": rng.randint(101, 106),
                       "quantity": rng.randint(1, 5), "total": money(rng, 10, 500),
                       "status": "pending", "created_at": ts_text(t)}
                next_id += 1
                events.append((t + rng.randint(5, 900), "c", None, row))
                if rng.random() < 0.2:  # paid a few minutes later: an update event
                    paid = dict(row, status="paid")
                    events.append((t + rng.randint(2, 12) * MIN, "u", row, paid))
            # the gap to the next visit: below 30 min merges sessions, above splits them
            t += rng.choice([12, 20, 26, 35, 45, 70]) * MIN
    # customer 7 orders twice, exactly 30 minutes apart: the sessions touch and merge
    for t in (BASE_MS + 40 * MIN, BASE_MS + 70 * MIN):
        row = {"id": next_id, "customer_id": 7, "product_id": 103, "quantity": 1,
               "total": 39.99, "status": "pending", "created_at": ts_text(t - 250)}
        next_id += 1
        events.append((t, "c", None, row))
    events.sort(key=lambda e: e[0])

    # arrival order: jitter of up to 3 s, then a few events held back 40 s to 4 min
    keyed = [(e[0] + rng.randint(0, 3000), i, e) for i, e in enumerate(events)]
    late = set(rng.sample(range(10, len(events) - 10), 6))
    keyed = [(k + (rng.randint(40, 240) * 1000 if i in late else 0), i, e)
             for (k, i, e) in keyed]
    # and one held back 40 minutes (a connector restart): late even for 30-minute sessions
    # (an order whose customer orders nothing in the next 70 minutes, so no open session
    # can take it in)
    def alone(i):
        ts, cust = events[i][0], events[i][3]["customer_id"]
        return not any(e[3]["customer_id"] == cust and ts < e[0] <= ts + 70 * MIN
                       for e in events)
    restart = rng.choice([i for i in range(len(events) // 4, len(events) // 2)
                          if i not in late and events[i][1] == "c" and alone(i)])
    keyed = [(k + (40 * MIN if i == restart else 0), i, e) for (k, i, e) in keyed]
    keyed.sort()
    arrival = [e for (_, _, e) in keyed]

    # boundary pairs: just before the first event that takes the running maximum past
    # E + 5 s - 1 ms, an order at E + 5 s - 1 ms - d sets the watermark to E - 1 ms - d and an
    # order at E - 1 ms (in the window ending at E) follows; d = 0: late, d = 1 ms: on time
    for hour, d in ((11, 0), (12, 1)):
        edge = BASE_MS + (hour - 10) * 60 * MIN
        mx = 0
        for p, e in enumerate(arrival):
            if max(mx, e[0]) >= edge + 4999:
                break
            mx = max(mx, e[0])
        for ts in (edge + 4999 - d, edge - 1):
            row = {"id": next_id, "customer_id": rng.randint(1, 6),
                   "product_id": rng.randint(101, 106), "quantity": 1,
                   "total": money(rng, 10, 500), "status": "pending",
                   "created_at": ts_text(ts - rng.randint(5, 900))}
            next_id += 1
            arrival.insert(p, (ts, "c", None, row))
            p += 1

    # redeliveries: three events appear a second time a few positions later
    for _ in range(3):
        i = rng.randrange(5, len(arrival) - 5)
        arrival.insert(i + rng.randint(1, 4), arrival[i])

    # deletes: two cancelled orders; ts_ms stays at or below the running maximum
    out, mx, lsn = [], 0, 24000000
    deletes = set(rng.sample(range(20, len(arrival)), 2))
    for i, (ts, op, before, after) in enumerate(arrival):
        if i in deletes:
            victim = next(a for (_, o, _, a) in reversed(arrival[:i]) if o == "c")
            out.append(envelope("d", victim, None, mx - rng.randint(0, 500), lsn))
            lsn += 8
        mx = max(mx, ts)
        out.append(envelope(op, before, after, ts, lsn))
        lsn += 8
    return out


PRODUCTS = [  # product_id, name, category, first price
    (101, "Widget", "tools", 100.00),
    (102, "Gadget", "tools", 45.50),
    (103, "Kettle", "kitchen", 39.99),
    (104, "Teapot", "kitchen", 24.00),
    (105, "Lamp", "home", 59.00),
]


def gen_temporal(rng):
    """Product versions (time ordered) and orders that reference them."""
    versions = []
    # 101 is the lesson's own example: Widget 100.00 at 09:00, 120.00 at 10:00, Widget Pro
    # 150.00 at 11:00
    versions.append((BASE_MS - 60 * MIN, 101, "Widget", "tools", 100.00))
    versions.append((BASE_MS, 101, "Widget", "tools", 120.00))
    versions.append((BASE_MS + 60 * MIN, 101, "Widget Pro", "tools", 150.00))
    for pid, name, cat, price in PRODUCTS[1:]:
        t = BASE_MS - 60 * MIN if pid != 105 else BASE_MS + 50 * MIN  # 105 appears late
        versions.append((t, pid, name, cat, price))
        for _ in range(rng.randint(1, 3)):
            t += rng.randint(20, 60) * MIN
            price = round(price * rng.choice([0.9, 1.1, 1.2, 1.25]), 2)
            versions.append((t, pid, name, cat, price))
    versions.sort()
    products = [{"product_id": pid, "product_name": name, "price": price, "category": cat,
                 "update_time": ts_text(t)} for (t, pid, name, cat, price) in versions]
    orders, t = [], BASE_MS
    for oid in range(1, 41):
        t += rng.randint(1, 5) * MIN + rng.randint(0, 59999)
        pid = 106 if oid in (7, 29) else rng.randint(101, 105)  # 106: no such product
        orders.append({"order_id": oid, "customer_id": rng.randint(1, 6), "product_id": pid,
                       "quantity": rng.randint(1, 4), "order_time": t})
    # the first order from 11:00 on becomes a Widget order at exactly 11:00:00.000, the time
    # of the Widget Pro version: the lookup is inclusive (version time <= order time)
    edge = next(o for o in orders if o["order_time"] >= BASE_MS + 60 * MIN)
    edge.update(product_id=101, order_time=BASE_MS + 60 * MIN)
    for o in orders:
        o["order_time"] = ts_text(o["order_time"])
    return products, orders


def gen_clicks(rng):
    clicks, t = [], BASE_MS
    urls = ["/", "/cart", "/checkout", "/product/101", "/product/102", "/product/103",
            "/search?q=kettle", "/account"]
    for n in range(1, 61):
        t += rng.randint(1, 20) * 1000 + rng.randint(0, 999)
        clicks.append({"click_id": "c%03d" % n, "user_id": rng.randint(1, 5),
                       "url": rng.choice(urls), "ts": ts_text(t)})
    out = list(clicks)
    # at-least-once delivery: 15 clicks arrive again, 1 to 12 positions after the original
    for c in rng.sample(clicks, 15):
        i = out.index(c)
        out.insert(min(len(out), i + rng.randint(1, 12)), dict(c))
    return out


def render():
    rng = random.Random(20240201)
    files = {}
    files["orders_cdc.jsonl"] = gen_orders_cdc(rng)
    files["products.jsonl"], files["orders.jsonl"] = gen_temporal(rng)
    files["clicks.jsonl"] = gen_clicks(rng)
    return {name: "".join(json.dumps(r) + "\n" for r in rows) for name, rows in files.items()}


def main():
    check = sys.argv[1:] == ["--check"]
    bad = 0
    for name, text in render().items():
        path = os.path.join(HERE, name)
        if check:
            try:
                same = open(path).read() == text
            except OSError:
                same = False
            if not same:
                print("gen.py: %s differs from what gen.py writes" % name, file=sys.stderr)
                bad = 1
        else:
            with open(path, "w") as f:
                f.write(text)
    return bad


if __name__ == "__main__":
    sys.exit(main())
