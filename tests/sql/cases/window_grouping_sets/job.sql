-- GROUPING SETS, ROLLUP and CUBE over window TVFs, as Flink runs them: the window
-- aggregate is expanded per grouping set, window_start and window_end in every set, so each
-- window fires one row per group of each set. The second eu/milk row (00:00:03) arrives
-- after the watermark passed 00:00:05 and is late for the first tumbling window: dropped
-- from every set alike. A NULL region is a value, told apart from a missing one by GROUPING.
CREATE TABLE sales (
  region STRING,
  product STRING,
  qty INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/sales.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

SELECT window_start, window_end, region, product, SUM(qty) AS total, COUNT(*) AS n
FROM TABLE(TUMBLE(TABLE sales, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, GROUPING SETS ((region, product), (region), ());

SELECT window_start, window_end, region, product, MAX(qty) AS top,
  GROUPING(region, product) AS g
FROM TABLE(TUMBLE(TABLE sales, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, ROLLUP (region, product);

SELECT window_start, window_end, region, product, COUNT(*) AS n, GROUPING_ID(product) AS gp
FROM TABLE(HOP(TABLE sales, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
WHERE qty > 1
GROUP BY window_start, window_end, CUBE (region, product);

-- a grouping expression over CUMULATE, and HAVING on a set's result
SELECT window_start, window_end, UPPER(product) AS p, SUM(qty) AS total
FROM TABLE(CUMULATE(TABLE sales, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
GROUP BY window_start, window_end, GROUPING SETS ((UPPER(product)), ())
HAVING SUM(qty) > 3;

-- a grouping set without window_start and window_end: no longer a window aggregate but,
-- as in Flink, an updating GROUP BY over the TVF's rows and their window columns (the
-- late row counts here: an updating GROUP BY has no lateness)
SELECT window_start, window_end, region, COUNT(*) AS n
FROM TABLE(TUMBLE(TABLE sales, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY GROUPING SETS ((window_start, window_end, region), (region));
