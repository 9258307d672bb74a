CREATE TABLE src (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = '/nonexistent/in.jsonl', 'format' = 'json');
CREATE TABLE out_t (id BIGINT, ts TIMESTAMP(3), dt STRING, hm STRING) PARTITIONED BY (dt, hm)
  WITH ('connector' = 'filesystem', 'path' = '/nonexistent/out', 'format' = 'csv',
        'partition.default-name' = 'none',
        'sink.partition-commit.trigger' = 'partition-time',
        'sink.partition-commit.delay' = '1 min',
        'sink.partition-commit.policy.kind' = 'success-file',
        'partition.time-extractor.timestamp-pattern' = '$dt $hm:00',
        'sink.rolling-policy.file-size' = '1 mb',
        'sink.rolling-policy.rollover-interval' = '1min',
        'sink.rolling-policy.check-interval' = '1min');
INSERT INTO out_t SELECT id, ts, DATE_FORMAT(ts, 'yyyy-MM-dd'), DATE_FORMAT(ts, 'HH:mm') FROM src;
SHOW CREATE TABLE out_t;
