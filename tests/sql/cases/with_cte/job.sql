-- WITH (common table expressions) as Flink has them: a named query scoped to the statement
-- it heads, read like a view in FROM and JOIN, several in one WITH with a later one reading
-- an earlier one, a column list, a WITH name shadowing a table, one read twice (planned once
-- per read, as a view), a window TVF over a WITH query keeping its rowtime, WITH nested in a
-- FROM subquery and in a view, and INSERT INTO t WITH ... SELECT (Flink refuses WITH ...
-- INSERT). A name written twice in one WITH is not an error in Flink: the later one wins.
CREATE TABLE orders (
  order_id INT,
  product_id INT,
  quantity INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

CREATE TABLE products (
  product_id INT,
  name STRING,
  price DECIMAL(6, 2)
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/products.jsonl', 'format' = 'json');

CREATE TABLE big (order_id INT, total DECIMAL(10, 2)) WITH ('connector' = 'print');

-- a join of two WITH queries, the second reading the first
WITH big_orders AS (SELECT order_id, product_id, quantity FROM orders WHERE quantity >= 2),
     priced (oid, pname, total) AS (
       SELECT b.order_id, p.name, b.quantity * p.price
       FROM big_orders AS b JOIN products AS p ON b.product_id = p.product_id)
SELECT oid, pname, total FROM priced;

-- the WITH name `products` shadows the table; `orders` read through a CTE twice
WITH products AS (SELECT product_id, UPPER(name) AS name FROM products WHERE price > 2),
     o AS (SELECT order_id, product_id FROM orders)
SELECT o1.order_id, p.name
FROM o AS o1 JOIN products AS p ON o1.product_id = p.product_id
UNION ALL
SELECT o2.order_id, 'any' FROM o AS o2 WHERE o2.order_id > 5;

-- an updating GROUP BY over a WITH query
WITH q (pid, n) AS (SELECT product_id, quantity FROM orders)
SELECT pid, SUM(n) AS units, COUNT(*) AS orders FROM q GROUP BY pid;

-- a window TVF over a WITH query: the rowtime attribute survives it
WITH recent AS (SELECT order_id, quantity, ts FROM orders WHERE order_id > 1)
SELECT window_start, window_end, SUM(quantity) AS units
FROM TABLE(TUMBLE(TABLE recent, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY window_start, window_end;

-- a WITH in a FROM subquery, under one of the outer query; the same name twice (the later
-- one wins)
WITH x AS (SELECT 1 AS v), x AS (SELECT order_id AS v FROM orders WHERE order_id <= 2)
SELECT * FROM (WITH y AS (SELECT v * 10 AS w FROM x) SELECT w FROM y);

CREATE VIEW pens AS
  WITH p AS (SELECT product_id FROM products WHERE name = 'pen')
  SELECT o.order_id, o.quantity FROM orders AS o JOIN p ON o.product_id = p.product_id;

SELECT * FROM pens;

INSERT INTO big
WITH t AS (SELECT o.order_id, o.quantity * p.price AS total
           FROM orders AS o JOIN products AS p ON o.product_id = p.product_id)
SELECT order_id, total FROM t WHERE total > 5;
