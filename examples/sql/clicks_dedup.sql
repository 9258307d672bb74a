-- clicks_dedup.sql - drop redelivered click events: keep the first row per click_id.
--
-- The PyFlink stateful-processing lesson's deduplication ("a set of IDs already processed")
-- written the Flink SQL way: ROW_NUMBER() OVER (PARTITION BY click_id ORDER BY ts ASC) = 1.
-- An at-least-once pipeline (a Kafka producer retry, a connector restart) delivers some
-- clicks twice; the copies carry the same click_id and the same event time.
--
-- What it shows: ordered by the event-time attribute `ts`, keep-first emits a click when it
-- first arrives (+I) and ignores copies with the same or a later ts. Only a copy with an
-- earlier ts would replace the kept row (-U/+U); redeliveries never do, so the output is
-- append-only: one row per click, in arrival order. The state is one row per click_id.
--
-- Run from the repository root:
--   build/sluice run examples/sql/clicks_dedup.sql
-- Input: examples/data/clicks.jsonl (written by examples/data/gen.py).

CREATE TABLE clicks (
    click_id STRING,
    user_id INT,
    url STRING,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECONDS
) WITH (
    'connector' = 'filesystem',
    'path' = 'examples/data/clicks.jsonl',
    'format' = 'json'
);

SELECT click_id, user_id, url, ts
FROM (
    SELECT *,
        ROW_NUMBER() OVER (PARTITION BY click_id ORDER BY ts ASC) AS rn
    FROM clicks
)
WHERE rn = 1;
