-- legacy SESSION windows with a 5 s gap; u2's sessions [1 s, 6 s) and [6 s, 11 s) touch
-- and merge into one
CREATE TABLE clicks (
  user_id STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH (
  'connector' = 'filesystem',
  'path' = '@DIR@/clicks.jsonl',
  'format' = 'json',
  'scan.watermark.emit.strategy' = 'on-event'
);

SELECT user_id,
       SESSION_START(ts, INTERVAL '5' SECOND) AS s,
       SESSION_END(ts, INTERVAL '5' SECOND) AS e,
       COUNT(*) AS cnt
FROM clicks
GROUP BY SESSION(ts, INTERVAL '5' SECOND), user_id;

-- the same sessions through the SESSION window TVF, per user as PARTITION BY says (without
-- it, one session stream runs over all users' rows)
SELECT user_id, window_start, window_end, COUNT(*) AS cnt
FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY user_id, window_start, window_end;
