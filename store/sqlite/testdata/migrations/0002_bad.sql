-- The first statement succeeds, the second is broken: the runner must roll
-- both back and leave the version at 1.
CREATE TABLE test_half (id INTEGER PRIMARY KEY);
CREATE TABLE test_broken (id INTEGER PRIMARY KEY,;
