-- FULL OUTER JOIN of two changelog (debezium-json) streams: updates and deletes on either
-- side retract the results they made (-D) and bring back a NULL-padded row when a row
-- loses its last match (+I), as Flink's StreamingJoinOperator does. Compared once applied:
-- the intermediate rows depend on which source is read first.
CREATE TABLE accounts (
  id INT,
  owner STRING,
  region STRING
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/accounts_dbz.jsonl',
        'format' = 'debezium-json');

CREATE TABLE limits (
  region STRING,
  max_amount BIGINT
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/limits_dbz.jsonl',
        'format' = 'debezium-json');

SELECT a.id, a.owner, a.region, l.region AS l_region, l.max_amount
FROM accounts AS a
FULL OUTER JOIN limits AS l ON a.region = l.region;
