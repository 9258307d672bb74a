-- orders_enriched_temporal_join.sql - orders enriched with the product version valid at
-- the order's time (event-time temporal join, FOR SYSTEM_TIME AS OF).
--
-- The PyFlink stateful-processing lesson's temporal join, with file sources in place of the
-- Kafka topics: `products` is a versioned table (PRIMARY KEY plus a watermark); each order
-- joins the version with the greatest update_time <= order_time. Product 101 is the
-- lesson's own example: Widget 100.00 from 09:00, 120.00 from 10:00, Widget Pro 150.00 from
-- 11:00.
--
-- What it shows: an order is emitted once the watermarks of both inputs pass its time, with
-- the price it was sold at, not today's price. LEFT JOIN keeps orders without a version:
-- product 106 does not exist and product 105 has no version before 10:50, so those rows
-- carry NULLs (and total_amount, quantity * NULL, is NULL).
--
-- Run from the repository root:
--   build/sluice run examples/sql/orders_enriched_temporal_join.sql
-- Input: examples/data/orders.jsonl, examples/data/products.jsonl (examples/data/gen.py).

SET 'table.local-time-zone' = 'UTC';

CREATE TABLE orders (
    order_id INT,
    customer_id INT,
    product_id INT,
    quantity INT,
    order_time TIMESTAMP(3),
    WATERMARK FOR order_time AS order_time - INTERVAL '5' SECONDS
) WITH (
    'connector' = 'filesystem',
    'path' = 'examples/data/orders.jsonl',
    'format' = 'json'
);

CREATE TABLE products (
    product_id INT,
    product_name STRING,
    price DECIMAL(10,2),
    category STRING,
    update_time TIMESTAMP(3),
    WATERMARK FOR update_time AS update_time - INTERVAL '5' SECONDS,
    PRIMARY KEY (product_id) NOT ENFORCED
) WITH (
    'connector' = 'filesystem',
    'path' = 'examples/data/products.jsonl',
    'format' = 'json'
);

SELECT
    o.order_id,
    o.customer_id,
    o.quantity,
    p.product_name,
    p.price,
    p.category,
    o.quantity * p.price AS total_amount,
    o.order_time
FROM orders AS o
LEFT JOIN products FOR SYSTEM_TIME AS OF o.order_time AS p
ON o.product_id = p.product_id;
