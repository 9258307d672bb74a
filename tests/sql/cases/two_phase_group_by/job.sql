-- the updating GROUP BY in two phases (Flink applies it with mini-batch on): each sending
-- shard combines rows per key for up to 50 ms and the owner merges the partials, so 2 and 3
-- shards emit fewer -U/+U than 1 shard (no local stage there) but must leave the same rows
-- once applied; a key with 70 % of the rows is absorbed on the senders
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '50 ms';
SET 'table.exec.mini-batch.size' = '1000';

CREATE TABLE orders (user_id STRING, amount INT, qty INT) WITH (
  'connector' = 'filesystem',
  'path' = '@DIR@/orders.jsonl',
  'format' = 'json'
);

SELECT user_id, COUNT(*) AS n, SUM(amount) AS total, MIN(amount) AS lo, MAX(amount) AS hi,
       AVG(qty) AS mean_qty, COUNT(qty) AS nq
FROM orders
GROUP BY user_id;
