-- keep-first deduplication on event time with a late row: row 2 (00:00:02) arrives behind
-- the watermark (10 s - 5 s) and, being earlier than row 1, replaces it (-U/+U)
-- flink-oracle: known-disagreement Flink 2.3's keep-first (RowTimeDeduplicateKeepFirstRowFunction)
-- flink-oracle: known-disagreement drops rows behind the watermark and emits a key's first row only
-- flink-oracle: known-disagreement when the watermark passes it (insert-only): its result is 1, 3
CREATE TABLE events (
  id INT,
  usr STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/events.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

SELECT id, usr
FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY usr ORDER BY ts ASC) AS rn FROM events)
WHERE rn = 1;
