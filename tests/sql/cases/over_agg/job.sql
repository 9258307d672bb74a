-- OVER aggregations (Flink's row-time OVER functions): one output row per input row, with
-- the aggregates over its frame in event-time order. Rows wait until the watermark passes
-- their rowtime; h (00:00:02) arrives after the watermark reached 00:00:05 (06 s - 1 s)
-- and is late: dropped, as Flink drops it. c and d share a rowtime: peers in a RANGE
-- frame (one result), taken in arrival order in a ROWS frame. k repeats i's rowtime.
CREATE TABLE bids (
  item STRING,
  supplier STRING,
  price INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/bids.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

-- the two previous rows and this one, per supplier
SELECT item, supplier, price,
  SUM(price) OVER w3 AS s3, COUNT(*) OVER w3 AS n3, MAX(price) OVER w3 AS m3
FROM bids
WINDOW w3 AS (PARTITION BY supplier ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);

-- everything in the last 3 seconds, peers included
SELECT item, supplier,
  SUM(price) OVER (PARTITION BY supplier ORDER BY ts
                   RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW) AS s,
  MIN(price) OVER (PARTITION BY supplier ORDER BY ts
                   RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW) AS lo,
  AVG(price) OVER (PARTITION BY supplier ORDER BY ts
                   RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW) AS av
FROM bids;

-- running totals: ROWS and RANGE unbounded, and the default frame (RANGE UNBOUNDED)
SELECT item, supplier,
  SUM(price) OVER (PARTITION BY supplier ORDER BY ts
                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS run_rows
FROM bids;

SELECT item, price - AVG(price) OVER (PARTITION BY supplier ORDER BY ts) AS diff,
  COUNT(item) OVER (PARTITION BY supplier ORDER BY ts) AS cnt
FROM bids WHERE price > 1;
