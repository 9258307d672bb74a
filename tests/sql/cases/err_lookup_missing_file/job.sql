-- a lookup table is read before the job starts: its missing file is said then, by name
CREATE TABLE orders (id BIGINT, product BIGINT, qty INT, pt AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');
CREATE TABLE products (pid BIGINT, name STRING)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/no-such-file.csv', 'format' = 'csv');
SELECT o.id, p.name
FROM orders AS o JOIN products FOR SYSTEM_TIME AS OF o.pt AS p ON o.product = p.pid;
