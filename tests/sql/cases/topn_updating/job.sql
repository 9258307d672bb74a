-- Top-N over updating inputs (Flink's RetractableTopNFunction): the two most clicked items
-- per category while the counts of a GROUP BY change (-U/+U move rows up and down), and
-- the two largest stock rows per shop from a Debezium changelog, where a delete lets the
-- third row up and an update moves a row to the top. Compared once applied.
CREATE TABLE clicks (cat STRING, item STRING)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/clicks.jsonl', 'format' = 'json');

CREATE TABLE stock (id INT, shop STRING, qty INT)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/stock_dbz.jsonl',
      'format' = 'debezium-json');

SELECT * FROM (
  SELECT cat, item, n, ROW_NUMBER() OVER (PARTITION BY cat ORDER BY n DESC) AS rn
  FROM (SELECT cat, item, COUNT(*) AS n FROM clicks GROUP BY cat, item))
WHERE rn <= 2;

SELECT shop, id, qty FROM (
  SELECT shop, id, qty, ROW_NUMBER() OVER (PARTITION BY shop ORDER BY qty DESC) AS rn
  FROM stock)
WHERE rn <= 2;
