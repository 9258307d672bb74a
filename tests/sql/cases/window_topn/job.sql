-- Window Top-N (Flink's WindowRankOperator): a ranking partitioned by window_start and
-- window_end of a window TVF or of a window aggregation emits each window's result once,
-- insert-only, when the watermark passes the window's end. Row h (00:00:04) arrives after
-- the watermark (12 s - 1 s) passed the end of [0 s, 10 s): late, in no window (Flink drops
-- it too). Ties (k and l, both 3 in [20 s, 30 s)) go in arrival order.
CREATE TABLE bids (
  item STRING,
  supplier STRING,
  price INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/bids.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

-- the two dearest items of each tumbling window, with their row number
SELECT item, price, window_start, window_end, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rn
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)))
WHERE rn <= 2;

-- the cheapest item of each supplier in each hopping window, without the rank
SELECT supplier, item, price, window_start, window_end FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, supplier
                               ORDER BY price ASC, item ASC) AS rn
  FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)))
WHERE rn = 1;

-- ranks 2 and 3 of each cumulating window (step 10 s, max 20 s)
SELECT item, price, window_start, window_end, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rn
  FROM TABLE(CUMULATE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '20' SECOND)))
WHERE rn BETWEEN 2 AND 3;

-- Top-N over a window aggregation: the supplier with the highest total in each window
-- (Nexmark q5's shape), window bounds renamed on the way
SELECT ws, we, supplier, total, cnt, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY ws, we ORDER BY total DESC) AS rn
  FROM (SELECT window_start AS ws, window_end AS we, supplier, SUM(price) AS total,
               COUNT(*) AS cnt
        FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
        GROUP BY window_start, window_end, supplier))
WHERE rn <= 1;
