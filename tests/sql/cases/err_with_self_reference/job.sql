-- a WITH query cannot read itself (no WITH RECURSIVE): in its own body the name is an
-- earlier WITH query, a table or a view, and here there is none, as Flink says ("Object
-- 'totals' not found")
CREATE TABLE t (k STRING, v INT)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
WITH base AS (SELECT k, v FROM t),
     totals AS (SELECT k, SUM(v) AS s FROM totals GROUP BY k)
SELECT * FROM totals;
