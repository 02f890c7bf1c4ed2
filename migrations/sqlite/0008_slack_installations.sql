-- The Slack app installed in a team (OAuth v2), one row per team. Same shape
-- as Postgres in this dialect's conventions (INTEGER unix microseconds). The
-- bot token is sealed by package secret; the CHECK keeps clear text out.

CREATE TABLE slack_installations (
    team_id      TEXT PRIMARY KEY CHECK (team_id <> ''),
    team_name    TEXT NOT NULL DEFAULT '',
    bot_user_id  TEXT NOT NULL CHECK (bot_user_id <> ''),
    app_id       TEXT NOT NULL DEFAULT '',
    scope        TEXT NOT NULL DEFAULT '',
    bot_token    TEXT NOT NULL CHECK (bot_token LIKE 'v1:%'),
    installed_by TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
) WITHOUT ROWID;
