-- The PyFlink lesson's window queries, with the Kafka
-- options made concrete: legacy TUMBLE/HOP/SESSION group windows over a CDC view.
CREATE TABLE orders_cdc (
    payload ROW<
        after ROW<
            id INT,
            customer_id INT,
            total DECIMAL(10,2),
            created_at TIMESTAMP(3)
        >,
        op STRING,
        ts_ms BIGINT
    >
) WITH (
    'connector' = 'kafka',
    'topic' = 'dbserver1.public.orders',
    'properties.bootstrap.servers' = 'kafka:9092',
    'properties.group.id' = 'pyflink-windows',
    'format' = 'json'
);

-- VIEW with watermark: the PyFlink lesson writes it as the last item of the SELECT list
CREATE VIEW orders_current AS
    SELECT
        payload.after.id AS id,
        payload.after.customer_id AS customer_id,
        payload.after.total AS total,
        TO_TIMESTAMP_LTZ(payload.ts_ms, 3) AS event_time,
        WATERMARK FOR TO_TIMESTAMP_LTZ(payload.ts_ms, 3) AS TO_TIMESTAMP_LTZ(payload.ts_ms, 3) - INTERVAL '5' SECONDS
    FROM orders_cdc
    WHERE payload.op IN ('c', 'u', 'r');

CREATE VIEW hourly_revenue AS
    SELECT
        TUMBLE_START(event_time, INTERVAL '1' HOUR) AS window_start,
        TUMBLE_END(event_time, INTERVAL '1' HOUR) AS window_end,
        customer_id,
        COUNT(*) AS order_count,
        SUM(total) AS total_revenue,
        AVG(total) AS avg_order_value
    FROM orders_current
    GROUP BY
        TUMBLE(event_time, INTERVAL '1' HOUR),
        customer_id;

SELECT
    HOP_START(event_time, INTERVAL '5' MINUTES, INTERVAL '10' MINUTES) AS window_start,
    HOP_END(event_time, INTERVAL '5' MINUTES, INTERVAL '10' MINUTES) AS window_end,
    status,
    COUNT(*) AS status_count
FROM orders_current
GROUP BY
    HOP(event_time, INTERVAL '5' MINUTES, INTERVAL '10' MINUTES),
    status;

SELECT
    SESSION_START(event_time, INTERVAL '30' MINUTES) AS session_start,
    SESSION_END(event_time, INTERVAL '30' MINUTES) AS session_end,
    customer_id,
    COUNT(*) AS orders_per_session,
    SUM(total) AS session_total,
    MAX(total) AS max_order_in_session
FROM orders_current
GROUP BY
    SESSION(event_time, INTERVAL '30' MINUTES),
    customer_id;

SELECT customer_id, COUNT(*) FROM orders_current GROUP BY customer_id;

SELECT customer_id, COUNT(*) AS n FROM (
    SELECT * FROM orders_current WHERE total > 100
)
GROUP BY customer_id;

SELECT
    HOP_START(event_time, INTERVAL '2' MINUTES, INTERVAL '10' MINUTES) AS window_start,
    AVG(total) AS avg_order_value
FROM orders_current
GROUP BY HOP(event_time, INTERVAL '2' MINUTES, INTERVAL '10' MINUTES);
