-- deduplication keeping the first row per user on event time: row 3 is earlier than row 1,
-- so it replaces it (-U/+U), as Flink's rowtime keep-first does
CREATE TABLE events (
  id INT,
  usr STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/events.jsonl', 'format' = 'json');

SELECT id, usr
FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY usr ORDER BY ts ASC) AS rn FROM events)
WHERE rn = 1;
