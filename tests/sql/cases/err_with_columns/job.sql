-- a WITH query's column list must name as many columns as its query has (Flink: "Number of
-- columns must match number of query columns"); the error points at the name
CREATE TABLE t (k STRING, v INT)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
WITH ok (a, b) AS (SELECT k, v FROM t),
     bad (a, b, c) AS (SELECT a, b FROM ok)
SELECT * FROM bad;
