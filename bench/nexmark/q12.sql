-- Nexmark q12, processing-time windows: how many bids does a user make within a fixed
-- processing-time limit? Bids of each bidder in 10-second TUMBLE windows of the wall clock.
-- Its rows depend on the clock, so it is measured (tools/dev bench nexmark) but not compared
-- with Flink's rows (tests/flink/nexmark.py).
CREATE TABLE nexmark_q12 (
    bidder BIGINT,
    bid_count BIGINT,
    starttime TIMESTAMP(3),
    endtime TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

CREATE VIEW B AS SELECT *, PROCTIME() AS p_time FROM bid;

INSERT INTO nexmark_q12
SELECT
    bidder,
    COUNT(*) AS bid_count,
    window_start AS starttime,
    window_end AS endtime
FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
