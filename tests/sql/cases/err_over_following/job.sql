-- OVER windows end at the current row (Flink supports no FOLLOWING either)
CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts
                       ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING)
FROM t;
