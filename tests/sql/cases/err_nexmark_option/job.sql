-- A bad value of a Nexmark option is refused naming the option and the allowed range.
-- flink-oracle: differs Flink has no connector for sluice's seeded Nexmark generator
-- flink-oracle: skip
CREATE TABLE datagen (
  event_type INT,
  bid ROW<auction BIGINT, price BIGINT, `dateTime` TIMESTAMP(3)>
) WITH ('connector' = 'nexmark', 'events.num' = '10',
        'bid.hot-ratio.auctions' = '0');
SELECT bid.auction FROM datagen;
