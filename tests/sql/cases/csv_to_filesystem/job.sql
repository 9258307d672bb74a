-- CSV in, JSON lines out through INSERT INTO a filesystem sink; the malformed row (bad
-- timestamp) goes to the dead-letter output and the job goes on; an empty field is NULL
-- flink-oracle: differs Flink fails the job on the empty DOUBLE and on the bad timestamp:
-- flink-oracle: differs told to go on, it keeps the bad row with a NULL ts (sluice: dead letter)
-- flink-oracle: flink-replace 'format' = 'csv'); => 'format' = 'csv', 'csv.null-literal' = '', 'csv.ignore-parse-errors' = 'true');
-- flink-oracle: flink-only-rows "sensor": "S3"
CREATE TABLE readings (
  sensor STRING,
  ts TIMESTAMP(3),
  temp DOUBLE,
  status STRING
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/readings.csv', 'format' = 'csv');

CREATE TABLE sink (
  sensor STRING,
  fahrenheit DOUBLE,
  ts TIMESTAMP(3)
) WITH ('connector' = 'filesystem', 'path' = '@OUT@/sink', 'format' = 'json');

INSERT INTO sink
SELECT UPPER(sensor), temp * 9 / 5 + 32, ts FROM readings WHERE status = 'ok' OR temp IS NULL;
