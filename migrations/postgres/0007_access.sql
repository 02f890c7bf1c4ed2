-- Who may talk to agents. A stranger's DM under the pairing policy reaches
-- no agent; it gets a one-time code that an operator or admin approves,
-- and the approval is kept here for good, per platform identity. Refused
-- messages are stored nowhere: refusal_notices only remembers that a person
-- was told, so they are told at most once a day.

CREATE TABLE pairings (
    platform    text NOT NULL CHECK (platform <> ''),
    user_id     text NOT NULL CHECK (user_id <> ''),
    workspace   text NOT NULL DEFAULT '',
    user_name   text NOT NULL DEFAULT '',
    code        text NOT NULL CHECK (code <> ''),
    status      text NOT NULL CHECK (status IN ('pending', 'approved')),
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    approved_at timestamptz,
    approved_by text NOT NULL DEFAULT '',
    PRIMARY KEY (platform, user_id)
);

-- An operator types a code; two live identities never share one.
CREATE UNIQUE INDEX pairings_code ON pairings (code);

CREATE TABLE refusal_notices (
    platform   text NOT NULL,
    user_id    text NOT NULL,
    day        text NOT NULL, -- the UTC date, YYYY-MM-DD
    created_at timestamptz NOT NULL,
    PRIMARY KEY (platform, user_id, day)
);
