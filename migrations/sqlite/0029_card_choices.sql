-- Card choices, as in Postgres in this dialect's conventions (TEXT ids,
-- INTEGER unix microseconds).

CREATE TABLE card_choices (
    entry_id        TEXT PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    action_id       TEXT NOT NULL CHECK (action_id <> ''),
    value           TEXT NOT NULL DEFAULT '',
    label           TEXT NOT NULL DEFAULT '',
    platform        TEXT NOT NULL DEFAULT '',
    user_id         TEXT NOT NULL DEFAULT '',
    user_name       TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL
) WITHOUT ROWID;
