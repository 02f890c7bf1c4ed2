-- People, their platform identities and link codes (see the Postgres
-- driver's people.sql for what each query is for).

-- name: PeopleInsert :one
INSERT INTO people (id, display_name, time_zone, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(display_name), sqlc.arg(time_zone), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: IdentityInsert :exec
INSERT INTO person_identities (platform, workspace, user_id, person_id, created_at)
VALUES (sqlc.arg(platform), sqlc.arg(workspace), sqlc.arg(user_id), sqlc.arg(person_id), CAST(sqlc.arg(now) AS INTEGER));

-- name: PeopleGet :one
SELECT * FROM people WHERE id = sqlc.arg(id);

-- name: IdentitiesOf :many
SELECT * FROM person_identities WHERE person_id = sqlc.arg(person_id)
ORDER BY created_at, platform, workspace, user_id;

-- name: IdentityOwner :one
SELECT person_id FROM person_identities
WHERE platform = sqlc.arg(platform) AND workspace = sqlc.arg(workspace) AND user_id = sqlc.arg(user_id);

-- name: PeopleSetProfile :one
UPDATE people
SET display_name = CASE WHEN CAST(sqlc.arg(display_name) AS TEXT) = '' THEN display_name ELSE CAST(sqlc.arg(display_name) AS TEXT) END,
    time_zone = CASE WHEN CAST(sqlc.arg(time_zone) AS TEXT) = '' THEN time_zone ELSE CAST(sqlc.arg(time_zone) AS TEXT) END,
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: IdentityRefreshed :execrows
UPDATE person_identities SET refreshed_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE platform = sqlc.arg(platform) AND workspace = sqlc.arg(workspace)
  AND user_id = sqlc.arg(user_id) AND person_id = sqlc.arg(person_id);

-- name: PeopleMarkMerged :execrows
UPDATE people SET merged_into = sqlc.arg(keep), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(drop) AND merged_into IS NULL;

-- name: IdentitiesMove :execrows
UPDATE person_identities SET person_id = sqlc.arg(keep) WHERE person_id = sqlc.arg(drop);

-- name: LinkCodesForget :execrows
DELETE FROM person_link_codes
WHERE person_id = sqlc.arg(person_id) OR expires_at <= CAST(sqlc.arg(now) AS INTEGER);

-- name: LinkCodeInsert :one
INSERT INTO person_link_codes (code_hash, person_id, platform, expires_at, created_at)
VALUES (sqlc.arg(code_hash), sqlc.arg(person_id), sqlc.arg(platform), CAST(sqlc.arg(expires_at) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: LinkCodeSpend :one
UPDATE person_link_codes SET used_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE code_hash = sqlc.arg(code_hash) AND used_at IS NULL AND expires_at > CAST(sqlc.arg(now) AS INTEGER)
RETURNING *;

-- name: LinkCodesPrune :execrows
-- Codes expired before the cutoff, used or not (see postgres/queries/people.sql).
DELETE FROM person_link_codes
WHERE code_hash IN (
    SELECT c.code_hash FROM person_link_codes AS c
    WHERE c.expires_at < CAST(sqlc.arg(before) AS INTEGER)
    LIMIT CAST(sqlc.arg(limit) AS INTEGER));
