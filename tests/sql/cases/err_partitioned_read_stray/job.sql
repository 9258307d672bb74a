-- a file where a partition directory is expected is refused, naming it: its rows have no
-- partition values, and skipping it would lose them silently
CREATE TABLE t (id INT, name STRING, n INT) PARTITIONED BY (n)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/t', 'format' = 'csv');
SELECT * FROM t;
