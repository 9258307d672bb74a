-- a partition directory whose value does not read as its column's type is refused at
-- planning, naming the directory (never rows with a made-up value)
CREATE TABLE t (id INT, name STRING, n INT) PARTITIONED BY (n)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/t', 'format' = 'csv');
SELECT * FROM t;
