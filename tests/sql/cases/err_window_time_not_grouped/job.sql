-- a window TVF's window_time selected while GROUP BY names only the bounds: not grouped,
-- as Flink says it (GROUP BY window_start, window_end, window_time is group_by_window_time)
CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT window_start, window_time, COUNT(*)
FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY window_start, window_end;
