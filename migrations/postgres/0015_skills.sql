-- Skills in the Agent Skills format, in layers: the platform's (scope ''),
-- an owner's (scope = the owner) and one agent's (scope = the agent's name).
-- The most specific layer wins when two share a name; that is decided when
-- they are read, so all three rows are kept. files maps each resource file's
-- path inside the skill to its content (base64 in JSON).

CREATE TABLE skills (
    layer        text NOT NULL CHECK (layer IN ('platform', 'owner', 'agent')),
    scope        text NOT NULL CHECK ((layer = 'platform') = (scope = '')),
    name         text NOT NULL CHECK (name <> ''),
    description  text NOT NULL CHECK (description <> ''),
    front_matter text NOT NULL DEFAULT '',
    instructions text NOT NULL CHECK (instructions <> ''),
    files        jsonb NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (layer, scope, name)
);

CREATE INDEX skills_name ON skills (name);
