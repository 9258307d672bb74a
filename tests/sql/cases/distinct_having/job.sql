-- SELECT DISTINCT (each distinct row once) and an updating GROUP BY with HAVING over a
-- subquery: a group appears once its sum passes 2, and is retracted/updated as it changes
CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');

SELECT DISTINCT k, v FROM t;

SELECT k, s FROM (SELECT k, SUM(v) AS s, COUNT(*) AS n FROM t GROUP BY k) AS g
WHERE n > 1;

SELECT k, SUM(v) AS s FROM t GROUP BY k HAVING MAX(v) >= 3;

SELECT k, COUNT(*) AS n, COUNT(*) FILTER (WHERE v > 1) AS big, SUM(v) FILTER (WHERE v < 3) AS small
FROM t GROUP BY k HAVING COUNT(*) >= 2;
