-- STDDEV over DECIMAL: Flink computes it in DECIMAL(38, 6), beyond the 18 digits a sluice
-- slot holds, so sluice refuses it (Flink runs it; CAST the argument to DOUBLE instead)
-- flink-oracle: differs sluice refuses STDDEV and VAR over DECIMAL, Flink computes them in DECIMAL(38, 6)
-- flink-oracle: skip
CREATE TABLE t (k STRING, m DECIMAL(10, 2))
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT k, STDDEV_POP(m) FROM t GROUP BY k;
