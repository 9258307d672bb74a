-- VALUES with rows, as Flink has it: in FROM with a column list (AS t(a, b)), as a
-- statement, in a WITH, under WHERE and GROUP BY, and into a table (INSERT INTO t VALUES,
-- with a column list, and INSERT INTO t SELECT * FROM (VALUES ...)). A column's type is
-- the common type of its values, as Flink derives it: INT with DECIMAL(2, 1) is
-- DECIMAL(11, 1) (so 1 prints as 1.0), INT with BIGINT is BIGINT, strings of different
-- lengths a VARCHAR printed unpadded (CHAR_LENGTH of 'a' stays 1), a typed NULL makes the
-- column nullable. Rows are ROW(...), (...) or one bare expression.
CREATE TABLE o (k STRING, v INT) WITH ('connector' = 'print');

SELECT a, a * 2 AS twice FROM (VALUES (1), (2.5), (-3)) AS t(a);

SELECT s, CHAR_LENGTH(s) AS n, s || '|' AS bar FROM (VALUES ('a'), ('bcd'), ('')) AS t(s);

SELECT a + 1 AS a1, b FROM (VALUES (1, CAST(NULL AS STRING)), (CAST(NULL AS INT), 'x'),
                                   (2147483647, 'big')) AS t(a, b);

SELECT big, big + 1 AS after_big FROM (VALUES (1), (CAST(9000000000 AS BIGINT))) AS t(big);

SELECT * FROM (VALUES ROW(1, 2), ROW(3, 4)) AS t(x, y) WHERE x > 1;

SELECT x FROM (VALUES 5, 6 + 1) AS t(x);

VALUES (1, 'a', TRUE), (2, 'bb', FALSE);

WITH prices (item, price) AS (VALUES ('pen', 1.50), ('ink', 4.00), ('pen', 2.25))
SELECT item, SUM(price) AS total, COUNT(*) AS n FROM prices GROUP BY item;

INSERT INTO o VALUES ('x', 1), ('y', 2);

INSERT INTO o (v, k) VALUES (4, 'w');

INSERT INTO o SELECT UPPER(k), v * 10 FROM (VALUES ('z', 3)) AS t(k, v);
