-- flink-oracle: differs Flink runs an IN subquery in the SELECT list as a join and an aggregation; sluice runs
-- flink-oracle: differs IN / EXISTS subqueries as window semi and anti joins only (a WHERE condition)
-- flink-oracle: skip
CREATE TABLE t (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
CREATE VIEW w AS SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND));
-- IN (SELECT ...) as a value
SELECT a.k, a.k IN (SELECT b.k FROM w b) AS seen FROM w a;
