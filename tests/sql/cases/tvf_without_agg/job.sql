-- a window TVF read without aggregation: each row once per window it falls in, with
-- window_start, window_end and window_time appended (HOP: two windows per row here)
CREATE TABLE pay (
  k STRING,
  amount DECIMAL(6, 2),
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/pay.jsonl', 'format' = 'json');

SELECT k, amount, window_start, window_end, window_time
FROM TABLE(HOP(TABLE pay, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
WHERE k = 'a';
