-- orders_moving_average_hop.sql - a 10-minute moving average of the order value, every
-- 2 minutes (HOP windows: slide 2 minutes, size 10 minutes).
--
-- The PyFlink stateful-processing lesson's lab, steps 3 and 5, as the lab writes them: the
-- view declares its watermark after WHERE (`WATERMARK FOR TO_TIMESTAMP_LTZ(...) AS ... -
-- INTERVAL '5' SECONDS`). That is not valid Flink SQL; sluice accepts it as an extension
-- (the watermark applies to that view column) and prints a one-line notice naming the
-- standard form, which is the one in orders_per_customer_tumble.sql: a computed column plus
-- WATERMARK FOR in CREATE TABLE.
--
-- What it shows: every order lands in size/slide = 5 overlapping windows; each window
-- emits one row when the watermark passes its end. AVG of DECIMAL(10,2) is DECIMAL(38,6)
-- in Flink (the lab rounds it to 266.67 for print). A late event is dropped only from the
-- windows that already fired and still counts in the later ones.
--
-- flink-oracle: differs WATERMARK in CREATE VIEW is not Flink SQL: Flink runs the standard form,
-- flink-oracle: differs the watermark on the table (so the deletes it reads advance it too)
-- flink-oracle: flink-replace         ts_ms BIGINT\n    > => ts_ms BIGINT\n    >,\n    event_time AS TO_TIMESTAMP_LTZ(payload.ts_ms, 3),\n    WATERMARK FOR event_time AS event_time - INTERVAL '5' SECONDS
-- flink-oracle: flink-replace TO_TIMESTAMP_LTZ(payload.ts_ms, 3) AS event_time => event_time
-- flink-oracle: flink-replace \nWATERMARK FOR TO_TIMESTAMP_LTZ(payload.ts_ms, 3)\n    AS TO_TIMESTAMP_LTZ(payload.ts_ms, 3) - INTERVAL '5' SECONDS; => ;
--
-- Run from the repository root:
--   build/sluice run examples/sql/orders_moving_average_hop.sql
-- Input: examples/data/orders_cdc.jsonl (written by examples/data/gen.py).

SET 'table.local-time-zone' = 'UTC';

CREATE TABLE orders_cdc (
    payload ROW<
        after ROW<
            id INT,
            customer_id INT,
            total DECIMAL(10,2),
            status STRING,
            created_at TIMESTAMP(3)
        >,
        op STRING,
        ts_ms BIGINT
    >
) WITH (
    'connector' = 'filesystem',
    'path' = 'examples/data/orders_cdc.jsonl',
    'format' = 'json',
    'scan.watermark.emit.strategy' = 'on-event'
);

CREATE VIEW orders_with_watermark AS
SELECT
    payload.after.id AS id,
    payload.after.customer_id AS customer_id,
    payload.after.total AS total,
    payload.after.status AS status,
    TO_TIMESTAMP_LTZ(payload.ts_ms, 3) AS event_time
FROM orders_cdc
WHERE payload.op IN ('c', 'u', 'r')
WATERMARK FOR TO_TIMESTAMP_LTZ(payload.ts_ms, 3)
    AS TO_TIMESTAMP_LTZ(payload.ts_ms, 3) - INTERVAL '5' SECONDS;

SELECT
    HOP_START(event_time, INTERVAL '2' MINUTES, INTERVAL '10' MINUTES) AS window_start,
    HOP_END(event_time, INTERVAL '2' MINUTES, INTERVAL '10' MINUTES) AS window_end,
    COUNT(*) AS orders,
    AVG(total) AS avg_order_value
FROM orders_with_watermark
GROUP BY HOP(event_time, INTERVAL '2' MINUTES, INTERVAL '10' MINUTES);
