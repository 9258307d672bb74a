-- LISTAGG(expr [, separator]) as Flink's: the non-NULL values of a group joined in arrival
-- order (',' by default, or a string literal), NULL for a group of none. In the updating
-- GROUP BY every change re-emits the whole list (-U/+U); over a changelog a retraction
-- removes one occurrence of the value, the earliest, as Flink's
-- ListAggWithRetractAggFunction does (tag 'x' of id 3 becomes 'y': the first 'x' goes, the
-- list is z,x then z,x,y), and the last value of a key leaving empties it (-D). In window
-- aggregations a window's values in arrival order (bob's 00:00:06 row arrives before ann's
-- 00:00:05), but a HOP window joins its slices newest first, as Flink's HoppingSlicesIterable
-- walks them ([0 s, 10 s) of ann is home@5 s, then home@1 s, shop@3 s), while CUMULATE and
-- SESSION windows keep time order. The rows of one key come from one file split through one
-- exchange channel, so the arrival order per key is the same on 1, 2 and 3 shards.
CREATE TABLE clicks (
  u STRING,
  page STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/clicks.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

CREATE TABLE tags (
  id INT,
  k STRING,
  tag STRING
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/tags_dbz.jsonl',
        'format' = 'debezium-json');

SELECT u, LISTAGG(page) AS pages, LISTAGG(UPPER(page), ' > ') AS trail, COUNT(*) AS n
FROM clicks GROUP BY u;

SELECT k, LISTAGG(tag) AS tags, LISTAGG(tag, '') AS joined FROM tags GROUP BY k;

SELECT u, window_start, window_end, LISTAGG(page, '|') AS pages
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY u, window_start, window_end;

SELECT window_start, window_end, LISTAGG(u || ':' || page) AS visits
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
WHERE u = 'ann'
GROUP BY window_start, window_end;

SELECT window_start, window_end, LISTAGG(page) AS pages
FROM TABLE(CUMULATE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))
WHERE u = 'ann'
GROUP BY window_start, window_end;

SELECT u, window_start, window_end, LISTAGG(page) AS pages
FROM TABLE(SESSION(TABLE clicks PARTITION BY u, DESCRIPTOR(ts), INTERVAL '3' SECOND))
GROUP BY u, window_start, window_end;
