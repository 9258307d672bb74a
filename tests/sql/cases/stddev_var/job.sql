-- STDDEV_POP, STDDEV_SAMP, STDDEV, VAR_POP, VAR_SAMP and VARIANCE as Flink 2.3 computes them:
-- its planner reduces them to a Welford M2 aggregate and COUNT (M2 / COUNT, M2 / (COUNT - 1)
-- with NULL for one value, POWER(..., 0.5)), cast to the argument's type, so the doubles
-- agree to the last digit and the INT ones are truncated. In the updating GROUP BY (append
-- and changelog input: M2 retracts), with FILTER (WHERE ...), and in TUMBLE and HOP windows.
CREATE TABLE t (
  k STRING,
  i INT,
  d DOUBLE,
  m DECIMAL(10, 2),
  s STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/events.jsonl', 'format' = 'json');

CREATE TABLE readings (
  id INT,
  room STRING,
  temp DOUBLE,
  n BIGINT
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/readings_dbz.jsonl',
        'format' = 'debezium-json');

SELECT k, STDDEV_POP(d), STDDEV_SAMP(d), STDDEV(d), VAR_POP(d), VAR_SAMP(d), VARIANCE(d)
FROM t GROUP BY k;

SELECT k, STDDEV_POP(i), STDDEV_SAMP(i), VAR_POP(i), VAR_SAMP(i) FROM t GROUP BY k;

SELECT k, STDDEV_POP(d) FILTER (WHERE i > 1) AS sd, VAR_POP(i) FILTER (WHERE i > 1) AS vi,
       COUNT(DISTINCT i) FILTER (WHERE i > 1) AS di, SUM(i) FILTER (WHERE d > 1) AS si,
       AVG(d) FILTER (WHERE i < 10) AS ad
FROM t GROUP BY k HAVING VAR_POP(d) >= 0;

SELECT window_start, k, STDDEV_POP(d) AS sd, VAR_SAMP(i) AS vs, STDDEV_SAMP(CAST(i AS DOUBLE)) AS ss
FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, k;

SELECT window_start, window_end, VAR_POP(d) AS vp, STDDEV_POP(i) AS sp
FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '4' SECOND))
GROUP BY window_start, window_end;

SELECT room, STDDEV_POP(temp) AS sd, VAR_SAMP(temp) AS vs, VARIANCE(n) AS vn
FROM readings GROUP BY room;
