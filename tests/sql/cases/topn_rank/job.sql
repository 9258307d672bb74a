-- RANK() and DENSE_RANK() Top-N: tied rows share a rank; RANK skips the ranks they fill,
-- DENSE_RANK does not (the SQL definitions). Rows ranked 2 to 3 only (rk BETWEEN 2 AND 3).
-- flink-oracle: differs Flink 2.3 refuses RANK() and DENSE_RANK() on streams ("not supported currently")
-- flink-oracle: skip
CREATE TABLE sales (cat STRING, item STRING, sales INT)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/sales.jsonl', 'format' = 'json');

SELECT * FROM (
  SELECT cat, item, sales, RANK() OVER (PARTITION BY cat ORDER BY sales DESC) AS rk
  FROM sales)
WHERE rk <= 2;

SELECT * FROM (
  SELECT cat, item, sales, DENSE_RANK() OVER (PARTITION BY cat ORDER BY sales DESC) AS rk
  FROM sales)
WHERE rk BETWEEN 2 AND 3;
