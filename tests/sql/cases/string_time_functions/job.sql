-- string and time functions, SQL-standard keyword forms included, with NULL inputs
CREATE TABLE t (s STRING, ts TIMESTAMP(3), n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');

SELECT TRIM(s) AS t1,
       TRIM(LEADING 'x' FROM s) AS t2,
       TRIM(BOTH 'x' FROM s) AS t3,
       SUBSTRING(TRIM(s) FROM 7 FOR 5) AS sub,
       POSITION('World' IN s) AS pos,
       CHAR_LENGTH(s) AS len,
       UPPER(SUBSTRING(s, 3, 5)) AS up,
       EXTRACT(YEAR FROM ts) AS y,
       EXTRACT(DAY FROM ts) AS d,
       DATE_FORMAT(ts, 'yyyy/MM/dd HH:mm') AS f,
       FLOOR(ts TO HOUR) AS h,
       TO_TIMESTAMP_LTZ(n, 0) AS ltz,
       FROM_UNIXTIME(n) AS fu
FROM t;
