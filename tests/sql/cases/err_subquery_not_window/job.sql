-- flink-oracle: differs Flink runs an IN subquery not correlated on both window bounds as a regular semi join;
-- flink-oracle: differs sluice runs IN / EXISTS subqueries as window semi and anti joins only
-- flink-oracle: skip
CREATE TABLE t (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
CREATE VIEW w AS SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND));
-- IN correlated on window_start alone: not a window semi join
SELECT a.k FROM w a
WHERE a.k IN (SELECT b.k FROM w b WHERE a.window_start = b.window_start);
