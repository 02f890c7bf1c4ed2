-- People, their platform identities and link codes. Same shape as Postgres
-- (see postgres/0005_people.sql), in this dialect's conventions (TEXT ids,
-- INTEGER unix microseconds).

CREATE TABLE people (
    id           TEXT PRIMARY KEY,
    display_name TEXT NOT NULL DEFAULT '',
    time_zone    TEXT NOT NULL DEFAULT '',
    merged_into  TEXT REFERENCES people (id),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE person_identities (
    platform     TEXT NOT NULL CHECK (platform <> ''),
    workspace    TEXT NOT NULL,
    user_id      TEXT NOT NULL CHECK (user_id <> ''),
    person_id    TEXT NOT NULL REFERENCES people (id),
    refreshed_at INTEGER,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (platform, workspace, user_id)
) WITHOUT ROWID;

CREATE INDEX person_identities_person ON person_identities (person_id);

CREATE TABLE person_link_codes (
    code_hash  TEXT PRIMARY KEY,
    person_id  TEXT NOT NULL REFERENCES people (id),
    platform   TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER,
    created_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX person_link_codes_person ON person_link_codes (person_id);
