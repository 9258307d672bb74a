-- PARTITIONED BY must name columns of the table (Flink: "Partition column 'day' not
-- defined in the table schema").
CREATE TABLE out_t (id BIGINT, name STRING) PARTITIONED BY (day)
  WITH ('connector' = 'filesystem', 'path' = '@OUT@/out_t', 'format' = 'csv');
INSERT INTO out_t VALUES (1, 'a');
