-- HOP whose size (5 s) is not a multiple of its slide (4 s): Flink aligns window starts on
-- the slide, so the windows are [0 s, 5 s), [4 s, 9 s), [8 s, 13 s), ... and a row at 6 s
-- is in one window only (Flink's getWindowStartWithOffset(ts, offset, slide)). Flink runs
-- such a HOP as a group window and as a TVF read without aggregation; it refuses a TVF
-- aggregation over it ("size must be an integral multiple of slide"), which sluice computes
-- with the same windows.
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

SELECT k, HOP_START(ts, INTERVAL '4' SECOND, INTERVAL '5' SECOND) AS window_start,
  HOP_END(ts, INTERVAL '4' SECOND, INTERVAL '5' SECOND) AS window_end,
  SUM(amount) AS total, COUNT(*) AS n
FROM pay
GROUP BY k, HOP(ts, INTERVAL '4' SECOND, INTERVAL '5' SECOND);

SELECT k, window_start, window_end, amount
FROM TABLE(HOP(TABLE pay, DESCRIPTOR(ts), INTERVAL '4' SECOND, INTERVAL '5' SECOND));
