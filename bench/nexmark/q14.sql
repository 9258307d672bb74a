-- Nexmark q14, calculation: bid prices converted, the bid's time of day named, and the
-- count of 'c' in its extra field by a user function (count_char, bench/nexmark/
-- count_char.c: a C function where the suite registers a Java one), for bids in a price
-- band. The library's directory must be on LD_LIBRARY_PATH (build/bench).
CREATE FUNCTION count_char AS 'libnexmark_udf.so:count_char' LANGUAGE C;

CREATE TABLE nexmark_q14 (
    auction BIGINT,
    bidder BIGINT,
    price  DECIMAL(23, 3),
    bidTimeType VARCHAR,
    `dateTime` TIMESTAMP(3),
    extra VARCHAR,
    c_counts BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q14
SELECT
    auction,
    bidder,
    0.908 * price AS price,
    CASE
        WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime'
        WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime'
        ELSE 'otherTime'
    END AS bidTimeType,
    `dateTime`,
    extra,
    count_char(extra, 'c') AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
