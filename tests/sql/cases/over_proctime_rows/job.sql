-- OVER windows ordered by processing time (Flink's ProcTimeRowsBoundedPrecedingFunction and
-- ProcTimeUnboundedPrecedingFunction): each row is emitted as it arrives, with the
-- aggregates over the rows that arrived before it in its partition. A ROWS frame and an
-- unbounded one depend on the arrival order only, not on the clock, so one file read in
-- order gives the same rows on every run (RANGE over processing time depends on the clock:
-- tests/sql/over_proctime.py). No row is late: the rowtime and its watermark play no part.
CREATE TABLE bids (
  item STRING,
  supplier STRING,
  price INT,
  ts TIMESTAMP(3),
  pt AS PROCTIME()
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/bids.jsonl', 'format' = 'json');

SELECT item, supplier, price,
  SUM(price) OVER w AS s3, COUNT(*) OVER w AS n3, MAX(price) OVER w AS m3
FROM bids
WINDOW w AS (PARTITION BY supplier ORDER BY pt ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);

SELECT item, supplier,
  SUM(price) OVER (PARTITION BY supplier ORDER BY pt
                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS run_rows,
  MIN(price) OVER (PARTITION BY supplier ORDER BY pt
                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS lo
FROM bids;

-- the default frame (RANGE UNBOUNDED PRECEDING), which Flink runs as the ROWS one on
-- processing time, without PARTITION BY, and an expression argument
SELECT item, COUNT(*) OVER (ORDER BY pt) AS n, SUM(price * 10) OVER (ORDER BY pt) AS s10
FROM bids;

SELECT item, AVG(price) OVER (ORDER BY pt ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS av
FROM bids;

-- identical rows leave a ROWS frame in their own arrival order (the 1 that came first
-- leaves first, not with its later copies)
CREATE TABLE dups (k STRING, v INT, pt AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/dups.jsonl', 'format' = 'json');

SELECT k, v, SUM(v) OVER w AS s, MAX(v) OVER w AS mx, COUNT(*) OVER w AS n
FROM dups WINDOW w AS (PARTITION BY k ORDER BY pt ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);
