-- SHOW TABLES, SHOW VIEWS, SHOW USER FUNCTIONS, DESCRIBE / DESC and SHOW CREATE TABLE print what Flink's
-- TableResult.print() prints (the SQL client's tableau form), in the file's order among the
-- jobs' rows: physical, computed (typed as Flink types them: DECIMAL(5, 2) * 2 is
-- DECIMAL(16, 2), PROCTIME() a NOT NULL TIMESTAMP_LTZ(3) *PROCTIME*) and nested columns,
-- NOT NULL and primary key columns, the rowtime and its watermark written back as Calcite
-- writes it, options sorted by key. (SHOW CREATE TABLE is of tables whose path does not
-- depend on the checkout: the box is as wide as the text. Where sluice's DESCRIBE differs: a computed column's
-- VARCHAR(n) is STRING, and a DECIMAL wider than 18 digits is narrowed to 18 as sluice
-- computes it.) A view is described as reading it gives its columns: types, nullability and
-- time attributes through projections, aggregates and windows.
SHOW TABLES;
SHOW VIEWS;
SHOW USER FUNCTIONS;

CREATE TABLE orders (
  id BIGINT NOT NULL,
  customer STRING,
  amount DECIMAL(5, 2),
  ok BOOLEAN,
  ts TIMESTAMP(3),
  addr ROW<city STRING, zip INT NOT NULL>,
  cost AS amount * 2,
  late AS (id + 1) * 3 - id % 2,
  pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/orders.jsonl', 'format' = 'json');

CREATE TEMPORARY TABLE accounts (
  id INT,
  name STRING,
  since TIMESTAMP(3),
  score DOUBLE,
  tier AS CASE WHEN score > 10 THEN 'gold' ELSE 'plain' END,
  wide AS CAST(score AS DECIMAL(10, 2)) / 3 + (1 - score),
  WATERMARK FOR since AS since - INTERVAL '1' MINUTE,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = 'accounts.jsonl', 'format' = 'json',
        'json.ignore-parse-errors' = 'true');

CREATE TABLE events (
  e DOUBLE,
  f FLOAT,
  d DATE,
  l TIMESTAMP_LTZ(3),
  s VARCHAR(20),
  WATERMARK FOR l AS l
) WITH ('format' = 'json', 'path' = 'events.jsonl', 'connector' = 'filesystem');

SELECT id, cost, late FROM orders;

CREATE VIEW big_orders AS SELECT id, customer FROM orders WHERE amount > 10;
CREATE VIEW per_customer (who, n, top) AS
  SELECT customer, COUNT(*), MAX(amount) FROM orders GROUP BY customer;
CREATE VIEW per_minute AS
  SELECT window_start, window_end, COUNT(*) AS cnt, MAX(amount) AS top
  FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
  GROUP BY window_start, window_end;
CREATE VIEW projected AS SELECT id * 2 AS twice, ts, pt, UPPER(customer) AS up FROM orders;

SHOW TABLES;
SHOW VIEWS;
DESCRIBE orders;
DESC events;
DESCRIBE big_orders;
DESCRIBE per_customer;
DESC per_minute;
DESCRIBE projected;
SHOW CREATE TABLE accounts;
SHOW CREATE TABLE events;
