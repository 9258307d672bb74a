-- Every statement form of the query parser in one job: window TVFs with named arguments,
-- SESSION with PARTITION BY, unions, joins of each kind, subqueries, dedup, views with the
-- the PyFlink lesson's trailing WATERMARK, INSERT, EXPLAIN and both statement set forms.
SET 'parallelism.default' = '2';

CREATE TEMPORARY TABLE Bid (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  bidder STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'number-of-rows' = '10');

CREATE TABLE sink1 (item STRING, n BIGINT) WITH ('connector' = 'print');
CREATE TABLE sink2 (item STRING, n BIGINT) WITH ('connector' = 'blackhole');

SELECT window_start, window_end, SUM(price) AS total
  FROM TABLE(
    TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end;

SELECT window_start, window_end, item, COUNT(*)
  FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)) AS w
  GROUP BY window_start, window_end, item HAVING COUNT(*) > 1;

SELECT * FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES));

SELECT window_start, item, SUM(price)
  FROM TABLE(SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))
  GROUP BY item, window_start, window_end;

SELECT item, price FROM Bid WHERE price > 2
UNION ALL
SELECT item, price * 2 FROM Bid WHERE price <= 2
ORDER BY item LIMIT 100;

SELECT DISTINCT b.item, `c`.bidder, t.* FROM Bid AS b
  INNER JOIN Bid c ON b.item = c.item
  LEFT OUTER JOIN (SELECT item, MAX(price) AS top FROM Bid GROUP BY item) t ON t.item = b.item
  CROSS JOIN Bid d, Bid e
  WHERE b.price BETWEEN 1 AND 10 AND c.bidder IS NOT NULL;

SELECT * FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY item ORDER BY bidtime DESC) AS rn FROM Bid
) WHERE rn = 1;

CREATE VIEW IF NOT EXISTS cheap (item, price, ts) AS
SELECT item, price, bidtime FROM Bid WHERE price < 5
WATERMARK FOR bidtime AS bidtime - INTERVAL '5' SECONDS;

INSERT INTO sink1 SELECT item, COUNT(*) FROM Bid GROUP BY item;
INSERT OVERWRITE sink2 (item, n) SELECT item, COUNT(DISTINCT bidder) FROM cheap GROUP BY item;

EXPLAIN PLAN FOR SELECT item FROM Bid;

EXECUTE STATEMENT SET BEGIN
  INSERT INTO sink1 SELECT item, 1 FROM Bid;
  INSERT INTO sink2 SELECT item, 2 FROM Bid;
END;

BEGIN STATEMENT SET;
INSERT INTO sink1 SELECT item, CAST(price AS BIGINT) FROM Bid;
END;

EXPLAIN STATEMENT SET BEGIN INSERT INTO sink1 SELECT item, 3 FROM Bid; END;
