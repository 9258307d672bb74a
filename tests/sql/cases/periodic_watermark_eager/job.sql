-- a periodic watermark (no 'scan.watermark.emit.strategy'): the file is read in less than
-- one 200 ms interval, so sluice emits no watermark before the end and the 00:00:01 row is
-- on time
-- flink-oracle: known-disagreement Flink's watermark assigner also emits as soon as the
-- flink-oracle: known-disagreement watermark is more than the interval past the last one sent, so
-- flink-oracle: known-disagreement after 00:00:10 it is at 10 s and Flink drops 00:00:01 as late
CREATE TABLE t (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');

SELECT k, TUMBLE_START(ts, INTERVAL '5' SECOND) AS ws, COUNT(*) AS n
FROM t GROUP BY k, TUMBLE(ts, INTERVAL '5' SECOND);
