-- SET 'sluice.late-data.table': the late u2 row goes to table late_rows with its reason
-- (Flink SQL would only count it), next to the windows' results
-- flink-oracle: differs the late-row table is a sluice extension; Flink ignores the SET
-- flink-oracle: sluice-only-rows ^\+I\[tumble window,
SET 'sluice.late-data.table' = 'late_rows';

CREATE TABLE clicks (
  user_id STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '@DIR@/clicks.jsonl',
  'format' = 'json',
  'scan.watermark.emit.strategy' = 'on-event'
);

CREATE TABLE late_rows (
  operator STRING,
  event_time TIMESTAMP(3),
  `watermark` TIMESTAMP(3),  -- a reserved word in Flink SQL
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  `row` STRING
) WITH ('connector' = 'print');

SELECT user_id, TUMBLE_END(ts, INTERVAL '10' SECOND) AS we, COUNT(*) AS cnt
FROM clicks
GROUP BY user_id, TUMBLE(ts, INTERVAL '10' SECOND);
