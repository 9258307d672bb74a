-- SPLIT_INDEX(s, sep, idx) as Flink's SqlFunctionUtils.splitIndex: the idx-th token (from 0)
-- of commons-lang's splitByWholeSeparatorPreserveAllTokens (empty tokens kept, an empty
-- separator splits at whitespace), NULL for an index out of range, a negative index, an
-- empty string or any NULL argument; a character code (1..255) as separator.
CREATE TABLE words (
  id INT,
  s STRING,
  sep STRING,
  i INT
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/words.jsonl', 'format' = 'json');

SELECT id, SPLIT_INDEX(s, sep, i) AS tok, SPLIT_INDEX(s, ',', 1) AS tok1,
       SPLIT_INDEX(s, 44, 0) AS by_code, SPLIT_INDEX(s, 246, 0) AS by_latin1,
       SPLIT_INDEX(s, 0, 0) AS bad_code
FROM words;
