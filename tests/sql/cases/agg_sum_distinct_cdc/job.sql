-- SUM/AVG(DISTINCT) in an updating GROUP BY over a debezium-json changelog: a value counts
-- once however many rows carry it, and leaves the sum only when its last row is retracted
-- (order 3's delete leaves 10.00 in 'new' through order 1; order 4's update takes 7.25 out)
CREATE TABLE orders (
  id INT,
  status STRING,
  total DECIMAL(10, 2),
  qty INT
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders_dbz.jsonl',
        'format' = 'debezium-json');

SELECT status, SUM(DISTINCT total) AS st, AVG(DISTINCT qty) AS aq, SUM(total) AS s,
       SUM(DISTINCT qty) FILTER (WHERE total > 6) AS sq
FROM orders GROUP BY status;
