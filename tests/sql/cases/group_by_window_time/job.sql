-- GROUP BY window_start, window_end, window_time, as Flink writes it to select the
-- window's time attribute (window_time adds no key: one value per window, window_end -
-- 1 ms), and a cascading window over it: 20 s windows of the 10 s windows' sums, grouped
-- by their own window_time too
CREATE TABLE pay (
  k STRING,
  amount INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH (
  'connector' = 'filesystem',
  'path' = '@DIR@/pay.jsonl',
  'format' = 'json',
  'scan.watermark.emit.strategy' = 'on-event'
);

SELECT k, window_start, window_end, window_time, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE pay, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end, window_time;

CREATE VIEW ten AS
SELECT k, window_time AS wt, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE pay, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end, window_time;

SELECT k, window_start, window_end, window_time, SUM(total) AS total, COUNT(*) AS windows
FROM TABLE(TUMBLE(TABLE ten, DESCRIPTOR(wt), INTERVAL '20' SECOND))
GROUP BY k, window_start, window_end, window_time;
