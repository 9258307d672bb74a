-- Nexmark q5, hot items: per 10 s window sliding by 2 s, the auctions with the most bids;
-- a HOP window count joined with the maximum of the same counts per window. Flink plans
-- MaxBids (a GROUP BY of window counts by their window bounds) as a window aggregate and
-- its output is insert-only; sluice plans it as an updating GROUP BY, so its output is a
-- changelog whose final rows are Flink's (tests/flink/nexmark.py), and MaxBids keeps one
-- row per window until the job ends.
CREATE TABLE nexmark_q5 (
  auction BIGINT,
  num BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q5
SELECT AuctionBids.auction, AuctionBids.num
FROM (
  SELECT auction, COUNT(*) AS num, window_start AS starttime, window_end AS endtime
  FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
  GROUP BY auction, window_start, window_end
) AS AuctionBids
JOIN (
  SELECT MAX(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
  FROM (
    SELECT COUNT(*) AS num, window_start AS starttime, window_end AS endtime
    FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
    GROUP BY auction, window_start, window_end
  ) AS CountBids
  GROUP BY CountBids.starttime, CountBids.endtime
) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime AND
   AuctionBids.num >= MaxBids.maxn;
