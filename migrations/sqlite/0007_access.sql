-- Who may talk to agents: approved pairings per platform identity and the
-- record of refusal notices (one a day per person). Same shape as Postgres,
-- in this dialect's conventions (INTEGER unix microseconds).

CREATE TABLE pairings (
    platform    TEXT NOT NULL CHECK (platform <> ''),
    user_id     TEXT NOT NULL CHECK (user_id <> ''),
    workspace   TEXT NOT NULL DEFAULT '',
    user_name   TEXT NOT NULL DEFAULT '',
    code        TEXT NOT NULL CHECK (code <> ''),
    status      TEXT NOT NULL CHECK (status IN ('pending', 'approved')),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    approved_at INTEGER,
    approved_by TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (platform, user_id)
) WITHOUT ROWID;

CREATE UNIQUE INDEX pairings_code ON pairings (code);

CREATE TABLE refusal_notices (
    platform   TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    day        TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (platform, user_id, day)
) WITHOUT ROWID;
