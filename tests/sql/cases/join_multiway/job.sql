-- a join of joins (a JOIN b JOIN c), planned left-deep as Flink does: shipments with their
-- order and the order's customer; the second join's key is a column of the first join's
-- left side. RIGHT JOIN keeps the shipment whose order is unknown.
CREATE TABLE customers (id INT, name STRING)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/customers.jsonl', 'format' = 'json');

CREATE TABLE orders (order_id INT, customer_id INT, item STRING)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');

CREATE TABLE shipments (ship_id INT, order_id INT, carrier STRING)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/shipments.jsonl', 'format' = 'json');

SELECT s.ship_id, s.carrier, o.item, c.name
FROM orders AS o
JOIN customers AS c ON o.customer_id = c.id
RIGHT JOIN shipments AS s ON s.order_id = o.order_id;
