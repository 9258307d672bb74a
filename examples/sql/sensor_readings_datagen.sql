-- sensor_readings_datagen.sql - a generated stream with out-of-order and late events,
-- aggregated per sensor in 1-minute tumbling windows. Needs no input file.
--
-- datagen is Flink's generator connector (unbounded unless 'number-of-rows' is set) with
-- sluice's event-time knobs: `ts` starts at 10:00 and advances 50 ms per row; each row is
-- moved back by up to 1 s (disorder the 2 s watermark delay absorbs), and 1% of the rows
-- are moved back 30 s more, past the watermark: those whose window has already fired are
-- dropped as late, as Flink SQL does, and counted ("N late" on sluice's last stderr line).
-- 'seed' makes the rows the same on every run.
--
-- What it shows: 20000 rows cover 1000 s of event time, so about 17 windows x 8 sensors.
-- Every row is in exactly one window or late: the counts plus the late rows add up to
-- 'number-of-rows'.
--
-- flink-oracle: differs the event-time datagen fields are sluice's: Flink reads the rows
-- flink-oracle: differs sluice generated, in their order, from a file
-- flink-oracle: materialize readings
--
-- Run (from anywhere):
--   build/sluice run examples/sql/sensor_readings_datagen.sql

CREATE TABLE readings (
    sensor_id INT,
    reading DOUBLE,
    ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '2' SECONDS
) WITH (
    'connector' = 'datagen',
    'number-of-rows' = '20000',
    'rows-per-second' = '100000',
    'seed' = '7',
    'fields.sensor_id.min' = '1',
    'fields.sensor_id.max' = '8',
    'fields.reading.min' = '0',
    'fields.reading.max' = '100',
    'fields.ts.kind' = 'event-time',
    'fields.ts.start' = '2024-02-01 10:00:00',
    'fields.ts.step' = '50 ms',
    'fields.ts.max-disorder' = '1 s',
    'fields.ts.late-fraction' = '0.01',
    'fields.ts.late-by' = '30 s',
    'scan.watermark.emit.strategy' = 'on-event'
);

SELECT
    sensor_id,
    TUMBLE_START(ts, INTERVAL '1' MINUTE) AS window_start,
    TUMBLE_END(ts, INTERVAL '1' MINUTE) AS window_end,
    COUNT(*) AS readings,
    MIN(reading) AS min_reading,
    MAX(reading) AS max_reading
FROM readings
GROUP BY sensor_id, TUMBLE(ts, INTERVAL '1' MINUTE);
