-- GROUPING SETS over a SESSION window TVF are refused: sluice keys sessions by the GROUP BY
-- keys, and those differ per grouping set.
-- flink-oracle: differs Flink runs it: sessions per PARTITION BY key, then every grouping set over each session's bounds
-- flink-oracle: skip
CREATE TABLE sales (region STRING, qty INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/sales.jsonl', 'format' = 'json');
SELECT window_start, window_end, region, SUM(qty) AS total
FROM TABLE(SESSION(TABLE sales PARTITION BY region, DESCRIPTOR(ts), INTERVAL '2' SECOND))
GROUP BY window_start, window_end, GROUPING SETS ((region), ());
