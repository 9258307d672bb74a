-- one file with a temporal join and a regular join: both plan and both run (the regular
-- join once made the whole file fail to plan). The regular join matches every rate an
-- order's currency ever had (the rate log, the same rows without a primary key); the
-- temporal join only the one valid at the order's time.
CREATE TABLE orders (
  id INT,
  cur STRING,
  amount BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

CREATE TABLE rates (
  cur STRING,
  rate BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts,
  PRIMARY KEY (cur) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/rates.jsonl', 'format' = 'json',
        'scan.watermark.emit.strategy' = 'on-event');

SELECT o.id, o.amount * r.rate AS v
FROM orders AS o
JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur;

CREATE TABLE rate_log (
  cur STRING,
  rate BIGINT,
  ts TIMESTAMP(3)
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/rates.jsonl', 'format' = 'json');

SELECT o.id, r.rate
FROM orders AS o
JOIN rate_log AS r ON o.cur = r.cur;
