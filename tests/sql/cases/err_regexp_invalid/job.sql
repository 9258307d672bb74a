-- A literal pattern that does not compile is refused at plan time, naming it and PCRE2's
-- reason: Flink would run the job and give NULL for every record (logging the
-- PatternSyntaxException each time), which no job wants; it is also where a Java-only
-- construct (\p{Alpha}, [a-z&&[^x]]) shows. A pattern read from a column still gives NULL.
-- flink-oracle: differs sluice refuses a literal regular expression that does not compile, Flink gives NULL per record
-- flink-oracle: skip
CREATE TABLE t (s STRING)
  WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
SELECT s, REGEXP_EXTRACT(s, 'a(b', 1) FROM t;
