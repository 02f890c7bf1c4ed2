-- Sign-in to the web console (see the Postgres twin): login links and
-- browser sessions, each kept as the SHA-256 of its secret. person_id NULL
-- is the operator. TEXT ids, INTEGER unix microseconds.

CREATE TABLE web_logins (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('link', 'session')),
    secret_hash BLOB NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    person_id   TEXT,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    used_at     INTEGER
);

CREATE INDEX web_logins_expiry ON web_logins (expires_at);
