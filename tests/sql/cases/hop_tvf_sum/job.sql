-- HOP window TVF (slide 5 s, size 10 s): every row lands in two windows; exact DECIMAL sums
CREATE TABLE pay (
  k STRING,
  amount DECIMAL(6, 2),
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH (
  'connector' = 'filesystem',
  'path' = '@DIR@/pay.jsonl',
  'format' = 'json',
  'scan.watermark.emit.strategy' = 'on-event'
);

SELECT k, window_start, window_end, SUM(amount) AS total, COUNT(*) AS n
FROM TABLE(HOP(TABLE pay, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
