-- OVER windows Flink runs that need a projection before the OVER operator: expressions as
-- aggregate arguments and as partition keys, computed first (Flink's Calc below its
-- OverAggregate), and no PARTITION BY at all: every row in one partition, which Flink runs
-- on one task and sluice on one shard (a constant key). h is late, as in over_agg.
CREATE TABLE bids (
  item STRING,
  supplier STRING,
  price INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/bids.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

-- no PARTITION BY: the two previous rows and this one over the whole stream
SELECT item, price,
  SUM(price) OVER w AS s3, COUNT(*) OVER w AS n3, MIN(price) OVER w AS lo
FROM bids
WINDOW w AS (ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);

-- no PARTITION BY, RANGE and unbounded
SELECT item,
  SUM(price) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW) AS s2
FROM bids;

SELECT item, COUNT(item) OVER (ORDER BY ts) AS cnt, SUM(price) OVER (ORDER BY ts) AS run
FROM bids;

-- expressions as arguments, per supplier
SELECT item, supplier,
  SUM(price * 2) OVER w AS dbl, MAX(price + item_len) OVER w AS mx,
  COUNT(CASE WHEN price > 4 THEN item END) OVER w AS big
FROM (SELECT item, supplier, price, CHAR_LENGTH(item) AS item_len, ts FROM bids)
WINDOW w AS (PARTITION BY supplier ORDER BY ts
             RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW);

-- an expression as the partition key, and an argument mixing columns
SELECT item, price,
  SUM(price - 1) OVER (PARTITION BY price % 2 ORDER BY ts
                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS run
FROM bids;
