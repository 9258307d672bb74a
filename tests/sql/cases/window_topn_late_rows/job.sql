-- SET 'sluice.late-data.table' with a window Top-N: row h (00:00:04), late for its window
-- [0 s, 10 s) (the watermark is at 11 s when it arrives), goes to table late_rows with the
-- window it missed, as a window aggregation's late rows do (late_data_table); Flink SQL only
-- counts it. The Top-N's own rows are Flink's.
-- flink-oracle: differs the late-row table is a sluice extension; Flink ignores the SET
-- flink-oracle: sluice-only-rows ^\+I\[window top-n,
SET 'sluice.late-data.table' = 'late_rows';

CREATE TABLE bids (
  item STRING,
  supplier STRING,
  price INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/bids.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

CREATE TABLE late_rows (
  operator STRING,
  event_time TIMESTAMP(3),
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  reason STRING,
  `row` STRING
) WITH ('connector' = 'print');

SELECT item, price, window_start, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rn
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)))
WHERE rn <= 2;
