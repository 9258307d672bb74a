-- The 'metastore' commit policy adds the partition to a Hive metastore: a filesystem table
-- has none (Flink fails the job when it commits), so it is refused when the table is planned.
CREATE TABLE out_t (id BIGINT, dt STRING) PARTITIONED BY (dt)
  WITH ('connector' = 'filesystem', 'path' = '@OUT@/out_t', 'format' = 'csv',
        'sink.partition-commit.policy.kind' = 'metastore,success-file');
INSERT INTO out_t VALUES (1, 'a');
