-- The Slack app installed in a team through the OAuth v2 flow: one row per
-- team, with the team's bot token sealed by package secret (AES-256-GCM,
-- "v1:<key id>:<ciphertext>", bound to this row), never in clear text.
-- Removed when the app is uninstalled or its tokens are revoked.

CREATE TABLE slack_installations (
    team_id      text PRIMARY KEY CHECK (team_id <> ''),
    team_name    text NOT NULL DEFAULT '',
    bot_user_id  text NOT NULL CHECK (bot_user_id <> ''),
    app_id       text NOT NULL DEFAULT '',
    scope        text NOT NULL DEFAULT '',
    bot_token    text NOT NULL CHECK (bot_token LIKE 'v1:%'),
    installed_by text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
