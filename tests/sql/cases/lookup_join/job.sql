-- flink-oracle: differs Flink's lookup join needs a lookup source (JDBC, HBase, Hive); its filesystem connector has none, so Flink refuses these jobs
-- flink-oracle: skip
-- Lookup joins (FOR SYSTEM_TIME AS OF a processing time): the bounded table is read whole
-- before the job starts (a full cache, as Flink's lookup sources keep one) and each order
-- is joined with the rows of its key, on its own shard. Product 12 has two rows (two
-- matches), the row without a key matches nothing (NULL never equals), order 4's NULL
-- product matches nothing either, product 21 is missing.
CREATE TABLE orders (id BIGINT, product BIGINT, qty INT, pt AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');
CREATE TABLE products (pid BIGINT, name STRING, price INT)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/products.csv', 'format' = 'csv');

-- inner: orders without a product are dropped
SELECT o.id, p.name, o.qty * p.price AS cost
FROM orders AS o JOIN products FOR SYSTEM_TIME AS OF o.pt AS p ON o.product = p.pid;

-- left: padded with NULLs
SELECT o.id, p.name, p.price
FROM orders AS o LEFT JOIN products FOR SYSTEM_TIME AS OF o.pt AS p ON o.product = p.pid;

-- an expression as the key (Nexmark q13's MOD), a condition on the match, PROCTIME() from
-- a subquery
SELECT o.id, p.name
FROM (SELECT *, PROCTIME() AS t FROM orders) AS o
JOIN products FOR SYSTEM_TIME AS OF o.t AS p ON MOD(o.product, 20) + 10 = p.pid AND p.price > 1;
