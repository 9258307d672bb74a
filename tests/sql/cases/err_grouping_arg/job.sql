-- GROUPING() takes grouping expressions of the GROUP BY
CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT k, GROUPING(v), COUNT(*) FROM t
GROUP BY ROLLUP (k);
