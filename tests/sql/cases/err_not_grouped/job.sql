-- a column neither grouped nor aggregated is refused as such (not as an unknown column)
CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT k, UPPER(k), v + 1, COUNT(*) FROM t
GROUP BY k;
