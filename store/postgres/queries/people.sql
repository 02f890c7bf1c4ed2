-- People, their platform identities and link codes.

-- name: PersonInsert :one
INSERT INTO people (id, display_name, time_zone, created_at, updated_at)
VALUES (@id, @display_name, @time_zone, @now::timestamptz, @now::timestamptz)
RETURNING *;

-- name: PersonIdentityInsert :exec
INSERT INTO person_identities (platform, workspace, user_id, person_id, created_at)
VALUES (@platform, @workspace, @user_id, @person_id, @now::timestamptz);

-- name: PersonByID :one
SELECT * FROM people WHERE id = @id;

-- name: PersonIdentityList :many
SELECT * FROM person_identities
WHERE person_id = @person_id
ORDER BY created_at, platform, workspace, user_id;

-- name: PersonIdentityOwner :one
SELECT person_id FROM person_identities
WHERE platform = @platform AND workspace = @workspace AND user_id = @user_id;

-- name: PersonProfileUpdate :one
-- An empty value keeps the stored one.
UPDATE people
SET display_name = COALESCE(NULLIF(@display_name::text, ''), display_name),
    time_zone = COALESCE(NULLIF(@time_zone::text, ''), time_zone),
    updated_at = @now::timestamptz
WHERE id = @id
RETURNING *;

-- name: PersonIdentityTouch :execrows
UPDATE person_identities SET refreshed_at = @now::timestamptz
WHERE platform = @platform AND workspace = @workspace AND user_id = @user_id AND person_id = @person_id;

-- name: PersonMergeMark :execrows
-- Only a record not merged already (the driver checked the one kept).
UPDATE people SET merged_into = @keep::uuid, updated_at = @now::timestamptz
WHERE id = @drop AND merged_into IS NULL;

-- name: PersonMergeIdentities :execrows
UPDATE person_identities SET person_id = @keep::uuid WHERE person_id = @drop::uuid;

-- name: PersonLinkCodeForget :execrows
-- A new code replaces the person's earlier ones; expired codes go too.
DELETE FROM person_link_codes WHERE person_id = @person_id OR expires_at <= @now::timestamptz;

-- name: PersonLinkCodeInsert :one
INSERT INTO person_link_codes (code_hash, person_id, platform, expires_at, created_at)
VALUES (@code_hash, @person_id, @platform, @expires_at::timestamptz, @now::timestamptz)
RETURNING *;

-- name: PersonLinkCodeSpend :one
UPDATE person_link_codes SET used_at = @now::timestamptz
WHERE code_hash = @code_hash AND used_at IS NULL AND expires_at > @now::timestamptz
RETURNING *;

-- name: PersonLinkCodePrune :execrows
-- Codes expired before @before, used or not: a used code is refused by
-- its used_at until then, an expired one by its expiry.
DELETE FROM person_link_codes
WHERE code_hash IN (
    SELECT c.code_hash FROM person_link_codes c
    WHERE c.expires_at < @before::timestamptz
    LIMIT @max_rows);
