CREATE TABLE t (k STRING, v INT)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
CREATE TABLE out_t (k STRING, n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '@OUT@/sink', 'format' = 'json');
INSERT INTO out_t SELECT k, COUNT(*) FROM t GROUP BY k;
