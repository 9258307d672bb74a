-- the default partition read back: a NULL partition value is written under
-- __DEFAULT_PARTITION__ (or 'partition.default-name') and reads as NULL, whatever the
-- column's type; _SUCCESS markers and hidden in-progress files are not rows.
-- flink-oracle: differs Flink 2.3 fails reading a table with a default partition ("Path should not be null or empty: null"); sluice reads its rows with NULL partition values
-- flink-oracle: skip
CREATE TABLE t (id INT, name STRING, dt STRING, n INT, ts TIMESTAMP(3))
PARTITIONED BY (dt, n)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/t', 'format' = 'csv');

SELECT * FROM t;
