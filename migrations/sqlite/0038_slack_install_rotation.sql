-- Slack installs that stay valid: token rotation, organisation-wide installs
-- on Enterprise Grid, and what the admin view of installs shows. Same shape
-- as Postgres in this dialect's conventions (INTEGER unix microseconds,
-- INTEGER 0/1 booleans); the Postgres file says what each column is for.

ALTER TABLE slack_installations ADD COLUMN enterprise_id TEXT NOT NULL DEFAULT '';
ALTER TABLE slack_installations ADD COLUMN enterprise_name TEXT NOT NULL DEFAULT '';
ALTER TABLE slack_installations ADD COLUMN enterprise_install INTEGER NOT NULL DEFAULT 0 CHECK (enterprise_install IN (0, 1));
ALTER TABLE slack_installations ADD COLUMN refresh_token TEXT NOT NULL DEFAULT '' CHECK (refresh_token = '' OR refresh_token LIKE 'v1:%');
ALTER TABLE slack_installations ADD COLUMN token_expires_at INTEGER;
ALTER TABLE slack_installations ADD COLUMN refresh_holder TEXT NOT NULL DEFAULT '';
ALTER TABLE slack_installations ADD COLUMN refresh_until INTEGER;
ALTER TABLE slack_installations ADD COLUMN refresh_error TEXT NOT NULL DEFAULT '';
ALTER TABLE slack_installations ADD COLUMN refresh_failed_at INTEGER;
ALTER TABLE slack_installations ADD COLUMN refresh_stopped INTEGER NOT NULL DEFAULT 0 CHECK (refresh_stopped IN (0, 1));
ALTER TABLE slack_installations ADD COLUMN last_event_at INTEGER;

CREATE INDEX slack_installations_expiring ON slack_installations (token_expires_at)
    WHERE refresh_token <> '' AND refresh_stopped = 0;
CREATE INDEX slack_installations_refresh_stopped ON slack_installations (team_id)
    WHERE refresh_stopped = 1;

CREATE TABLE slack_installation_teams (
    team_id       TEXT PRIMARY KEY CHECK (team_id <> ''),
    installation  TEXT NOT NULL REFERENCES slack_installations (team_id) ON DELETE CASCADE,
    last_event_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX slack_installation_teams_installation ON slack_installation_teams (installation);
