-- An OVER window on a stream is ordered by a time attribute (as in Flink): event time (a
-- column with a WATERMARK) or processing time (PROCTIME()); a plain column is refused.
CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), pt AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT k, SUM(v) OVER (ORDER BY v ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t;
