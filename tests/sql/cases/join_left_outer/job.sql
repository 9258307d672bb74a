-- LEFT JOIN of two append-only streams: a customer without orders comes out NULL-padded;
-- a customer whose orders arrive after it is first padded, then the padded row is retracted
-- (-D) when its first order arrives (Flink's StreamingJoinOperator). Which side's rows come
-- first depends on the sources, so the case compares the changelog once applied.
-- An extra condition in ON (o.amount > 5) keeps customer 2's small order out of the join
-- but not customer 2 out of the result.
CREATE TABLE customers (
  id INT,
  name STRING
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/customers.jsonl', 'format' = 'json');

CREATE TABLE orders (
  order_id INT,
  customer_id INT,
  amount INT
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');

SELECT c.id, c.name, o.order_id, o.amount
FROM customers AS c
LEFT JOIN orders AS o ON c.id = o.customer_id AND o.amount > 5;
