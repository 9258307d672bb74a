-- Window deduplication (Flink's WindowDeduplicate, run by its window rank operator):
-- ROW_NUMBER() ordered by the rowtime and kept at 1 gives the first (ASC) or the last (DESC)
-- row of each user in each window, once, when the watermark passes the window's end. Of
-- rows that share the latest rowtime the last to arrive is the last row (ids 4 and 5 at
-- 00:00:08: 5; ids 7 and 10 at 00:00:13: 10). Row 8 (00:00:01) arrives when the watermark
-- (13 s - 2 s) has passed [0 s, 10 s): late, in no window, as in Flink.
CREATE TABLE clicks (
  id INT,
  usr STRING,
  url STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/clicks.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

-- the first click of each user in each window
SELECT id, usr, url, ts, window_start, window_end FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, usr ORDER BY ts ASC) AS rn
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)))
WHERE rn = 1;

-- the last one
SELECT id, usr, url, ts, window_start, window_end FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, usr ORDER BY ts DESC) AS rn
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)))
WHERE rn <= 1;

-- the last row to arrive in each window: every row of a window ties on window_time
SELECT id, usr, window_start, window_end FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY window_time DESC) AS rn
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)))
WHERE rn < 2;

-- the rank shown changes nothing (Flink makes it the constant 1); kept at 2 it is a window
-- Top-N, whose ties go in arrival order: ids 4 then 5
SELECT id, usr, ts, window_start, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, usr ORDER BY ts DESC) AS rn
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)))
WHERE rn = 1;

SELECT id, usr, ts, window_start, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, usr ORDER BY ts DESC) AS rn
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)))
WHERE rn <= 2;
