-- CURRENT_WATERMARK takes the table's rowtime column (Flink: "The argument of
-- CURRENT_WATERMARK() must be a rowtime attribute"): `created` is a plain TIMESTAMP(3)
CREATE TABLE t (id INT, created TIMESTAMP(3), ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT id FROM t WHERE created > CURRENT_WATERMARK(created);
