CREATE TABLE t (k STRING, v INT)
  WITH ('connector' = 'kafak', 'topic' = 't', 'format' = 'json');
SELECT k FROM t;
