-- Slack installations: one row per team (or per enterprise for an
-- organisation-wide install), the tokens sealed.

-- name: SlackInstallationSave :one
-- A reinstall replaces everything but created_at and last_event_at, and
-- starts renewal afresh.
INSERT INTO slack_installations (
    team_id, team_name, bot_user_id, app_id, scope,
    bot_token, installed_by, enterprise_id, enterprise_name, enterprise_install,
    refresh_token, token_expires_at, created_at, updated_at
) VALUES (
    sqlc.arg(team_id), sqlc.arg(team_name), sqlc.arg(bot_user_id), sqlc.arg(app_id), sqlc.arg(scope),
    sqlc.arg(bot_token), sqlc.arg(installed_by), sqlc.arg(enterprise_id), sqlc.arg(enterprise_name), sqlc.arg(enterprise_install),
    sqlc.arg(refresh_token), sqlc.narg(token_expires_at), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER)
)
ON CONFLICT (team_id) DO UPDATE
SET team_name = excluded.team_name,
    bot_user_id = excluded.bot_user_id,
    app_id = excluded.app_id,
    scope = excluded.scope,
    bot_token = excluded.bot_token,
    installed_by = excluded.installed_by,
    enterprise_id = excluded.enterprise_id,
    enterprise_name = excluded.enterprise_name,
    enterprise_install = excluded.enterprise_install,
    refresh_token = excluded.refresh_token,
    token_expires_at = excluded.token_expires_at,
    refresh_holder = '',
    refresh_until = NULL,
    refresh_error = '',
    refresh_failed_at = NULL,
    refresh_stopped = 0,
    updated_at = excluded.updated_at
RETURNING *;

-- name: SlackInstallationGet :one
SELECT * FROM slack_installations WHERE team_id = sqlc.arg(team_id);

-- name: SlackInstallationFind :one
-- The install that serves a team: its own, else the organisation-wide
-- install it was seen under, else its enterprise's organisation-wide one.
SELECT * FROM slack_installations
WHERE team_id = COALESCE(
    (SELECT i.team_id FROM slack_installations i WHERE i.team_id = sqlc.arg(team_id)),
    (SELECT t.installation FROM slack_installation_teams t WHERE t.team_id = sqlc.arg(team_id)),
    (SELECT i.team_id FROM slack_installations i WHERE i.team_id = sqlc.arg(enterprise_id) AND i.enterprise_install = 1));

-- name: SlackInstallationList :many
SELECT * FROM slack_installations
WHERE team_id > sqlc.arg(after_team_id)
ORDER BY team_id
LIMIT CAST(sqlc.arg(max_rows) AS INTEGER);

-- name: SlackInstallationDelete :execrows
DELETE FROM slack_installations WHERE team_id = sqlc.arg(team_id);

-- name: SlackInstallationReseal :one
-- No row back: the team is gone or its token is no longer expect.
UPDATE slack_installations
SET bot_token = sqlc.arg(bot_token),
    refresh_token = CASE WHEN CAST(sqlc.arg(refresh_token) AS TEXT) = '' THEN refresh_token ELSE CAST(sqlc.arg(refresh_token) AS TEXT) END,
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE team_id = sqlc.arg(team_id) AND bot_token = sqlc.arg(expect)
RETURNING *;

-- name: SlackInstallationExpiring :many
SELECT * FROM slack_installations
WHERE refresh_token <> '' AND refresh_stopped = 0
  AND token_expires_at < CAST(sqlc.arg(before) AS INTEGER)
  AND (refresh_until IS NULL OR refresh_until <= CAST(sqlc.arg(now) AS INTEGER))
ORDER BY token_expires_at
LIMIT CAST(sqlc.arg(max_rows) AS INTEGER);

-- name: SlackInstallationClaimRefresh :one
UPDATE slack_installations
SET refresh_holder = sqlc.arg(holder), refresh_until = CAST(sqlc.arg(until) AS INTEGER)
WHERE team_id = sqlc.arg(team_id) AND refresh_token = sqlc.arg(expect) AND refresh_token <> '' AND refresh_stopped = 0
  AND (refresh_until IS NULL OR refresh_until <= CAST(sqlc.arg(now) AS INTEGER) OR refresh_holder = sqlc.arg(holder))
RETURNING *;

-- name: SlackInstallationRefreshed :one
UPDATE slack_installations
SET bot_token = sqlc.arg(bot_token), refresh_token = sqlc.arg(refresh_token),
    token_expires_at = CAST(sqlc.arg(token_expires_at) AS INTEGER),
    refresh_holder = '', refresh_until = NULL, refresh_error = '', refresh_failed_at = NULL,
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE team_id = sqlc.arg(team_id) AND refresh_token = sqlc.arg(expect)
RETURNING *;

-- name: SlackInstallationRefreshFailed :one
UPDATE slack_installations
SET refresh_holder = '', refresh_until = sqlc.narg(retry_at), refresh_error = sqlc.arg(error),
    refresh_failed_at = CAST(sqlc.arg(now) AS INTEGER), refresh_stopped = sqlc.arg(stop),
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE team_id = sqlc.arg(team_id) AND refresh_holder = sqlc.arg(holder)
RETURNING *;

-- name: SlackInstallationRefreshStopped :many
SELECT * FROM slack_installations WHERE refresh_stopped = 1 ORDER BY team_id LIMIT CAST(sqlc.arg(max_rows) AS INTEGER);

-- name: SlackInstallationTouch :execrows
UPDATE slack_installations SET last_event_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE team_id = sqlc.arg(team_id) AND (last_event_at IS NULL OR last_event_at < CAST(sqlc.arg(now) AS INTEGER));

-- name: SlackInstallationTeamNote :exec
INSERT INTO slack_installation_teams (team_id, installation, last_event_at)
SELECT sqlc.arg(team_id), s.team_id, CAST(sqlc.arg(now) AS INTEGER) FROM slack_installations s WHERE s.team_id = sqlc.arg(installation)
ON CONFLICT (team_id) DO UPDATE SET installation = excluded.installation, last_event_at = excluded.last_event_at;
