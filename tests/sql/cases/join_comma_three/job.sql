-- FROM a, b, c WHERE ...: each conjunct is the condition of the lowest comma join whose
-- tables it names, as Flink pushes filters into joins, so both joins are keyed by their
-- equality (expected.explain) and neither is a cross join of every pair on one shard. The
-- unqualified filter stays with the outermost join.
CREATE TABLE customers (id INT, name STRING)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/customers.jsonl', 'format' = 'json');

CREATE TABLE orders (order_id INT, customer_id INT, item STRING)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');

CREATE TABLE shipments (ship_id INT, order_id INT, carrier STRING)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/shipments.jsonl', 'format' = 'json');

SELECT s.ship_id, s.carrier, o.item, c.name
FROM orders AS o, customers AS c, shipments AS s
WHERE o.customer_id = c.id AND s.order_id = o.order_id AND carrier <> 'fedex';
