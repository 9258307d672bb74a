-- Window joins (Flink's WindowJoinOperator): ON pairs window_start and window_end of the
-- same window TVF on both sides, so each window's rows are joined once, when the watermark
-- passes its end: insert-only output, an outer side's unmatched rows NULL-padded then. A
-- NULL key (o4, p4) meets nothing. No row here is behind its own table's watermark, so none
-- is late whichever table the join hears from first.
CREATE TABLE orders (
  id STRING,
  cust INT,
  amount INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');

CREATE TABLE payments (
  id STRING,
  cust INT,
  paid INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/payments.jsonl', 'format' = 'json');

CREATE VIEW o AS SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND));
CREATE VIEW p AS
  SELECT * FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(ts), INTERVAL '10' SECOND));

-- INNER
SELECT o.id, p.id, o.cust, o.window_start, o.window_end
FROM o JOIN p ON o.cust = p.cust AND o.window_start = p.window_start
               AND o.window_end = p.window_end;

-- LEFT, with a condition on the pair: a payment that does not cover the order is no match
SELECT o.id, p.id, o.amount, p.paid, o.window_start
FROM o LEFT JOIN p ON o.cust = p.cust AND o.window_start = p.window_start
                    AND o.window_end = p.window_end AND p.paid >= o.amount;

-- RIGHT
SELECT o.id, p.id, p.cust, p.window_start
FROM o RIGHT JOIN p ON o.cust = p.cust AND o.window_start = p.window_start
                     AND o.window_end = p.window_end;

-- FULL, the bounds of whichever side is there
SELECT o.id, p.id, COALESCE(o.window_start, p.window_start) AS window_start,
       COALESCE(o.window_end, p.window_end) AS window_end
FROM o FULL JOIN p ON o.cust = p.cust AND o.window_start = p.window_start
                    AND o.window_end = p.window_end;

-- the TVFs joined as they are, on hopping windows: a row meets the other side in each
-- window both fall in
SELECT o.id, p.id, o.window_start, o.window_end
FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) o
JOIN TABLE(HOP(TABLE payments, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) p
  ON o.cust = p.cust AND o.window_start = p.window_start AND o.window_end = p.window_end;

-- two window aggregations joined on their windows (Nexmark q8's shape): each customer's
-- ordered and paid totals per window
SELECT a.cust, a.ws, a.total, b.paid
FROM (SELECT cust, window_start AS ws, window_end AS we, SUM(amount) AS total
      FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND))
      GROUP BY cust, window_start, window_end) a
JOIN (SELECT cust, window_start, window_end, SUM(paid) AS paid
      FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(ts), INTERVAL '10' SECOND))
      GROUP BY cust, window_start, window_end) b
  ON a.cust = b.cust AND a.ws = b.window_start AND a.we = b.window_end;

-- a window join keeps window_time a time attribute: windows over its results
CREATE VIEW matched AS
  SELECT o.id AS oid, o.amount, o.window_time AS wt
  FROM o JOIN p ON o.cust = p.cust AND o.window_start = p.window_start
                 AND o.window_end = p.window_end;

SELECT window_start, window_end, COUNT(*) AS n, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE matched, DESCRIPTOR(wt), INTERVAL '20' SECOND))
GROUP BY window_start, window_end;
