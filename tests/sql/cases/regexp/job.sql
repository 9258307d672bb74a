-- REGEXP, REGEXP_EXTRACT and REGEXP_REPLACE as Flink's SqlFunctionUtils over java.util.regex
-- (sluice: PCRE2 with Java-like options): the first match anywhere (find, not matches);
-- REGEXP_EXTRACT's group defaults to 0 (the whole match), and a group out of range, a group
-- that took no part in the match, no match, a pattern that does not compile (read from a
-- column) and any NULL argument give NULL; REGEXP is FALSE for an empty or invalid pattern;
-- REGEXP_REPLACE's replacement is literal ('$1' is not a group reference) and an empty match
-- advances one character. Java's syntax in the patterns: \d and \w ASCII only, `.` one code
-- point but no line terminator (\r included), `$` before a final line break, \uhhhh,
-- lookbehind, named groups, (?i), reluctant and possessive quantifiers. Results that could
-- hold a line break have their white space made '_' (expected.out is one row a line).
-- flink-oracle: differs (?i) folds non-ASCII letters too in sluice (PCRE2 in UTF mode), as Java only with UNICODE_CASE (?u)
-- flink-oracle: flink-replace (?i)H\u00c9L+O => (?iu)H\u00c9L+O
CREATE TABLE t (
  id INT,
  s STRING,
  re STRING,
  g INT
) WITH ('connector' = 'filesystem', 'path' = '@DIR@/t.jsonl', 'format' = 'json');

SELECT id,
       REGEXP_EXTRACT(s, 'f(o+)(x)?') AS whole,
       REGEXP_EXTRACT(s, 'f(o+)(x)?', 1) AS g1,
       REGEXP_EXTRACT(s, 'f(o+)(x)?', 2) AS g2_unset,
       REGEXP_EXTRACT(s, 'f(o+)(x)?', 3) AS g3_range,
       REGEXP_EXTRACT(s, 'f(o+)(x)?', g) AS g_col,
       REGEXP_EXTRACT(s, re, 1) AS col_re,
       REGEXP(s, re) AS col_match,
       REGEXP_REPLACE(REGEXP_REPLACE(s, re, '<$1>'), '\s', '_') AS col_replace
FROM t;

SELECT id,
       REGEXP(s, '^\d+$') AS digits,
       REGEXP(s, '') AS empty_re,
       REGEXP_EXTRACT(s, '\d+') AS ascii_digits,
       REGEXP_EXTRACT(s, '(\w+)$', 1) AS last_word,
       REGEXP(s, 'a.b') AS no_line_break,
       REGEXP_EXTRACT(s, '(?<=k=)(?<v>[^;]*?);', 1) AS lookbehind,
       REGEXP_EXTRACT(s, '(?i)H\u00c9L+O') AS caseless,
       REGEXP_EXTRACT(s, 'w.r') AS code_point,
       REGEXP_REPLACE(REGEXP_REPLACE(s, 'a*', '-'), '\s', '_') AS empty_matches,
       REGEXP_REPLACE(REGEXP_REPLACE(s, '[0-9]++', '#'), '\s', '_') AS possessive,
       REGEXP_EXTRACT(s, CAST(NULL AS STRING)) AS null_re
FROM t;
