-- LISTAGG joins strings: an INT is refused (Flink: "Cannot apply 'LISTAGG' to arguments of
-- type 'LISTAGG(<INTEGER>)'"), and the message says to CAST it
CREATE TABLE t (k STRING, n INT)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT k, LISTAGG(n) FROM t GROUP BY k;
