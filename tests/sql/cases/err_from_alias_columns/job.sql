-- `AS t (columns)` after a FROM item renames every column it has (Flink: "List of column
-- aliases must have same degree as table")
SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS t(a);
