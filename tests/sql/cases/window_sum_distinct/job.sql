-- SUM/AVG(DISTINCT) in window aggregations: each window's distinct values, also where a
-- HOP window merges slices that share values (the 3.5 of 00:00:02 and of 00:00:06 count
-- once in the window holding both) and where sessions merge. SUM(DISTINCT) over HOP is
-- window_hop_sum_distinct (Flink fails on it).
CREATE TABLE pay (
  k STRING,
  amount INT,
  price DOUBLE,
  total DECIMAL(8, 2),
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH (
  'connector' = 'filesystem',
  'path' = '@DIR@/pay.jsonl',
  'format' = 'json',
  'scan.watermark.emit.strategy' = 'on-event'
);

SELECT k, window_start, window_end, SUM(DISTINCT amount) AS sa, AVG(DISTINCT price) AS ap,
  SUM(DISTINCT total) AS st, COUNT(*) AS n
FROM TABLE(TUMBLE(TABLE pay, DESCRIPTOR(ts), INTERVAL '4' SECOND))
GROUP BY k, window_start, window_end;

SELECT k, window_start, window_end, AVG(DISTINCT price) AS ap, AVG(DISTINCT amount) AS aa
FROM TABLE(HOP(TABLE pay, DESCRIPTOR(ts), INTERVAL '4' SECOND, INTERVAL '8' SECOND))
GROUP BY k, window_start, window_end;

SELECT k, window_start, window_end, SUM(DISTINCT amount) AS sa, AVG(DISTINCT total) AS avg_total
FROM TABLE(SESSION(TABLE pay PARTITION BY k, DESCRIPTOR(ts), INTERVAL '3' SECOND))
GROUP BY k, window_start, window_end;
