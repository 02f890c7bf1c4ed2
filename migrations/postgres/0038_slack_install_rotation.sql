-- Slack installs that stay valid: token rotation, organisation-wide installs
-- on Enterprise Grid, and what the admin view of installs shows.
--
-- An organisation-wide install (is_enterprise_install) has no team: its row
-- is keyed by the enterprise id (E…) in team_id, which no team id can equal
-- (team ids start with T), and enterprise_install is set. The teams whose
-- events it has served are in slack_installation_teams, so that a post to a
-- team finds the install from the team alone, on any instance.
--
-- With token rotation on in the Slack app, the bot token expires
-- (token_expires_at) and refresh_token (sealed like the bot token, "" without
-- rotation) buys the next one, once: Slack revokes a refresh token when it is
-- used. So one instance renews a token: it claims the row (refresh_holder
-- until refresh_until) with a compare-and-swap on the refresh token, and
-- stores the new pair expecting the old refresh token. A renewal Slack
-- refused for good (invalid_refresh_token) sets refresh_stopped and is not
-- tried again until the app is reinstalled; refresh_error says why.

ALTER TABLE slack_installations
    ADD COLUMN enterprise_id      text NOT NULL DEFAULT '',
    ADD COLUMN enterprise_name    text NOT NULL DEFAULT '',
    ADD COLUMN enterprise_install boolean NOT NULL DEFAULT false,
    ADD COLUMN refresh_token      text NOT NULL DEFAULT '' CHECK (refresh_token = '' OR refresh_token LIKE 'v1:%'),
    ADD COLUMN token_expires_at   timestamptz,
    ADD COLUMN refresh_holder     text NOT NULL DEFAULT '',
    ADD COLUMN refresh_until      timestamptz,
    ADD COLUMN refresh_error      text NOT NULL DEFAULT '',
    ADD COLUMN refresh_failed_at  timestamptz,
    ADD COLUMN refresh_stopped    boolean NOT NULL DEFAULT false,
    ADD COLUMN last_event_at      timestamptz;

-- The renewer's read: rotating tokens by expiry.
CREATE INDEX slack_installations_expiring ON slack_installations (token_expires_at)
    WHERE refresh_token <> '' AND NOT refresh_stopped;
-- doctor and /readyz: the installs whose renewal stopped.
CREATE INDEX slack_installations_refresh_stopped ON slack_installations (team_id)
    WHERE refresh_stopped;

CREATE TABLE slack_installation_teams (
    team_id       text PRIMARY KEY CHECK (team_id <> ''),
    installation  text NOT NULL REFERENCES slack_installations (team_id) ON DELETE CASCADE,
    last_event_at timestamptz NOT NULL
);
CREATE INDEX slack_installation_teams_installation ON slack_installation_teams (installation);
