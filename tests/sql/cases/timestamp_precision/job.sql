-- TIMESTAMP(p) values print with p fraction digits, as Flink's CAST(... AS STRING) and its
-- print connector write them: none for TIMESTAMP(0), zeros past the milliseconds for
-- TIMESTAMP(6) (a DDL TIMESTAMP is TIMESTAMP(6)); CAST to p < 3 zeroes the digits past p, so
-- the truncated value groups and compares as such. A literal's precision is the digits it
-- spells; MIN keeps its input's precision, a window's bounds stay TIMESTAMP(3).
CREATE TABLE events (
  id INT,
  ts TIMESTAMP(3),
  t6 TIMESTAMP,
  k STRING,
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/events.jsonl', 'format' = 'json');

SELECT id, ts, t6, CAST(ts AS TIMESTAMP(0)) AS t0, CAST(ts AS TIMESTAMP(1)) AS t1,
       CAST(ts AS TIMESTAMP(6)) AS t6b, CAST(CAST(ts AS TIMESTAMP(0)) AS TIMESTAMP(3)) AS t03,
       CAST(ts AS TIMESTAMP_LTZ(0)) AS l0, CAST(CAST(ts AS TIMESTAMP(2)) AS STRING) AS s2,
       TIMESTAMP '2024-01-01 00:00:00' AS lit0, TIMESTAMP '2024-01-01 00:00:00.12' AS lit2,
       CASE WHEN id > 2 THEN CAST(ts AS TIMESTAMP(0)) ELSE CAST(ts AS TIMESTAMP(1)) END AS c1,
       CAST(ts AS TIMESTAMP(0)) + INTERVAL '1' SECOND AS t0p
FROM events;

SELECT CAST(ts AS TIMESTAMP(0)) AS sec, COUNT(*) AS n, MIN(CAST(ts AS TIMESTAMP(1))) AS first1
FROM events GROUP BY CAST(ts AS TIMESTAMP(0));

SELECT window_start, window_end, k, MAX(CAST(ts AS TIMESTAMP(0))) AS last0, COUNT(*) AS n
FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, k;
