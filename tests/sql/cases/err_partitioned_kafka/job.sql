-- Only the filesystem connector writes partitions (blackhole takes PARTITIONED BY and
-- ignores it, as Flink's does; Flink refuses a partitioned Kafka table: its sink does not
-- implement SupportsPartitioning).
CREATE TABLE out_t (id BIGINT, dt STRING) PARTITIONED BY (dt)
  WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9',
        'format' = 'json');
INSERT INTO out_t VALUES (1, 'a');
