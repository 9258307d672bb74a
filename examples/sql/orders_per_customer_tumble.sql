-- orders_per_customer_tumble.sql - orders per customer in 5-minute tumbling windows.
--
-- The PyFlink stateful-processing lesson's complete example: Debezium change events of the
-- `orders` table, read with the plain 'json' format through the payload ROW<after ROW<...>>
-- envelope; event time is the change's ts_ms (TO_TIMESTAMP_LTZ), the watermark trails it by
-- 5 seconds; a view keeps inserts, updates and snapshot reads; GROUP BY TUMBLE(event_time,
-- INTERVAL '5' MINUTES) counts orders and sums their totals per customer.
--
-- What it shows: one append-only row per (window, customer), emitted when the watermark
-- passes window_end - 1 ms. Events that arrive after their window fired are dropped, as in
-- Flink SQL; sluice counts them ("N late" on the last stderr line). With plain 'json' an
-- update ('u') is just another row, so a paid order counts twice; format 'debezium-json'
-- would read the same events as a changelog instead.
--
-- 'scan.watermark.emit.strategy' = 'on-event' emits the watermark after every record, so
-- which rows are late does not depend on timing: the output is the same on every run and
-- any number of shards. Without it the watermark is periodic (every 200 ms), as in Flink.
--
-- Run from the repository root:
--   build/sluice run examples/sql/orders_per_customer_tumble.sql
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
    TUMBLE_START(event_time, INTERVAL '5' MINUTES) AS window_start,
    TUMBLE_END(event_time, INTERVAL '5' MINUTES) AS window_end,
    customer_id,
    COUNT(*) AS order_count,
    SUM(total) AS total_revenue
FROM orders_current
GROUP BY
    TUMBLE(event_time, INTERVAL '5' MINUTES),
    customer_id;
