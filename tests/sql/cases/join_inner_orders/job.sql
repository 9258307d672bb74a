-- the "ordinary join" of Flink's SQL tutorial: every order with its product, an inner
-- equi-join of two append-only streams (Flink's regular join: each pair once, +I only, as
-- soon as both rows are there). Product 30 has no order, order 4 no product.
CREATE TABLE orders (
  order_id INT,
  product_id INT,
  quantity INT
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');

CREATE TABLE products (
  product_id INT,
  name STRING,
  price DECIMAL(6, 2)
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/products.jsonl', 'format' = 'json');

SELECT o.order_id, p.name, o.quantity * p.price AS total
FROM orders AS o
JOIN products AS p ON o.product_id = p.product_id;
