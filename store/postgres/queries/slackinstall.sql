-- Slack installations: one row per team, the bot token sealed.

-- name: SlackInstallationSave :one
-- A reinstall replaces everything but created_at.
INSERT INTO slack_installations AS s (team_id, team_name, bot_user_id, app_id, scope, bot_token, installed_by, created_at, updated_at)
VALUES (@team_id, @team_name, @bot_user_id, @app_id, @scope, @bot_token, @installed_by, @now::timestamptz, @now::timestamptz)
ON CONFLICT (team_id) DO UPDATE
SET (team_name, bot_user_id, app_id, scope, bot_token, installed_by, updated_at)
  = (EXCLUDED.team_name, EXCLUDED.bot_user_id, EXCLUDED.app_id, EXCLUDED.scope, EXCLUDED.bot_token, EXCLUDED.installed_by, EXCLUDED.updated_at)
RETURNING *;

-- name: SlackInstallationGet :one
SELECT * FROM slack_installations WHERE team_id = @team_id;

-- name: SlackInstallationList :many
SELECT * FROM slack_installations
WHERE team_id > @after_team_id
ORDER BY team_id
LIMIT @max_rows::int;

-- name: SlackInstallationDelete :execrows
DELETE FROM slack_installations WHERE team_id = @team_id;

-- name: SlackInstallationReseal :one
-- No row back: the team is gone or its token is no longer @expect.
UPDATE slack_installations
SET bot_token = @bot_token, updated_at = @now::timestamptz
WHERE team_id = @team_id AND bot_token = @expect
RETURNING *;
