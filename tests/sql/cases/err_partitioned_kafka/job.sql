-- Only the filesystem connector writes partitions (print and blackhole take PARTITIONED BY
-- and ignore it, as Flink's do; Flink refuses a partitioned Kafka table: its sink does not
-- implement SupportsPartitioning).
CREATE TABLE out_t (id BIGINT, dt STRING) PARTITIONED BY (dt)
  WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9',
        'format' = 'json');
INSERT INTO out_t VALUES (1, 'a');
