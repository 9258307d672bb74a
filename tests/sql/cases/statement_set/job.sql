-- one job, two INSERTs into print tables (EXECUTE STATEMENT SET)
CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');
CREATE TABLE small (k STRING, v INT) WITH ('connector' = 'print');
CREATE TABLE big (k STRING, w BIGINT) WITH ('connector' = 'print');

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO small SELECT k, v FROM t WHERE v < 2;
  INSERT INTO big SELECT k, CAST(v AS BIGINT) * 100 FROM t WHERE v >= 2;
END;

-- a column list: the unlisted column is NULL
CREATE TABLE wide (w BIGINT, k STRING, note STRING) WITH ('connector' = 'print');
INSERT INTO wide (k, w) SELECT k, CAST(v AS BIGINT) FROM t WHERE k = 'c';
