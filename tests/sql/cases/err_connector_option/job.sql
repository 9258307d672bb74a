CREATE TABLE t (k STRING, v INT)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json',
        'scan.bogus' = 'x');
SELECT k FROM t;
