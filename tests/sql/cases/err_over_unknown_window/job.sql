-- OVER w names a window the query's WINDOW clause must define
CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT k, SUM(v) OVER w1 FROM t
WINDOW w AS (PARTITION BY k ORDER BY ts);
