-- temporal join against a changelog (debezium-json) versioned table: the update of EUR
-- at 00:00:10 is a new version; orders before it keep the old rate
CREATE TABLE orders (
  id INT,
  cur STRING,
  amount BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');

CREATE TABLE rates (
  cur STRING,
  rate BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts,
  PRIMARY KEY (cur) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/rates_dbz.jsonl',
        'format' = 'debezium-json');

SELECT o.id, o.amount * r.rate AS v, r.rate
FROM orders AS o
JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur;
