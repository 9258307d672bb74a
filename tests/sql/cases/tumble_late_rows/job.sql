-- legacy GROUP BY TUMBLE with out-of-order rows; the u2 row at 00:00:08 arrives after the
-- watermark (13 s - 2 s = 11 s) passed its window's end and is dropped as late
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

SELECT user_id,
       TUMBLE_START(ts, INTERVAL '10' SECOND) AS ws,
       TUMBLE_END(ts, INTERVAL '10' SECOND) AS we,
       COUNT(*) AS cnt
FROM clicks
GROUP BY user_id, TUMBLE(ts, INTERVAL '10' SECOND);
