-- flink-oracle: differs Flink runs an EXISTS under OR as a join and an aggregation; sluice runs IN / EXISTS
-- flink-oracle: differs subqueries as window semi and anti joins only (a WHERE condition of their own)
-- flink-oracle: skip
CREATE TABLE t (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
CREATE VIEW w AS SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND));
-- EXISTS under OR: no window semi join can say it
SELECT a.k FROM w a
WHERE a.v > 5 OR EXISTS (SELECT * FROM w b WHERE a.window_start = b.window_start
                                            AND a.window_end = b.window_end);
