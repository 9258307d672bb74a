-- UNION ALL of two tables; the right side is computed
CREATE TABLE t1 (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '@DIR@/t1.jsonl', 'format' = 'json');
CREATE TABLE t2 (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '@DIR@/t2.jsonl', 'format' = 'json');

SELECT k, v FROM t1
UNION ALL
SELECT UPPER(k), v * 10 FROM t2;
