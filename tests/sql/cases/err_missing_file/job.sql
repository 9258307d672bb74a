CREATE TABLE t (k STRING, v INT)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/no-such-file.jsonl', 'format' = 'json');
SELECT k FROM t;
