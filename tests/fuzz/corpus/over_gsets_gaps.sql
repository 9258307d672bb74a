-- OVER without PARTITION BY, with expression arguments and keys, on processing time, and
-- GROUPING SETS / ROLLUP / CUBE over window TVFs: the planner paths of these shapes
CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 't.jsonl', 'format' = 'json');
SELECT k, SUM(v * 2) OVER (ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM t;
SELECT k, MAX(v + 1) OVER w, COUNT(*) OVER w FROM t
WINDOW w AS (PARTITION BY UPPER(k) ORDER BY ts RANGE BETWEEN INTERVAL '3' SECOND PRECEDING
             AND CURRENT ROW);
SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY pt ROWS BETWEEN 1 PRECEDING AND CURRENT ROW),
  AVG(v) OVER (PARTITION BY k ORDER BY pt ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t;
SELECT k, COUNT(*) OVER (ORDER BY pt RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND
  CURRENT ROW) FROM t;
SELECT window_start, window_end, k, SUM(v), GROUPING(k)
FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, GROUPING SETS ((k), ());
SELECT window_start, window_end, k, v, COUNT(*)
FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
GROUP BY window_start, window_end, CUBE (k, v);
SELECT window_start, window_end, k, MIN(v)
FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
GROUP BY window_start, window_end, ROLLUP (k);
SELECT window_start, k, COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY GROUPING SETS ((window_start, k), (k));
