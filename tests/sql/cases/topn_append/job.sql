-- Top-N over an append-only stream (Flink's AppendOnlyTopNFunction): the two best-selling
-- items per category with their row number, then the same without it (Flink's "no rank
-- number" form: a row entering the top +I, one leaving -D), then the overall two
-- smallest (no PARTITION BY). A row that ties with an earlier one goes after it; NULL
-- sorts first ascending. Every changelog line is Flink 2.3's.
CREATE TABLE sales (cat STRING, item STRING, sales INT)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/sales.jsonl', 'format' = 'json');

SELECT * FROM (
  SELECT cat, item, sales,
    ROW_NUMBER() OVER (PARTITION BY cat ORDER BY sales DESC) AS rn
  FROM sales)
WHERE rn <= 2;

SELECT cat, item FROM (
  SELECT cat, item, sales,
    ROW_NUMBER() OVER (PARTITION BY cat ORDER BY sales DESC) AS rn
  FROM sales)
WHERE rn <= 2;

SELECT item, sales, rn FROM (
  SELECT item, sales, ROW_NUMBER() OVER (ORDER BY sales, item DESC) AS rn FROM sales)
WHERE rn < 3;
