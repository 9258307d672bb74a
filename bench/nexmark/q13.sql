-- Nexmark q13, bounded side input join: every bid enriched with the value of its auction
-- modulo 10,000 from a bounded table, read as a lookup join on processing time (Flink's
-- StreamExecLookupJoin; sluice reads the table whole before the job starts, as a full
-- lookup cache does). The side input is the benchmark's SideInputGenerator file, 10,000
-- lines "i,i"; its path is a placeholder that the benchmark and tests/flink/nexmark.py
-- replace with a file they write.
CREATE TABLE side_input (
  key BIGINT,
  `value` VARCHAR
) WITH (
  'connector' = 'filesystem',
  'path' = '${NEXMARK_SIDE_INPUT}',
  'format' = 'csv'
);

CREATE TABLE nexmark_q13 (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  `dateTime` TIMESTAMP(3),
  `value` VARCHAR
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q13
SELECT
    B.auction,
    B.bidder,
    B.price,
    B.`dateTime`,
    S.`value`
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON MOD(B.auction, 10000) = S.key;
