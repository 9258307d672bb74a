-- event-time temporal LEFT JOIN: each order takes the rate valid at its time; GBP has none
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

SELECT o.id, o.amount * r.rate AS v, r.rate
FROM orders AS o
LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur;
