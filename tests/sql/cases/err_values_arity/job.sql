-- every VALUES row has the same number of values (Flink: "Values passed to VALUES operator
-- must have compatible types"); the error points at the row that differs
SELECT * FROM (VALUES (1, 'a'), (2, 'b'),
                      (3)) AS t(a, b);
