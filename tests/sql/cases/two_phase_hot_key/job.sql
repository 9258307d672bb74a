-- two-stage aggregation with a hot key: 80 % of the rows are one user's. On 2 and 3 shards
-- each sending shard pre-aggregates per key and slice and the owner merges the partials;
-- the rows must be the 1-shard (one-phase) run's, and the late rows (one in 97, 9 s behind)
-- must be dropped from exactly the windows that fired before they came (re-fires within an
-- allowed lateness: tests/property/window_sqlite_test.c)
SET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';

CREATE TABLE clicks (
  user_id STRING,
  ts TIMESTAMP(3),
  amount INT,
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '@DIR@/clicks.jsonl',
  'format' = 'json',
  'scan.watermark.emit.strategy' = 'on-event'
);

SELECT user_id, window_start, window_end, COUNT(*) AS cnt, SUM(amount) AS total,
       MIN(amount) AS lo, MAX(amount) AS hi, AVG(amount) AS mean
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
GROUP BY user_id, window_start, window_end;
