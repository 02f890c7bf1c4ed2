-- Personality documents, one row per version.

-- name: PersonalityInsert :one
INSERT INTO agent_personalities (agent_id, version, text, author, created_at)
VALUES (@agent_id, @version, @text, @author, @now::timestamptz)
RETURNING *;

-- name: PersonalityGet :one
-- Version 0 reads the current (highest) version.
SELECT * FROM agent_personalities
WHERE agent_id = @agent_id AND (@version::integer = 0 OR version = @version::integer)
ORDER BY version DESC
LIMIT 1;

-- name: PersonalityList :many
SELECT * FROM agent_personalities
WHERE agent_id = @agent_id
ORDER BY version DESC
LIMIT @max_rows;
