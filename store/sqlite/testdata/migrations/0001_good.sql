CREATE TABLE test_good (id INTEGER PRIMARY KEY, note TEXT NOT NULL);
INSERT INTO test_good (note) VALUES ('applied');
