-- SUM(DISTINCT) over HOP windows: each window sums its distinct values once, across the
-- slices it merges (a's 3.5 at 00:00:01, :02, :05 and :06 is summed once in every window
-- holding them; a's amount 2 likewise).
-- flink-oracle: differs Flink 2.3 plans SUM(DISTINCT) in a HOP window aggregation and then fails at run time ("This function does not support retraction, Please choose SumWithRetractAggFunction"); sluice sums each window's distinct values
-- flink-oracle: skip
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

SELECT k, window_start, window_end, SUM(DISTINCT price) AS sp, SUM(DISTINCT amount) AS sa,
  SUM(DISTINCT total) AS st
FROM TABLE(HOP(TABLE pay, DESCRIPTOR(ts), INTERVAL '4' SECOND, INTERVAL '8' SECOND))
GROUP BY k, window_start, window_end;
