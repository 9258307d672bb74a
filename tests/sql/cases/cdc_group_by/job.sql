-- debezium-json changelog into an updating GROUP BY: the update moves order 1 from 'new'
-- to 'paid' (-U/+U on both groups), the delete empties 'new' (-D)
CREATE TABLE orders (
  id INT,
  status STRING,
  total DECIMAL(10, 2)
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders_dbz.jsonl',
        'format' = 'debezium-json');

SELECT status, COUNT(*) AS n, SUM(total) AS s FROM orders GROUP BY status;
