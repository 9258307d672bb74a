-- GROUPING SETS, ROLLUP and CUBE over an updating GROUP BY (Flink's Expand then one
-- aggregation): each set's groups are those of a GROUP BY of that set alone, the columns
-- a set lacks read NULL, and GROUPING() tells a NULL of a missing column from a NULL value.
CREATE TABLE sales (region STRING, product STRING, qty INT)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/sales.jsonl', 'format' = 'json');

SELECT region, product, SUM(qty) AS total, COUNT(*) AS n
FROM sales GROUP BY GROUPING SETS ((region, product), (region), ());

SELECT region, product, SUM(qty) AS total, GROUPING(region, product) AS g
FROM sales GROUP BY ROLLUP (region, product);

SELECT region, product, COUNT(qty) AS nq, GROUPING(product) AS gp
FROM sales WHERE qty > 1 GROUP BY CUBE (region, product);

-- a grouping expression, a plain key beside a ROLLUP, and HAVING on a set's result
SELECT UPPER(region) AS r, product, MAX(qty) AS top
FROM sales GROUP BY product, ROLLUP (UPPER(region)) HAVING MAX(qty) > 2;
