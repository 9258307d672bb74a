-- an inner join over an updating input: the GROUP BY's -U/+U pass through the join with
-- their kind (Flink forwards the input's RowKind in an inner join), so the joined count
-- of each user follows its clicks.
CREATE TABLE clicks (user_id INT, url STRING)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/clicks.jsonl', 'format' = 'json');

CREATE TABLE users (id INT, name STRING)
WITH ('connector' = 'filesystem', 'path' = '@DIR@/users.jsonl', 'format' = 'json');

SELECT u.name, c.n
FROM (SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id) AS c
JOIN users AS u ON c.user_id = u.id;
