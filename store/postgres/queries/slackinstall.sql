-- Slack installations: one row per team (or per enterprise for an
-- organisation-wide install), the tokens sealed.

-- name: SlackInstallationSave :one
-- A reinstall replaces everything but created_at and last_event_at, and
-- starts renewal afresh.
INSERT INTO slack_installations AS s (
    team_id, team_name, bot_user_id, app_id, scope, bot_token, installed_by,
    enterprise_id, enterprise_name, enterprise_install, refresh_token, token_expires_at,
    created_at, updated_at
) VALUES (
    @team_id, @team_name, @bot_user_id, @app_id, @scope, @bot_token, @installed_by,
    @enterprise_id, @enterprise_name, @enterprise_install, @refresh_token, sqlc.narg(token_expires_at)::timestamptz,
    @now::timestamptz, @now::timestamptz
)
ON CONFLICT (team_id) DO UPDATE
SET (team_name, bot_user_id, app_id, scope, bot_token, installed_by,
     enterprise_id, enterprise_name, enterprise_install, refresh_token, token_expires_at,
     refresh_holder, refresh_until, refresh_error, refresh_failed_at, refresh_stopped, updated_at)
  = (EXCLUDED.team_name, EXCLUDED.bot_user_id, EXCLUDED.app_id, EXCLUDED.scope, EXCLUDED.bot_token, EXCLUDED.installed_by,
     EXCLUDED.enterprise_id, EXCLUDED.enterprise_name, EXCLUDED.enterprise_install, EXCLUDED.refresh_token, EXCLUDED.token_expires_at,
     '', NULL, '', NULL, false, EXCLUDED.updated_at)
RETURNING *;

-- name: SlackInstallationGet :one
SELECT * FROM slack_installations WHERE team_id = @team_id;

-- name: SlackInstallationFind :one
-- The install that serves a team: its own, else the organisation-wide
-- install it was seen under, else its enterprise's organisation-wide one.
SELECT * FROM slack_installations
WHERE team_id = COALESCE(
    (SELECT i.team_id FROM slack_installations i WHERE i.team_id = @team_id),
    (SELECT t.installation FROM slack_installation_teams t WHERE t.team_id = @team_id),
    (SELECT i.team_id FROM slack_installations i WHERE i.team_id = @enterprise_id AND i.enterprise_install));

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
SET bot_token = @bot_token,
    refresh_token = CASE WHEN @refresh_token::text = '' THEN refresh_token ELSE @refresh_token::text END,
    updated_at = @now::timestamptz
WHERE team_id = @team_id AND bot_token = @expect
RETURNING *;

-- name: SlackInstallationExpiring :many
-- Rotating tokens that expire before @before and that no one is renewing
-- (or whose last failed renewal waits until refresh_until).
SELECT * FROM slack_installations
WHERE refresh_token <> '' AND NOT refresh_stopped
  AND token_expires_at < @before::timestamptz
  AND (refresh_until IS NULL OR refresh_until <= @now::timestamptz)
ORDER BY token_expires_at
LIMIT @max_rows::int;

-- name: SlackInstallationClaimRefresh :one
-- No row back: the refresh token changed (renewed, reinstalled), renewal
-- stopped, or another holder's claim is live. The holder's own live claim
-- is taken again, so a claim repeated after a lost answer converges.
UPDATE slack_installations
SET refresh_holder = @holder, refresh_until = @until::timestamptz
WHERE team_id = @team_id AND refresh_token = @expect AND refresh_token <> '' AND NOT refresh_stopped
  AND (refresh_until IS NULL OR refresh_until <= @now::timestamptz OR refresh_holder = @holder)
RETURNING *;

-- name: SlackInstallationRefreshed :one
-- No row back: the refresh token is no longer @expect.
UPDATE slack_installations
SET bot_token = @bot_token, refresh_token = @refresh_token, token_expires_at = @token_expires_at::timestamptz,
    refresh_holder = '', refresh_until = NULL, refresh_error = '', refresh_failed_at = NULL, updated_at = @now::timestamptz
WHERE team_id = @team_id AND refresh_token = @expect
RETURNING *;

-- name: SlackInstallationRefreshFailed :one
-- No row back: @holder no longer holds the renewal.
UPDATE slack_installations
SET refresh_holder = '', refresh_until = sqlc.narg(retry_at)::timestamptz, refresh_error = @error,
    refresh_failed_at = @now::timestamptz, refresh_stopped = @stop, updated_at = @now::timestamptz
WHERE team_id = @team_id AND refresh_holder = @holder
RETURNING *;

-- name: SlackInstallationRefreshStopped :many
SELECT * FROM slack_installations WHERE refresh_stopped ORDER BY team_id LIMIT @max_rows::int;

-- name: SlackInstallationTouch :execrows
UPDATE slack_installations SET last_event_at = @now::timestamptz
WHERE team_id = @team_id AND (last_event_at IS NULL OR last_event_at < @now::timestamptz);

-- name: SlackInstallationTeamNote :exec
-- A team an organisation-wide install served an event of.
INSERT INTO slack_installation_teams (team_id, installation, last_event_at)
SELECT @team_id, s.team_id, @now::timestamptz FROM slack_installations s WHERE s.team_id = @installation
ON CONFLICT (team_id) DO UPDATE SET installation = EXCLUDED.installation, last_event_at = EXCLUDED.last_event_at;
