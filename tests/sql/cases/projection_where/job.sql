-- projection, WHERE with IN and <>, NULL propagation, CASE, COALESCE, ||, DECIMAL * INT
CREATE TABLE orders (
  id INT,
  name STRING,
  amount DECIMAL(10, 2),
  qty INT,
  tag STRING
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');

SELECT id, UPPER(name) AS uname, amount * qty AS total,
       CASE WHEN qty > 2 THEN 'many' ELSE 'some' END AS size,
       COALESCE(name, 'anon') || '/' || tag AS who
FROM orders
WHERE tag IN ('vip', 'std') AND id <> 4;
