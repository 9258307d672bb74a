-- negative window offsets: TUMBLE of 10 s with OFFSET -3 s gives windows [-3 s, 7 s),
-- [7 s, 17 s), ...; HOP of 8 s sliding by 4 s with OFFSET -3 s starts windows at 1 s,
-- 5 s, 9 s, ... (Flink's window offset may be positive or negative, window-tvf.md
-- "Window Offset")
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

SELECT k, window_start, window_end, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE pay, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '-3' SECOND))
GROUP BY k, window_start, window_end;

SELECT k, window_start, window_end, SUM(amount) AS total
FROM TABLE(HOP(TABLE pay, DESCRIPTOR(ts), INTERVAL '4' SECOND, INTERVAL '8' SECOND,
               INTERVAL '-3' SECOND))
GROUP BY k, window_start, window_end;
