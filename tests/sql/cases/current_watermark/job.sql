-- CURRENT_WATERMARK(rowtime) as Flink's: the watermark of the operator evaluating the row,
-- NULL before its first, typed as the rowtime column (TIMESTAMP(3), TIMESTAMP_LTZ(3)); its
-- typical use drops late rows (ts > CURRENT_WATERMARK(ts) OR ... IS NULL). The answer is
-- deterministic here: watermarks are emitted on every event (with periodic ones it depends
-- on when the period ends, in Flink as in sluice), and the filter runs chained to the
-- file's one split, so it sees that split's watermark after each earlier row, on 1, 2 or 3
-- shards alike (after an exchange it would be the least over the input channels, which
-- depends on timing, in Flink too). Row 4 (00:00:03) meets a watermark of 00:00:03 and is
-- late, as are rows 6 and 8.
CREATE TABLE events (
  id INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/events.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

CREATE TABLE ltz_events (
  id INT,
  ts TIMESTAMP(3),
  lts AS CAST(ts AS TIMESTAMP_LTZ(3)),
  WATERMARK FOR lts AS lts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/events.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

SELECT id, ts, CURRENT_WATERMARK(ts) AS wm FROM events;

SELECT id, ts FROM events WHERE ts > CURRENT_WATERMARK(ts) OR CURRENT_WATERMARK(ts) IS NULL;

SELECT id, CURRENT_WATERMARK(lts) AS wm FROM ltz_events WHERE id > 7;
