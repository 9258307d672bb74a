-- CUMULATE window TVF (step 2 s, max size 6 s): each window of a period holds every row
-- of the period so far; a key with rows in a period fires at every later step of it
CREATE TABLE pay (
  k STRING,
  amount INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/pay.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

SELECT k, window_start, window_end, SUM(amount) AS total, COUNT(*) AS n
FROM TABLE(CUMULATE(TABLE pay, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))
GROUP BY k, window_start, window_end;

SELECT k, amount, window_start, window_end
FROM TABLE(CUMULATE(TABLE pay, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))
WHERE k = 'b';
