-- WITH, VALUES with rows, FROM alias column lists, LISTAGG and CURRENT_WATERMARK: the
-- parse paths of common table expressions and row lists, for the mutants
CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 't.jsonl', 'format' = 'json');
CREATE TABLE o (k STRING, v INT) WITH ('connector' = 'print');
WITH a (x, y) AS (SELECT k, v FROM t), b AS (SELECT x, y + 1 AS z FROM a WHERE y > 0)
SELECT a.x, b.z FROM a JOIN b ON a.x = b.x;
SELECT * FROM (WITH c AS (SELECT 1 AS n) SELECT n FROM c) AS s (m);
INSERT INTO o WITH w AS (SELECT k, v FROM t) SELECT * FROM w;
INSERT INTO o VALUES ('a', 1), ('b', 2);
INSERT INTO o (v, k) VALUES (3, 'c');
SELECT * FROM (VALUES (1, 'a'), (2.5, 'bcd'), ROW(3, CAST(NULL AS STRING))) AS r (n, s);
VALUES 1, 2 + 3 UNION ALL VALUES (4);
SELECT k, LISTAGG(k), LISTAGG(k, ' | ') FILTER (WHERE v > 1) FROM t GROUP BY k;
SELECT k FROM t WHERE ts > CURRENT_WATERMARK(ts) OR CURRENT_WATERMARK(ts) IS NULL;
SELECT * FROM t WHERE v IN (WITH q AS (SELECT 1 AS v) SELECT v FROM q);
