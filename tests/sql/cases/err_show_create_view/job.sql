-- SHOW CREATE TABLE of a view is refused, naming it (Flink refuses it too: "SHOW CREATE
-- TABLE is only supported for tables, but ... is a view").
CREATE TABLE orders (id BIGINT, customer STRING)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');
CREATE VIEW ann AS SELECT id FROM orders WHERE customer = 'ann';
SHOW CREATE TABLE ann;
