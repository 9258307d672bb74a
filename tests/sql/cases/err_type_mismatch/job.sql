CREATE TABLE t (k STRING, v INT)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT k FROM t WHERE v AND k = 'a';
