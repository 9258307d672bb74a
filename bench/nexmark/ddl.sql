-- The Nexmark source and its views, as nexmark/nexmark's Flink module declares them
-- (ddl_gen.sql, ddl_views.sql): one table of events, event_type telling which of the ROWs
-- person, auction, bid is set, and the views every query reads. A query file qN.sql runs
-- after this one (tools and tests concatenate them). events.num here is the benchmark's
-- suite size; runs that want fewer events replace it.
CREATE TABLE datagen (
  event_type INT,
  person ROW<
    id BIGINT,
    name STRING,
    emailAddress STRING,
    creditCard STRING,
    city STRING,
    state STRING,
    `dateTime` TIMESTAMP(3),
    extra STRING>,
  auction ROW<
    id BIGINT,
    itemName STRING,
    description STRING,
    initialBid BIGINT,
    reserve BIGINT,
    `dateTime` TIMESTAMP(3),
    expires TIMESTAMP(3),
    seller BIGINT,
    category BIGINT,
    extra STRING>,
  bid ROW<
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    channel STRING,
    url STRING,
    `dateTime` TIMESTAMP(3),
    extra STRING>,
  `dateTime` AS
    CASE
      WHEN event_type = 0 THEN person.`dateTime`
      WHEN event_type = 1 THEN auction.`dateTime`
      ELSE bid.`dateTime`
    END,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
  'connector' = 'nexmark',
  'first-event.rate' = '10000000',
  'next-event.rate' = '10000000',
  'events.num' = '100000000',
  'person.proportion' = '1',
  'auction.proportion' = '3',
  'bid.proportion' = '46'
);

CREATE VIEW person AS
SELECT person.id, person.name, person.emailAddress, person.creditCard, person.city,
       person.state, `dateTime`, person.extra
FROM datagen WHERE event_type = 0;

CREATE VIEW auction AS
SELECT auction.id, auction.itemName, auction.description, auction.initialBid, auction.reserve,
       `dateTime`, auction.expires, auction.seller, auction.category, auction.extra
FROM datagen WHERE event_type = 1;

CREATE VIEW bid AS
SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, `dateTime`, bid.extra
FROM datagen WHERE event_type = 2;
