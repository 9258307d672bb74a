-- customer_sessions.sql - customer sessions: orders of one customer with less than
-- 30 minutes between them form one session (SESSION windows, gap 30 minutes).
--
-- The PyFlink stateful-processing lesson's "Customer Session Analysis" query over the same
-- Debezium order events as orders_per_customer_tumble.sql.
--
-- What it shows: a session's bounds are data-driven: it starts at its first order and ends
-- 30 minutes after its last one (SESSION_END). It is emitted once the watermark passes that
-- end; a late order that reaches a session still open joins it, one whose session already
-- closed is dropped and counted as late. Sessions that touch merge, as in Flink.
--
-- Run from the repository root:
--   build/sluice run examples/sql/customer_sessions.sql
-- Input: examples/data/orders_cdc.jsonl (written by examples/data/gen.py).

SET 'table.local-time-zone' = 'UTC';

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
    >,
    event_time AS TO_TIMESTAMP_LTZ(payload.ts_ms, 3),
    WATERMARK FOR event_time AS event_time - INTERVAL '5' SECONDS
) WITH (
    'connector' = 'filesystem',
    'path' = 'examples/data/orders_cdc.jsonl',
    'format' = 'json',
    'scan.watermark.emit.strategy' = 'on-event'
);

CREATE VIEW orders_current AS
SELECT
    payload.after.id AS id,
    payload.after.customer_id AS customer_id,
    payload.after.total AS total,
    event_time
FROM orders_cdc
WHERE payload.op IN ('c', 'u', 'r');

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
