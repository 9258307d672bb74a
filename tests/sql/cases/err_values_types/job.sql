-- a VALUES column takes values of one common type: an INT and a STRING have none (Flink:
-- "Values passed to VALUES operator must have compatible types"); the error points at the
-- value and says what to do
SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (3, 4)) AS t(a, b);
