CREATE TABLE t (k STRING, v INT)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT k v w FROM t;
