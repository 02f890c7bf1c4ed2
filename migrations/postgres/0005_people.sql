-- People: one record per human, the platform identities linked to it, and
-- the one-time codes that link a second identity deliberately. A merged
-- record stays (merged_into set) so ids kept elsewhere still resolve.

CREATE TABLE people (
    id           uuid PRIMARY KEY,
    display_name text NOT NULL DEFAULT '',
    time_zone    text NOT NULL DEFAULT '',
    merged_into  uuid REFERENCES people (id),
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);

-- workspace is the Slack team; '' where user ids are global (Discord).
CREATE TABLE person_identities (
    platform     text NOT NULL CHECK (platform <> ''),
    workspace    text NOT NULL,
    user_id      text NOT NULL CHECK (user_id <> ''),
    person_id    uuid NOT NULL REFERENCES people (id),
    refreshed_at timestamptz,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (platform, workspace, user_id)
);

CREATE INDEX person_identities_person ON person_identities (person_id);

-- Only a hash of each code is kept.
CREATE TABLE person_link_codes (
    code_hash  text PRIMARY KEY,
    person_id  uuid NOT NULL REFERENCES people (id),
    platform   text NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL
);

CREATE INDEX person_link_codes_person ON person_link_codes (person_id);
