CREATE TABLE t (k STRING, v INT)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT k,
       vv + 1 FROM t;
