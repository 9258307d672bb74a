-- SELECT without FROM (Flink reads it as a one-row VALUES): one row of constants, also on
-- several shards (the row comes from one split), in a UNION ALL, under a GROUP BY and into
-- an INSERT.
CREATE TABLE out_t (a INT, b STRING) WITH ('connector' = 'print');

SELECT 1 + 1;

SELECT 'a' || 'b' AS s, CAST(2.5 AS DOUBLE) * 2 AS d, UPPER('x') AS u,
       TIMESTAMP '2024-01-01 00:00:00' + INTERVAL '1' MINUTE AS t, CAST(NULL AS INT) AS n,
       SPLIT_INDEX('p,q', ',', 1) AS q;

SELECT 1 AS k UNION ALL SELECT 2 AS k;

SELECT COUNT(*) AS c, SUM(x) AS s FROM (SELECT 3 AS x UNION ALL SELECT 4 AS x);

INSERT INTO out_t SELECT 7, 'seven';
