-- interval joins (Flink's TimeIntervalJoin): an order and its shipments within 4 s after
-- it (BETWEEN), and, as a LEFT join, with the orders that had none NULL-padded once the
-- watermark shows none can come; an insert-only output and state the watermark cleans.
-- Order 2's shipment is 6 s late, order 4's came before it, order 5 has none.
CREATE TABLE orders (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');

CREATE TABLE shipments (sid INT, order_id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/shipments.jsonl', 'format' = 'json');

SELECT o.id, s.sid
FROM orders AS o
JOIN shipments AS s
  ON o.id = s.order_id AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '4' SECOND;

SELECT o.id, s.sid
FROM orders AS o
LEFT JOIN shipments AS s
  ON o.id = s.order_id AND o.ts <= s.ts AND s.ts < o.ts + INTERVAL '4' SECOND;
