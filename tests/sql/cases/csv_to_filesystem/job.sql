-- CSV in, JSON lines out through INSERT INTO a filesystem sink; the malformed row (bad
-- timestamp) goes to the dead-letter output and the job goes on; an empty field is NULL
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
