-- flink-oracle: differs Flink runs it: one session stream over all users' rows, then a
-- flink-oracle: differs non-window GROUP BY user_id; sluice keys sessions by GROUP BY, so it refuses
-- flink-oracle: skip
CREATE TABLE clicks (user_id STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/clicks.jsonl', 'format' = 'json');
SELECT user_id, window_start, window_end, COUNT(*) AS cnt
FROM TABLE(SESSION(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY user_id, window_start, window_end;
