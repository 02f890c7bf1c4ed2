-- Sign-in to the web console. A login link (sent by the bot in a DM, valid
-- ten minutes, usable once) and a browser session are both a random secret
-- of which only the SHA-256 is kept, so a dump of this table signs nobody in.
-- person_id is the person signed in; NULL is the operator (who signed in
-- with SWITCHBOARD_API_TOKEN). used_at marks a link spent or a session
-- signed out. person_id names a row of another part and carries no foreign
-- key on purpose (as api_keys).

CREATE TABLE web_logins (
    id          uuid PRIMARY KEY,
    kind        text NOT NULL CHECK (kind IN ('link', 'session')),
    secret_hash bytea NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    person_id   uuid,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);

CREATE INDEX web_logins_expiry ON web_logins (expires_at);
