-- A print table cannot be partitioned: Flink's print sink does not implement
-- SupportsPartitioning ("Table ... is a partitioned table, but the underlying
-- DynamicTableSink doesn't implement the SupportsPartitioning interface").
CREATE TABLE shown (id BIGINT, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'print');
INSERT INTO shown VALUES (7, '2024-01-01');
