-- The PyFlink lesson's temporal join: orders enriched with
-- the product version valid at each order's event time, and the plain join it replaces.
CREATE TABLE orders (
    order_id INT,
    customer_id INT,
    product_id INT,
    quantity INT,
    order_time TIMESTAMP(3),
    WATERMARK FOR order_time AS order_time - INTERVAL '5' SECONDS
) WITH (
    'connector' = 'kafka',
    'topic' = 'dbserver1.public.orders',
    'properties.bootstrap.servers' = 'kafka:9092',
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
    'connector' = 'kafka',
    'topic' = 'dbserver1.public.products',
    'properties.bootstrap.servers' = 'kafka:9092',
    'format' = 'json'
);

SELECT
    o.order_id,
    o.customer_id,
    p.product_name,
    p.price
FROM orders o
JOIN products p ON o.product_id = p.product_id;

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
