-- A partitioned filesystem table: each row under sink/dt=.../kind=.../ (NULL and '' as
-- __DEFAULT_PARTITION__), the files holding the other columns only (tests/sql/
-- fs_partitioned.py checks the directory names, escaping and commits). A blackhole table
-- takes PARTITIONED BY and ignores it, as Flink's does; SHOW CREATE TABLE prints the clause.
CREATE TABLE sink (id BIGINT, dt STRING, name STRING, kind INT) PARTITIONED BY (dt, kind)
  WITH ('connector' = 'filesystem', 'path' = '@OUT@/sink', 'format' = 'json');
CREATE TABLE dropped (id BIGINT, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'blackhole');
CREATE TABLE shown (id BIGINT, dt STRING) WITH ('connector' = 'print');

INSERT INTO sink VALUES (1, '2024-01-01', 'a', 1), (2, '2024-01-01', 'b', 2),
  (3, '2024-01-02', 'c', 1), (4, CAST(NULL AS STRING), 'd', CAST(NULL AS INT)),
  (5, '', 'e', 3);

INSERT INTO dropped VALUES (7, '2024-01-01'), (8, 'x/y');

INSERT INTO shown SELECT id, dt FROM (VALUES (7, '2024-01-01'), (8, 'x/y')) AS t(id, dt);

SHOW CREATE TABLE dropped;
