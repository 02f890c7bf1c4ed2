-- Each agent's personality document, every version kept: a replacement is a
-- new row with the next version, so old versions stay readable. Version 1
-- is the seed from the agent's persona in switchboard.yaml.

CREATE TABLE agent_personalities (
    agent_id   uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    version    integer NOT NULL CHECK (version > 0),
    text       text NOT NULL CHECK (text <> ''),
    author     text NOT NULL CHECK (author <> ''),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (agent_id, version)
);
