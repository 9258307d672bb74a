-- DESCRIBE of a table the file has not created is refused, naming it (Flink refuses it too:
-- "Tables or views with the identifier ... doesn't exist").
CREATE TABLE orders (id BIGINT, customer STRING)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');
DESCRIBE orders;
DESCRIBE order_lines;
