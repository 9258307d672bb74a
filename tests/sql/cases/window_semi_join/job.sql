-- Window semi and anti joins (Flink's WindowJoinOperator, SEMI / ANTI): a WHERE condition
-- [NOT] IN (SELECT ...) or [NOT] EXISTS (SELECT ...) whose subquery pairs window_start and
-- window_end of the same window TVF with the outer query's. Each window's left rows come
-- out once, when the watermark passes its end, each once per copy: with a match (semi) or
-- without (anti). NOT IN is null-aware: a NULL payment customer in [0s, 10s) lets no order
-- of that window through, a NULL order customer passes only the window with no payment
-- ([30s, 40s)). No row is behind its own table's watermark, so none is late whichever
-- table the join hears from first.
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

-- IN, the form of Flink's documentation: the subquery selects its own `cust` (the outer
-- query has one too); o1 and o5 meet two payments each and still come out once
SELECT L.id, L.cust, L.window_start, L.window_end
FROM (SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND))) L
WHERE L.cust IN (
  SELECT cust FROM (SELECT * FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(ts), INTERVAL '10' SECOND))) R
  WHERE L.window_start = R.window_start AND L.window_end = R.window_end);

-- NOT IN
SELECT o.id, o.cust, o.window_start
FROM o WHERE o.cust NOT IN (
  SELECT cust FROM p WHERE o.window_start = p.window_start AND o.window_end = p.window_end);

-- EXISTS with a condition on the pair, and another condition of the outer WHERE
SELECT o.id, o.amount, o.window_start
FROM o
WHERE o.amount > 15 AND EXISTS (
  SELECT * FROM p WHERE o.cust = p.cust AND p.paid >= o.amount
    AND o.window_start = p.window_start AND o.window_end = p.window_end);

-- NOT EXISTS, the subquery's TVF written as it is: a NULL customer meets no payment
SELECT o.id, o.cust, o.window_end
FROM o
WHERE NOT EXISTS (
  SELECT 1 FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(ts), INTERVAL '10' SECOND)) q
  WHERE q.cust = o.cust AND q.window_start = o.window_start AND q.window_end = o.window_end);

-- a semi and an anti join one after the other: orders of customers who paid in their
-- window but never 1 or less (p7 is 1)
SELECT o.id, o.window_start
FROM o
WHERE o.cust IN (SELECT cust FROM p WHERE p.window_start = o.window_start
                                      AND p.window_end = o.window_end)
  AND NOT EXISTS (SELECT * FROM p WHERE p.cust = o.cust AND p.paid <= 1
                    AND p.window_start = o.window_start AND p.window_end = o.window_end);

-- a window semi join keeps window_time a time attribute: windows over its results
CREATE VIEW paid_orders AS
  SELECT o.id, o.amount, o.window_time AS wt FROM o
  WHERE EXISTS (SELECT * FROM p WHERE p.cust = o.cust AND p.window_start = o.window_start
                  AND p.window_end = o.window_end);

SELECT window_start, COUNT(*) AS n, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE paid_orders, DESCRIPTOR(wt), INTERVAL '20' SECOND))
GROUP BY window_start, window_end;
