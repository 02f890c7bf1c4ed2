-- Skills in layers (platform, owner, agent). Same shape as Postgres in this
-- dialect's conventions (INTEGER unix microseconds, JSON in TEXT).

CREATE TABLE skills (
    layer        TEXT NOT NULL CHECK (layer IN ('platform', 'owner', 'agent')),
    scope        TEXT NOT NULL CHECK ((layer = 'platform') = (scope = '')),
    name         TEXT NOT NULL CHECK (name <> ''),
    description  TEXT NOT NULL CHECK (description <> ''),
    front_matter TEXT NOT NULL DEFAULT '',
    instructions TEXT NOT NULL CHECK (instructions <> ''),
    files        TEXT NOT NULL DEFAULT '{}',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (layer, scope, name)
) WITHOUT ROWID;

CREATE INDEX skills_name ON skills (name);
