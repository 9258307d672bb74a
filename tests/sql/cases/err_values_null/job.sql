-- a bare NULL in VALUES has no type, even where other rows would give one (Flink: "Illegal
-- use of 'NULL'"); CAST(NULL AS INT) is the way
SELECT * FROM (VALUES (1, 'a'), (NULL, 'b')) AS t(a, b);
