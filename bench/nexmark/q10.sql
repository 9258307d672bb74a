-- Nexmark q10, log to file system: every bid written to a partitioned CSV table, one
-- directory a day and minute of its time (dt=yyyy-MM-dd/hm=HH:mm), each partition committed
-- (_SUCCESS) once the watermark is a minute past it. The path is a placeholder that the
-- benchmark and tests/flink/nexmark.py replace with a directory of their own.
CREATE TABLE nexmark_q10 (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  `dateTime` TIMESTAMP(3),
  extra VARCHAR,
  dt STRING,
  hm STRING
) PARTITIONED BY (dt, hm) WITH (
  'connector' = 'filesystem',
  'path' = '${NEXMARK_Q10_DIR}',
  'format' = 'csv',
  'sink.partition-commit.trigger' = 'partition-time',
  'sink.partition-commit.delay' = '1 min',
  'sink.partition-commit.policy.kind' = 'success-file',
  'partition.time-extractor.timestamp-pattern' = '$dt $hm:00',
  'sink.rolling-policy.rollover-interval' = '1min',
  'sink.rolling-policy.check-interval' = '1min'
);

INSERT INTO nexmark_q10
SELECT auction, bidder, price, `dateTime`, extra, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd'),
  DATE_FORMAT(`dateTime`, 'HH:mm')
FROM bid;
