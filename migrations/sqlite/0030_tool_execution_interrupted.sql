-- A tool call cut off by a crash or a stop ends its marker as
-- 'interrupted', as in Postgres. SQLite cannot change a CHECK in place: the
-- table is rebuilt with the same columns in the same order and its rows
-- copied as they are. No table references tool_executions and no trigger
-- is defined on it, so dropping the old table with foreign keys on is safe;
-- the new table's reference to conversations is checked as rows are copied.
CREATE TABLE tool_executions_new (
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    call_id         TEXT NOT NULL CHECK (call_id <> ''),
    state           TEXT NOT NULL CHECK (state IN ('executing', 'finished', 'interrupted')),
    started_at      INTEGER NOT NULL,
    finished_at     INTEGER,
    PRIMARY KEY (conversation_id, call_id)
) WITHOUT ROWID;

INSERT INTO tool_executions_new (conversation_id, call_id, state, started_at, finished_at)
SELECT conversation_id, call_id, state, started_at, finished_at FROM tool_executions;

DROP TABLE tool_executions;
ALTER TABLE tool_executions_new RENAME TO tool_executions;
