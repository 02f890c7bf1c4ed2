-- Slack installations: one row per team, the bot token sealed.

-- name: SlackInstallationSave :one
-- A reinstall replaces everything but created_at.
INSERT INTO slack_installations (
    team_id, team_name, bot_user_id, app_id, scope,
    bot_token, installed_by, created_at, updated_at
) VALUES (
    sqlc.arg(team_id), sqlc.arg(team_name), sqlc.arg(bot_user_id), sqlc.arg(app_id), sqlc.arg(scope),
    sqlc.arg(bot_token), sqlc.arg(installed_by), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER)
)
ON CONFLICT (team_id) DO UPDATE
SET team_name = excluded.team_name,
    bot_user_id = excluded.bot_user_id,
    app_id = excluded.app_id,
    scope = excluded.scope,
    bot_token = excluded.bot_token,
    installed_by = excluded.installed_by,
    updated_at = excluded.updated_at
RETURNING *;

-- name: SlackInstallationGet :one
SELECT * FROM slack_installations WHERE team_id = sqlc.arg(team_id);

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
SET bot_token = sqlc.arg(bot_token), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE team_id = sqlc.arg(team_id) AND bot_token = sqlc.arg(expect)
RETURNING *;
