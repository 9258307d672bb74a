-- the separator of LISTAGG is a string literal (Flink: "Argument to function 'LISTAGG' must
-- be a literal"), not a column
CREATE TABLE t (k STRING, v STRING, sep STRING)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT k, LISTAGG(v, sep) FROM t GROUP BY k;
