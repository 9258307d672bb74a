-- deduplication on processing time (PROCTIME() computed column): keep first keeps each
-- user's first arrival (+I only), keep last replaces on every arrival (-U/+U)
CREATE TABLE events (
  id INT,
  usr STRING,
  ts TIMESTAMP(3),
  proc AS PROCTIME()
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/events.jsonl', 'format' = 'json');

SELECT id, usr
FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY usr ORDER BY proc ASC) AS rn FROM events)
WHERE rn = 1;

SELECT id, usr
FROM (SELECT id, usr, proc, ROW_NUMBER() OVER (PARTITION BY usr ORDER BY proc DESC) AS rn
      FROM events)
WHERE rn = 1;
