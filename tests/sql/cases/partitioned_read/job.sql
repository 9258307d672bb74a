-- a PARTITIONED BY filesystem table read back: its files under t/dt=<value>/n=<value>/,
-- as the partitioned sink and Flink write them, each row with its directories' values
-- (unescaped: 'a/b=c "x"' is dt=a%2Fb%3Dc %22x%22, as Flink escapes it) in the table's
-- column order; the files hold the other columns. A WHERE on a partition column filters
-- as on any column.
CREATE TABLE t (id INT, name STRING, dt STRING, n INT, ts TIMESTAMP(3))
PARTITIONED BY (dt, n)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/t', 'format' = 'csv');

SELECT * FROM t;

SELECT dt, n * 10 AS n10, COUNT(*) AS c FROM t WHERE n > 1 GROUP BY dt, n;
